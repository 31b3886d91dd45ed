package chunk

import (
	"fmt"
	"strings"

	tiktoken_loader "github.com/pkoukk/tiktoken-go-loader"
)

// Encoding names accepted by [Options.Encoding].
const (
	EncodingCL100K = "cl100k_base"
	EncodingO200K  = "o200k_base"
)

// o200kPattern and cl100kPattern are the pre-tokenisation patterns of the
// two encodings, as in tiktoken-go's encoding.go. The counter splits by
// hand as they do (splitCL100K, splitO200K); the tests compare it with
// tiktoken-go built from the same patterns and ranks.
var o200kPattern = strings.Join([]string{
	`[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?`,
	`[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?`,
	`\p{N}{1,3}`,
	` ?[^\s\p{L}\p{N}]+[\r\n/]*`,
	`\s*[\r\n]+`,
	`\s+(?!\S)`,
	`\s+`,
}, "|")

const cl100kPattern = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`

// loadRanks returns the BPE ranks of an encoding, embedded in
// tiktoken-go-loader (no network), and its pre-tokenisation pattern.
func loadRanks(name string) (ranks map[string]int, pattern string, err error) {
	var file string
	switch name {
	case EncodingCL100K:
		file, pattern = "cl100k_base.tiktoken", cl100kPattern
	case EncodingO200K:
		file, pattern = "o200k_base.tiktoken", o200kPattern
	default:
		return nil, "", fmt.Errorf("%w: %q (use %s or %s)", ErrUnknownEncoding, name, EncodingCL100K, EncodingO200K)
	}
	ranks, err = tiktoken_loader.NewOfflineLoader().LoadTiktokenBpe(file)
	if err != nil {
		return nil, "", fmt.Errorf("load encoding %s: %w", name, err)
	}
	return ranks, pattern, nil
}
