package sqlite

import (
	"math"
	"math/rand/v2"
	"reflect"
	"testing"
)

// A vector stored sparse decodes to the same float32 values, bit for bit,
// as the dense blob (-0, infinities and NaNs included), and its cached form
// for the exact rerank is the one the dense blob gives, so every score is
// the same.
func TestSparseBlobsDecodeAsDense(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 14))
	sparse := 0
	for round := 0; round < 3000; round++ {
		dims := []int{1024, 100, 64, 7, 1, 65, 4096}[round%7]
		density := []float64{0, 0.01, 0.05, 0.3, 0.7, 0.95, 1}[round%7*3%7]
		v := make([]float32, dims)
		for j := range v {
			if r.Float64() < density {
				v[j] = float32(r.NormFloat64())
			}
		}
		if round%5 == 0 {
			v[r.IntN(dims)] = float32(math.Copysign(0, -1))
		}
		if round%11 == 0 {
			v[r.IntN(dims)] = []float32{float32(math.Inf(1)), float32(math.NaN()), math.SmallestNonzeroFloat32}[round%3]
		}
		blob := storeVector(v)
		if len(blob) > 4*dims {
			t.Fatalf("dims %d: %d bytes stored", dims, len(blob))
		}
		if _, _, _, ok := sparseParts(blob); ok {
			sparse++
		} else if len(blob) != 4*dims {
			t.Fatalf("dims %d: a blob of %d bytes that is not sparse", dims, len(blob))
		}
		if got := blobDims(blob); got != dims {
			t.Fatalf("dims %d: blobDims %d", dims, got)
		}
		got := make([]float32, dims)
		for j := range got {
			got[j] = 42 // decodeBlob writes every dimension
		}
		decodeBlob(got, blob)
		for j := range v {
			if math.Float32bits(got[j]) != math.Float32bits(v[j]) {
				t.Fatalf("dims %d density %v: dimension %d decoded %v, stored %v", dims, density, j, got[j], v[j])
			}
		}
		want := newCachedVector("c", "t", EncodeVector(v))
		if cv := cachedFromBlob("c", "t", blob); !reflect.DeepEqual(cv, want) && !hasNaN(v) {
			t.Fatalf("dims %d density %v: cached %+v, want %+v", dims, density, cv, want)
		}
		if density <= 0.05 && dims >= 100 && len(blob) == 4*dims {
			t.Errorf("dims %d density %v: stored dense", dims, density)
		}
	}
	if sparse == 0 {
		t.Fatal("no vector was stored sparse")
	}
	// Neither form is taken for the other.
	for _, b := range [][]byte{nil, {sparseTag}, {sparseTag, 0, 0}, {sparseTag, 64, 0, 1, 0, 0, 0, 0, 0, 0, 0}, {sparseTag, 1, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 128, 63}} {
		if _, _, _, ok := sparseParts(b); ok {
			t.Errorf("%x taken as sparse", b)
		}
	}
}

func hasNaN(v []float32) bool {
	for _, x := range v {
		if x != x {
			return true
		}
	}
	return false
}
