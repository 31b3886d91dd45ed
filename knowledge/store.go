package knowledge

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/vibelife/vibe/chunk"
)

// Sentinel errors of the store contract, checked with errors.Is.
var (
	// ErrNotFound is returned when a chunk or document does not exist.
	ErrNotFound = errors.New("knowledge: not found")
	// ErrDimensionMismatch is returned when vectors of another dimension (or
	// another embedding model) are written to a store that already holds
	// vectors.
	ErrDimensionMismatch = errors.New("knowledge: embedding dimension mismatch")
	// ErrSchemaNewer is returned (wrapped in a *SchemaNewerError) by a
	// store's Open when the store holds a schema version this vibe does not
	// know: a newer vibe migrated it, and reading its tables as an older
	// layout would answer wrongly (or slowly) without saying so.
	ErrSchemaNewer = errors.New("knowledge: store schema newer than this vibe")
)

// SchemaNewerError says which store holds which schema version, the newest
// this vibe knows, and what to do.
type SchemaNewerError struct {
	Store        string // the SQLite file, or the PostgreSQL database and schema
	Found, Known int    // the store's schema version, the newest this binary applies
}

func (e *SchemaNewerError) Error() string {
	return fmt.Sprintf("%s has schema version %d, newer than this vibe knows (%d): a newer vibe has migrated it; upgrade vibe (make install, or go install github.com/vibelife/vibe/cmd/vibe@latest) to open it, or point this vibe at another store",
		e.Store, e.Found, e.Known)
}

func (e *SchemaNewerError) Unwrap() error { return ErrSchemaNewer }

// Document is a converted file as the store knows it.
type Document struct {
	// ID is the converted file's path relative to the workspace
	// (chunk.Chunk.Doc).
	ID    string `json:"id"`
	Theme string `json:"theme"`
	// Source is the original under knowledge/<theme>/source/.
	Source string `json:"source"`
	Title  string `json:"title"`
	// ContentHash is the sha256 of the lexical index version and the converted
	// file; ingest compares it to
	// decide whether a document changed.
	ContentHash string    `json:"content_hash"`
	Chunks      int       `json:"chunks"`
	UpdatedAt   time.Time `json:"updated_at"`
}

// EmbeddingInfo names the embedding space of a store's vectors.
type EmbeddingInfo struct {
	Model      string `json:"model"`
	Dimensions int    `json:"dimensions"`
}

// SearchMode selects the retrieval method.
type SearchMode string

// Search modes.
const (
	SearchHybrid  SearchMode = "hybrid"
	SearchVector  SearchMode = "vector"
	SearchLexical SearchMode = "lexical"
)

// Query is a search request.
type Query struct {
	// Theme restricts the search to one theme; required.
	Theme string
	// Text is the query text, used by the lexical side.
	Text string
	// Vector is the embedded query, used by the vector side.
	Vector []float32
	// K is the number of hits wanted (default 10).
	K int
	// Mode defaults to SearchHybrid.
	Mode SearchMode
}

// Hit is one search result.
type Hit struct {
	Chunk chunk.Chunk `json:"chunk"`
	// Score is the fused score used for ranking (higher is better).
	Score float64 `json:"score"`
	// VectorScore is the cosine similarity, when the vector side found it.
	VectorScore float64 `json:"vector_score,omitempty"`
	// LexicalScore is the lexical side's score, when it found it.
	LexicalScore float64 `json:"lexical_score,omitempty"`
	// VectorRank and LexicalRank are 1-based ranks on each side (0: absent).
	VectorRank  int `json:"vector_rank,omitempty"`
	LexicalRank int `json:"lexical_rank,omitempty"`
	// Proximity is the share of the query's IDF mass found within one
	// sentence of the chunk (hybrid search only, see [Rerank]).
	Proximity float64 `json:"proximity,omitempty"`
	// LexicalTerms, on a lexical side's candidate, has bit k set when the
	// chunk holds query token k (lexical.QueryTokens order, the first 64);
	// 0 when the side does not say. The reranker bounds the candidate's
	// proximity by the tokens it holds, to skip loading and scanning
	// candidates that cannot rank. Never part of a search's result.
	LexicalTerms uint64 `json:"-"`
}

// TermCounts are the figures a theme's own rarity of a query's tokens is
// read from ([TermCounter]): how many chunks the theme holds, and how many
// of them hold each token.
type TermCounts struct {
	// Chunks is the number of chunks of the theme.
	Chunks int64
	// DF[i] is the number of chunks of the theme holding tokens[i].
	DF []int64
}

// TermCounter is an optional capability of a Store (found by type
// assertion): the theme's counts of index tokens (lexical.QueryTokens), so
// that a caller can weigh what a passage holds of a query by how rare each
// token is in that theme alone, whatever the other themes of the store.
// Unknown tokens and themes count 0. Safe for concurrent use.
type TermCounter interface {
	TermCounts(ctx context.Context, theme string, tokens []string) (TermCounts, error)
}

// Store holds documents, their chunks and chunk embeddings, and searches
// them. Implementations are safe for concurrent use. Every method honours
// ctx cancellation.
type Store interface {
	// EmbeddingInfo returns the embedding space recorded in the store; ok is
	// false while the store holds no vectors.
	EmbeddingInfo(ctx context.Context) (info EmbeddingInfo, ok bool, err error)

	// Documents lists the documents of a theme, ordered by ID.
	Documents(ctx context.Context, theme string) ([]Document, error)

	// ReplaceDocument stores doc with its chunks and their vectors
	// (vectors[i] embeds chunks[i]) in one transaction, replacing whatever
	// the store held for doc.ID: either all of it is visible afterwards or
	// none. It returns ErrDimensionMismatch when info differs from the
	// store's recorded embedding space. Retrying after a failure never
	// duplicates anything.
	ReplaceDocument(ctx context.Context, doc Document, chunks []chunk.Chunk, vectors [][]float32, info EmbeddingInfo) error

	// DeleteDocument removes a document and its chunks. Deleting a missing
	// document is not an error.
	DeleteDocument(ctx context.Context, theme, id string) error

	// Chunk returns one chunk by id, or ErrNotFound.
	Chunk(ctx context.Context, id string) (chunk.Chunk, error)

	// Chunks returns every chunk of a theme, ordered by document and ordinal.
	Chunks(ctx context.Context, theme string) ([]chunk.Chunk, error)

	// Search returns up to q.K hits of q.Theme, best first.
	Search(ctx context.Context, q Query) ([]Hit, error)

	// Close releases the store.
	Close() error
}
