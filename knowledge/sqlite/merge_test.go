package sqlite

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vibelife/vibe/chunk"
	"github.com/vibelife/vibe/knowledge"
	"github.com/vibelife/vibe/knowledge/lexical"
	"github.com/vibelife/vibe/knowledge/storetest"
)

// answers is the JSON of the lexical top 10 of each query in each theme:
// ids and scores, compared byte for byte.
func answers(t *testing.T, s *Store, queries []string) string {
	t.Helper()
	var b strings.Builder
	for _, q := range queries {
		for _, theme := range []string{"t", "u"} {
			hits, idf, err := s.lexicalSearch(context.Background(), theme, q, 10, false)
			if err != nil {
				t.Fatal(err)
			}
			j, err := json.Marshal(struct {
				Hits []knowledge.Hit
				IDF  map[string]float64
			}{hits, idf})
			if err != nil {
				t.Fatal(err)
			}
			b.Write(j)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// inMerge returns the merges in progress.
func inMerge(t *testing.T, s *Store) []merge {
	t.Helper()
	rows, err := s.db.Query(`SELECT level, seg, last, term, theme FROM lex_merge ORDER BY level`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []merge
	for rows.Next() {
		var m merge
		if err := rows.Scan(&m.level, &m.seg, &m.last, &m.term, &m.theme); err != nil {
			t.Fatal(err)
		}
		out = append(out, m)
	}
	return out
}

// checkMerged checks that no merge is left to do: none in progress, no
// level holding segFanIn segments.
func checkMerged(t *testing.T, s *Store) {
	t.Helper()
	var full int
	if err := s.db.QueryRow(`SELECT count(*) FROM (SELECT level FROM lex_seg GROUP BY level HAVING count(*) >= ?)`, segFanIn).Scan(&full); err != nil {
		t.Fatal(err)
	}
	if m := inMerge(t, s); len(m) > 0 || full > 0 {
		t.Fatalf("merges left: %+v in progress, %d full levels", m, full)
	}
}

// TestIncrementalMerge: a write transaction's merges move at most
// mergeRows input rows; an index stopped after any number of merge steps
// (each its own transaction, as a crash would leave it) answers every
// query byte for byte as before them and keeps the index's invariants;
// deletes in the middle of a merge keep it exact; FinishIndex finishes it,
// and the index then holds what a store merged in one go holds.
func TestIncrementalMerge(t *testing.T) {
	ctx := context.Background()
	perDoc, nq := 4, 12
	if raceEnabled || testing.Short() {
		perDoc, nq = 2, 4
	}
	c := storetest.NewCorpus(storetest.Zipf, "t", 80*perDoc, perDoc, 8, 31)
	u := storetest.NewCorpus(storetest.Tiny, "u", 12*perDoc, perDoc, 8, 32)
	s, err := Open(ctx, filepath.Join(t.TempDir(), "vibe.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// Each group of rows a step moves is one (term, theme)'s of segFanIn
	// segments of at most 64 documents of perDoc chunks: a row each, at
	// most segFanIn rows; a bound of 40 cuts merges into many steps.
	const bound = 40
	s.mergeRows = bound
	var txs, cut, most int
	s.onMerge = func(n int) {
		txs++
		most = max(most, n)
		if n >= bound-segFanIn {
			cut++
		}
	}
	sawMerge := false
	info := knowledge.EmbeddingInfo{Model: "synthetic", Dimensions: 8}
	for i, d := range c.Docs {
		if err := s.ReplaceDocument(ctx, d.Doc, d.Chunks, d.Vectors, info); err != nil {
			t.Fatal(err)
		}
		if i < len(u.Docs) {
			if err := s.ReplaceDocument(ctx, u.Docs[i].Doc, u.Docs[i].Chunks, u.Docs[i].Vectors, info); err != nil {
				t.Fatal(err)
			}
		}
		if len(inMerge(t, s)) > 0 {
			sawMerge = true
		}
	}
	if most > bound || !sawMerge || cut == 0 {
		t.Fatalf("%d write transactions: most rows merged in one %d (bound %d), %d at the bound, a merge seen across writes: %v", txs, most, bound, cut, sawMerge)
	}
	checkLexIndex(t, s)
	var queries []string
	for i := 0; i < nq; i++ {
		q := c.Query()
		if i%3 == 0 {
			q = u.Query()
		}
		queries = append(queries, q.Text)
	}
	exact := func(stage string) {
		t.Helper()
		for _, q := range queries {
			for _, theme := range []string{"t", "u"} {
				got, _, err := s.lexicalSearch(ctx, theme, q, 10, false)
				if err != nil {
					t.Fatal(err)
				}
				sameRanking(t, fmt.Sprintf("%s %s %q", stage, theme, q), got, exhaustiveBM25(t, s, theme, lexical.QueryTokens(q)), 10)
			}
		}
	}
	exact("written")
	want := answers(t, s, queries)

	// Step by step, as a crash or a cancelled ingest would stop it.
	steps, deleted := 0, false
	checkAt, next := 1, 1
	for {
		n, err := s.mergeTx(ctx, bound)
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			break
		}
		steps++
		if n > bound {
			t.Fatalf("step %d moved %d rows, bound %d", steps, n, bound)
		}
		if steps != checkAt {
			continue
		}
		// Checked after steps 1, 2, 3, 5, 8, 13, ... (checking the whole
		// index after each of hundreds of steps takes minutes).
		checkAt, next = checkAt+next, checkAt
		checkLexIndex(t, s)
		if got := answers(t, s, queries); got != want {
			t.Fatalf("after %d merge steps the answers differ:\n%s\nbefore:\n%s", steps, got, want)
		}
		ms := inMerge(t, s)
		if deleted || len(ms) == 0 || ms[0].term == "" {
			continue
		}
		// In the middle of a merge: delete a document of its first
		// segment and one of a later input, and replace one.
		m := ms[0]
		var ids []string
		rows, err := s.db.Query(`SELECT DISTINCT c.doc_id FROM chunks c JOIN lex_seg g ON c.lex_num BETWEEN g.lo AND g.hi WHERE g.seg BETWEEN ? AND ? ORDER BY g.seg, c.lex_num`, m.seg, m.last)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				t.Fatal(err)
			}
			ids = append(ids, id)
		}
		rows.Close()
		if len(ids) < 3 {
			continue
		}
		for _, id := range []string{ids[0], ids[len(ids)-1]} {
			var th string
			if err := s.db.QueryRow(`SELECT theme FROM documents WHERE id = ?`, id).Scan(&th); err != nil {
				t.Fatal(err)
			}
			if err := s.DeleteDocument(ctx, th, id); err != nil {
				t.Fatal(err)
			}
		}
		d := c.Docs[len(c.Docs)/2]
		d.Doc.ContentHash += "x"
		if err := s.ReplaceDocument(ctx, d.Doc, d.Chunks[:1], d.Vectors[:1], info); err != nil {
			t.Fatal(err)
		}
		deleted = true
		checkLexIndex(t, s)
		exact("deleted in a merge")
		want = answers(t, s, queries)
	}
	t.Logf("%d write transactions, %d at the bound; %d merge steps after", txs, cut, steps)
	if steps < 2 || !deleted {
		t.Fatalf("%d merge steps after the writes (deletes in a merge: %v); the test wants a merge cut into several", steps, deleted)
	}
	checkMerged(t, s)
	checkLexIndex(t, s)
	exact("merged")

	// The same documents written with merges unbounded hold the same
	// segments.
	one, err := Open(ctx, filepath.Join(t.TempDir(), "vibe.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer one.Close()
	one.mergeRows = 1 << 30
	var docs []string
	rows, err := s.db.Query(`SELECT id FROM documents ORDER BY (SELECT min(lex_num) FROM chunks WHERE doc_id = documents.id)`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id string
		rows.Scan(&id)
		docs = append(docs, id)
	}
	rows.Close()
	byID := map[string]storetest.SyntheticDoc{}
	for _, d := range append(append([]storetest.SyntheticDoc(nil), c.Docs...), u.Docs...) {
		byID[d.Doc.ID] = d
	}
	for _, id := range docs {
		d := byID[id]
		chunks := d.Chunks
		var n int
		if err := s.db.QueryRow(`SELECT count(*) FROM chunks WHERE doc_id = ?`, id).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if err := one.ReplaceDocument(ctx, d.Doc, chunks[:n], d.Vectors[:n], info); err != nil {
			t.Fatal(err)
		}
	}
	checkMerged(t, one)
	checkLexIndex(t, one)
	var a, b int
	s.db.QueryRow(`SELECT count(*) FROM lex_seg`).Scan(&a)
	one.db.QueryRow(`SELECT count(*) FROM lex_seg`).Scan(&b)
	if a > b+segFanIn || b > a+segFanIn {
		t.Fatalf("%d segments after bounded merges, %d after unbounded ones", a, b)
	}
}

// TestIngestFinishesAnInterruptedMerge: an ingest cancelled in the middle
// of FinishIndex leaves a merge in progress, which searches read exactly;
// the next ingest, with nothing to write, finishes it.
func TestIngestFinishesAnInterruptedMerge(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	s, err := Open(ctx, filepath.Join(root, "vibe.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.mergeRows = 40
	c := storetest.NewCorpus(storetest.Zipf, "t", 40*3, 3, 8, 41)
	for i, d := range c.Docs {
		var b strings.Builder
		for _, ch := range d.Chunks {
			fmt.Fprintf(&b, "## %s\n\n%s\n\n", ch.ID, ch.Text)
		}
		storetest.WriteConverted(t, root, "t", fmt.Sprintf("d%03d", i), b.String(), false)
	}
	sp, err := chunk.New(chunk.Options{MaxTokens: 256})
	if err != nil {
		t.Fatal(err)
	}
	opts := knowledge.IngestOptions{Theme: "t", Root: root, ConvertedDir: filepath.Join(root, "knowledge", "t", "converted"), Splitter: sp, Embedder: hashEmbedder{}}
	// Cancelled after the 3rd transaction of FinishIndex.
	cctx, cancel := context.WithCancel(ctx)
	finishing := 0
	writes := 0
	s.onMerge = func(int) {
		writes++
		if writes > len(c.Docs) {
			if finishing++; finishing == 3 {
				cancel()
			}
		}
	}
	if _, err := knowledge.Ingest(cctx, s, opts); err == nil {
		t.Fatal("the cancelled ingest returned no error")
	}
	if len(inMerge(t, s)) == 0 {
		t.Fatal("no merge in progress after the cancelled ingest; the test wants one")
	}
	checkLexIndex(t, s)
	for i := 0; i < 8; i++ {
		q := c.Query()
		got, _, err := s.lexicalSearch(ctx, "t", q.Text, 10, false)
		if err != nil {
			t.Fatal(err)
		}
		sameRanking(t, q.Text, got, exhaustiveBM25(t, s, "t", lexical.QueryTokens(q.Text)), 10)
	}
	s.onMerge = nil
	rep, err := knowledge.Ingest(ctx, s, opts)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Added+rep.Updated != 0 {
		t.Fatalf("the second ingest wrote %d documents, want none", rep.Added+rep.Updated)
	}
	checkMerged(t, s)
	checkLexIndex(t, s)
}

// hashEmbedder is an 8-dimension embedder of token hashes.
type hashEmbedder struct{}

func (hashEmbedder) Model() string   { return "hash8" }
func (hashEmbedder) Dimensions() int { return 8 }
func (hashEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		v := make([]float32, 8)
		for _, tok := range lexical.Tokens(t) {
			v[len(tok)%8]++
		}
		v[0]++
		out[i] = v
	}
	return out, nil
}

// segLevels returns the segments' levels in segment order.
func segLevels(t *testing.T, s *Store) []int64 {
	t.Helper()
	rows, err := s.db.Query(`SELECT level FROM lex_seg ORDER BY seg`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []int64
	for rows.Next() {
		var l int64
		if err := rows.Scan(&l); err != nil {
			t.Fatal(err)
		}
		out = append(out, l)
	}
	return out
}

// TestFullMergeAfterBulkLoad: after a bulk load FinishIndex merges every
// segment into one, a bounded number of rows a transaction; stopped in the
// middle, the index answers byte for byte as before, writes meanwhile are
// merged among themselves (never with segments inside the full merge)
// while their merge work goes on with it, deletes in the middle keep it
// exact, and FinishIndex then merges the documents written meanwhile in
// too. A document written later does not start another one.
func TestFullMergeAfterBulkLoad(t *testing.T) {
	ctx := context.Background()
	perDoc, nq := 3, 10
	if raceEnabled || testing.Short() {
		perDoc, nq = 2, 4
	}
	// 30 documents of t: segments of levels 1, 1, 1, 0 x 6 once merged.
	c := storetest.NewCorpus(storetest.Zipf, "t", 30*perDoc, perDoc, 8, 51)
	u := storetest.NewCorpus(storetest.Tiny, "u", 20*perDoc, perDoc, 8, 52)
	s, err := Open(ctx, filepath.Join(t.TempDir(), "vibe.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	info := knowledge.EmbeddingInfo{Model: "synthetic", Dimensions: 8}
	for _, d := range c.Docs {
		if err := s.ReplaceDocument(ctx, d.Doc, d.Chunks, d.Vectors, info); err != nil {
			t.Fatal(err)
		}
	}
	for {
		n, err := s.mergeTx(ctx, 1<<30)
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			break
		}
	}
	checkMerged(t, s)
	if got := segLevels(t, s); len(got) < 3 {
		t.Fatalf("segments of levels %v after the tiered merges; the test wants several", got)
	}
	var queries []string
	for i := 0; i < nq; i++ {
		q := c.Query()
		if i%3 == 0 {
			q = u.Query()
		}
		queries = append(queries, q.Text)
	}
	want := answers(t, s, queries)
	exact := func(stage string) {
		t.Helper()
		for _, q := range queries {
			for _, theme := range []string{"t", "u"} {
				got, _, err := s.lexicalSearch(ctx, theme, q, 10, false)
				if err != nil {
					t.Fatal(err)
				}
				sameRanking(t, fmt.Sprintf("%s %s %q", stage, theme, q), got, exhaustiveBM25(t, s, theme, lexical.QueryTokens(q)), 10)
			}
		}
	}

	started, err := s.startFullMerge(ctx)
	if err != nil || !started {
		t.Fatalf("no full merge started after a bulk load (%v)", err)
	}
	full := inMerge(t, s)[0]
	// A few steps, as a crash would leave it.
	for i := 0; i < 3; i++ {
		if _, err := s.mergeTx(ctx, 40); err != nil {
			t.Fatal(err)
		}
		checkLexIndex(t, s)
		if got := answers(t, s, queries); got != want {
			t.Fatalf("after %d steps of the full merge the answers differ:\n%s\nbefore:\n%s", i+1, got, want)
		}
	}
	if m := inMerge(t, s); len(m) != 1 || m[0].term == "" {
		t.Fatalf("merges %+v after three bounded steps; the test wants the full merge in the middle", m)
	}
	// Writes in the middle: 20 documents of u, segments of their own
	// after the full merge's, merged among themselves by their writes.
	for _, d := range u.Docs {
		if err := s.ReplaceDocument(ctx, d.Doc, d.Chunks, d.Vectors, info); err != nil {
			t.Fatal(err)
		}
		for _, m := range inMerge(t, s) {
			if m.seg != full.seg && m.seg <= full.last {
				t.Fatalf("a merge %+v started inside the full merge %+v", m, full)
			}
		}
	}
	// Deletes in the middle: a document of the first segment and one of
	// the last inside the full merge, and one replaced.
	for _, d := range []storetest.SyntheticDoc{c.Docs[0], c.Docs[len(c.Docs)-1]} {
		if err := s.DeleteDocument(ctx, "t", d.Doc.ID); err != nil {
			t.Fatal(err)
		}
	}
	d := c.Docs[len(c.Docs)/2]
	d.Doc.ContentHash += "x"
	if err := s.ReplaceDocument(ctx, d.Doc, d.Chunks[:1], d.Vectors[:1], info); err != nil {
		t.Fatal(err)
	}
	checkLexIndex(t, s)
	exact("written and deleted in a full merge")
	want = answers(t, s, queries)

	s.mergeRows = 40
	if err := s.FinishIndex(ctx); err != nil {
		t.Fatal(err)
	}
	checkMerged(t, s)
	checkLexIndex(t, s)
	exact("merged")
	if got := answers(t, s, queries); got != want {
		t.Fatalf("after the full merge the answers differ:\n%s\nbefore:\n%s", got, want)
	}
	// The writes in the middle (21 documents after the full merge's
	// segments) hold more than half of the merged segment's 29: merged
	// into it too.
	if got := segLevels(t, s); len(got) != 1 {
		t.Fatalf("segments of levels %v after FinishIndex, want one", got)
	}
	// A document more does not start another full merge.
	v := storetest.NewCorpus(storetest.Zipf, "v", perDoc, perDoc, 8, 53)
	if err := s.ReplaceDocument(ctx, v.Docs[0].Doc, v.Docs[0].Chunks, v.Docs[0].Vectors, info); err != nil {
		t.Fatal(err)
	}
	if err := s.FinishIndex(ctx); err != nil {
		t.Fatal(err)
	}
	if got := segLevels(t, s); len(got) != 2 {
		t.Fatalf("segments of levels %v after one more document, want two", got)
	}
	checkLexIndex(t, s)
	exact("one more")
}
