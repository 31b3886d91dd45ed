package convert

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// zipBytes builds a zip archive from name/content pairs, in order.
func zipBytes(t *testing.T, entries ...string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for i := 0; i+1 < len(entries); i += 2 {
		w, err := zw.Create(entries[i])
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(entries[i+1])); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func writeFiles(t *testing.T, dir string, files map[string][]byte) {
	t.Helper()
	for name, data := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func byStatus(rep Report) map[string]Status {
	m := map[string]Status{}
	for _, f := range rep.Files {
		m[filepath.Base(f.Source)] = f.Status
	}
	return m
}

const sampleHTML = `<!DOCTYPE html><html><head><title>Mislabelled</title></head><body>
<nav><a href="/">Home</a></nav><article><h1>Real page</h1>
<p>This web page was saved with the wrong extension, but its bytes say HTML and the converter trusts the bytes.</p>
<h2>Second part</h2><p>More text so that the readability extraction keeps this article body intact.</p></article></body></html>`

func TestConvertThemeBadInputAndIncremental(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	src := filepath.Join(root, "source")
	out := filepath.Join(root, "converted")

	bomb := zipBytes(t, "mimetype", "application/epub+zip",
		"META-INF/container.xml", `<?xml version="1.0"?><container><rootfiles><rootfile full-path="content.opf"/></rootfiles></container>`,
		"content.opf", `<package><manifest><item id="c" href="c.xhtml" media-type="application/xhtml+xml"/></manifest><spine><itemref idref="c"/></spine></package>`,
		"c.xhtml", strings.Repeat("\x00", 4<<20))
	goodDocx := zipBytes(t, "[Content_Types].xml", `<Types/>`,
		"word/document.xml", `<?xml version="1.0"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body><w:p><w:r><w:t>Plain paragraph of a small Word file.</w:t></w:r></w:p></w:body></w:document>`)
	writeFiles(t, src, map[string][]byte{
		"guide.txt":          []byte("第一章 总论\n\n天地之道，阴阳而已。\n\n第二章 五行\n\n木火土金水，相生相克。\n"),
		"notes.md":           []byte("# Notes\n\nSome notes.\n\n## Detail\n\nMore.\n"),
		"page.pdf":           []byte(sampleHTML), // mislabelled: really HTML
		"empty.txt":          {},
		"blob.dat":           {0x00, 0x01, 0x02, 0x7f, 0x00, 0xff, 0x10, 0x00},
		"bomb.epub":          bomb,
		"truncated.docx":     goodDocx[:len(goodDocx)/2],
		"big.txt":            []byte(strings.Repeat("a long line of text\n", 400)),
		LockFileName:         []byte(`{"sources":[]}`),
		".hidden.txt":        []byte("not a source"),
		"sub/nested.md":      []byte("# Nested\n\nInside a folder.\n"),
		"dup/guide.md":       []byte("# Guide twin\n\nSame stem as guide.txt.\n"),
		"dup/unused/.keep":   []byte(""),
		"docs/good.docx":     goodDocx,
		"docs/stale-not.txt": []byte("kept"),
	})
	opts := RunOptions{Convert: Options{MaxFileBytes: 6000, MaxUnpackedBytes: 1 << 20}, Workers: 3}
	var errs []string
	opts.OnError = func(path string, err error) error {
		errs = append(errs, filepath.Base(path))
		return nil
	}
	rep, err := ConvertTheme(ctx, src, out, opts)
	if err != nil {
		t.Fatalf("ConvertTheme: %v", err)
	}
	got := byStatus(rep)
	want := map[string]Status{
		"guide.txt": StatusConverted, "notes.md": StatusConverted, "page.pdf": StatusConverted,
		"nested.md": StatusConverted, "guide.md": StatusConverted, "good.docx": StatusConverted,
		"stale-not.txt": StatusConverted,
		"empty.txt":     StatusFailed, "blob.dat": StatusFailed, "bomb.epub": StatusFailed,
		"truncated.docx": StatusFailed, "big.txt": StatusFailed,
	}
	for name, st := range want {
		if got[name] != st {
			t.Errorf("%s: status %q, want %q", name, got[name], st)
		}
	}
	if len(got) != len(want) {
		t.Errorf("results for %v, want exactly %d files (lock file and dot files skipped)", got, len(want))
	}
	sort.Strings(errs)
	if wantErrs := []string{"big.txt", "blob.dat", "bomb.epub", "empty.txt", "truncated.docx"}; strings.Join(errs, ",") != strings.Join(wantErrs, ",") {
		t.Errorf("OnError called for %v, want %v", errs, wantErrs)
	}
	if rep.Converted != 7 || rep.Failed != 5 || rep.Unchanged != 0 {
		t.Errorf("counts converted=%d failed=%d unchanged=%d, want 7/5/0", rep.Converted, rep.Failed, rep.Unchanged)
	}

	// Each failure names the file and wraps the right sentinel.
	sentinels := map[string]error{"empty.txt": ErrEmpty, "blob.dat": ErrUnsupportedFormat, "bomb.epub": ErrZipBomb, "big.txt": ErrTooLarge, "truncated.docx": ErrDamaged}
	for _, f := range rep.Files {
		base := filepath.Base(f.Source)
		if s, ok := sentinels[base]; ok {
			if !errors.Is(f.Err(), s) {
				t.Errorf("%s: error %v, want %v", base, f.Err(), s)
			}
			if !strings.Contains(f.Error, base) {
				t.Errorf("%s: error %q does not name the file", base, f.Error)
			}
		}
	}

	// Same stem, different extension: disambiguated by extension.
	for _, name := range []string{"guide-txt.md", "guide-md.md", "page.md", "notes.md", "nested.md", "good.md"} {
		if _, err := os.Stat(filepath.Join(out, name)); err != nil {
			t.Errorf("expected converted file %s: %v", name, err)
		}
	}
	doc, _, err := ReadFile(filepath.Join(out, "page.md"))
	if err != nil {
		t.Fatal(err)
	}
	if doc.Format != FormatHTML || !strings.Contains(doc.Markdown, "Real page") {
		t.Errorf("mislabelled page.pdf: format %q, body %q; want html with its text", doc.Format, doc.Markdown)
	}
	guide, _, err := ReadFile(filepath.Join(out, "guide-txt.md"))
	if err != nil {
		t.Fatal(err)
	}
	if guide.Converter != Version || len(guide.SHA256) != 64 || !strings.Contains(guide.Markdown, "第一章") {
		t.Errorf("guide front matter %+v body %q", guide, guide.Markdown)
	}

	// Second run: nothing changed, nothing converted.
	errs = nil
	rep2, err := ConvertTheme(ctx, src, out, opts)
	if err != nil {
		t.Fatal(err)
	}
	if rep2.Converted != 0 || rep2.Unchanged != 7 || rep2.Failed != 5 {
		t.Errorf("rerun converted=%d unchanged=%d failed=%d, want 0/7/5", rep2.Converted, rep2.Unchanged, rep2.Failed)
	}

	// A source turned to garbage keeps its good converted file; a deleted
	// source loses its converted file; an edited source is converted again.
	goodPath := filepath.Join(out, "good.md")
	before, _ := os.ReadFile(goodPath)
	writeFiles(t, src, map[string][]byte{
		"docs/good.docx": goodDocx[:40],
		"notes.md":       []byte("# Notes\n\nEdited notes.\n"),
	})
	if err := os.Remove(filepath.Join(src, "sub", "nested.md")); err != nil {
		t.Fatal(err)
	}
	// A hand-written note without front matter is not a converted file.
	writeFiles(t, out, map[string][]byte{"my-notes.md": []byte("# Mine\n")})
	rep3, err := ConvertTheme(ctx, src, out, opts)
	if err != nil {
		t.Fatal(err)
	}
	st3 := byStatus(rep3)
	if st3["good.docx"] != StatusFailed || st3["notes.md"] != StatusConverted || st3["nested.md"] != StatusRemoved {
		t.Errorf("third run statuses %v", st3)
	}
	if rep3.Removed != 1 {
		t.Errorf("removed %d, want 1", rep3.Removed)
	}
	after, _ := os.ReadFile(goodPath)
	if !bytes.Equal(before, after) {
		t.Errorf("good.md was overwritten after its source broke")
	}
	if _, err := os.Stat(filepath.Join(out, "nested.md")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("nested.md still present after its source was removed: %v", err)
	}
	if _, err := os.Stat(filepath.Join(out, "my-notes.md")); err != nil {
		t.Errorf("hand-written my-notes.md was removed: %v", err)
	}
	entries, _ := os.ReadDir(out)
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Errorf("temporary file left behind: %s", e.Name())
		}
	}
}

func TestConvertThemeOnErrorAborts(t *testing.T) {
	root := t.TempDir()
	src := filepath.Join(root, "source")
	writeFiles(t, src, map[string][]byte{"a.txt": {}, "b.txt": {}, "c.txt": {}})
	stop := errors.New("stop")
	calls := 0
	_, err := ConvertTheme(context.Background(), src, filepath.Join(root, "out"), RunOptions{
		Workers: 1,
		OnError: func(string, error) error { calls++; return stop },
	})
	if !errors.Is(err, stop) {
		t.Fatalf("err = %v, want the OnError result", err)
	}
	if calls != 1 {
		t.Errorf("OnError called %d times, want 1 (the run stops)", calls)
	}
}

func TestPlanOutputs(t *testing.T) {
	tests := []struct {
		name string
		srcs []string
		want []string
	}{
		{"unique stems", []string{"a/book.pdf", "b/notes.txt"}, []string{"book.md", "notes.md"}},
		{"shared stem", []string{"book.epub", "book.pdf"}, []string{"book-epub.md", "book-pdf.md"}},
		{"same name in two dirs", []string{"x/book.pdf", "y/book.pdf"}, []string{"book-pdf.md", "book-pdf-2.md"}},
		{"no extension", []string{"README"}, []string{"README.md"}},
		{"dot name kept", []string{"v1.2 notes.txt"}, []string{"v1.2 notes.md"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			jobs := planOutputs(tt.srcs, "out")
			var got []string
			for _, j := range jobs {
				got = append(got, filepath.Base(j.out))
			}
			if strings.Join(got, "|") != strings.Join(tt.want, "|") {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestConvertFilesStandalone(t *testing.T) {
	root := t.TempDir()
	in := filepath.Join(root, "in")
	writeFiles(t, in, map[string][]byte{
		"one.txt":     []byte("CHAPTER ONE\n\nIt begins here.\n"),
		"two.md":      []byte("# Two\n\nSecond.\n"),
		"single.html": []byte(sampleHTML),
	})
	outDir := filepath.Join(root, "out")
	// A directory and a file inside it: the file is converted once.
	rep, err := ConvertFiles(context.Background(), []string{in, filepath.Join(in, "one.txt")}, outDir, RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Converted != 3 || rep.Failed != 0 || len(rep.Files) != 3 {
		t.Fatalf("report %+v, want 3 converted", rep)
	}
	for _, n := range []string{"one.md", "two.md", "single.md"} {
		if _, err := os.Stat(filepath.Join(outDir, n)); err != nil {
			t.Errorf("missing %s: %v", n, err)
		}
	}
	if _, err := ConvertFiles(context.Background(), []string{filepath.Join(root, "missing.pdf")}, outDir, RunOptions{}); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing input: err = %v, want not-exist", err)
	}
}
