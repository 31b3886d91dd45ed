package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/vibelife/vibe/convert"
	"github.com/vibelife/vibe/curate"
	"github.com/vibelife/vibe/internal/iostreams"
	"github.com/vibelife/vibe/websearch"
	"github.com/vibelife/vibe/workspace"
)

// curateOptions are the inputs of `vibe curate`.
type curateOptions struct {
	IO        *iostreams.IOStreams
	Workspace func() (*workspace.Workspace, error)
	Config    func() (*workspace.Config, error)
	Extract   curate.ExtractFunc
	// ExtractDoc, when set, replaces Extract and brings the converter's
	// notes for the credibility grade.
	ExtractDoc curate.ExtractDocFunc
	// Judge returns the model that grades credibility, its version and,
	// when there is none, why (nil: no model).
	Judge func(ws *workspace.Workspace, cfg *workspace.Config) (curate.JudgeFunc, string, string)

	Theme string
	From  []string
	JSON  bool
	Quiet bool
	// RetryFailed converts again the files whose conversion failed for
	// good on an earlier run (too long, too much memory).
	RetryFailed bool

	// Suggest asks the model for a reading list (About describes the
	// theme to it); Offline is --llm offline of `vibe build`.
	Suggest bool
	About   string
	Offline bool
	// Research is a question to search the web for; Recent and Results
	// override search.recent and search.results.
	Research string
	Recent   string
	Results  int
	// Now gives the dates of searches; nil means time.Now.
	Now func() time.Time
}

func newCurateCmd(a *app) *cobra.Command {
	return newCurateCmdWith(a, nil)
}

func newCurateCmdWith(a *app, runF func(context.Context, *curateOptions) error) *cobra.Command {
	opts := &curateOptions{IO: a.io, Workspace: a.workspace, Config: a.config, Extract: a.convertText, ExtractDoc: a.convertDoc, Judge: a.curateJudge}
	cmd := &cobra.Command{
		Use:   "curate <theme>",
		Short: "Gather a theme's sources into knowledge/<theme>/source/, deduplicated and quality-checked",
		Long: `Gather the sources listed in knowledge/<theme>/curate.yaml (and any given with
--from) into knowledge/<theme>/source/, and record every decision in
knowledge/<theme>/source/sources.lock.json.

A source is a file, a directory (searched recursively for PDF, EPUB, DOCX,
HTML, TXT and Markdown files; hidden files are skipped), a glob such as
'books/**/*.pdf', or an http(s) URL (downloaded within curate.max_download_bytes,
curate.download_timeout and curate.max_redirects; its type is sniffed from the
bytes). Relative paths are relative to the workspace.

Exact duplicates (same bytes) and near-duplicates (the same text in another
format) are kept once; sources with too little text (curate.min_chars), mostly
garbled characters (curate.max_garbled_ratio) or in the wrong language (when
curate.yaml sets language:) are dropped with the reason recorded. Sources given
with --from are added to curate.yaml so 'vibe build' gathers them again.
Only --from sources that gathered something are added. Files no source names
any more are removed from source/; a listed source that is missing, empty
(an unmounted disk), of unsupported files only or fails to download keeps the
copies gathered from it before, with a warning and exit status 1 (unlist it
with 'vibe sources remove <theme> SOURCE'). Symlinks leaving a source
directory are skipped with a warning; unsupported files (.png, .xlsx, ...)
are counted and named. A re-run with nothing changed writes nothing; a run
killed at any point leaves nothing the next run mistakes for a file of yours.

curate.yaml:

  language: zh              # optional: zh, en, ja, ko, ru
  sources:
    - books/                # a directory
    - 'scans/**/*.pdf'      # a glob
    - source: https://example.org/ziping.html
      notes: the online edition
  quality:                  # optional, overrides vibe.yaml curate.*
    min_chars: 500
    max_garbled_ratio: 0.1
    near_duplicate: 0.8

Files you put into source/ by hand are gathered too (a theme needs no
curate.yaml at all); curate never overwrites them.

Git repositories are sources too: github:owner/repo[@ref][:path], or any
git+https://host/repo.git[@ref][:path] or git+file:///path/to/repo[@ref][:path]
(ref: a branch, tag or commit, default the default branch; path: a directory,
a file or a glob in the repository). A remote repository is fetched at depth
1 into .vibe/cache/git (curate.max_repo_bytes, curate.git_timeout), a local
one read in place; the documents under the path (curate.max_repo_files) are
gathered, images and code skipped (include: [code] in the curate.yaml entry
gathers code as text), and the commit is recorded in sources.lock.json. When
the ref moves, only the files that changed, came or went are touched.

Every kept source gets a credibility grade, A to D, with its reasons:
provenance (repository and commit, URL, what curate.yaml says of title,
author, publisher, edition), text quality (OCR-like noise, a text cut off
mid-sentence, the converter's notes) and agreement with the other sources of
the same work (passages aligned, differing characters laid on the less likely
reading, truncation). With curate.judge and a model, the model grades each
source too. 'vibe sources list' shows the grades and reasons;
credibility: {floor: C} in curate.yaml keeps out the sources graded below C.

  sources:
    - source: github:owner/classics@v2:zh/
      include: [code]                # also gather source code, as text
    - source: books/ziping.pdf
      title: 子平真诠评注
      publisher: 中华书局
      edition: 1996 点校本
  credibility:
    floor: C

Research (docs/curate.md): --suggest has the model propose a reading list,
knowledge/<theme>/reading-list.yaml (classics, commentaries, modern works,
practice cases, with author, period, edition, why and where a copy is); it
needs a model (exit 2 offline). Accept works with 'vibe sources accept
<theme> R1 R3'; curate then gathers each accepted work from its source:, or
from a copy the web search of vibe.yaml (search: searxng or brave) finds.
--research "question" searches the web and gathers the results the theme
does not hold yet, recording each one's URL, date and the query in
sources.lock.json and curate.yaml. A research result or found copy that is
dropped (dead link, duplicate, too short) does not fail the run.

Exit status 1 when some source could not be read or downloaded.`,
		Example: `  vibe curate bazi --from ~/books/bazi/ --from 'https://example.org/ziping.html'
  vibe curate bazi                       # gather what curate.yaml lists again
  vibe curate tea --from github:owner/tea-notes@main:docs
  vibe curate tea --from git+file:///srv/git/tea.git
  vibe curate tea --from 'notes/**/*.md' --json
  vibe curate bazi --suggest --about "八字命理, the 子平 school"   # then: vibe sources accept bazi R3 R5
  vibe curate tea --research "green tea brewing temperature studies" --recent year`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			a.newTheme = true // curate starts themes: bazzi beside bazi is a new one
			_, theme, err := a.theme(args)
			if err != nil {
				return err
			}
			opts.Theme = theme
			opts.Quiet = a.quiet
			opts.Offline = a.buildLLM == "offline"
			if opts.Suggest && (opts.Research != "" || len(opts.From) > 0 || opts.JSON) {
				return withExit(exitError, errors.New("--suggest only proposes a reading list: run it alone, then `vibe sources accept` and `vibe curate` (with --from or --research if you like)"))
			}
			if opts.About != "" && !opts.Suggest {
				return withExit(exitError, errors.New("--about describes the theme to the model of --suggest: give --suggest too"))
			}
			if cmd.Flags().Changed("research") && strings.TrimSpace(opts.Research) == "" {
				return withExit(exitError, errors.New("--research needs a question, e.g. --research \"recent studies of green tea brewing temperature\""))
			}
			if opts.Results < 0 || opts.Results > 20 {
				return withExit(exitError, fmt.Errorf("--results %d: gather 1 to 20 results of the search", opts.Results))
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			unlock, err := a.lockTheme(theme)
			if err != nil {
				return err
			}
			defer unlock()
			return curateRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringArrayVar(&opts.From, "from", nil, "add a source (path, directory, glob, URL or git repository) to curate.yaml and gather it; repeatable")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the lock (every source, kept or dropped and why) as JSON")
	cmd.Flags().BoolVar(&opts.RetryFailed, "retry-failed", false, "convert again the files whose conversion took too long or needed too much memory on an earlier run (remembered by their bytes, skipped otherwise)")
	cmd.Flags().BoolVar(&opts.Suggest, "suggest", false, "have the model propose a reading list (knowledge/<theme>/reading-list.yaml) to accept works from; needs a model")
	cmd.Flags().StringVar(&opts.About, "about", "", "with --suggest: what the theme is about, in a sentence, for the model")
	cmd.Flags().StringVar(&opts.Research, "research", "", "search the web (vibe.yaml search:) for this question and gather the results the theme does not hold")
	cmd.Flags().StringVar(&opts.Recent, "recent", "", "with --research: only pages of the last day, week, month or year, or any (default search.recent, year)")
	cmd.Flags().IntVar(&opts.Results, "results", 0, "with --research: how many results to gather (default search.results, 5)")
	return cmd
}

// stageCurate is the curate stage of `vibe build`.
func (a *app) stageCurate(ctx context.Context, theme string) error {
	return curateRun(ctx, &curateOptions{IO: a.io, Workspace: a.workspace, Config: a.config, Extract: a.convertText, ExtractDoc: a.convertDoc, Judge: a.curateJudge, Theme: theme, Quiet: a.quiet, RetryFailed: a.buildRetryFailed})
}

// lastingConvertError reports whether a conversion error would come back
// for the same bytes: curate remembers such a failure and skips the file on
// later runs (--retry-failed tries again).
func lastingConvertError(err error) bool {
	return errors.Is(err, convert.ErrTimeout) || errors.Is(err, convert.ErrTooMuchMemory)
}

// curateJudge is the credibility judge of `vibe curate` and the build's
// curate stage (none with --llm offline).
func (a *app) curateJudge(ws *workspace.Workspace, cfg *workspace.Config) (curate.JudgeFunc, string, string) {
	return a.credibilityJudge(ws, cfg, a.buildLLM == "offline")
}

// convertDoc converts a document for curate's checks and credibility: its
// text with the converter's notes.
func (a *app) convertDoc(ctx context.Context, path string) (curate.Extracted, error) {
	doc, err := convert.Convert(ctx, path, convert.Options{PDFium: a.pdfium})
	if err != nil {
		return curate.Extracted{}, err
	}
	q := doc.Quality
	x := curate.Extracted{Text: doc.Markdown, Warnings: q.Warnings, NeedsOCR: q.NeedsOCR, Partial: q.Partial, Garbled: q.Garbled}
	if doc.Format == convert.FormatEPUB {
		// An EPUB's package document names the work; a Word file's or a
		// PDF's "author" is more often whoever typed it.
		x.Meta = curate.WorkMeta{Title: doc.Title, Author: doc.Work.Author, Publisher: doc.Work.Publisher, Published: doc.Work.Published}
	}
	return x, nil
}

// convertText extracts a document's text with the converter, for curate's
// quality and near-duplicate checks.
func (a *app) convertText(ctx context.Context, path string) (string, error) {
	doc, err := convert.Convert(ctx, path, convert.Options{PDFium: a.pdfium})
	if err != nil {
		return "", err
	}
	return doc.Markdown, nil
}

func curateRun(ctx context.Context, opts *curateOptions) error {
	ws, err := opts.Workspace()
	if err != nil {
		return err
	}
	cfg, err := opts.Config()
	if err != nil {
		return err
	}
	curateFile := ws.CurateFile(opts.Theme)
	f, err := curate.LoadFile(curateFile)
	if err != nil && !errors.Is(err, curate.ErrNoCurateFile) {
		return err
	}
	if opts.Suggest {
		return suggestRun(ctx, opts, ws, cfg, f)
	}
	// The copies of the reading list's accepted works and what --research
	// finds are gathered on trial: into curate.yaml only when kept.
	tents, err := acceptedSources(ctx, opts, ws, cfg, f)
	if err != nil {
		return err
	}
	if opts.Research != "" {
		if opts.Recent != "" && opts.Recent != "any" && !slices.Contains(websearch.Recency, opts.Recent) {
			return withExit(exitError, fmt.Errorf("--recent %q: use day, week, month, year or any", opts.Recent))
		}
		rt, err := researchSources(ctx, opts, ws, cfg, f)
		if err != nil {
			return err
		}
		tents = append(tents, rt...)
	}
	// --from sources are gathered with the listed ones and added to
	// curate.yaml afterwards, only those that gave something: a failed URL
	// or an empty directory must not make every later build fail.
	sources := append([]curate.Spec(nil), f.Sources...)
	listed := map[string]bool{}
	for _, s := range f.Sources {
		listed[s.Source] = true
	}
	newFrom := map[string]bool{}
	for _, fr := range opts.From {
		if err := fromExists(fr); err != nil {
			// One message before anything runs: nothing was gathered,
			// and curate.yaml is not touched.
			return withExit(exitError, withHint(fmt.Errorf("curate %s: --from %s: %w", opts.Theme, fr, err),
				"give a file, directory, glob ('books/*.pdf') or URL that exists; nothing was gathered or added to "+ws.Rel(curateFile)))
		}
		src := workspaceRelative(ws.Root, fr)
		if listed[src] || newFrom[src] {
			continue
		}
		newFrom[src] = true
		sources = append(sources, curate.Spec{Source: src})
	}
	trial := map[string]bool{}
	for _, t := range tents {
		if listed[t.spec.Source] || newFrom[t.spec.Source] || trial[t.spec.Source] {
			continue
		}
		trial[t.spec.Source] = true
		sources = append(sources, t.spec)
	}
	q := f.Quality
	ro := curate.Options{
		Root:             ws.Root,
		SourceDir:        ws.SourceDir(opts.Theme),
		Sources:          sources,
		Language:         f.Language,
		MinChars:         firstNonZero(q.MinChars, cfg.Curate.MinChars),
		MaxGarbledRatio:  firstNonZeroF(q.MaxGarbledRatio, cfg.Curate.MaxGarbledRatio),
		NearDuplicate:    q.NearDuplicate,
		MaxDownloadBytes: cfg.Curate.MaxDownloadBytes,
		MaxFileBytes:     cfg.Convert.MaxFileBytes,
		DownloadTimeout:  cfg.Curate.DownloadTimeout,
		MaxRedirects:     cfg.Curate.MaxRedirects,
		MaxRepoBytes:     cfg.Curate.MaxRepoBytes,
		MaxRepoFiles:     cfg.Curate.MaxRepoFiles,
		GitTimeout:       cfg.Curate.GitTimeout,
		GitCacheDir:      ws.CacheDir("git"),
		Extract:          opts.Extract,
		ExtractDoc:       opts.ExtractDoc,
		CacheDir:         ws.CacheDir("curate"),
		ExtractVersion:   convert.Version,
		Lasting:          lastingConvertError,
		RetryFailed:      opts.RetryFailed,
		CredibilityFloor: f.Credibility.Floor,
		JudgeNote:        "offline: no model configured, so the grade rests on the measured findings alone",
	}
	if opts.Judge != nil {
		ro.Judge, ro.JudgeVersion, ro.JudgeNote = opts.Judge(ws, cfg)
	}
	var progress *iostreams.Progress
	if !opts.JSON {
		ro.Progress = func(done, total int, e curate.Entry) {
			if progress == nil {
				progress = opts.IO.NewProgress("curate", total, opts.Quiet || !opts.IO.IsStderrTTY())
			}
			progress.Step(e.Origin)
		}
	}
	res, err := curate.Run(ctx, ro)
	progress.Done()
	if errors.Is(err, curate.ErrNothingToGather) && opts.Research != "" {
		return withExit(exitFailure, fmt.Errorf("curate %s --research: the search found nothing the theme does not hold already", opts.Theme))
	}
	if errors.Is(err, curate.ErrNothingToGather) {
		return withExit(exitError, withHint(fmt.Errorf("curate %s: no sources: %s lists none and %s is empty", opts.Theme, ws.Rel(curateFile), ws.Rel(ws.SourceDir(opts.Theme))),
			fmt.Sprintf("vibe curate %s --from PATH|DIR|'GLOB'|URL (repeatable), or list sources: in %s", opts.Theme, ws.Rel(curateFile))))
	}
	if err != nil {
		return err
	}
	var add, notAdded []string
	for _, s := range res.Sources {
		switch {
		case !newFrom[s.Source]:
		case s.Err == nil && s.Kept > 0:
			add = append(add, s.Source)
		default:
			notAdded = append(notAdded, s.Source)
		}
	}
	if len(add) > 0 {
		if err := os.MkdirAll(filepath.Dir(curateFile), 0o755); err != nil {
			return fmt.Errorf("curate %s: %w", opts.Theme, err)
		}
		changed, err := curate.AppendSources(curateFile, add)
		if err != nil {
			return err
		}
		if changed && !opts.Quiet && !opts.JSON {
			fmt.Fprintf(opts.IO.ErrOut, "added to %s: %s\n", ws.Rel(curateFile), strings.Join(add, ", "))
		}
	}
	if err := settleTentative(opts.IO.ErrOut, opts, ws, tents, res); err != nil {
		return err
	}
	// A research result or a searched copy that gave nothing is reported
	// above, not a failure of the run.
	res.Sources = slices.DeleteFunc(res.Sources, func(s curate.SourceReport) bool { return trial[s.Source] && s.Err != nil })
	failed := 0
	for _, e := range res.Lock.Sources {
		if e.Failed && !trial[e.Origin] {
			failed++
		}
	}
	// A --from that gathered nothing is reported once, by the error below:
	// its own warnings and failed entry would repeat it (and tell the user
	// to fix curate.yaml, which does not list it).
	reportCurateWarnings(opts.IO.ErrOut, ws, opts.Theme, res, opts.Quiet, newFrom)
	if opts.JSON {
		if err := printJSON(opts.IO.Out, res.Lock); err != nil {
			return err
		}
	} else {
		w := opts.IO.Out
		for _, e := range res.Lock.Sources {
			if e.Failed && newFrom[e.Origin] {
				continue // the --from error below says it
			}
			if opts.Quiet && !e.Failed {
				// -q: only what went wrong.
				continue
			}
			if e.Status == curate.StatusKept {
				name := ""
				if filepath.Base(e.Origin) != e.File {
					name = " -> " + e.File
				}
				fmt.Fprintf(w, "kept     %s%s\n", e.Origin, name)
			} else {
				fmt.Fprintf(w, "dropped  %s: %s\n", e.Origin, e.Reason)
			}
		}
		for _, r := range res.Removed {
			fmt.Fprintf(w, "removed  %s (no source names it any more)\n", r)
		}
		for _, r := range res.MovedAside {
			fmt.Fprintf(w, "moved    %s to %s/ (dropped; it was put into source/ by hand)\n", r, curate.DroppedDir)
		}
		reportGit(w, res)
		if !opts.Quiet {
			reportCredibility(w, opts.Theme, res.Lock)
			state := "updated"
			if !res.Changed {
				state = "unchanged"
			}
			fmt.Fprintf(w, "curate %s: %d kept, %d dropped, %s (%s)\n", opts.Theme, res.Kept(), res.Dropped(), state, ws.Rel(filepath.Join(ws.SourceDir(opts.Theme), curate.LockName)))
		}
	}
	var names []string
	for _, e := range res.SourceErrors() {
		if !newFrom[e.Source] {
			names = append(names, e.Source)
		}
	}
	if len(names) > 0 {
		return withExit(exitFailure, withHint(fmt.Errorf("curate %s: %d listed source(s) gave nothing to gather: %s (see above)", opts.Theme, len(names), strings.Join(names, ", ")),
			fmt.Sprintf("fix the path (or mount the disk), or remove the source with `vibe sources remove %s SOURCE`; vibe gathers PDF, EPUB, DOCX, HTML, TXT and Markdown files", opts.Theme)))
	}
	if len(notAdded) > 0 {
		return notAddedError(ws, opts.Theme, curateFile, notAdded, res)
	}
	if n := failed; n > 0 {
		return withExit(exitFailure, fmt.Errorf("curate %s: %d source(s) could not be read or downloaded (see above)", opts.Theme, n))
	}
	return nil
}

// reportCurateWarnings prints on w what curate did not gather and why: a
// listed source that failed (and the copies kept for it), links left
// unfollowed, unsupported files, and copies put back from their origin.
// quiet leaves out the notes; warnings always print.
func reportCurateWarnings(w io.Writer, ws *workspace.Workspace, theme string, res curate.Result, quiet bool, fromOnly map[string]bool) {
	for _, s := range res.Sources {
		if s.Err != nil && !fromOnly[s.Source] {
			fmt.Fprintf(w, "warning: source %s: %v\n", s.Source, s.Err)
			if n := len(s.Carried); n > 0 {
				fmt.Fprintf(w, "warning: source %s gave nothing: kept the %d copies gathered from it before (%s); they go only when you remove it with `vibe sources remove %s %s`\n",
					s.Source, n, nameList(s.Carried, 5), theme, s.Source)
			}
		}
		for _, l := range s.Links {
			fmt.Fprintf(w, "warning: source %s: skipped link %s -> %s (it leaves the source directory)\n", s.Source, ws.Rel(l.Link), l.Target)
		}
		if n := len(s.Unsupported); n > 0 && s.Err == nil && !quiet {
			fmt.Fprintf(w, "skipped  %d unsupported file(s) in %s: %s (vibe gathers PDF, EPUB, DOCX, HTML, TXT and Markdown)\n", n, s.Source, nameList(s.Unsupported, 10))
		}
	}
	for _, l := range res.HandLinks {
		fmt.Fprintf(w, "warning: skipped link %s -> %s (it leaves %s)\n", ws.Rel(l.Link), l.Target, ws.Rel(ws.SourceDir(theme)))
	}
	for _, r := range res.Restored {
		fmt.Fprintf(w, "warning: %s was edited in source/; put back from its origin %s (edit the origin instead, or save your version under another name)\n", r.File, r.Origin)
	}
	if !quiet {
		for _, r := range res.Adopted {
			fmt.Fprintf(w, "note: %s in source/ is a copy an interrupted curate made; taken as it is\n", r)
		}
	}
}

// nameList joins up to max names, saying how many more there are.
func nameList(names []string, max int) string {
	if len(names) <= max {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:max], ", "), len(names)-max)
}

// workspaceRelative records a --from path relative to the workspace when it
// lies inside it, so curate.yaml stays portable; URLs and globs outside are
// kept as given (made absolute).
func workspaceRelative(root, src string) string {
	if strings.HasPrefix(src, "http://") || strings.HasPrefix(src, "https://") || strings.HasPrefix(src, "~/") ||
		strings.HasPrefix(src, "github:") || strings.HasPrefix(src, "git+") {
		return src
	}
	abs, err := filepath.Abs(src)
	if err != nil {
		return src
	}
	if rel, err := filepath.Rel(root, abs); err == nil && !strings.HasPrefix(rel, "..") {
		return filepath.ToSlash(rel)
	}
	return filepath.ToSlash(abs)
}

func firstNonZero(a, b int) int {
	if a != 0 {
		return a
	}
	return b
}

func firstNonZeroF(a, b float64) float64 {
	if a != 0 {
		return a
	}
	return b
}

// fromExists says why a local --from path cannot be gathered (it does not
// exist); URLs, git sources and globs are left to curate.
func fromExists(from string) error {
	for _, p := range []string{"http://", "https://", "github:", "git+"} {
		if strings.HasPrefix(from, p) {
			return nil
		}
	}
	if strings.ContainsAny(from, "*?[") {
		return nil
	}
	path := from
	if rest, ok := strings.CutPrefix(from, "~/"); ok {
		home, err := os.UserHomeDir()
		if err != nil {
			return nil
		}
		path = filepath.Join(home, rest)
	}
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return errors.New("no such file or directory")
	}
	return nil
}

// notAddedError is the one message for --from sources that gathered
// nothing: why (the source's error, or why each of its files was dropped)
// and what to do about that reason.
func notAddedError(ws *workspace.Workspace, theme, curateFile string, notAdded []string, res curate.Result) error {
	var why []string
	dropped := false
	for _, s := range res.Sources {
		if !slices.Contains(notAdded, s.Source) {
			continue
		}
		if s.Err != nil {
			why = append(why, s.Err.Error())
			continue
		}
		for _, e := range res.Lock.Sources {
			if e.Status != curate.StatusKept && (e.Origin == s.Source || strings.HasPrefix(e.Origin, strings.TrimSuffix(s.Source, "/")+"/")) {
				why = append(why, e.Origin+": "+e.Reason)
				dropped = true
			}
		}
	}
	it := "it was"
	if len(notAdded) > 1 {
		it = "they were"
	}
	msg := fmt.Sprintf("curate %s: --from %s gathered nothing, so %s not added to %s", theme, strings.Join(notAdded, ", "), it, ws.Rel(curateFile))
	if len(why) > 0 {
		msg += ": " + nameList(why, 3)
	}
	hint := "give a PDF, EPUB, DOCX, HTML, TXT or Markdown file, a directory or glob holding some, or a URL that downloads one"
	if dropped {
		hint = "each file was dropped for the reason given: a text too short is kept with a lower curate.min_chars (vibe.yaml, or quality: min_chars in " + ws.Rel(curateFile) + "); a near-duplicate of a kept source adds nothing"
	}
	return withExit(exitFailure, withHint(errors.New(msg), hint))
}
