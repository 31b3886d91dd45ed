package eval

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vibelife/vibe/chunk"
	"github.com/vibelife/vibe/convert"
	"github.com/vibelife/vibe/internal/racetest"
	"github.com/vibelife/vibe/internal/testcorpus"
	"github.com/vibelife/vibe/knowledge"
	"github.com/vibelife/vibe/knowledge/embedding"
	"github.com/vibelife/vibe/knowledge/sqlite"
)

// corpus is one language's theme: the shared-corpus files ingested together
// and the questions asked of them.
type corpus struct {
	theme     string
	questions string
	files     []string // relative to ../shared/corpus
}

var corpora = []corpus{
	{"zh", "questions_zh.jsonl", []string{
		"bazi/子平真诠.md", "bazi/滴天髓.md", "bazi/穷通宝鉴.md", "bazi/渊海子平.md", "bazi/三命通会.md",
		"txt/sanguoyanyi.gbk.txt", "txt/xiyouji.utf8-bom.txt", "txt/hongloumeng.gb18030.txt",
		"txt/zhougong-jiemeng.utf8.md", "epub/tao-yuanming-poems-zh.epub",
		"html/readability-gmw.html", "html/readability-qq.html", "pdf/mineru-2list_1table-zh.pdf",
	}},
	{"en", "questions_en.jsonl", []string{
		"epub/moby-dick.epub", "epub/childrens-literature.epub", "epub/wasteland.epub",
		"pdf/tracemonkey-2col-en.pdf", "pdf/federal-register-2020-17221-3col-en.pdf",
		"docx/doj-chapter13-trustee-handbook-en.docx",
		"html/readability-wikipedia.html", "html/readability-wikipedia-3.html", "html/readability-ietf-1.html",
	}},
}

// ingest converts a corpus's files into a workspace under root and ingests
// them into store with emb, the way `vibe build` would.
func ingest(t testing.TB, store knowledge.Store, emb knowledge.Embedder, root string, c corpus) {
	t.Helper()
	ctx := context.Background()
	var inputs []string
	for _, f := range c.files {
		inputs = append(inputs, filepath.Join(testcorpus.Dir(t), f))
	}
	conv := filepath.Join(root, "knowledge", c.theme, "converted")
	rep, err := convert.ConvertFiles(ctx, inputs, conv, convert.RunOptions{
		SourceName: func(p string) string { return "knowledge/" + c.theme + "/source/" + filepath.Base(p) },
	})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Failed > 0 {
		t.Fatalf("convert %s: %d files failed: %+v", c.theme, rep.Failed, rep.Files)
	}
	sp, err := chunk.New(chunk.Options{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	irep, err := knowledge.Ingest(ctx, store, knowledge.IngestOptions{Theme: c.theme, Root: root, ConvertedDir: conv, Splitter: sp, Embedder: emb, IncludeGarbled: true})
	if err != nil {
		t.Fatal(err)
	}
	if irep.Added != len(c.files) {
		t.Fatalf("ingest %s: %d documents added, want %d (%+v)", c.theme, irep.Added, len(c.files), irep)
	}
}

// modes are the searchers compared, in table order.
var modes = []string{"bm25", string(knowledge.SearchVector), string(knowledge.SearchLexical), string(knowledge.SearchHybrid)}

// TestRetrievalQuality measures recall@5 and MRR@10 of the product's vector,
// lexical and hybrid search (SQLite store, local embedder) against the
// reference BM25 engine on the Chinese and English question sets, and
// requires hybrid to be at least as good as each of them on both metrics in
// both languages.
func TestRetrievalQuality(t *testing.T) {
	racetest.SequentialOnly(t)
	ctx := context.Background()
	root := t.TempDir()
	store, err := sqlite.Open(ctx, filepath.Join(root, "vibe.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	emb := embedding.NewLocal(0)

	var table strings.Builder
	fmt.Fprintf(&table, "\n| lang | questions | mode | recall@5 | MRR@10 | recall@5 dev / held-out | MRR@10 dev / held-out |\n|---|---|---|---:|---:|---:|---:|\n")
	for _, c := range corpora {
		qs, err := LoadQuestions(c.questions)
		if err != nil {
			t.Fatal(err)
		}
		ingest(t, store, emb, root, c)
		chunks, err := store.Chunks(ctx, c.theme)
		if err != nil {
			t.Fatal(err)
		}
		// Every label must name a section that exists, or the question
		// measures nothing.
		for _, q := range qs {
			found := false
			for _, ch := range chunks {
				if q.Relevant(ch) {
					found = true
					break
				}
			}
			if !found {
				t.Errorf("%s %s: no chunk of a source matching %q has a heading containing %q", c.questions, q.ID, q.Doc, q.Heading)
			}
		}
		searchers := map[string]Searcher{"bm25": NewBM25(chunks)}
		for _, m := range modes[1:] {
			searchers[m] = StoreSearcher{Store: store, Embedder: emb, Theme: c.theme, Mode: knowledge.SearchMode(m)}
		}
		dev, held := Split(qs)
		got := map[string]Scores{}
		for _, m := range modes {
			s, err := Measure(ctx, searchers[m], qs)
			if err != nil {
				t.Fatal(err)
			}
			got[m] = s
			d, h := s.Subset(dev), s.Subset(held)
			fmt.Fprintf(&table, "| %s | %d | %s | %.3f | %.3f | %.3f / %.3f | %.3f / %.3f |\n",
				c.theme, len(qs), m, s.RecallAt5, s.MRR, d.RecallAt5, h.RecallAt5, d.MRR, h.MRR)
			t.Logf("%s %-7s misses@5: %v", c.theme, m, s.Misses(qs))
		}
		hy := got[string(knowledge.SearchHybrid)]
		for _, m := range modes[:3] {
			if hy.RecallAt5 < got[m].RecallAt5 {
				t.Errorf("%s: hybrid recall@5 %.3f is below %s %.3f", c.theme, hy.RecallAt5, m, got[m].RecallAt5)
			}
			if hy.MRR < got[m].MRR {
				t.Errorf("%s: hybrid MRR@10 %.3f is below %s %.3f", c.theme, hy.MRR, m, got[m].MRR)
			}
		}
	}
	t.Log(table.String())
}
