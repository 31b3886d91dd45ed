package chunk

import (
	"context"
	"github.com/vibelife/vibe/internal/testcorpus"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/vibelife/vibe/convert"
	"github.com/vibelife/vibe/internal/racetest"
)

func newSplitter(t testing.TB, opts Options) *Splitter {
	t.Helper()
	s, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func render(t testing.TB, body string) []byte {
	t.Helper()
	data, err := convert.Render(convert.Document{Source: "knowledge/t/source/x.md", Title: "X", Format: "md", Markdown: body})
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// checkInvariants asserts what every chunk of every document must satisfy.
func checkInvariants(t *testing.T, s *Splitter, data []byte, chunks []Chunk) {
	t.Helper()
	runes := []rune(string(data))
	ids := map[string]bool{}
	for i, c := range chunks {
		if c.Start < 0 || c.End > len(runes) || c.Start >= c.End {
			t.Fatalf("chunk %d: bad span [%d,%d) of %d runes", i, c.Start, c.End, len(runes))
		}
		if got := string(runes[c.Start:c.End]); got != c.Text {
			t.Fatalf("chunk %d: file[Start:End] = %q, Text = %q", i, got, c.Text)
		}
		if c.Tokens > s.opts.MaxTokens {
			t.Errorf("chunk %d: %d tokens over budget %d", i, c.Tokens, s.opts.MaxTokens)
		}
		if c.Tokens != s.Count(c.Text) {
			t.Errorf("chunk %d: Tokens %d, counted %d", i, c.Tokens, s.Count(c.Text))
		}
		if c.Ordinal != i {
			t.Errorf("chunk %d: ordinal %d", i, c.Ordinal)
		}
		if !regexp.MustCompile(`^c_[0-9a-f]{16}$`).MatchString(c.ID) || ids[c.ID] {
			t.Errorf("chunk %d: bad or duplicate id %q", i, c.ID)
		}
		ids[c.ID] = true
	}
}

func TestSplitStructure(t *testing.T) {
	body := "# 子平真诠\n\n序文一句。\n\n## 论用神\n\n八字用神，专求月令。以日干配月令地支，而生克不同，格局分焉。\n\n## 论伤官\n\n伤官虽非吉神，实为秀气。\n\n### 伤官见官\n\n伤官见官，为祸百端。\n\n```\n# not a heading\n```\n"
	s := newSplitter(t, Options{MaxTokens: 200})
	data := render(t, body)
	chunks, err := s.SplitFile(context.Background(), "knowledge/t/converted/x.md", data)
	if err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, s, data, chunks)
	want := []struct {
		path   string
		prefix string
	}{
		{"子平真诠", "# 子平真诠"},
		{"子平真诠>论用神", "## 论用神"},
		{"子平真诠>论伤官", "## 论伤官"},
		{"子平真诠>论伤官>伤官见官", "### 伤官见官"},
	}
	if len(chunks) != len(want) {
		for _, c := range chunks {
			t.Logf("%v %q", c.HeadingPath, c.Text)
		}
		t.Fatalf("got %d chunks, want %d", len(chunks), len(want))
	}
	for i, w := range want {
		c := chunks[i]
		if got := strings.Join(c.HeadingPath, ">"); got != w.path {
			t.Errorf("chunk %d: path %q, want %q", i, got, w.path)
		}
		if !strings.HasPrefix(c.Text, w.prefix) {
			t.Errorf("chunk %d: text %q does not start with %q", i, c.Text, w.prefix)
		}
		if c.Source != "knowledge/t/source/x.md" || c.Title != "X" || c.Doc != "knowledge/t/converted/x.md" {
			t.Errorf("chunk %d: metadata %q %q %q", i, c.Source, c.Title, c.Doc)
		}
	}
	if !strings.Contains(chunks[3].Text, "# not a heading") {
		t.Errorf("fenced code lost from its section: %q", chunks[3].Text)
	}
	// Stable ids across runs (and a fresh splitter).
	again, err := newSplitter(t, Options{MaxTokens: 200}).SplitFile(context.Background(), "knowledge/t/converted/x.md", data)
	if err != nil {
		t.Fatal(err)
	}
	for i := range chunks {
		if chunks[i].ID != again[i].ID {
			t.Errorf("chunk %d: id %s then %s", i, chunks[i].ID, again[i].ID)
		}
	}
}

func TestSplitBudgetAndOverlap(t *testing.T) {
	var b strings.Builder
	b.WriteString("# 长节\n\n")
	for i := 0; i < 60; i++ {
		b.WriteString("甲木参天，脱胎要火。春不容金，秋不容土。Sentence number one is here! ")
	}
	body := b.String()
	tests := []struct {
		name    string
		opts    Options
		overlap bool
	}{
		{"no overlap cl100k", Options{MaxTokens: 64}, false},
		{"overlap cl100k", Options{MaxTokens: 64, Overlap: 16}, true},
		{"overlap o200k", Options{MaxTokens: 48, Overlap: 12, Encoding: EncodingO200K}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newSplitter(t, tt.opts)
			data := render(t, body)
			chunks, err := s.SplitFile(context.Background(), "d.md", data)
			if err != nil {
				t.Fatal(err)
			}
			if len(chunks) < 5 {
				t.Fatalf("only %d chunks", len(chunks))
			}
			checkInvariants(t, s, data, chunks)
			overlapped := 0
			for i := 1; i < len(chunks); i++ {
				if chunks[i].Start < chunks[i-1].End {
					overlapped++
				}
				if chunks[i].Start > chunks[i-1].End {
					gap := string([]rune(string(data))[chunks[i-1].End:chunks[i].Start])
					if strings.TrimSpace(gap) != "" {
						t.Fatalf("text lost between chunks %d and %d: %q", i-1, i, gap)
					}
				}
				// Chunks start at a sentence start.
				first := []rune(chunks[i].Text)[0]
				if first != '甲' && first != '春' && first != 'S' {
					t.Errorf("chunk %d starts mid-sentence: %q", i, chunks[i].Text)
				}
			}
			if tt.overlap && overlapped == 0 {
				t.Error("overlap requested, none produced")
			}
			if !tt.overlap && overlapped != 0 {
				t.Errorf("%d overlapping chunks without overlap", overlapped)
			}
		})
	}
}

func TestSplitBadInput(t *testing.T) {
	racetest.SequentialOnly(t) // 300,000 characters through tiktoken in one goroutine
	tests := []struct {
		name   string
		body   string
		chunks int // -1: at least one
	}{
		{"empty", "", 0},
		{"only headings", "# a\n\n## b\n", 0},
		{"gigantic line", strings.Repeat("用神专寻月令以四柱配之必有成败", 20000), -1},
		{"gigantic latin word", strings.Repeat("abcdefghij", 20000), -1},
		{"binary junk", "# junk\n\x00\x01\x02\xff\xfe text \x00 more。" + strings.Repeat("\x07\x00", 3000), -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newSplitter(t, Options{MaxTokens: 128, Overlap: 16})
			data := render(t, tt.body)
			chunks, err := s.SplitFile(context.Background(), "d.md", data)
			if err != nil {
				t.Fatal(err)
			}
			checkInvariants(t, s, data, chunks)
			if tt.chunks >= 0 && len(chunks) != tt.chunks {
				t.Fatalf("got %d chunks, want %d", len(chunks), tt.chunks)
			}
			if tt.chunks < 0 && len(chunks) == 0 {
				t.Fatal("no chunks")
			}
		})
	}
	if _, err := newSplitter(t, Options{}).SplitFile(context.Background(), "d.md", []byte("no front matter")); err == nil {
		t.Error("file without front matter: no error")
	}
	if _, err := New(Options{Encoding: "p50k"}); err == nil {
		t.Error("unknown encoding accepted")
	}
}

// corpusDir finds ../shared/corpus relative to the repository root.
func corpusDir(t testing.TB) string {
	return testcorpus.Dir(t)
}

var chapterLine = regexp.MustCompile(`(?m)^([一二三四五六七八九十百]+[、．.].{1,30})$`)

// CorpusConverted turns a corpus text into a converted file, promoting
// numbered chapter lines ("八、论用神") to headings under the book title.
func corpusConverted(t testing.TB, path string) []byte {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	title := strings.TrimSuffix(filepath.Base(path), ".md")
	body := "# " + title + "\n\n" + chapterLine.ReplaceAllString(string(raw), "## $1")
	return render(t, body)
}

func TestSplitCorpus(t *testing.T) {
	racetest.SequentialOnly(t)
	files, _ := filepath.Glob(filepath.Join(corpusDir(t), "*", "*.md"))
	if len(files) == 0 {
		t.Fatal("no corpus files")
	}
	s := newSplitter(t, Options{MaxTokens: 400, Overlap: 50})
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			data := corpusConverted(t, f)
			chunks, err := s.SplitFile(context.Background(), "knowledge/bazi/converted/"+filepath.Base(f), data)
			if err != nil {
				t.Fatal(err)
			}
			if len(chunks) == 0 {
				t.Fatal("no chunks")
			}
			checkInvariants(t, s, data, chunks)
		})
	}
	data := corpusConverted(t, filepath.Join(corpusDir(t), "bazi", "子平真诠.md"))
	chunks, err := s.SplitFile(context.Background(), "z.md", data)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, c := range chunks {
		if len(c.HeadingPath) == 2 && c.HeadingPath[0] == "子平真诠" && c.HeadingPath[1] == "八、论用神" {
			found = true
			if !strings.Contains(c.Text, "用神") {
				t.Errorf("用神 chunk without 用神: %q", c.Text)
			}
		}
	}
	if !found {
		t.Error("no chunk under 子平真诠 > 八、论用神")
	}
}

func TestSplitFromDisk(t *testing.T) {
	root := t.TempDir()
	p := filepath.Join(root, "knowledge", "t", "converted", "a.md")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, render(t, "# A\n\nbody."), 0o644); err != nil {
		t.Fatal(err)
	}
	chunks, err := newSplitter(t, Options{Root: root}).Split(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if len(chunks) != 1 || chunks[0].Doc != "knowledge/t/converted/a.md" {
		t.Fatalf("chunks %+v", chunks)
	}
	if _, err := newSplitter(t, Options{}).Split(context.Background(), filepath.Join(root, "missing.md")); err == nil || !strings.Contains(err.Error(), "missing.md") {
		t.Errorf("missing file error %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := newSplitter(t, Options{}).SplitFile(ctx, "a.md", render(t, "# A\n\nbody.")); err == nil {
		t.Error("cancelled context: no error")
	}
}

// TestSplitConcurrent runs one Splitter from several goroutines (run with
// -race): the results must equal the sequential ones.
func TestSplitConcurrent(t *testing.T) {
	s := newSplitter(t, Options{MaxTokens: 64, Overlap: 8})
	var b strings.Builder
	b.WriteString("# 并发\n\n")
	for i := 0; i < 40; i++ {
		b.WriteString("财官印食，此用神之善而顺用之者也。Words and more words here. ")
	}
	data := render(t, b.String())
	want, err := s.SplitFile(context.Background(), "c.md", data)
	if err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, 4)
	for g := 0; g < 4; g++ {
		go func() {
			got, err := s.SplitFile(context.Background(), "c.md", data)
			if err == nil && (len(got) != len(want) || got[len(got)-1].ID != want[len(want)-1].ID) {
				t.Errorf("concurrent split differs: %d chunks vs %d", len(got), len(want))
			}
			errs <- err
		}()
	}
	for g := 0; g < 4; g++ {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

func TestSplitTitleHeadingNotRepeated(t *testing.T) {
	s := newSplitter(t, Options{MaxTokens: 200})
	body := "# Brewing  green tea\n\nWhy a guide.\n\n## Chapter 1. Water\n\nSoft water is best.\n\n# Brewing Green Tea\n\nA second heading of the same name is kept.\n"
	data, err := convert.Render(convert.Document{Source: "knowledge/t/source/g.md", Title: "Brewing Green Tea", Format: "md", Markdown: body})
	if err != nil {
		t.Fatal(err)
	}
	chunks, err := s.SplitFile(context.Background(), "knowledge/t/converted/g.md", data)
	if err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, s, data, chunks)
	want := []struct{ path, citation, prefix string }{
		{"", "Brewing Green Tea", "# Brewing  green tea"},
		{"Chapter 1. Water", "Brewing Green Tea > Chapter 1. Water", "## Chapter 1. Water"},
		{"Brewing Green Tea", "Brewing Green Tea > Brewing Green Tea", "# Brewing Green Tea"},
	}
	if len(chunks) != len(want) {
		t.Fatalf("got %d chunks, want %d", len(chunks), len(want))
	}
	for i, w := range want {
		c := chunks[i]
		if got := strings.Join(c.HeadingPath, ">"); got != w.path {
			t.Errorf("chunk %d path %q, want %q", i, got, w.path)
		}
		if got := c.Citation(); got != w.citation {
			t.Errorf("chunk %d citation %q, want %q", i, got, w.citation)
		}
		if !strings.HasPrefix(c.Text, w.prefix) {
			t.Errorf("chunk %d text %q, want prefix %q", i, c.Text, w.prefix)
		}
	}
	if got, want := chunks[1].EmbedText(), "Brewing Green Tea > Chapter 1. Water\n\n## Chapter 1. Water\n\nSoft water is best."; got != want {
		t.Errorf("EmbedText = %q, want %q", got, want)
	}
	if got := (Chunk{Text: "bare"}).EmbedText(); got != "bare" {
		t.Errorf("EmbedText without title or path = %q", got)
	}
}

// A table of contents ends where its list does: the book's text after it is
// filed under the heading above 目录, and only the list is Navigation.
func TestSplitTableOfContents(t *testing.T) {
	body := "# 滴天髓\n\n## 目录\n\n- 通神论\n- 六亲论\n1. 天道\n\n论天干地支之理，甲木参天，脱胎要火。\n\n## 通神论\n\n天道欲识天元一，先观帝载与神功。\n"
	s := newSplitter(t, Options{MaxTokens: 200})
	data := render(t, body)
	chunks, err := s.SplitFile(context.Background(), "knowledge/t/converted/x.md", data)
	if err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, s, data, chunks)
	if len(chunks) != 3 {
		t.Fatalf("got %d chunks, want 3: %+v", len(chunks), chunks)
	}
	toc, after, next := chunks[0], chunks[1], chunks[2]
	if !toc.Navigation || strings.Join(toc.HeadingPath, ">") != "滴天髓>目录" || !strings.Contains(toc.Text, "六亲论") || strings.Contains(toc.Text, "甲木") {
		t.Errorf("TOC chunk = %+v", toc)
	}
	if after.Navigation || strings.Join(after.HeadingPath, ">") != "滴天髓" || !strings.HasPrefix(after.Text, "论天干地支之理") {
		t.Errorf("text after the TOC = %+v, want outside 目录 and not navigation", after)
	}
	if next.Navigation || strings.Join(next.HeadingPath, ">") != "滴天髓>通神论" {
		t.Errorf("next section = %+v", next)
	}
}

// A "目录：" line of text (not a heading) followed by a list is a table of
// contents too, filed under the heading it is in; a lone 目录 line in prose
// marks nothing after it (the line itself, empty of content, is no chunk).
func TestSplitTableOfContentsUnderALabel(t *testing.T) {
	body := "# 穷通宝鉴\n\n穷通宝鉴\n\n目录：\n\n- 1 五行总论\n- 2 十干分论\n- 2.1 论木\n\n# 1 五行总论\n\n五行者，本乎天地之间而不穷者也。\n\n目录\n\n此书之目录已失，今以意补之，共十四篇。\n"
	s := newSplitter(t, Options{MaxTokens: 40})
	data := render(t, body)
	chunks, err := s.SplitFile(context.Background(), "knowledge/t/converted/x.md", data)
	if err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, s, data, chunks)
	var nav, text []string
	for _, c := range chunks {
		if c.Navigation {
			nav = append(nav, c.Text)
		} else {
			text = append(text, c.Text)
		}
	}
	if len(nav) != 1 || !strings.Contains(nav[0], "2.1 论木") || strings.Contains(nav[0], "五行者") {
		t.Errorf("navigation chunks = %q", nav)
	}
	all := strings.Join(text, "|")
	for _, want := range []string{"五行者，本乎天地之间", "此书之目录已失"} {
		if !strings.Contains(all, want) {
			t.Errorf("text chunks %q lack %q", text, want)
		}
	}
	for _, c := range chunks {
		if strings.Contains(c.Text, "此书之目录已失") && (c.Navigation || strings.Join(c.HeadingPath, ">") != "1 五行总论") {
			t.Errorf("prose after a lone 目录 line = %+v", c)
		}
	}
}

// TestSubjects: the later chunks of a document without headings take its
// lead sentence as their subject; a document with a heading tree gets none.
func TestSubjects(t *testing.T) {
	flat := []Chunk{
		{Title: "c00001", Text: "钝头鹦嘴鱼为鹦哥鱼科的其中一种。体长形。"},
		{Title: "c00001", Text: "本鱼栖息于珊瑚礁海域。"},
		{Title: "c00001", Text: "以藻类为食。"},
	}
	got := Subjects(flat)
	want := []string{"", "钝头鹦嘴鱼为鹦哥鱼科的其中一种。", "钝头鹦嘴鱼为鹦哥鱼科的其中一种。"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("Subjects(flat) = %q, want %q", got, want)
	}
	headed := []Chunk{
		{Title: "子平真诠", Text: "论用神。八字用神，专求月令。"},
		{Title: "子平真诠", HeadingPath: []string{"论伤官"}, Text: "伤官虽非吉神，实为秀气。"},
	}
	for i, s := range Subjects(headed) {
		if s != "" {
			t.Errorf("Subjects(headed)[%d] = %q, want none: a book with headings is indexed as before", i, s)
		}
	}
	long := []Chunk{{Text: strings.Repeat("无句读之文", 40)}, {Text: "后文。"}}
	if s := Subjects(long)[1]; len([]rune(s)) != MaxSubjectRunes {
		t.Errorf("a lead without a sentence end gives a subject of %d runes, want %d", len([]rune(s)), MaxSubjectRunes)
	}
	if s := Subjects([]Chunk{{Text: "# Notes\n\nFirst line. Second."}, {Text: "It goes on."}})[1]; s != "Notes" {
		t.Errorf("a lead heading line gives subject %q, want Notes", s)
	}
}
