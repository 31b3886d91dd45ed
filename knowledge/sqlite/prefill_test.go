package sqlite

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/vibelife/vibe/knowledge"
	"github.com/vibelife/vibe/knowledge/embedding"
)

// TestVectorLoadFillsTheCache checks that loading a theme's vectors (its
// first vector or hybrid search) keeps their exact values in the read
// cache, so that the searches after it rerank from memory: every vector of
// a small theme is cached after one search, and the next searches read no
// embeddings row, with the hits a search reading them returns.
func TestVectorLoadFillsTheCache(t *testing.T) {
	ctx := context.Background()
	local := embedding.NewLocal(256)
	s, c, write := zipfStore(t, 400, 40, 5, local.Model())
	n := 0
	for _, d := range c.Docs {
		write(d)
		n += len(d.Chunks)
	}
	var queries []knowledge.Query
	for i := 0; i < 10; i++ {
		q := c.Query()
		vs, err := local.Embed(ctx, []string{q.Text})
		if err != nil {
			t.Fatal(err)
		}
		q.Vector = vs[0]
		queries = append(queries, q)
	}
	var first [][]knowledge.Hit
	for _, q := range queries {
		hits, err := s.Search(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		first = append(first, hits)
		if len(first) == 1 {
			s.rc.mu.Lock()
			cached := len(s.rc.vectors.m)
			s.rc.mu.Unlock()
			if cached != n {
				t.Fatalf("after the first search the cache holds %d vectors of the theme's %d", cached, n)
			}
		}
	}
	// The same searches reading every vector from the table: the theme's
	// codes stay loaded, the cache is emptied before each.
	for i, q := range queries {
		emptyCache(s)
		hits, err := s.Search(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		if !sameHits(hits, first[i]) {
			t.Fatalf("query %d: from the loaded vectors\n%+v\nread\n%+v", i, first[i], hits)
		}
	}
}

// sameHits reports whether a and b are the same hits, scores to the bit.
func sameHits(a, b []knowledge.Hit) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Chunk.ID != b[i].Chunk.ID || a[i].Chunk.Text != b[i].Chunk.Text ||
			math.Float64bits(a[i].Score) != math.Float64bits(b[i].Score) ||
			math.Float64bits(a[i].VectorScore) != math.Float64bits(b[i].VectorScore) ||
			math.Float64bits(a[i].LexicalScore) != math.Float64bits(b[i].LexicalScore) ||
			a[i].VectorRank != b[i].VectorRank || a[i].LexicalRank != b[i].LexicalRank ||
			math.Float64bits(a[i].Proximity) != math.Float64bits(b[i].Proximity) {
			return false
		}
	}
	return true
}

// TestPrefillStopsAtTheBudget checks that a load keeps the exact vectors
// of a theme whose vectors all fit in the cache's budget for vectors, and
// none of a larger one's: told the theme's size, or finding it larger.
func TestPrefillStopsAtTheBudget(t *testing.T) {
	local := embedding.NewLocal(1024)
	vs, err := local.Embed(context.Background(), []string{"甲子乙丑丙寅丁卯戊辰己巳庚午辛未壬申癸酉甲戌乙亥丙子丁丑"})
	if err != nil {
		t.Fatal(err)
	}
	blob := storeVector(vs[0])
	per := cachedFromBlob("c_0123456789abcdef", "theme", blob).bytes()
	fits := cacheVectorBytes / per
	for _, tc := range []struct {
		told, offered int
		keep          bool
	}{
		{fits, fits, true},
		{fits + 1, fits + 1, false}, // found larger than the budget
		{2*fits + 2, fits, false},   // told it is twice the budget
		{2 * fits, fits, true},      // told it may fit, and it does
		{fits, fits + 1, false},     // found larger than told
		{10, 10, true},
	} {
		p := newPrefill(tc.told)
		for i := 0; i < tc.offered; i++ {
			p.add(int64(i+1), "c_0123456789abcdef", "theme", blob)
		}
		kept := len(p.vs)
		if tc.keep && (kept != tc.offered || len(p.rowids) != kept || p.bytes != kept*per) || !tc.keep && (kept != 0 || p.bytes != 0 || len(p.rowids) != 0) {
			t.Errorf("told %d, offered %d of %d bytes (budget %d): kept %d (%d bytes), want all: %v", tc.told, tc.offered, per, cacheVectorBytes, kept, p.bytes, tc.keep)
		}
	}
}

// TestQuantizeSkipsZeros checks that quantizeInto, writing only the nonzero
// values of a vector into zeroed codes, gives the codes of every value
// written, column-major as a theme's load lays them out.
func TestQuantizeSkipsZeros(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	const dims, n = 64, 5
	codes := make([]int8, dims*n)
	for i := 0; i < n; i++ {
		v := make([]float32, dims)
		for j := range v {
			switch r.IntN(4) {
			case 0:
				v[j] = float32(r.NormFloat64())
			case 1:
				v[j] = float32(math.Copysign(0, -1)) // -0
			case 2:
				v[j] = 1e-9 // rounds to a zero code
			}
		}
		normalize(v)
		scale := quantizeInto(v, codes[i:], n)
		for j, x := range v {
			want := int8(0)
			if scale != 0 {
				want = int8(math.Round(float64(x / scale)))
			}
			if got := codes[j*n+i]; got != want {
				t.Fatalf("vector %d dimension %d (%g): code %d, want %d", i, j, x, got, want)
			}
		}
	}
}
