package pgvector

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/vibelife/vibe/chunk"
	"github.com/vibelife/vibe/internal/testcorpus"
	"github.com/vibelife/vibe/knowledge"
	"github.com/vibelife/vibe/knowledge/lexical"
	"github.com/vibelife/vibe/knowledge/sqlite"
	"github.com/vibelife/vibe/knowledge/storetest"
)

// testURL returns the test database, skipping loudly when it is not
// configured, and failing under CI=true.
func testURL(t *testing.T) string {
	url := os.Getenv("VIBE_TEST_DATABASE_URL")
	if url == "" {
		msg := "VIBE_TEST_DATABASE_URL is not set: PostgreSQL store tests NOT RUN (run scripts/postgres.sh and source .vibe/test.env)"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip("*** " + msg + " ***")
	}
	return url
}

var schemaSeq atomic.Int64

func getenvURL() string { return os.Getenv("VIBE_TEST_DATABASE_URL") }

// openFresh opens the store in a fresh schema of the test database so
// subtests do not see each other's data.
func openFresh(t *testing.T) knowledge.Store { return openFreshURL(t, testURL(t)) }

func openFreshURL(t testing.TB, url string) *Store {
	t.Helper()
	ctx := context.Background()
	schema := fmt.Sprintf("vibe_test_%d_%d", os.Getpid(), schemaSeq.Add(1))
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatalf("connect %s: %v", url, err)
	}
	if _, err := conn.Exec(ctx, `CREATE SCHEMA `+schema); err != nil {
		t.Fatal(err)
	}
	conn.Close(ctx)
	t.Cleanup(func() {
		conn, err := pgx.Connect(ctx, url)
		if err == nil {
			conn.Exec(ctx, `DROP SCHEMA `+schema+` CASCADE`)
			conn.Close(ctx)
		}
	})
	s, err := Open(ctx, withSearchPath(url, schema))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func withSearchPath(url, schema string) string {
	sep := "?"
	for _, c := range url {
		if c == '?' {
			sep = "&"
		}
	}
	return url + sep + "search_path=" + schema + ",public"
}

func TestContract(t *testing.T) { storetest.Run(t, openFresh) }

// TestTSVectorMatchesServer checks that the tsvector the client builds
// (tsvectorOf) equals what the server's to_tsvector('simple', ...) makes of
// the same index tokens, on real Chinese and English text.
func TestTSVectorMatchesServer(t *testing.T) {
	ctx := context.Background()
	s := openFreshURL(t, testURL(t))
	defer s.Close()
	var texts []string
	for _, f := range []string{
		filepath.Join(testcorpus.Dir(t, "bazi"), "子平真诠.md"),
		filepath.Join(testcorpus.Dir(t, "html-expected"), "readability-wikipedia.expected.html"),
		filepath.Join(testcorpus.Dir(t, "html-expected"), "readability-qq.expected.html"),
	} {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(data), "\n") {
			if strings.TrimSpace(line) != "" && len(texts) < 2000 {
				texts = append(texts, line)
			}
		}
	}
	texts = append(texts, "", "x", strings.Repeat("甲乙", 9000), strings.Repeat("word ", 400), "ÀÉÎ ß Ωμέγα 123abc 007 ＡＢＣ")
	bad := 0
	for i, text := range texts {
		c := chunk.Chunk{Title: "子平真诠", HeadingPath: []string{"卷一", fmt.Sprintf("Section %d", i)}, Text: text}
		var same bool
		var server, client string
		tsv, n := tsvectorOf(c)
		if want := len(strings.Fields(lexical.IndexChunk(c))); n != want {
			t.Fatalf("text %d: length %d, want %d", i, n, want)
		}
		err := s.pool.QueryRow(ctx, `SELECT to_tsvector('simple', $1) = $2, to_tsvector('simple', $1)::text, $2::text`,
			lexical.IndexChunk(c), tsv).Scan(&same, &server, &client)
		if err != nil {
			t.Fatalf("text %d: %v", i, err)
		}
		if !same {
			if bad++; bad <= 3 {
				t.Errorf("text %d %.60q:\nserver %.300s\nclient %.300s", i, text, server, client)
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d texts differ", bad, len(texts))
	}
}

// TestThemeStatsFollowWrites: the per-theme BM25 statistics equal what the
// chunks table holds after replaces, a document moving themes, deletes and
// a failed write.
func TestThemeStatsFollowWrites(t *testing.T) {
	ctx := context.Background()
	s := openFreshURL(t, testURL(t))
	defer s.Close()
	check := func(when string) {
		t.Helper()
		var bad int
		err := s.pool.QueryRow(ctx, `
SELECT count(*) FROM (SELECT theme, count(*) AS c, sum(lex_len) AS t FROM kb_chunk GROUP BY theme) a
FULL JOIN (SELECT * FROM kb_theme_stats WHERE chunks > 0 OR tokens > 0) s USING (theme)
WHERE a.c IS DISTINCT FROM s.chunks OR a.t IS DISTINCT FROM s.tokens`).Scan(&bad)
		if err != nil || bad != 0 {
			t.Fatalf("%s: %d themes whose statistics differ from their chunks (%v)", when, bad, err)
		}
	}
	c := storetest.NewCorpus(storetest.Zipf, "a", 60, 20, 8, 2)
	storetest.Load(t, s, c.Docs, 8)
	check("after loading")
	info := knowledge.EmbeddingInfo{Model: "synthetic", Dimensions: 8}
	d := c.Docs[1]
	if err := s.ReplaceDocument(ctx, d.Doc, d.Chunks[:5], d.Vectors[:5], info); err != nil {
		t.Fatal(err)
	}
	check("after a shorter version")
	d.Doc.Theme = "b"
	if err := s.ReplaceDocument(ctx, d.Doc, d.Chunks, d.Vectors, info); err != nil {
		t.Fatal(err)
	}
	check("after the document moved themes")
	bad := d.Chunks[:2]
	bad[1].ID = bad[0].ID
	if err := s.ReplaceDocument(ctx, c.Docs[2].Doc, bad, d.Vectors[:2], info); err == nil {
		t.Fatal("duplicate chunk ids accepted")
	}
	check("after a failed write")
	if err := s.DeleteDocument(ctx, "a", c.Docs[0].Doc.ID); err != nil {
		t.Fatal(err)
	}
	check("after a delete")
}

// TestBM25MatchesSQLite: the PostgreSQL store's two-stage BM25 ranks a
// corpus like SQLite's FTS5 bm25 over the same chunks: the same top hits,
// with the same scores. Loading SQLite is about 60 times slower under -race
// (the test runs in one goroutine, so the detector adds nothing to it): there
// and under -short the corpus has 600 chunks, 3000 otherwise; `make test`
// runs both.
func TestBM25MatchesSQLite(t *testing.T) {
	ctx := context.Background()
	n, perDoc := 3000, 300
	if raceEnabled || testing.Short() {
		n, perDoc = 600, 100
	}
	pg := openFreshURL(t, testURL(t))
	defer pg.Close()
	lite, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "v.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer lite.Close()
	c := storetest.NewCorpus(storetest.Zipf, "t", n, perDoc, 8, 21)
	storetest.Load(t, pg, c.Docs, 8)
	storetest.Load(t, lite, c.Docs, 8)
	if _, err := pg.pool.Exec(ctx, `ANALYZE kb_chunk`); err != nil {
		t.Fatal(err)
	}
	var same, total, scored int
	var maxDiff float64
	for i := 0; i < 40; i++ {
		q := c.Query()
		q.Mode, q.K = knowledge.SearchLexical, 10
		a, err := pg.Search(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		b, err := lite.Search(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		score := map[string]float64{}
		for _, h := range b {
			score[h.Chunk.ID] = h.LexicalScore
		}
		for _, h := range a {
			if w, ok := score[h.Chunk.ID]; ok {
				same++
				scored++
				maxDiff = max(maxDiff, math.Abs(h.LexicalScore-w)/w)
			}
		}
		total += len(b)
	}
	t.Logf("%d chunks: top-10 agreement %d/%d, largest relative score difference %.4f", n, same, total, maxDiff)
	if float64(same) < 0.95*float64(total) || maxDiff > 0.02 {
		t.Errorf("PostgreSQL BM25 departs from FTS5: top-10 agreement %d/%d, largest relative score difference %.4f", same, total, maxDiff)
	}
}

// TestOpenTakesPoolOptions: a connection string carrying pgxpool's own
// options (pool_max_conns, pool_min_conns) opens the store and sizes its
// pool. The migration connection used to parse the URL as a lone
// connection, sending pool_max_conns to the server as a setting, which it
// refuses ("unrecognized configuration parameter"), so vibe serve could not
// be given more connections than pgxpool's default.
func TestOpenTakesPoolOptions(t *testing.T) {
	ctx := context.Background()
	url := testURL(t)
	schema := fmt.Sprintf("vibe_test_%d_%d", os.Getpid(), schemaSeq.Add(1))
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatalf("connect %s: %v", url, err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `CREATE SCHEMA `+schema); err != nil {
		t.Fatal(err)
	}
	defer conn.Exec(ctx, `DROP SCHEMA `+schema+` CASCADE`)
	s, err := Open(ctx, withSearchPath(url, schema)+"&pool_max_conns=7&pool_min_conns=1")
	if err != nil {
		t.Fatalf("open with pool options: %v", err)
	}
	defer s.Close()
	if got := s.pool.Config().MaxConns; got != 7 {
		t.Fatalf("pool_max_conns=7 gave a pool of %d connections", got)
	}
	if _, err := s.Documents(ctx, "any"); err != nil {
		t.Fatalf("a store opened with pool options does not answer: %v", err)
	}
}
