package convert

import (
	"bytes"
	"context"
	"errors"
	"github.com/vibelife/vibe/internal/testcorpus"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/vibelife/vibe/internal/racetest"
	"github.com/vibelife/vibe/internal/textmetric"
)

// corpusDir returns ../shared/corpus relative to the repository root.
func corpusDir(t testing.TB) string {
	return testcorpus.Dir(t)
}

// reference runs a reference converter; missing tools fail under CI.
func reference(t *testing.T, name string, args ...string) string {
	t.Helper()
	if _, err := exec.LookPath(name); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is not installed (scripts/test-deps.sh installs it)", name)
		}
		t.Skipf("%s not installed; run make test-deps", name)
	}
	out, err := exec.Command(name, args...).Output()
	if err != nil {
		t.Fatalf("%s %v: %v", name, args, err)
	}
	return string(out)
}

var reListMarker = regexp.MustCompile(`(?m)^\s*(?:\d+\.|[a-zA-Z]\.|[-*•])[ \t]+`)

var reMarkdownSyntax = regexp.MustCompile(`(?m)^#{1,6} |\*\*|__|\[|\]\([^)]*\)|^\s*[-*] |^\s*\d+\. |\|`)

func TestFidelityAgainstReferenceTools(t *testing.T) {
	racetest.SequentialOnly(t)
	corpus := corpusDir(t)
	type tc struct {
		file    string
		ref     func(path string) string
		raw     func(path string) string // the reference before the cleaning ref applies, when it applies one
		minF1   float64
		garbled bool
	}
	// List markers are stripped from our Markdown (reMarkdownSyntax), so strip
	// pandoc's too: its "1.  2.  3." numbering is not text of the document.
	// Passages the document repeats word for word are left out of our text
	// (DropRepeatedPassages), so they are left out of pandoc's as well, and
	// the raw score is logged.
	pandocRaw := func(p string) string {
		return reListMarker.ReplaceAllString(reference(t, "pandoc", "-t", "plain", "--wrap=none", p), "")
	}
	pandoc := func(p string) string {
		text, _ := DropRepeatedPassages(pandocRaw(p))
		return text
	}
	var cases []tc
	// PDFs are measured by TestPDFFidelity (fidelity_pdf_test.go), every file of corpus/pdf.
	for _, f := range []string{
		"docx/docling-word_tables-en.docx", "docx/docling-word_sample-en.docx",
		"docx/docling-unit_test_headers_numbered-en.docx", "docx/doj-chapter13-trustee-handbook-en.docx",
		"epub/wasteland.epub", "epub/childrens-literature.epub", "epub/moby-dick.epub",
		"epub/kusamakura-japanese-vertical-writing.epub", "epub/tao-yuanming-poems-zh.epub",
	} {
		cases = append(cases, tc{file: f, ref: pandoc, raw: pandocRaw, minF1: 0.97})
	}
	// Readability's expected output keeps MediaWiki's "[edit]" links in the
	// headings; we drop them (RemoveHeadingChrome), so the reference drops
	// them too and the raw score is logged.
	for _, page := range []string{"wikipedia", "wikipedia-3", "ietf-1", "gmw", "qq"} {
		page := page
		expected := filepath.Join(corpus, "html-expected", "readability-"+page+".expected.html")
		cases = append(cases, tc{
			file:  "html/readability-" + page + ".html",
			ref:   func(string) string { return htmlText(t, expected, RemoveHeadingChrome) },
			raw:   func(string) string { return htmlText(t, expected) },
			minF1: 0.90,
		})
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			path := filepath.Join(corpus, c.file)
			doc, err := Convert(context.Background(), path, Options{})
			if err != nil {
				t.Fatalf("convert: %v", err)
			}
			if c.garbled {
				if !doc.Quality.Garbled {
					t.Fatalf("mojibake passed as readable: quality %+v", doc.Quality)
				}
				return
			}
			if doc.Quality.Garbled {
				t.Errorf("readable text flagged garbled: %+v", doc.Quality)
			}
			want := c.ref(path)
			got := reMarkdownSyntax.ReplaceAllString(doc.Markdown, " ")
			f1, p, r := textmetric.F1(got, want)
			t.Logf("F1 %.4f (precision %.4f, recall %.4f), %d headings", f1, p, r, doc.Quality.Headings)
			if c.raw != nil {
				raw, _, _ := textmetric.F1(got, c.raw(path))
				t.Logf("F1 %.4f against the uncleaned reference", raw)
			}
			if f1 < c.minF1 {
				t.Errorf("token F1 %.4f < %.2f against the reference", f1, c.minF1)
			}
		})
	}
}

// htmlText is the text content of an HTML file, after the given cleaners.
func htmlText(t *testing.T, path string, clean ...func(*html.Node)) string {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	root, err := html.Parse(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range clean {
		c(root)
	}
	return textOf(root)
}

func TestBrokenCorpusFilesGetOneClearError(t *testing.T) {
	corpus := corpusDir(t)
	opts := Options{PDFium: testPDFium(t)}
	tests := []struct {
		file string
		want error
	}{
		{"pdf/libreoffice-writer-password-encrypted.pdf", ErrEncrypted},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			_, err := Convert(context.Background(), filepath.Join(corpus, tt.file), opts)
			if !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
			if strings.Count(err.Error(), "\n") > 0 || !strings.Contains(err.Error(), filepath.Base(tt.file)) {
				t.Fatalf("error should be one line naming the file: %q", err)
			}
		})
	}
	// The damaged PDF must not panic: it yields partial text or a clear error.
	doc, err := Convert(context.Background(), filepath.Join(corpus, "pdf/zen_of_python_corrupted-damaged.pdf"), opts)
	if err == nil && strings.TrimSpace(doc.Markdown) == "" {
		t.Fatal("no error and no text for the damaged PDF")
	}
	if err != nil && !errors.Is(err, ErrDamaged) && !errors.Is(err, ErrNoText) {
		t.Fatalf("damaged PDF: unexpected error %v", err)
	}
}

func TestEncodingsAndChapterHeadings(t *testing.T) {
	racetest.SequentialOnly(t)
	corpus := corpusDir(t)
	tests := []struct {
		file, encoding, heading string
	}{
		{"txt/sanguoyanyi.gbk.txt", "gb18030", "第一回"},
		{"txt/hongloumeng.gb18030.txt", "gb18030", "第一回"},
		{"txt/xiyouji.utf8-bom.txt", "utf-8-bom", "第一回"},
		{"bazi/子平真诠.md", "utf-8", "论用神"},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			doc, err := Convert(context.Background(), filepath.Join(corpus, tt.file), Options{})
			if err != nil {
				t.Fatal(err)
			}
			if doc.Quality.Encoding != tt.encoding {
				t.Errorf("encoding = %s, want %s", doc.Quality.Encoding, tt.encoding)
			}
			if doc.Quality.Garbled {
				t.Errorf("decoded text judged garbled: %+v", doc.Quality)
			}
			found := false
			for _, l := range strings.Split(doc.Markdown, "\n") {
				if isMarkdownHeading(l) && strings.Contains(l, tt.heading) {
					found = true
					break
				}
			}
			if !found {
				t.Errorf("no heading containing %q; %d headings", tt.heading, doc.Quality.Headings)
			}
		})
	}
}

func TestVolumeLinesRepeatingTheTitleSitAboveChapters(t *testing.T) {
	md := structureText([]string{"三命通会卷之一\n\n一、论五行生成\n\n天地之初。\n\n三命通会卷之二\n\n二、论五行生克\n\n五行相生。\n"})
	for _, want := range []string{"# 三命通会卷之一\n", "## 一、论五行生成\n", "# 三命通会卷之二\n", "## 二、论五行生克\n"} {
		if !strings.Contains(md, want) {
			t.Errorf("missing %q in:\n%s", want, md)
		}
	}
}

// TestWikipediaHeadingsWithoutEditLinks converts the saved Wikipedia pages:
// their section headings must read as the section names, without MediaWiki's
// "[edit](…)" links.
func TestWikipediaHeadingsWithoutEditLinks(t *testing.T) {
	corpus := corpusDir(t)
	for _, tt := range []struct {
		file string
		want []string
	}{
		{"html/readability-wikipedia.html", []string{"## History", "### Eich CEO promotion controversy", "#### SpiderMonkey"}},
		{"html/readability-wikipedia-3.html", []string{"## Alternative characterizations", "### Spectral properties", "## Rayleigh quotient"}},
	} {
		t.Run(tt.file, func(t *testing.T) {
			doc, err := Convert(context.Background(), filepath.Join(corpus, tt.file), Options{})
			if err != nil {
				t.Fatal(err)
			}
			headings := map[string]bool{}
			for _, l := range strings.Split(doc.Markdown, "\n") {
				if !isMarkdownHeading(l) {
					continue
				}
				headings[l] = true
				if strings.Contains(l, "edit") || strings.Contains(l, "](") || strings.HasSuffix(l, "#") {
					t.Errorf("heading keeps chrome: %q", l)
				}
			}
			for _, w := range tt.want {
				if !headings[w] {
					t.Errorf("no heading %q", w)
				}
			}
		})
	}
}
