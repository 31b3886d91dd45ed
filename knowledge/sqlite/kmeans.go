package sqlite

import (
	"math/rand/v2"
)

// trainCentroids returns k unit centroids of the unit vectors vecs by
// spherical k-means (each vector joins the centroid of largest dot
// product; each centroid is its members' normalised mean), started from k
// distinct vectors chosen by seed and run for iters rounds or until no
// vector changes list. A centroid left without members takes the vector
// farthest from its own centroid. It returns fewer than k centroids when
// vecs holds fewer than k vectors.
func trainCentroids(vecs [][]float32, k, iters int, seed uint64) [][]float32 {
	if k > len(vecs) {
		k = len(vecs)
	}
	if k == 0 {
		return nil
	}
	dims := len(vecs[0])
	r := rand.New(rand.NewPCG(seed, 0x1f))
	perm := r.Perm(len(vecs))
	cents := make([][]float32, k)
	for i := range cents {
		cents[i] = append([]float32(nil), vecs[perm[i]]...)
	}
	assign := make([]int, len(vecs))
	for i := range assign {
		assign[i] = -1
	}
	best := make([]float32, len(vecs))
	sums := make([][]float64, k)
	for i := range sums {
		sums[i] = make([]float64, dims)
	}
	counts := make([]int, k)
	for it := 0; it < iters; it++ {
		changed := 0
		for i, v := range vecs {
			c, s := nearest(cents, v)
			if c != assign[i] {
				changed++
				assign[i] = c
			}
			best[i] = s
		}
		if changed == 0 && it > 0 {
			break
		}
		for c := range sums {
			clear(sums[c])
			counts[c] = 0
		}
		for i, v := range vecs {
			c := assign[i]
			counts[c]++
			s := sums[c]
			for j, x := range v {
				s[j] += float64(x)
			}
		}
		for c := range cents {
			if counts[c] == 0 {
				// Reseed an empty list with the worst-placed vector.
				w := 0
				for i := range best {
					if best[i] < best[w] {
						w = i
					}
				}
				copy(cents[c], vecs[w])
				best[w] = 2
				continue
			}
			for j, x := range sums[c] {
				cents[c][j] = float32(x)
			}
			normalize(cents[c])
		}
	}
	return cents
}

// nearest returns the index of the centroid of largest dot product with v,
// and that product.
func nearest(cents [][]float32, v []float32) (int, float32) {
	bi, bs := 0, float32(-2)
	for c, cv := range cents {
		s := dot(cv, v)
		if s > bs {
			bi, bs = c, s
		}
	}
	return bi, bs
}

func dot(a, b []float32) float32 {
	var s0, s1, s2, s3 float32
	b = b[:len(a)]
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return s0 + s1 + s2 + s3
}
