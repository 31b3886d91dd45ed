package pgvector

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/vibelife/vibe/chunk"
	"github.com/vibelife/vibe/knowledge"
	"github.com/vibelife/vibe/knowledge/lexical"
)

// PostgreSQL's tsvector limits (src/include/tsearch/ts_type.h): positions
// run up to maxEntryPos-1 (later ones are clamped to it), to_tsvector keeps
// at most maxNumPos-1 positions per lexeme, lexemes are at most
// maxLexemeBytes long.
const (
	maxEntryPos    = 1 << 14
	maxNumPos      = 256
	maxLexemeBytes = 2047
)

// tsvectorOf builds the tsvector of a chunk from its lexical index tokens
// (lexical.IndexChunk): each token a lexeme at its 1-based position, as
// to_tsvector('simple', ...) would over the token string but without
// running the text-search parser on the server, which cost most of a
// write. Queries are built from tokens too (tsqueryOf), so the two sides
// always agree.
//
// It also returns the chunk's length in tokens, its document length for
// BM25.
func tsvectorOf(c chunk.Chunk) (pgtype.TSVector, int) {
	index := map[string]int{}
	var lexemes []pgtype.TSVectorLexeme
	toks := strings.Fields(lexical.IndexChunk(c))
	for i, tok := range toks {
		if len(tok) > maxLexemeBytes {
			continue
		}
		pos := min(i+1, maxEntryPos-1)
		k, ok := index[tok]
		if !ok {
			k = len(lexemes)
			index[tok] = k
			lexemes = append(lexemes, pgtype.TSVectorLexeme{Word: tok})
		}
		l := &lexemes[k]
		if n := len(l.Positions); n >= maxNumPos-1 || (n > 0 && uint16(l.Positions[n-1].Position) >= uint16(pos)) {
			continue
		}
		l.Positions = append(l.Positions, pgtype.TSVectorPosition{Position: uint16(pos)})
	}
	return pgtype.TSVector{Lexemes: lexemes, Valid: true}, len(toks)
}

// tsqueryOf returns the tsquery text matching any of tokens, each quoted
// so it is taken verbatim.
func tsqueryOf(tokens []string) string {
	var b strings.Builder
	for i, t := range tokens {
		if i > 0 {
			b.WriteString(" | ")
		}
		b.WriteByte('\'')
		b.WriteString(strings.NewReplacer(`'`, `''`, `\`, `\\`).Replace(t))
		b.WriteByte('\'')
	}
	return b.String()
}

// commonLexemes caches the lexemes ANALYZE found in at least commonFreq of
// the chunks (pg_stats.most_common_elems of kb_chunk.tsv) with their
// frequency, refreshed every commonTTL.
type commonLexemes struct {
	at   time.Time
	freq map[string]float64
}

// BM25 as SQLite's FTS5 computes it (k1 1.2, b 0.75, IDF
// ln((N - n + 0.5) / (n + 0.5)) floored at 1e-6), so both stores rank a
// theme's chunks alike.
const (
	bm25K1      = 1.2
	bm25B       = 0.75
	bm25MinIDF  = 1e-6
	commonTTL   = time.Minute
	minRerank   = 200 // candidates scored by BM25, at least
	commonFreq  = 0.2
	commonScan  = 2000
	rerankRatio = 4 // candidates per hit wanted
)

// commonSet returns the common lexemes and their frequencies, from the
// cache or pg_stats. Before the table's first ANALYZE it is empty: nothing
// is left out of candidate generation, which is only slower.
func (s *Store) commonSet(ctx context.Context) (map[string]float64, error) {
	s.mu.Lock()
	c := s.common
	s.mu.Unlock()
	if c.freq != nil && time.Since(c.at) < commonTTL {
		return c.freq, nil
	}
	var elems []string
	var freqs []float32
	err := s.pool.QueryRow(ctx, `SELECT most_common_elems::text::text[], most_common_elem_freqs FROM pg_stats
WHERE schemaname = $1 AND tablename = 'kb_chunk' AND attname = 'tsv'`, s.schemaName).Scan(&elems, &freqs)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("lexeme statistics: %w", err)
	}
	set := map[string]float64{}
	for i, e := range elems {
		if i < len(freqs) && float64(freqs[i]) >= commonFreq {
			set[e] = float64(freqs[i])
		}
	}
	s.mu.Lock()
	s.common = commonLexemes{at: time.Now(), freq: set}
	s.mu.Unlock()
	return set, nil
}

// lexicalSearch ranks the theme's chunks by BM25 in two stages. The GIN
// index gives, without reading any tsvector, the chunks holding each
// informative query token (one in less than commonFreq of the chunks, by
// the table's statistics) and so each token's document frequency; the
// chunks are ordered by the summed IDF of the tokens they hold. The best
// rerankRatio*n of them (at least minRerank) are then scored by BM25 from
// their tsvectors, the common tokens included. A token in a fifth of the
// chunks weighs little in BM25 while matching a fifth of the table: leaving
// it out of the first stage is what keeps the search from reading and
// ranking most of the table (docs/retrieval.md). When no query token is
// informative, the candidates are the first commonScan chunks holding the
// rarest; when the informative ones yield fewer than n, chunks holding only
// common tokens follow.
func (s *Store) lexicalSearch(ctx context.Context, theme, text string, n int) ([]knowledge.Hit, map[string]float64, error) {
	toks := lexical.QueryTokens(text)
	if len(toks) == 0 {
		return nil, nil, nil
	}
	freq, err := s.commonSet(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("lexical: %w", err)
	}
	var keep, common []string
	for _, t := range toks {
		if _, ok := freq[t]; ok {
			common = append(common, t)
		} else {
			keep = append(keep, t)
		}
	}
	st, err := s.candidates(ctx, theme, keep, max(rerankRatio*n, minRerank))
	if err != nil {
		return nil, nil, err
	}
	if len(st.ids) < n && len(common) > 0 {
		rarest := common[0]
		for _, t := range common[1:] {
			if freq[t] < freq[rarest] {
				rarest = t
			}
		}
		var more []string
		err := s.pool.QueryRow(ctx, `SELECT coalesce(array_agg(id), '{}') FROM (SELECT id FROM kb_chunk WHERE theme = $1 AND tsv @@ CAST($2 AS tsquery) LIMIT $3) m`,
			theme, tsqueryOf([]string{rarest}), commonScan).Scan(&more)
		if err != nil {
			return nil, nil, fmt.Errorf("lexical: %w", err)
		}
		st.ids = append(st.ids, more...)
	}
	if len(st.ids) == 0 {
		return nil, nil, nil
	}
	for _, t := range common {
		st.df[t] = freq[t] * st.chunks
	}
	idf := make(map[string]float64, len(toks))
	for _, t := range toks {
		if st.df[t] > 0 { // a token no chunk holds weighs nothing
			idf[t] = knowledge.IDF(st.chunks, st.df[t])
		}
	}
	hits, err := s.bm25(ctx, st, n)
	return hits, idf, err
}

// lexStats are a theme's BM25 statistics and first-stage candidates.
type lexStats struct {
	chunks, avgLen float64
	df             map[string]float64
	ids            []string
}

// candidates is the first stage: the theme's statistics, each token's
// document frequency in the theme, and the ids of the limit chunks with the
// highest summed IDF of the tokens they hold.
func (s *Store) candidates(ctx context.Context, theme string, toks []string, limit int) (lexStats, error) {
	st := lexStats{df: map[string]float64{}}
	tqs := make([]string, len(toks))
	for i, t := range toks {
		tqs[i] = tsqueryOf([]string{t})
	}
	var counts []float64
	err := s.pool.QueryRow(ctx, `
WITH st AS (SELECT chunks::float8 AS n, tokens::float8 / greatest(chunks, 1) AS avglen FROM kb_theme_stats WHERE theme = $2),
q AS (SELECT * FROM unnest($1::text[]) WITH ORDINALITY AS u(tq, i)),
m AS (SELECT q.i, k.id FROM q, LATERAL (SELECT id FROM kb_chunk WHERE theme = $2 AND tsv @@ CAST(q.tq AS tsquery)) k),
d AS (SELECT q.i, count(m.id)::float8 AS df FROM q LEFT JOIN m USING (i) GROUP BY q.i),
w AS (SELECT d.i, greatest(ln((st.n - d.df + 0.5) / (d.df + 0.5)), $4) AS idf FROM d, st),
top AS (SELECT m.id FROM m JOIN w USING (i) GROUP BY m.id ORDER BY sum(w.idf) DESC, m.id LIMIT $3)
SELECT coalesce((SELECT n FROM st), 0), coalesce((SELECT avglen FROM st), 0),
	(SELECT coalesce(array_agg(df ORDER BY i), '{}') FROM d), (SELECT coalesce(array_agg(id), '{}') FROM top)`,
		tqs, theme, limit, bm25MinIDF).Scan(&st.chunks, &st.avgLen, &counts, &st.ids)
	if err != nil {
		return st, fmt.Errorf("lexical: %w", err)
	}
	for i, t := range toks {
		if i < len(counts) {
			st.df[t] = counts[i]
		}
	}
	return st, nil
}

// bm25 is the second stage: it reads the candidates' tsvectors and returns
// the best n by BM25 over the tokens of st.df, equal scores in chunk id
// order.
func (s *Store) bm25(ctx context.Context, st lexStats, n int) ([]knowledge.Hit, error) {
	rows, err := s.pool.Query(ctx, `SELECT id, tsv, lex_len FROM kb_chunk WHERE id = ANY($1)`, st.ids)
	if err != nil {
		return nil, fmt.Errorf("lexical: %w", err)
	}
	idf := map[string]float64{}
	for t, df := range st.df {
		idf[t] = max(math.Log((st.chunks-df+0.5)/(df+0.5)), bm25MinIDF)
	}
	avg := max(st.avgLen, 1)
	var out []knowledge.Hit
	var tsv pgtype.TSVector
	var id string
	var dl int
	_, err = pgx.ForEachRow(rows, []any{&id, &tsv, &dl}, func() error {
		var score float64
		for _, l := range tsv.Lexemes {
			w, ok := idf[l.Word]
			if !ok {
				continue
			}
			tf := float64(len(l.Positions))
			score += w * tf * (bm25K1 + 1) / (tf + bm25K1*(1-bm25B+bm25B*float64(dl)/avg))
		}
		if score > 0 {
			out = append(out, knowledge.Hit{Chunk: chunk.Chunk{ID: id}, LexicalScore: score})
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("lexical: %w", err)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].LexicalScore != out[j].LexicalScore {
			return out[i].LexicalScore > out[j].LexicalScore
		}
		return out[i].Chunk.ID < out[j].Chunk.ID
	})
	if len(out) > n {
		out = out[:n]
	}
	return out, nil
}
