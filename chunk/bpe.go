package chunk

import (
	"container/heap"
	"sync"
	"unicode"
	"unicode/utf8"
)

// counter counts the tokens of a text in one tiktoken encoding (cl100k_base
// or o200k_base) without encoding it: the same count as tiktoken-go's
// EncodeOrdinary, which pre-splits the text with a backtracking regular
// expression (regexp2) and then merges each piece's bytes by rank. Here the
// pre-split is done by hand, alternative by alternative in the pattern's
// order, each reproducing what the regexp2 engine's leftmost, greedy,
// backtracking match returns (see splitCL100K and splitO200K); the merge
// uses a heap instead of a scan per merge, with the same rule (the
// lowest-ranked adjacent pair first, the leftmost among equals). Pieces'
// counts are cached: words and CJK runs repeat. TestCounterMatchesTiktoken
// and FuzzCounter check it against tiktoken-go.
type counter struct {
	ranks map[string]int
	// short holds the ranks of the byte sequences of at most 7 bytes,
	// keyed by packKey: most lookups of a merge are of such sequences, and
	// an integer key hashes faster than a string.
	short map[uint64]int32
	o200k bool

	mu    sync.Mutex
	cache map[string]int
}

// maxCachedPieces bounds the counter's cache; it starts over when full.
const maxCachedPieces = 1 << 17

// maxCachedPieceBytes: longer pieces (rare) are not cached.
const maxCachedPieceBytes = 64

func newCounter(ranks map[string]int, o200k bool) *counter {
	c := &counter{ranks: ranks, o200k: o200k, cache: map[string]int{}, short: map[uint64]int32{}}
	for k, r := range ranks {
		if len(k) <= 7 {
			c.short[packKey(k)] = int32(r)
		}
	}
	return c
}

// packKey packs a byte sequence of at most 7 bytes and its length into a
// uint64.
func packKey(b string) uint64 {
	k := uint64(len(b)) << 56
	for i := 0; i < len(b); i++ {
		k |= uint64(b[i]) << (8 * i)
	}
	return k
}

// rank returns the rank of the byte sequence b.
func (c *counter) rank(b string) (int, bool) {
	if len(b) <= 7 {
		r, ok := c.short[packKey(b)]
		return int(r), ok
	}
	r, ok := c.ranks[b]
	return r, ok
}

// Count returns the number of tokens of text.
func (c *counter) Count(text string) int {
	if !utf8.ValidString(text) {
		// tiktoken-go splits []rune(text): every invalid byte is a U+FFFD.
		text = string([]rune(text))
	}
	split := splitCL100K
	if c.o200k {
		split = splitO200K
	}
	n := 0
	for i := 0; i < len(text); {
		j := split(text, i)
		n += c.piece(text[i:j])
		i = j
	}
	return n
}

// piece returns the token count of one pre-split piece.
func (c *counter) piece(p string) int {
	if _, ok := c.rank(p); ok {
		return 1
	}
	if len(p) > maxCachedPieceBytes {
		return c.mergeCount(p)
	}
	c.mu.Lock()
	n, ok := c.cache[p]
	c.mu.Unlock()
	if ok {
		return n
	}
	n = c.mergeCount(p)
	c.mu.Lock()
	if len(c.cache) >= maxCachedPieces {
		c.cache = map[string]int{}
	}
	c.cache[p] = n
	c.mu.Unlock()
	return n
}

// mergeCount is the number of parts left when byte-pair merging p: start
// from its bytes, merge the adjacent pair whose concatenation has the lowest
// rank (the leftmost of equals) until no adjacent pair has a rank. Short
// pieces (most of them) are merged by scanning for the lowest rank, in
// arrays on the stack; long ones with a heap.
func (c *counter) mergeCount(p string) int {
	n := len(p)
	if n <= 1 {
		return n
	}
	if n <= smallPiece {
		return c.mergeSmall(p)
	}
	return c.mergeHeap(p)
}

// smallPiece is the longest piece merged by scanning.
const smallPiece = 64

const noRank = int(^uint(0) >> 1)

func (c *counter) mergeSmall(p string) int {
	// start[i] is where part i begins (start[m] = len(p)); rank[i] the
	// rank of parts i and i+1 together.
	var start [smallPiece + 1]int
	var rank [smallPiece]int
	m := len(p)
	for i := 0; i <= m; i++ {
		start[i] = i
	}
	get := func(i int) int { // rank of parts i and i+1 (i+1 < m)
		if r, ok := c.rank(p[start[i]:start[i+2]]); ok {
			return r
		}
		return noRank
	}
	for i := 0; i+1 < m; i++ {
		rank[i] = get(i)
	}
	for m > 1 {
		best, at := noRank, -1
		for i := 0; i+1 < m; i++ {
			if rank[i] < best {
				best, at = rank[i], i
			}
		}
		if at < 0 {
			break
		}
		// Parts at and at+1 become one.
		copy(start[at+1:m], start[at+2:m+1])
		copy(rank[at+1:m-1], rank[at+2:m])
		m--
		if at+1 < m {
			rank[at] = get(at)
		}
		if at > 0 {
			rank[at-1] = get(at - 1)
		}
	}
	return m
}

func (c *counter) mergeHeap(p string) int {
	n := len(p)
	// Parts are byte ranges [start[i], start[next[i]]); prev/next link the
	// live parts; end[i] is the end of part i.
	next := make([]int, n)
	prev := make([]int, n)
	end := make([]int, n)
	for i := range n {
		next[i], prev[i], end[i] = i+1, i-1, i+1
	}
	h := make(pairHeap, 0, n)
	for i := 0; i+1 < n; i++ {
		if r, ok := c.rank(p[i : i+2]); ok {
			h = append(h, pair{rank: r, left: i, end: i + 2})
		}
	}
	heap.Init(&h)
	parts := n
	for h.Len() > 0 {
		top := heap.Pop(&h).(pair)
		l := top.left
		// Stale: the left part was merged into its predecessor, or its
		// right neighbour changed since the pair was pushed.
		if end[l] < 0 || next[l] >= n || end[next[l]] != top.end {
			continue
		}
		r := next[l]
		end[l] = end[r]
		end[r] = -1
		next[l] = next[r]
		if next[r] < n {
			prev[next[r]] = l
		}
		parts--
		if pl := prev[l]; pl >= 0 {
			if rk, ok := c.rank(p[pl:end[l]]); ok {
				heap.Push(&h, pair{rank: rk, left: pl, end: end[l]})
			}
		}
		if nx := next[l]; nx < n {
			if rk, ok := c.rank(p[l:end[nx]]); ok {
				heap.Push(&h, pair{rank: rk, left: l, end: end[nx]})
			}
		}
	}
	return parts
}

// pair is a mergeable pair of adjacent parts: the left part starts at
// byte left, the right one ends at byte end.
type pair struct{ rank, left, end int }

type pairHeap []pair

func (h pairHeap) Len() int { return len(h) }
func (h pairHeap) Less(i, j int) bool {
	if h[i].rank != h[j].rank {
		return h[i].rank < h[j].rank
	}
	return h[i].left < h[j].left
}
func (h pairHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *pairHeap) Push(x any)   { *h = append(*h, x.(pair)) }
func (h *pairHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// at returns the rune at byte i of s and its width (0 at the end).
func at(s string, i int) (rune, int) {
	if i >= len(s) {
		return -1, 0
	}
	if s[i] < utf8.RuneSelf {
		return rune(s[i]), 1
	}
	return utf8.DecodeRuneInString(s[i:])
}

func isL(r rune) bool { return r >= 0 && unicode.IsLetter(r) }
func isN(r rune) bool { return r >= 0 && unicode.IsNumber(r) }

// isS is regexp2's \s (unicode.IsSpace).
func isS(r rune) bool { return r >= 0 && unicode.IsSpace(r) }

func isCRLF(r rune) bool { return r == '\r' || r == '\n' }

// isP0 is [^\r\n\p{L}\p{N}].
func isP0(r rune) bool { return r >= 0 && !isCRLF(r) && !isL(r) && !isN(r) }

// isPunct is [^\s\p{L}\p{N}].
func isPunct(r rune) bool { return r >= 0 && !isS(r) && !isL(r) && !isN(r) }

// run returns the end of the longest run of runes satisfying f from byte i.
func run(s string, i int, f func(rune) bool) int {
	for {
		r, w := at(s, i)
		if w == 0 || !f(r) {
			return i
		}
		i += w
	}
}

// contraction matches (?i:'s|'t|'re|'ve|'m|'ll|'d) at byte i and returns
// its end, or i. regexp2 compares case-insensitively by unicode.ToLower,
// which maps only ASCII letters to these.
func contraction(s string, i int) int {
	if i >= len(s) || s[i] != '\'' {
		return i
	}
	lower := func(k int) byte {
		if k >= len(s) {
			return 0
		}
		b := s[k]
		if 'A' <= b && b <= 'Z' {
			b += 'a' - 'A'
		}
		return b
	}
	switch c := lower(i + 1); c {
	case 's', 't', 'm', 'd':
		return i + 2
	case 'r', 'v':
		if lower(i+2) == 'e' {
			return i + 3
		}
	case 'l':
		if lower(i+2) == 'l' {
			return i + 3
		}
	}
	return i
}

// spaceTail matches the three whitespace alternatives both patterns end
// with at byte i (a whitespace rune): \s*[\r\n]+ | \s+(?!\S) | \s+.
func spaceTail(s string, i int) int {
	j := run(s, i, isS)
	// \s*[\r\n]+: \s* backs off to the last \r or \n of the run, which
	// [\r\n]+ then takes (the rune after it is not one).
	for k := j; k > i; {
		r, w := utf8.DecodeLastRuneInString(s[:k])
		if isCRLF(r) {
			return k
		}
		k -= w
	}
	// \s+(?!\S): the whole run at the end of the text, else the run
	// without its last rune (which a following non-space would see).
	if j == len(s) {
		return j
	}
	_, w := utf8.DecodeLastRuneInString(s[:j])
	if j-w > i {
		return j - w
	}
	// \s+
	return j
}

// numbers matches \p{N}{1,3} at byte i, or returns i.
func numbers(s string, i int) int {
	k := i
	for n := 0; n < 3; n++ {
		r, w := at(s, k)
		if w == 0 || !isN(r) {
			break
		}
		k += w
	}
	return k
}

// punct matches ` ?[^\s\p{L}\p{N}]+[\r\n]*` (with extra also in the
// trailing class: '/' for o200k) at byte i, or returns i.
func punct(s string, i int, slash bool) int {
	k := i
	if s[k] == ' ' {
		if r, _ := at(s, k+1); isPunct(r) {
			k++
		}
	}
	r, _ := at(s, k)
	if !isPunct(r) {
		return i
	}
	k = run(s, k, isPunct)
	return run(s, k, func(r rune) bool { return isCRLF(r) || slash && r == '/' })
}

// splitCL100K returns the end of the piece starting at byte i of s under
// cl100k_base's pattern
//
//	(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
func splitCL100K(s string, i int) int {
	if k := contraction(s, i); k > i {
		return k
	}
	r, w := at(s, i)
	if isP0(r) {
		if r2, _ := at(s, i+w); isL(r2) {
			return run(s, i+w, isL)
		}
	}
	if isL(r) {
		return run(s, i, isL)
	}
	if k := numbers(s, i); k > i {
		return k
	}
	if k := punct(s, i, false); k > i {
		return k
	}
	if isS(r) {
		return spaceTail(s, i)
	}
	return i + w // not reached: every rune is a letter, number, space or other
}

// o200k_base's letter classes: upper [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}] and
// lower [\p{Ll}\p{Lm}\p{Lo}\p{M}].
func isUpperish(r rune) bool {
	return r >= 0 && (unicode.In(r, unicode.Lu, unicode.Lt, unicode.Lm, unicode.Lo, unicode.M))
}

func isLowerish(r rune) bool {
	return r >= 0 && (unicode.In(r, unicode.Ll, unicode.Lm, unicode.Lo, unicode.M))
}

// splitO200K returns the end of the piece starting at byte i of s under
// o200k_base's pattern (see o200kPattern):
//
//	[^\r\n\p{L}\p{N}]?U*L+C? | [^\r\n\p{L}\p{N}]?U+L*C? | \p{N}{1,3} |
//	 ?[^\s\p{L}\p{N}]+[\r\n/]* | \s*[\r\n]+ | \s+(?!\S) | \s+
//
// with U and L the upper and lower classes and C the contractions.
func splitO200K(s string, i int) int {
	r, w := at(s, i)
	starts := []int{i}
	if isP0(r) {
		starts = []int{i + w, i} // the optional prefix is tried taken first
	}
	// U*L+C?: U* backs off from its longest run to the last place where a
	// lower-class rune follows; L+ then takes its longest run.
	for _, st := range starts {
		uEnd := run(s, st, isUpperish)
		for k := uEnd; k >= st; {
			if r2, _ := at(s, k); isLowerish(r2) {
				e := run(s, k, isLowerish)
				return contraction(s, e)
			}
			if k == st {
				break
			}
			_, w2 := utf8.DecodeLastRuneInString(s[:k])
			k -= w2
		}
	}
	// U+L*C?
	for _, st := range starts {
		if uEnd := run(s, st, isUpperish); uEnd > st {
			return contraction(s, run(s, uEnd, isLowerish))
		}
	}
	if k := numbers(s, i); k > i {
		return k
	}
	if k := punct(s, i, true); k > i {
		return k
	}
	if isS(r) {
		return spaceTail(s, i)
	}
	return i + w
}
