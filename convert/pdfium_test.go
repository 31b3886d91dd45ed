package convert

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
)

// testPDFium returns a pdfium engine for one test or benchmark, closed when
// it ends.
func testPDFium(t testing.TB) *PDFium {
	t.Helper()
	e := NewPDFium(PDFiumOptions{})
	t.Cleanup(func() {
		if err := e.Close(); err != nil {
			t.Errorf("close pdfium: %v", err)
		}
	})
	return e
}

// TestPDFiumLifecycle checks the engine's contract: nothing starts before
// the first PDF, the pool is bounded, a closed engine refuses work (also in
// auto mode, which would otherwise fall back silently), and closing twice is
// harmless.
func TestPDFiumLifecycle(t *testing.T) {
	ctx := context.Background()
	e := NewPDFium(PDFiumOptions{Instances: 1})
	if _, err := ConvertBytes(ctx, []byte("# Tea\n\nText.\n"), "tea.md", Options{PDFium: e}); err != nil {
		t.Fatal(err)
	}
	e.mu.Lock()
	started := e.pool != nil
	e.mu.Unlock()
	if started {
		t.Fatal("engine started for a Markdown file")
	}

	inst, err := e.instance(ctx)
	if err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	if second, err := e.instance(short); err == nil {
		second.Close()
		t.Fatal("a second instance from a pool of one")
	}
	inst.Close()
	inst, err = e.instance(ctx)
	if err != nil {
		t.Fatalf("instance after the first was returned: %v", err)
	}
	inst.Close()

	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatalf("second close: %v", err)
	}
	data, err := os.ReadFile(filepath.Join(corpusDir(t), "pdf", "pdfjs-issue12823-zh.pdf"))
	if err != nil {
		t.Fatal(err)
	}
	for _, engine := range []string{"auto", "pdfium"} {
		if _, err := ConvertBytes(ctx, data, "a.pdf", Options{PDFEngine: engine, PDFium: e}); !errors.Is(err, errPDFiumClosed) {
			t.Errorf("%s: convert with a closed engine: err = %v, want errPDFiumClosed", engine, err)
		}
	}
	// Without an engine a conversion runs on one of its own.
	doc, err := ConvertBytes(ctx, data, "a.pdf", Options{PDFEngine: "pdfium"})
	if err != nil || !strings.Contains(doc.Markdown, "知识库") {
		t.Errorf("convert without an engine: err %v, text %.60q", err, doc.Markdown)
	}
}

// TestConvertFilesUsesGivenPDFium checks that the runner converts PDFs on
// the engine in RunOptions.Convert (here a closed one, so they fail) and
// otherwise on one of its own.
func TestConvertFilesUsesGivenPDFium(t *testing.T) {
	ctx := context.Background()
	src := filepath.Join(corpusDir(t), "pdf", "pdfjs-issue12823-zh.pdf")
	closed := NewPDFium(PDFiumOptions{})
	closed.Close()
	rep, err := ConvertFiles(ctx, []string{src}, t.TempDir(), RunOptions{Convert: Options{PDFEngine: "pdfium", PDFium: closed}})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Failed != 1 || !errors.Is(rep.Files[0].Err(), errPDFiumClosed) {
		t.Errorf("with a closed engine: %+v, want the PDF to fail with errPDFiumClosed", rep)
	}
	rep, err = ConvertFiles(ctx, []string{src}, t.TempDir(), RunOptions{Convert: Options{PDFEngine: "pdfium"}})
	if err != nil || rep.Converted != 1 {
		t.Errorf("with the run's own engine: %+v, %v", rep, err)
	}
}

// TestPDFiumReusesInstances checks that an engine of one instance converts
// PDF after PDF on that instance (pdfium is instantiated once, not per file
// or per page), that a damaged PDF does not cost it, and that the text is
// the same as on a fresh engine.
func TestPDFiumReusesInstances(t *testing.T) {
	ctx := context.Background()
	e := NewPDFium(PDFiumOptions{Instances: 1})
	defer e.Close()
	dir := filepath.Join(corpusDir(t), "pdf")
	names := []string{"tracemonkey-2col-en.pdf", "zen_of_python_corrupted-damaged.pdf", "pdfjs-issue12823-zh.pdf", "tracemonkey-2col-en.pdf"}
	var first string
	for i, name := range names {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		doc, err := ConvertBytes(ctx, data, name, Options{PDFEngine: "pdfium", PDFium: e})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if i == 0 {
			first = doc.Markdown
		}
		if i == len(names)-1 && doc.Markdown != first {
			t.Errorf("%s converted again on a used instance differs from the first conversion", name)
		}
	}
	if n := e.instantiated.Load(); n != 1 {
		t.Errorf("pdfium instantiated %d times for %d PDFs on a one-instance engine, want 1", n, len(names))
	}
}

// countdownCtx is a context that is cancelled after its Err has been asked
// n times: a deterministic cancellation in the middle of a conversion.
type countdownCtx struct {
	context.Context
	mu   sync.Mutex
	n    int
	done chan struct{}
}

func newCountdownCtx(n int) *countdownCtx {
	return &countdownCtx{Context: context.Background(), n: n, done: make(chan struct{})}
}

func (c *countdownCtx) Done() <-chan struct{} { return c.done }

func (c *countdownCtx) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n <= 0 {
		return context.Canceled
	}
	c.n--
	if c.n == 0 {
		close(c.done)
	}
	return nil
}

// TestPDFiumCancelBetweenPages checks that a conversion whose context is
// cancelled part way through a PDF stops at the next page with the
// context's error, and that the instance it ran on is handed back unharmed:
// the next PDF converts on it without a new instance.
func TestPDFiumCancelBetweenPages(t *testing.T) {
	e := NewPDFium(PDFiumOptions{Instances: 1})
	defer e.Close()
	data, err := os.ReadFile(filepath.Join(corpusDir(t), "pdf", "tracemonkey-2col-en.pdf"))
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Start(); err != nil {
		t.Fatal(err)
	}
	ctx := newCountdownCtx(4) // a few pages in
	doc, err := convertPDFium(ctx, data, Options{PDFium: e})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled conversion: err = %v, want context.Canceled", err)
	}
	if doc.Markdown != "" {
		t.Errorf("cancelled conversion returned text")
	}
	doc, err = convertPDFium(context.Background(), data, Options{PDFium: e})
	if err != nil || !strings.Contains(doc.Markdown, "TraceMonkey") {
		t.Fatalf("conversion after a cancelled one: %v", err)
	}
	if n := e.instantiated.Load(); n != 1 {
		t.Errorf("pdfium instantiated %d times, want 1 (the cancelled conversion's instance reused)", n)
	}
}

// TestNormalizePDFiumSoftHyphen checks that a hyphen pdfium marks as soft at
// a line end (U+0002 from FPDFText_GetUnicode, U+FFFE from FPDFText_GetText)
// joins the word's halves.
func TestNormalizePDFiumSoftHyphen(t *testing.T) {
	for _, in := range []string{"com\u0002\r\npile", "com\ufffe\r\npile", "com\u00ad\npile"} {
		if got := normalizePDFiumText(in); got != "compile" {
			t.Errorf("normalizePDFiumText(%q) = %q, want %q", in, got, "compile")
		}
	}
}

// TestPDFiumReleaseMemory checks that the ReleaseMemory hook runs before the
// engine starts and once it has started, and never again after that.
func TestPDFiumReleaseMemory(t *testing.T) {
	var calls []bool // whether the pool existed at each call
	var e *PDFium
	e = NewPDFium(PDFiumOptions{Instances: 1, ReleaseMemory: func() { calls = append(calls, e.pool != nil) }})
	defer e.Close()
	if err := e.Start(); err != nil {
		t.Fatal(err)
	}
	if err := e.Start(); err != nil {
		t.Fatal(err)
	}
	if _, err := ConvertBytes(context.Background(), []byte("%PDF-1.4 not really\n"), "a.pdf", Options{PDFEngine: "pdfium", PDFium: e}); err == nil {
		t.Error("a damaged PDF converted without an error")
	}
	if len(calls) != 2 || calls[0] || !calls[1] {
		t.Errorf("ReleaseMemory calls (pool started at each) = %v, want [false true]", calls)
	}
}

// TestPDFiumPagesOnTwoInstances checks that reading a PDF's pages on two
// instances (Options.PDFPageInstances 2) gives the same document as reading
// them in order on one, for every corpus PDF, that a second instance is
// borrowed only for a PDF with pages enough, and that both instances are
// handed back.
func TestPDFiumPagesOnTwoInstances(t *testing.T) {
	ctx := context.Background()
	one := NewPDFium(PDFiumOptions{Instances: 1})
	defer one.Close()
	two := NewPDFium(PDFiumOptions{Instances: 2})
	defer two.Close()
	paths, err := filepath.Glob(filepath.Join(corpusDir(t), "pdf", "*.pdf"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no corpus PDFs: %v", err)
	}
	long := 0
	for _, path := range paths {
		name := filepath.Base(path)
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		serial, errSerial := ConvertBytes(ctx, data, name, Options{PDFEngine: "pdfium", PDFium: one, PDFPageInstances: 1})
		parallel, errParallel := ConvertBytes(ctx, data, name, Options{PDFEngine: "pdfium", PDFium: two, PDFPageInstances: 2})
		if fmt.Sprint(errSerial) != fmt.Sprint(errParallel) {
			t.Errorf("%s: error on one instance %v, on two %v", name, errSerial, errParallel)
			continue
		}
		if serial.Markdown != parallel.Markdown || !reflect.DeepEqual(serial.Quality, parallel.Quality) || serial.Title != parallel.Title {
			t.Errorf("%s: the document read on two instances differs from the one read on one (%d and %d bytes of Markdown)", name, len(parallel.Markdown), len(serial.Markdown))
		}
		if serial.Quality.Pages >= minPagesPerInstance {
			long++
		}
	}
	if long == 0 {
		t.Fatalf("no corpus PDF has %d pages or more: nothing read on two instances", minPagesPerInstance)
	}
	if n := two.instantiated.Load(); n != 2 {
		t.Errorf("pdfium instantiated %d times on the engine of two for %d PDFs of %d pages or more, want 2", n, long, minPagesPerInstance)
	}
	// Both instances are back: two conversions can hold one each.
	for i := 0; i < 2; i++ {
		inst, ok := two.tryInstance(ctx)
		if !ok {
			t.Fatalf("instance %d of 2 not handed back", i+1)
		}
		defer inst.Close()
	}
	if _, ok := two.tryInstance(ctx); ok {
		t.Error("a third instance from an engine of two")
	}
}
