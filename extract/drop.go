package extract

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/vibelife/vibe/knowledge"
)

// DropFileName is the user's list of extracted items to leave out, in
// knowledge/<theme>/: the way out when vibe misreads a sentence of the
// sources and `vibe check` fails on the rule it made.
const DropFileName = "drop.yaml"

// Drop names items the extraction leaves out: every rule, pattern or red
// flag one of whose evidence quotes contains Quote, or whose condition
// (a pattern's name, a red flag's signal) is Condition. Why is the user's
// note, kept for the reader.
type Drop struct {
	Quote     string `yaml:"quote,omitempty"`
	Condition string `yaml:"condition,omitempty"`
	Why       string `yaml:"why,omitempty"`
}

type dropFile struct {
	Drop []Drop `yaml:"drop"`
}

// LoadDrops reads a drop file; a missing file drops nothing. An entry with
// neither quote nor condition, or a file that is not the expected YAML, is
// an error naming the file and the entry.
func LoadDrops(path string) ([]Drop, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var f dropFile
	dec := yaml.NewDecoder(strings.NewReader(string(b)))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%s: %w: write `drop:` with a list of {quote: <words of the rule's evidence quote>, why: <note>} or {condition: <the rule's condition>}", path, err)
	}
	for i, d := range f.Drop {
		if strings.TrimSpace(d.Quote) == "" && strings.TrimSpace(d.Condition) == "" {
			return nil, fmt.Errorf("%s: drop entry %d has neither quote nor condition: name the item by words of its evidence quote (quote:) or by its condition (condition:)", path, i+1)
		}
	}
	return f.Drop, nil
}

// Dropped is an item a drop entry removed.
type Dropped struct {
	ID    string `json:"id"`
	Kind  string `json:"kind"`
	Text  string `json:"text"`
	Entry int    `json:"entry"` // 1-based index of the drop entry
}

// ApplyDrops removes from f every item a drop entry names and returns them;
// unused lists the (1-based) entries that matched nothing, so a stale entry
// is reported, not silently kept.
func ApplyDrops(f *knowledge.Files, drops []Drop) (dropped []Dropped, unused []int) {
	if len(drops) == 0 {
		return nil, nil
	}
	used := make([]bool, len(drops))
	match := func(cond string, ev []knowledge.Evidence) int {
		for i, d := range drops {
			if d.Condition != "" && squash(d.Condition) == squash(cond) {
				return i
			}
			if q := squash(d.Quote); q != "" {
				for _, e := range ev {
					if strings.Contains(squash(e.Quote), q) {
						return i
					}
				}
			}
		}
		return -1
	}
	keepRules := func(in []knowledge.Rule) []knowledge.Rule {
		out := in[:0]
		for _, r := range in {
			if i := match(r.Condition, r.Evidence); i >= 0 {
				used[i] = true
				dropped = append(dropped, Dropped{ID: r.ID, Kind: "rule", Text: r.Condition, Entry: i + 1})
				continue
			}
			out = append(out, r)
		}
		return out
	}
	r := &f.Rules.Rules
	r.Tier1, r.Tier2, r.Tier3 = keepRules(r.Tier1), keepRules(r.Tier2), keepRules(r.Tier3)
	p := &f.Patterns.Patterns
	qp := p.QuickPatterns[:0]
	for _, x := range p.QuickPatterns {
		if i := match(x.Name, x.Evidence); i >= 0 {
			used[i] = true
			dropped = append(dropped, Dropped{ID: x.ID, Kind: "pattern", Text: x.Name, Entry: i + 1})
			continue
		}
		qp = append(qp, x)
	}
	p.QuickPatterns = qp
	rf := p.RedFlags[:0]
	for _, x := range p.RedFlags {
		if i := match(x.Signal, x.Evidence); i >= 0 {
			used[i] = true
			dropped = append(dropped, Dropped{ID: x.ID, Kind: "red flag", Text: x.Signal, Entry: i + 1})
			continue
		}
		rf = append(rf, x)
	}
	p.RedFlags = rf
	for i, u := range used {
		if !u {
			unused = append(unused, i+1)
		}
	}
	return dropped, unused
}

// squash compares texts without their white space and case.
func squash(s string) string {
	return strings.ToLower(strings.Join(strings.Fields(s), ""))
}
