package embedding

import (
	"context"
	"hash/fnv"
	"math"
	"strings"
	"unicode"

	"github.com/vibelife/vibe/knowledge/lexical"
)

// LocalModel is the model name recorded for vectors of [Local]. It changes
// whenever the vectors do, so that a store holding older ones refuses new
// ones (ErrDimensionMismatch) instead of mixing them: re-ingest with
// `vibe ingest <theme> --rebuild`.
const LocalModel = "local-ngram-v2"

// DefaultLocalDimensions is the vector size of [NewLocal](0). Hashing a
// chunk's few hundred features into 512 buckets collided often enough to
// cost recall; 1024 halves the collisions (docs/retrieval.md).
const DefaultLocalDimensions = 1024

// Local is a deterministic, offline, lexical embedder: it is not a neural
// model and captures shared wording, not meaning.
//
// Features, each hashed with FNV-1a (64-bit) into one of Dimensions buckets
// with a hash-derived sign:
//   - CJK text: every character (unigram) and every pair of adjacent
//     characters (bigram), weight 1 and 1.5;
//   - Latin text (lowercased letters and digits): every word, every pair of
//     adjacent words (weight 1 and 1.5) and the character trigrams of each
//     word padded with spaces (weight 0.3).
//
// Chinese question words (什么, 如何, 为什么...) are dropped before the
// features are taken, and English stop words (the list of package lexical)
// weigh 0.2. Term frequencies are damped sublinearly (1+ln tf). In place of
// corpus IDF, which would make vectors depend on what else was ingested, a
// fixed approximation down-weights CJK characters that are function words or
// very common in classical and modern Chinese (之, 也, 的, 而, ...), so that
// content characters dominate. Corpus IDF was measured as well (eval/,
// docs/retrieval.md): it lowered Chinese recall and did not beat the fixed
// weights in English, so it is not used. On 子平真诠's 47 chapter titles as
// queries (TestLocalChapterRetrieval) v2 scores recall@5 0.979, MRR 0.855
// (v1, 512 dims: 0.915, 0.845). The vector is L2 normalised, so cosine
// similarity is a dot product. The same text gives the same vector on every
// run and machine. Local is safe for concurrent use.
type Local struct {
	dims int
}

// NewLocal returns a local embedder of dims dimensions (default
// [DefaultLocalDimensions]).
func NewLocal(dims int) *Local {
	if dims <= 0 {
		dims = DefaultLocalDimensions
	}
	return &Local{dims: dims}
}

// Model returns [LocalModel].
func (l *Local) Model() string { return LocalModel }

// Dimensions returns the vector size.
func (l *Local) Dimensions() int { return l.dims }

// Embed embeds each text. It only fails when ctx is cancelled.
func (l *Local) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		if i%64 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		out[i] = l.Vector(t)
	}
	return out, nil
}

// Vector embeds one text.
func (l *Local) Vector(text string) []float32 {
	type feat struct {
		w float64
		n int
	}
	tf := map[string]*feat{}
	add := func(f string, w float64) {
		if x, ok := tf[f]; ok {
			x.n++
			return
		}
		tf[f] = &feat{w: w, n: 1}
	}
	var cjk []rune
	var words []string
	var word []rune
	flushWord := func() {
		if len(word) > 0 {
			words = append(words, string(word))
			word = word[:0]
		}
	}
	flushCJK := func() {
		for i, r := range cjk {
			add("u"+string(r), cjkWeight(r))
			if i > 0 {
				add("b"+string(cjk[i-1:i+1]), 1.5*math.Min(cjkWeight(cjk[i-1]), cjkWeight(r)))
			}
		}
		cjk = cjk[:0]
	}
	flushWords := func() {
		flushWord()
		for i, w := range words {
			wt := 1.0
			if lexical.IsStopWord(w) {
				wt = 0.2
			}
			add("w"+w, wt)
			if i > 0 && !lexical.IsStopWord(w) && !lexical.IsStopWord(words[i-1]) {
				add("p"+words[i-1]+" "+w, 1.5)
			}
			p := []rune(" " + w + " ")
			for j := 0; j+3 <= len(p); j++ {
				add("t"+string(p[j:j+3]), 0.3*wt)
			}
		}
		words = words[:0]
	}
	for _, r := range lexical.StripQuestionWords(text) {
		switch {
		case isCJK(r):
			flushWords()
			cjk = append(cjk, r)
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			flushCJK()
			word = append(word, unicode.ToLower(r))
		case unicode.IsSpace(r):
			flushWord()
		default:
			// Punctuation ends CJK runs and word sequences.
			flushCJK()
			flushWords()
		}
	}
	flushCJK()
	flushWords()

	vec := make([]float64, l.dims)
	for f, x := range tf {
		h := fnv.New64a()
		h.Write([]byte(f))
		sum := h.Sum64()
		idx := int(sum % uint64(l.dims))
		sign := 1.0
		if sum>>63 == 1 {
			sign = -1
		}
		// Sublinear term frequency times the feature's fixed weight.
		vec[idx] += sign * x.w * (1 + math.Log(float64(x.n)))
	}
	var norm float64
	for _, v := range vec {
		norm += v * v
	}
	out := make([]float32, l.dims)
	if norm == 0 {
		return out
	}
	norm = math.Sqrt(norm)
	for i, v := range vec {
		out[i] = float32(v / norm)
	}
	return out
}

func isCJK(r rune) bool {
	return unicode.Is(unicode.Han, r) || unicode.Is(unicode.Hiragana, r) || unicode.Is(unicode.Katakana, r) || unicode.Is(unicode.Hangul, r)
}

// commonCJK are function words and very frequent characters, down-weighted.
const commonCJK = "之也者而以其于为则乃所矣焉乎哉与此是不有无一二人大中上下的了在和我你他她它们这那个就都也要会能说对着来去得地又"

func cjkWeight(r rune) float64 {
	if strings.ContainsRune(commonCJK, r) {
		return 0.3
	}
	return 1
}
