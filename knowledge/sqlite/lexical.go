package sqlite

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/vibelife/vibe/knowledge"
	"github.com/vibelife/vibe/knowledge/lexical"
)

// lexStats caches the document frequency of query tokens in chunk_fts and
// its row count, for one generation of the whole store (the sum of the
// themes' generations, which every write advances).
type lexStats struct {
	gen  int64
	rows int64
	df   map[string]int64
}

const (
	// maxCachedTokens bounds the frequency cache; it starts over when full.
	maxCachedTokens = 100_000
	// commonScan is how many chunks matching only uninformative tokens are
	// ranked.
	commonScan = 2000
)

// docFreqs returns the number of chunks and the document frequency of each
// of toks, from the cache or from chunk_fts_vocab.
func (s *Store) docFreqs(ctx context.Context, toks []string) (int64, map[string]int64, error) {
	var gen int64
	if err := s.db.QueryRowContext(ctx, `SELECT coalesce(sum(gen), 0) FROM theme_gen`).Scan(&gen); err != nil {
		return 0, nil, err
	}
	out := make(map[string]int64, len(toks))
	var missing []any
	s.mu.Lock()
	if s.lex.gen != gen || s.lex.df == nil || len(s.lex.df) > maxCachedTokens {
		s.lex = lexStats{gen: gen, rows: -1, df: map[string]int64{}}
	}
	rows := s.lex.rows
	for _, t := range toks {
		if n, ok := s.lex.df[t]; ok {
			out[t] = n
		} else {
			missing = append(missing, t)
		}
	}
	s.mu.Unlock()
	if rows < 0 {
		if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM chunks`).Scan(&rows); err != nil {
			return 0, nil, err
		}
	}
	if len(missing) > 0 {
		for _, t := range missing {
			out[t.(string)] = 0
		}
		q := `SELECT term, doc FROM chunk_fts_vocab WHERE term IN (?` + strings.Repeat(",?", len(missing)-1) + `)`
		r, err := s.db.QueryContext(ctx, q, missing...)
		if err != nil {
			return 0, nil, err
		}
		defer r.Close()
		for r.Next() {
			var term string
			var n int64
			if err := r.Scan(&term, &n); err != nil {
				return 0, nil, err
			}
			out[term] = n
		}
		if err := r.Err(); err != nil {
			return 0, nil, err
		}
	}
	// Values read after gen may be newer than it: caching them under gen
	// is safe, since the write that made them newer advanced the generation.
	s.mu.Lock()
	if s.lex.gen == gen {
		s.lex.rows = rows
		for _, t := range missing {
			s.lex.df[t.(string)] = out[t.(string)]
		}
	}
	s.mu.Unlock()
	return rows, out, nil
}

// informative splits the query tokens that occur in the store into those
// worth ranking by and the rest. FTS5's bm25 gives a token found in at least
// half the rows an IDF of (almost) zero: leaving it out of the match changes
// no score above that floor but saves scoring every row it matches, which
// is most of the cost of a lexical search over common words.
func informative(toks []string, rows int64, df map[string]int64) (keep, common []string) {
	for _, t := range toks {
		switch n := df[t]; {
		case n == 0: // matches nothing
		case 2*n < rows:
			keep = append(keep, t)
		default:
			common = append(common, t)
		}
	}
	return keep, common
}

// lexicalSearch ranks the theme's chunks by FTS5's bm25 (the table's rank)
// over the query's informative tokens. When those match fewer than n
// chunks, chunks matching only common tokens follow (their bm25 is near
// zero, below every informative match), ranked among the first commonScan
// of them.
func (s *Store) lexicalSearch(ctx context.Context, theme, text string, n int) ([]knowledge.Hit, map[string]float64, error) {
	toks := lexical.QueryTokens(text)
	if len(toks) == 0 {
		return nil, nil, nil
	}
	rows, df, err := s.docFreqs(ctx, toks)
	if err != nil {
		return nil, nil, fmt.Errorf("lexical: %w", err)
	}
	idf := make(map[string]float64, len(toks))
	for _, t := range toks {
		if df[t] > 0 { // a token no chunk holds weighs nothing
			idf[t] = knowledge.IDF(float64(rows), float64(df[t]))
		}
	}
	keep, common := informative(toks, rows, df)
	var out []knowledge.Hit
	if len(keep) > 0 {
		// ORDER BY rank lets FTS5 sort its matches itself; the theme, an
		// UNINDEXED column, is then checked only until n rows pass.
		out, err = s.ranked(ctx, `SELECT chunk_id, rank FROM chunk_fts WHERE chunk_fts MATCH ? AND theme = ? ORDER BY rank LIMIT ?`,
			matchAny(keep), theme, n)
		if err != nil {
			return nil, nil, err
		}
	}
	if len(out) < n && len(common) > 0 {
		more, err := s.ranked(ctx, `SELECT chunk_id, r FROM (SELECT chunk_id, rank AS r FROM chunk_fts WHERE chunk_fts MATCH ? AND theme = ? LIMIT ?) ORDER BY r LIMIT ?`,
			matchAny(common), theme, commonScan, n+len(out))
		if err != nil {
			return nil, nil, err
		}
		seen := map[string]bool{}
		for _, h := range out {
			seen[h.Chunk.ID] = true
		}
		for _, h := range more {
			if len(out) < n && !seen[h.Chunk.ID] {
				out = append(out, h)
			}
		}
	}
	return out, idf, nil
}

// matchAny is the FTS5 query matching any of toks (letters and digits
// only, see lexical.QueryTokens), each quoted.
func matchAny(toks []string) string {
	quoted := make([]string, len(toks))
	for i, t := range toks {
		quoted[i] = `"` + t + `"`
	}
	return strings.Join(quoted, " OR ")
}

// ranked runs a query returning (chunk id, bm25 rank) rows, best first,
// equal scores in chunk id order.
func (s *Store) ranked(ctx context.Context, q string, args ...any) ([]knowledge.Hit, error) {
	r, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("lexical: %w", err)
	}
	defer r.Close()
	var out []knowledge.Hit
	for r.Next() {
		var h knowledge.Hit
		var rank float64
		if err := r.Scan(&h.Chunk.ID, &rank); err != nil {
			return nil, fmt.Errorf("lexical: %w", err)
		}
		h.LexicalScore = -rank
		out = append(out, h)
	}
	if err := r.Err(); err != nil {
		return nil, fmt.Errorf("lexical: %w", err)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].LexicalScore != out[j].LexicalScore {
			return out[i].LexicalScore > out[j].LexicalScore
		}
		return out[i].Chunk.ID < out[j].Chunk.ID
	})
	return out, nil
}
