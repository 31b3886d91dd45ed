package pgvector

import (
	"strings"

	"github.com/jackc/pgx/v5/pgtype"

	"github.com/vibelife/vibe/chunk"
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
func tsvectorOf(c chunk.Chunk) pgtype.TSVector {
	index := map[string]int{}
	var lexemes []pgtype.TSVectorLexeme
	for i, tok := range strings.Fields(lexical.IndexChunk(c)) {
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
	return pgtype.TSVector{Lexemes: lexemes, Valid: true}
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
