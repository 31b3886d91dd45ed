package eval

import (
	"context"
	"github.com/vibelife/vibe/internal/testcorpus"
	"os"
	"path/filepath"
	"testing"

	"github.com/vibelife/vibe/chunk"
	"github.com/vibelife/vibe/convert"
	"github.com/vibelife/vibe/knowledge"
	"github.com/vibelife/vibe/knowledge/embedding"
	"github.com/vibelife/vibe/knowledge/sqlite"
)

func corpusDir(t testing.TB) string {
	return testcorpus.Dir(t, "bazi")
}

// ingestBazi converts (the corpus files are Markdown already) and ingests
// the bazi corpus into a fresh SQLite store with the local embedder.
func ingestBazi(t testing.TB) (knowledge.Store, knowledge.Embedder) {
	ctx := context.Background()
	src := corpusDir(t)
	root := t.TempDir()
	conv := filepath.Join(root, "knowledge", "bazi", "converted")
	if err := os.MkdirAll(conv, 0o755); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		doc, err := convert.Convert(context.Background(), filepath.Join(src, e.Name()), convert.Options{})
		if err != nil {
			t.Fatal(err)
		}
		doc.Source = "knowledge/bazi/source/" + e.Name()
		out, err := convert.Render(doc)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(conv, e.Name()), out, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	store, err := sqlite.Open(ctx, filepath.Join(root, "vibe.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	sp, err := chunk.New(chunk.Options{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	emb := embedding.NewLocal(0)
	if _, err := knowledge.Ingest(ctx, store, knowledge.IngestOptions{Theme: "bazi", Root: root, ConvertedDir: conv, Splitter: sp, Embedder: emb}); err != nil {
		t.Fatal(err)
	}
	return store, emb
}

func TestRetrievalQuality(t *testing.T) {
	store, emb := ingestBazi(t)
	qs, err := LoadQuestions("bazi_questions.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	got := map[knowledge.SearchMode]Scores{}
	for _, mode := range []knowledge.SearchMode{knowledge.SearchVector, knowledge.SearchLexical, knowledge.SearchHybrid} {
		s, err := Measure(context.Background(), store, emb, "bazi", qs, mode)
		if err != nil {
			t.Fatal(err)
		}
		got[mode] = s
		t.Logf("%-8s recall@5 %.3f  MRR %.3f  misses %v", mode, s.RecallAt5, s.MRR, s.Misses)
	}
	best := max(got[knowledge.SearchVector].RecallAt5, got[knowledge.SearchLexical].RecallAt5)
	const margin = 0.05
	if h := got[knowledge.SearchHybrid].RecallAt5; h < best-margin {
		t.Errorf("hybrid recall@5 %.3f is below the better single mode %.3f minus %.2f", h, best, margin)
	}
	if got[knowledge.SearchHybrid].RecallAt5 == 0 {
		t.Errorf("hybrid found nothing")
	}
}
