package extract

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/vibelife/vibe/chunk"
	"github.com/vibelife/vibe/convert"
	"github.com/vibelife/vibe/internal/racetest"
)

// The ten real books of docs/structure.md (and the 紫微斗数全书),
// public-domain texts in layouts the project had not used, fetched from
// public repositories into /work/data/books (never committed; the manifest
// is docs/books.md). $VIBE_TEST_BOOKS names another directory.

// booksEnv names the directory of the books when it is not ../data/books
// beside the repository.
const booksEnv = "VIBE_TEST_BOOKS"

var booksBanner sync.Once

// booksDir returns the books' directory, or skips the test with a loud
// notice when it is missing: the books are not needed by CI.
func booksDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv(booksEnv)
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			t.Fatal(err)
		}
		for d := wd; ; d = filepath.Dir(d) {
			if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
				dir = filepath.Join(filepath.Dir(d), "data", "books")
				break
			}
			if filepath.Dir(d) == d {
				t.Fatal("no go.mod above the test")
			}
		}
	}
	if _, err := os.Stat(dir); err != nil {
		booksBanner.Do(func() {
			fmt.Fprintf(os.Stderr, "\n########################################################################\n"+
				"# BOOK TESTS SKIPPED: %s does not exist.\n"+
				"# The ten real books of docs/books.md are fetched by hand and never\n"+
				"# committed; set %s to their directory to run TestOfflineBooks.\n"+
				"########################################################################\n\n", dir, booksEnv)
		})
		t.Skipf("SKIPPED: the books directory %s is missing (set %s)", dir, booksEnv)
	}
	return dir
}

// bookCase is what a book must become.
type bookCase struct {
	file string
	// minHeadings and maxHeadings bound the headings of the converted
	// file: a tree, not a flat text nor every line a heading.
	minHeadings, maxHeadings int
	// headings must all be headings of the converted file (the reader's
	// landmarks).
	headings []string
	// aside names parts that must be set aside (part of their name).
	aside []string
	// noOfflineRules, when set, says why the offline extractor finds no
	// rule in the book (the test then checks that it finds none, so that
	// the day it does, the book joins the others).
	noOfflineRules string
	// narrative is set for a novel (measureNarrative): its offline rules
	// are only those stated generally, outside its dialogue and narration.
	narrative bool
}

var bookCases = []bookCase{
	{file: "ziwei-doushu-quanshu.md", minHeadings: 300, maxHeadings: 600,
		headings: []string{"新锓希夷陈先生紫微斗数全书卷之一", "太微赋", "形性赋", "诸星问答论", "定富局", "子安命", "七迁移"}, aside: []string{"contents list (目录)"}},
	{file: "menglin-xuanjie.md", minHeadings: 30, maxHeadings: 200,
		headings: []string{"梦林玄解卷之一", "梦林玄解卷之二", "梦林玄解卷之二十八", "梦林玄解卷之三十四"}, aside: []string{"contents list", "repeated paragraphs"}},
	{file: "nongsang-jiyao.kanripo.txt", minHeadings: 150, maxHeadings: 260,
		headings: []string{"農桑輯要卷一", "典訓", "農功起本", "耕墾", "農桑輯要卷七"}, aside: []string{"org-mode file headers", "page-break markers", "line-end marks", "contents list"},
		noOfflineRules: "the 四库全书 text is unpunctuated: the offline extractor reads rules from clauses between punctuation (a model reads it)"},
	{file: "zhouyi-wangbi.md", minHeadings: 10, maxHeadings: 20,
		headings: []string{"周易上经乾传第一", "周易下经咸传第四", "周易说卦第九"}, aside: []string{"repeated paragraphs"}},
	{file: "wenxin-diaolong.txt", minHeadings: 50, maxHeadings: 60,
		headings: []string{"原道第一", "神思第二十六", "序志第五十"}},
	{file: "shuihuzhuan.gbk.txt", minHeadings: 100, maxHeadings: 130,
		headings: []string{"第一回 王教头私走延安府 九纹龙大闹史家村"}, narrative: true},
	{file: "civil-code.txt", minHeadings: 100, maxHeadings: 200,
		headings: []string{"第一编 总则", "第一章 基本规定", "第一分编 通则", "第一节 民事权利能力和民事行为能力"}, aside: []string{"contents list"}},
	{file: "complete-angler.latin1.txt", minHeadings: 10, maxHeadings: 40,
		headings: []string{"CHAP. II.", "CHAP. XIII."}, aside: []string{"Project Gutenberg header", "Project Gutenberg licence"}},
	{file: "infantry-drill-1911.latin1.txt", minHeadings: 100, maxHeadings: 260,
		headings: []string{"PART I.--DRILL.", "SCHOOL OF THE SOLDIER.", "PART II.--COMBAT."}, aside: []string{"Project Gutenberg header", "contents list"}},
	{file: "art-of-war.txt", minHeadings: 13, maxHeadings: 30,
		headings: []string{"I. LAYING PLANS", "XIII. THE USE OF SPIES"}, aside: []string{"Project Gutenberg header", "Project Gutenberg licence"}},
	{file: "meditations.txt", minHeadings: 12, maxHeadings: 40,
		headings: []string{"THE FIRST BOOK", "THE TWELFTH BOOK"}, aside: []string{"Project Gutenberg header", "contents list (CONTENTS)"}},
	{file: "syphilitic-diseases.ocr.txt", minHeadings: 23, maxHeadings: 300,
		headings: []string{"CHAPTER I.", "CHAPTER XXIII."}, aside: []string{"page numbers", "running heads", "contents list"}},
}

// TestOfflineBooks converts each book, cuts it into chunks and extracts
// offline: the chunks hold at least 90% of the converted characters with
// nothing lost, the heading tree has the book's landmarks and a sane size,
// the named parts are set aside, and the offline extractor finds rules.
func TestOfflineBooks(t *testing.T) {
	racetest.SequentialOnly(t)
	dir := booksDir(t)
	sp, err := chunk.New(chunk.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, bc := range bookCases {
		t.Run(bc.file, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join(dir, bc.file))
			if err != nil {
				t.Fatalf("%v (docs/books.md says where the book comes from)", err)
			}
			doc, err := convert.ConvertBytes(context.Background(), data, bc.file, convert.Options{})
			if err != nil {
				t.Fatal(err)
			}
			file, err := convert.Render(doc)
			if err != nil {
				t.Fatal(err)
			}
			id := "knowledge/books/converted/" + strings.TrimSuffix(bc.file, filepath.Ext(bc.file)) + ".md"
			chunks, err := sp.SplitFile(context.Background(), id, file)
			if err != nil {
				t.Fatal(err)
			}
			acc, err := chunk.Account(file, chunks)
			if err != nil {
				t.Fatal(err)
			}
			if acc.Share() < 0.9 || acc.Lost > 0 {
				t.Errorf("chunks hold %d of %d characters (%.1f%%), %d lost %+v", acc.Held(), acc.Converted, 100*acc.Share(), acc.Lost, acc.LostParts)
			}
			heads := map[string]bool{}
			var list []string
			for _, l := range strings.Split(doc.Markdown, "\n") {
				if h := strings.TrimLeft(l, "#"); h != l && len(l)-len(h) <= 6 && strings.HasPrefix(h, " ") {
					h = strings.TrimSpace(h)
					heads[h] = true
					list = append(list, l)
				}
			}
			if n := len(list); n < bc.minHeadings || n > bc.maxHeadings {
				t.Errorf("%d headings, want %d to %d; the first: %q", n, bc.minHeadings, bc.maxHeadings, list[:min(len(list), 20)])
			}
			for _, h := range bc.headings {
				if !heads[h] {
					t.Errorf("no heading %q; the first: %q", h, list[:min(len(list), 30)])
				}
			}
			var parts []string
			for _, a := range doc.Quality.SetAside {
				parts = append(parts, fmt.Sprintf("%s %d", a.Part, a.Chars))
			}
			for _, a := range acc.Aside {
				parts = append(parts, fmt.Sprintf("%s %d", a.Part, a.Chars))
			}
			for _, want := range bc.aside {
				found := false
				for _, p := range parts {
					found = found || strings.Contains(p, want)
				}
				if !found {
					t.Errorf("%q not set aside; set aside: %q", want, parts)
				}
			}
			var kept []chunk.Chunk
			for _, c := range chunks {
				if !c.Navigation {
					kept = append(kept, c)
				}
			}
			res, err := Run(context.Background(), Options{Theme: "books", Chunks: kept})
			if err != nil {
				t.Fatal(err)
			}
			idx := docIndex(kept)
			nv := measureNarrative(kept, idx)[idx[id]]
			if nv == nil || nv.is != bc.narrative {
				t.Errorf("narrative %+v, want %v", nv, bc.narrative)
			} else {
				t.Logf("narrative %v: %d (%.2f per 1,000)", nv.is, nv.count, nv.perK)
			}
			rules := res.Counts.Tier1 + res.Counts.Tier2 + res.Counts.Tier3
			switch {
			case bc.noOfflineRules != "" && rules > 0:
				t.Errorf("the offline extractor now finds %d rules: drop noOfflineRules (%s)", rules, bc.noOfflineRules)
			case bc.noOfflineRules != "":
				t.Logf("NO OFFLINE RULES: %s", bc.noOfflineRules)
			case rules == 0:
				t.Errorf("the offline extractor found no rule in %d chunks", len(kept))
			}
			t.Logf("%s: title %q; source %d -> converted %d -> chunked %d (%.1f%%); set aside %q; %d headings %q; %d chunks; %d rules, %d patterns, %d phases",
				bc.file, doc.Title, doc.Quality.SourceChars, acc.Converted, acc.Held(), 100*acc.Share(), parts, len(list), list[:min(len(list), 8)], len(kept), rules, res.Counts.Patterns, res.Counts.Phases)
		})
	}
}
