package convert

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
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
