package sqlite

import (
	"math/rand/v2"
	"testing"
)

// TestApproxAddsInDimensionOrder checks the code scan against the plain
// sum, one dimension after another: the same float32 values, to the bit,
// for queries of every number of nonzero dimensions modulo four.
func TestApproxAddsInDimensionOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	const n, dims = 1001, 64
	tv := &themeVectors{dims: dims, ids: make([]string, n), scale: make([]float32, n), codes: make([]int8, n*dims)}
	for i := range tv.codes {
		if r.IntN(3) == 0 {
			tv.codes[i] = int8(r.IntN(256) - 128)
		}
	}
	for i := range tv.scale {
		tv.scale[i] = r.Float32()
	}
	buf := new([]float32)
	for _, nonzero := range []int{0, 1, 2, 3, 4, 5, 6, 7, 20, 23, dims} {
		q := make([]float32, dims)
		for _, j := range r.Perm(dims)[:nonzero] {
			q[j] = r.Float32() - 0.5
		}
		got := tv.approx(q, buf)
		for i := 0; i < n; i++ {
			var want float32
			for j, qj := range q {
				if qj != 0 {
					want += qj * float32(tv.codes[j*n+i])
				}
			}
			want *= tv.scale[i]
			if got[i] != want {
				t.Fatalf("%d nonzero dimensions, vector %d: %v, the plain sum %v", nonzero, i, got[i], want)
			}
		}
	}
}
