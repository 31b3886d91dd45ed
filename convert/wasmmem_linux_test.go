//go:build linux

package convert

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// TestPDFiumLinearMemoryAccounted checks that the pages pdfium's instances
// commit outside the Go heap are counted while they live (the memory bound
// adds them) and returned when the engine closes.
func TestPDFiumLinearMemoryAccounted(t *testing.T) {
	e := NewPDFium(PDFiumOptions{Instances: 1})
	data, err := os.ReadFile(filepath.Join(corpusDir(t), "pdf", "tracemonkey-2col-en.pdf"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ConvertBytes(context.Background(), data, "tm.pdf", Options{PDFEngine: "pdfium", PDFium: e}); err != nil {
		t.Fatal(err)
	}
	if n := e.offHeapBytes(); n < 1<<20 {
		t.Errorf("%d bytes of linear memory counted after a conversion, want the instance's memory (megabytes)", n)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if n := e.offHeapBytes(); n != 0 {
		t.Errorf("%d bytes still counted after Close, want 0", n)
	}
}
