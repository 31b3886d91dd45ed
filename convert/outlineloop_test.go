package convert

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/klippa-app/go-pdfium/requests"
)

// loopingOutlinePDF is issue 26's kind of file (under 1 KB): a sound page,
// and an outline whose items loop through /Next (Two -> One -> Two ...)
// and through /First (Two's first child is One).
func loopingOutlinePDF() []byte {
	body := "Chapter One) Tj 0 -20 Td (The first chapter has a few plain words on it"
	return buildPDF([]string{
		"<< /Type /Catalog /Pages 2 0 R /Outlines 6 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>",
		contentStream(body),
		"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
		"<< /Type /Outlines /First 7 0 R /Last 8 0 R /Count 2 >>",
		"<< /Title (Chapter One) /Parent 6 0 R /Next 8 0 R /Dest [3 0 R /Fit] >>",
		"<< /Title (Chapter Two) /Parent 6 0 R /Prev 7 0 R /Next 7 0 R /First 7 0 R /Last 7 0 R /Count 1 /Dest [3 0 R /Fit] >>",
	})
}

// TestLoopingOutlineWithPDFium is the regression test of issue 26's looping
// outline: go-pdfium's GetBookmarks followed it for the whole time bound
// (2 minutes, 1 GB) and the file was dropped as "took too long" though its
// page was fine. Both engines now end the walk, well inside a bound that is
// only there so a regression fails instead of hanging, and keep the page.
func TestLoopingOutlineWithPDFium(t *testing.T) {
	data := loopingOutlinePDF()
	if len(data) > 1200 {
		t.Fatalf("the crafted file is %d bytes", len(data))
	}
	for _, engine := range []string{"pdfium", "ledongthuc"} {
		t.Run(engine, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			doc, err := ConvertBytes(ctx, data, "loop-outline.pdf", Options{PDFEngine: engine, Timeout: 4 * time.Minute, MaxMemoryBytes: 1 << 30})
			if errors.Is(err, ErrTimeout) || errors.Is(err, ErrTooMuchMemory) || ctx.Err() != nil {
				t.Fatalf("the outline walk did not end: %v", err)
			}
			if err != nil {
				t.Fatalf("err = %v", err)
			}
			if !strings.Contains(doc.Markdown, "plain words") {
				t.Errorf("the page's text is lost:\n%s", doc.Markdown)
			}
		})
	}
}

// TestPDFiumOutlineStopsAtARepeat walks the looping outline with pdfium's
// bookmark calls: each title once, at the depth it is first met.
func TestPDFiumOutlineStopsAtARepeat(t *testing.T) {
	engine := NewPDFium(PDFiumOptions{Instances: 1})
	defer engine.Close()
	inst, err := engine.instance(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer inst.Close()
	data := loopingOutlinePDF()
	opened, err := inst.OpenDocument(&requests.OpenDocument{File: &data})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	pdfiumOutline(context.Background(), inst, opened.Document, out)
	if len(out) != 2 || out["chapter one"] != 1 || out["chapter two"] != 1 {
		t.Fatalf("outline = %v, want chapter one and chapter two at depth 1", out)
	}
}
