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
//
// An HTML page's source is its text as a browser shows it, and what the
// conversion leaves out of it (navigation, the reader's judgement of what is
// no article, heading controls) is set aside by name. The converted figure
// counts the text a reader sees, without Markdown's marks: 陶渊明集's notes
// are links around images, and it read "source 2,634 -> converted 5,393".
// What conversion writes that the source does not hold (a chapter title
// from an EPUB's navigation, a figure's description) is named as added.
func TestSourceCharsAddUp(t *testing.T) {
	dir := testcorpus.Dir(t)
	for _, name := range []string{"epub/moby-dick.epub", "epub/kusamakura-japanese-vertical-writing.epub", "epub/tao-yuanming-poems-zh.epub", "epub/childrens-literature.epub",
		"docx/doj-chapter13-trustee-handbook-en.docx", "docx/docling-word_sample-en.docx", "pdf/federal-register-2020-17221-3col-en.pdf", "pdf/tracemonkey-2col-en.pdf",
		"html/readability-gmw.html", "html/readability-ietf-1.html", "html/readability-qq.html", "html/readability-wikipedia.html", "html/readability-wikipedia-3.html",
		"txt/zhougong-jiemeng.utf8.md", "txt/sanguoyanyi.gbk.txt"} {
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
		added := 0
		for _, a := range q.Added {
			added += a.Chars
		}
		// Source less what was set aside plus what was added is the
		// converted text, give or take 2% (a Word table's empty header
		// cell, a PDF's hyphen joined).
		want := q.SourceChars - aside + added
		if d := q.TextChars - want; q.SourceChars == 0 || d > max(20, q.SourceChars/50) || -d > max(20, q.SourceChars/50) {
			t.Errorf("%s: source %d characters - set aside %d + added %d = %d, converted %d: they should add up", name, q.SourceChars, aside, added, want, q.TextChars)
		}
	}
}
