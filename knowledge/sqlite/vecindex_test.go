package sqlite

import (
	"context"
	"path/filepath"
	"sort"
	"testing"

	"github.com/vibelife/vibe/internal/racetest"
	"github.com/vibelife/vibe/knowledge"
	"github.com/vibelife/vibe/knowledge/embedding"
	"github.com/vibelife/vibe/knowledge/storetest"
)

// TestVectorCodesKeepTheExactRanking compares the vector side (int8 codes
// scanned over the query's dimensions, then the best rerankCandidates
// ranked exactly) with brute-force cosine over the float32 vectors, on
// 3000 chunks of the realistic synthetic corpus embedded by the local
// embedder: the top 10 and top 50 of 100 queries must be the exact ones,
// in the same order.
func TestVectorCodesKeepTheExactRanking(t *testing.T) {
	racetest.SequentialOnly(t)
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "v.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	emb := embedding.NewLocal(0)
	c := storetest.NewCorpus(storetest.Zipf, "t", 3000, 200, 8, 1)
	var ids []string
	var units [][]float32
	for _, d := range c.Docs {
		texts := make([]string, len(d.Chunks))
		for i, ch := range d.Chunks {
			texts[i] = ch.EmbedText()
		}
		vecs, err := emb.Embed(ctx, texts)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.ReplaceDocument(ctx, d.Doc, d.Chunks, vecs, knowledge.InfoOf(emb)); err != nil {
			t.Fatal(err)
		}
		for i, ch := range d.Chunks {
			u := append([]float32(nil), vecs[i]...)
			normalize(u)
			ids = append(ids, ch.ID)
			units = append(units, u)
		}
	}
	type scored struct {
		id string
		s  float32
	}
	for qi := 0; qi < 100; qi++ {
		q := emb.Vector(c.Query().Text)
		qu := append([]float32(nil), q...)
		normalize(qu)
		all := make([]scored, len(ids))
		for i, u := range units {
			var d float32
			for j, x := range u {
				d += x * qu[j]
			}
			all[i] = scored{ids[i], d}
		}
		sort.SliceStable(all, func(i, j int) bool {
			if all[i].s != all[j].s {
				return all[i].s > all[j].s
			}
			return all[i].id < all[j].id
		})
		for _, n := range []int{10, 50} {
			got, err := s.vectorSearch(ctx, "t", q, n)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != n {
				t.Fatalf("query %d: %d hits, want %d", qi, len(got), n)
			}
			for i, h := range got {
				if h.Chunk.ID != all[i].id || float32(h.VectorScore) != all[i].s {
					t.Fatalf("query %d, top %d: hit %d is %s (%.6f), exact search has %s (%.6f)", qi, n, i+1, h.Chunk.ID, h.VectorScore, all[i].id, all[i].s)
				}
			}
		}
	}
}
