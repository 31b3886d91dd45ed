package sqlite

import (
	"context"
	"sync"

	"github.com/vibelife/vibe/chunk"
	"github.com/vibelife/vibe/knowledge/lexindex"
)

// A search reads again much of what the searches before it read: the
// posting rows of a language's common characters, the chunks and vectors of
// a theme's best passages. The store keeps what searches read in a cache
// bounded in bytes (readCacheBytes, first in first out), valid for one
// generation of the whole store: the sum of every theme's theme_gen, which
// every write transaction advances. Each search reads the generation first,
// in one small statement, so a write by any process (another `vibe ingest`
// into the same file while `vibe serve` runs) empties the cache for the next
// search; and each statement that fills the cache reads the generation with
// its rows (one snapshot), so rows read after a write never enter the cache
// of the generation before it.
//
// What is cached is what the statements would return, so a search returns
// the same hits, to the bit, with the cache or without.

// Byte budgets of the cache's parts. They bound the memory a long-running
// process (vibe serve) adds; a process that searches once fills little.
const (
	cacheChunkBytes  = 16 << 20
	cacheVectorBytes = 32 << 20
	cacheTermBytes   = 16 << 20
)

// storeGen is the statement that reads the store's generation, and
// genColumn the column that adds it to a statement's rows.
const (
	storeGenExpr = `(SELECT coalesce(sum(gen), 0) FROM theme_gen)`
	genColumn    = `, ` + storeGenExpr
)

// readCache is the store's cache of what searches read, for the store
// generation gen.
type readCache struct {
	mu      sync.Mutex
	gen     int64
	chunks  fifo[string, chunk.Chunk]    // by chunk id
	ids     fifo[numKey, string]         // chunk id by lexical index number
	vectors fifo[int64, *cachedVector]   // by embeddings rowid
	terms   fifo[termKey, lexindex.Term] // a theme's posting rows of a term
	stats   lexindex.Stats
	hasSt   bool // stats were read
}

type numKey struct{ num int64 }

type termKey struct{ theme, term string }

// cachedVector is an embeddings row as scoring needs it: the chunk id and
// theme read with it, its float32 values (the nonzero ones, with a bit set
// of their dimensions, when that is smaller) and the inverse of its norm
// as scanVectors computes it.
type cachedVector struct {
	id, theme string
	dims      int
	inv       float32
	zero      bool      // the vector is all zeros (inv unused)
	vals      []float32 // dense: dims values; sparse: the nonzero ones
	// Sparse only: bit j%64 of has[j/64] is set when dimension j is
	// nonzero, and before[w] counts the bits of has[:w], so the value of
	// dimension j is vals[before[j/64] + the bits of has[j/64] below it].
	has    []uint64
	before []uint16
}

func newReadCache() *readCache {
	return &readCache{
		gen:     -1,
		chunks:  newFIFO[string, chunk.Chunk](cacheChunkBytes),
		ids:     newFIFO[numKey, string](cacheChunkBytes / 8),
		vectors: newFIFO[int64, *cachedVector](cacheVectorBytes),
		terms:   newFIFO[termKey, lexindex.Term](cacheTermBytes),
	}
}

// reset empties the cache for generation gen (c.mu held).
func (c *readCache) reset(gen int64) {
	c.gen = gen
	c.chunks.clear()
	c.ids.clear()
	c.vectors.clear()
	c.terms.clear()
	c.stats, c.hasSt = lexindex.Stats{}, false
}

// view is one search's use of the cache: the generations read as it
// started. c is nil when the search must not use the cache (a concurrent
// search has moved it to a later generation than this one read).
type view struct {
	themeGen int64
	gen      int64
	c        *readCache
}

// begin reads the theme's and the store's generations in one statement and
// returns the search's view of the cache, emptying the cache when the store
// has changed since it was filled.
func (s *Store) begin(ctx context.Context, theme string) (view, error) {
	var v view
	if err := s.scanStmt(ctx, `SELECT coalesce((SELECT gen FROM theme_gen WHERE theme = ?), 0), `+storeGenExpr, []any{theme}, &v.themeGen, &v.gen); err != nil {
		return view{}, err
	}
	c := s.rc
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case v.gen > c.gen:
		c.reset(v.gen)
		v.c = c
	case v.gen == c.gen:
		v.c = c
	}
	return v, nil
}

// usable reports whether rows read at generation gen may go into the cache
// of v (c.mu held).
func (v view) usable(gen int64) bool { return v.c != nil && v.c.gen == v.gen && gen == v.gen }

// chunk returns the cached chunk of id.
func (v view) chunk(id string) (chunk.Chunk, bool) {
	if v.c == nil {
		return chunk.Chunk{}, false
	}
	v.c.mu.Lock()
	defer v.c.mu.Unlock()
	if v.c.gen != v.gen {
		return chunk.Chunk{}, false
	}
	return v.c.chunks.get(id)
}

// putChunks caches chunks read at generation gen, with their numbers when
// nums is not nil.
func (v view) putChunks(gen int64, cs []chunk.Chunk, nums []int64) {
	if v.c == nil {
		return
	}
	v.c.mu.Lock()
	defer v.c.mu.Unlock()
	if !v.usable(gen) {
		return
	}
	for i, c := range cs {
		v.c.chunks.put(c.ID, c, chunkBytes(c))
		if nums != nil {
			v.c.ids.put(numKey{nums[i]}, c.ID, len(c.ID)+48)
		}
	}
}

// id returns the cached chunk id of the lexical index number num.
func (v view) id(num int64) (string, bool) {
	if v.c == nil {
		return "", false
	}
	v.c.mu.Lock()
	defer v.c.mu.Unlock()
	if v.c.gen != v.gen {
		return "", false
	}
	return v.c.ids.get(numKey{num})
}

// putIDs caches chunk ids by number, read at generation gen.
func (v view) putIDs(gen int64, nums []int64, ids []string) {
	if v.c == nil {
		return
	}
	v.c.mu.Lock()
	defer v.c.mu.Unlock()
	if !v.usable(gen) {
		return
	}
	for i, id := range ids {
		v.c.ids.put(numKey{nums[i]}, id, len(id)+48)
	}
}

// vector returns the cached embeddings row rowid.
func (v view) vector(rowid int64) (*cachedVector, bool) {
	if v.c == nil {
		return nil, false
	}
	v.c.mu.Lock()
	defer v.c.mu.Unlock()
	if v.c.gen != v.gen {
		return nil, false
	}
	return v.c.vectors.get(rowid)
}

// putVectors caches embeddings rows read at generation gen.
func (v view) putVectors(gen int64, rowids []int64, vs []*cachedVector) {
	if v.c == nil {
		return
	}
	v.c.mu.Lock()
	defer v.c.mu.Unlock()
	if !v.usable(gen) {
		return
	}
	for i, cv := range vs {
		v.c.vectors.put(rowids[i], cv, cv.bytes())
	}
}

// terms returns the cached rows of each of toks in the theme and the
// store's statistics (zero when no cached row came with them), and the
// indexes of toks that are not cached.
func (v view) terms(theme string, toks []string) (out []lexindex.Term, st lexindex.Stats, missing []int) {
	out = make([]lexindex.Term, len(toks))
	if v.c != nil {
		v.c.mu.Lock()
		defer v.c.mu.Unlock()
	}
	if v.c == nil || v.c.gen != v.gen {
		for i := range toks {
			missing = append(missing, i)
		}
		return out, st, missing
	}
	for i, t := range toks {
		if tm, hit := v.c.terms.get(termKey{theme, t}); hit {
			out[i] = tm
		} else {
			missing = append(missing, i)
		}
	}
	return out, statsIfAny(out, v.c.stats), missing
}

// statsIfAny is st when some term has a posting row in some theme, and the
// zero Stats otherwise, as termRows returns them.
func statsIfAny(terms []lexindex.Term, st lexindex.Stats) lexindex.Stats {
	for _, t := range terms {
		if len(t.Rows) > 0 || t.Elsewhere > 0 {
			return st
		}
	}
	return lexindex.Stats{}
}

// putTerms caches the rows of toks in the theme and the statistics, read
// in one statement at generation gen.
func (v view) putTerms(gen int64, theme string, toks []string, terms []lexindex.Term, st lexindex.Stats) {
	if v.c == nil {
		return
	}
	v.c.mu.Lock()
	defer v.c.mu.Unlock()
	if !v.usable(gen) {
		return
	}
	if st.Chunks > 0 { // a statement that found no row reads no statistics
		v.c.stats, v.c.hasSt = st, true
	}
	for i, t := range toks {
		n := len(theme) + len(t) + 64
		for _, r := range terms[i].Rows {
			n += len(r.Data) + 64
		}
		v.c.terms.put(termKey{theme, t}, terms[i], n)
	}
}

// chunkBytes is about the memory c holds.
func chunkBytes(c chunk.Chunk) int {
	n := 160 + len(c.ID) + len(c.Doc) + len(c.Source) + len(c.Title) + len(c.Text)
	for _, h := range c.HeadingPath {
		n += 16 + len(h)
	}
	return n
}

func (cv *cachedVector) bytes() int {
	return 96 + len(cv.id) + len(cv.theme) + 4*len(cv.vals) + 8*len(cv.has) + 2*len(cv.before)
}

// fifo is a map bounded by the bytes of its values: adding past the bound
// drops the entries added first.
type fifo[K comparable, V any] struct {
	m            map[K]V
	order        []K   // keys in the order added, from head
	size         []int // the bytes of each of order
	head         int
	bytes, limit int
}

func newFIFO[K comparable, V any](limit int) fifo[K, V] {
	return fifo[K, V]{m: map[K]V{}, limit: limit}
}

func (f *fifo[K, V]) get(k K) (V, bool) {
	v, ok := f.m[k]
	return v, ok
}

func (f *fifo[K, V]) put(k K, v V, n int) {
	if _, ok := f.m[k]; ok || n > f.limit {
		return
	}
	for f.bytes+n > f.limit && f.head < len(f.order) {
		delete(f.m, f.order[f.head])
		f.bytes -= f.size[f.head]
		f.head++
	}
	if f.head > len(f.order)/2 && f.head > 64 { // reuse the dropped half
		f.order = append(f.order[:0], f.order[f.head:]...)
		f.size = append(f.size[:0], f.size[f.head:]...)
		f.head = 0
	}
	f.m[k] = v
	f.order = append(f.order, k)
	f.size = append(f.size, n)
	f.bytes += n
}

func (f *fifo[K, V]) clear() {
	clear(f.m)
	f.order, f.size, f.head, f.bytes = f.order[:0], f.size[:0], 0, 0
}

// cachedTermRows is termRows through the cache of v: the tokens not cached
// are read in one statement, and cached when the store's generation read
// with them (or, when none has a row, after them) is still that of v (no
// write came between, so the rows cached and those read are of one state
// of the store, as termRows's one statement reads them); otherwise every
// token is read again in one statement, and nothing is cached.
//
// atGen reports whether the rows are known to be of the store's generation
// v.gen (cached, or read with no write since v began).
func (s *Store) cachedTermRows(ctx context.Context, v view, theme string, toks []string) (_ []lexindex.Term, _ lexindex.Stats, atGen bool, _ error) {
	terms, st, missing := v.terms(theme, toks)
	if len(missing) == 0 {
		return terms, st, true, nil
	}
	if v.c == nil {
		terms, st, _, err := s.termRows(ctx, theme, toks)
		return terms, st, false, err
	}
	ask := make([]string, len(missing))
	for k, i := range missing {
		ask[k] = toks[i]
	}
	got, gst, gen, err := s.termRows(ctx, theme, ask)
	if err != nil {
		return nil, st, false, err
	}
	if gen < 0 { // no row to read it with
		if err := s.scanStmt(ctx, `SELECT `+storeGenExpr, nil, &gen); err != nil {
			return nil, st, false, err
		}
	}
	if gen != v.gen {
		if len(missing) == len(toks) {
			return got, gst, false, nil
		}
		terms, st, _, err := s.termRows(ctx, theme, toks)
		return terms, st, false, err
	}
	for k, i := range missing {
		terms[i] = got[k]
	}
	if gst.Chunks > 0 {
		st = gst
	}
	v.putTerms(gen, theme, ask, got, gst)
	return terms, statsIfAny(terms, st), true, nil
}
