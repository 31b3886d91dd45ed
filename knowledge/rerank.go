package knowledge

import (
	"math"
	"sort"
	"strings"

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
const (
	ProximityWeight  = 0.8
	VectorWeight     = 0.1
	FlatVectorWeight = 0.3
	RRFK             = 10
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
func Proximity(c chunk.Chunk, qtoks []string, idf map[string]float64) float64 {
	total := 0.0
	for _, t := range qtoks {
		total += idf[t]
	}
	if total <= 0 {
		return 0
	}
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

// Rerank ranks the union of a hybrid search's candidates (vector and
// lexical, each best first, scores in VectorScore / LexicalScore) by the
// formula above and returns the best k, with both sides' ranks and scores
// and the Proximity filled. chunks holds the candidates' chunks by id (a
// candidate without one, deleted meanwhile, is left out); qtoks are the
// query's tokens (lexical.QueryTokens) and idf their IDF in the theme. Ties
// break by chunk id.
func Rerank(vector, lex []Hit, chunks map[string]chunk.Chunk, qtoks []string, idf map[string]float64, k int) []Hit {
	if k <= 0 {
		return []Hit{}
	}
	wv := VectorWeight
	if LexicalConfidence(lex) < ConfidentLexical {
		wv = FlatVectorWeight
	}
	byID := map[string]*Hit{}
	var order []*Hit
	get := func(id string) *Hit {
		if p, ok := byID[id]; ok {
			return p
		}
		c, ok := chunks[id]
		if !ok {
			return nil
		}
		p := &Hit{Chunk: c}
		byID[id] = p
		order = append(order, p)
		return p
	}
	for i, h := range vector {
		if p := get(h.Chunk.ID); p != nil {
			p.VectorRank, p.VectorScore = i+1, h.VectorScore
		}
	}
	best := 0.0
	for i, h := range lex {
		if p := get(h.Chunk.ID); p != nil {
			p.LexicalRank, p.LexicalScore = i+1, h.LexicalScore
			best = max(best, h.LexicalScore)
		}
	}
	// Score in the order of each hit's highest possible score (proximity
	// 1), and stop computing proximity once that cannot reach the k-th best
	// score found: the tokenising is most of the cost.
	bound := make(map[*Hit]float64, len(order))
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
		bound[p] = l*(1+ProximityWeight) + v
	}
	sort.SliceStable(order, func(i, j int) bool { return bound[order[i]] > bound[order[j]] })
	var scored []float64 // the best k scores so far, best first
	for _, p := range order {
		if len(scored) == k && bound[p] < scored[k-1] {
			continue
		}
		if p.LexicalScore > 0 && best > 0 {
			p.Proximity = Proximity(p.Chunk, qtoks, idf)
			p.Score += p.LexicalScore / best * ProximityWeight * p.Proximity
		}
		at := sort.Search(len(scored), func(i int) bool { return scored[i] < p.Score })
		scored = append(scored, 0)
		copy(scored[at+1:], scored[at:])
		scored[at] = p.Score
		if len(scored) > k {
			scored = scored[:k]
		}
	}
	out := make([]Hit, len(order))
	for i, p := range order {
		out[i] = *p
	}
	SortHits(out)
	if len(out) > k {
		out = out[:k]
	}
	return out
}
