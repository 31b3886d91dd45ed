package sqlite

import (
	"encoding/binary"
	"math"
	"math/bits"
)

// A vector is stored in embeddings.vector in one of two forms:
//
//   - dense: its dims float32 values, little-endian (4*dims bytes), as
//     EncodeVector writes them;
//   - sparse (migration 14): the byte sparseTag, dims as a little-endian
//     uint16, a bit set of the dimensions whose value is not +0 (one
//     little-endian uint64 a 64 dimensions), then those values as
//     little-endian float32s in dimension order: 3 + 8*ceil(dims/64) +
//     4*nonzero bytes. Its length is 3 more than a multiple of 4, so it is
//     never taken for a dense blob.
//
// storeVector writes the sparse form when it is the smaller: the local
// embedder's hashed n-grams hold about 280 nonzero values of 1024, 1.3 KB
// instead of 4 KB, which fits in a page of the file where 4 KB needs an
// overflow page, and the exact rerank reads the nonzero values as they are
// cached instead of scanning every dimension. Both forms decode to the
// same float32 values, bit for bit (-0 is kept as a value), so every score
// is the one the dense blob gave.
const sparseTag = 0xa5

// storeVector is the blob stored for v: sparse when that is smaller.
func storeVector(v []float32) []byte {
	dims := len(v)
	if dims == 0 || dims > math.MaxUint16 {
		return EncodeVector(v)
	}
	nz := 0
	for _, x := range v {
		if math.Float32bits(x) != 0 {
			nz++
		}
	}
	words := (dims + 63) / 64
	size := 3 + 8*words + 4*nz
	if size >= 4*dims {
		return EncodeVector(v)
	}
	b := make([]byte, size)
	b[0] = sparseTag
	binary.LittleEndian.PutUint16(b[1:], uint16(dims))
	vals := b[3+8*words:]
	k := 0
	for j, x := range v {
		u := math.Float32bits(x)
		if u == 0 {
			continue
		}
		w := 3 + 8*(j/64)
		binary.LittleEndian.PutUint64(b[w:], binary.LittleEndian.Uint64(b[w:])|1<<(j%64))
		binary.LittleEndian.PutUint32(vals[4*k:], u)
		k++
	}
	return b
}

// sparseParts splits a sparse blob into its dimensions, bit set and values;
// ok is false for a dense blob or a malformed sparse one.
func sparseParts(b []byte) (dims int, set, vals []byte, ok bool) {
	if len(b)%4 != 3 || b[0] != sparseTag {
		return 0, nil, nil, false
	}
	dims = int(binary.LittleEndian.Uint16(b[1:]))
	words := (dims + 63) / 64
	if dims == 0 || len(b) < 3+8*words {
		return 0, nil, nil, false
	}
	set, vals = b[3:3+8*words], b[3+8*words:]
	n := 0
	for w := 0; w < words; w++ {
		n += bits.OnesCount64(binary.LittleEndian.Uint64(set[8*w:]))
	}
	if 4*n != len(vals) || dims%64 != 0 && binary.LittleEndian.Uint64(set[8*(words-1):])>>(dims%64) != 0 {
		return 0, nil, nil, false
	}
	return dims, set, vals, true
}

// blobDims is the dimensions of a stored vector blob (-1 when it is
// neither form).
func blobDims(b []byte) int {
	if dims, _, _, ok := sparseParts(b); ok {
		return dims
	}
	if len(b)%4 != 0 {
		return -1
	}
	return len(b) / 4
}

// decodeBlob decodes a stored vector blob of len(v) dimensions (blobDims)
// into v.
func decodeBlob(v []float32, b []byte) {
	dims, set, vals, ok := sparseParts(b)
	if !ok {
		decodeInto(v, b)
		return
	}
	clear(v[:dims])
	k := 0
	for w := 0; 8*w < len(set); w++ {
		for x := binary.LittleEndian.Uint64(set[8*w:]); x != 0; x &= x - 1 {
			v[64*w+bits.TrailingZeros64(x)] = decodeAt(vals, 4*k)
			k++
		}
	}
}

// newCachedVectorSparse is newCachedVector of a sparse blob, without
// scanning the dimensions its bit set says are zeros; ok is false when it
// holds a -0 (newCachedVector leaves those out of the values) or is not
// sparse.
func newCachedVectorSparse(id, theme string, b []byte) (*cachedVector, bool) {
	dims, set, vals, ok := sparseParts(b)
	if !ok {
		return nil, false
	}
	n := len(vals) / 4
	words := len(set) / 8
	if !(4*n+10*words < 4*dims && dims <= 1<<16) {
		return nil, false // newCachedVector keeps it dense
	}
	cv := &cachedVector{id: id, theme: theme, dims: dims, has: make([]uint64, words), before: make([]uint16, words)}
	if n > 0 {
		cv.vals = make([]float32, n)
	}
	// The norm as normalize computes it (see newCachedVector): the nonzero
	// values' squares in dimension order, in float64.
	var sum float64
	for k := range cv.vals {
		u := binary.LittleEndian.Uint32(vals[4*k:])
		if u<<1 == 0 {
			return nil, false // -0
		}
		x := math.Float32frombits(u)
		sum += float64(x) * float64(x)
		cv.vals[k] = x
	}
	c := 0
	for w := range cv.has {
		x := binary.LittleEndian.Uint64(set[8*w:])
		cv.has[w] = x
		cv.before[w] = uint16(c)
		c += bits.OnesCount64(x)
	}
	cv.zero = sum == 0
	cv.inv = 1
	if !cv.zero {
		cv.inv = float32(1 / math.Sqrt(sum))
	}
	return cv, true
}

// cachedFromBlob is the cachedVector of a stored vector blob (either
// form) of chunk id.
func cachedFromBlob(id, theme string, b []byte) *cachedVector {
	if cv, ok := newCachedVectorSparse(id, theme, b); ok {
		return cv
	}
	if dims, _, _, ok := sparseParts(b); ok {
		v := make([]float32, dims)
		decodeBlob(v, b)
		return newCachedVector(id, theme, EncodeVector(v))
	}
	return newCachedVector(id, theme, b)
}
