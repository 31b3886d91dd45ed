package convert

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vibelife/vibe/internal/racetest"
)

// TestTruncatedPDFRecoversPages is issue #18: a PDF cut at 50% was rejected
// whole. The pages that survive are converted, the document flagged partial.
func TestTruncatedPDFRecoversPages(t *testing.T) {
	// Half a PDF through both engines in one goroutine: 45 s under -race
	// at load 30.
	racetest.SequentialOnly(t)
	data, err := os.ReadFile(filepath.Join(corpusDir(t), "pdf", "tracemonkey-2col-en.pdf"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "half.pdf")
	if err := os.WriteFile(path, data[:len(data)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	for _, engine := range []string{"auto", "ledongthuc"} {
		t.Run(engine, func(t *testing.T) {
			doc, err := Convert(context.Background(), path, Options{PDFEngine: engine})
			if err != nil {
				t.Fatalf("half a PDF rejected whole: %v", err)
			}
			if !doc.Quality.Partial || !hasWarning(doc, "partial:") {
				t.Errorf("not flagged partial: %+v", doc.Quality)
			}
			if doc.Quality.Pages < 5 || doc.Quality.Pages >= 14 {
				t.Errorf("%d pages recovered, want some but not all 14", doc.Quality.Pages)
			}
			if !strings.Contains(doc.Markdown, "Andreas Gal") {
				t.Errorf("first page (its author line) not recovered:\n%.500s", doc.Markdown)
			}
		})
	}
}

func TestRebuildPDFNeedsAPage(t *testing.T) {
	if _, _, ok := rebuildPDF([]byte("%PDF-1.4\n1 0 obj\n<< /Type /Catalog >>\nendobj\n")); ok {
		t.Error("rebuilt a PDF without any page")
	}
	if _, _, ok := rebuildPDF([]byte("not a pdf 1 0 obj << /Type /Page >> endobj")); ok {
		t.Error("rebuilt bytes that are no PDF")
	}
	full := loopingPDF()
	out, pages, ok := rebuildPDF(full[:len(full)-40]) // trailer cut off
	if !ok || pages != 1 {
		t.Fatalf("rebuild of a PDF without trailer: ok=%v pages=%d", ok, pages)
	}
	r := mustReader(t, out)
	if got, _ := pdfPages(context.Background(), r); len(got) != 1 {
		t.Errorf("rebuilt PDF has %d readable pages, want 1", len(got))
	}
}
