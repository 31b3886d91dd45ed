package pgvector

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	pgv "github.com/pgvector/pgvector-go"

	"github.com/vibelife/vibe/chunk"
	"github.com/vibelife/vibe/knowledge"
	"github.com/vibelife/vibe/knowledge/embedding"
	"github.com/vibelife/vibe/knowledge/storetest"
)

const bothIndexes = "kb_embedding_hnsw"

// indexNames lists the deferred indexes present in the store's schema.
func indexNames(t *testing.T, s *Store) string {
	t.Helper()
	var names []string
	for _, ix := range deferredIndexes {
		var ok bool
		if err := s.pool.QueryRow(context.Background(), `SELECT to_regclass($1) IS NOT NULL`, s.qualified(ix.name)).Scan(&ok); err != nil {
			t.Fatal(err)
		}
		if ok {
			names = append(names, ix.name)
		}
	}
	return strings.Join(names, ",")
}

// checkSearch runs queries of c: vector search must find the exact nearest
// chunk first, lexical search must find something. It returns the lexical
// result lists, which must not depend on whether the indexes exist.
func checkSearch(t *testing.T, s *Store, c *storetest.Corpus, queries []knowledge.Query, when string) string {
	t.Helper()
	ctx := context.Background()
	var lex []string
	for _, q := range queries {
		want := c.ExactTopK(q.Vector, 1)[0]
		hits, err := s.Search(ctx, knowledge.Query{Theme: c.Theme, Vector: q.Vector, K: 5, Mode: knowledge.SearchVector})
		if err != nil || len(hits) == 0 || hits[0].Chunk.ID != want {
			t.Fatalf("%s: vector search = %d hits (first %v), %v; want first %s", when, len(hits), firstID(hits), err, want)
		}
		hits, err = s.Search(ctx, knowledge.Query{Theme: c.Theme, Text: q.Text, K: 10, Mode: knowledge.SearchLexical})
		if err != nil || len(hits) == 0 {
			t.Fatalf("%s: lexical search for %q: %d hits, %v", when, q.Text, len(hits), err)
		}
		for _, h := range hits {
			lex = append(lex, h.Chunk.ID)
		}
	}
	return strings.Join(lex, " ")
}

func queries(c *storetest.Corpus, n int) []knowledge.Query {
	var out []knowledge.Query
	for range n {
		out = append(out, c.Query())
	}
	return out
}

func firstID(hits []knowledge.Hit) string {
	if len(hits) == 0 {
		return ""
	}
	return hits[0].Chunk.ID
}

func TestBulkLoad(t *testing.T) {
	ctx := context.Background()
	s := openFreshURL(t, testURL(t))
	defer s.Close()
	c := storetest.NewCorpus(storetest.Zipf, "t", 1500, 250, 16, 5)
	info := knowledge.EmbeddingInfo{Model: "synthetic", Dimensions: 16}
	write := func(docs []storetest.SyntheticDoc) {
		t.Helper()
		for _, d := range docs {
			if err := s.ReplaceDocument(ctx, d.Doc, d.Chunks, d.Vectors, info); err != nil {
				t.Fatal(err)
			}
		}
	}
	write(c.Docs[:1])
	if got := indexNames(t, s); got != bothIndexes {
		t.Fatalf("after the first write, indexes = %q", got)
	}
	// A small load keeps the indexes live.
	finish, err := s.BeginBulk(ctx, knowledge.BulkOptions{Chunks: 300})
	if err != nil {
		t.Fatal(err)
	}
	if got := indexNames(t, s); got != bothIndexes {
		t.Fatalf("a small load dropped indexes: %q", got)
	}
	if err := finish(ctx); err != nil {
		t.Fatal(err)
	}
	// A large one defers them; searches stay right meanwhile.
	finish, err = s.BeginBulk(ctx, knowledge.BulkOptions{Chunks: 1250})
	if err != nil {
		t.Fatal(err)
	}
	if got := indexNames(t, s); got != "" {
		t.Fatalf("during a bulk load, indexes = %q", got)
	}
	// A second concurrent bulk load (another process, say) is allowed.
	other := openFreshURLInSchema(t, s)
	finish2, err := other.BeginBulk(ctx, knowledge.BulkOptions{Chunks: 1250})
	if err != nil {
		t.Fatal(err)
	}
	write(c.Docs[1:])
	qs := queries(c, 5)
	during := checkSearch(t, s, c, qs, "during the bulk load")
	if err := finish(ctx); err != nil {
		t.Fatal(err)
	}
	if got := indexNames(t, s); got != "" {
		t.Fatalf("indexes rebuilt while another bulk load runs: %q", got)
	}
	// Opening the store meanwhile does not rebuild them either.
	openFreshURLInSchema(t, s).Close()
	if got := indexNames(t, s); got != "" {
		t.Fatalf("indexes rebuilt by an open while a bulk load runs: %q", got)
	}
	if err := finish2(ctx); err != nil {
		t.Fatal(err)
	}
	other.Close()
	if got := indexNames(t, s); got != bothIndexes {
		t.Fatalf("after the bulk loads, indexes = %q", got)
	}
	var valid bool
	if err := s.pool.QueryRow(ctx, `SELECT bool_and(indisvalid) FROM pg_index WHERE indrelid IN ('kb_chunk'::regclass, 'kb_embedding'::regclass)`).Scan(&valid); err != nil || !valid {
		t.Fatalf("indexes valid = %v, %v", valid, err)
	}
	if after := checkSearch(t, s, c, qs, "after the bulk load"); after != during {
		t.Errorf("lexical results depend on the index:\nduring %s\nafter  %s", during, after)
	}
	docs, _ := s.Documents(ctx, "t")
	if len(docs) != len(c.Docs) {
		t.Fatalf("%d documents, want %d", len(docs), len(c.Docs))
	}
	// A load of less than half of the resulting table keeps them live.
	finish, err = s.BeginBulk(ctx, knowledge.BulkOptions{Chunks: 1200})
	if err != nil {
		t.Fatal(err)
	}
	if got := indexNames(t, s); got != bothIndexes {
		t.Fatalf("a load of 1200 chunks onto 1500 dropped indexes: %q", got)
	}
	if err := finish(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestBulkLoadFirstWrite: a bulk load into an empty store sizes the vector
// column on the first write without building the HNSW index row by row.
func TestBulkLoadFirstWrite(t *testing.T) {
	ctx := context.Background()
	s := openFreshURL(t, testURL(t))
	defer s.Close()
	c := storetest.NewCorpus(storetest.Zipf, "t", 1200, 400, 16, 6)
	// The build is reported when it starts (the index not there yet) and
	// when it ends (the index there).
	var events []string
	report := func(b knowledge.IndexBuild) {
		events = append(events, fmt.Sprintf("%s %d done=%v err=%v indexes=%q", b.Index, b.Chunks, b.Done, b.Err, indexNames(t, s)))
		if b.Done && b.Took <= 0 {
			t.Errorf("build took %v", b.Took)
		}
	}
	finish, err := s.BeginBulk(ctx, knowledge.BulkOptions{Chunks: 1200, IndexProgress: report})
	if err != nil {
		t.Fatal(err)
	}
	var chunks int
	for _, d := range c.Docs {
		if err := s.ReplaceDocument(ctx, d.Doc, d.Chunks, d.Vectors, knowledge.EmbeddingInfo{Model: "synthetic", Dimensions: 16}); err != nil {
			t.Fatal(err)
		}
		chunks += len(d.Chunks)
		if got := indexNames(t, s); got != "" {
			t.Fatalf("index built during the bulk load: %q", got)
		}
	}
	if len(events) != 0 {
		t.Fatalf("index build reported during the load: %q", events)
	}
	if err := finish(ctx); err != nil {
		t.Fatal(err)
	}
	if got := indexNames(t, s); got != bothIndexes {
		t.Fatalf("after the bulk load, indexes = %q", got)
	}
	want := []string{
		fmt.Sprintf("vector %d done=false err=<nil> indexes=%q", chunks, ""),
		fmt.Sprintf("vector %d done=true err=<nil> indexes=%q", chunks, bothIndexes),
	}
	if strings.Join(events, "\n") != strings.Join(want, "\n") {
		t.Errorf("index build reports:\n%s\nwant\n%s", strings.Join(events, "\n"), strings.Join(want, "\n"))
	}
	// A load that keeps the indexes live builds none and says nothing.
	events = nil
	finish, err = s.BeginBulk(ctx, knowledge.BulkOptions{Chunks: 10, IndexProgress: report})
	if err != nil {
		t.Fatal(err)
	}
	if err := finish(ctx); err != nil || len(events) != 0 {
		t.Fatalf("a small load: %v, reports %q", err, events)
	}
	checkSearch(t, s, c, queries(c, 5), "after the bulk load")
}

// openFreshURLInSchema opens a second Store on the schema of s.
func openFreshURLInSchema(t *testing.T, s *Store) *Store {
	t.Helper()
	o, err := Open(context.Background(), withSearchPath(testURL(t), s.schemaName))
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// TestCrashMidWrite kills a process in the middle of a bulk load (indexes
// dropped, documents being written) and checks the next open finds whole
// documents only and rebuilds the indexes.
func TestCrashMidWrite(t *testing.T) {
	if target := os.Getenv(storetest.CrashEnv); target != "" {
		s, err := Open(context.Background(), target)
		if err != nil {
			fmt.Println("error", err)
			os.Exit(3)
		}
		storetest.CrashChild(s)
	}
	s := openFreshURL(t, testURL(t))
	target := withSearchPath(testURL(t), s.schemaName)
	s.Close()
	storetest.RunCrash(t, "TestCrashMidWrite", target, func(t *testing.T, target string) knowledge.Store {
		waitBulkLockFree(t, target)
		s, err := Open(context.Background(), target)
		if err != nil {
			t.Fatalf("reopen after the crash: %v", err)
		}
		return s
	}, func(t *testing.T, ks knowledge.Store) {
		if got := indexNames(t, ks.(*Store)); got != bothIndexes {
			t.Errorf("after reopening, indexes = %q, want %q", got, bothIndexes)
		}
	})
}

// waitBulkLockFree waits until the server has noticed the killed writer's
// connections are gone (its bulk-load lock is free), as the next run after
// a crash would find it.
func waitBulkLockFree(t *testing.T, url string) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var schema string
	if err := conn.QueryRow(ctx, `SELECT n.nspname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = 'kb_chunk'::regclass`).Scan(&schema); err != nil {
		t.Fatal(err)
	}
	key := (&Store{schema: pgx.Identifier{schema}.Sanitize()}).bulkLockKey()
	for deadline := time.Now().Add(30 * time.Second); ; {
		var ok bool
		if err := conn.QueryRow(ctx, `SELECT pg_try_advisory_lock(hashtextextended($1, 0))`, key).Scan(&ok); err != nil {
			t.Fatal(err)
		}
		if ok {
			conn.Exec(ctx, `SELECT pg_advisory_unlock(hashtextextended($1, 0))`, key)
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the killed writer's bulk-load lock is still held after 30 s")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// dieOnDocument makes the server terminate the connection that writes the
// chunks of a document whose id contains marker: the database goes away in
// the middle of that document's transaction, after its document row and
// chunks were written and before its vectors are.
func dieOnDocument(t *testing.T, s *Store, marker string) (remove func()) {
	t.Helper()
	ctx := context.Background()
	for _, q := range []string{
		`CREATE FUNCTION test_die() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	IF EXISTS (SELECT 1 FROM new_rows WHERE doc_id LIKE '%` + marker + `%') THEN
		PERFORM pg_terminate_backend(pg_backend_pid());
	END IF;
	RETURN NULL;
END $$`,
		`CREATE TRIGGER test_die AFTER INSERT ON kb_chunk REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION test_die()`,
	} {
		if _, err := s.pool.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	return func() {
		if _, err := s.pool.Exec(ctx, `DROP TRIGGER test_die ON kb_chunk; DROP FUNCTION test_die()`); err != nil {
			t.Fatal(err)
		}
	}
}

// TestIngestConnectionKilled: the database drops the ingest's connection
// in the middle of one document of a multi-document ingest. The error names
// that document, nothing of it is visible, the other documents are stored,
// and the next ingest completes.
func TestIngestConnectionKilled(t *testing.T) {
	ctx := context.Background()
	s := openFreshURL(t, testURL(t))
	defer s.Close()
	root := t.TempDir()
	for _, name := range []string{"a", "b", "c"} {
		var body strings.Builder
		for i := 0; i < 30; i++ {
			fmt.Fprintf(&body, "## %s section %d\n\n论用神 %s 第%d段：八字用神，专求月令，以日干配月令地支。\n\n", name, i, name, i)
		}
		storetest.WriteConverted(t, root, "bazi", name, body.String(), false)
	}
	sp, err := chunk.New(chunk.Options{MaxTokens: 64})
	if err != nil {
		t.Fatal(err)
	}
	opts := knowledge.IngestOptions{Theme: "bazi", Root: root, ConvertedDir: filepath.Join(root, "knowledge", "bazi", "converted"),
		Splitter: sp, Embedder: embedding.NewLocal(64)}
	remove := dieOnDocument(t, s, "converted/b.md")
	rep, err := knowledge.Ingest(ctx, s, opts)
	if err == nil || !strings.Contains(err.Error(), "knowledge/bazi/converted/b.md") {
		t.Fatalf("err = %v, want it to name b.md", err)
	}
	if len(rep.Failed) != 1 || rep.Failed[0].Doc != "knowledge/bazi/converted/b.md" || rep.Added != 2 {
		t.Fatalf("report = %+v", rep)
	}
	var n int
	if err := s.pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM kb_document WHERE id LIKE '%b.md') + (SELECT count(*) FROM kb_chunk WHERE doc_id LIKE '%b.md')`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("rows of the killed document visible: %d, %v", n, err)
	}
	hits, err := s.Search(ctx, knowledge.Query{Theme: "bazi", Text: "b section", K: 50, Mode: knowledge.SearchLexical})
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hits {
		if h.Chunk.Doc == "knowledge/bazi/converted/b.md" {
			t.Fatalf("a chunk of the killed document is searchable: %s", h.Chunk.ID)
		}
	}
	remove()
	rep, err = knowledge.Ingest(ctx, s, opts)
	if err != nil || rep.Added != 1 || rep.Unchanged != 2 {
		t.Fatalf("second ingest = %+v, %v", rep, err)
	}
	docs, _ := s.Documents(ctx, "bazi")
	if len(docs) != 3 {
		t.Fatalf("documents after the second ingest: %+v", docs)
	}
}

// TestBulkLoadConnectionKilled: the same in the middle of a bulk load: the
// finish still rebuilds the indexes, and the document is whole after a
// retry.
func TestBulkLoadConnectionKilled(t *testing.T) {
	ctx := context.Background()
	s := openFreshURL(t, testURL(t))
	defer s.Close()
	c := storetest.NewCorpus(storetest.Zipf, "t", 1200, 300, 16, 8)
	info := knowledge.EmbeddingInfo{Model: "synthetic", Dimensions: 16}
	remove := dieOnDocument(t, s, c.Docs[2].Doc.ID)
	finish, err := s.BeginBulk(ctx, knowledge.BulkOptions{Chunks: 1200})
	if err != nil {
		t.Fatal(err)
	}
	for i, d := range c.Docs {
		err := s.ReplaceDocument(ctx, d.Doc, d.Chunks, d.Vectors, info)
		if (err != nil) != (i == 2) {
			t.Fatalf("document %d: err = %v", i, err)
		}
		if err != nil && !strings.Contains(err.Error(), d.Doc.ID) {
			t.Fatalf("error does not name the document: %v", err)
		}
	}
	if err := finish(ctx); err != nil {
		t.Fatal(err)
	}
	if got := indexNames(t, s); got != bothIndexes {
		t.Fatalf("after the interrupted bulk load, indexes = %q", got)
	}
	if _, err := s.Chunk(ctx, c.Docs[2].Chunks[0].ID); !errors.Is(err, knowledge.ErrNotFound) {
		t.Fatalf("chunk of the killed document: %v", err)
	}
	remove()
	d := c.Docs[2]
	if err := s.ReplaceDocument(ctx, d.Doc, d.Chunks, d.Vectors, info); err != nil {
		t.Fatal(err)
	}
	checkSearch(t, s, c, queries(c, 5), "after the retry")
	if all, _ := s.Chunks(ctx, "t"); len(all) != c.Chunks() {
		t.Errorf("%d chunks after the retry, want %d", len(all), c.Chunks())
	}
}

// TestSmallLoadRebuildsMissingIndexes: indexes missing when a small load
// starts (a crash the open could not repair) are back when it finishes.
func TestSmallLoadRebuildsMissingIndexes(t *testing.T) {
	ctx := context.Background()
	s := openFreshURL(t, testURL(t))
	defer s.Close()
	c := storetest.NewCorpus(storetest.Zipf, "t", 200, 100, 8, 10)
	storetest.Load(t, s, c.Docs[:1], 8)
	if _, err := s.pool.Exec(ctx, `DROP INDEX kb_embedding_hnsw`); err != nil {
		t.Fatal(err)
	}
	finish, err := s.BeginBulk(ctx, knowledge.BulkOptions{Chunks: 100})
	if err != nil {
		t.Fatal(err)
	}
	storetest.Load(t, s, c.Docs[1:], 8)
	if got := indexNames(t, s); got != "" {
		t.Fatalf("indexes before the finish: %q", got)
	}
	if err := finish(ctx); err != nil {
		t.Fatal(err)
	}
	if got := indexNames(t, s); got != bothIndexes {
		t.Fatalf("after a small load, indexes = %q, want %q", got, bothIndexes)
	}
}

// hnswIndexDef is the definition of the HNSW index of the store in schema,
// "" when it has none.
func hnswIndexDef(t *testing.T, conn *pgx.Conn, schema string) string {
	t.Helper()
	var def *string
	if err := conn.QueryRow(context.Background(), `SELECT pg_get_indexdef(to_regclass($1))`, schema+".kb_embedding_hnsw").Scan(&def); err != nil {
		t.Fatal(err)
	}
	if def == nil {
		return ""
	}
	return *def
}

// TestHalfPrecisionHNSW: the HNSW index holds half-precision vectors, a
// store of the float32 index gets it on open (migration 13), vector search
// reaches it (its plan scans the index) and its recall@10 at the configured
// ef_search is at least 0.97 against exact search, with exact float32
// scores.
func TestHalfPrecisionHNSW(t *testing.T) {
	ctx := context.Background()
	url, schema, conn := schemaAt(t, 12)
	c := storetest.NewCorpus(storetest.Zipf, "t", 4000, 200, 64, 3)
	info := knowledge.EmbeddingInfo{Model: "synthetic", Dimensions: 64}
	s, err := Open(ctx, withSearchPath(url, schema))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, d := range c.Docs {
		if err := s.ReplaceDocument(ctx, d.Doc, d.Chunks, d.Vectors, info); err != nil {
			t.Fatal(err)
		}
	}
	indexDef := func() string { return hnswIndexDef(t, conn, schema) }
	if def := indexDef(); !strings.Contains(def, "halfvec(64)") {
		t.Fatalf("the index = %q, want one on halfvec(64)", def)
	}
	// A store of migration 12 with the float32 index: open rebuilds it.
	if _, err := conn.Exec(ctx, `DROP INDEX `+schema+`.kb_embedding_hnsw; CREATE INDEX kb_embedding_hnsw ON `+schema+`.kb_embedding USING hnsw (embedding vector_cosine_ops); DELETE FROM `+schema+`.schema_migrations WHERE version >= 13`); err != nil {
		t.Fatal(err)
	}
	s2, err := Open(ctx, withSearchPath(url, schema))
	if err != nil {
		t.Fatal(err)
	}
	s2.Close()
	if def := indexDef(); !strings.Contains(def, "halfvec(64)") {
		t.Fatalf("after migration 13 the index = %q, want one on halfvec(64)", def)
	}
	q := c.Query()
	var plan []string
	rows, err := s.pool.Query(ctx, `EXPLAIN (COSTS OFF) `+vectorQuery(64), pgv.NewVector(q.Vector), "t", 10)
	if err != nil {
		t.Fatal(err)
	}
	plan, err = pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	if p := strings.Join(plan, "\n"); !strings.Contains(p, "kb_embedding_hnsw") {
		t.Fatalf("vector search does not use the index:\n%s", p)
	}
	qs := queries(c, 100)
	r := hnswRecall(ctx, t, s, c, qs, 0)
	t.Logf("recall@10 at ef_search %d: %.3f (index %s)", hnswEfSearch, r, hnswParams)
	if r < 0.97 {
		t.Errorf("recall@10 at ef_search %d = %.3f, want >= 0.97", hnswEfSearch, r)
	}
	hits, err := s.Search(ctx, knowledge.Query{Theme: "t", Vector: q.Vector, K: 5, Mode: knowledge.SearchVector})
	if err != nil || len(hits) == 0 {
		t.Fatalf("search: %d hits, %v", len(hits), err)
	}
	for _, h := range hits {
		var exact float64
		if err := s.pool.QueryRow(ctx, `SELECT 1 - (embedding <=> $1) FROM kb_embedding WHERE chunk_id = $2`, pgv.NewVector(q.Vector), h.Chunk.ID).Scan(&exact); err != nil {
			t.Fatal(err)
		}
		if h.VectorScore != exact {
			t.Errorf("%s: score %v, the float32 cosine %v", h.Chunk.ID, h.VectorScore, exact)
		}
	}
}

// TestHNSWForWideVectors: half-precision HNSW takes up to 4,000 dimensions
// (pgvector's limit for halfvec), so a model of 3,072 (OpenAI's
// text-embedding-3-large) gets the index, and a store of such vectors that
// an older vibe left without one (its limit was float32's 2,000) gets it on
// open. Above 4,000 there is no index and search is exact.
func TestHNSWForWideVectors(t *testing.T) {
	ctx := context.Background()
	url, schema, conn := schemaAt(t, 1<<30)
	const dims = 3072
	c := storetest.NewCorpus(storetest.Zipf, "t", 120, 40, dims, 5)
	info := knowledge.EmbeddingInfo{Model: "wide", Dimensions: dims}
	s, err := Open(ctx, withSearchPath(url, schema))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, d := range c.Docs {
		if err := s.ReplaceDocument(ctx, d.Doc, d.Chunks, d.Vectors, info); err != nil {
			t.Fatal(err)
		}
	}
	indexDef := func() string { return hnswIndexDef(t, conn, schema) }
	want := fmt.Sprintf("halfvec(%d)", dims)
	if def := indexDef(); !strings.Contains(def, want) {
		t.Fatalf("the index = %q, want one on %s", def, want)
	}
	// As an older vibe left it: no index. Open builds it.
	if _, err := conn.Exec(ctx, `DROP INDEX `+schema+`.kb_embedding_hnsw`); err != nil {
		t.Fatal(err)
	}
	s2, err := Open(ctx, withSearchPath(url, schema))
	if err != nil {
		t.Fatal(err)
	}
	s2.Close()
	if def := indexDef(); !strings.Contains(def, want) {
		t.Fatalf("after open the index = %q, want one on %s", def, want)
	}
	// The index can serve the query (at 120 rows the planner would rather
	// scan and sort, so neither is allowed for the plan).
	q := c.Query()
	var plan []string
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SET LOCAL enable_seqscan = off; SET LOCAL enable_sort = off`); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `EXPLAIN (COSTS OFF) `+vectorQuery(dims), pgv.NewVector(q.Vector), "t", 10)
		if err != nil {
			return err
		}
		plan, err = pgx.CollectRows(rows, pgx.RowTo[string])
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if p := strings.Join(plan, "\n"); !strings.Contains(p, "kb_embedding_hnsw") {
		t.Fatalf("vector search cannot use the index:\n%s", regexp.MustCompile(`'\[[^]]*\]'`).ReplaceAllString(p, "V"))
	}
	hits, err := s.Search(ctx, knowledge.Query{Theme: "t", Vector: q.Vector, K: 5, Mode: knowledge.SearchVector})
	if err != nil || len(hits) != 5 {
		t.Fatalf("search: %d hits, %v", len(hits), err)
	}
	if strings.Contains(vectorQuery(hnswMaxDims+1), "halfvec") {
		t.Errorf("above %d dimensions the query orders by halfvec: %s", hnswMaxDims, vectorQuery(hnswMaxDims+1))
	}
}

// postingRows returns every kb_lex_posting row of the store, data included,
// one line each in key order.
func postingRows(t *testing.T, s *Store) []string {
	t.Helper()
	rows, err := s.pool.Query(context.Background(), `SELECT term, theme, first, last, n, maxtf, minlen, encode(data, 'hex') FROM kb_lex_posting ORDER BY term COLLATE "C", theme COLLATE "C", first`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var term, theme, data string
		var first, last int64
		var n, maxtf, minlen int
		if err := rows.Scan(&term, &theme, &first, &last, &n, &maxtf, &minlen, &data); err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%s %s %d %d %d %d %d %s", term, theme, first, last, n, maxtf, minlen, data))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestBulkLoadKnowsLastRows: during a bulk load each write reads only the
// last posting rows of terms the load has not written or read before (a
// write into a theme without chunks reads none), and another writer of the
// theme, or a replaced document, makes the next write read them again. The
// posting rows, and so lexical search, are exactly those of the same
// writes made without a bulk load.
func TestBulkLoadKnowsLastRows(t *testing.T) {
	ctx := context.Background()
	c := storetest.NewCorpus(storetest.Zipf, "t", 1500, 15, 16, 41)
	info := knowledge.EmbeddingInfo{Model: "synthetic", Dimensions: 16}
	// The same writes into two stores: docs 0-29 by the first process,
	// doc 30 by a second one, 31-59 by the first again, then doc 5
	// replaced (its text changed) and 60-99 by the first.
	changed := c.Docs[5]
	changed.Doc.ContentHash += "-2"
	changed.Chunks = append([]chunk.Chunk(nil), changed.Chunks...)
	for i := range changed.Chunks {
		changed.Chunks[i].Text += " 新加的字 appended words"
	}
	type step struct {
		d     storetest.SyntheticDoc
		other bool
	}
	var steps []step
	for i, d := range c.Docs[:100] {
		if i == 60 {
			steps = append(steps, step{d: changed})
		}
		steps = append(steps, step{d: d, other: i == 30})
	}
	run := func(bulk bool) (*Store, []int64) {
		s := openFreshURL(t, testURL(t))
		t.Cleanup(func() { s.Close() })
		other := openFreshURLInSchema(t, s)
		t.Cleanup(func() { other.Close() })
		finish := func(context.Context) error { return nil }
		if bulk {
			var err error
			if finish, err = s.BeginBulk(ctx, knowledge.BulkOptions{Chunks: 1500}); err != nil {
				t.Fatal(err)
			}
		}
		reads := make([]int64, len(steps))
		for i, st := range steps {
			w := s
			if st.other {
				w = other
			}
			before := s.tailReads.Load()
			if err := w.ReplaceDocument(ctx, st.d.Doc, st.d.Chunks, st.d.Vectors, info); err != nil {
				t.Fatal(err)
			}
			reads[i] = s.tailReads.Load() - before
		}
		if err := finish(ctx); err != nil {
			t.Fatal(err)
		}
		return s, reads
	}
	live, liveReads := run(false)
	bulk, bulkReads := run(true)
	// Without a bulk load every write after the first reads its terms'
	// last rows; in one, the first write (empty theme) reads none, nor do
	// the writes after it until the other process writes (step 30) and doc
	// 5 is replaced (step 60): the next write reads its terms again.
	for i, n := range liveReads {
		if i > 0 && !steps[i].other && n == 0 {
			t.Fatalf("live step %d read no last rows", i)
		}
	}
	var liveSum, bulkSum int64
	for i := range steps {
		liveSum += liveReads[i]
		bulkSum += bulkReads[i]
		switch {
		case i <= 30 && bulkReads[i] != 0:
			t.Fatalf("bulk step %d read %d last rows; before the other writer none are read", i, bulkReads[i])
		case (i == 31 || i == 61) && bulkReads[i] == 0:
			t.Fatalf("bulk step %d read no last rows after another writer or a replacement", i)
		}
	}
	t.Logf("last rows read: %d live, %d in the bulk load", liveSum, bulkSum)
	if bulkSum*2 > liveSum {
		t.Fatalf("the bulk load read %d last rows, the live writes %d: want at most half", bulkSum, liveSum)
	}
	want, got := postingRows(t, live), postingRows(t, bulk)
	if len(want) == 0 || strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("posting rows after the bulk load (%d) differ from the live writes' (%d)", len(got), len(want))
	}
	checkLexIndex(t, bulk)
	for _, q := range queries(c, 20) {
		q.K, q.Mode = 10, knowledge.SearchLexical
		w, err := live.Search(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		g, err := bulk.Search(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		sameHits(t, q.Text, g, w)
	}
	if bulk.lexTails != nil {
		t.Fatalf("the bulk load's cache outlived it: %d themes", len(bulk.lexTails))
	}
	// Four writers of the theme in one process during a bulk load, and one
	// in another: the rows hold exactly the chunks' postings.
	s := openFreshURL(t, testURL(t))
	defer s.Close()
	other := openFreshURLInSchema(t, s)
	defer other.Close()
	finish, err := s.BeginBulk(ctx, knowledge.BulkOptions{Chunks: 1500})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 5)
	for w := range 5 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			st := s
			if w == 4 {
				st = other
			}
			for i := w; i < 100; i += 5 {
				d := c.Docs[i]
				if err := st.ReplaceDocument(ctx, d.Doc, d.Chunks, d.Vectors, info); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if err := finish(ctx); err != nil {
		t.Fatal(err)
	}
	checkLexIndex(t, s)
}
