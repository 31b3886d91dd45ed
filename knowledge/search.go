package knowledge

import (
	"context"
	"errors"
	"fmt"
	"sort"
)

// RRFK is the reciprocal rank fusion constant.
const RRFK = 60

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
// first, scores in VectorScore / LexicalScore) with reciprocal rank fusion
// and returns the best k, ranks on each side filled. Ties break by chunk id
// so results are deterministic.
func Fuse(vector, lexical []Hit, k int) []Hit {
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
		p.Score += 1 / float64(RRFK+i+1)
	}
	for i, h := range lexical {
		p := get(h)
		p.LexicalRank = i + 1
		p.LexicalScore = h.LexicalScore
		p.Score += 1 / float64(RRFK+i+1)
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

// Search is the search every store shares: it normalises q, asks each side
// the query's mode needs for its candidates (CandidatesPerSide of each for a
// hybrid search), and ranks or fuses them. Stores fill the chunks of the
// hits it returns.
func Search(ctx context.Context, q Query, vector, lexical SideSearch) ([]Hit, error) {
	q, err := NormalizeQuery(q)
	if err != nil {
		return nil, err
	}
	n := q.K
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
	switch q.Mode {
	case SearchVector:
		return RankOnly(vec, q.Mode, q.K), nil
	case SearchLexical:
		return RankOnly(lex, q.Mode, q.K), nil
	}
	return Fuse(vec, lex, q.K), nil
}
