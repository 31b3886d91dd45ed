package knowledge

import (
	"cmp"
	"math"
	"slices"
	"sort"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/vibelife/vibe/chunk"
	"github.com/vibelife/vibe/knowledge/lexical"
)

// A hybrid search ranks the union of both sides' candidates by
//
//	L * (1 + ProximityWeight * P) + V
//
// L is the chunk's lexical (BM25) score as a share of the best lexical score
// of the query (0 when the lexical side did not find it). P is its
// [Proximity]: how much of the query's IDF mass one passage of two adjacent
// sentences holds, the title and heading path counting as part of every
// sentence. V is the vector side's vote, by rank: w * (RRFK+1) / (RRFK +
// rank), w being VectorWeight, or FlatVectorWeight when the lexical list is
// flat ([LexicalConfidence] below [ConfidentLexical]); 0 when the vector side
// did not find the chunk.
//
// BM25 scores a chunk by its words wherever they stand; a reader's question
// is mostly answered by the passage where its words stand together, so P
// reorders the lexically close candidates, and scales with L so that a chunk
// the words barely match cannot ride on one dense sentence. The offline
// embedder is the weaker side: its vote counts by rank (its cosines are
// close together) and more when the lexical list cannot tell its candidates
// apart, which is when paraphrased questions need it. The constants were
// chosen on the public reading-comprehension sets (bench/qabench) and the
// project's question sets (eval/, the bazi eval) together: every figure and
// what else was tried are in docs/retrieval.md.
//
// A query with no CJK token (English, or another language written with
// spaces between its words) uses LatinProximityWeight and
// LatinVectorWeight instead: its lexical tokens are whole words, which say
// nothing of their order or neighbours, where a Chinese query's character
// bigrams already hold what stands next to what, so where the words stand
// together tells more in English. Chosen on SQuAD 2.0 dev and XQuAD en and
// checked on eval/'s English set (docs/retrieval.md, English queries); the
// Chinese sets are not touched by them.
const (
	ProximityWeight      = 0.8
	VectorWeight         = 0.1
	FlatVectorWeight     = 0.3
	LatinProximityWeight = 1.6
	LatinVectorWeight    = 0.15
	RRFK                 = 10
	// ConfidentLexical is the [LexicalConfidence] from which the lexical
	// list is trusted: the vector side then votes with VectorWeight, below it
	// with FlatVectorWeight.
	ConfidentLexical = 0.5
	// ConfidenceDepth is the lexical rank whose score LexicalConfidence
	// compares with the first.
	ConfidenceDepth = 10
)

// IDF is the inverse document frequency of a query token held by df of a
// theme's chunks: ln(1 + (chunks - df + 0.5) / (df + 0.5)), Lucene's form,
// never negative.
func IDF(chunks, df float64) float64 {
	return math.Log(1 + (chunks-df+0.5)/(df+0.5))
}

// sentences splits text at 。！？；!?; and line ends, and at a full stop
// followed by a space, a line end or the end of the text.
func sentences(text string) []string {
	var out []string
	start := 0
	for i, r := range text {
		end := false
		switch r {
		case '。', '！', '？', '；', '!', '?', ';', '\n':
			end = true
		case '.':
			end = i+1 == len(text) || text[i+1] == ' ' || text[i+1] == '\n'
		}
		if !end {
			continue
		}
		next := i + len(string(r))
		if s := strings.TrimSpace(text[start:next]); s != "" {
			out = append(out, s)
		}
		start = next
	}
	if s := strings.TrimSpace(text[start:]); s != "" {
		out = append(out, s)
	}
	return out
}

// Proximity is the share of the query's IDF mass (qtoks weighed by idf)
// that the chunk holds within two adjacent sentences of its text, the
// tokens of its title and heading path counting as held by every sentence:
// 1 when one such passage holds every query token, 0 when the chunk holds
// none or the query has no weight.
//
// It reads the text once, rune by rune, cutting it into sentences as
// [sentences] does and into tokens as lexical.Tokens does, and records
// which query tokens each sentence holds as a bit set, without building
// the tokens' strings (this is most of a hybrid search's own work).
func Proximity(c chunk.Chunk, qtoks []string, idf map[string]float64) float64 {
	return newProximity(qtoks, idf).of(c)
}

// proximity is [Proximity] for one query: the query's weights and token
// matcher are built once for all of its candidates.
type proximity struct {
	qtoks []string
	idf   map[string]float64
	w     []float64 // idf of qtoks[k]
	total float64
	m     *tokenMatcher // nil for more than 64 tokens
	sets  []uint64      // of's buffer for a chunk's sentences (a proximity serves one search)
}

func newProximity(qtoks []string, idf map[string]float64) *proximity {
	p := &proximity{}
	p.reset(qtoks, idf, nil)
	return p
}

// reset makes p the proximity of another query, in p's memory, its token
// matcher made in m's (nil: a new one).
func (p *proximity) reset(qtoks []string, idf map[string]float64, m *tokenMatcher) {
	p.qtoks, p.idf, p.total, p.m = qtoks, idf, 0, nil
	p.w = slices.Grow(p.w[:0], len(qtoks))[:len(qtoks)]
	for k, t := range qtoks {
		p.w[k] = idf[t]
		p.total += idf[t]
	}
	if p.total > 0 && len(qtoks) <= 64 {
		if m == nil {
			m = &tokenMatcher{}
		}
		m.reset(qtoks)
		p.m = m
	}
}

// maxProximity bounds the proximity of a chunk holding the query tokens
// of the bits of held (bit k for qtoks[k]) and no other: the share of the
// query's IDF mass they hold, added in the order [proximity.of] adds a
// sentence's, so that no rounding puts a proximity above it (adding a
// weight that is not negative never lowers a rounded sum). 1 when held is
// 0 (not known) or the query has more than 64 tokens.
func (p *proximity) maxProximity(held uint64) float64 {
	if held == 0 || p.m == nil {
		return 1
	}
	v := 0.0
	for k, w := range p.w {
		if held&(1<<k) != 0 {
			v += w
		}
	}
	return v / p.total
}

func (p *proximity) of(c chunk.Chunk) float64 {
	if p.total <= 0 {
		return 0
	}
	if p.m == nil {
		return proximityBySets(c, p.qtoks, p.idf, p.total)
	}
	// The title and headings, as scanned joined by spaces: a space ends
	// a word and a CJK run, so each scanned on its own holds the same.
	head := p.m.holds(c.Title)
	for _, h := range c.HeadingPath {
		head |= p.m.holds(h)
	}
	p.sets = p.m.scanInto(p.sets[:0], c.Text, true)
	sets := p.sets
	best := 0.0
	for i, set := range sets {
		set |= head
		if i+1 < len(sets) {
			set |= sets[i+1]
		}
		v := 0.0
		for k, w := range p.w {
			if set&(1<<k) != 0 {
				v += w
			}
		}
		best = max(best, v)
	}
	return best / p.total
}

// tokenMatcher finds the query tokens (up to 64, bit k for qtoks[k]) in a
// text: CJK unigrams and bigrams by their folded runes, Latin and digit
// words by their lower-cased text.
type tokenMatcher struct {
	uni   map[rune]uint64
	bi    map[[2]rune]uint64
	words map[string]uint64
	// cjk has bit r%1024 set for each rune of the CJK unigrams and
	// bigrams: a rune whose bit is clear is in none of them, and is not
	// looked up (most of a text's runes).
	cjk [1024 / 64]uint64
}

func newTokenMatcher(qtoks []string) *tokenMatcher {
	m := &tokenMatcher{}
	m.reset(qtoks)
	return m
}

// reset makes m the matcher of qtoks, in m's maps.
func (m *tokenMatcher) reset(qtoks []string) {
	if m.uni == nil {
		m.uni, m.bi, m.words = map[rune]uint64{}, map[[2]rune]uint64{}, map[string]uint64{}
	}
	clear(m.uni)
	clear(m.bi)
	clear(m.words)
	m.cjk = [1024 / 64]uint64{}
	for k, t := range qtoks {
		bit := uint64(1) << k
		rs := []rune(t)
		switch {
		case len(rs) == 1 && lexical.IsCJK(rs[0]):
			m.uni[rs[0]] |= bit
			m.markCJK(rs[0])
		case len(rs) == 2 && lexical.IsCJK(rs[0]) && lexical.IsCJK(rs[1]):
			m.bi[[2]rune{rs[0], rs[1]}] |= bit
			m.markCJK(rs[0])
			m.markCJK(rs[1])
		default:
			m.words[t] |= bit
		}
	}
}

// holds returns the bits of the query tokens text holds (as one
// sentence).
func (m *tokenMatcher) holds(text string) uint64 {
	var one [1]uint64
	return m.scanInto(one[:0], text, false)[0]
}

func (m *tokenMatcher) markCJK(r rune) { m.cjk[uint32(r)%1024/64] |= 1 << (uint32(r) % 64) }

// mayHold reports whether r may be a rune of a CJK query token (false: it
// is not).
func (m *tokenMatcher) mayHold(r rune) bool { return m.cjk[uint32(r)%1024/64]&(1<<(uint32(r)%64)) != 0 }

// scanInto appends to sets, per sentence of text (cut where [sentences]
// cuts when split is set; otherwise the text is one sentence), the bits of
// the query tokens it holds. Sentences of white space only are not
// counted, as [sentences] drops them; a text without any gives one empty
// set.
func (m *tokenMatcher) scanInto(sets []uint64, text string, split bool) []uint64 {
	start := len(sets)
	var cur uint64
	nonEmpty := false
	// word is the current word, its runes lower-cased (lower-casing is
	// idempotent on letters and digits, so this is its strings.ToLower),
	// UTF-8 encoded: the map lookup by string(word) allocates nothing.
	// A word ends where the code below looks it up ("a word ends"), the
	// lookup written out at each place: a closure doing it would keep the
	// loop's variables in memory instead of registers.
	var buf [4 * (lexical.MaxWordRunes + 1)]byte
	word, runes := buf[:0], 0
	hasWords := len(m.words) > 0
	// prev is the previous rune of the current CJK run, when there is
	// one that may be a rune of a query token (mayHold).
	var prev rune
	prevIn := false
	// The runes as ranging over text gives them, a CJK one decoded inline
	// (decode3).
	for i, size := 0, 0; i < len(text); i += size {
		r := rune(text[i])
		size = 1
		if r >= utf8.RuneSelf {
			if r, size = decode3(text[i:]); size == 0 {
				r, size = utf8.DecodeRuneInString(text[i:])
			}
		}
		switch {
		case r < utf8.RuneSelf: // ASCII, decided here as below
			switch {
			case 'a' <= r && r <= 'z' || '0' <= r && r <= '9':
			case 'A' <= r && r <= 'Z':
				r += 'a' - 'A'
			default:
				if runes > 0 { // a word ends
					if hasWords {
						cur |= m.words[string(word)]
					}
					word, runes = word[:0], 0
				}
				prevIn = false
				switch r {
				case ' ', '\t', '\n', '\v', '\f', '\r':
				default:
					nonEmpty = true
				}
				if split && (r == '!' || r == '?' || r == ';' || r == '\n' || r == '.' && (i+1 == len(text) || text[i+1] == ' ' || text[i+1] == '\n')) {
					if nonEmpty {
						sets = append(sets, cur)
					}
					cur, nonEmpty = 0, false
				}
				continue
			}
			prevIn = false
			word = append(word, byte(r))
			runes++
			if runes > lexical.MaxWordRunes { // a word ends
				if hasWords {
					cur |= m.words[string(word)]
				}
				word, runes = word[:0], 0
			}
			nonEmpty = true
			continue // a letter or digit ends no sentence
		case r == '，' || r == '。' || r == '、': // the commonest CJK punctuation, decided here as by default below
			if runes > 0 { // a word ends
				if hasWords {
					cur |= m.words[string(word)]
				}
				word, runes = word[:0], 0
			}
			prevIn = false
			nonEmpty = true
		case 0x4E00 <= r && r <= 0x9FFF || lexical.IsCJK(r): // the first, IsCJK's own first test, saves its call
			if runes > 0 { // a word ends
				if hasWords {
					cur |= m.words[string(word)]
				}
				word, runes = word[:0], 0
			}
			f := lexical.FoldRune(r)
			in := m.mayHold(f)
			if in {
				cur |= m.uni[f]
				if prevIn {
					cur |= m.bi[[2]rune{prev, f}]
				}
			}
			prev, prevIn = f, in
			nonEmpty = true
			continue // no CJK character ends a sentence
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			prevIn = false
			word = utf8.AppendRune(word, unicode.ToLower(r))
			runes++
			if runes > lexical.MaxWordRunes { // a word ends
				if hasWords {
					cur |= m.words[string(word)]
				}
				word, runes = word[:0], 0
			}
			nonEmpty = true
			continue // a letter or digit ends no sentence
		default:
			if runes > 0 { // a word ends
				if hasWords {
					cur |= m.words[string(word)]
				}
				word, runes = word[:0], 0
			}
			prevIn = false
			if !unicode.IsSpace(r) {
				nonEmpty = true
			}
		}
		if split && (r == '。' || r == '！' || r == '？' || r == '；') { // the ASCII ends are cut above
			if nonEmpty {
				sets = append(sets, cur)
			}
			cur, nonEmpty = 0, false
		}
	}
	if runes > 0 && hasWords { // a word ends
		cur |= m.words[string(word)]
	}
	if nonEmpty || len(sets) == start {
		sets = append(sets, cur)
	}
	return sets
}

// decode3 decodes a three-byte rune (all of the BMP's CJK) at the start
// of s, inline where the runtime's decoding of a range over a string is a
// call a rune; width 0 when s does not start with a valid one (an overlong
// form or a surrogate is not), which utf8.DecodeRuneInString then decodes
// as ranging over s would (an invalid byte is utf8.RuneError, one wide).
func decode3(s string) (rune, int) {
	if len(s) < 3 {
		return 0, 0
	}
	x := uint32(s[0]) | uint32(s[1])<<8 | uint32(s[2])<<16
	r := (x&0x0F)<<12 | (x&0x3F00)>>2 | (x&0x3F0000)>>16
	// The marker bits, and r neither below 0x800 nor a surrogate (r^0xD800
	// is below 0x800 just for 0xD800-0xDFFF).
	if x&0xC0C0F0 != 0x8080E0 || min(r, r^0xD800) < 0x800 {
		return 0, 0
	}
	return rune(r), 3
}

// proximityBySets is Proximity for queries of more than 64 tokens.
func proximityBySets(c chunk.Chunk, qtoks []string, idf map[string]float64, total float64) float64 {
	want := make(map[string]bool, len(qtoks))
	for _, t := range qtoks {
		want[t] = true
	}
	head := map[string]bool{}
	for _, t := range lexical.Tokens(strings.Join(append([]string{c.Title}, c.HeadingPath...), " ")) {
		if want[t] {
			head[t] = true
		}
	}
	var sets []map[string]bool
	for _, s := range sentences(c.Text) {
		m := map[string]bool{}
		for _, t := range lexical.Tokens(s) {
			if want[t] {
				m[t] = true
			}
		}
		sets = append(sets, m)
	}
	if len(sets) == 0 {
		sets = append(sets, map[string]bool{})
	}
	best := 0.0
	for i, m := range sets {
		v := 0.0
		for _, t := range qtoks {
			if m[t] || head[t] || i+1 < len(sets) && sets[i+1][t] {
				v += idf[t]
			}
		}
		best = max(best, v)
	}
	return best / total
}

// latinQuery reports whether a query's tokens hold no CJK character and at
// least one token: a query in English or another language written with
// spaces between words.
func latinQuery(qtoks []string) bool {
	for _, t := range qtoks {
		for _, r := range t {
			if lexical.IsCJK(r) {
				return false
			}
		}
	}
	return len(qtoks) > 0
}

// Rerank ranks the union of a hybrid search's candidates (vector and
// lexical, each best first, scores in VectorScore / LexicalScore) by the
// formula above and returns the best k, with both sides' ranks and scores
// and the Proximity filled. chunks holds the candidates' chunks by id (a
// candidate without one, deleted meanwhile, is left out); qtoks are the
// query's tokens (lexical.QueryTokens) and idf their IDF in the theme. Ties
// break by chunk id.
func Rerank(vector, lex []Hit, chunks map[string]chunk.Chunk, qtoks []string, idf map[string]float64, k int) []Hit {
	hits, _ := RerankLoading(vector, lex, func(ids []string) (map[string]chunk.Chunk, error) {
		out := make(map[string]chunk.Chunk, len(ids))
		for _, id := range ids {
			if c, ok := chunks[id]; ok {
				out[id] = c
			}
		}
		return out, nil
	}, qtoks, idf, k)
	return hits
}

// RerankLoading is [Rerank] with the candidates' chunks loaded on demand:
// candidates are scored in the order of their highest possible score
// (proximity 1), and load is asked for the chunks of the next ones (k at a
// time) only while they can still reach the k-th best score found, so a
// search reads the text of the few candidates that can rank, not of all of
// them. A candidate load does not return (deleted meanwhile) is left out.
func RerankLoading(vector, lex []Hit, load func(ids []string) (map[string]chunk.Chunk, error), qtoks []string, idf map[string]float64, k int) ([]Hit, error) {
	if k <= 0 {
		return []Hit{}, nil
	}
	pw, wv := ProximityWeight, VectorWeight
	if latinQuery(qtoks) {
		pw, wv = LatinProximityWeight, LatinVectorWeight
	}
	if LexicalConfidence(lex) < ConfidentLexical {
		wv = FlatVectorWeight
	}
	// The candidates, their table and lists, and the proximity are made in
	// a pooled scratch, emptied when done: nothing of it outlives the call
	// (out is copied from it).
	sc := rerankScratches.Get().(*rerankScratch)
	defer sc.release()
	byID, order := sc.byID, sc.order[:0]
	// The candidates in one slab: it never grows past the capacity made
	// here, so a pointer into it stays valid.
	slab := slices.Grow(sc.slab[:0], len(vector)+len(lex))
	get := func(id string) *cand {
		if p, ok := byID[id]; ok {
			return p
		}
		slab = append(slab, cand{Hit: Hit{Chunk: chunk.Chunk{ID: id}}})
		p := &slab[len(slab)-1]
		byID[id] = p
		order = append(order, p)
		return p
	}
	for i, h := range vector {
		p := get(h.Chunk.ID)
		p.VectorRank, p.VectorScore = i+1, h.VectorScore
	}
	best := 0.0
	for i, h := range lex {
		p := get(h.Chunk.ID)
		p.LexicalRank, p.LexicalScore = i+1, h.LexicalScore
		best = max(best, h.LexicalScore)
		p.held = h.LexicalTerms
	}
	prox := &sc.prox
	prox.reset(qtoks, idf, &sc.m)
	// Score in the order of each hit's highest possible score, and stop
	// once that cannot reach the k-th best score found: the loading and
	// the tokenising are most of the cost. The highest possible proximity
	// is 1, or, when the lexical side says which query tokens the chunk
	// holds, their share of the query's IDF mass (maxProximity).
	for _, p := range order {
		l := 0.0
		if best > 0 {
			l = p.LexicalScore / best
		}
		v := 0.0
		if p.VectorRank > 0 {
			v = wv * float64(RRFK+1) / float64(RRFK+p.VectorRank)
		}
		p.Score = l + v
		p.bound = p.Score + l*pw*prox.maxProximity(p.held)
	}
	slices.SortStableFunc(order, func(a, b *cand) int { return cmp.Compare(b.bound, a.bound) })
	kept := sc.kept[:0]
	scored := sc.scored[:0] // the best k scores so far, best first
	defer func() { sc.slab, sc.order, sc.kept, sc.scored = slab, order, kept, scored }()
	for at, p := range order {
		if len(scored) == k && p.bound < scored[k-1] {
			continue
		}
		if !p.loaded {
			// The next k candidates in this order that are not loaded.
			ids := sc.ids[:0]
			for _, o := range order[at:] {
				if len(ids) == k {
					break
				}
				if !o.loaded && (len(scored) < k || o.bound >= scored[k-1]) {
					ids = append(ids, o.Chunk.ID)
					o.loaded = true
				}
			}
			sc.ids = ids
			got, err := load(ids)
			if err != nil {
				return nil, err
			}
			for id, c := range got {
				if o, ok := byID[id]; ok {
					o.Chunk, o.present = c, true
				}
			}
		}
		if !p.present {
			continue
		}
		if p.LexicalScore > 0 && best > 0 {
			p.Proximity = prox.of(p.Chunk)
			p.Score += p.LexicalScore / best * pw * p.Proximity
		}
		kept = append(kept, p)
		i := sort.Search(len(scored), func(i int) bool { return scored[i] < p.Score })
		scored = append(scored, 0)
		copy(scored[i+1:], scored[i:])
		scored[i] = p.Score
		if len(scored) > k {
			scored = scored[:k]
		}
	}
	out := make([]Hit, len(kept))
	for i, p := range kept {
		out[i] = p.Hit
	}
	SortHits(out)
	if len(out) > k {
		out = out[:k]
	}
	return out, nil
}

// cand is a candidate of [RerankLoading]: its hit, the query tokens the
// lexical side says it holds, its highest possible score, and whether its
// chunk was asked for and found.
type cand struct {
	Hit
	held            uint64
	bound           float64
	loaded, present bool
}

// rerankScratch is the working memory of one [RerankLoading], pooled: a
// hybrid search's hundred candidates took some 30 KB of pointerful memory
// and four maps a query before.
type rerankScratch struct {
	byID   map[string]*cand
	order  []*cand
	slab   []cand
	kept   []*cand
	scored []float64
	ids    []string
	prox   proximity
	m      tokenMatcher
}

var rerankScratches = sync.Pool{New: func() any { return &rerankScratch{byID: map[string]*cand{}} }}

// release empties sc (so that the pool holds no chunk of a search) and
// puts it back.
func (sc *rerankScratch) release() {
	clear(sc.byID)
	clear(sc.order[:cap(sc.order)])
	clear(sc.slab[:cap(sc.slab)])
	clear(sc.kept[:cap(sc.kept)])
	clear(sc.ids[:cap(sc.ids)])
	sc.prox.qtoks, sc.prox.idf, sc.prox.m = nil, nil, nil
	rerankScratches.Put(sc)
}
