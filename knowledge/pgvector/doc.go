// Package pgvector is the PostgreSQL knowledge store: pgx/v5 and the
// pgvector extension, versioned migrations embedded and applied on open
// under an advisory lock, kb_document / kb_chunk / kb_embedding tables, an
// HNSW index for cosine distance (created when the first vectors fix the
// dimension), vibe's own inverted index for BM25 (package lexindex, as in
// the SQLite store: posting rows in kb_lex_posting, written in each
// document's transaction; see lexical.go), and COPY for bulk loading, one
// transaction per document.
package pgvector
