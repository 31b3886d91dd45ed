package sqlite

import (
	"context"
	"database/sql"
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"sort"

	"github.com/vibelife/vibe/knowledge"
)

// exactByRowid scores the theme's vectors of rowids (the embeddings rows of
// another theme are left out) against the unit vector q into top, each by
// its float32 values: from the cache of v, or read by vectorsByRowid and
// cached.
func (s *Store) exactByRowid(ctx context.Context, v view, theme string, rowids []int64, q []float32, top *topN) error {
	// The dimensions where q is not zero: the others add a zero to the dot
	// product, which leaves it as it is (it is never -0), so they are not
	// read.
	var nz []int
	for j, x := range q {
		if x != 0 {
			nz = append(nz, j)
		}
	}
	var miss []int64
	for _, r := range rowids {
		cv, ok := v.vector(r)
		if !ok {
			miss = append(miss, r)
			continue
		}
		if cv.theme != theme {
			continue
		}
		if cv.dims != len(q) {
			return fmt.Errorf("chunk %s: vector of %d dims, the query %d: %w", cv.id, cv.dims, len(q), knowledge.ErrDimensionMismatch)
		}
		top.add(cv.id, cv.dot(q, nz))
	}
	if len(miss) == 0 {
		return nil
	}
	rows, err := s.queryStmt(ctx, vectorsByRowid, theme, jsonInts(miss))
	if err != nil {
		return err
	}
	defer rows.Close()
	var rowid, gen int64
	var id string
	var blob sql.RawBytes
	var read []*cachedVector
	var readIDs []int64
	for rows.Next() {
		if err := rows.Scan(&rowid, &id, &blob, &gen); err != nil {
			return err
		}
		if d := blobDims(blob); d != len(q) {
			return fmt.Errorf("chunk %s: vector of %d dims, the query %d: %w", id, d, len(q), knowledge.ErrDimensionMismatch)
		}
		cv := cachedFromBlob(id, theme, blob)
		top.add(id, cv.dot(q, nz))
		read = append(read, cv)
		readIDs = append(readIDs, rowid)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	v.putVectors(gen, readIDs, read)
	return nil
}

// newCachedVector keeps the float32 vector blob (little-endian) of chunk
// id: its values (only the nonzero ones, with the set of their dimensions,
// when that is smaller) and the inverse of its norm.
func newCachedVector(id, theme string, blob []byte) *cachedVector {
	dims := len(blob) / 4
	cv := &cachedVector{id: id, theme: theme, dims: dims}
	// The norm as normalize computes it, to the bit: in float64, over
	// every dimension in order; a zero (or -0) adds +0, which leaves the
	// sum as it is, so only the nonzero values are added, in one pass
	// that also keeps them.
	var sum float64
	words := (dims + 63) / 64
	has := make([]uint64, words)
	var buf [1024]float32
	nz := buf[:0]
	b := blob[:4*dims]
	add := func(j int, u uint32) {
		x := math.Float32frombits(u)
		sum += float64(x) * float64(x)
		nz = append(nz, x)
		has[uint(j)/64] |= 1 << (uint(j) % 64)
	}
	j := 0
	for ; j+2 <= dims; j += 2 { // two values a word; most pairs are zeros
		w := binary.LittleEndian.Uint64(b[4*j:])
		if w&0x7fffffff7fffffff == 0 { // each +0 or -0
			continue
		}
		if u := uint32(w); u<<1 != 0 {
			add(j, u)
		}
		if u := uint32(w >> 32); u<<1 != 0 {
			add(j+1, u)
		}
	}
	if j < dims {
		if u := binary.LittleEndian.Uint32(b[4*j:]); u<<1 != 0 {
			add(j, u)
		}
	}
	cv.zero = sum == 0
	cv.inv = 1
	if !cv.zero {
		cv.inv = float32(1 / math.Sqrt(sum))
	}
	if 4*len(nz)+10*words < 4*dims && dims <= 1<<16 {
		cv.vals = append([]float32(nil), nz...)
		cv.has = has
		cv.before = make([]uint16, words)
		n := 0
		for w, x := range has {
			cv.before[w] = uint16(n)
			n += bits.OnesCount64(x)
		}
	} else {
		cv.vals = make([]float32, dims)
		decodeInto(cv.vals, blob)
	}
	return cv
}

// dot is the cosine of the vector with the unit vector q, whose nonzero
// dimensions are nz (ascending): each value normalised by inv, then
// multiplied by q's and added, dimension by dimension, as decodeInto,
// normalize and a dot product over every dimension compute it (the
// dimensions skipped add zeros).
func (cv *cachedVector) dot(q []float32, nz []int) float32 {
	var d float32
	if cv.has == nil {
		for _, j := range nz {
			x := cv.vals[j]
			if !cv.zero {
				x *= cv.inv
			}
			d += x * q[j]
		}
		return d
	}
	for _, j := range nz {
		w := cv.has[j/64]
		bit := uint64(1) << (j % 64)
		if w&bit == 0 {
			continue
		}
		x := cv.vals[int(cv.before[j/64])+bits.OnesCount64(w&(bit-1))]
		if !cv.zero {
			x *= cv.inv
		}
		d += x * q[j]
	}
	return d
}

// decodeAt decodes the little-endian float32 at byte i of b.
func decodeAt(b []byte, i int) float32 {
	return math.Float32frombits(uint32(b[i]) | uint32(b[i+1])<<8 | uint32(b[i+2])<<16 | uint32(b[i+3])<<24)
}

func decodeInto(v []float32, b []byte) {
	for i := range v {
		v[i] = math.Float32frombits(uint32(b[4*i]) | uint32(b[4*i+1])<<8 | uint32(b[4*i+2])<<16 | uint32(b[4*i+3])<<24)
	}
}

// topN keeps the n best (id, score) pairs, best first, equal scores in id
// order.
type topN struct {
	n   int
	ids []string
	s   []float32
}

func newTopN(n int) *topN { return &topN{n: n} }

// above reports whether (s, id) ranks above entry i.
func (t *topN) above(s float32, id string, i int) bool {
	return s > t.s[i] || s == t.s[i] && id < t.ids[i]
}

func (t *topN) add(id string, s float32) {
	if t.n <= 0 || len(t.s) == t.n && !t.above(s, id, t.n-1) {
		return
	}
	k := sort.Search(len(t.s), func(i int) bool { return t.above(s, id, i) })
	if len(t.s) < t.n {
		t.s = append(t.s, 0)
		t.ids = append(t.ids, "")
	}
	copy(t.s[k+1:], t.s[k:len(t.s)-1])
	copy(t.ids[k+1:], t.ids[k:len(t.ids)-1])
	t.s[k], t.ids[k] = s, id
}

func (t *topN) hits() []knowledge.Hit {
	out := make([]knowledge.Hit, len(t.ids))
	for i := range t.ids {
		out[i].Chunk.ID = t.ids[i]
		out[i].VectorScore = float64(t.s[i])
	}
	return out
}
