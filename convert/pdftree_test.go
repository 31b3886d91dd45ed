package convert

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ledongthuc/pdf"
)

// buildPDF writes a PDF of the given objects (numbered from 1) with a
// correct cross-reference table, so the readers find every object by offset.
func buildPDF(objects []string) []byte {
	var b bytes.Buffer
	b.WriteString("%PDF-1.4\n")
	offsets := make([]int, len(objects))
	for i, o := range objects {
		offsets[i] = b.Len()
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", i+1, o)
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(objects)+1)
	for _, off := range offsets {
		fmt.Fprintf(&b, "%010d 00000 n \n", off)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(objects)+1, xref)
	return b.Bytes()
}

func contentStream(text string) string {
	s := "BT /F1 12 Tf 72 720 Td (" + text + ") Tj ET"
	return fmt.Sprintf("<< /Length %d >>\nstream\n%s\nendstream", len(s), s)
}

// loopingPDF (about 700 bytes) is the page tree of issue #18: Pages 2 -> Kids [6],
// 6 -> Kids [2 0 R 3 0 R]; page 3 is reachable and holds text.
func loopingPDF() []byte {
	return buildPDF([]string{
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [6 0 R] /Count 2 >>",
		"<< /Type /Page /Parent 6 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>",
		contentStream("Looping page tree survives"),
		"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
		"<< /Type /Pages /Parent 2 0 R /Kids [2 0 R 3 0 R] /Count 2 >>",
	})
}

// TestLoopingPageTreeDoesNotHang converts the looping PDF of issue #18 with
// the fallback reader alone and with auto (pdfium first, whose start-up
// compiles its module: slow under -race, hence the generous bound).
func TestLoopingPageTreeDoesNotHang(t *testing.T) {
	data := loopingPDF()
	for _, engine := range []string{"ledongthuc", "auto"} {
		t.Run(engine, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			defer cancel()
			doc, err := ConvertBytes(ctx, data, "loop.pdf", Options{PDFEngine: engine, Timeout: 5 * time.Minute})
			if errors.Is(err, ErrTimeout) || ctx.Err() != nil {
				t.Fatalf("conversion did not end on its own: %v", err)
			}
			if err != nil {
				// pdfium may refuse the tree outright; a clear damaged
				// error is acceptable, a hang is not.
				if !errors.Is(err, ErrDamaged) {
					t.Fatalf("err = %v, want success or ErrDamaged", err)
				}
				return
			}
			if !strings.Contains(doc.Markdown, "Looping page tree survives") {
				t.Errorf("text of the reachable page lost:\n%s", doc.Markdown)
			}
		})
	}
}

func TestPDFPagesSkipsLoops(t *testing.T) {
	r := mustReader(t, loopingPDF())
	pages, skipped := pdfPages(context.Background(), r)
	if len(pages) != 1 || skipped == 0 {
		t.Fatalf("pages=%d skipped=%d, want 1 page and the loop skipped", len(pages), skipped)
	}
}

func TestParentLoopPageIsSkipped(t *testing.T) {
	// Page 3's Parent is itself: the reader's resource lookup would spin.
	data := buildPDF([]string{
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 3 0 R /Contents 4 0 R >>",
		contentStream("x"),
	})
	pages, skipped := pdfPages(context.Background(), mustReader(t, data))
	if len(pages) != 0 || skipped != 1 {
		t.Fatalf("pages=%d skipped=%d, want the page with a looping Parent skipped", len(pages), skipped)
	}
}

func TestLoopingOutlineEnds(t *testing.T) {
	// Outline item 4's Next is itself.
	data := buildPDF([]string{
		"<< /Type /Catalog /Pages 2 0 R /Outlines 3 0 R >>",
		"<< /Type /Pages /Kids [] /Count 0 >>",
		"<< /Type /Outlines /First 4 0 R >>",
		"<< /Title (Chapter One) /Next 4 0 R /First 4 0 R >>",
	})
	out := map[string]int{}
	pdfOutline(context.Background(), mustReader(t, data), out)
	if out["chapter one"] != 1 || len(out) != 1 {
		t.Fatalf("outline = %v, want chapter one at depth 1", out)
	}
}

func TestBoundedTimeout(t *testing.T) {
	block := make(chan struct{})
	defer close(block)
	_, err := bounded(context.Background(), Options{Timeout: 50 * time.Millisecond, MaxMemoryBytes: 1 << 30}, "pdf",
		func(context.Context) (Document, error) {
			<-block // a parser that never checks its context
			return Document{}, nil
		})
	if !errors.Is(err, ErrTimeout) || !strings.Contains(err.Error(), "convert.timeout") {
		t.Fatalf("err = %v, want ErrTimeout naming convert.timeout", err)
	}
}

func TestBoundedMemory(t *testing.T) {
	block := make(chan struct{})
	defer close(block)
	_, err := bounded(context.Background(), Options{Timeout: time.Minute, MaxMemoryBytes: 8 << 20}, "epub",
		func(ctx context.Context) (Document, error) {
			var keep [][]byte
			for ctx.Err() == nil {
				keep = append(keep, make([]byte, 1<<20))
				time.Sleep(time.Millisecond)
			}
			return Document{Markdown: fmt.Sprint(len(keep))}, ctx.Err()
		})
	if !errors.Is(err, ErrTooMuchMemory) || !strings.Contains(err.Error(), "convert.max_memory_bytes") {
		t.Fatalf("err = %v, want ErrTooMuchMemory naming convert.max_memory_bytes", err)
	}
}

func TestBoundedPanicIsDamaged(t *testing.T) {
	_, err := bounded(context.Background(), Options{Timeout: time.Minute, MaxMemoryBytes: 1 << 30}, "docx",
		func(context.Context) (Document, error) { panic("boom") })
	if !errors.Is(err, ErrDamaged) {
		t.Fatalf("err = %v, want ErrDamaged", err)
	}
}

func mustReader(t *testing.T, data []byte) *pdf.Reader {
	t.Helper()
	r, err := pdf.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestBoundedCountsPDFiumMemory checks that the memory bound counts the
// PDF engine's linear memory, which lives outside the Go heap: a parse that
// grows it past the bound is stopped like one that grows the heap.
func TestBoundedCountsPDFiumMemory(t *testing.T) {
	e := NewPDFium(PDFiumOptions{Instances: 1})
	defer e.Close()
	_, err := bounded(context.Background(), Options{Timeout: time.Minute, MaxMemoryBytes: 64 << 20, PDFium: e}, "pdf",
		func(ctx context.Context) (Document, error) {
			e.linearBytes.Add(128 << 20) // what a growing pdfium instance commits
			defer e.linearBytes.Add(-128 << 20)
			<-ctx.Done()
			return Document{}, ctx.Err()
		})
	if !errors.Is(err, ErrTooMuchMemory) {
		t.Fatalf("err = %v, want ErrTooMuchMemory", err)
	}
}
