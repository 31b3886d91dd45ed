package lexindex

import (
	"cmp"
	"math"
	"slices"
	"sort"
	"sync"
)

// BM25 parameters, FTS5's.
const (
	K1     = 1.2
	B      = 0.75
	MinIDF = 1e-6
)

// Stats are the collection figures BM25 needs: those of every chunk
// indexed, which may be more than the chunks searched (a store searching
// one theme of several, as FTS5 did, scores by the whole store's).
type Stats struct {
	Chunks int64 // chunks indexed
	Tokens int64 // their index tokens, summed
}

// IDF is FTS5's bm25 inverse document frequency of a term held by df of
// chunks chunks: ln((chunks - df + 0.5) / (df + 0.5)), floored at MinIDF.
func IDF(chunks, df int64) float64 {
	idf := math.Log((float64(chunks) - float64(df) + 0.5) / (float64(df) + 0.5))
	if idf <= 0 {
		idf = MinIDF
	}
	return idf
}

// Term is one query term: its rows in the chunks searched, in chunk number
// order, and how many chunks not searched hold it.
type Term struct {
	Rows      []Row
	Elsewhere int64
}

// DF is the number of chunks holding the term.
func (t Term) DF() int64 {
	n := t.Elsewhere
	for _, r := range t.Rows {
		n += int64(r.N)
	}
	return n
}

// Hit is a chunk and its BM25 score.
type Hit struct {
	Num   int64
	Score float64
	// Terms has bit i set when the chunk holds terms[i], for the first 64
	// terms of the query (a hybrid search's reranker bounds a chunk's
	// proximity by the terms it holds).
	Terms uint64
}

// termBit is the bit of term i in Hit.Terms (none past the 64th).
func termBit(i int) uint64 {
	if i >= 64 {
		return 0
	}
	return 1 << i
}

// weight is the BM25 contribution of one term, of inverse document
// frequency idf, held tf times by a chunk of dl tokens. It grows with tf
// and shrinks with dl (each floating-point step is monotonic), so the
// weight of a row's highest tf at its shortest length bounds every posting
// of the row, rounding included.
func weight(idf float64, tf, dl int, avgdl float64) float64 {
	f := float64(tf)
	return idf * (f * (K1 + 1)) / (f + K1*(1-B+B*float64(dl)/avgdl))
}

// scorer holds what scoring a query needs.
type scorer struct {
	idf   []float64
	avgdl float64
}

func newScorer(terms []Term, st Stats) scorer {
	s := scorer{idf: make([]float64, len(terms)), avgdl: float64(st.Tokens) / float64(st.Chunks)}
	for i, t := range terms {
		s.idf[i] = IDF(st.Chunks, t.DF())
	}
	return s
}

// TopK returns the chunks of the k best BM25 scores over terms (the score
// of a chunk is the sum, in terms order, of the weights of the terms it
// holds), best first, equal scores in number order; chunks scoring the
// same as the k-th follow it, so that a caller ordering ties by another key
// can cut the list itself. Chunks scoring 0 are never returned.
//
// It scores only the stretches of chunk numbers whose bound can still
// reach the k-th best score: see the package documentation.
func TopK(terms []Term, st Stats, k int) ([]Hit, error) {
	if k <= 0 || st.Chunks <= 0 || len(terms) == 0 {
		return nil, nil
	}
	sc := newScorer(terms, st)
	// Each row's bound, and the stretches: the chunk numbers cut at
	// every row's first and after every row's last.
	bounds := make([][]float64, len(terms))
	var cuts []int64
	for i, t := range terms {
		bounds[i] = make([]float64, len(t.Rows))
		for j, r := range t.Rows {
			bounds[i][j] = weight(sc.idf[i], r.MaxTF, r.MinLen, sc.avgdl)
			cuts = append(cuts, r.First, r.Last+1)
		}
	}
	if len(cuts) == 0 {
		return nil, nil
	}
	slices.Sort(cuts)
	cuts = slices.Compact(cuts)
	// A stretch is the numbers [lo, hi), all covered by the same row of
	// each term (or by none); its rows are found again when it is scored,
	// so memory stays linear in the rows however many terms a query has.
	type stretch struct {
		lo, hi int64
		bound  float64
	}
	cur := make([]int, len(terms)) // per term, the next row not yet passed
	var all []stretch
	for c := 0; c+1 < len(cuts); c++ {
		lo, hi := cuts[c], cuts[c+1]
		var bound float64
		any := false
		for i, t := range terms {
			for cur[i] < len(t.Rows) && t.Rows[cur[i]].Last < lo {
				cur[i]++
			}
			if cur[i] < len(t.Rows) && t.Rows[cur[i]].First <= lo {
				bound += bounds[i][cur[i]]
				any = true
			}
		}
		if any {
			all = append(all, stretch{lo: lo, hi: hi, bound: bound})
		}
	}
	// Best bound first, equal bounds in number order (the order they were
	// cut in: what a stable sort by bound leaves them in).
	slices.SortFunc(all, func(a, b stretch) int {
		if c := cmp.Compare(b.bound, a.bound); c != 0 {
			return c
		}
		return cmp.Compare(a.lo, b.lo)
	})

	top := newCollector(k)
	// Each row is decoded once, when a stretch it covers is first scored.
	decoded := make([][][]Posting, len(terms))
	for i, t := range terms {
		decoded[i] = make([][]Posting, len(t.Rows))
	}
	// The postings are decoded into arenas reused by later queries (none
	// of their postings outlives TopK).
	var arena []Posting
	var arenas []*[]Posting
	defer func() {
		for _, a := range arenas {
			arenaPool.Put(a)
		}
	}()
	// part returns the postings of term i in [lo, hi), from its row j.
	part := func(i, j int, lo, hi int64) ([]Posting, error) {
		ps := decoded[i][j]
		if ps == nil {
			row := terms[i].Rows[j]
			if cap(arena)-len(arena) < row.N {
				a := arenaPool.Get().(*[]Posting)
				if cap(*a) < row.N {
					*a = make([]Posting, 0, max(row.N, arenaSize))
				}
				arenas = append(arenas, a)
				arena = (*a)[:0]
			}
			start := len(arena)
			var err error
			if arena, err = row.Decode(arena); err != nil {
				return nil, err
			}
			ps = arena[start:len(arena):len(arena)]
			decoded[i][j] = ps
		}
		a := sort.Search(len(ps), func(x int) bool { return ps[x].Num >= lo })
		b := a + sort.Search(len(ps)-a, func(x int) bool { return ps[a+x].Num >= hi })
		return ps[a:b], nil
	}
	parts := make([][]Posting, len(terms))
	rowAt := make([]int, len(terms)) // per term, its row covering the stretch, or -1
	rb := make([]float64, len(terms))
	var m maxScore
	for _, s := range all {
		if top.full() && s.bound < top.kth() {
			break
		}
		for i, t := range terms {
			parts[i], rowAt[i], rb[i] = nil, -1, 0
			j := sort.Search(len(t.Rows), func(x int) bool { return t.Rows[x].Last >= s.lo })
			if j < len(t.Rows) && t.Rows[j].First <= s.lo {
				rowAt[i], rb[i] = j, bounds[i][j]
			}
		}
		if !top.full() {
			for i, j := range rowAt {
				if j >= 0 {
					var err error
					if parts[i], err = part(i, j, s.lo, s.hi); err != nil {
						return nil, err
					}
				}
			}
			sc.merge(parts, top.offer)
			continue
		}
		// The essential terms' postings first: a stretch where none has
		// one holds no chunk that can rank, and the others' rows are not
		// decoded for it.
		m.split(rowAt, rb, top.kth())
		found := false
		for i, j := range rowAt {
			if j >= 0 && !m.other[i] {
				var err error
				if parts[i], err = part(i, j, s.lo, s.hi); err != nil {
					return nil, err
				}
				found = found || len(parts[i]) > 0
			}
		}
		if !found {
			continue
		}
		for i, j := range rowAt {
			if j >= 0 && m.other[i] {
				var err error
				if parts[i], err = part(i, j, s.lo, s.hi); err != nil {
					return nil, err
				}
			}
		}
		m.merge(sc, parts, top)
	}
	return top.result(), nil
}

// arenaSize is the postings an arena of TopK holds (64 KB), unless a row
// holds more.
const arenaSize = 4096

var arenaPool = sync.Pool{New: func() any { a := make([]Posting, 0, arenaSize); return &a }}

// maxScore scores a stretch once the collector is full, MaxScore's way:
// the terms whose bounds (in the stretch), added up, stay below the k-th
// best score cannot put a chunk among the best by themselves, so only the
// chunks holding one of the other terms (the essential ones) are scored,
// each over every term, added in terms order as merge adds them (the same
// score to the bit). A chunk holding only terms that are not essential
// scores below the k-th, which the collector would refuse: the result is
// merge's.
type maxScore struct {
	order []int  // term indexes by bound, smallest first
	other []bool // per term: not essential
	at    []int  // per term not essential: the next posting not passed
}

// split marks the terms that are not essential in a stretch, given each
// term's row covering it (rowAt, -1 for none) and that row's bound.
func (m *maxScore) split(rowAt []int, rb []float64, kth float64) {
	if len(m.other) != len(rowAt) {
		m.other, m.at = make([]bool, len(rowAt)), make([]int, len(rowAt))
	}
	clear(m.other)
	m.order = m.order[:0]
	for i, j := range rowAt {
		if j >= 0 {
			m.order = append(m.order, i)
		}
	}
	slices.SortFunc(m.order, func(a, b int) int { return cmp.Compare(rb[a], rb[b]) })
	// The terms not essential: the longest run of the smallest bounds whose
	// sum stays below the k-th best score. A chunk's score, added in terms
	// order, is at most their sum in that order; the margin covers the
	// rounding of adding them in another order (lexical.MaxQueryTokens,
	// 256 terms: under 1e-13 of the sum).
	sum := 0.0
	for _, i := range m.order {
		if sum += rb[i]; sum*(1+1e-9) >= kth {
			break
		}
		m.other[i] = true
	}
}

// merge scores the chunks of parts holding an essential term (see split).
func (m *maxScore) merge(sc scorer, parts [][]Posting, top *collector) {
	clear(m.at)
	for {
		num := int64(math.MaxInt64)
		for i, p := range parts {
			if !m.other[i] && len(p) > 0 && p[0].Num < num {
				num = p[0].Num
			}
		}
		if num == math.MaxInt64 {
			return
		}
		var score float64
		var held uint64
		for i, p := range parts {
			if m.other[i] {
				ps := p[m.at[i]:]
				k := sort.Search(len(ps), func(x int) bool { return ps[x].Num >= num })
				m.at[i] += k
				if k < len(ps) && ps[k].Num == num {
					score += weight(sc.idf[i], int(ps[k].TF), int(ps[k].Len), sc.avgdl)
					held |= termBit(i)
				}
			} else if len(p) > 0 && p[0].Num == num {
				score += weight(sc.idf[i], int(p[0].TF), int(p[0].Len), sc.avgdl)
				held |= termBit(i)
				parts[i] = p[1:]
			}
		}
		top.offer(Hit{Num: num, Score: score, Terms: held})
	}
}

// merge scores the chunks of parts (per term, postings in number order),
// in number order, calling emit with each.
func (sc scorer) merge(parts [][]Posting, emit func(Hit)) {
	for {
		num := int64(math.MaxInt64)
		for _, p := range parts {
			if len(p) > 0 && p[0].Num < num {
				num = p[0].Num
			}
		}
		if num == math.MaxInt64 {
			return
		}
		var score float64
		var held uint64
		for i, p := range parts {
			if len(p) > 0 && p[0].Num == num {
				score += weight(sc.idf[i], int(p[0].TF), int(p[0].Len), sc.avgdl)
				held |= termBit(i)
				parts[i] = p[1:]
			}
		}
		emit(Hit{Num: num, Score: score, Terms: held})
	}
}

// Exhaustive scores every chunk holding a term, best first, equal scores in
// number order: the reference [TopK] is tested against.
func Exhaustive(terms []Term, st Stats) ([]Hit, error) {
	if st.Chunks <= 0 || len(terms) == 0 {
		return nil, nil
	}
	sc := newScorer(terms, st)
	parts := make([][]Posting, len(terms))
	for i, t := range terms {
		for _, r := range t.Rows {
			var err error
			if parts[i], err = r.Decode(parts[i]); err != nil {
				return nil, err
			}
		}
	}
	var out []Hit
	sc.merge(parts, func(h Hit) {
		if h.Score > 0 {
			out = append(out, h)
		}
	})
	sortHits(out)
	return out, nil
}

func sortHits(h []Hit) {
	sort.Slice(h, func(a, b int) bool {
		if h[a].Score != h[b].Score {
			return h[a].Score > h[b].Score
		}
		return h[a].Num < h[b].Num
	})
}

// collector keeps the chunks that can still be among the k best: a min-heap
// of the k best scores seen gives the k-th, and every chunk offered at or
// above the k-th at the time is kept, to be cut to the k-th at the end.
type collector struct {
	k    int
	heap []float64
	kept []Hit
}

// newCollector's slices are made at the size they can reach (offer
// prunes kept at 4k+64; up to 1,024), so they are not grown a hit at a time.
func newCollector(k int) *collector {
	return &collector{k: k, heap: make([]float64, 0, min(k, 1024)), kept: make([]Hit, 0, min(4*k+64, 1024))}
}

func (c *collector) full() bool   { return len(c.heap) == c.k }
func (c *collector) kth() float64 { return c.heap[0] }
func (c *collector) offer(h Hit) {
	if h.Score <= 0 {
		return
	}
	if c.full() {
		if h.Score < c.heap[0] {
			return
		}
		if h.Score > c.heap[0] {
			c.heap[0] = h.Score
			c.down(0)
		}
	} else {
		c.heap = append(c.heap, h.Score)
		c.up(len(c.heap) - 1)
	}
	c.kept = append(c.kept, h)
	if len(c.kept) >= 4*c.k+64 {
		c.prune()
	}
}

// prune drops the kept chunks below the k-th score.
func (c *collector) prune() {
	if !c.full() {
		return
	}
	kth := c.heap[0]
	out := c.kept[:0]
	for _, h := range c.kept {
		if h.Score >= kth {
			out = append(out, h)
		}
	}
	c.kept = out
}

func (c *collector) result() []Hit {
	c.prune()
	sortHits(c.kept)
	return c.kept
}

func (c *collector) up(i int) {
	h := c.heap
	for i > 0 {
		p := (i - 1) / 2
		if h[p] <= h[i] {
			return
		}
		h[p], h[i] = h[i], h[p]
		i = p
	}
}

func (c *collector) down(i int) {
	h := c.heap
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		m := l
		if r := l + 1; r < len(h) && h[r] < h[l] {
			m = r
		}
		if h[i] <= h[m] {
			return
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
}
