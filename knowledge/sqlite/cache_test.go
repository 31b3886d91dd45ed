package sqlite

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/vibelife/vibe/chunk"
	"github.com/vibelife/vibe/knowledge"
	"github.com/vibelife/vibe/knowledge/embedding"
	"github.com/vibelife/vibe/knowledge/lexindex"
	"github.com/vibelife/vibe/knowledge/storetest"
)

// emptyCache forgets everything s's searches cached.
func emptyCache(s *Store) {
	s.rc.mu.Lock()
	s.rc.reset(-1)
	s.rc.mu.Unlock()
}

// TestSearchCacheKeepsHits checks that a search answered from the read
// cache returns what the same search reading the store returns, to the
// bit: sparse vectors (the local embedder's) and dense ones, each mode,
// the queries repeated so that the later ones are answered from the cache.
func TestSearchCacheKeepsHits(t *testing.T) {
	ctx := context.Background()
	local := embedding.NewLocal(256)
	for _, vectors := range []string{"sparse", "dense"} {
		t.Run(vectors, func(t *testing.T) {
			s, err := Open(ctx, filepath.Join(t.TempDir(), "v.db"))
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			c := storetest.NewCorpus(storetest.Zipf, "t", 600, 30, 256, 5)
			info := knowledge.EmbeddingInfo{Model: "synthetic", Dimensions: 256}
			for _, d := range c.Docs {
				if vectors == "sparse" {
					texts := make([]string, len(d.Chunks))
					for i, ch := range d.Chunks {
						texts[i] = ch.Text
					}
					if d.Vectors, err = local.Embed(ctx, texts); err != nil {
						t.Fatal(err)
					}
				}
				if err := s.ReplaceDocument(ctx, d.Doc, d.Chunks, d.Vectors, info); err != nil {
					t.Fatal(err)
				}
			}
			var queries []knowledge.Query
			for i := 0; i < 30; i++ {
				q := c.Query()
				if vectors == "sparse" {
					vs, err := local.Embed(ctx, []string{q.Text})
					if err != nil {
						t.Fatal(err)
					}
					q.Vector = vs[0]
				}
				queries = append(queries, q)
			}
			for _, mode := range []knowledge.SearchMode{knowledge.SearchHybrid, knowledge.SearchLexical, knowledge.SearchVector} {
				emptyCache(s)
				for round := 0; round < 2; round++ {
					for i, q := range queries {
						q.Mode = mode
						cached, err := s.Search(ctx, q)
						if err != nil {
							t.Fatal(err)
						}
						emptyCache(s)
						read, err := s.Search(ctx, q)
						if err != nil {
							t.Fatal(err)
						}
						if len(read) == 0 {
							t.Fatalf("%s query %d (%q): no hits", mode, i, q.Text)
						}
						if !reflect.DeepEqual(cached, read) {
							t.Fatalf("%s query %d (%q), round %d: from the cache\n%+v\nread\n%+v", mode, i, q.Text, round, cached, read)
						}
					}
				}
			}
			// Each part of the cache is used.
			emptyCache(s)
			for _, mode := range []knowledge.SearchMode{knowledge.SearchHybrid, knowledge.SearchLexical} {
				for _, q := range queries {
					q.Mode = mode
					if _, err := s.Search(ctx, q); err != nil {
						t.Fatal(err)
					}
				}
			}
			s.rc.mu.Lock()
			defer s.rc.mu.Unlock()
			if len(s.rc.chunks.m) == 0 || len(s.rc.vectors.m) == 0 || len(s.rc.terms.m) == 0 || len(s.rc.ids.m) == 0 {
				t.Fatalf("the cache holds %d chunks, %d vectors, %d terms, %d ids: a part is not used",
					len(s.rc.chunks.m), len(s.rc.vectors.m), len(s.rc.terms.m), len(s.rc.ids.m))
			}
		})
	}
}

// TestSearchCacheSeesOtherWriters checks that a process's cache does not
// outlive a write by another process into the same file (vibe serve
// searching while vibe ingest writes): a changed chunk's new text, a
// deleted document, and another theme's write, which changes the
// store-wide BM25 statistics.
func TestSearchCacheSeesOtherWriters(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "v.db")
	reader, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close()
	writer, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer writer.Close()
	local := embedding.NewLocal(128)
	info := knowledge.EmbeddingInfo{Model: local.Model(), Dimensions: local.Dimensions()}
	write := func(theme, name string, texts ...string) {
		t.Helper()
		id := fmt.Sprintf("knowledge/%s/converted/%s.md", theme, name)
		doc := knowledge.Document{ID: id, Theme: theme, Source: id, Title: name, ContentHash: fmt.Sprint(texts)}
		var chunks []chunk.Chunk
		for i, text := range texts {
			chunks = append(chunks, chunk.Chunk{ID: fmt.Sprintf("%s#%d", id, i), Doc: id, Source: id, Title: name, Ordinal: i, Text: text, End: len([]rune(text)), Tokens: len(text)})
		}
		vs, err := local.Embed(ctx, texts)
		if err != nil {
			t.Fatal(err)
		}
		if err := writer.ReplaceDocument(ctx, doc, chunks, vs, info); err != nil {
			t.Fatal(err)
		}
	}
	search := func(mode knowledge.SearchMode, text string) []knowledge.Hit {
		t.Helper()
		vs, err := local.Embed(ctx, []string{text})
		if err != nil {
			t.Fatal(err)
		}
		hits, err := reader.Search(ctx, knowledge.Query{Theme: "t", Text: text, Vector: vs[0], K: 5, Mode: mode})
		if err != nil {
			t.Fatal(err)
		}
		return hits
	}
	write("t", "a", "甲木参天，脱胎要火。", "春不容金，秋不容土。")
	write("t", "b", "乙木虽柔，刲羊解牛。", "怀丁抱丙，跨凤乘猴。")
	modes := []knowledge.SearchMode{knowledge.SearchHybrid, knowledge.SearchLexical, knowledge.SearchVector}
	for _, m := range modes {
		if h := search(m, "甲木 脱胎"); len(h) == 0 || h[0].Chunk.Doc != "knowledge/t/converted/a.md" {
			t.Fatalf("%s before the writes: %+v", m, h)
		}
	}
	// Another process rewrites a: the reader's next search sees the new text.
	write("t", "a", "甲木参天，脱胎要火，庚金劈甲。", "春不容金，秋不容土。")
	for _, m := range modes {
		h := search(m, "甲木 脱胎")
		if len(h) == 0 || h[0].Chunk.Text != "甲木参天，脱胎要火，庚金劈甲。" {
			t.Fatalf("%s after a was rewritten: %+v", m, h)
		}
	}
	lexBefore := search(knowledge.SearchLexical, "乙木 刲羊")
	// Another theme's write changes the store-wide statistics, so the
	// scores of theme t.
	write("u", "c", "乙木虽柔。", "乙木。", "丙火猛烈。")
	lexAfter := search(knowledge.SearchLexical, "乙木 刲羊")
	if len(lexBefore) == 0 || len(lexAfter) == 0 || lexBefore[0].LexicalScore == lexAfter[0].LexicalScore {
		t.Fatalf("theme u's write left theme t's scores as they were: before %+v, after %+v", lexBefore, lexAfter)
	}
	fresh, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	want, err := fresh.Search(ctx, knowledge.Query{Theme: "t", Text: "乙木 刲羊", K: 5, Mode: knowledge.SearchLexical})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(lexAfter, want) {
		t.Fatalf("after theme u's write: %+v, a new process finds %+v", lexAfter, want)
	}
	// Another process deletes b: none of its chunks is found any more.
	if err := writer.DeleteDocument(ctx, "t", "knowledge/t/converted/b.md"); err != nil {
		t.Fatal(err)
	}
	for _, m := range modes {
		for _, h := range search(m, "乙木 刲羊 丁 丙") {
			if h.Chunk.Doc == "knowledge/t/converted/b.md" {
				t.Fatalf("%s after b was deleted: %+v", m, h)
			}
		}
	}
}

// TestSearchCacheConcurrent runs searches in several goroutines while
// another rewrites a document of the theme (go test -race: the cache is
// shared by every search of the process).
func TestSearchCacheConcurrent(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "v.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	local := embedding.NewLocal(64)
	info := knowledge.EmbeddingInfo{Model: local.Model(), Dimensions: local.Dimensions()}
	c := storetest.NewCorpus(storetest.Zipf, "t", 60, 10, 64, 3)
	for _, d := range c.Docs {
		texts := make([]string, len(d.Chunks))
		for i, ch := range d.Chunks {
			texts[i] = ch.Text
		}
		if d.Vectors, err = local.Embed(ctx, texts); err != nil {
			t.Fatal(err)
		}
		if err := s.ReplaceDocument(ctx, d.Doc, d.Chunks, d.Vectors, info); err != nil {
			t.Fatal(err)
		}
	}
	var queries []knowledge.Query
	for i := 0; i < 8; i++ {
		q := c.Query()
		vs, err := local.Embed(ctx, []string{q.Text})
		if err != nil {
			t.Fatal(err)
		}
		q.Vector = vs[0]
		queries = append(queries, q)
	}
	done := make(chan error, 5)
	for g := 0; g < 4; g++ {
		go func(g int) {
			for i := 0; i < 6; i++ {
				q := queries[(g+i)%len(queries)]
				q.Mode = []knowledge.SearchMode{knowledge.SearchHybrid, knowledge.SearchLexical, knowledge.SearchVector}[i%3]
				if _, err := s.Search(ctx, q); err != nil {
					done <- err
					return
				}
			}
			done <- nil
		}(g)
	}
	go func() {
		d := c.Docs[0]
		for i := 0; i < 3; i++ {
			d.Doc.ContentHash = fmt.Sprint("round", i)
			if err := s.ReplaceDocument(ctx, d.Doc, d.Chunks, d.Vectors, info); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	for i := 0; i < 5; i++ {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
}

// A cached vector, dense or sparse, scores a query as decoding, normalising
// and a dot product over every dimension do, to the bit.
func TestCachedVectorDot(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for round := 0; round < 400; round++ {
		dims := []int{1024, 100, 64, 7}[round%4]
		density := []float64{0, 0.05, 0.3, 0.7, 1}[round%5]
		v := make([]float32, dims)
		for j := range v {
			if r.Float64() < density {
				v[j] = float32(r.NormFloat64())
			}
		}
		if round%9 == 0 && dims > 3 {
			v[3] = float32(math.Copysign(0, -1)) // -0 counts as zero
		}
		q := make([]float32, dims)
		var nz []int
		for j := range q {
			if r.Float64() < 0.1 || j == dims-1 {
				q[j] = float32(r.NormFloat64())
				nz = append(nz, j)
			}
		}
		normalize(q)
		blob := EncodeVector(v)
		cv := newCachedVector("c", "t", blob)
		want := DecodeVector(blob)
		normalize(want)
		var d float32
		for j := range q {
			d += want[j] * q[j]
		}
		if got := cv.dot(q, nz); got != d {
			t.Fatalf("dims %d density %v: dot %v, want %v (sparse %v)", dims, density, got, d, cv.has != nil)
		}
		if density <= 0.3 && dims >= 100 && cv.has == nil {
			t.Errorf("dims %d density %v: kept dense", dims, density)
		}
	}
}

// A hybrid search finds its lexical candidates' ids among the theme's
// vectors, read with their chunks' numbers (idsByNum): they are the ids the
// chunks table holds for those numbers, before and after a write that
// gives a new document the numbers of one deleted, and they are not used
// once the theme's generation has moved on.
func TestIDsByNumAreTheChunks(t *testing.T) {
	ctx := context.Background()
	s, c, write := zipfStore(t, 300, 20, 9, "synthetic")
	local := embedding.NewLocal(256) // the embedder write uses
	for _, d := range c.Docs[:len(c.Docs)-1] {
		write(d)
	}
	check := func(label string) {
		t.Helper()
		q := c.Query()
		vs, err := local.Embed(ctx, []string{q.Text})
		if err != nil {
			t.Fatal(err)
		}
		q.Vector, q.Mode = vs[0], knowledge.SearchHybrid
		if _, err := s.Search(ctx, q); err != nil { // loads the vectors
			t.Fatal(err)
		}
		v, err := s.begin(ctx, "t")
		if err != nil {
			t.Fatal(err)
		}
		rows, err := s.db.QueryContext(ctx, `SELECT lex_num, id FROM chunks WHERE theme = 't'`)
		if err != nil {
			t.Fatal(err)
		}
		want := map[int64]string{}
		var nums []int64
		var top []lexindex.Hit
		for rows.Next() {
			var num int64
			var id string
			if err := rows.Scan(&num, &id); err != nil {
				t.Fatal(err)
			}
			want[num] = id
			nums = append(nums, num)
			top = append(top, lexindex.Hit{Num: num, Score: float64(num % 7)})
		}
		rows.Close()
		got, ok := s.idsByNum("t", v.themeGen, nums)
		if !ok || !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: idsByNum ok %v, %d ids, want the %d of the chunks table", label, ok, len(got), len(want))
		}
		if _, ok := s.idsByNum("t", v.themeGen-1, nums); ok {
			t.Fatalf("%s: idsByNum answered for another generation", label)
		}
		emptyCache(s)
		read, err := s.lexHits(ctx, v, top, false, nil)
		if err != nil {
			t.Fatal(err)
		}
		known, err := s.lexHits(ctx, v, top, false, got)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(known, read) {
			t.Fatalf("%s: hits by known ids differ from those read", label)
		}
	}
	check("written")
	// The last document written is deleted and another takes its numbers.
	last := c.Docs[len(c.Docs)-2]
	if err := s.DeleteDocument(ctx, "t", last.Doc.ID); err != nil {
		t.Fatal(err)
	}
	write(c.Docs[len(c.Docs)-1])
	check("renumbered")
}

// A hybrid search loads its candidates' chunks by the chunks table's rowid
// its theme's vectors hold: they are the chunks of those ids, a rowid that
// no longer holds its chunk (rows renumbered) falls back to the id, and
// after a write the rowids of the generation before are not used.
func TestChunksByRowidAreTheChunks(t *testing.T) {
	ctx := context.Background()
	s, c, write := zipfStore(t, 300, 20, 9, "synthetic")
	local := embedding.NewLocal(256) // the embedder write uses
	for _, d := range c.Docs[:len(c.Docs)-1] {
		write(d)
	}
	search := func(text string) []knowledge.Hit {
		t.Helper()
		vs, err := local.Embed(ctx, []string{text})
		if err != nil {
			t.Fatal(err)
		}
		hits, err := s.Search(ctx, knowledge.Query{Theme: "t", Text: text, Vector: vs[0], K: 5, Mode: knowledge.SearchHybrid})
		if err != nil {
			t.Fatal(err)
		}
		return hits
	}
	check := func(label string) view {
		t.Helper()
		search(c.Query().Text) // loads the vectors
		v, err := s.begin(ctx, "t")
		if err != nil {
			t.Fatal(err)
		}
		rows, err := s.db.QueryContext(ctx, `SELECT id, rowid FROM chunks WHERE theme = 't' ORDER BY rowid DESC`)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		want := map[string]int64{}
		for rows.Next() {
			var id string
			var r int64
			if err := rows.Scan(&id, &r); err != nil {
				t.Fatal(err)
			}
			ids = append(ids, id)
			want[id] = r
		}
		rows.Close()
		byRow, rest := s.chunkRowids("t", v.themeGen, ids)
		if len(rest) != 0 || len(byRow) != len(ids) {
			t.Fatalf("%s: %d of %d chunks by rowid", label, len(byRow), len(ids))
		}
		for _, r := range byRow {
			if want[r.id] != r.num {
				t.Fatalf("%s: chunk %s by rowid %d, its rowid is %d", label, r.id, r.num, want[r.id])
			}
		}
		if byRow, _ := s.chunkRowids("t", v.themeGen-1, ids); len(byRow) != 0 {
			t.Fatalf("%s: rowids used for another generation", label)
		}
		load := func(what string) {
			t.Helper()
			emptyCache(s)
			got := map[string]chunk.Chunk{}
			some := ids[:len(ids)/3]
			if err := s.loadChunks(ctx, v, "t", some, got); err != nil {
				t.Fatal(err)
			}
			if len(got) != len(some) {
				t.Fatalf("%s, %s: %d chunks loaded of %d", label, what, len(got), len(some))
			}
			for _, id := range some {
				if w, err := s.Chunk(ctx, id); err != nil || !reflect.DeepEqual(got[id], w) {
					t.Fatalf("%s, %s: chunk %s loaded is not the stored one (%v)", label, what, id, err)
				}
			}
		}
		load("by rowid")
		// The rowids moved one chunk on, as if the rows were renumbered.
		s.mu.Lock()
		tv := *s.cache["t"]
		tv.chunkRows = append(tv.chunkRows[1:len(tv.chunkRows):len(tv.chunkRows)], tv.chunkRows[0])
		s.cache["t"] = &tv
		s.mu.Unlock()
		load("rowids of other chunks")
		return v
	}
	check("written")
	// The last document written is deleted and another written: a search
	// finds the new chunks, with their text.
	last := c.Docs[len(c.Docs)-2]
	if err := s.DeleteDocument(ctx, "t", last.Doc.ID); err != nil {
		t.Fatal(err)
	}
	newDoc := c.Docs[len(c.Docs)-1]
	write(newDoc)
	check("rewritten")
	want := newDoc.Chunks[0]
	hits := search(want.Text)
	if len(hits) == 0 || hits[0].Chunk.ID != want.ID || hits[0].Chunk.Text != want.Text {
		t.Fatalf("search after a write: %d hits, first %q, want the new chunk %s", len(hits), firstID(hits), want.ID)
	}
}

func firstID(hits []knowledge.Hit) string {
	if len(hits) == 0 {
		return ""
	}
	return hits[0].Chunk.ID
}

// zipfStore opens a fresh store (closed when the test ends) and returns it
// with a Zipf corpus of n chunks in documents of perDoc (seed), and write,
// which stores one of its documents embedded by the local embedder (256
// dimensions), recorded as model's vectors.
func zipfStore(t *testing.T, n, perDoc int, seed uint64, model string) (*Store, *storetest.Corpus, func(storetest.SyntheticDoc)) {
	t.Helper()
	ctx := context.Background()
	local := embedding.NewLocal(256)
	s, err := Open(ctx, filepath.Join(t.TempDir(), "v.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	c := storetest.NewCorpus(storetest.Zipf, "t", n, perDoc, 256, seed)
	info := knowledge.EmbeddingInfo{Model: model, Dimensions: 256}
	write := func(d storetest.SyntheticDoc) {
		t.Helper()
		texts := make([]string, len(d.Chunks))
		for i, ch := range d.Chunks {
			texts[i] = ch.Text
		}
		vecs, err := local.Embed(ctx, texts)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.ReplaceDocument(ctx, d.Doc, d.Chunks, vecs, info); err != nil {
			t.Fatal(err)
		}
	}
	return s, c, write
}
