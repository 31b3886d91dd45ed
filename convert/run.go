package convert

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/vibelife/vibe/internal/atomicfile"
)

// LockFileName is the curate stage's lock file in a source directory; the
// runner never converts it.
const LockFileName = "sources.lock.json"

// Status is what happened to one input of a batch conversion.
type Status string

// Statuses of a [FileResult].
const (
	StatusConverted Status = "converted"
	StatusUnchanged Status = "unchanged"
	StatusFailed    Status = "failed"
	StatusRemoved   Status = "removed"
)

// RunOptions configure [ConvertTheme] and [ConvertFiles]. The zero value
// converts with default [Options], two workers, and collects errors.
type RunOptions struct {
	// Convert is passed to [Convert] for every file (SourceName is set per
	// file from SourceName below). When Convert.PDFium is nil the run
	// creates a pdfium engine for itself and closes it at the end.
	Convert Options
	// Workers bounds how many files are converted at once (default 2).
	Workers int
	// Force converts every file even when its converted file is up to date.
	Force bool
	// Overwrite lets a conversion replace an output file vibe did not
	// write (no converter front matter), or the input itself (`vibe
	// convert notes.md -o .`). Without it such a file is left alone and
	// the input fails with ErrWouldOverwrite.
	Overwrite bool
	// SourceName maps an input path to the path recorded in the front
	// matter (e.g. relative to the workspace). Default: the path itself.
	SourceName func(path string) string
	// OnError is called for each file that fails, never concurrently with
	// itself or OnProgress. The error already names the file. Returning nil
	// goes on with the other files; returning an error stops the run and
	// the runner returns it. A nil OnError means: go on.
	OnError func(path string, err error) error
	// OnStart is called once with the number of inputs before any is
	// converted.
	OnStart func(total int)
	// OnProgress is called after each input is done, never concurrently
	// with itself or OnError.
	OnProgress func(path string, status Status)
}

// FileResult is the outcome for one input.
type FileResult struct {
	Source   string   `json:"source"`
	Output   string   `json:"output,omitempty"`
	Status   Status   `json:"status"`
	Format   string   `json:"format,omitempty"`
	Title    string   `json:"title,omitempty"`
	Chars    int      `json:"chars,omitempty"`
	Headings int      `json:"headings,omitempty"`
	NeedsOCR bool     `json:"needs_ocr,omitempty"`
	Garbled  bool     `json:"garbled,omitempty"`
	Partial  bool     `json:"partial,omitempty"`
	Warnings []string `json:"warnings,omitempty"`
	Error    string   `json:"error,omitempty"`

	err error
}

// Err returns the conversion error of a failed file.
func (r FileResult) Err() error { return r.err }

// Report summarises a batch conversion. Files are sorted by Source.
type Report struct {
	Files     []FileResult `json:"files"`
	Converted int          `json:"converted"`
	Unchanged int          `json:"unchanged"`
	Failed    int          `json:"failed"`
	Removed   int          `json:"removed"`
}

// NeedsOCR lists the sources whose converted text lacks pages without a
// text layer.
func (r Report) NeedsOCR() []string {
	var out []string
	for _, f := range r.Files {
		if f.NeedsOCR {
			out = append(out, f.Source)
		}
	}
	return out
}

// Partial lists the sources of which only a part could be recovered.
func (r Report) Partial() []string {
	var out []string
	for _, f := range r.Files {
		if f.Partial {
			out = append(out, f.Source)
		}
	}
	return out
}

// Garbled lists the sources whose converted text was judged garbled.
func (r Report) Garbled() []string {
	var out []string
	for _, f := range r.Files {
		if f.Garbled {
			out = append(out, f.Source)
		}
	}
	return out
}

type job struct {
	src, out string
}

// ConvertTheme converts every file of sourceDir (recursively; dot files and
// sources.lock.json skipped) to convertedDir/<name>.md, where name is the
// file name without its extension (two sources with the same stem get the
// extension appended, e.g. book-pdf.md and book-epub.md). A source whose
// converted file already records the same sha256 and converter [Version] is
// not converted again. Converted files whose source is gone are removed. A
// failed file never overwrites its existing converted file. Writes are
// atomic. The returned error is non-nil only when the run itself could not
// proceed (unreadable directory, OnError aborting, ctx cancelled); per-file
// failures are in the Report.
func ConvertTheme(ctx context.Context, sourceDir, convertedDir string, opts RunOptions) (Report, error) {
	srcs, err := listInputs(sourceDir)
	if err != nil {
		return Report{}, fmt.Errorf("convert %q: %w", sourceDir, quotePathError(err))
	}
	jobs := planOutputs(srcs, convertedDir)
	rep, err := runJobs(ctx, jobs, opts)
	if err != nil {
		return rep, err
	}
	// Remove converted files (those with front matter) no source maps to
	// any more.
	want := map[string]bool{}
	for _, j := range jobs {
		want[filepath.Base(j.out)] = true
	}
	entries, err := os.ReadDir(convertedDir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return rep, fmt.Errorf("convert: read %q: %w", convertedDir, quotePathError(err))
	}
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || strings.HasPrefix(name, ".") || !strings.HasSuffix(name, ".md") || want[name] {
			continue
		}
		p := filepath.Join(convertedDir, name)
		if _, _, err := ReadFile(p); err != nil {
			continue // not a converted file (no front matter): not ours to remove
		}
		if err := os.Remove(p); err != nil {
			return rep, fmt.Errorf("convert: remove stale %q: %w", p, quotePathError(err))
		}
		rep.Removed++
		rep.Files = append(rep.Files, FileResult{Source: p, Output: p, Status: StatusRemoved})
		if opts.OnProgress != nil {
			opts.OnProgress(p, StatusRemoved)
		}
	}
	return rep, nil
}

// ConvertFiles converts the given files and directories (walked recursively,
// dot files and sources.lock.json skipped) to outDir/<name>.md, with the
// naming, incremental and failure rules of [ConvertTheme]. Nothing is
// removed from outDir.
func ConvertFiles(ctx context.Context, inputs []string, outDir string, opts RunOptions) (Report, error) {
	var srcs []string
	seen := map[string]bool{}
	for _, in := range inputs {
		st, err := os.Stat(in)
		if err != nil {
			return Report{}, fmt.Errorf("convert %q: %w", in, quotePathError(err))
		}
		var list []string
		if st.IsDir() {
			if list, err = listInputs(in); err != nil {
				return Report{}, fmt.Errorf("convert %q: %w", in, quotePathError(err))
			}
		} else {
			list = []string{in}
		}
		for _, p := range list {
			if abs, err := filepath.Abs(p); err == nil && !seen[abs] {
				seen[abs] = true
				srcs = append(srcs, p)
			}
		}
	}
	return runJobs(ctx, planOutputs(srcs, outDir), opts)
}

// listInputs walks dir for convertible files, sorted.
func listInputs(dir string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if p != dir && strings.HasPrefix(name, ".") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() || name == LockFileName || !d.Type().IsRegular() {
			return nil
		}
		out = append(out, p)
		return nil
	})
	sort.Strings(out)
	return out, err
}

// planOutputs names each source's converted file; stems shared by several
// sources get the extension appended, and any remaining clash a counter, so
// that the name does not depend on which other files happen to be present
// beyond those sharing the stem.
func planOutputs(srcs []string, outDir string) []job {
	stem := func(p string) string {
		b := filepath.Base(p)
		return strings.TrimSuffix(b, filepath.Ext(b))
	}
	count := map[string]int{}
	for _, s := range srcs {
		count[strings.ToLower(stem(s))]++
	}
	used := map[string]int{}
	jobs := make([]job, 0, len(srcs))
	for _, s := range srcs {
		name := stem(s)
		if name == "" {
			name = filepath.Base(s)
		}
		if count[strings.ToLower(stem(s))] > 1 {
			if ext := strings.TrimPrefix(filepath.Ext(s), "."); ext != "" {
				name += "-" + ext
			}
		}
		key := strings.ToLower(name)
		used[key]++
		if n := used[key]; n > 1 {
			name = fmt.Sprintf("%s-%d", name, n)
		}
		jobs = append(jobs, job{src: s, out: filepath.Join(outDir, name+".md")})
	}
	return jobs
}

func runJobs(ctx context.Context, jobs []job, opts RunOptions) (Report, error) {
	workers := opts.Workers
	if workers <= 0 {
		workers = 2
	}
	if opts.Convert.PDFium == nil {
		// One engine for the run, sized to the workers; it only starts if
		// a PDF needs it.
		engine := NewPDFium(PDFiumOptions{Instances: workers})
		defer engine.Close()
		opts.Convert.PDFium = engine
	}
	if opts.OnStart != nil {
		opts.OnStart(len(jobs))
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)

	results := make([]FileResult, len(jobs))
	done := make([]bool, len(jobs))
	idx := make(chan int)
	var wg sync.WaitGroup
	// One lock serialises both callbacks, so callers may write to a shared
	// stream from them without locking.
	var cbMu sync.Mutex
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range idx {
				if ctx.Err() != nil {
					continue // aborted: leave the rest undone
				}
				r := convertOne(ctx, jobs[i], opts)
				results[i] = r
				done[i] = true
				cbMu.Lock()
				if r.Status == StatusFailed && opts.OnError != nil {
					if abort := opts.OnError(jobs[i].src, r.err); abort != nil {
						cancel(abort)
					}
				}
				if opts.OnProgress != nil {
					opts.OnProgress(jobs[i].src, r.Status)
				}
				cbMu.Unlock()
			}
		}()
	}
feed:
	for i := range jobs {
		select {
		case idx <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(idx)
	wg.Wait()

	var rep Report
	for i, r := range results {
		if !done[i] {
			continue
		}
		switch r.Status {
		case StatusConverted:
			rep.Converted++
		case StatusUnchanged:
			rep.Unchanged++
		case StatusFailed:
			rep.Failed++
		}
		rep.Files = append(rep.Files, r)
	}
	if err := context.Cause(ctx); err != nil {
		return rep, err
	}
	return rep, nil
}

// convertOne converts one source unless its converted file is up to date.
func convertOne(ctx context.Context, j job, opts RunOptions) FileResult {
	name := j.src
	if opts.SourceName != nil {
		name = opts.SourceName(j.src)
	}
	res := FileResult{Source: name, Output: j.out}
	fail := func(err error) FileResult {
		res.Status = StatusFailed
		res.err = err
		res.Error = err.Error()
		return res
	}
	if err := ctx.Err(); err != nil {
		return fail(fmt.Errorf("%q: %w", j.src, err))
	}
	if !opts.Force {
		if prev, ok := upToDate(j.src, j.out, opts.Convert); ok {
			res.Status = StatusUnchanged
			fillResult(&res, prev)
			return res
		}
	}
	if !opts.Overwrite {
		if err := checkOverwrite(j); err != nil {
			return fail(err)
		}
	}
	copts := opts.Convert
	copts.SourceName = name
	doc, err := Convert(ctx, j.src, copts)
	if err != nil {
		if !strings.Contains(err.Error(), fmt.Sprintf("%q", j.src)) {
			err = fmt.Errorf("%q: %w", j.src, err)
		}
		return fail(err)
	}
	data, err := Render(doc)
	if err != nil {
		return fail(fmt.Errorf("%q: %w", j.src, err))
	}
	if err := atomicfile.WriteFile(j.out, data, 0o644); err != nil {
		return fail(fmt.Errorf("%q: write %q: %w", j.src, j.out, quotePathError(err)))
	}
	res.Status = StatusConverted
	fillResult(&res, doc)
	return res
}

func fillResult(r *FileResult, doc Document) {
	r.Format = doc.Format
	r.Title = doc.Title
	r.Chars = doc.Quality.Chars
	r.Headings = doc.Quality.Headings
	r.NeedsOCR = doc.Quality.NeedsOCR
	r.Garbled = doc.Quality.Garbled
	r.Partial = doc.Quality.Partial
	r.Warnings = doc.Quality.Warnings
}

// upToDate reports whether out was converted from src's current bytes by
// this converter Version. The source is hashed streaming; sources past the
// size cap are never up to date (Convert reports them).
func upToDate(src, out string, opts Options) (Document, bool) {
	prev, _, err := ReadFile(out)
	if err != nil || prev.Converter != Version || prev.SHA256 == "" {
		return prev, false
	}
	opts = opts.withDefaults()
	f, err := os.Open(src)
	if err != nil {
		return prev, false
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || st.Size() > opts.MaxFileBytes {
		return prev, false
	}
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return prev, false
	}
	return prev, hex.EncodeToString(h.Sum(nil)) == prev.SHA256
}

// checkOverwrite refuses to write j.out when it is the input itself or an
// existing file vibe did not write (no converter front matter).
func checkOverwrite(j job) error {
	out, err := os.Stat(j.out)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("%q: %w", j.out, err)
	}
	if in, err := os.Stat(j.src); err == nil && os.SameFile(in, out) {
		return fmt.Errorf("%q: %w: the output would replace the input itself; choose another output directory (or pass --force to overwrite it)", j.src, ErrWouldOverwrite)
	}
	if prev, _, err := ReadFile(j.out); err != nil || prev.Converter == "" {
		return fmt.Errorf("%q: %w: %q exists and was not written by vibe convert; move it away, choose another output directory, or pass --force to overwrite it", j.src, ErrWouldOverwrite, j.out)
	}
	return nil
}
