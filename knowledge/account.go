package knowledge

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/vibelife/vibe/chunk"
	"github.com/vibelife/vibe/convert"
	"github.com/vibelife/vibe/internal/atomicfile"
)

// No silent loss: every stage accounts for the characters of each source,
// source -> converted -> chunked -> cited (characters as convert.CountText
// counts them). Ingest keeps the accounting of a theme's documents in a
// ledger (knowledge/<theme>/accounting.json) and refuses a document whose
// chunks hold less than its converted text allows (DefaultMinCoverage,
// unless curate.yaml allows less), naming the document, what was dropped and
// what to do.

// DefaultMinCoverage is the share of a document's converted characters its
// chunks must hold unless curate.yaml allows less: what a contents list or
// other navigation set aside may take, and no more.
const DefaultMinCoverage = 0.9

// ErrCoverage marks a document refused because its chunks hold too little of
// its text.
var ErrCoverage = errors.New("chunks hold too little of the document")

// CoverageRule is what a document's chunks must hold.
type CoverageRule struct {
	// Min is the least share (0..1) of the converted characters the
	// chunks must hold.
	Min float64
	// Allowed marks a rule the user wrote for the document (curate.yaml
	// coverage.allow): a document below DefaultMinCoverage but within Min
	// is built with a warning.
	Allowed bool
	// Where names the rule for messages: "coverage.min in
	// knowledge/t/curate.yaml", "coverage.allow[0] (x.pdf)".
	Where string
	// Reason is the user's note for an allowance.
	Reason string
	// Hint says, for a refused document, how to allow it (the curate.yaml
	// lines to add).
	Hint string
}

// DocAccount is one document's character accounting.
type DocAccount struct {
	// Doc is the converted file's id (knowledge/<theme>/converted/x.md).
	Doc string `json:"doc"`
	// Source is the original (knowledge/<theme>/source/x.txt).
	Source string `json:"source"`
	Title  string `json:"title,omitempty"`
	// ContentHash is the converted file's hash as ingest computes it: the
	// record is current while the file is unchanged.
	ContentHash string `json:"content_hash"`
	// SourceChars counts the characters of the source's text (0 when the
	// format tells them only after conversion).
	SourceChars int `json:"source_chars"`
	// ConvertAside lists what conversion set aside (a licence, page
	// furniture, repeated passages).
	ConvertAside []convert.Aside `json:"convert_aside,omitempty"`
	// ConvertAdded lists what conversion wrote that the source's text does
	// not hold (an EPUB chapter's title from its navigation).
	ConvertAdded []convert.Aside `json:"convert_added,omitempty"`
	// Chunking says where the converted characters went.
	Chunking chunk.Accounting `json:"chunking"`
	// Chunks and Tokens count the chunks kept and their tokens.
	Chunks int `json:"chunks"`
	Tokens int `json:"tokens"`
	// Cited counts the characters of the chunks an extracted item cites
	// (written by the extract stage).
	Cited int `json:"cited"`
	// Status is "ok", "allowed" (below DefaultMinCoverage, within an
	// allowance) or "refused".
	Status string `json:"status"`
	// Note explains an allowed or refused document.
	Note string `json:"note,omitempty"`
}

// Document account statuses.
const (
	AccountOK      = "ok"
	AccountAllowed = "allowed"
	AccountRefused = "refused"
	// AccountSkipped: left out on purpose (garbled text), with the reason.
	AccountSkipped = "skipped"
)

// Converted counts the characters of the converted text.
func (d DocAccount) Converted() int { return d.Chunking.Converted }

// Chunked counts the characters the chunks hold.
func (d DocAccount) Chunked() int { return d.Chunking.Held() }

// Ledger is a theme's accounting, knowledge/<theme>/accounting.json.
type Ledger struct {
	Version   int          `json:"version"`
	Theme     string       `json:"theme"`
	UpdatedAt time.Time    `json:"updated_at"`
	Documents []DocAccount `json:"documents"`
}

// LedgerVersion is the version of the ledger's format.
const LedgerVersion = 1

// ReadLedger reads a ledger; a missing file is an empty ledger.
func ReadLedger(path string) (Ledger, error) {
	var l Ledger
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return Ledger{Version: LedgerVersion}, nil
	}
	if err != nil {
		return l, fmt.Errorf("read %s: %w", path, err)
	}
	if err := json.Unmarshal(data, &l); err != nil {
		return l, fmt.Errorf("%s: %w (delete it: the next ingest writes it again)", path, err)
	}
	return l, nil
}

// Write writes the ledger atomically, its documents sorted.
func (l Ledger) Write(path string) error {
	l.Version = LedgerVersion
	sort.Slice(l.Documents, func(i, j int) bool { return l.Documents[i].Doc < l.Documents[j].Doc })
	data, err := json.MarshalIndent(l, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(path, append(data, '\n'), 0o644)
}

// Find returns the account of a document.
func (l Ledger) Find(doc string) (DocAccount, bool) {
	for _, d := range l.Documents {
		if d.Doc == doc {
			return d, true
		}
	}
	return DocAccount{}, false
}

// Totals sums the figures of the documents.
func (l Ledger) Totals() (source, converted, chunked, cited int) {
	for _, d := range l.Documents {
		source += d.SourceChars
		converted += d.Converted()
		chunked += d.Chunked()
		cited += d.Cited
	}
	return
}

// accountFor builds a document's account from its converted file and all
// its chunks (navigation included), and judges it against rule.
func accountFor(id, hash string, meta convert.Document, data []byte, chunks []chunk.Chunk, rule CoverageRule) (DocAccount, error) {
	acc, err := chunk.Account(data, chunks)
	if err != nil {
		return DocAccount{}, err
	}
	d := DocAccount{Doc: id, Source: meta.Source, Title: meta.Title, ContentHash: hash,
		SourceChars: meta.Quality.SourceChars, ConvertAside: meta.Quality.SetAside, ConvertAdded: meta.Quality.Added, Chunking: acc}
	for _, c := range chunks {
		if !c.Navigation {
			d.Chunks++
			d.Tokens += c.Tokens
		}
	}
	judge(&d, rule)
	return d, nil
}

// minShortfall is how many characters a document's chunks may miss before
// its share is judged at all: a short note whose contents list is a third of
// it has not lost its text.
const minShortfall = 100

// judge sets a document's status against rule.
func judge(d *DocAccount, rule CoverageRule) {
	share := d.Chunking.Share()
	if d.Converted()-d.Chunked() < minShortfall {
		share = 1
	}
	d.Status, d.Note = AccountOK, ""
	switch {
	case share+1e-9 < rule.Min:
		d.Status = AccountRefused
		d.Note = fmt.Sprintf("below the %s it must keep (%s)", pct(rule.Min), rule.Where)
	case share+1e-9 < DefaultMinCoverage && rule.Allowed:
		d.Status = AccountAllowed
		d.Note = fmt.Sprintf("allowed down to %s by %s", pct(rule.Min), rule.Where)
		if rule.Reason != "" {
			d.Note += ": " + rule.Reason
		}
	}
}

// Refusal is the error of a refused document: which document, what its
// chunks hold, what was set aside or lost and why, and what to do.
func (d DocAccount) Refusal(rule CoverageRule) error {
	var sb strings.Builder
	fmt.Fprintf(&sb, "%s (from %s): its chunks hold %s of its %s characters (%s), below the %s a document must keep (%s).",
		d.Doc, d.Source, num(d.Chunked()), num(d.Converted()), pct(d.Chunking.Share()), pct(rule.Min), rule.Where)
	for _, a := range d.Chunking.Aside {
		fmt.Fprintf(&sb, "\n  set aside when chunking: %s, %s characters (%s): %s", a.Part, num(a.Chars), pct(ratio(a.Chars, d.Converted())), a.Why)
	}
	if d.Chunking.Lost > 0 {
		fmt.Fprintf(&sb, "\n  lost: %s characters in no chunk", num(d.Chunking.Lost))
		for _, p := range d.Chunking.LostParts {
			fmt.Fprintf(&sb, "\n    under %s: %s characters from %q", p.Where, num(p.Chars), p.Sample)
		}
	}
	sb.WriteString("\n  This is vibe misreading the document's structure (a contents list taken to run on into the text, say): look at the headings of the converted file, and fix or replace the source.")
	if rule.Hint != "" {
		sb.WriteString("\n  To build with it as it is, allow it in ")
		sb.WriteString(rule.Hint)
	}
	return fmt.Errorf("%w: %s", ErrCoverage, sb.String())
}

// Summary is one line of figures: source -> converted -> chunked -> cited,
// with what was set aside.
func (d DocAccount) Summary() string {
	src := "?"
	if d.SourceChars > 0 {
		src = num(d.SourceChars)
	}
	s := fmt.Sprintf("source %s -> converted %s -> chunked %s (%s) -> cited %s", src, num(d.Converted()), num(d.Chunked()), pct(d.Chunking.Share()), num(d.Cited))
	var aside []string
	for _, a := range d.ConvertAside {
		aside = append(aside, fmt.Sprintf("%s %s", a.Part, num(a.Chars)))
	}
	for _, a := range d.Chunking.Aside {
		aside = append(aside, fmt.Sprintf("%s %s", a.Part, num(a.Chars)))
	}
	if len(aside) > 0 {
		s += "; set aside: " + strings.Join(aside, ", ")
	}
	var added []string
	for _, a := range d.ConvertAdded {
		added = append(added, fmt.Sprintf("%s %s", a.Part, num(a.Chars)))
	}
	if len(added) > 0 {
		s += "; added: " + strings.Join(added, ", ")
	}
	if d.Chunking.Lost > 0 {
		s += fmt.Sprintf("; lost %s", num(d.Chunking.Lost))
	}
	return s
}

func ratio(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

func pct(x float64) string {
	switch {
	case x >= 0.9995 || x == 0 || math.Abs(100*x-math.Round(100*x)) < 1e-9:
		return fmt.Sprintf("%.0f%%", 100*x)
	case x >= 0.1:
		return fmt.Sprintf("%.1f%%", 100*x)
	}
	return fmt.Sprintf("%.2f%%", 100*x)
}

// num writes n with thousands separators.
func num(n int) string {
	s := fmt.Sprint(n)
	if n < 0 {
		return "-" + num(-n)
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// CitedChars counts, per document, the characters of the chunks whose ids
// are cited: a chunk cited twice counts once, and characters two cited
// chunks share (overlap) count once.
func CitedChars(chunks []chunk.Chunk, cited map[string]bool) map[string]int {
	byDoc := map[string][]chunk.Chunk{}
	for _, c := range chunks {
		if cited[c.ID] {
			byDoc[c.Doc] = append(byDoc[c.Doc], c)
		}
	}
	out := map[string]int{}
	for doc, cs := range byDoc {
		sort.Slice(cs, func(i, j int) bool { return cs[i].Start < cs[j].Start })
		end := -1
		for _, c := range cs {
			rs := []rune(c.Text)
			from := max(0, end-c.Start)
			if from < len(rs) {
				out[doc] += convert.CountText(string(rs[from:]))
			}
			end = max(end, c.End)
		}
	}
	return out
}
