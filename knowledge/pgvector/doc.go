// Package pgvector is the PostgreSQL knowledge store: pgx/v5 and the
// pgvector extension, versioned migrations embedded and applied on open
// under an advisory lock, kb_document / kb_chunk / kb_embedding tables, an
// HNSW index for cosine distance (created when the first vectors fix the
// dimension), a 'simple' tsvector over the pre-tokenised text of package
// lexical with a GIN index, and COPY for bulk loading, one transaction per
// document.
package pgvector
