package knowledge_test

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/vibelife/vibe/chunk"
	"github.com/vibelife/vibe/internal/racetest"
	"github.com/vibelife/vibe/knowledge"
	"github.com/vibelife/vibe/knowledge/lexical"
	"github.com/vibelife/vibe/knowledge/sqlite"
	"github.com/vibelife/vibe/knowledge/storetest"
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
	storetest.WriteConverted(t, root, "bazi", "a", "# 子平真诠\n\n## 论用神\n\n八字用神，专求月令。以日干配月令地支。\n\n## 论格局\n\n格局成败之说。", false)
	storetest.WriteConverted(t, root, "bazi", "b", "# Notes\n\nThe day master is strong in spring.", false)
	storetest.WriteConverted(t, root, "bazi", "junk", "Ã¤Â¸Â­Ã¦Â–Â‡", true)
	storetest.WriteConverted(t, root, "bazi", "empty", "", false)
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
	storetest.WriteConverted(t, root, "bazi", "b", "# Notes\n\nThe day master is weak in autumn.", false)
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
	storetest.WriteConverted(t, root, "t", "a", "alpha text", false)
	storetest.WriteConverted(t, root, "t", "b", "beta text", false)
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
	storetest.WriteConverted(t, root, "t", "a", "alpha text changed", false)
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

// TestIngestBadInput: an empty document, a document of one gigantic line
// and binary junk behind valid front matter. The first two are ingested
// (the line cut within the token budget), the junk is refused by name with
// nothing of it stored, and once fixed the next run takes it.
func TestIngestBadInput(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	store, err := sqlite.Open(ctx, filepath.Join(root, "vibe.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	const budget = 128
	sp, err := chunk.New(chunk.Options{MaxTokens: budget})
	if err != nil {
		t.Fatal(err)
	}
	// A gigantic line: 300 KB, and one 100 KB "word". Under -race (69 s
	// at load 30 for one goroutine's chunking and SQLite writes) a fifth
	// of it, still hundreds of times the chunk budget: the same assertions.
	size, mark, word := 300_000, 40_000, 100_000
	if racetest.Enabled {
		size, mark, word = 60_000, 7_965, 20_000
	}
	var line strings.Builder
	for i := 0; line.Len() < size; i++ {
		line.WriteString("甲乙丙丁戊己庚辛壬癸子丑寅卯辰巳午未申酉戌亥"[3*(i%22) : 3*(i%22)+3])
		if i == mark {
			line.WriteString("独一无二的标记")
		}
	}
	line.WriteString(strings.Repeat("x", word))
	storetest.WriteConverted(t, root, "t", "empty", "", false)
	storetest.WriteConverted(t, root, "t", "line", line.String(), false)
	storetest.WriteConverted(t, root, "t", "junk", "text then \x00\x01\xff\xfe\x00 binary", false)
	dir := filepath.Join(root, "knowledge", "t", "converted")
	emb := &countingEmbedder{}
	opts := knowledge.IngestOptions{Theme: "t", Root: root, ConvertedDir: dir, Splitter: sp, Embedder: emb}
	rep, err := knowledge.Ingest(ctx, store, opts)
	if err == nil || !strings.Contains(err.Error(), "knowledge/t/converted/junk.md") || !strings.Contains(err.Error(), "NUL byte") {
		t.Fatalf("err = %v, want it to name junk.md and say why", err)
	}
	if rep.Added != 2 || len(rep.Failed) != 1 {
		t.Fatalf("report = %+v", rep)
	}
	docs, _ := store.Documents(ctx, "t")
	if len(docs) != 2 || docs[0].ID != "knowledge/t/converted/empty.md" || docs[0].Chunks != 0 || docs[1].Chunks < 2 {
		t.Fatalf("documents = %+v", docs)
	}
	chunks, _ := store.Chunks(ctx, "t")
	for _, c := range chunks {
		if c.Tokens > budget {
			t.Errorf("chunk %s has %d tokens, budget %d", c.ID, c.Tokens, budget)
		}
	}
	hits, err := store.Search(ctx, knowledge.Query{Theme: "t", Text: "独一无二的标记", K: 1, Mode: knowledge.SearchLexical})
	if err != nil || len(hits) != 1 || !strings.Contains(hits[0].Chunk.Text, "独一无二的标记") {
		t.Fatalf("search in the gigantic line = %+v, %v", hits, err)
	}
	storetest.WriteConverted(t, root, "t", "junk", "text, fixed", false)
	rep, err = knowledge.Ingest(ctx, store, opts)
	if err != nil || rep.Added != 1 || rep.Unchanged != 2 {
		t.Fatalf("run after the fix = %+v, %v", rep, err)
	}
}

// countdownCtx is cancelled by the n-th call of Err after arm(n): a
// cancellation that lands inside a store write, deterministically.
type countdownCtx struct {
	context.Context
	cancel context.CancelFunc
	left   atomic.Int64
}

func newCountdown() *countdownCtx {
	ctx, cancel := context.WithCancel(context.Background())
	c := &countdownCtx{Context: ctx, cancel: cancel}
	c.left.Store(1 << 62)
	return c
}

func (c *countdownCtx) arm(n int64) { c.left.Store(n) }

func (c *countdownCtx) Err() error {
	if c.left.Add(-1) < 0 {
		c.cancel()
	}
	return c.Context.Err()
}

// armingEmbedder arms the countdown when it embeds a text containing mark.
type armingEmbedder struct {
	countingEmbedder
	ctx  *countdownCtx
	mark string
}

func (e *armingEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	for _, t := range texts {
		if strings.Contains(t, e.mark) {
			e.ctx.arm(3)
		}
	}
	return e.countingEmbedder.Embed(ctx, texts)
}

// TestIngestCancelledMidDocument: the ingest is cancelled (Ctrl-C, a
// killed write) in the middle of one document's transaction. The error
// names the document, it is not stored at all, the documents before it are,
// and the next run completes.
func TestIngestCancelledMidDocument(t *testing.T) {
	root := t.TempDir()
	store, err := sqlite.Open(context.Background(), filepath.Join(root, "vibe.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	sp, _ := chunk.New(chunk.Options{MaxTokens: 32})
	for _, name := range []string{"a", "b", "c"} {
		var body strings.Builder
		for i := 0; i < 20; i++ {
			fmt.Fprintf(&body, "## %s %d\n\nsection %d of document %s, with words to index.\n\n", name, i, i, name)
		}
		storetest.WriteConverted(t, root, "t", name, body.String(), false)
	}
	dir := filepath.Join(root, "knowledge", "t", "converted")
	cctx := newCountdown()
	emb := &armingEmbedder{ctx: cctx, mark: "document b"}
	opts := knowledge.IngestOptions{Theme: "t", Root: root, ConvertedDir: dir, Splitter: sp, Embedder: emb}
	rep, err := knowledge.Ingest(cctx, store, opts)
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "replace knowledge/t/converted/b.md") {
		t.Fatalf("err = %v, want a cancellation naming b.md", err)
	}
	ctx := context.Background()
	docs, _ := store.Documents(ctx, "t")
	chunks, _ := store.Chunks(ctx, "t")
	if len(docs) != 1 || docs[0].ID != "knowledge/t/converted/a.md" || len(chunks) != docs[0].Chunks || rep.Added != 1 {
		t.Fatalf("after the cancellation: docs %+v, %d chunks, report %+v", docs, len(chunks), rep)
	}
	rep, err = knowledge.Ingest(ctx, store, knowledge.IngestOptions{Theme: "t", Root: root, ConvertedDir: dir, Splitter: sp, Embedder: &countingEmbedder{}})
	if err != nil || rep.Added != 2 || rep.Unchanged != 1 {
		t.Fatalf("next run = %+v, %v", rep, err)
	}
}

// A table of contents is not indexed: a question naming a chapter finds the
// chapter, never the 目录 list that names it too.
func TestIngestLeavesOutTableOfContents(t *testing.T) {
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
	storetest.WriteConverted(t, root, "bazi", "a", "# 子平真诠\n\n## 目录\n\n- 论用神\n- 论伤官\n\n## 论伤官\n\n伤官虽非吉神，实为秀气。\n", false)
	opts := knowledge.IngestOptions{Theme: "bazi", Root: root, ConvertedDir: filepath.Join(root, "knowledge", "bazi", "converted"), Splitter: sp, Embedder: &countingEmbedder{}}
	if _, err := knowledge.Ingest(ctx, store, opts); err != nil {
		t.Fatal(err)
	}
	all, err := store.Chunks(ctx, "bazi")
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 1 || all[0].Ordinal != 0 || !strings.Contains(all[0].Text, "秀气") {
		t.Fatalf("stored chunks = %+v, want only the 论伤官 passage", all)
	}
	hits, err := store.Search(ctx, knowledge.Query{Theme: "bazi", Text: "论用神", K: 5})
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hits {
		if strings.Contains(strings.Join(h.Chunk.HeadingPath, ">"), "目录") {
			t.Errorf("search returned the table of contents: %+v", h.Chunk)
		}
	}
}

// failingStore fails every document write, as a store that deadlocked or
// lost its connection does.
type failingStore struct{ knowledge.Store }

func (failingStore) ReplaceDocument(ctx context.Context, d knowledge.Document, c []chunk.Chunk, v [][]float32, i knowledge.EmbeddingInfo) error {
	return errors.New("ERROR: deadlock detected (SQLSTATE 40P01)")
}

// TestIngestStoreFailureIsMarked: a failure of the store itself is marked
// knowledge.ErrStoreWrite (the build stops on it), a bad document is not
// (the build goes on with the others).
func TestIngestStoreFailureIsMarked(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	store, err := sqlite.Open(ctx, filepath.Join(root, "vibe.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	sp, _ := chunk.New(chunk.Options{})
	storetest.WriteConverted(t, root, "t", "a", "alpha text", false)
	dir := filepath.Join(root, "knowledge", "t", "converted")
	opts := knowledge.IngestOptions{Theme: "t", Root: root, ConvertedDir: dir, Splitter: sp, Embedder: &countingEmbedder{}}
	rep, err := knowledge.Ingest(ctx, failingStore{store}, opts)
	if !errors.Is(err, knowledge.ErrStoreWrite) || !strings.Contains(err.Error(), "40P01") || len(rep.Failed) != 1 {
		t.Fatalf("store failure: %+v %v", rep, err)
	}
	if err := os.WriteFile(filepath.Join(dir, "c.md"), []byte("no front matter\x00\xff"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := knowledge.Ingest(ctx, store, opts); err == nil || errors.Is(err, knowledge.ErrStoreWrite) {
		t.Fatalf("bad document: %v", err)
	}
}

// bulkStore is a BulkLoader that, like the PostgreSQL store, builds an
// index when the load finishes and reports it through the load's options.
type bulkStore struct {
	knowledge.Store
	announced int
	docs      int // documents written when finish ran
	writes    int
}

func (b *bulkStore) ReplaceDocument(ctx context.Context, d knowledge.Document, c []chunk.Chunk, v [][]float32, i knowledge.EmbeddingInfo) error {
	b.writes++
	return b.Store.ReplaceDocument(ctx, d, c, v, i)
}

func (b *bulkStore) BeginBulk(ctx context.Context, opts knowledge.BulkOptions) (func(context.Context) error, error) {
	b.announced = opts.Chunks
	return func(context.Context) error {
		b.docs = b.writes
		if opts.IndexProgress != nil {
			opts.IndexProgress(knowledge.IndexBuild{Index: "vector", Chunks: 7})
			opts.IndexProgress(knowledge.IndexBuild{Index: "vector", Chunks: 7, Done: true})
		}
		return nil
	}, nil
}

// TestIngestReportsIndexBuild: Ingest hands IngestOptions.IndexProgress to
// the bulk load, whose finish reports the index build after the last
// document's progress.
func TestIngestReportsIndexBuild(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	store, err := sqlite.Open(ctx, filepath.Join(root, "vibe.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	sp, _ := chunk.New(chunk.Options{})
	storetest.WriteConverted(t, root, "t", "a", "alpha text", false)
	storetest.WriteConverted(t, root, "t", "b", "beta text", false)
	var events []string
	bs := &bulkStore{Store: store}
	opts := knowledge.IngestOptions{Theme: "t", Root: root, ConvertedDir: filepath.Join(root, "knowledge", "t", "converted"), Splitter: sp, Embedder: &countingEmbedder{},
		Progress: func(done, total int, doc string) { events = append(events, fmt.Sprintf("doc %d/%d", done, total)) },
		IndexProgress: func(b knowledge.IndexBuild) {
			events = append(events, fmt.Sprintf("index %s %d done=%v", b.Index, b.Chunks, b.Done))
		},
	}
	if _, err := knowledge.Ingest(ctx, bs, opts); err != nil {
		t.Fatal(err)
	}
	want := "doc 1/2, doc 2/2, index vector 7 done=false, index vector 7 done=true"
	if got := strings.Join(events, ", "); got != want {
		t.Errorf("events:\n got %s\nwant %s", got, want)
	}
	if bs.announced < 2 || bs.docs != 2 {
		t.Errorf("announced %d chunks, finish after %d documents", bs.announced, bs.docs)
	}
}

// TestIngestLaterChunkFoundByDocumentSubject: a document without headings
// names its subject in its lead sentence and its later chunks say 本鱼; a
// question naming the subject finds the later chunk that answers it, over
// the document's first chunk and another document that shares the
// question's other words, and the subject is not shown as the chunk's text.
func TestIngestLaterChunkFoundByDocumentSubject(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	store, err := sqlite.Open(ctx, filepath.Join(root, ".vibe", "vibe.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	sp, err := chunk.New(chunk.Options{MaxTokens: 48})
	if err != nil {
		t.Fatal(err)
	}
	storetest.WriteConverted(t, root, "fish", "c00001", "钝头鹦嘴鱼为辐鳍鱼纲鲈形目鹦哥鱼科的其中一种。体长形，头部圆钝，体色多变。\n\n本鱼栖息于珊瑚礁海域，以藻类为食，夜间分泌黏液包裹身体。\n", false)
	storetest.WriteConverted(t, root, "fish", "c00002", "海鸟多栖息于礁石外缘的岛屿上。\n", false)
	for i, text := range []string{"锣鼓经是传统器乐里常用的打击乐记谱方法。", "九龙巴士32M线是香港的一条巴士路线。", "范廷颂是越南罗马天主教枢机。", "伦敦是英国的首都。"} {
		storetest.WriteConverted(t, root, "fish", fmt.Sprintf("c%05d", i+3), text+"\n", false)
	}
	opts := knowledge.IngestOptions{Theme: "fish", Root: root, ConvertedDir: filepath.Join(root, "knowledge", "fish", "converted"), Splitter: sp, Embedder: &countingEmbedder{}}
	if _, err := knowledge.Ingest(ctx, store, opts); err != nil {
		t.Fatal(err)
	}
	all, err := store.Chunks(ctx, "fish")
	if err != nil {
		t.Fatal(err)
	}
	if len(all) < 3 {
		t.Fatalf("stored %d chunks, want c00001 cut in two: %+v", len(all), all)
	}
	for _, mode := range []knowledge.SearchMode{knowledge.SearchLexical, knowledge.SearchHybrid} {
		hits, err := store.Search(ctx, knowledge.Query{Theme: "fish", Text: "钝头鹦嘴鱼栖息在什么地方", K: 3, Mode: mode})
		if err != nil {
			t.Fatal(err)
		}
		if len(hits) == 0 || !strings.Contains(hits[0].Chunk.Text, "珊瑚礁") {
			t.Fatalf("%s: first hit %+v, want the chunk of c00001 that says where 本鱼 lives", mode, hits)
		}
		if strings.Contains(hits[0].Chunk.Text, "钝头") {
			t.Errorf("%s: the subject is shown in the chunk's text: %q", mode, hits[0].Chunk.Text)
		}
	}
}
