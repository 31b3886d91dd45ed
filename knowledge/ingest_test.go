package knowledge_test

import (
	"context"
	"errors"
	"hash/fnv"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vibelife/vibe/chunk"
	"github.com/vibelife/vibe/convert"
	"github.com/vibelife/vibe/knowledge"
	"github.com/vibelife/vibe/knowledge/lexical"
	"github.com/vibelife/vibe/knowledge/sqlite"
)

// countingEmbedder hashes lexical tokens into a small vector and counts
// its calls; failAfter > 0 makes the call after that many fail.
type countingEmbedder struct {
	calls, texts int
	failAt       int
	model        string
}

func (e *countingEmbedder) Model() string {
	if e.model == "" {
		return "counting"
	}
	return e.model
}

func (e *countingEmbedder) Dimensions() int { return 32 }

func (e *countingEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	e.calls++
	if e.failAt > 0 && e.calls == e.failAt {
		return nil, errors.New("connection reset")
	}
	e.texts += len(texts)
	out := make([][]float32, len(texts))
	for i, t := range texts {
		v := make([]float32, 32)
		for _, tok := range lexical.Tokens(t) {
			h := fnv.New32a()
			h.Write([]byte(tok))
			v[h.Sum32()%32]++
		}
		out[i] = v
	}
	return out, nil
}

func writeConverted(t *testing.T, root, theme, name, body string, garbled bool) {
	t.Helper()
	data, err := convert.Render(convert.Document{
		Source: "knowledge/" + theme + "/source/" + name + ".txt", Format: "txt", Title: name,
		Converter: convert.Version, Quality: convert.Quality{Garbled: garbled}, Markdown: body,
	})
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(root, "knowledge", theme, "converted", name+".md")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestIngestIncremental(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	store, err := sqlite.Open(ctx, filepath.Join(root, ".vibe", "vibe.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	sp, err := chunk.New(chunk.Options{MaxTokens: 64})
	if err != nil {
		t.Fatal(err)
	}
	writeConverted(t, root, "bazi", "a", "# 子平真诠\n\n## 论用神\n\n八字用神，专求月令。以日干配月令地支。\n\n## 论格局\n\n格局成败之说。", false)
	writeConverted(t, root, "bazi", "b", "# Notes\n\nThe day master is strong in spring.", false)
	writeConverted(t, root, "bazi", "junk", "Ã¤Â¸Â­Ã¦Â–Â‡", true)
	writeConverted(t, root, "bazi", "empty", "", false)
	emb := &countingEmbedder{}
	opts := knowledge.IngestOptions{Theme: "bazi", Root: root, ConvertedDir: filepath.Join(root, "knowledge", "bazi", "converted"), Splitter: sp, Embedder: emb}

	rep, err := knowledge.Ingest(ctx, store, opts)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Added != 3 || rep.Unchanged != 0 || len(rep.Skipped) != 1 || rep.Skipped[0].Doc != "knowledge/bazi/converted/junk.md" || rep.Chunks == 0 || emb.calls == 0 {
		t.Fatalf("first run report = %+v (calls %d)", rep, emb.calls)
	}
	hits, err := store.Search(ctx, knowledge.Query{Theme: "bazi", Text: "用神 月令", K: 1})
	if err != nil || len(hits) != 1 || !strings.Contains(hits[0].Chunk.Text, "用神") || hits[0].Chunk.Source != "knowledge/bazi/source/a.txt" {
		t.Fatalf("search after ingest = %+v, %v", hits, err)
	}

	// Second run, nothing changed: no embedding work.
	calls := emb.calls
	rep, err = knowledge.Ingest(ctx, store, opts)
	if err != nil {
		t.Fatal(err)
	}
	if emb.calls != calls || rep.Unchanged != 3 || rep.Added+rep.Updated+rep.Removed != 0 || rep.EmbedCalls != 0 {
		t.Fatalf("second run did work: %+v, calls %d -> %d", rep, calls, emb.calls)
	}

	// Change one, remove one: only the changed one is embedded.
	writeConverted(t, root, "bazi", "b", "# Notes\n\nThe day master is weak in autumn.", false)
	if err := os.Remove(filepath.Join(root, "knowledge", "bazi", "converted", "a.md")); err != nil {
		t.Fatal(err)
	}
	texts := emb.texts
	rep, err = knowledge.Ingest(ctx, store, opts)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Updated != 1 || rep.Removed != 1 || rep.Unchanged != 1 || emb.texts-texts != rep.Chunks {
		t.Fatalf("third run = %+v (texts embedded %d)", rep, emb.texts-texts)
	}
	if hits, _ := store.Search(ctx, knowledge.Query{Theme: "bazi", Text: "用神", Mode: knowledge.SearchLexical}); len(hits) != 0 {
		t.Errorf("removed document still searchable: %v", hits)
	}
}

func TestIngestFailureNamesDocumentAndNextRunRepairs(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	store, err := sqlite.Open(ctx, filepath.Join(root, "vibe.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	sp, _ := chunk.New(chunk.Options{})
	writeConverted(t, root, "t", "a", "alpha text", false)
	writeConverted(t, root, "t", "b", "beta text", false)
	dir := filepath.Join(root, "knowledge", "t", "converted")
	if err := os.WriteFile(filepath.Join(dir, "c.md"), []byte("no front matter\x00\xff"), 0o644); err != nil {
		t.Fatal(err)
	}
	emb := &countingEmbedder{failAt: 2}
	opts := knowledge.IngestOptions{Theme: "t", Root: root, ConvertedDir: dir, Splitter: sp, Embedder: emb}
	rep, err := knowledge.Ingest(ctx, store, opts)
	if err == nil || !strings.Contains(err.Error(), "knowledge/t/converted/b.md") || !strings.Contains(err.Error(), "knowledge/t/converted/c.md") {
		t.Fatalf("err = %v, want it to name b.md and c.md", err)
	}
	if rep.Added != 1 || len(rep.Failed) != 2 {
		t.Fatalf("report = %+v", rep)
	}
	if err := os.Remove(filepath.Join(dir, "c.md")); err != nil {
		t.Fatal(err)
	}
	rep, err = knowledge.Ingest(ctx, store, opts)
	if err != nil || rep.Added != 1 || rep.Unchanged != 1 {
		t.Fatalf("repair run = %+v, %v", rep, err)
	}
	// A different embedder is refused with the mismatch, naming both models.
	opts.Embedder = &countingEmbedder{model: "other"}
	writeConverted(t, root, "t", "a", "alpha text changed", false)
	_, err = knowledge.Ingest(ctx, store, opts)
	if !errors.Is(err, knowledge.ErrDimensionMismatch) || !strings.Contains(err.Error(), "counting") {
		t.Fatalf("mixed embedders: %v", err)
	}
	opts.Rebuild = true
	if rep, err = knowledge.Ingest(ctx, store, opts); err != nil || rep.Added != 2 {
		t.Fatalf("rebuild = %+v, %v", rep, err)
	}
	if _, err := knowledge.Ingest(ctx, store, knowledge.IngestOptions{Theme: "t", ConvertedDir: filepath.Join(root, "nope"), Splitter: sp, Embedder: emb}); !errors.Is(err, knowledge.ErrNoConverted) {
		t.Fatalf("missing dir err = %v", err)
	}
}
