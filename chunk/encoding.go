package chunk

import (
	"fmt"
	"strings"

	"github.com/pkoukk/tiktoken-go"
	tiktoken_loader "github.com/pkoukk/tiktoken-go-loader"
)

// Encoding names accepted by [Options.Encoding].
const (
	EncodingCL100K = "cl100k_base"
	EncodingO200K  = "o200k_base"
)

// o200kPattern and cl100kPattern are the pre-tokenisation patterns of the
// two encodings, as in tiktoken-go's encoding.go. They are repeated here so
// that the encodings are built from the embedded BPE files without touching
// tiktoken-go's package-level loader (no network, no global state).
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

// loadEncoding builds a tokenizer from the BPE ranks embedded in
// tiktoken-go-loader. It never uses the network.
func loadEncoding(name string) (*tiktoken.Tiktoken, error) {
	var (
		file    string
		pat     string
		special map[string]int
	)
	switch name {
	case EncodingCL100K:
		file, pat = "cl100k_base.tiktoken", cl100kPattern
		special = map[string]int{
			tiktoken.ENDOFTEXT: 100257, tiktoken.FIM_PREFIX: 100258, tiktoken.FIM_MIDDLE: 100259,
			tiktoken.FIM_SUFFIX: 100260, tiktoken.ENDOFPROMPT: 100276,
		}
	case EncodingO200K:
		file, pat = "o200k_base.tiktoken", o200kPattern
		special = map[string]int{tiktoken.ENDOFTEXT: 199999, tiktoken.ENDOFPROMPT: 200018}
	default:
		return nil, fmt.Errorf("%w: %q (use %s or %s)", ErrUnknownEncoding, name, EncodingCL100K, EncodingO200K)
	}
	ranks, err := tiktoken_loader.NewOfflineLoader().LoadTiktokenBpe(file)
	if err != nil {
		return nil, fmt.Errorf("load encoding %s: %w", name, err)
	}
	bpe, err := tiktoken.NewCoreBPE(ranks, special, pat)
	if err != nil {
		return nil, fmt.Errorf("load encoding %s: %w", name, err)
	}
	set := make(map[string]any, len(special))
	for k := range special {
		set[k] = true
	}
	return tiktoken.NewTiktoken(bpe, &tiktoken.Encoding{Name: name, PatStr: pat, MergeableRanks: ranks, SpecialTokens: special}, set), nil
}
