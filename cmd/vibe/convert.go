package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"unicode"

	"github.com/spf13/cobra"

	"github.com/vibelife/vibe/convert"
	"github.com/vibelife/vibe/internal/iostreams"
	"github.com/vibelife/vibe/workspace"
)

// convertOptions are the inputs of `vibe convert`.
type convertOptions struct {
	IO    *iostreams.IOStreams
	Quiet bool

	// Theme is set in theme mode; Inputs and OutDir in standalone mode.
	Theme  string
	Inputs []string
	OutDir string

	JSON  bool
	Force bool
	// Flag overrides; zero/empty means "from vibe.yaml".
	Workers      int
	MaxFileBytes int64
	PDFEngine    string
}

func newConvertCmd(a *app) *cobra.Command { return newConvertCmdWith(a, nil) }

// newConvertCmdWith builds the command; runF replaces the run function in
// tests of flag parsing.
func newConvertCmdWith(a *app, runF func(context.Context, *convertOptions) error) *cobra.Command {
	opts := &convertOptions{}
	cmd := &cobra.Command{
		Use:   "convert <theme> | convert FILE|DIR ... -o OUTDIR",
		Short: "Convert PDF, EPUB, DOCX, HTML, TXT and Markdown sources to clean Markdown",
		Long: `Convert sources to Markdown with real headings and a YAML front matter
(source, sha256, format, title, converter version, quality report).

With a theme, every file in knowledge/<theme>/source/ becomes
knowledge/<theme>/converted/<name>.md; converted files whose source is gone
are removed. With -o, the given files and directories are converted to
OUTDIR/<name>.md instead (no workspace needed).

The format is sniffed from the bytes, not the extension. Text files may be
UTF-8, UTF-16 with a BOM, GB18030/GBK or Big5. A source that has not changed
since it was converted (same sha256 and converter version) is skipped.

A file that cannot be converted gets one error line naming it; the others are
converted, an existing good converted file is never overwritten, and the exit
status is 1. PDFs whose pages lack a text layer (need OCR) and garbled text
are named in the summary.

Each file is bounded in time and memory (convert.timeout, default 2m;
convert.max_memory_bytes, default 2 GiB): a file past either fails with an
error naming it, the others are converted.

Settings come from the convert section of vibe.yaml (max_file_bytes,
pdf_engine, workers, timeout, max_memory_bytes, pdf_page_instances) and VIBE_CONVERT_*
variables; flags override them. pdf_page_instances 2 or more also reads the pages of a
long PDF on other pdfium instances when they are idle (default 1: pages in order on one
instance, which measured less CPU and memory and no slower on 2 busy cores).`,
		Example: `  vibe convert bazi
  vibe convert bazi --force --json
  vibe convert ~/books/manual.pdf ~/books/epubs/ -o /tmp/md
  vibe convert scan.pdf -o out --max-file-bytes 1073741824`,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.IO = a.io
			opts.Quiet = a.quiet
			if opts.OutDir != "" {
				if len(args) == 0 {
					return flagErrorf("give the files or directories to convert, e.g. `vibe convert book.pdf -o %s`", opts.OutDir)
				}
				opts.Inputs = args
			} else {
				if len(args) != 1 {
					return flagErrorf("give one theme (`vibe convert bazi`), or files with an output directory (`vibe convert FILE... -o OUTDIR`)")
				}
				if err := workspace.ValidateTheme(args[0]); err != nil {
					if _, statErr := os.Stat(args[0]); statErr == nil {
						return flagErrorf("%s is a file or directory: pass -o OUTDIR to convert it outside a theme", args[0])
					} else if strings.ContainsAny(args[0], `/\.`) {
						return withExit(exitError, withHint(fmt.Errorf("convert: %s does not exist", args[0]), "give a file or directory that exists with -o OUTDIR (`vibe convert book.pdf -o out`), or a theme name (`vibe convert bazi`)"))
					}
					return flagErrorf("%v", err)
				}
				opts.Theme = args[0]
			}
			if opts.Workers < 0 {
				return flagErrorf("--workers must be at least 1")
			}
			if opts.MaxFileBytes < 0 {
				return flagErrorf("--max-file-bytes must be positive")
			}
			switch opts.PDFEngine {
			case "", "auto", "pdfium", "ledongthuc":
			default:
				return flagErrorf("--pdf-engine %q: use auto, pdfium or ledongthuc", opts.PDFEngine)
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			if opts.Theme != "" {
				unlock, err := a.lockTheme(opts.Theme)
				if err != nil {
					return err
				}
				defer unlock()
			}
			return a.runConvert(cmd.Context(), opts)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&opts.OutDir, "output", "o", "", "convert the given FILEs/DIRs into this directory instead of a theme")
	f.BoolVar(&opts.JSON, "json", false, "print the report as JSON on stdout")
	f.BoolVar(&opts.Force, "force", false, "convert even sources that are up to date, and overwrite output files vibe did not write (or the input itself)")
	f.IntVar(&opts.Workers, "workers", 0, "files converted at once (default: convert.workers in vibe.yaml)")
	f.Int64Var(&opts.MaxFileBytes, "max-file-bytes", 0, "refuse sources larger than this (default: convert.max_file_bytes)")
	f.StringVar(&opts.PDFEngine, "pdf-engine", "", "PDF engine: auto, pdfium or ledongthuc (default: convert.pdf_engine)")
	return cmd
}

// stageConvert is the convert stage of `vibe build`: the same as
// `vibe convert <theme>`.
func (a *app) stageConvert(ctx context.Context, theme string) error {
	return a.runConvert(ctx, &convertOptions{IO: a.io, Quiet: a.quiet, Theme: theme})
}

// runConvert converts and reports. Some files failing is exit status 1.
func (a *app) runConvert(ctx context.Context, opts *convertOptions) error {
	for _, in := range opts.Inputs {
		if _, err := os.Stat(in); errors.Is(err, fs.ErrNotExist) {
			return withExit(exitError, withHint(fmt.Errorf("convert: %s does not exist", in), "give a file or directory that exists (PDF, EPUB, DOCX, HTML, TXT or Markdown), e.g. `vibe convert book.pdf -o "+opts.OutDir+"`"))
		}
	}
	cfg, err := a.config()
	if err != nil {
		return err
	}
	ropts := convert.RunOptions{
		Convert: convert.Options{
			MaxFileBytes:     cfg.Convert.MaxFileBytes,
			PDFEngine:        cfg.Convert.PDFEngine,
			Timeout:          cfg.Convert.Timeout,
			MaxMemoryBytes:   cfg.Convert.MaxMemoryBytes,
			PDFium:           a.pdfium,
			PDFPageInstances: cfg.Convert.PDFPageInstances,
		},
		Workers:   cfg.Convert.Workers,
		Force:     opts.Force,
		Overwrite: opts.Force,
	}
	if opts.Workers > 0 {
		ropts.Workers = opts.Workers
	}
	if opts.MaxFileBytes > 0 {
		ropts.Convert.MaxFileBytes = opts.MaxFileBytes
	}
	if opts.PDFEngine != "" {
		ropts.Convert.PDFEngine = opts.PDFEngine
	}

	var mu sync.Mutex
	errOut := opts.IO.ErrOut
	display := filepath.ToSlash
	if opts.Theme != "" {
		ws, err := a.workspace()
		if err != nil {
			return err
		}
		display = ws.Rel
	}
	var progress *iostreams.Progress
	ropts.OnStart = func(total int) {
		progress = opts.IO.NewProgress("convert", total, opts.Quiet || total == 0)
	}
	ropts.OnProgress = func(path string, _ convert.Status) { progress.Step(printableName(filepath.Base(path))) }
	ropts.OnError = func(path string, err error) error {
		mu.Lock()
		defer mu.Unlock()
		// File names are quoted (%q) in the converter's errors, so a
		// newline in a name cannot forge a log line; show them relative.
		msg := err.Error()
		if q := fmt.Sprintf("%q", path); strings.Contains(msg, q) {
			msg = strings.ReplaceAll(msg, q, fmt.Sprintf("%q", display(path)))
		} else {
			msg = fmt.Sprintf("%q: %s", display(path), msg)
		}
		if opts.IO.IsStderrTTY() && !opts.Quiet {
			fmt.Fprint(errOut, "\r\033[K") // clear the progress bar line first
		}
		fmt.Fprintf(errOut, "convert: %s\n", msg)
		if h := convertHint(err); h != "" && !hintAlreadyGiven(msg, err) {
			fmt.Fprintf(errOut, "  hint: %s\n", h)
		}
		return nil
	}

	var rep convert.Report
	var where string
	if opts.Theme != "" {
		ws, err := a.workspace()
		if err != nil {
			return err
		}
		src := ws.SourceDir(opts.Theme)
		if _, err := os.Stat(src); errors.Is(err, fs.ErrNotExist) {
			return withHint(fmt.Errorf("convert %s: no sources: %s does not exist", opts.Theme, ws.Rel(src)),
				fmt.Sprintf("run `vibe curate %s --from PATH` first, or put files in %s", opts.Theme, ws.Rel(src)))
		}
		ropts.SourceName = ws.Rel
		where = ws.Rel(ws.ConvertedDir(opts.Theme))
		rep, err = convert.ConvertTheme(ctx, src, ws.ConvertedDir(opts.Theme), ropts)
		if err != nil {
			progress.Done()
			return err
		}
	} else {
		ropts.SourceName = filepath.ToSlash
		where = opts.OutDir
		rep, err = convert.ConvertFiles(ctx, opts.Inputs, opts.OutDir, ropts)
		if err != nil {
			progress.Done()
			return err
		}
	}
	progress.Done()

	if opts.JSON {
		if err := printJSON(opts.IO.Out, rep); err != nil {
			return err
		}
	} else if !opts.Quiet || rep.Failed > 0 {
		printConvertSummary(opts.IO, rep, where)
	}
	if rep.Failed > 0 {
		return withExit(exitFailure, fmt.Errorf("convert: %d of %d files failed (see the errors above); the others were converted", rep.Failed, rep.Failed+rep.Converted+rep.Unchanged))
	}
	if g := rep.Garbled(); len(g) > 0 {
		// Mojibake must never pass as a good build: the converted files
		// are written (flagged garbled, so ingest skips them) but the run
		// fails.
		return withExit(exitFailure, withHint(fmt.Errorf("convert: %d files converted to garbled text: %s", len(g), quoteList(g)),
			"re-export the file with a proper text layer or encoding (UTF-8 for text), run OCR on a PDF whose fonts lack a Unicode map, or remove it from the sources"))
	}
	return nil
}

func printConvertSummary(ios *iostreams.IOStreams, rep convert.Report, where string) {
	w := ios.ErrOut
	line := fmt.Sprintf("convert: %d converted, %d unchanged, %d failed", rep.Converted, rep.Unchanged, rep.Failed)
	if rep.Removed > 0 {
		line += fmt.Sprintf(", %d removed (source gone)", rep.Removed)
	}
	fmt.Fprintf(w, "%s -> %s\n", line, where)
	if l := rep.NeedsOCR(); len(l) > 0 {
		fmt.Fprintf(w, "convert: needs OCR (pages without a text layer): %s\n", quoteList(l))
	}
	if l := rep.Partial(); len(l) > 0 {
		fmt.Fprintf(w, "convert: partial (damaged or cut short; only the surviving pages were converted): %s\n", quoteList(l))
	}
	if l := rep.Garbled(); len(l) > 0 {
		fmt.Fprintf(w, "convert: garbled text (broken text layer or encoding): %s\n", quoteList(l))
	}
}

// convertHint says what to do about a conversion error.
func convertHint(err error) string {
	switch {
	case errors.Is(err, convert.ErrTooLarge):
		return "raise convert.max_file_bytes in vibe.yaml, or pass --max-file-bytes N for this run"
	case errors.Is(err, convert.ErrZipBomb):
		return "the container inflates past convert's limit; if the file is genuine, re-save it with your e-book or word processor"
	case errors.Is(err, convert.ErrUnsupportedFormat):
		return "save it as PDF, EPUB, DOCX, HTML, TXT or Markdown"
	case errors.Is(err, convert.ErrEmpty):
		return "the file has no content; gather it again or remove it"
	case errors.Is(err, convert.ErrEncrypted):
		return "supply a decrypted copy (e.g. qpdf --decrypt in.pdf out.pdf)"
	case errors.Is(err, convert.ErrNoText):
		return "run OCR first (e.g. ocrmypdf in.pdf out.pdf)"
	case errors.Is(err, convert.ErrTimeout):
		return "the file keeps the converter busy (a damaged or hostile file?); if it is genuine, raise convert.timeout in vibe.yaml"
	case errors.Is(err, convert.ErrTooMuchMemory):
		return "if the file is genuine, raise convert.max_memory_bytes in vibe.yaml"
	case errors.Is(err, convert.ErrGarbled):
		return "re-save the file as UTF-8, or replace it with an undamaged copy"
	case errors.Is(err, convert.ErrWouldOverwrite):
		return "pass --force to overwrite it, or choose another output directory"
	case errors.Is(err, convert.ErrTooDeep):
		return "the page nests its elements deeper than any real page does (generated or hostile HTML); if its text matters, save it from a browser as plain text and convert that"
	case errors.Is(err, convert.ErrDamaged):
		return "the file is truncated or damaged; download or export it again"
	}
	return ""
}

// hintAlreadyGiven reports whether the converter's own message already says
// what the hint would, so the advice is not printed twice.
func hintAlreadyGiven(msg string, err error) bool {
	switch {
	case errors.Is(err, convert.ErrEncrypted):
		return strings.Contains(msg, "decrypted")
	case errors.Is(err, convert.ErrUnsupportedFormat):
		return strings.Contains(msg, "convert it to")
	case errors.Is(err, convert.ErrNoText):
		return strings.Contains(msg, "OCR")
	case errors.Is(err, convert.ErrTimeout):
		return strings.Contains(msg, "convert.timeout")
	case errors.Is(err, convert.ErrGarbled):
		return strings.Contains(msg, "UTF-8")
	case errors.Is(err, convert.ErrWouldOverwrite):
		return strings.Contains(msg, "--force")
	case errors.Is(err, convert.ErrTooMuchMemory):
		return strings.Contains(msg, "convert.max_memory_bytes")
	}
	return false
}

// quoteList quotes each name (%q), so a newline or control character in a
// file name cannot forge a log line.
func quoteList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return strings.Join(q, ", ")
}

// printableName replaces control characters (a newline, an escape) in a
// file name with '?', for the progress line.
func printableName(name string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return '?'
		}
		return r
	}, name)
}
