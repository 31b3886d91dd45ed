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
	var id string
	var blob sql.RawBytes
	v := make([]float32, len(q))
	for rows.Next() {
		if err := rows.Scan(&id, &blob); err != nil {
			return err
		}
		if len(blob) != 4*len(q) {
			return fmt.Errorf("chunk %s: vector of %d dims, the query %d: %w", id, len(blob)/4, len(q), knowledge.ErrDimensionMismatch)
		}
		decodeInto(v, blob)
		normalize(v)
		var d float32
		for j, x := range v {
			d += x * q[j]
		}
		top.add(id, d)
	}
	return rows.Err()
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
