package pgvector

import (
	"context"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vibelife/vibe/knowledge"
	"github.com/vibelife/vibe/knowledge/lexical"
	"github.com/vibelife/vibe/knowledge/storetest"
)

// sameHits fails unless got and want are the same chunks in the same
// order with lexical scores equal to 1e-9.
func sameHits(t *testing.T, label string, got, want []knowledge.Hit) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d hits, want %d", label, len(got), len(want))
	}
	for i := range got {
		if got[i].Chunk.ID != want[i].Chunk.ID || math.Abs(got[i].LexicalScore-want[i].LexicalScore) > 1e-9 {
			t.Fatalf("%s: hit %d is %s %.12f, want %s %.12f", label, i+1, got[i].Chunk.ID, got[i].LexicalScore, want[i].Chunk.ID, want[i].LexicalScore)
		}
	}
}

// TestMigrateLexIndex upgrades a store written before the lexical index
// (schema 11: tsvectors, a GIN index, per-chunk lengths): migration 12
// indexes its documents, in two themes, so that lexical search ranks them
// as a store written afresh with the same documents does, and the store
// takes new writes and deletes afterwards.
func TestMigrateLexIndex(t *testing.T) {
	ctx := context.Background()
	url, schema, conn := schemaAt(t, 11)
	c := storetest.NewCorpus(storetest.Zipf, "t", 900, 100, 8, 31)
	o := storetest.NewCorpus(storetest.Zipf, "other", 200, 50, 8, 32)
	// Written as schema 11's store wrote them, less the vectors (lexical
	// search does not read them): documents, chunks with their tsvector
	// and length, the themes' counts.
	for _, d := range append(append([]storetest.SyntheticDoc(nil), c.Docs[:8]...), o.Docs...) {
		if _, err := conn.Exec(ctx, `INSERT INTO kb_document(id, theme, source, title, content_hash, chunks, updated_at) VALUES ($1,$2,$3,$4,$5,$6,now())`,
			d.Doc.ID, d.Doc.Theme, d.Doc.Source, d.Doc.Title, d.Doc.ContentHash, len(d.Chunks)); err != nil {
			t.Fatal(err)
		}
		for _, ch := range d.Chunks {
			lex := lexical.IndexChunk(ch)
			if _, err := conn.Exec(ctx, `INSERT INTO kb_chunk(id, doc_id, theme, ordinal, source, title, heading_path, start_off, end_off, text, tokens, tsv, lex_len)
VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,to_tsvector('simple', $12),$13)`,
				ch.ID, d.Doc.ID, d.Doc.Theme, ch.Ordinal, ch.Source, ch.Title, ch.HeadingPath, ch.Start, ch.End, ch.Text, ch.Tokens, lex, len(strings.Fields(lex))); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := conn.Exec(ctx, `INSERT INTO kb_theme_stats SELECT theme, count(*), sum(lex_len) FROM kb_chunk GROUP BY theme`); err != nil {
		t.Fatal(err)
	}
	s, err := Open(ctx, withSearchPath(url, schema))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	checkLexIndex(t, s)
	fresh := openFreshURL(t, testURL(t))
	defer fresh.Close()
	storetest.Load(t, fresh, c.Docs[:8], 8)
	storetest.Load(t, fresh, o.Docs, 8)
	compare := func(stage string) {
		t.Helper()
		for i := 0; i < 30; i++ {
			q := c.Query()
			q.Mode, q.K = knowledge.SearchLexical, 10
			got, err := s.Search(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			want, err := fresh.Search(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			sameHits(t, fmt.Sprintf("%s %q", stage, q.Text), got, want)
		}
	}
	compare("migrated")
	// New documents take numbers above the migrated ones; a migrated
	// document is replaced and another deleted.
	for _, st := range []knowledge.Store{s, fresh} {
		storetest.Load(t, st, c.Docs[8:], 8)
		d := c.Docs[2]
		storetest.Load(t, st, []storetest.SyntheticDoc{{Doc: d.Doc, Chunks: d.Chunks[:30], Vectors: d.Vectors[:30]}}, 8)
		if err := st.DeleteDocument(ctx, "t", c.Docs[5].Doc.ID); err != nil {
			t.Fatal(err)
		}
	}
	checkLexIndex(t, s)
	compare("written after the migration")
}

// TestConcurrentWritersOneTheme: replicas (stores of their own pools on one
// database) write, rewrite and delete different documents of one theme at
// the same time while others search it. Every write must land whole: the
// index then holds exactly the postings of the stored chunks, and a search
// ranks as over a store written one document at a time.
func TestConcurrentWritersOneTheme(t *testing.T) {
	ctx := context.Background()
	s := openFreshURL(t, testURL(t))
	defer s.Close()
	c := storetest.NewCorpus(storetest.Zipf, "t", 1200, 50, 8, 41)
	// The first write records the embedding space.
	storetest.Load(t, s, c.Docs[:1], 8)
	const writers = 4
	stores := []*Store{s}
	for range writers - 1 {
		r := openFreshURLInSchema(t, s)
		defer r.Close()
		stores = append(stores, r)
	}
	info := knowledge.EmbeddingInfo{Model: "synthetic", Dimensions: 8}
	var wg sync.WaitGroup
	errs := make(chan error, 2*writers)
	done := make(chan struct{})
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			st := stores[w]
			// Writer w owns documents w+1, w+1+writers, ...: it writes
			// each, rewrites every third shorter and deletes every fifth.
			for i := 1 + w; i < len(c.Docs); i += writers {
				d := c.Docs[i]
				if err := st.ReplaceDocument(ctx, d.Doc, d.Chunks, d.Vectors, info); err != nil {
					errs <- err
					return
				}
				if i%3 == 0 {
					k := len(d.Chunks) / 2
					if err := st.ReplaceDocument(ctx, d.Doc, d.Chunks[:k], d.Vectors[:k], info); err != nil {
						errs <- err
						return
					}
				}
				if i%5 == 0 {
					if err := st.DeleteDocument(ctx, "t", d.Doc.ID); err != nil {
						errs <- err
						return
					}
				}
			}
		}(w)
	}
	qs := queries(c, 50) // Corpus.Query is not safe for concurrent use
	var readers sync.WaitGroup
	for r := 0; r < 2; r++ {
		readers.Add(1)
		go func(r int) {
			defer readers.Done()
			for i := 0; ; i++ {
				select {
				case <-done:
					return
				default:
				}
				q := qs[i%len(qs)]
				q.Mode, q.K = knowledge.SearchLexical, 10
				if r == 1 {
					q.Mode = knowledge.SearchHybrid
				}
				if _, err := stores[r].Search(ctx, q); err != nil {
					errs <- fmt.Errorf("search during writes: %w", err)
					return
				}
				time.Sleep(5 * time.Millisecond)
			}
		}(r)
	}
	wg.Wait()
	close(done)
	readers.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	checkLexIndex(t, s)
	// The same final documents written one at a time.
	seq := openFreshURL(t, testURL(t))
	defer seq.Close()
	for i, d := range c.Docs {
		switch {
		case i > 0 && i%5 == 0:
			continue
		case i > 0 && i%3 == 0:
			k := len(d.Chunks) / 2
			d = storetest.SyntheticDoc{Doc: d.Doc, Chunks: d.Chunks[:k], Vectors: d.Vectors[:k]}
		}
		storetest.Load(t, seq, []storetest.SyntheticDoc{d}, 8)
	}
	for i := 0; i < 30; i++ {
		q := c.Query()
		q.Mode, q.K = knowledge.SearchLexical, 10
		got, err := s.Search(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		want, err := seq.Search(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		sameHits(t, fmt.Sprintf("%q", q.Text), got, want)
	}
}

// TestConcurrentFirstWrites has several store instances write their first
// documents into an empty store at once: each finds no embedding space
// recorded and records it. Two such writers used to deadlock (each
// share-locked kb_embedding_info, then wanted it exclusively) and
// PostgreSQL aborted one of them with SQLSTATE 40P01.
func TestConcurrentFirstWrites(t *testing.T) {
	ctx := context.Background()
	s := openFreshURL(t, testURL(t))
	defer s.Close()
	c := storetest.NewCorpus(storetest.Zipf, "t", 200, 10, 8, 43)
	const writers = 4
	stores := []*Store{s}
	for range writers - 1 {
		r := openFreshURLInSchema(t, s)
		defer r.Close()
		stores = append(stores, r)
	}
	info := knowledge.EmbeddingInfo{Model: "synthetic", Dimensions: 8}
	for round := 0; round < 3; round++ {
		var wg sync.WaitGroup
		errs := make(chan error, writers)
		start := make(chan struct{})
		for w := 0; w < writers; w++ {
			wg.Add(1)
			go func(w int) {
				defer wg.Done()
				d := c.Docs[w]
				<-start
				errs <- stores[w].ReplaceDocument(ctx, d.Doc, d.Chunks, d.Vectors, info)
			}(w)
		}
		close(start)
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatalf("round %d: %v", round, err)
			}
		}
		// Empty the store again, so the next round's writes are first
		// writes too.
		for w := 0; w < writers; w++ {
			if err := s.DeleteDocument(ctx, "t", c.Docs[w].Doc.ID); err != nil {
				t.Fatal(err)
			}
		}
		if _, ok, err := s.EmbeddingInfo(ctx); err != nil || ok {
			t.Fatalf("round %d: embedding info after deleting every document: recorded %v, err %v", round, ok, err)
		}
	}
}
