package sqlite

import (
	"context"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vibelife/vibe/knowledge"
	"github.com/vibelife/vibe/knowledge/lexical"
	"github.com/vibelife/vibe/knowledge/storetest"
)

// TestLexicalPruningKeepsRanking compares the lexical search, which leaves
// tokens found in half the chunks or more out of the match, with FTS5's
// bm25 over every query token: the scores of the top 10 must agree (the
// tokens left out add at most a hair to any score), on the worst-case
// corpus where most query tokens are that common and on the realistic one.
//
// The test runs in one goroutine, so the race detector adds nothing to it
// but a 60-fold slowdown of the pure-Go SQLite (450 s of the package's
// 7.5 min): under -race (and -short) it runs on 600 chunks, at full size
// (3000) otherwise; `make test` runs both.
func TestLexicalPruningKeepsRanking(t *testing.T) {
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
			pruned := 0
			for i := 0; i < 30; i++ {
				q := c.Query()
				toks := lexical.QueryTokens(q.Text)
				rows, df, err := s.docFreqs(ctx, toks)
				if err != nil {
					t.Fatal(err)
				}
				if keep, _ := informative(toks, rows, df); len(keep) < len(toks) {
					pruned++
				}
				got, err := s.Search(ctx, knowledge.Query{Theme: "t", Text: q.Text, K: 10, Mode: knowledge.SearchLexical})
				if err != nil {
					t.Fatal(err)
				}
				want, err := s.ranked(ctx, `SELECT chunk_id, bm25(chunk_fts) FROM chunk_fts WHERE chunk_fts MATCH ? AND theme = 't' ORDER BY bm25(chunk_fts) LIMIT 10`, matchAny(toks))
				if err != nil {
					t.Fatal(err)
				}
				if len(got) != len(want) {
					t.Fatalf("%q: %d hits, full bm25 %d", q.Text, len(got), len(want))
				}
				for k := range got {
					if math.Abs(got[k].LexicalScore-want[k].LexicalScore) > 1e-3*math.Max(1, math.Abs(want[k].LexicalScore)) {
						t.Fatalf("%q (tokens %s): hit %d scores %.6f, full bm25 %.6f", q.Text, strings.Join(toks, " "), k+1, got[k].LexicalScore, want[k].LexicalScore)
					}
				}
			}
			if kind == storetest.Tiny && pruned == 0 {
				t.Fatalf("no query had a token pruned: the test proves nothing")
			}
			t.Logf("%s, %d chunks: %d of 30 queries had tokens left out", kind, n, pruned)
		})
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
