// Package lexindex is vibe's own inverted index for BM25 search: it turns
// the index tokens of numbered chunks into posting rows, and finds the best
// k chunks of a query from those rows without scoring every match.
//
// A term's postings are kept in rows of at most [RowSize] postings, each
// row covering the chunk numbers [Row.First, Row.Last] and carrying what a
// BM25 upper bound needs (its highest term frequency and shortest chunk).
// Rows of one term never overlap, and new chunks take numbers above every
// stored one, so a write appends to a term's last row or adds rows after
// it. A store keeps the rows in a table (the SQLite store in segments,
// each document's rows written as a new one and segments packed together
// by [Merge]) and hands [TopK] the rows of each query term in number
// order; [TopK] splits the chunk numbers into stretches covered by the
// same rows, bounds each stretch's best score by the sum of its rows'
// bounds, and scores the stretches best bound first, decoding rows only
// when a stretch is scored, until no remaining bound reaches the k-th best
// score found.
//
// Scores are BM25 as SQLite's FTS5 computes it (k1 1.2, b 0.75, IDF
// ln((N - n + 0.5) / (n + 0.5)) floored at 1e-6).
package lexindex
