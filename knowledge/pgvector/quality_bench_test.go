package pgvector

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vibelife/vibe/chunk"
	"github.com/vibelife/vibe/convert"
	"github.com/vibelife/vibe/eval"
	"github.com/vibelife/vibe/internal/testcorpus"
	"github.com/vibelife/vibe/knowledge"
	"github.com/vibelife/vibe/knowledge/embedding"
	"github.com/vibelife/vibe/knowledge/sqlite"
)

// qualityCorpora are eval's question sets and the shared-corpus files they
// are asked of (as in eval/eval_test.go).
var qualityCorpora = []struct {
	theme, questions string
	files            []string
}{
	{"zh", "questions_zh.jsonl", []string{
		"bazi/子平真诠.md", "bazi/滴天髓.md", "bazi/穷通宝鉴.md", "bazi/渊海子平.md", "bazi/三命通会.md",
		"txt/sanguoyanyi.gbk.txt", "txt/xiyouji.utf8-bom.txt", "txt/hongloumeng.gb18030.txt",
		"txt/zhougong-jiemeng.utf8.md", "epub/tao-yuanming-poems-zh.epub",
		"html/readability-gmw.html", "html/readability-qq.html", "pdf/mineru-2list_1table-zh.pdf"}},
	{"en", "questions_en.jsonl", []string{
		"epub/moby-dick.epub", "epub/childrens-literature.epub", "epub/wasteland.epub",
		"pdf/tracemonkey-2col-en.pdf", "pdf/federal-register-2020-17221-3col-en.pdf",
		"docx/doj-chapter13-trustee-handbook-en.docx",
		"html/readability-wikipedia.html", "html/readability-wikipedia-3.html", "html/readability-ietf-1.html"}},
}

// BenchmarkRetrievalQuality measures recall@5 and MRR@10 of this store's
// lexical and hybrid search on eval's Chinese and English question sets,
// beside the SQLite store's over the same chunks, with the time per query.
// It converts and ingests the shared corpus (a few minutes):
//
//	go test ./knowledge/pgvector -run '^$' -bench RetrievalQuality -benchtime 1x -v
func BenchmarkRetrievalQuality(b *testing.B) {
	ctx := context.Background()
	pg := openBench(b)
	defer pg.Close()
	root := b.TempDir()
	lite, err := sqlite.Open(ctx, filepath.Join(root, "vibe.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer lite.Close()
	emb := embedding.NewLocal(0)
	var table strings.Builder
	fmt.Fprintf(&table, "\n| lang | store | mode | recall@5 | MRR@10 | per query |\n|---|---|---|---:|---:|---:|\n")
	for i := 0; i < b.N; i++ {
		for _, c := range qualityCorpora {
			var inputs []string
			for _, f := range c.files {
				inputs = append(inputs, filepath.Join(testcorpus.Dir(b), f))
			}
			conv := filepath.Join(root, "knowledge", c.theme, "converted")
			if _, err := convert.ConvertFiles(ctx, inputs, conv, convert.RunOptions{
				SourceName: func(p string) string { return "knowledge/" + c.theme + "/source/" + filepath.Base(p) },
			}); err != nil {
				b.Fatal(err)
			}
			sp, err := chunk.New(chunk.Options{Root: root})
			if err != nil {
				b.Fatal(err)
			}
			for _, s := range []knowledge.Store{pg, lite} {
				if _, err := knowledge.Ingest(ctx, s, knowledge.IngestOptions{Theme: c.theme, Root: root, ConvertedDir: conv, Splitter: sp, Embedder: emb, IncludeGarbled: true}); err != nil {
					b.Fatal(err)
				}
			}
			qs, err := eval.LoadQuestions(filepath.Join("..", "..", "eval", c.questions))
			if err != nil {
				b.Fatal(err)
			}
			for _, r := range []struct {
				store, mode string
				s           eval.Searcher
			}{
				{"postgres", "lexical", eval.StoreSearcher{Store: pg, Embedder: emb, Theme: c.theme, Mode: knowledge.SearchLexical}},
				{"postgres", "hybrid", eval.StoreSearcher{Store: pg, Embedder: emb, Theme: c.theme, Mode: knowledge.SearchHybrid}},
				{"sqlite", "lexical", eval.StoreSearcher{Store: lite, Embedder: emb, Theme: c.theme, Mode: knowledge.SearchLexical}},
				{"sqlite", "hybrid", eval.StoreSearcher{Store: lite, Embedder: emb, Theme: c.theme, Mode: knowledge.SearchHybrid}},
			} {
				start := time.Now()
				sc, err := eval.Measure(ctx, r.s, qs)
				if err != nil {
					b.Fatal(err)
				}
				per := time.Since(start) / time.Duration(len(qs))
				fmt.Fprintf(&table, "| %s | %s | %s | %.3f | %.3f | %.1f ms |\n", c.theme, r.store, r.mode, sc.RecallAt5, sc.MRR, float64(per.Microseconds())/1000)
			}
		}
	}
	b.Log(table.String())
}
