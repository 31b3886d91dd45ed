package pgvector

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/vibelife/vibe/chunk"
	"github.com/vibelife/vibe/knowledge"
	"github.com/vibelife/vibe/knowledge/lexical"
	"github.com/vibelife/vibe/knowledge/lexindex"
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

// checkLexIndex checks the lexical index against the stored chunks: each
// theme's rows hold exactly the postings of its chunks' tokens, in rows
// that do not overlap and whose figures match their postings; kb_lex_doc
// and kb_theme_stats count the chunks and tokens there are, and every
// theme's next number is above its chunks'.
func checkLexIndex(t *testing.T, s *Store) {
	t.Helper()
	ctx := context.Background()
	type key struct{ theme, term string }
	want := map[key][]lexindex.Posting{}
	docs := map[string][2]int64{}
	themes := map[string][2]int64{}
	top := map[string]int64{}
	rows, err := s.pool.Query(ctx, `SELECT theme, lex_num, `+chunkCols+` FROM kb_chunk ORDER BY theme, lex_num`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var theme string
		var num int64
		var c chunk.Chunk
		if err := rows.Scan(&theme, &num, &c.ID, &c.Doc, &c.Source, &c.Title, &c.HeadingPath, &c.Start, &c.End, &c.Ordinal, &c.Text, &c.Tokens); err != nil {
			t.Fatal(err)
		}
		toks := lexical.ChunkTokens(c)
		terms, lists := lexindex.Postings(num, [][]string{toks})
		for i, term := range terms {
			want[key{theme, term}] = append(want[key{theme, term}], lists[i]...)
		}
		d, th := docs[c.Doc], themes[theme]
		docs[c.Doc] = [2]int64{d[0] + 1, d[1] + int64(len(toks))}
		themes[theme] = [2]int64{th[0] + 1, th[1] + int64(len(toks))}
		top[theme] = num
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	got := map[key][]lexindex.Posting{}
	rows, err = s.pool.Query(ctx, `SELECT theme, term, first, last, n, maxtf, minlen, data FROM kb_lex_posting ORDER BY theme, term, first`)
	if err != nil {
		t.Fatal(err)
	}
	var prev lexindex.Row
	var prevKey key
	for rows.Next() {
		var k key
		var r lexindex.Row
		if err := rows.Scan(&k.theme, &k.term, &r.First, &r.Last, &r.N, &r.MaxTF, &r.MinLen, &r.Data); err != nil {
			t.Fatal(err)
		}
		if k == prevKey && r.First <= prev.Last {
			t.Fatalf("%v: row at %d overlaps the one ending at %d", k, r.First, prev.Last)
		}
		ps, err := r.Decode(nil)
		if err != nil {
			t.Fatalf("%v: %v", k, err)
		}
		mtf, mlen := 0, math.MaxInt
		for _, p := range ps {
			mtf, mlen = max(mtf, int(p.TF)), min(mlen, int(p.Len))
		}
		if r.N == 0 || r.N > lexindex.RowSize || ps[0].Num != r.First || ps[len(ps)-1].Num != r.Last || mtf != r.MaxTF || mlen != r.MinLen {
			t.Fatalf("%v: row %+v does not match its postings", k, r)
		}
		got[k] = append(got[k], ps...)
		prev, prevKey = r, k
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("the index holds %d terms, the chunks %d", len(got), len(want))
	}
	for k, ps := range want {
		if !reflect.DeepEqual(got[k], ps) {
			t.Fatalf("%v: index postings %v, the chunks' %v", k, got[k], ps)
		}
	}
	count := func(q string, want map[string][2]int64) {
		t.Helper()
		rows, err := s.pool.Query(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		seen := 0
		for rows.Next() {
			var id string
			var n, toks int64
			if err := rows.Scan(&id, &n, &toks); err != nil {
				t.Fatal(err)
			}
			if w := want[id]; n != w[0] || toks != w[1] {
				t.Fatalf("%s: %s counts %d chunks %d tokens, the chunks %v", q, id, n, toks, w)
			}
			if n > 0 {
				seen++
			}
		}
		if seen != len(want) {
			t.Fatalf("%s: %d rows with chunks, want %d", q, seen, len(want))
		}
	}
	count(`SELECT doc_id, chunks, tokens FROM kb_lex_doc`, docs)
	count(`SELECT theme, chunks, tokens FROM kb_theme_stats`, themes)
	var bad int
	if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM kb_document d LEFT JOIN kb_lex_doc l ON l.doc_id = d.id WHERE l.doc_id IS NULL OR l.theme <> d.theme`).Scan(&bad); err != nil || bad > 0 {
		t.Fatalf("%d documents without their kb_lex_doc row (%v)", bad, err)
	}
	for theme, num := range top {
		var next int64
		if err := s.pool.QueryRow(ctx, `SELECT next_num FROM kb_theme_stats WHERE theme = $1`, theme).Scan(&next); err != nil || next <= num {
			t.Fatalf("theme %s: next number %d, a chunk has %d (%v)", theme, next, num, err)
		}
	}
}

// TestLexIndexFollowsWrites: the lexical index and the BM25 statistics
// equal what the chunks hold after replaces, a document moving themes, an
// empty document, deletes and a failed write.
func TestLexIndexFollowsWrites(t *testing.T) {
	ctx := context.Background()
	s := openFreshURL(t, testURL(t))
	defer s.Close()
	c := storetest.NewCorpus(storetest.Zipf, "a", 600, 100, 8, 2)
	storetest.Load(t, s, c.Docs, 8)
	checkLexIndex(t, s)
	info := knowledge.EmbeddingInfo{Model: "synthetic", Dimensions: 8}
	d := c.Docs[1]
	if err := s.ReplaceDocument(ctx, d.Doc, d.Chunks[:5], d.Vectors[:5], info); err != nil {
		t.Fatal(err)
	}
	checkLexIndex(t, s)
	d.Doc.Theme = "b"
	if err := s.ReplaceDocument(ctx, d.Doc, d.Chunks, d.Vectors, info); err != nil {
		t.Fatal(err)
	}
	checkLexIndex(t, s)
	if err := s.ReplaceDocument(ctx, c.Docs[3].Doc, nil, nil, info); err != nil {
		t.Fatal(err)
	}
	checkLexIndex(t, s)
	bad := append([]chunk.Chunk(nil), d.Chunks[:2]...)
	bad[1].ID = bad[0].ID
	if err := s.ReplaceDocument(ctx, c.Docs[2].Doc, bad, d.Vectors[:2], info); err == nil {
		t.Fatal("duplicate chunk ids accepted")
	}
	checkLexIndex(t, s)
	for _, id := range []string{c.Docs[0].Doc.ID, c.Docs[4].Doc.ID, c.Docs[3].Doc.ID, d.Doc.ID} {
		if err := s.DeleteDocument(ctx, "a", id); err != nil {
			t.Fatal(err)
		}
		checkLexIndex(t, s)
	}
	// The rest rewritten: every row is appended to again.
	for _, d := range c.Docs[5:] {
		if err := s.ReplaceDocument(ctx, d.Doc, d.Chunks, d.Vectors, info); err != nil {
			t.Fatal(err)
		}
	}
	checkLexIndex(t, s)
}

// TestBM25MatchesSQLite: the PostgreSQL store's lexical search ranks a
// corpus as the SQLite store's does over the same chunks, both being
// lexindex over the whole store's statistics (FTS5's bm25): the same hits
// in the same order, scores equal to 1e-9, with two more themes in both
// stores and after a document of one is deleted. Loading SQLite is about 60
// times slower under -race (the test runs in one goroutine, so the
// detector adds nothing to it): there and under -short the corpus has 600
// chunks, 3000 otherwise; `make test` runs both.
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
	// Themes named before and after t: the document frequencies of both
	// count.
	o := storetest.NewCorpus(storetest.Zipf, "other", 300, 50, 8, 22)
	u := storetest.NewCorpus(storetest.Zipf, "u", 150, 50, 8, 23)
	for _, s := range []knowledge.Store{pg, lite} {
		storetest.Load(t, s, c.Docs, 8)
		storetest.Load(t, s, o.Docs, 8)
		storetest.Load(t, s, u.Docs, 8)
	}
	compare := func(stage string) {
		t.Helper()
		hits := 0
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
			if len(a) != len(b) {
				t.Fatalf("%s %q: %d hits, SQLite %d", stage, q.Text, len(a), len(b))
			}
			for j := range a {
				if a[j].Chunk.ID != b[j].Chunk.ID || math.Abs(a[j].LexicalScore-b[j].LexicalScore) > 1e-9 {
					t.Fatalf("%s %q: hit %d is %s %.12f, SQLite's %s %.12f", stage, q.Text, j+1,
						a[j].Chunk.ID, a[j].LexicalScore, b[j].Chunk.ID, b[j].LexicalScore)
				}
			}
			hits += len(a)
		}
		if hits == 0 {
			t.Fatalf("%s: no hits at all", stage)
		}
	}
	compare("loaded")
	for _, s := range []knowledge.Store{pg, lite} {
		if err := s.DeleteDocument(ctx, "other", o.Docs[1].Doc.ID); err != nil {
			t.Fatal(err)
		}
	}
	compare("after a delete in the other theme")
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

// A database a newer vibe migrated is refused, naming the database and
// schema, both versions and what to do; nothing of it is changed.
func TestOpenRefusesNewerSchema(t *testing.T) {
	ctx := context.Background()
	url := testURL(t)
	s := openFreshURL(t, url)
	newer := knownVersion() + 1
	if _, err := s.pool.Exec(ctx, `INSERT INTO schema_migrations(version, name) VALUES ($1, 'from the future')`, newer); err != nil {
		t.Fatal(err)
	}
	schema := s.schemaName
	s.Close()
	_, err := Open(ctx, withSearchPath(url, schema))
	if !errors.Is(err, knowledge.ErrSchemaNewer) {
		t.Fatalf("Open of a version %d database = %v, want ErrSchemaNewer", newer, err)
	}
	for _, want := range []string{`"` + schema + `"`, "vibe_test", fmt.Sprintf("schema version %d", newer), fmt.Sprintf("(%d)", knownVersion()), "upgrade vibe"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	conn, err := pgx.Connect(ctx, withSearchPath(url, schema))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `DELETE FROM schema_migrations WHERE version = $1`, newer); err != nil {
		t.Fatal(err)
	}
	s2, err := Open(ctx, withSearchPath(url, schema))
	if err != nil {
		t.Fatalf("Open at the known version: %v", err)
	}
	s2.Close()
}
