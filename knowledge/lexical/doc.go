// Package lexical tokenises text for the lexical side of search, shared by
// every store so that indexing and querying agree: CJK runs become
// character unigrams and bigrams, Latin and digit runs become lower-cased
// words. Stores index the tokens of a chunk's title, heading path and text
// (ChunkTokens; SQLite's own inverted index, knowledge/lexindex, or a
// 'simple' tsvector of IndexChunk in PostgreSQL). Queries drop Chinese question words and
// function characters and English stop words (QueryTokens).
package lexical
