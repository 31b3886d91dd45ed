package sqlite

import (
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strings"

	"github.com/vibelife/vibe/knowledge"
)

// The vector index (IVF) of a theme of dense vectors: k-means centroids
// (about the square root of the theme's vectors, trained on a sample) in
// vec_ivf, and each vector's int8 code in the list of its nearest centroid,
// in vec_ivf_lists rows keyed (theme, list, document). A search scores the
// centroids, reads the ivfProbes best lists from disk, ranks their codes and
// ranks the best of those again exactly by their float32 vectors: the
// theme's vectors are never all loaded, and a search reads a share of them
// that falls as the theme grows (the lists grow as the square root).
//
// A write assigns its vectors to their lists in its own transaction and a
// delete removes its document's rows with it, so the lists always hold
// exactly the theme's vectors. The centroids are trained by
// [Store.IndexVectors] (at the end of `vibe ingest`) once a theme holds
// ivfMinVectors dense vectors, and again when it has grown ivfGrowth times
// since: amortised, each vector is assigned a constant number of times.
//
// Sparse vectors, the local embedder's hashed n-grams, get no index: their
// queries hold a few dozen nonzero dimensions of 1024 and no clustering
// ranks the lists holding their nearest chunks first (recall@10 0.94 with
// half the lists read, docs/retrieval.md), while the exact scan of the
// query's dimensions over the theme's codes costs a few bytes a chunk. A
// sparse query on an indexed theme takes the exact scan too.
const (
	// ivfMinVectors is the smallest theme that is indexed; below it the
	// exact scan reads less than the index would.
	ivfMinVectors = 4096
	// ivfGrowth is how many times its trained size a theme grows before
	// its centroids are trained again.
	ivfGrowth = 4
	// ivfSamplePerList is the training sample's size per list.
	ivfSamplePerList = 32
	// ivfIters bounds the k-means rounds.
	ivfIters = 10
	// ivfDenseShare: a vector with at least this share of nonzero
	// dimensions is dense.
	ivfDenseShare = 0.5
)

// ivfProbes is how many of nlist lists a search reads: 1.5 times the
// square root of nlist, at least 8 (13 of 71 lists at 5,000 vectors, 25 of
// 274 at 75,000), so that a search reads about 1.5 N^0.75 of a theme's N
// vectors. TestIVFRecall measures recall@10 against exact search.
func ivfProbes(nlist int) int {
	return min(nlist, max(8, int(math.Ceil(1.5*math.Sqrt(float64(nlist))))))
}

// ivfIndex is a theme's trained centroids, cached by version.
type ivfIndex struct {
	version int64
	dims    int
	cents   [][]float32
}

type rowQuerier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// ivf returns the theme's index, or nil when it has none.
func (s *Store) ivf(ctx context.Context, q rowQuerier, theme string) (*ivfIndex, error) {
	var version int64
	err := q.QueryRowContext(ctx, `SELECT version FROM vec_ivf WHERE theme = ?`, theme).Scan(&version)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	ix := s.ivfCache[theme]
	s.mu.Unlock()
	if ix != nil && ix.version == version {
		return ix, nil
	}
	var blob []byte
	ix = &ivfIndex{version: version}
	if err := q.QueryRowContext(ctx, `SELECT version, dims, centroids FROM vec_ivf WHERE theme = ?`, theme).Scan(&ix.version, &ix.dims, &blob); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return nil, nil
		}
		return nil, err
	}
	if ix.dims <= 0 || len(blob)%(4*ix.dims) != 0 {
		return nil, fmt.Errorf("vector index of %s: %d bytes of centroids for %d dims", theme, len(blob), ix.dims)
	}
	all := DecodeVector(blob)
	for i := 0; i < len(all); i += ix.dims {
		ix.cents = append(ix.cents, all[i:i+ix.dims:i+ix.dims])
	}
	s.mu.Lock()
	if old := s.ivfCache[theme]; old == nil || old.version <= ix.version {
		s.ivfCache[theme] = ix
	}
	s.mu.Unlock()
	return ix, nil
}

// ivfList is the part of one list a document holds: its vectors' rowids in
// embeddings, their scales and their int8 codes, a vector after another.
type ivfList struct {
	rowids []byte
	scales []byte
	codes  []int8
}

func (l *ivfList) add(rowid int64, unit []float32) {
	l.rowids = binary.LittleEndian.AppendUint64(l.rowids, uint64(rowid))
	at := len(l.codes)
	l.codes = append(l.codes, make([]int8, len(unit))...)
	scale := quantizeInto(unit, l.codes[at:], 1)
	l.scales = binary.LittleEndian.AppendUint32(l.scales, math.Float32bits(scale))
}

// insertLists writes a document's lists.
func insertLists(ctx context.Context, tx *sql.Tx, theme, doc string, lists map[int]*ivfList) error {
	keys := make([]int, 0, len(lists))
	for k := range lists {
		keys = append(keys, k)
	}
	sort.Ints(keys)
	for _, k := range keys {
		l := lists[k]
		if _, err := tx.ExecContext(ctx, `INSERT INTO vec_ivf_lists(theme, list, doc_id, rowids, scales, codes) VALUES (?,?,?,?,?,?)`,
			theme, k, doc, l.rowids, l.scales, int8Bytes(l.codes)); err != nil {
			return fmt.Errorf("vector index: %w", err)
		}
	}
	return nil
}

func int8Bytes(c []int8) []byte {
	b := make([]byte, len(c))
	for i, x := range c {
		b[i] = byte(x)
	}
	return b
}

// indexWrite assigns a document's vectors (rowids in embeddings) to the
// lists of its theme's index, inside the document's write transaction. A
// theme without an index is left alone; one whose index has other
// dimensions (the store was emptied and refilled by another model) loses
// it, and searches scan exactly until the next IndexVectors.
func (s *Store) indexWrite(ctx context.Context, tx *sql.Tx, theme, doc string, rowids []int64, vectors [][]float32) error {
	if len(vectors) == 0 {
		return nil
	}
	ix, err := s.ivf(ctx, tx, theme)
	if err != nil || ix == nil {
		return err
	}
	if ix.dims != len(vectors[0]) {
		return dropIndex(ctx, tx, theme)
	}
	lists := map[int]*ivfList{}
	u := make([]float32, ix.dims)
	for i, v := range vectors {
		copy(u, v)
		normalize(u)
		k, _ := nearest(ix.cents, u)
		l := lists[k]
		if l == nil {
			l = &ivfList{}
			lists[k] = l
		}
		l.add(rowids[i], u)
	}
	return insertLists(ctx, tx, theme, doc, lists)
}

func dropIndex(ctx context.Context, tx *sql.Tx, theme string) error {
	if _, err := tx.ExecContext(ctx, `DELETE FROM vec_ivf_lists WHERE theme = ?`, theme); err != nil {
		return err
	}
	_, err := tx.ExecContext(ctx, `DELETE FROM vec_ivf WHERE theme = ?`, theme)
	return err
}

// IndexVectors trains the vector index of a theme when it needs it: a
// theme of at least ivfMinVectors dense vectors without an index, or one
// grown ivfGrowth times since its centroids were trained. The centroids
// are trained on a sample read outside any transaction; every vector is
// then assigned to its list in one write transaction (searches go on
// meanwhile, on the previous index or the exact scan). It does nothing for
// sparse vectors and small themes, and is safe to call after every ingest.
func (s *Store) IndexVectors(ctx context.Context, theme string) error {
	if err := s.indexVectors(ctx, theme, false); err != nil {
		return fmt.Errorf("index vectors of %s: %w", theme, err)
	}
	return nil
}

func (s *Store) indexVectors(ctx context.Context, theme string, force bool) error {
	var n int
	if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM embeddings WHERE theme = ?`, theme).Scan(&n); err != nil {
		return err
	}
	var trained int
	err := s.db.QueryRowContext(ctx, `SELECT trained_n FROM vec_ivf WHERE theme = ?`, theme).Scan(&trained)
	has := err == nil
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return err
	}
	if !force && (n < s.ivfMin || has && n < ivfGrowth*trained) {
		return nil
	}
	if !has && !force {
		dense, err := s.denseTheme(ctx, theme)
		if err != nil || !dense {
			return err
		}
	}
	nlist := int(math.Ceil(math.Sqrt(float64(n))))
	sample, dims, err := s.sampleVectors(ctx, theme, nlist*ivfSamplePerList)
	if err != nil {
		return err
	}
	if len(sample) == 0 {
		return nil
	}
	cents := trainCentroids(sample, nlist, ivfIters, uint64(n))
	sample = nil
	blob := make([]byte, 0, 4*dims*len(cents))
	for _, c := range cents {
		blob = append(blob, EncodeVector(c)...)
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := dropIndex(ctx, tx, theme); err != nil {
		return err
	}
	// The version is the theme's generation, advanced here: it never
	// repeats, so a cached index of the theme is never taken for this one.
	if err := bumpGen(ctx, tx, theme); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO vec_ivf(theme, version, dims, trained_n, centroids) VALUES (?, (SELECT gen FROM theme_gen WHERE theme = ?), ?, ?, ?)`,
		theme, theme, dims, n, blob); err != nil {
		return err
	}
	docs, err := txStrings(ctx, tx, `SELECT id FROM documents WHERE theme = ?`, theme)
	if err != nil {
		return err
	}
	u := make([]float32, dims)
	for _, doc := range docs {
		if err := ctx.Err(); err != nil {
			return err
		}
		lists := map[int]*ivfList{}
		rows, err := tx.QueryContext(ctx, `SELECT e.rowid, e.vector FROM chunks c JOIN embeddings e ON e.chunk_id = c.id WHERE c.doc_id = ?`, doc)
		if err != nil {
			return err
		}
		for rows.Next() {
			var rowid int64
			var v sql.RawBytes
			if err := rows.Scan(&rowid, &v); err != nil {
				rows.Close()
				return err
			}
			if d := blobDims(v); d != dims {
				rows.Close()
				return fmt.Errorf("rowid %d: vector of %d dims among %d: %w", rowid, d, dims, knowledge.ErrDimensionMismatch)
			}
			decodeBlob(u, v)
			normalize(u)
			k, _ := nearest(cents, u)
			l := lists[k]
			if l == nil {
				l = &ivfList{}
				lists[k] = l
			}
			l.add(rowid, u)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		if err := insertLists(ctx, tx, theme, doc, lists); err != nil {
			return err
		}
	}
	return tx.Commit()
}

func txStrings(ctx context.Context, tx *sql.Tx, query string, args ...any) ([]string, error) {
	rows, err := tx.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// denseTheme reports whether the theme's first vectors are dense (at least
// ivfDenseShare of their dimensions nonzero, on average).
func (s *Store) denseTheme(ctx context.Context, theme string) (bool, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT vector FROM embeddings WHERE theme = ? LIMIT 64`, theme)
	if err != nil {
		return false, err
	}
	defer rows.Close()
	var nz, all int
	for rows.Next() {
		var v sql.RawBytes
		if err := rows.Scan(&v); err != nil {
			return false, err
		}
		if _, _, vals, ok := sparseParts(v); ok {
			all += blobDims(v)
			v = vals // the values not stored are +0
		} else {
			all += len(v) / 4
		}
		for i := 0; i+4 <= len(v); i += 4 {
			if binary.LittleEndian.Uint32(v[i:])&0x7fffffff != 0 {
				nz++
			}
		}
	}
	if err := rows.Err(); err != nil {
		return false, err
	}
	return all > 0 && float64(nz) >= ivfDenseShare*float64(all), nil
}

// sampleVectors returns up to k of the theme's vectors, normalised, drawn
// uniformly (reservoir sampling with a fixed seed), and their dimensions.
func (s *Store) sampleVectors(ctx context.Context, theme string, k int) ([][]float32, int, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT vector FROM embeddings WHERE theme = ?`, theme)
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	r := rand.New(rand.NewPCG(uint64(k), 0x5a))
	var out [][]float32
	dims, seen := 0, 0
	for rows.Next() {
		var v sql.RawBytes
		if err := rows.Scan(&v); err != nil {
			return nil, 0, err
		}
		if dims == 0 {
			dims = blobDims(v)
		}
		if d := blobDims(v); d != dims || d <= 0 {
			return nil, 0, fmt.Errorf("vector of %d dims among %d: %w", d, dims, knowledge.ErrDimensionMismatch)
		}
		seen++
		slot := len(out)
		if slot >= k {
			slot = r.IntN(seen)
			if slot >= k {
				continue
			}
		}
		u := make([]float32, dims)
		decodeBlob(u, v)
		normalize(u)
		if slot == len(out) {
			out = append(out, u)
		} else {
			out[slot] = u
		}
	}
	return out, dims, rows.Err()
}

// denseQuery reports whether the unit query q is dense enough for the index.
func denseQuery(q []float32) bool {
	nz := 0
	for _, x := range q {
		if x != 0 {
			nz++
		}
	}
	return float64(nz) >= ivfDenseShare*float64(len(q))
}

// ivfSearch returns the n vectors of the theme nearest to the unit vector
// q through the index ix: the ivfProbes lists of the centroids nearest q
// are read and their codes scored, and the best rerankCandidates(n) of
// them ranked exactly by their float32 vectors.
func (s *Store) ivfSearch(ctx context.Context, v view, theme string, ix *ivfIndex, q []float32, n int) ([]knowledge.Hit, error) {
	type cs struct {
		list int
		s    float32
	}
	order := make([]cs, len(ix.cents))
	for i, c := range ix.cents {
		order[i] = cs{i, dot(c, q)}
	}
	sort.Slice(order, func(i, j int) bool { return order[i].s > order[j].s })
	probe := ivfProbes(len(order))
	args := []any{theme}
	for _, o := range order[:probe] {
		args = append(args, o.list)
	}
	rows, err := s.db.QueryContext(ctx, `SELECT rowids, scales, codes FROM vec_ivf_lists WHERE theme = ? AND list IN (?`+strings.Repeat(",?", probe-1)+`)`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cand := newTopRows(rerankCandidates(n))
	dims := len(q)
	for rows.Next() {
		var rowids, scales, codes sql.RawBytes
		if err := rows.Scan(&rowids, &scales, &codes); err != nil {
			return nil, err
		}
		m := len(rowids) / 8
		if len(scales) != 4*m || len(codes) != dims*m {
			return nil, fmt.Errorf("vector index of %s: a list row of %d vectors holds %d bytes of codes for %d dims", theme, m, len(codes), dims)
		}
		for i := 0; i < m; i++ {
			c := codes[i*dims : (i+1)*dims]
			var a0, a1, a2, a3 float32
			j := 0
			for ; j+4 <= dims; j += 4 {
				a0 += q[j] * float32(int8(c[j]))
				a1 += q[j+1] * float32(int8(c[j+1]))
				a2 += q[j+2] * float32(int8(c[j+2]))
				a3 += q[j+3] * float32(int8(c[j+3]))
			}
			for ; j < dims; j++ {
				a0 += q[j] * float32(int8(c[j]))
			}
			sc := math.Float32frombits(binary.LittleEndian.Uint32(scales[4*i:]))
			cand.add(int64(binary.LittleEndian.Uint64(rowids[8*i:])), (a0+a1+a2+a3)*sc)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	rows.Close()
	top := newTopN(n)
	// The theme is checked: a rowid read from a list may have been deleted
	// and reused since.
	if err := s.exactByRowid(ctx, v, theme, cand.ids, q, top); err != nil {
		return nil, err
	}
	return top.hits(), nil
}

// topRows keeps the n best (rowid, score) pairs, best first.
type topRows struct {
	n   int
	ids []int64
	s   []float32
}

func newTopRows(n int) *topRows { return &topRows{n: n} }

func (t *topRows) add(id int64, s float32) {
	if t.n <= 0 || len(t.s) == t.n && s <= t.s[t.n-1] {
		return
	}
	k := sort.Search(len(t.s), func(i int) bool { return s > t.s[i] })
	if len(t.s) < t.n {
		t.s = append(t.s, 0)
		t.ids = append(t.ids, 0)
	}
	copy(t.s[k+1:], t.s[k:len(t.s)-1])
	copy(t.ids[k+1:], t.ids[k:len(t.ids)-1])
	t.s[k], t.ids[k] = s, id
}
