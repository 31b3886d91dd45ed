package sqlite

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/vibelife/vibe/internal/racetest"
)

// TestUnitQueryIsTheNormalisedCopy: the query vector a vector search
// scores with, now made in a pooled buffer (a new 4 KB copy a search
// before, for the local embedder's 1,024 dimensions), is the copy
// normalised as before, to the bit, leaves the query as it was, and costs
// no allocation once the pool holds a buffer.
func TestUnitQueryIsTheNormalisedCopy(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, dims := range []int{1, 256, 1024} {
		qv := make([]float32, dims)
		for j := range qv {
			if r.IntN(4) == 0 {
				qv[j] = float32(r.NormFloat64())
			}
		}
		orig := append([]float32(nil), qv...)
		want := append([]float32(nil), qv...)
		normalize(want)
		q, qb := unitQuery(qv)
		for j := range want {
			if math.Float32bits(q[j]) != math.Float32bits(want[j]) || math.Float32bits(qv[j]) != math.Float32bits(orig[j]) {
				t.Fatalf("%d dims, dimension %d: %v (query %v), want %v (query %v)", dims, j, q[j], qv[j], want[j], orig[j])
			}
		}
		queryPool.Put(qb)
		if racetest.Enabled {
			continue // sync.Pool drops a share of what is put back under -race
		}
		if n := testing.AllocsPerRun(100, func() { _, qb := unitQuery(qv); queryPool.Put(qb) }); n != 0 {
			t.Errorf("%d dims: %v allocations a query vector, want 0", dims, n)
		}
	}
}
