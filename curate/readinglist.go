package curate

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
	"unicode"

	"gopkg.in/yaml.v3"

	"github.com/vibelife/vibe/internal/atomicfile"
)

// ReadingListName is the reading list's name in knowledge/<theme>/.
const ReadingListName = "reading-list.yaml"

// ReadingListPrompt is the system prompt that asks a model for a reading
// list; its first line is "version: reading-list/<n>", part of the cache
// key of the request.
//
//go:embed prompts/reading-list.md
var ReadingListPrompt string

// ReadingListPromptVersion is the prompt's version ("reading-list/1").
var ReadingListPromptVersion = strings.TrimSpace(strings.TrimPrefix(strings.SplitN(ReadingListPrompt, "\n", 2)[0], "version:"))

// ReadingListSchema is the JSON schema of the model's answer.
var ReadingListSchema = json.RawMessage(`{
  "type": "object",
  "required": ["works"],
  "additionalProperties": false,
  "properties": {
    "works": {
      "type": "array",
      "minItems": 1,
      "items": {
        "type": "object",
        "required": ["title", "author", "period", "edition", "why", "kind", "language", "where"],
        "additionalProperties": false,
        "properties": {
          "title": {"type": "string", "minLength": 1},
          "author": {"type": "string"},
          "period": {"type": "string"},
          "edition": {"type": "string"},
          "why": {"type": "string", "minLength": 1},
          "kind": {"enum": ["classic", "commentary", "modern", "cases"]},
          "language": {"type": "string"},
          "where": {"type": "string"}
        }
      }
    }
  }
}`)

// Kinds of a [Work].
const (
	KindClassic    = "classic"
	KindCommentary = "commentary"
	KindModern     = "modern"
	KindCases      = "cases"
)

var workKinds = []string{KindClassic, KindCommentary, KindModern, KindCases}

// ReadingList is knowledge/<theme>/reading-list.yaml: the works a model
// proposed for the theme. It is a proposal: only the works the engineer
// accepted (`vibe sources accept`, or accepted: true) are gathered.
type ReadingList struct {
	Theme string `yaml:"theme"`
	// Model and Prompt name what proposed the list; Suggested is when
	// (YYYY-MM-DD).
	Model     string `yaml:"model,omitempty"`
	Prompt    string `yaml:"prompt,omitempty"`
	Suggested string `yaml:"suggested,omitempty"`
	Works     []Work `yaml:"works"`
}

// Work is one entry of a reading list.
type Work struct {
	// ID names the work for `vibe sources accept` (R1, R2, ...).
	ID string `yaml:"id"`
	// Accepted marks a work the engineer wants gathered.
	Accepted bool   `yaml:"accepted"`
	Title    string `yaml:"title"`
	Author   string `yaml:"author,omitempty"`
	Period   string `yaml:"period,omitempty"`
	Edition  string `yaml:"edition,omitempty"`
	Why      string `yaml:"why,omitempty"`
	// Kind is classic, commentary, modern or cases (practice cases).
	Kind     string `yaml:"kind"`
	Language string `yaml:"language,omitempty"`
	// Where says where a copy can be had, as the model knew it.
	Where string `yaml:"where,omitempty"`
	// Held names the file in source/ that already holds the work, when
	// one's title or name matches.
	Held string `yaml:"held,omitempty"`
	// Source is the copy to gather: a path, URL or git source, written by
	// hand or found by a web search (then Query and Found say which and
	// when).
	Source string `yaml:"source,omitempty"`
	Query  string `yaml:"query,omitempty"`
	Found  string `yaml:"found,omitempty"`
	// Tried lists copies a search found that gave nothing usable; the next
	// search skips them.
	Tried []string `yaml:"tried,omitempty"`
}

// Spec is the curate.yaml entry that gathers the work's copy.
func (w Work) Spec() Spec {
	notes := "reading list " + w.ID
	if w.Why != "" {
		notes += ": " + w.Why
	}
	pub := w.Period
	return Spec{Source: w.Source, Notes: notes, Title: w.Title, Author: w.Author, Edition: w.Edition, Published: pub, Query: w.Query, Retrieved: w.Found}
}

// SearchQuery is what a web search for a copy of the work asks: the
// title and the first name of the author, without bracketed notes or a
// role ("余春台 编（原名《栏江网》）" gives 余春台).
func (w Work) SearchQuery() string {
	q := strings.TrimSpace(bracketed.ReplaceAllString(w.Title, ""))
	a := bracketed.ReplaceAllString(w.Author, "")
	if i := strings.IndexAny(a, ",，;；、/"); i >= 0 {
		a = a[:i]
	}
	a = strings.TrimSpace(a)
	for _, role := range []string{" ed.", "编著", "校注", "编", "著", "注", "撰", "辑"} {
		if r := strings.TrimSpace(strings.TrimSuffix(a, role)); r != a && len([]rune(r)) >= 2 {
			a = r
		}
	}
	if a != "" && !strings.EqualFold(a, "anonymous") && !strings.EqualFold(a, "unknown") && a != "佚名" {
		q += " " + a
	}
	return q
}

// readingListHeader opens the file: what it is and how to use it.
const readingListHeader = `# Reading list for %s, proposed by a model (vibe curate %s --suggest).
# It is a proposal: only accepted works are gathered. Accept with
#   vibe sources accept %s R1 R3 ...
# or set accepted: true here. An accepted work is gathered from source:
# (a path, URL or git source you write here), or, with a web search
# configured (vibe.yaml search:), from a copy the search finds.
# --suggest again keeps what is here and adds what is new.
`

// LoadReadingList reads a reading list. A missing file returns an error
// wrapping os.ErrNotExist; unknown keys, a missing id or title, an
// unknown kind and a repeated id are errors naming the file and entry.
func LoadReadingList(path string) (ReadingList, error) {
	var l ReadingList
	data, err := os.ReadFile(path)
	if err != nil {
		return l, err
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&l); err != nil && !errors.Is(err, io.EOF) {
		return l, fmt.Errorf("%s: %w", path, err)
	}
	seen := map[string]bool{}
	for i, w := range l.Works {
		at := fmt.Sprintf("%s: works[%d]", path, i)
		if strings.TrimSpace(w.ID) == "" {
			return l, fmt.Errorf("%s (%s) has no id: give it one not used by another work, e.g. R%d", at, w.Title, len(l.Works)+1)
		}
		at += " (" + w.ID + ")"
		if seen[w.ID] {
			return l, fmt.Errorf("%s: the id %s is used twice; give each work its own", at, w.ID)
		}
		seen[w.ID] = true
		if strings.TrimSpace(w.Title) == "" {
			return l, fmt.Errorf("%s has no title", at)
		}
		if !validKind(w.Kind) {
			return l, fmt.Errorf("%s: kind %q: use classic, commentary, modern or cases", at, w.Kind)
		}
	}
	return l, nil
}

func validKind(k string) bool {
	for _, v := range workKinds {
		if k == v {
			return true
		}
	}
	return false
}

// WriteReadingList writes the list atomically, with a header saying how
// to accept works.
func WriteReadingList(path string, l ReadingList) error {
	var buf bytes.Buffer
	fmt.Fprintf(&buf, readingListHeader, l.Theme, l.Theme, l.Theme)
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(l); err != nil {
		return fmt.Errorf("encode %s: %w", path, err)
	}
	return atomicfile.WriteFile(path, buf.Bytes(), 0o644)
}

// Suggested is one work a model proposed (the schema's item).
type Suggested struct {
	Title    string `json:"title"`
	Author   string `json:"author"`
	Period   string `json:"period"`
	Edition  string `json:"edition"`
	Why      string `json:"why"`
	Kind     string `json:"kind"`
	Language string `json:"language"`
	Where    string `json:"where"`
}

// MergeSuggestions adds the proposed works to the list: a work already
// there (the same title, ignoring case, spaces and punctuation, and the
// same author when both name one) is kept as it is, with its id, whether
// it was accepted and its source; a new one gets the next free id. It
// returns the ids added.
func MergeSuggestions(l *ReadingList, proposed []Suggested) []string {
	next := 1
	for _, w := range l.Works {
		if n, err := strconv.Atoi(strings.TrimPrefix(w.ID, "R")); err == nil && n >= next {
			next = n + 1
		}
	}
	var added []string
	for _, s := range proposed {
		if strings.TrimSpace(s.Title) == "" || !validKind(s.Kind) {
			continue
		}
		dup := false
		for _, w := range l.Works {
			if sameWork(w.Title, w.Author, s.Title, s.Author) {
				dup = true
				break
			}
		}
		if dup {
			continue
		}
		id := "R" + strconv.Itoa(next)
		next++
		l.Works = append(l.Works, Work{ID: id, Title: strings.TrimSpace(s.Title), Author: strings.TrimSpace(s.Author),
			Period: strings.TrimSpace(s.Period), Edition: strings.TrimSpace(s.Edition), Why: strings.TrimSpace(s.Why),
			Kind: s.Kind, Language: strings.TrimSpace(s.Language), Where: strings.TrimSpace(s.Where)})
		added = append(added, id)
	}
	return added
}

// sameWork reports whether two entries name the same work.
func sameWork(t1, a1, t2, a2 string) bool {
	if workKey(t1) != workKey(t2) {
		return false
	}
	k1, k2 := workKey(a1), workKey(a2)
	return k1 == "" || k2 == "" || k1 == k2 || strings.Contains(k1, k2) || strings.Contains(k2, k1)
}

// bracketed drops a bracketed translation or note: 子平真诠 (Ziping's True Commentary).
var bracketed = regexp.MustCompile(`[(（\[【][^)）\]】]*[)）\]】]`)

// workKey is a title with brackets, case, spaces and punctuation taken out.
func workKey(s string) string {
	s = bracketed.ReplaceAllString(s, "")
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		if unicode.IsLetter(r) || unicode.IsNumber(r) {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// MarkHeld sets Held on the works whose title a kept source's title or
// file name holds (held maps a file in source/ to its recorded title).
func MarkHeld(l *ReadingList, held map[string]string) {
	for i := range l.Works {
		w := &l.Works[i]
		k := workKey(w.Title)
		if k == "" {
			continue
		}
		w.Held = ""
		for file, title := range held {
			name := workKey(strings.TrimSuffix(file, extOf(file)))
			if (title != "" && workKey(title) == k) || name == k || (len([]rune(k)) >= 3 && strings.Contains(name, k)) {
				if w.Held == "" || file < w.Held {
					w.Held = file
				}
			}
		}
	}
}

func extOf(name string) string {
	if i := strings.LastIndexByte(name, '.'); i > 0 {
		return name[i:]
	}
	return ""
}

// ErrNoSuchWork is wrapped when an id is not on the reading list.
var ErrNoSuchWork = errors.New("curate: no such work on the reading list")

// UpdateWorks changes the works with the given ids in the reading list at
// path, editing the YAML in place so the engineer's comments and order
// stay: set is called with each work, and its changes are written back.
// An id not on the list is an error wrapping [ErrNoSuchWork] that lists
// the ids there are; nothing is written then.
func UpdateWorks(path string, ids []string, set func(w *Work)) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	var works *yaml.Node
	if doc.Kind == yaml.DocumentNode && len(doc.Content) == 1 && doc.Content[0].Kind == yaml.MappingNode {
		root := doc.Content[0]
		for i := 0; i+1 < len(root.Content); i += 2 {
			if root.Content[i].Value == "works" && root.Content[i+1].Kind == yaml.SequenceNode {
				works = root.Content[i+1]
			}
		}
	}
	if works == nil {
		return fmt.Errorf("%s has no works: list (run `vibe curate THEME --suggest`)", path)
	}
	byID := map[string]*yaml.Node{}
	var have []string
	for _, it := range works.Content {
		var w Work
		if err := it.Decode(&w); err == nil && it.Kind == yaml.MappingNode {
			byID[w.ID] = it
			have = append(have, w.ID)
		}
	}
	for _, id := range ids {
		if byID[id] == nil {
			return fmt.Errorf("%w: %s is not in %s (it has %s)", ErrNoSuchWork, id, path, strings.Join(have, ", "))
		}
	}
	for _, id := range ids {
		n := byID[id]
		var w Work
		if err := n.Decode(&w); err != nil {
			return fmt.Errorf("%s: %s: %w", path, id, err)
		}
		set(&w)
		var fresh yaml.Node
		if err := fresh.Encode(w); err != nil {
			return err
		}
		mergeMapping(n, &fresh)
	}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(&doc); err != nil {
		return fmt.Errorf("encode %s: %w", path, err)
	}
	if bytes.Equal(buf.Bytes(), data) {
		return nil
	}
	return atomicfile.WriteFile(path, buf.Bytes(), 0o644)
}

// mergeMapping sets dst's keys to src's values, keeping dst's order and
// comments, adding the keys dst lacks and removing those src lacks.
func mergeMapping(dst, src *yaml.Node) {
	val := map[string]*yaml.Node{}
	for i := 0; i+1 < len(src.Content); i += 2 {
		val[src.Content[i].Value] = src.Content[i+1]
	}
	var out []*yaml.Node
	seen := map[string]bool{}
	for i := 0; i+1 < len(dst.Content); i += 2 {
		k := dst.Content[i].Value
		v, ok := val[k]
		if !ok {
			continue
		}
		seen[k] = true
		old := dst.Content[i+1]
		v.HeadComment, v.LineComment, v.FootComment = old.HeadComment, old.LineComment, old.FootComment
		out = append(out, dst.Content[i], v)
	}
	for i := 0; i+1 < len(src.Content); i += 2 {
		if !seen[src.Content[i].Value] {
			out = append(out, src.Content[i], src.Content[i+1])
		}
	}
	dst.Content = out
}
