package convert_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/vibelife/vibe/convert"
	"github.com/vibelife/vibe/internal/testcorpus"
)

// An EPUB's, a Word document's and a PDF's accounting starts from the
// characters of their text as read (the spine documents' bodies, the
// document's text runs, the pages' text layer), no longer from nothing: the
// converted text plus what was set aside adds up to it. The DOJ handbook
// holds most of its text twice, so three quarters of it are set aside as
// repeats; a Federal Register issue's printer's line on every page
// ("VerDate Sep<11>2014 … Jkt 250001 PO 00000 Frm 00001") is set aside as
// running feet, no longer dropped unsaid; Moby-Dick loses nothing.
func TestSourceCharsAddUp(t *testing.T) {
	dir := testcorpus.Dir(t)
	for _, name := range []string{"epub/moby-dick.epub", "epub/kusamakura-japanese-vertical-writing.epub", "docx/doj-chapter13-trustee-handbook-en.docx", "docx/docling-word_sample-en.docx", "pdf/federal-register-2020-17221-3col-en.pdf", "pdf/tracemonkey-2col-en.pdf"} {
		b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(name)))
		if err != nil {
			t.Fatal(err)
		}
		doc, err := convert.ConvertBytes(context.Background(), b, filepath.Base(name), convert.Options{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		q := doc.Quality
		aside := 0
		for _, a := range q.SetAside {
			aside += a.Chars
		}
		// The converted text also holds Markdown's marks (#, links, table
		// bars), so it may exceed the source's by a little.
		if q.SourceChars == 0 || float64(q.TextChars+aside) < 0.97*float64(q.SourceChars) || float64(q.TextChars+aside) > 1.3*float64(q.SourceChars) {
			t.Errorf("%s: source %d characters, converted %d + set aside %d: they should add up", name, q.SourceChars, q.TextChars, aside)
		}
	}
}
