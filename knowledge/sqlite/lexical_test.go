package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/vibelife/vibe/chunk"
	"github.com/vibelife/vibe/knowledge"
	"github.com/vibelife/vibe/knowledge/lexical"
	"github.com/vibelife/vibe/knowledge/lexindex"
	"github.com/vibelife/vibe/knowledge/storetest"
)

// exhaustiveBM25 ranks every chunk of the theme by FTS5's BM25 over toks,
// the statistics being the whole store's (as FTS5's table-wide ones were),
// computed from the chunks' text alone (not from the index): the reference
// the lexical search is held to. Equal scores are in chunk id order.
func exhaustiveBM25(t *testing.T, s *Store, theme string, toks []string) []knowledge.Hit {
	t.Helper()
	var chunks []chunk.Chunk
	var themes []string
	rows, err := s.db.Query(`SELECT theme, ` + chunkCols + ` FROM chunks`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var th, hp string
		var c chunk.Chunk
		if err := rows.Scan(&th, &c.ID, &c.Doc, &c.Source, &c.Title, &hp, &c.Start, &c.End, &c.Ordinal, &c.Text, &c.Tokens); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(hp), &c.HeadingPath); err != nil {
			t.Fatal(err)
		}
		chunks, themes = append(chunks, c), append(themes, th)
	}
	rows.Close()
	var total int
	tfs := make([]map[string]int, len(chunks))
	lens := make([]int, len(chunks))
	df := map[string]int64{}
	for i, c := range chunks {
		ts := lexical.ChunkTokens(c)
		lens[i] = len(ts)
		total += len(ts)
		tfs[i] = map[string]int{}
		for _, tok := range ts {
			tfs[i][tok]++
		}
		for tok := range tfs[i] {
			df[tok]++
		}
	}
	n := float64(len(chunks))
	avgdl := float64(total) / n
	var out []knowledge.Hit
	for i, c := range chunks {
		if themes[i] != theme {
			continue
		}
		var score float64
		for _, tok := range toks {
			tf := float64(tfs[i][tok])
			if tf == 0 {
				continue
			}
			idf := math.Log((n - float64(df[tok]) + 0.5) / (float64(df[tok]) + 0.5))
			if idf <= 0 {
				idf = 1e-6
			}
			score += idf * (tf * 2.2) / (tf + 1.2*(0.25+0.75*float64(lens[i])/avgdl))
		}
		if score > 0 {
			out = append(out, knowledge.Hit{Chunk: chunk.Chunk{ID: c.ID}, LexicalScore: score})
		}
	}
	sort.Slice(out, func(a, b int) bool {
		if out[a].LexicalScore != out[b].LexicalScore {
			return out[a].LexicalScore > out[b].LexicalScore
		}
		return out[a].Chunk.ID < out[b].Chunk.ID
	})
	return out
}

// sameRanking fails unless got is the first len(want) or k hits of want:
// the same chunk ids in the same order, scores within 1e-9.
func sameRanking(t *testing.T, label string, got, want []knowledge.Hit, k int) {
	t.Helper()
	want = want[:min(k, len(want))]
	if len(got) != len(want) {
		t.Fatalf("%s: %d hits, exhaustive BM25 %d", label, len(got), len(want))
	}
	for i := range got {
		if got[i].Chunk.ID != want[i].Chunk.ID || math.Abs(got[i].LexicalScore-want[i].LexicalScore) > 1e-9 {
			t.Fatalf("%s: hit %d is %s %.12f, exhaustive BM25 %s %.12f", label, i+1,
				got[i].Chunk.ID, got[i].LexicalScore, want[i].Chunk.ID, want[i].LexicalScore)
		}
	}
}

// TestLexicalTopKMatchesExhaustiveBM25 compares the lexical search, which
// scores only the stretches of the index whose bound can reach the k-th
// best, with BM25 computed over every chunk from its text: the same top 10
// (ids, order, ties by chunk id) and scores to 1e-9, on the worst-case
// corpus where every query token is in most chunks and on the realistic
// one, before and after deleting and replacing documents.
//
// The test runs in one goroutine, so the race detector adds nothing to it
// but a large slowdown of the pure-Go SQLite: under -race (and -short) it
// runs on 600 chunks, at full size (3000) otherwise.
func TestLexicalTopKMatchesExhaustiveBM25(t *testing.T) {
	ctx := context.Background()
	n, perDoc := 3000, 500
	if raceEnabled || testing.Short() {
		n, perDoc = 600, 100
	}
	for _, kind := range storetest.Kinds {
		t.Run(string(kind), func(t *testing.T) {
			t.Parallel() // each kind has its own database
			s, err := Open(ctx, filepath.Join(t.TempDir(), "v.db"))
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			c := storetest.NewCorpus(kind, "t", n, perDoc, 8, 11)
			storetest.Load(t, s, c.Docs, 8)
			// Another theme in the same store changes nothing of t's.
			o := storetest.NewCorpus(kind, "other", 200, 50, 8, 12)
			storetest.Load(t, s, o.Docs, 8)
			check := func(stage string) {
				for i := 0; i < 30; i++ {
					q := c.Query()
					toks := lexical.QueryTokens(q.Text)
					got, _, err := s.lexicalSearch(ctx, "t", q.Text, 10, false)
					if err != nil {
						t.Fatal(err)
					}
					sameRanking(t, fmt.Sprintf("%s %q (%s)", stage, q.Text, strings.Join(toks, " ")), got, exhaustiveBM25(t, s, "t", toks), 10)
				}
			}
			check("loaded")
			// Replace the first document with chunks of the other theme's
			// first and delete the third.
			d0, d1 := c.Docs[0], o.Docs[0]
			var moved []chunk.Chunk
			for _, ch := range d1.Chunks[:len(d1.Chunks)/2] {
				ch.ID += "x"
				ch.Doc = d0.Doc.ID
				moved = append(moved, ch)
			}
			if err := s.ReplaceDocument(ctx, d0.Doc, moved, nil, knowledge.EmbeddingInfo{}); err != nil {
				t.Fatal(err)
			}
			if err := s.DeleteDocument(ctx, "t", c.Docs[2].Doc.ID); err != nil {
				t.Fatal(err)
			}
			checkLexIndex(t, s)
			check("rewritten")
		})
	}
}

// checkLexIndex checks the lexical index against the stored chunks: each
// theme's rows hold exactly the postings of its chunks' tokens, in rows
// that do not overlap and whose figures match their postings, and the
// counts of lex_doc and lex_theme are the chunks'.
func checkLexIndex(t *testing.T, s *Store) {
	t.Helper()
	ctx := context.Background()
	type key struct{ theme, term string }
	want := map[key][]lexindex.Posting{}
	docs := map[string][2]int64{}
	themes := map[string][2]int64{}
	rows, err := s.db.QueryContext(ctx, `SELECT theme, lex_num, doc_id, `+chunkCols+` FROM chunks ORDER BY lex_num`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var theme, docID string
		var num int64
		var c chunk.Chunk
		var hp string
		if err := rows.Scan(&theme, &num, &docID, &c.ID, &c.Doc, &c.Source, &c.Title, &hp, &c.Start, &c.End, &c.Ordinal, &c.Text, &c.Tokens); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(hp), &c.HeadingPath); err != nil {
			t.Fatal(err)
		}
		toks := lexical.ChunkTokens(c)
		terms, lists := lexindex.Postings(num, [][]string{toks})
		for i, term := range terms {
			want[key{theme, term}] = append(want[key{theme, term}], lists[i]...)
		}
		d, th := docs[docID], themes[theme]
		docs[docID] = [2]int64{d[0] + 1, d[1] + int64(len(toks))}
		themes[theme] = [2]int64{th[0] + 1, th[1] + int64(len(toks))}
	}
	rows.Close()
	got := map[key][]lexindex.Posting{}
	rows, err = s.db.QueryContext(ctx, `SELECT theme, term, first, last, n, maxtf, minlen, data FROM lex_posting ORDER BY theme, term, first`)
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
	if len(got) != len(want) {
		t.Fatalf("the index holds %d terms, the chunks %d", len(got), len(want))
	}
	for k, ps := range want {
		if !reflect.DeepEqual(got[k], ps) {
			t.Fatalf("%v: index postings %v, the chunks' %v", k, got[k], ps)
		}
	}
	count := func(q string, want map[string][2]int64) {
		rows, err := s.db.QueryContext(ctx, q)
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
	count(`SELECT doc_id, chunks, tokens FROM lex_doc`, docs)
	count(`SELECT theme, chunks, tokens FROM lex_theme`, themes)
	checkSegments(t, s)
}

// checkSegments checks the lexical index's segments: in segment order,
// their levels never grow and their chunk numbers follow each other's; each
// row lies in its segment's numbers; each segment counts the documents
// whose chunks it covers, and every document with chunks is in one. A merge
// in progress (lex_merge) is of segFanIn or fewer segments of its level at
// most, or of every segment from the first on (a full merge), one a level;
// its first segment's rows lie in the numbers of its
// inputs; the (term, theme)s it has moved have rows in its first segment
// only, the others none there beyond the first's own numbers.
func checkSegments(t *testing.T, s *Store) {
	t.Helper()
	var bad int
	if err := s.db.QueryRow(`SELECT count(*) FROM lex_posting p LEFT JOIN lex_seg g ON g.seg = p.seg
	LEFT JOIN lex_merge m ON m.seg = p.seg
	WHERE g.seg IS NULL OR p.first < g.lo OR p.last > CASE WHEN m.seg IS NULL THEN g.hi ELSE (SELECT max(hi) FROM lex_seg WHERE seg BETWEEN m.seg AND m.last) END`).Scan(&bad); err != nil || bad != 0 {
		t.Fatalf("%d posting rows outside their segment's numbers (%v)", bad, err)
	}
	merging := map[int64]bool{}
	mrows, err := s.db.Query(`SELECT level, seg, last, term, theme FROM lex_merge`)
	if err != nil {
		t.Fatal(err)
	}
	for mrows.Next() {
		var m merge
		if err := mrows.Scan(&m.level, &m.seg, &m.last, &m.term, &m.theme); err != nil {
			t.Fatal(err)
		}
		merging[m.seg] = true
		// A tiered merge: segFanIn or fewer of its level; a full one
		// (startFullMerge): from the first segment on, of its level or
		// below.
		var n, lower, higher int
		var firstLevel, lowest int64
		if err := s.db.QueryRow(`SELECT count(*), count(*) FILTER (WHERE level < ?1), count(*) FILTER (WHERE level > ?1),
	(SELECT level FROM lex_seg WHERE seg = ?2), (SELECT min(seg) FROM lex_seg) FROM lex_seg WHERE seg BETWEEN ?2 AND ?3`, m.level, m.seg, m.last).Scan(&n, &lower, &higher, &firstLevel, &lowest); err != nil ||
			higher != 0 || firstLevel != m.level || ((n > segFanIn || lower > 0) && m.seg != lowest) {
			t.Fatalf("merge %+v: %d segments, %d of a lower level, %d higher, the first of level %d, the lowest segment %d (%v)", m, n, lower, higher, firstLevel, lowest, err)
		}
		// Moved (term, theme)s: nothing left in the other inputs.
		if err := s.db.QueryRow(`SELECT count(*) FROM lex_posting WHERE seg > ? AND seg <= ? AND (term < ? OR (term = ? AND theme <= ?))`, m.seg, m.last, m.term, m.term, m.theme).Scan(&bad); err != nil || bad != 0 {
			t.Fatalf("merge %+v: %d rows of moved terms left in its inputs (%v)", m, bad, err)
		}
		// Not moved: nothing in the first beyond its own numbers.
		if err := s.db.QueryRow(`SELECT count(*) FROM lex_posting p JOIN lex_seg g ON g.seg = p.seg WHERE p.seg = ? AND (p.term > ? OR (p.term = ? AND p.theme > ?)) AND p.last > g.hi`, m.seg, m.term, m.term, m.theme).Scan(&bad); err != nil || bad != 0 {
			t.Fatalf("merge %+v: %d rows of terms not moved beyond its first segment's numbers (%v)", m, bad, err)
		}
	}
	mrows.Close()
	rows, err := s.db.Query(`SELECT g.seg, g.level, g.lo, g.hi, g.docs,
	(SELECT count(DISTINCT doc_id) FROM chunks WHERE lex_num BETWEEN g.lo AND g.hi) FROM lex_seg g ORDER BY g.seg`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var prevLevel, prevHi, total int64 = 1 << 62, 0, 0
	for rows.Next() {
		var seg, level, lo, hi, docs, held int64
		if err := rows.Scan(&seg, &level, &lo, &hi, &docs, &held); err != nil {
			t.Fatal(err)
		}
		if level > prevLevel || lo <= prevHi || hi < lo || docs != held || (docs <= 0 && !merging[seg]) {
			t.Fatalf("segment %d (level %d, numbers %d-%d, %d documents; %d hold chunks there) after level %d ending at %d", seg, level, lo, hi, docs, held, prevLevel, prevHi)
		}
		prevLevel, prevHi, total = level, hi, total+docs
	}
	var withChunks int64
	if err := s.db.QueryRow(`SELECT count(DISTINCT doc_id) FROM chunks`).Scan(&withChunks); err != nil || withChunks != total {
		t.Fatalf("segments hold %d documents, %d have chunks (%v)", total, withChunks, err)
	}
}

// TestLexicalSeesOtherProcessWrites: a second Store on the same file (as
// `vibe serve` while `vibe ingest` runs) sees new and removed chunks on its
// next search, on both sides, without reopening.
func TestLexicalSeesOtherProcessWrites(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "v.db")
	w, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	r, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	c := storetest.NewCorpus(storetest.Zipf, "t", 40, 20, 8, 3)
	storetest.Load(t, w, c.Docs[:1], 8)
	probe := c.Docs[1].Chunks[0]
	search := func() (vec, lex bool) {
		t.Helper()
		for _, mode := range []knowledge.SearchMode{knowledge.SearchVector, knowledge.SearchLexical} {
			hits, err := r.Search(ctx, knowledge.Query{Theme: "t", Text: probe.Text, Vector: c.Docs[1].Vectors[0], K: 3, Mode: mode})
			if err != nil {
				t.Fatal(err)
			}
			found := len(hits) > 0 && hits[0].Chunk.ID == probe.ID
			if mode == knowledge.SearchVector {
				vec = found
			} else {
				lex = found
			}
		}
		return vec, lex
	}
	if vec, lex := search(); vec || lex {
		t.Fatalf("found a chunk not yet written")
	}
	storetest.Load(t, w, c.Docs[1:], 8)
	if vec, lex := search(); !vec || !lex {
		t.Fatalf("after another store wrote it: vector found %v, lexical found %v", vec, lex)
	}
	if err := w.DeleteDocument(ctx, "t", c.Docs[1].Doc.ID); err != nil {
		t.Fatal(err)
	}
	if vec, lex := search(); vec || lex {
		t.Fatalf("after another store deleted it: vector found %v, lexical found %v", vec, lex)
	}
}

// TestLexicalSearchDuringWrites runs lexical searches while documents are
// replaced and deleted (run it with -race): every search succeeds, and
// the index matches the chunks at the end.
func TestLexicalSearchDuringWrites(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "v.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c := storetest.NewCorpus(storetest.Zipf, "t", 400, 20, 8, 5)
	storetest.Load(t, s, c.Docs[:10], 8)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := 0; g < 3; g++ {
		qs := make([]knowledge.Query, 40) // c.Query is not safe for concurrent use
		for i := range qs {
			qs[i] = c.Query()
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, q := range qs {
				if _, err := s.Search(ctx, knowledge.Query{Theme: "t", Text: q.Text, K: 10, Mode: knowledge.SearchLexical}); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	for i, d := range c.Docs[10:] {
		if err := s.ReplaceDocument(ctx, d.Doc, d.Chunks, d.Vectors, knowledge.EmbeddingInfo{Model: "synthetic", Dimensions: 8}); err != nil {
			t.Fatal(err)
		}
		if i%3 == 0 {
			if err := s.DeleteDocument(ctx, "t", c.Docs[i].Doc.ID); err != nil {
				t.Fatal(err)
			}
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	checkLexIndex(t, s)
}

// v11Store writes a store of schema version 11 (the lexical index's rows
// keyed by term, each document's postings appended to its terms' last
// rows, as the write path of that version did) holding docs, numbered
// from 1 in order, and returns its path.
func v11Store(t *testing.T, docs []storetest.SyntheticDoc) string {
	t.Helper()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "v11.db")
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=foreign_keys(1)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := migrateTo(ctx, db, 11); err != nil {
		t.Fatal(err)
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	type key struct{ term, theme string }
	last := map[key]int{} // the index in rows of each key's last row
	type keyed struct {
		key
		row lexindex.Row
	}
	var rows []keyed
	themes := map[string][2]int64{}
	num := int64(1)
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := tx.ExecContext(ctx, q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	for _, d := range docs {
		exec(`INSERT INTO documents(id, theme, source, title, content_hash, chunks, updated_at) VALUES (?,?,?,?,?,?,?)`,
			d.Doc.ID, d.Doc.Theme, d.Doc.Source, d.Doc.Title, d.Doc.ContentHash, len(d.Chunks), "2026-01-01T00:00:00Z")
		toks := make([][]string, len(d.Chunks))
		var total int64
		for i, c := range d.Chunks {
			hp, _ := json.Marshal(c.HeadingPath)
			exec(`INSERT INTO chunks(id, doc_id, theme, ordinal, source, title, heading_path, start_off, end_off, text, tokens, lex_num) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)`,
				c.ID, d.Doc.ID, d.Doc.Theme, c.Ordinal, c.Source, c.Title, string(hp), c.Start, c.End, c.Text, c.Tokens, num+int64(i))
			toks[i] = lexical.ChunkTokens(c)
			total += int64(len(toks[i]))
		}
		terms, lists := lexindex.Postings(num, toks)
		for i, term := range terms {
			k := key{term, d.Doc.Theme}
			var tail lexindex.Row
			j, ok := last[k]
			if ok {
				tail = rows[j].row
			}
			changed, more := lexindex.Append(tail, lists[i])
			if ok {
				rows[j].row = changed
			}
			for _, m := range more {
				last[k] = len(rows)
				rows = append(rows, keyed{k, m})
			}
		}
		exec(`INSERT INTO lex_doc(doc_id, theme, chunks, tokens, terms) VALUES (?,?,?,?,?)`, d.Doc.ID, d.Doc.Theme, len(d.Chunks), total, strings.Join(terms, " "))
		th := themes[d.Doc.Theme]
		themes[d.Doc.Theme] = [2]int64{th[0] + int64(len(d.Chunks)), th[1] + total}
		num += int64(len(d.Chunks))
	}
	for _, r := range rows {
		exec(`INSERT INTO lex_posting(term, theme, first, last, n, maxtf, minlen, data) VALUES (?,?,?,?,?,?,?,?)`,
			r.term, r.theme, r.row.First, r.row.Last, r.row.N, r.row.MaxTF, r.row.MinLen, r.row.Data)
	}
	for th, c := range themes {
		exec(`INSERT INTO lex_theme(theme, chunks, tokens) VALUES (?,?,?)`, th, c[0], c[1])
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestMigrateToLexSegments: a version 11 store's lexical index becomes one
// segment of the level its documents fill, searches rank as BM25 over the
// chunks' text, and documents written, replaced and deleted after the
// upgrade (enough for the migrated segment to be merged with new ones)
// keep the index exactly the chunks'.
//
// Under -race (and -short) the documents hold one chunk each and fewer
// queries are checked: the pure-Go SQLite is many times slower there.
func TestMigrateToLexSegments(t *testing.T) {
	ctx := context.Background()
	perDoc, queries := 4, 20
	if raceEnabled || testing.Short() {
		perDoc, queries = 1, 5
	}
	c := storetest.NewCorpus(storetest.Zipf, "t", 100*perDoc, perDoc, 8, 21)
	u := storetest.NewCorpus(storetest.Tiny, "u", 10*perDoc, perDoc, 8, 22)
	old := append(append([]storetest.SyntheticDoc(nil), c.Docs[:20]...), u.Docs...)
	s, err := Open(ctx, v11Store(t, old))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var segs, level, docs int
	if err := s.db.QueryRow(`SELECT count(*), max(level), sum(docs) FROM lex_seg`).Scan(&segs, &level, &docs); err != nil {
		t.Fatal(err)
	}
	if segs != 1 || level != 1 || docs != 30 {
		t.Fatalf("after the upgrade: %d segments, level %d, %d documents; want 1 of level 1 holding 30", segs, level, docs)
	}
	checkLexIndex(t, s)
	check := func(stage string) {
		t.Helper()
		for i := 0; i < queries; i++ {
			q := c.Query()
			if i%4 == 0 {
				q = u.Query()
			}
			toks := lexical.QueryTokens(q.Text)
			for _, theme := range []string{"t", "u"} {
				got, _, err := s.lexicalSearch(ctx, theme, q.Text, 10, false)
				if err != nil {
					t.Fatal(err)
				}
				sameRanking(t, fmt.Sprintf("%s %s %q", stage, theme, q.Text), got, exhaustiveBM25(t, s, theme, toks), 10)
			}
		}
	}
	check("migrated")
	// 65 writes (64 new documents and a migrated one replaced) make 8
	// level 1 segments: the first 7 and the migrated one merge into a level
	// 2 segment. A migrated document is deleted meanwhile.
	storetest.Load(t, s, c.Docs[20:50], 8)
	if err := s.DeleteDocument(ctx, "u", u.Docs[3].Doc.ID); err != nil {
		t.Fatal(err)
	}
	d := c.Docs[5]
	d.Doc.ContentHash += "x"
	if err := s.ReplaceDocument(ctx, d.Doc, d.Chunks[:(len(d.Chunks)+1)/2], nil, knowledge.EmbeddingInfo{}); err != nil {
		t.Fatal(err)
	}
	storetest.Load(t, s, c.Docs[50:84], 8)
	// The writes merge a bounded part each: what they left (a merge in
	// progress, maybe) is read as any index is, and FinishIndex (the end
	// of an ingest) does it.
	checkLexIndex(t, s)
	check("written")
	if err := s.FinishIndex(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.db.QueryRow(`SELECT count(*), max(level), sum(docs) FROM lex_seg`).Scan(&segs, &level, &docs); err != nil {
		t.Fatal(err)
	}
	if segs != 3 || level != 2 || docs != 30+64-1 {
		t.Fatalf("after 65 writes and a delete: %d segments, top level %d, %d documents; want 3 (levels 2, 1, 0), 93 documents", segs, level, docs)
	}
	checkLexIndex(t, s)
	check("merged")
}

// TermCounts counts a theme's own chunks and the chunks of it holding each
// token, whatever the other themes hold, after a search of the tokens (the
// cache) as before one.
func TestTermCountsPerTheme(t *testing.T) {
	ctx := context.Background()
	st, err := Open(ctx, filepath.Join(t.TempDir(), "vibe.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	// Each text is a document of its own (the later chunks of one document
	// without headings would hold its lead sentence, chunk.Subjects).
	put := func(theme string, texts ...string) {
		for i, x := range texts {
			id := fmt.Sprintf("%s%d", theme, i)
			cs := []chunk.Chunk{{ID: id, Doc: id, Source: "s", Text: x, Tokens: 3}}
			if err := st.ReplaceDocument(ctx, knowledge.Document{ID: id, Theme: theme, ContentHash: id}, cs, nil, knowledge.EmbeddingInfo{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	put("whale", "blubber and oil", "the try-works boil blubber", "a quiet sea")
	put("tea", "oil of bergamot", "oil lamps", "green tea", "black tea")
	toks := []string{"blubber", "oil", "tea", "猪肉"}
	for round := 0; round < 2; round++ {
		for theme, want := range map[string]knowledge.TermCounts{
			"whale": {Chunks: 3, DF: []int64{2, 1, 0, 0}},
			"tea":   {Chunks: 4, DF: []int64{0, 2, 2, 0}},
			"none":  {Chunks: 0, DF: []int64{0, 0, 0, 0}},
		} {
			got, err := st.TermCounts(ctx, theme, toks)
			if err != nil || !reflect.DeepEqual(got, want) {
				t.Errorf("round %d: TermCounts(%s) = %+v, %v; want %+v", round, theme, got, err, want)
			}
			if _, err := st.Search(ctx, knowledge.Query{Theme: theme, Text: strings.Join(toks, " "), Mode: knowledge.SearchLexical}); err != nil {
				t.Fatal(err)
			}
		}
	}
}
