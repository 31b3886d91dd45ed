package knowledge

import (
	"context"
	"errors"
	"fmt"
	"math/bits"
	"slices"
	"sort"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/vibelife/vibe/chunk"
	"github.com/vibelife/vibe/knowledge/lexical"
)

// CandidatesPerSide is how many candidates each side of a hybrid search
// contributes to [Rerank].
const CandidatesPerSide = 50

// ErrBadQuery is returned for a query a store cannot run (no theme, unknown
// mode, missing vector or text for the mode).
var ErrBadQuery = errors.New("knowledge: bad query")

// NormalizeQuery fills defaults (K 10, mode hybrid) and checks q. Stores call
// it first so every implementation accepts and refuses the same queries.
// A hybrid query without a vector degrades to lexical, and without text
// tokens to vector.
func NormalizeQuery(q Query) (Query, error) {
	if q.Theme == "" {
		return q, fmt.Errorf("%w: theme is required", ErrBadQuery)
	}
	if q.K <= 0 {
		q.K = 10
	}
	if q.Mode == "" {
		q.Mode = SearchHybrid
	}
	switch q.Mode {
	case SearchHybrid:
		if len(q.Vector) == 0 {
			q.Mode = SearchLexical
		}
	case SearchVector:
		if len(q.Vector) == 0 {
			return q, fmt.Errorf("%w: vector search needs a query vector", ErrBadQuery)
		}
	case SearchLexical:
	default:
		return q, fmt.Errorf("%w: unknown mode %q (want hybrid, vector or lexical)", ErrBadQuery, q.Mode)
	}
	return q, nil
}

// LexicalConfidence is how far the lexical list's first score stands above
// its score at rank [ConfidenceDepth] (or its last, if shorter), as a share
// of the first: 0 for a flat list, or one without positive scores, and
// toward 1 for a single clear match. Both stores score lexical hits with
// the same BM25, so the share means the same in each.
func LexicalConfidence(lexical []Hit) float64 {
	if len(lexical) == 0 || lexical[0].LexicalScore <= 0 {
		return 0
	}
	first := lexical[0].LexicalScore
	last := lexical[min(len(lexical), ConfidenceDepth)-1].LexicalScore
	return (first - last) / first
}

// SortHits orders hits by Score descending, then chunk id.
func SortHits(hits []Hit) { SortHitsBy(hits, func(h *Hit) float64 { return h.Score }) }

// SortHitsBy orders hits by score descending, then chunk id: the order a
// side's candidates are handed on in (score is LexicalScore or
// VectorScore).
func SortHitsBy(hits []Hit, score func(*Hit) float64) {
	sort.SliceStable(hits, func(i, j int) bool {
		if si, sj := score(&hits[i]), score(&hits[j]); si != sj {
			return si > sj
		}
		return hits[i].Chunk.ID < hits[j].Chunk.ID
	})
}

// RankOnly finalises a single-side result list: Score is copied from the
// side's score and the side's rank is set.
func RankOnly(hits []Hit, mode SearchMode, k int) []Hit {
	if len(hits) > k {
		hits = hits[:k]
	}
	for i := range hits {
		hits[i].LexicalTerms = 0
		switch mode {
		case SearchVector:
			hits[i].VectorRank = i + 1
			hits[i].Score = hits[i].VectorScore
		case SearchLexical:
			hits[i].LexicalRank = i + 1
			hits[i].Score = hits[i].LexicalScore
		}
	}
	return hits
}

// SideSearch returns up to n candidates of one side (vector or lexical) of a
// theme, ranked, carrying at least the chunk id.
type SideSearch func(ctx context.Context, q Query, n int) ([]Hit, error)

// LexicalSearch is the lexical side: up to n candidates, ranked, carrying
// at least the chunk id and LexicalScore, and the [IDF] in the theme of each
// query token (lexical.QueryTokens of q.Text) that some chunk holds.
type LexicalSearch func(ctx context.Context, q Query, n int) ([]Hit, map[string]float64, error)

// Fill loads the chunks of hits (which carry only ids), keeping their order
// and leaving out hits whose chunk is gone.
type Fill func(ctx context.Context, hits []Hit) ([]Hit, error)

// Search is the search every store shares: it normalises q, asks each side
// the query's mode needs for its candidates (CandidatesPerSide of each for a
// hybrid search), loads them with fill and ranks them (a hybrid search: all
// of them, by [Rerank]; one side: its best, in its order), and leaves out
// near-duplicates of better hits (see [Collapse]) before cutting the list to
// q.K.
func Search(ctx context.Context, q Query, vector SideSearch, lexicalSide LexicalSearch, fill Fill) ([]Hit, error) {
	q, err := NormalizeQuery(q)
	if err != nil {
		return nil, err
	}
	// Collapsing can drop hits, so rank a few more than wanted.
	want := q.K + q.K/2 + 5
	n := want
	if q.Mode == SearchHybrid && n < CandidatesPerSide {
		n = CandidatesPerSide
	}
	var vec, lex []Hit
	var idf map[string]float64
	if q.Mode != SearchLexical {
		if vec, err = vector(ctx, q, n); err != nil {
			return nil, fmt.Errorf("search %s: %w", q.Theme, err)
		}
	}
	if q.Mode != SearchVector {
		if lex, idf, err = lexicalSide(ctx, q, n); err != nil {
			return nil, fmt.Errorf("search %s: %w", q.Theme, err)
		}
	}
	var hits []Hit
	switch q.Mode {
	case SearchVector:
		hits = RankOnly(vec, q.Mode, want)
	case SearchLexical:
		hits = RankOnly(lex, q.Mode, want)
	default:
		// The reranker loads the text of the candidates that can still
		// rank, a few at a time.
		// RerankLoading reads what load returns before it calls load
		// again, so one slice and one map serve every call.
		var hs []Hit
		var out map[string]chunk.Chunk
		load := func(ids []string) (map[string]chunk.Chunk, error) {
			hs = slices.Grow(hs[:0], len(ids))
			for _, id := range ids {
				hs = append(hs, Hit{Chunk: chunk.Chunk{ID: id}})
			}
			filled, err := fill(ctx, hs)
			if err != nil {
				return nil, err
			}
			if out == nil {
				out = make(map[string]chunk.Chunk, len(filled))
			}
			clear(out)
			for _, h := range filled {
				out[h.Chunk.ID] = h.Chunk
			}
			return out, nil
		}
		hits, err := RerankLoading(vec, lex, load, lexical.QueryTokens(q.Text), idf, want)
		if err != nil {
			return nil, fmt.Errorf("search %s: %w", q.Theme, err)
		}
		return Collapse(hits, q.K), nil
	}
	if hits, err = fill(ctx, hits); err != nil {
		return nil, fmt.Errorf("search %s: %w", q.Theme, err)
	}
	return Collapse(hits, q.K), nil
}

// Near-duplicate passages (a book ingested twice, a second annotated copy
// of a volume, a handbook that repeats its chapters) would otherwise fill
// the top of a result list with one passage. Two texts are near-duplicates
// when at least DuplicateContainment of the shingles of the shorter one
// occur in the other; shingles are runs of three units, a unit being a CJK
// character or a lower-cased Latin word or number.
const DuplicateContainment = 0.7

// CollapseDepth bounds the work of [Collapse]: hits kept after the first
// CollapseDepth are not compared any more (a reader never sees that far).
const CollapseDepth = 100

// Collapse returns the first k hits of hits (best first) that are not
// near-duplicates of a hit kept before them.
func Collapse(hits []Hit, k int) []Hit {
	out := make([]Hit, 0, min(k, len(hits)))
	c := collapsers.Get().(*collapser)
	defer collapsers.Put(c)
	c.reset()
	for _, h := range hits {
		if len(out) == k {
			break
		}
		if len(out) >= CollapseDepth {
			out = append(out, h)
			continue
		}
		if c.keep(h.Chunk.Text) {
			out = append(out, h)
		}
	}
	return out
}

// collapser holds the shingles of the hits [Collapse] has kept, in one
// table: each distinct shingle with the set of kept hits holding it (bit i
// of mask for the i-th kept), so that a hit's shingles are looked up once
// each, not once for every kept hit, and its containment in (or of) each
// kept hit counted from the sets. The containment is [shingleSet]'s: the
// shared distinct shingles over the smaller set's.
//
// Collapsers are pooled: a slot is in use only when it has the collapser's
// epoch, so that a new Collapse starts with an empty table without
// clearing it.
type collapser struct {
	slots   []collapseSlot // open addressing by key; key 0 is zero
	used    int
	epoch   uint32
	zero    collapseSlot // the shingle hashing to 0
	sizes   []int        // distinct shingles of each kept hit
	count   []int        // per kept hit, those it shares with the current
	touched []*collapseSlot
	stamp   uint32 // of the current hit
	hashes  []uint64
}

type collapseSlot struct {
	key   uint64
	mask  [2]uint64 // kept hits holding it: CollapseDepth at most
	stamp uint32    // the last hit that held it
	epoch uint32    // the slot is in use when it is the collapser's
}

var collapsers = sync.Pool{New: func() any { return &collapser{epoch: 1} }}

// reset empties c for another Collapse.
func (c *collapser) reset() {
	c.epoch++
	if c.epoch == 0 { // wrapped: the old epochs are cleared
		clear(c.slots)
		c.epoch = 1
	}
	c.used = 0
	c.zero = collapseSlot{}
	c.sizes = c.sizes[:0]
}

// The kept hits' sets are bits of two words.
const _ = uint(2*64 - CollapseDepth)

// keep reports whether text is not a near-duplicate of a kept hit, and
// keeps it when it is not.
func (c *collapser) keep(text string) bool {
	c.look(text)
	for i := range c.sizes {
		if c.containment(i) >= DuplicateContainment {
			return false
		}
	}
	i := len(c.sizes)
	n := len(c.touched)
	c.sizes = append(c.sizes, n)
	for _, sl := range c.touched {
		sl.mask[i/64] |= 1 << (i % 64)
	}
	return true
}

// look finds the distinct shingles of text (c.touched, added to the table
// without a kept hit when new) and counts those each kept hit holds
// (c.count).
func (c *collapser) look(text string) {
	if c.epoch == 0 {
		c.epoch = 1 // a collapser that is not pooled
	}
	c.hashes = appendShingleHashes(c.hashes, text)
	if need := 2 * (c.used + len(c.hashes) + 1); len(c.slots) < need {
		c.grow(need)
	}
	if c.stamp++; c.stamp == 0 {
		c.stamp = 1 // a new slot's stamp is 0
	}
	if cap(c.count) < len(c.sizes) {
		c.count = make([]int, len(c.sizes), 2*len(c.sizes))
	}
	c.count = c.count[:len(c.sizes)]
	clear(c.count)
	c.touched = c.touched[:0]
	for _, x := range c.hashes {
		sl := c.slot(x)
		if sl.stamp == c.stamp {
			continue // a repeat
		}
		sl.stamp = c.stamp
		c.touched = append(c.touched, sl)
		if sl.mask == [2]uint64{} {
			continue // held by no kept hit
		}
		for w, m := range sl.mask {
			for ; m != 0; m &= m - 1 {
				c.count[w*64+bits.TrailingZeros64(m)]++
			}
		}
	}
}

// containment is the share of the smaller of the looked-up text's shingle
// set and kept hit i's held by the other (0 when one is empty).
func (c *collapser) containment(i int) float64 {
	small := min(len(c.touched), c.sizes[i])
	if small == 0 {
		return 0
	}
	return float64(c.count[i]) / float64(small)
}

// slot returns the slot of x, adding it when absent (the table has room).
func (c *collapser) slot(x uint64) *collapseSlot {
	if x == 0 {
		return &c.zero
	}
	mask := uint64(len(c.slots) - 1)
	for i := x & mask; ; i = (i + 1) & mask {
		sl := &c.slots[i]
		if sl.epoch != c.epoch {
			*sl = collapseSlot{key: x, epoch: c.epoch}
			c.used++
			return sl
		}
		if sl.key == x {
			return sl
		}
	}
}

// grow makes the table at least n slots (a power of two), keeping its
// entries.
func (c *collapser) grow(n int) {
	size := 64
	for size < n {
		size *= 2
	}
	old := c.slots
	c.slots, c.used = make([]collapseSlot, size), 0
	for _, sl := range old {
		if sl.epoch == c.epoch {
			*c.slot(sl.key) = sl
		}
	}
}

// shingles returns the set of three-unit shingles of text, each as a 64-bit
// hash, sorted; a text of fewer than three units is one shingle of all of
// them. Hashing (FNV-1a over the units' runes, the units of a shingle
// separated) replaces building a string per shingle: a collision, at 2^-64
// a pair, would count two shingles as one.
func shingles(text string) []uint64 {
	out := shingleHashes(text)
	slices.Sort(out)
	return slices.Compact(out)
}

// shingleHashes is shingles in text order, with repeats.
func shingleHashes(text string) []uint64 { return appendShingleHashes(nil, text) }

// appendShingleHashes is shingleHashes in buf's memory (grown as needed).
func appendShingleHashes(buf []uint64, text string) []uint64 {
	const (
		offset = 14695981039346656037
		prime  = 1099511628211
	)
	units := buf[:0]
	// h is the hash of the current word, if inWord. A word ends where
	// the code below appends it ("a word ends"), written out at each place:
	// a closure doing it would keep the loop's variables in memory.
	h, inWord := uint64(offset), false
	for i, size := 0, 0; i < len(text); i += size {
		r := rune(text[i])
		size = 1
		if r >= utf8.RuneSelf {
			// As ranging over text decodes it, a CJK rune inline.
			if r, size = decode3(text[i:]); size == 0 {
				r, size = utf8.DecodeRuneInString(text[i:])
			}
		}
		switch {
		case r < 0x80: // ASCII, most of the English text, decided here
			switch {
			case 'a' <= r && r <= 'z' || '0' <= r && r <= '9':
			case 'A' <= r && r <= 'Z':
				r += 'a' - 'A'
			default:
				if inWord { // a word ends
					units = append(units, h)
					h, inWord = offset, false
				}
				continue
			}
			h = (h ^ uint64(r)) * prime
			inWord = true
		case r == '，' || r == '。' || r == '、': // the commonest CJK punctuation, decided here as by default below
			if inWord { // a word ends
				units = append(units, h)
				h, inWord = offset, false
			}
		case 0x4E00 <= r && r <= 0x9FFF, // CJK Unified Ideographs, decided here
			r >= 0x1100 && unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul):
			if inWord { // a word ends
				units = append(units, h)
				h, inWord = offset, false
			}
			units = append(units, (offset^uint64(r))*prime)
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			h = (h ^ uint64(unicode.ToLower(r))) * prime
			inWord = true
		default:
			if inWord { // a word ends
				units = append(units, h)
				h, inWord = offset, false
			}
		}
	}
	if inWord { // a word ends
		units = append(units, h)
		h, inWord = offset, false
	}
	join := func(us []uint64) uint64 {
		x := uint64(offset)
		for _, u := range us {
			x = (x ^ u) * prime
			x = (x ^ 0xff) * prime // the separator
			x ^= x >> 29
		}
		return x
	}
	if len(units) < 3 {
		x := join(units) ^ uint64(len(units))
		return append(units[:0], x)
	}
	// In place: shingle i is written over unit i once it is read (join's
	// steps, written out for the three units).
	for i := 0; i+3 <= len(units); i++ {
		x := uint64(offset)
		for _, u := range [3]uint64{units[i], units[i+1], units[i+2]} {
			x = (x ^ u) * prime
			x = (x ^ 0xff) * prime
			x ^= x >> 29
		}
		units[i] = x
	}
	return units[:len(units)-2]
}

// containment is the share of the smaller set's members found in the other
// (both sorted, without repeats).
func containment(a, b []uint64) float64 {
	if len(b) < len(a) {
		a, b = b, a
	}
	if len(a) == 0 {
		return 0
	}
	n, j := 0, 0
	for _, x := range a {
		for j < len(b) && b[j] < x {
			j++
		}
		if j < len(b) && b[j] == x {
			n++
		}
	}
	return float64(n) / float64(len(a))
}
