package main

import (
	"errors"
	"fmt"
	"io"
	"math"
	"path"
	"path/filepath"
	"strings"

	"github.com/vibelife/vibe/chunk"
	"github.com/vibelife/vibe/curate"
	"github.com/vibelife/vibe/knowledge"
	"github.com/vibelife/vibe/workspace"
)

// The character accounting of a theme (knowledge.Ledger): ingest writes it,
// extract adds what the extracted items cite, and the build report, `vibe
// sources list` and the dry run show it per source.

// ledgerPath is knowledge/<theme>/accounting.json.
func ledgerPath(ws *workspace.Workspace, theme string) string {
	return filepath.Join(ws.KnowledgeDir(theme), "accounting.json")
}

// coverageRules reads the coverage: section of the theme's curate.yaml (a
// theme without one gets the default) and returns the rule of each source,
// and the allowances no document matched (to warn about).
func coverageRules(ws *workspace.Workspace, theme string) (func(source string) knowledge.CoverageRule, func() []string, error) {
	file := ws.CurateFile(theme)
	rel := ws.Rel(file)
	f, err := curate.LoadFile(file)
	if err != nil && !errors.Is(err, curate.ErrNoCurateFile) {
		return nil, nil, err
	}
	lock, err := curate.ReadLock(ws.LockFile(theme))
	if err != nil {
		return nil, nil, err
	}
	min, where := knowledge.DefaultMinCoverage, "the default"
	if f.Coverage.Min != nil {
		min, where = *f.Coverage.Min, "coverage.min in "+rel
	}
	used := make([]bool, len(f.Coverage.Allow))
	sourceDir := filepath.ToSlash(ws.Rel(ws.SourceDir(theme))) + "/"
	rule := func(source string) knowledge.CoverageRule {
		name := strings.TrimPrefix(filepath.ToSlash(source), sourceDir)
		for i, a := range f.Coverage.Allow {
			if !allowMatches(ws.Root, a.Source, name, lock) {
				continue
			}
			used[i] = true
			return knowledge.CoverageRule{Min: *a.Min, Allowed: true, Reason: a.Reason,
				Where: fmt.Sprintf("coverage.allow[%d] (%s) in %s", i, a.Source, rel)}
		}
		return knowledge.CoverageRule{Min: min, Where: where, Hint: fmt.Sprintf("%s:\n    coverage:\n      allow:\n        - source: %s\n          min: 0.5        # the share of its characters its chunks must still hold\n          reason: ...     # why this document may keep less", rel, name)}
	}
	unused := func() []string {
		var out []string
		for i, a := range f.Coverage.Allow {
			if !used[i] {
				out = append(out, fmt.Sprintf("coverage.allow[%d] (%s) in %s matches no document of %s", i, a.Source, rel, theme))
			}
		}
		return out
	}
	return rule, unused, nil
}

// allowMatches reports whether an allowance names the document stored as
// name in source/: by that name, by a glob of names, or by the source listed
// in curate.yaml it was gathered from.
func allowMatches(root, allow, name string, lock curate.Lock) bool {
	allow = strings.TrimSpace(allow)
	if allow == name || path.Base(name) == allow {
		return true
	}
	if ok, _ := path.Match(allow, name); ok {
		return true
	}
	for _, e := range lock.Sources {
		if e.File == name && (e.Origin == allow || curate.Owns(root, allow, e.Origin)) {
			return true
		}
	}
	return false
}

// printAccounting writes the accounting of each document: what its chunks
// hold of its text, and what was set aside on the way.
func printAccounting(w io.Writer, ws *workspace.Workspace, accounts []knowledge.DocAccount) {
	if len(accounts) == 0 {
		return
	}
	fmt.Fprintf(w, "characters (source -> converted -> chunked -> cited):\n")
	for _, d := range accounts {
		fmt.Fprintf(w, "  %s: %s", filepath.Base(d.Source), d.Summary())
		if d.Status != knowledge.AccountOK {
			fmt.Fprintf(w, " [%s: %s]", d.Status, d.Note)
		}
		fmt.Fprintln(w)
	}
}

// updateCited records in the ledger the characters of the chunks each
// document's extracted items cite.
func updateCited(ws *workspace.Workspace, theme string, files knowledge.Files, chunks []chunk.Chunk) error {
	p := ledgerPath(ws, theme)
	l, err := knowledge.ReadLedger(p)
	if err != nil {
		return err
	}
	if len(l.Documents) == 0 {
		return nil
	}
	cited := map[string]bool{}
	add := func(ev []knowledge.Evidence) {
		for _, e := range ev {
			cited[e.Chunk] = true
		}
	}
	for _, ph := range files.SOP.SOP.Phases {
		add(ph.Evidence)
		for _, s := range ph.Steps {
			add(s.Evidence)
		}
	}
	for _, x := range files.Patterns.Patterns.QuickPatterns {
		add(x.Evidence)
	}
	for _, x := range files.Patterns.Patterns.RedFlags {
		add(x.Evidence)
	}
	for _, tier := range [][]knowledge.Rule{files.Rules.Rules.Tier1, files.Rules.Rules.Tier2, files.Rules.Rules.Tier3} {
		for _, x := range tier {
			add(x.Evidence)
		}
	}
	byDoc := knowledge.CitedChars(chunks, cited)
	for i := range l.Documents {
		l.Documents[i].Cited = byDoc[l.Documents[i].Doc]
	}
	return l.Write(p)
}

// sourceFigures sums the accounts of the documents gathered from one listed
// source.
type sourceFigures struct {
	Source    int                    `json:"source_chars"`
	Converted int                    `json:"converted"`
	Chunked   int                    `json:"chunked"`
	Cited     int                    `json:"cited"`
	SetAside  []string               `json:"set_aside,omitempty"`
	Added     []string               `json:"added,omitempty"`
	Documents []knowledge.DocAccount `json:"-"`
}

// figuresOf gathers the accounts of the files a source kept.
func figuresOf(l knowledge.Ledger, ws *workspace.Workspace, theme string, kept []string) *sourceFigures {
	var f sourceFigures
	found := false
	dir := filepath.ToSlash(ws.Rel(ws.SourceDir(theme))) + "/"
	for _, name := range kept {
		for _, d := range l.Documents {
			if strings.TrimPrefix(filepath.ToSlash(d.Source), dir) != name {
				continue
			}
			found = true
			f.Documents = append(f.Documents, d)
			f.Source += d.SourceChars
			f.Converted += d.Converted()
			f.Chunked += d.Chunked()
			f.Cited += d.Cited
			for _, a := range d.ConvertAside {
				f.SetAside = append(f.SetAside, fmt.Sprintf("%s (%d)", a.Part, a.Chars))
			}
			for _, a := range d.Chunking.Aside {
				f.SetAside = append(f.SetAside, fmt.Sprintf("%s (%d)", a.Part, a.Chars))
			}
			for _, a := range d.ConvertAdded {
				f.Added = append(f.Added, fmt.Sprintf("%s (%d)", a.Part, a.Chars))
			}
		}
	}
	if !found {
		return nil
	}
	return &f
}

// share writes a/b as a percentage.
func share(a, b int) string {
	if b == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", math.Floor(1000*float64(a)/float64(b))/10)
}

// readFigures says what extraction reads: the chunks in the store and the
// characters they hold, beside the accounting ingest wrote. The dry run's
// source tokens are counted over these same chunks.
type readFigures struct {
	Documents  int `json:"documents"`
	Chunks     int `json:"chunks"`
	ChunkChars int `json:"chunk_chars"`
	// Source, Converted and Chunked are the accounting's totals.
	Source    int `json:"source_chars"`
	Converted int `json:"converted"`
	Chunked   int `json:"chunked"`
	// NotRead lists the documents ingest refused or skipped.
	NotRead []string `json:"not_read,omitempty"`
}

func readingFigures(ws *workspace.Workspace, theme string, chunks []chunk.Chunk) (*readFigures, error) {
	l, err := knowledge.ReadLedger(ledgerPath(ws, theme))
	if err != nil {
		return nil, err
	}
	all := map[string]bool{}
	docs := map[string]bool{}
	for _, c := range chunks {
		all[c.ID] = true
		docs[c.Doc] = true
	}
	f := &readFigures{Documents: len(docs), Chunks: len(chunks)}
	for _, n := range knowledge.CitedChars(chunks, all) {
		f.ChunkChars += n
	}
	f.Source, f.Converted, f.Chunked, _ = l.Totals()
	for _, d := range l.Documents {
		if d.Status == knowledge.AccountRefused || d.Status == knowledge.AccountSkipped {
			f.NotRead = append(f.NotRead, fmt.Sprintf("%s (%s: %s)", d.Doc, d.Status, d.Note))
		}
	}
	return f, nil
}

// print writes the figures on one line (and one per document not read).
func (f *readFigures) print(w io.Writer) {
	if f == nil {
		return
	}
	fmt.Fprintf(w, "  reads %d chunks of %d documents: %d characters", f.Chunks, f.Documents, f.ChunkChars)
	if f.Converted > 0 {
		src := "?"
		if f.Source > 0 {
			src = fmt.Sprint(f.Source)
		}
		fmt.Fprintf(w, " (characters: source %s -> converted %d -> chunked %d, %s; `vibe sources list` has them per source)", src, f.Converted, f.Chunked, share(f.Chunked, f.Converted))
	}
	fmt.Fprintln(w)
	for _, n := range f.NotRead {
		fmt.Fprintf(w, "  not read: %s\n", n)
	}
}

// reportAccounting ends a build that ingested with the accounting of each
// document, cited characters included.
func (a *app) reportAccounting(theme string, stages []buildStage) {
	if a.quiet {
		return
	}
	ingested := false
	for _, s := range stages {
		ingested = ingested || s.name == "ingest" || s.name == "extract"
	}
	// Only the workspace the stages used: looking one up here would
	// find one where the build had none.
	ws := a.ws
	if !ingested || ws == nil {
		return
	}
	l, err := knowledge.ReadLedger(ledgerPath(ws, theme))
	if err != nil || len(l.Documents) == 0 {
		return
	}
	fmt.Fprintf(a.io.ErrOut, "==> characters of %s\n", theme)
	printAccounting(a.io.ErrOut, ws, l.Documents)
}
