package knowledge

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"unicode"
)

// Fusion of a hybrid search: a hit's score is the sum, over the sides that
// found it, of the side's weight / (RRFK + its 1-based rank on that side).
//
// The constants were chosen on the development half of the question sets in
// eval/ and checked on the held-out half (docs/retrieval.md): plain RRF (k
// 60, equal weights) lost to lexical search alone, because the offline
// embedder is the weaker side and a large k flattens the difference between
// a side's first hit and its tenth. A small k trusts each side's top ranks,
// and the vector side counts half.
//
// The vector side counts only when the lexical list is flat: its score at
// rank ConfidenceDepth at least half its first (see [LexicalConfidence] and
// [ConfidentLexical]). On the public reading-comprehension sets
// (bench/qabench), whose questions share most of their words with the
// answering passage, no fixed weight of the offline embedder ranked above
// lexical search alone on both; the paraphrased questions of eval/ and of the
// bazi eval, whose lexical lists are mostly flat, need it. A gate at 0.3
// (vector counted less often) put hybrid above lexical on both public sets
// but lost a question of recall@5 on each of the project's sets, so it is
// not used (docs/retrieval.md).
const (
	RRFK          = 10
	LexicalWeight = 1.0
	VectorWeight  = 0.5
	// ConfidentLexical is the [LexicalConfidence] from which the lexical
	// list is trusted alone: the vector side's weight is then 0, and hits
	// only it found follow the lexical ones, in its order.
	ConfidentLexical = 0.5
	// ConfidenceDepth is the lexical rank whose score LexicalConfidence
	// compares with the first.
	ConfidenceDepth = 10
)

// CandidatesPerSide is how many candidates each side of a hybrid search
// contributes to fusion.
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

// Fuse merges a vector-ranked and a lexical-ranked candidate list (each best
// first, scores in VectorScore / LexicalScore) with weighted reciprocal rank
// fusion (see [RRFK]) and returns the best k, ranks on each side filled.
// When the lexical list is confident ([ConfidentLexical]) the vector side
// weighs nothing: the lexical order is kept and hits only the vector side
// found follow it in the vector order, with score 0. Other ties break by
// chunk id so results are deterministic.
func Fuse(vector, lexical []Hit, k int) []Hit {
	wv := VectorWeight
	if LexicalConfidence(lexical) >= ConfidentLexical {
		wv = 0
	}
	byID := map[string]*Hit{}
	var order []*Hit
	get := func(h Hit) *Hit {
		if p, ok := byID[h.Chunk.ID]; ok {
			return p
		}
		c := h
		c.Score, c.VectorRank, c.LexicalRank = 0, 0, 0
		c.VectorScore, c.LexicalScore = 0, 0
		byID[h.Chunk.ID] = &c
		order = append(order, &c)
		return &c
	}
	for i, h := range vector {
		p := get(h)
		p.VectorRank = i + 1
		p.VectorScore = h.VectorScore
		p.Score += wv / float64(RRFK+i+1)
	}
	for i, h := range lexical {
		p := get(h)
		p.LexicalRank = i + 1
		p.LexicalScore = h.LexicalScore
		p.Score += LexicalWeight / float64(RRFK+i+1)
	}
	out := make([]Hit, len(order))
	for i, p := range order {
		out[i] = *p
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := &out[i], &out[j]
		switch {
		case a.Score != b.Score:
			return a.Score > b.Score
		case a.Score == 0 && a.VectorRank != b.VectorRank:
			// Vector-only hits behind a confident lexical list.
			return a.VectorRank < b.VectorRank
		}
		return a.Chunk.ID < b.Chunk.ID
	})
	if len(out) > k {
		out = out[:k]
	}
	return out
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
func SortHits(hits []Hit) {
	sort.SliceStable(hits, func(i, j int) bool {
		if hits[i].Score != hits[j].Score {
			return hits[i].Score > hits[j].Score
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

// Fill loads the chunks of hits (which carry only ids), keeping their order
// and leaving out hits whose chunk is gone.
type Fill func(ctx context.Context, hits []Hit) ([]Hit, error)

// Search is the search every store shares: it normalises q, asks each side
// the query's mode needs for its candidates (CandidatesPerSide of each for a
// hybrid search), ranks or fuses them, loads the best with fill and leaves
// out near-duplicates of better hits (see [Collapse]) before cutting the
// list to q.K.
func Search(ctx context.Context, q Query, vector, lexical SideSearch, fill Fill) ([]Hit, error) {
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
	if q.Mode != SearchLexical {
		if vec, err = vector(ctx, q, n); err != nil {
			return nil, fmt.Errorf("search %s: %w", q.Theme, err)
		}
	}
	if q.Mode != SearchVector {
		if lex, err = lexical(ctx, q, n); err != nil {
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
		hits = Fuse(vec, lex, want)
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
	var kept []map[string]bool
	for _, h := range hits {
		if len(out) == k {
			break
		}
		if len(out) >= CollapseDepth {
			out = append(out, h)
			continue
		}
		sh := shingles(h.Chunk.Text)
		dup := false
		for _, o := range kept {
			if containment(sh, o) >= DuplicateContainment {
				dup = true
				break
			}
		}
		if dup {
			continue
		}
		kept = append(kept, sh)
		out = append(out, h)
	}
	return out
}

// shingles returns the set of three-unit shingles of text; a text of fewer
// than three units is one shingle of all of them.
func shingles(text string) map[string]bool {
	var units []string
	var word []rune
	flush := func() {
		if len(word) > 0 {
			units = append(units, string(word))
			word = word[:0]
		}
	}
	for _, r := range text {
		switch {
		case unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul):
			flush()
			units = append(units, string(r))
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			word = append(word, unicode.ToLower(r))
		default:
			flush()
		}
	}
	flush()
	out := map[string]bool{}
	if len(units) < 3 {
		out[strings.Join(units, "\x00")] = true
		return out
	}
	for i := 0; i+3 <= len(units); i++ {
		out[units[i]+"\x00"+units[i+1]+"\x00"+units[i+2]] = true
	}
	return out
}

// containment is the share of the smaller set's members found in the other.
func containment(a, b map[string]bool) float64 {
	if len(b) < len(a) {
		a, b = b, a
	}
	if len(a) == 0 {
		return 0
	}
	n := 0
	for k := range a {
		if b[k] {
			n++
		}
	}
	return float64(n) / float64(len(a))
}
