package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"sort"

	"github.com/vibelife/vibe/knowledge"
)

// scanVectors scores the vectors a query returns (chunk id, vector) against
// the unit vector q into top.
func (s *Store) scanVectors(ctx context.Context, query string, args []any, q []float32, top *topN) error {
	rows, err := s.queryStmt(ctx, query, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	// The dimensions where q is not zero: the others add a zero to the dot
	// product, which leaves it as it is (it is never -0), so they are not
	// read.
	var nz []int
	for j, x := range q {
		if x != 0 {
			nz = append(nz, j)
		}
	}
	var id string
	var blob sql.RawBytes
	for rows.Next() {
		if err := rows.Scan(&id, &blob); err != nil {
			return err
		}
		if len(blob) != 4*len(q) {
			return fmt.Errorf("chunk %s: vector of %d dims, the query %d: %w", id, len(blob)/4, len(q), knowledge.ErrDimensionMismatch)
		}
		// As decodeInto, normalize and the dot product with q over every
		// dimension, to the bit, without writing the vector out.
		var sum float64
		for i := 0; i < len(blob); i += 4 {
			x := float64(decodeAt(blob, i))
			sum += x * x
		}
		inv := float32(1)
		if sum != 0 {
			inv = float32(1 / math.Sqrt(sum))
		}
		var d float32
		for _, j := range nz {
			x := decodeAt(blob, 4*j)
			if sum != 0 {
				x *= inv
			}
			d += x * q[j]
		}
		top.add(id, d)
	}
	return rows.Err()
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
