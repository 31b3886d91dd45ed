package embedding

import (
	"context"
	"errors"
)

// Embedder turns texts into vectors. Embed returns one vector of
// Dimensions() floats per text, in order. Implementations are safe for
// concurrent use. Model and Dimensions are recorded with the stored vectors
// so that a store never mixes embeddings of different models or sizes.
type Embedder interface {
	Embed(ctx context.Context, texts []string) ([][]float32, error)
	Model() string
	Dimensions() int
}

// EmbedFunc is the single call of an [Embedder].
type EmbedFunc func(ctx context.Context, texts []string) ([][]float32, error)

// ErrDimensionMismatch is returned when a model answers with vectors of
// another size than the configured one.
var ErrDimensionMismatch = errors.New("embedding: dimension mismatch")

var (
	_ Embedder = (*Local)(nil)
	_ Embedder = (*OpenAI)(nil)
)
