package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/vibelife/vibe/curate"
	"github.com/vibelife/vibe/llm"
	"github.com/vibelife/vibe/websearch"
	"github.com/vibelife/vibe/workspace"
)

// The research flow of `vibe curate`: --suggest proposes a reading list
// (knowledge/<theme>/reading-list.yaml) with a model, the accepted works
// are gathered (a web search finds a copy when none is named), and
// --research gathers what a web search finds for a question.

// searchProvider is the configured web search, or nil with the reason.
func searchProvider(cfg *workspace.Config) (websearch.Provider, error) {
	s := cfg.Search
	return websearch.New(websearch.Config{Provider: s.Provider, URL: s.URL, APIKey: s.APIKey, Timeout: s.Timeout})
}

// searchHint says how to configure a web search.
const searchHint = "configure a web search in vibe.yaml:\n  search:\n    provider: searxng            # a SearXNG instance whose settings.yml serves json\n    url: http://localhost:8888\n" +
	"or provider: brave with BRAVE_API_KEY in the environment (see docs/curate.md)"

// suggestRequest asks the model for a reading list.
func suggestRequest(theme, about, language string, held []string) llm.Request {
	var b strings.Builder
	fmt.Fprintf(&b, "Theme: %s\n", theme)
	if about != "" {
		fmt.Fprintf(&b, "About the theme: %s\n", about)
	}
	if language != "" {
		fmt.Fprintf(&b, "Language of the knowledge base: %s\n", language)
	}
	if len(held) > 0 {
		b.WriteString("\nThe theme already holds these sources:\n")
		for _, h := range held {
			fmt.Fprintf(&b, "- %s\n", h)
		}
	} else {
		b.WriteString("\nThe theme holds no sources yet.\n")
	}
	zero := 0.0
	_, prompt, _ := strings.Cut(curate.ReadingListPrompt, "\n")
	return llm.Request{Stage: "curate.suggest", PromptVersion: curate.ReadingListPromptVersion, Temperature: &zero, MaxTokens: 6000,
		Schema:   &llm.Schema{Name: "reading_list", JSON: curate.ReadingListSchema},
		Messages: []llm.Message{{Role: llm.RoleSystem, Content: strings.TrimSpace(prompt)}, {Role: llm.RoleUser, Content: b.String()}}}
}

// heldSources maps each kept file of the theme to its recorded title, and
// lists them for the prompt.
func heldSources(lock curate.Lock) (map[string]string, []string) {
	held := map[string]string{}
	var lines []string
	for _, e := range lock.Sources {
		if e.Status != curate.StatusKept || e.File == "" {
			continue
		}
		p := e.Provenance
		held[e.File] = p.Title
		line := e.File
		var what []string
		for _, s := range []string{p.Title, p.Author, p.Edition, p.URL, p.Repository} {
			if s != "" {
				what = append(what, s)
			}
		}
		if len(what) > 0 {
			line += " (" + strings.Join(what, ", ") + ")"
		}
		lines = append(lines, line)
	}
	sort.Strings(lines)
	return held, lines
}

// suggestRun is `vibe curate <theme> --suggest`: the model proposes a
// reading list, merged into reading-list.yaml, and the accepted works
// without a copy get one from the web search when there is one.
func suggestRun(ctx context.Context, opts *curateOptions, ws *workspace.Workspace, cfg *workspace.Config, f curate.File) error {
	if opts.Offline || !cfg.LLMEnabled() {
		return withExit(exitError, withHint(fmt.Errorf("curate %s --suggest needs a model: none is configured (offline)", opts.Theme),
			"set OPENAI_API_KEY (and OPENAI_BASE_URL for another OpenAI-compatible endpoint), or llm.base_url in vibe.yaml; or write knowledge/"+opts.Theme+"/"+curate.ReadingListName+" by hand (docs/curate.md)"))
	}
	path := filepath.Join(ws.KnowledgeDir(opts.Theme), curate.ReadingListName)
	list, err := curate.LoadReadingList(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		list = curate.ReadingList{Theme: opts.Theme}
	case err != nil:
		return err
	}
	lock, err := curate.ReadLock(filepath.Join(ws.SourceDir(opts.Theme), curate.LockName))
	if err != nil {
		return err
	}
	held, heldLines := heldSources(lock)
	client := newLLMClient(ws, cfg, cfg.LLM.Model, cfg.LLM.Budget, false)
	resp, err := client.Chat(ctx, suggestRequest(opts.Theme, opts.About, f.Language, heldLines))
	if err != nil {
		return fmt.Errorf("curate %s --suggest: the model: %w", opts.Theme, err)
	}
	var answer struct {
		Works []curate.Suggested `json:"works"`
	}
	if err := json.Unmarshal([]byte(resp.Content), &answer); err != nil {
		return fmt.Errorf("curate %s --suggest: the model's answer is not the JSON asked for: %w", opts.Theme, err)
	}
	added := curate.MergeSuggestions(&list, answer.Works)
	curate.MarkHeld(&list, held)
	list.Theme, list.Model, list.Prompt = opts.Theme, cfg.LLM.Model, curate.ReadingListPromptVersion
	list.Suggested = opts.now().UTC().Format("2006-01-02")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	if err := curate.WriteReadingList(path, list); err != nil {
		return err
	}
	w := opts.IO.Out
	for _, wk := range list.Works {
		mark := " "
		if wk.Accepted {
			mark = "✓"
		}
		line := fmt.Sprintf("%s %-4s %-10s %s", mark, wk.ID, wk.Kind, wk.Title)
		if wk.Author != "" {
			line += " — " + wk.Author
		}
		if wk.Period != "" {
			line += " (" + wk.Period + ")"
		}
		if wk.Held != "" {
			line += " [held: " + wk.Held + "]"
		}
		fmt.Fprintln(w, line)
	}
	fmt.Fprintf(w, "reading list %s: %d works, %d new (%s)\n", opts.Theme, len(list.Works), len(added), ws.Rel(path))
	// Copies for the accepted works, when a search is configured.
	if p, err := searchProvider(cfg); err == nil {
		if _, err := findCopies(ctx, opts, ws, p, path, lock); err != nil {
			return err
		}
	}
	if !opts.Quiet {
		fmt.Fprintf(opts.IO.ErrOut, "accept works with `vibe sources accept %s R1 R2 ...` (or accepted: true in %s); `vibe curate %s` then gathers them\n", opts.Theme, ws.Rel(path), opts.Theme)
	}
	return nil
}

// heldURLs are the URLs and origins the theme already holds or lists.
func heldURLs(f curate.File, lock curate.Lock) map[string]bool {
	have := map[string]bool{}
	for _, s := range f.Sources {
		have[strings.TrimSpace(s.Source)] = true
	}
	for _, e := range lock.Sources {
		if e.Status != curate.StatusKept {
			continue
		}
		have[e.Origin] = true
		if e.Provenance.URL != "" {
			have[e.Provenance.URL] = true
		}
	}
	return have
}

// findCopies searches a copy for each accepted work that has neither a
// source nor a copy in source/, and records it in the reading list
// (source, query, found). It returns the works it found copies for.
func findCopies(ctx context.Context, opts *curateOptions, ws *workspace.Workspace, p websearch.Provider, path string, lock curate.Lock) ([]string, error) {
	list, err := curate.LoadReadingList(path)
	if err != nil {
		return nil, err
	}
	f, err := curate.LoadFile(ws.CurateFile(opts.Theme))
	if err != nil && !errors.Is(err, curate.ErrNoCurateFile) {
		return nil, err
	}
	have := heldURLs(f, lock)
	held, _ := heldSources(lock)
	curate.MarkHeld(&list, held)
	today := opts.now().UTC().Format("2006-01-02")
	var found []string
	for _, w := range list.Works {
		if !w.Accepted || w.Source != "" || w.Held != "" {
			continue
		}
		q := w.SearchQuery()
		rs, err := p.Search(ctx, websearch.Query{Text: q, Max: 10, Language: w.Language})
		if err != nil {
			fmt.Fprintf(opts.IO.ErrOut, "warning: no copy searched for %s %s: %v\n", w.ID, w.Title, err)
			continue
		}
		pick := pickCopy(w, rs, have)
		if pick == "" {
			fmt.Fprintf(opts.IO.ErrOut, "warning: the search %q found no copy of %s %s not tried before; name one with source: in %s\n", q, w.ID, w.Title, ws.Rel(path))
			continue
		}
		have[pick] = true
		if err := curate.UpdateWorks(path, []string{w.ID}, func(x *curate.Work) { x.Source, x.Query, x.Found = pick, q, today }); err != nil {
			return found, err
		}
		found = append(found, w.ID)
		if !opts.Quiet {
			fmt.Fprintf(opts.IO.ErrOut, "found    %s %s: %s (search %q)\n", w.ID, w.Title, pick, q)
		}
	}
	return found, nil
}

// pickCopy chooses the result to gather as the work's copy: the first
// whose title names the work, else the first; never one tried before or
// already held.
func pickCopy(w curate.Work, rs []websearch.Result, have map[string]bool) string {
	tried := map[string]bool{}
	for _, t := range w.Tried {
		tried[t] = true
	}
	key := strings.ToLower(strings.Join(strings.Fields(w.Title), ""))
	first := ""
	for _, r := range rs {
		if tried[r.URL] || have[r.URL] {
			continue
		}
		if first == "" {
			first = r.URL
		}
		if key != "" && strings.Contains(strings.ToLower(strings.Join(strings.Fields(r.Title), "")), key) {
			return r.URL
		}
	}
	return first
}

// tentative is a source gathered on trial: a research result or an
// accepted work's copy. It goes into curate.yaml only when curate keeps it;
// when it is dropped or fails, the run goes on without it (no exit 1).
type tentative struct {
	spec curate.Spec
	// work is the reading-list id it is the copy of ("" for research).
	work string
	// searched marks a copy a search found (tried again with another
	// result when it fails).
	searched bool
}

// acceptedSources are the copies of the accepted works to gather: those
// with a source (named or found) that curate.yaml does not list yet.
func acceptedSources(ctx context.Context, opts *curateOptions, ws *workspace.Workspace, cfg *workspace.Config, f curate.File) ([]tentative, error) {
	path := filepath.Join(ws.KnowledgeDir(opts.Theme), curate.ReadingListName)
	list, err := curate.LoadReadingList(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	lock, err := curate.ReadLock(filepath.Join(ws.SourceDir(opts.Theme), curate.LockName))
	if err != nil {
		return nil, err
	}
	need := 0
	for _, w := range list.Works {
		if w.Accepted && w.Source == "" {
			need++
		}
	}
	if need > 0 {
		p, perr := searchProvider(cfg)
		if perr == nil {
			if _, err := findCopies(ctx, opts, ws, p, path, lock); err != nil {
				return nil, err
			}
		}
		if list, err = curate.LoadReadingList(path); err != nil {
			return nil, err
		}
		held, _ := heldSources(lock)
		curate.MarkHeld(&list, held)
		for _, w := range list.Works {
			if w.Accepted && w.Source == "" && w.Held == "" && perr != nil && !opts.Quiet {
				fmt.Fprintf(opts.IO.ErrOut, "note: accepted %s %s has no copy to gather: name one with source: in %s, or %s\n", w.ID, w.Title, ws.Rel(path), strings.ReplaceAll(searchHint, "\n", " "))
			}
		}
	}
	listed := map[string]bool{}
	for _, s := range f.Sources {
		listed[strings.TrimSpace(s.Source)] = true
	}
	var out []tentative
	for _, w := range list.Works {
		if !w.Accepted || w.Source == "" || listed[w.Source] {
			continue
		}
		sp := w.Spec()
		sp.Source = workspaceRelative(ws.Root, w.Source)
		listed[sp.Source] = true
		out = append(out, tentative{spec: sp, work: w.ID, searched: w.Query != ""})
	}
	return out, nil
}

// researchSources searches the question and returns the results the theme
// does not hold yet, as sources to gather.
func researchSources(ctx context.Context, opts *curateOptions, ws *workspace.Workspace, cfg *workspace.Config, f curate.File) ([]tentative, error) {
	p, err := searchProvider(cfg)
	if errors.Is(err, websearch.ErrNotConfigured) {
		return nil, withExit(exitError, withHint(fmt.Errorf("curate %s --research needs a web search: none is configured", opts.Theme), searchHint))
	}
	if err != nil {
		return nil, withExit(exitError, err)
	}
	lock, err := curate.ReadLock(filepath.Join(ws.SourceDir(opts.Theme), curate.LockName))
	if err != nil {
		return nil, err
	}
	recent := opts.Recent
	if recent == "" {
		recent = cfg.Search.Recent
	}
	if recent == "any" {
		recent = ""
	}
	n := opts.Results
	if n == 0 {
		n = cfg.Search.Results
	}
	q := strings.TrimSpace(opts.Research)
	rs, err := p.Search(ctx, websearch.Query{Text: q, Max: n, Recent: recent, Language: f.Language})
	if err != nil {
		return nil, withExit(exitFailure, err)
	}
	have := heldURLs(f, lock)
	today := opts.now().UTC().Format("2006-01-02")
	var out []tentative
	skipped := 0
	for _, r := range rs {
		if have[r.URL] {
			skipped++
			continue
		}
		have[r.URL] = true
		out = append(out, tentative{spec: curate.Spec{Source: r.URL, Title: r.Title, Published: r.Published, Query: q, Retrieved: today}})
	}
	if !opts.Quiet {
		fmt.Fprintf(opts.IO.ErrOut, "research %q (%s): %d result(s), %d already held\n", q, p.Name(), len(rs), skipped)
	}
	return out, nil
}

// settleTentative records what became of the tentative sources: the kept
// ones go into curate.yaml (with the query that found them), a searched
// copy of a work that gave nothing is noted as tried so the next run looks
// further. It reports on w.
func settleTentative(w io.Writer, opts *curateOptions, ws *workspace.Workspace, tents []tentative, res curate.Result) error {
	if len(tents) == 0 {
		return nil
	}
	kept := map[string]bool{}
	for _, e := range res.Lock.Sources {
		if e.Status == curate.StatusKept {
			kept[e.Origin] = true
		}
	}
	var add []curate.Spec
	var retry []string
	for _, t := range tents {
		if kept[t.spec.Source] {
			add = append(add, t.spec)
			continue
		}
		// Its lock entry (dropped, with the reason) is listed with the rest.
		if t.work != "" && t.searched {
			retry = append(retry, t.work)
		}
	}
	if len(add) > 0 {
		file := ws.CurateFile(opts.Theme)
		if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
			return err
		}
		if _, err := curate.AppendSpecs(file, add); err != nil {
			return err
		}
		if !opts.Quiet {
			var names []string
			for _, s := range add {
				names = append(names, s.Source)
			}
			fmt.Fprintf(opts.IO.ErrOut, "added to %s: %s\n", ws.Rel(file), strings.Join(names, ", "))
		}
	}
	if len(retry) > 0 {
		path := filepath.Join(ws.KnowledgeDir(opts.Theme), curate.ReadingListName)
		if err := curate.UpdateWorks(path, retry, func(x *curate.Work) {
			x.Tried = append(x.Tried, x.Source)
			x.Source, x.Query, x.Found = "", "", ""
		}); err != nil {
			return err
		}
		fmt.Fprintf(w, "note: the next `vibe curate %s` searches another copy of %s\n", opts.Theme, strings.Join(retry, ", "))
	}
	return nil
}

func (o *curateOptions) now() time.Time {
	if o.Now != nil {
		return o.Now()
	}
	return time.Now()
}
