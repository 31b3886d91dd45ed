package knowledge

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/vibelife/vibe/chunk"
)

// CheckReplace validates the arguments of Store.ReplaceDocument before a
// store touches anything, so every implementation refuses the same input.
func CheckReplace(doc Document, chunks []chunk.Chunk, vectors [][]float32, info EmbeddingInfo) error {
	if doc.ID == "" || doc.Theme == "" {
		return fmt.Errorf("replace document: id and theme are required (got id %q, theme %q)", doc.ID, doc.Theme)
	}
	if len(vectors) != 0 && len(vectors) != len(chunks) {
		return fmt.Errorf("replace %s: %d vectors for %d chunks", doc.ID, len(vectors), len(chunks))
	}
	if len(vectors) > 0 && info.Dimensions <= 0 {
		return fmt.Errorf("replace %s: embedding info has no dimensions", doc.ID)
	}
	for _, c := range chunks {
		if err := CheckText(c.Text); err != nil {
			return fmt.Errorf("replace %s: chunk %s: %w", doc.ID, c.ID, err)
		}
	}
	for i, v := range vectors {
		if len(v) != info.Dimensions {
			return fmt.Errorf("replace %s: chunk %s: vector of %d dims, embedding %s has %d: %w",
				doc.ID, chunks[i].ID, len(v), info.Model, info.Dimensions, ErrDimensionMismatch)
		}
	}
	return nil
}

// MismatchError explains a write of another embedding space than the
// store's, wrapping ErrDimensionMismatch.
func MismatchError(have, got EmbeddingInfo) error {
	return fmt.Errorf("the store holds vectors of model %s (%d dims), not %s (%d dims): %w",
		have.Model, have.Dimensions, got.Model, got.Dimensions, ErrDimensionMismatch)
}

// CheckText refuses text no store can hold faithfully: invalid UTF-8 or NUL
// bytes, the marks of binary junk (PostgreSQL rejects both; SQLite would
// store bytes that no search can match).
func CheckText(text string) error {
	if i := strings.IndexByte(text, 0); i >= 0 {
		return fmt.Errorf("NUL byte at byte %d: binary data, not text", i)
	}
	if !utf8.ValidString(text) {
		for i := 0; i < len(text); {
			r, n := utf8.DecodeRuneInString(text[i:])
			if r == utf8.RuneError && n <= 1 {
				return fmt.Errorf("invalid UTF-8 at byte %d: binary data or another encoding, not UTF-8 text", i)
			}
			i += n
		}
	}
	return nil
}
