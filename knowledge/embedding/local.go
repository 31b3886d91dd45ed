package embedding

import (
	"context"
	"math"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

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
//
// The features are hashed as they are found, without building their
// strings (FNV-1a of the feature's kind letter and UTF-8 text, as
// hash/fnv over "u"+string(r) and the like), counted in a table by hash
// in the order they are first found, and added into the dimensions in
// that order; the scratch (the table, a dims-long float64 sum that only
// the features' dimensions touch, the runes and words) is pooled, so a
// query's vector allocates only itself.
func (l *Local) Vector(text string) []float32 {
	sc := localScratchPool.Get().(*localScratch)
	defer localScratchPool.Put(sc)
	sc.reset(l.dims)
	for _, r := range lexical.StripQuestionWords(text) {
		switch {
		case isCJK(r):
			sc.flushWords()
			sc.cjk = append(sc.cjk, r)
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			sc.flushCJK()
			sc.word = append(sc.word, unicode.ToLower(r))
		case unicode.IsSpace(r):
			sc.flushWord()
		default:
			// Punctuation ends CJK runs and word sequences.
			sc.flushCJK()
			sc.flushWords()
		}
	}
	sc.flushCJK()
	sc.flushWords()

	vec := sc.vec[:l.dims]
	touched := sc.touched[:0]
	for _, x := range sc.feats {
		idx := int(x.h % uint64(l.dims))
		sign := 1.0
		if x.h>>63 == 1 {
			sign = -1
		}
		// Sublinear term frequency times the feature's fixed weight.
		vec[idx] += sign * x.w * (1 + math.Log(float64(x.n)))
		touched = append(touched, idx)
	}
	slices.Sort(touched)
	touched = slices.Compact(touched)
	sc.touched = touched
	// The norm over the touched dimensions in index order: the others
	// add +0, which leaves the sum as it is.
	var norm float64
	for _, i := range touched {
		norm += vec[i] * vec[i]
	}
	out := make([]float32, l.dims)
	if norm != 0 {
		norm = math.Sqrt(norm)
		for _, i := range touched {
			out[i] = float32(vec[i] / norm)
		}
	}
	for _, i := range touched {
		vec[i] = 0
	}
	return out
}

// localFeat is a feature of a text: its hash, the weight it was first
// found with, and how often it was found.
type localFeat struct {
	h uint64
	w float64
	n int
}

// localScratch is the working memory of one [Local.Vector].
type localScratch struct {
	feats   []localFeat
	at      map[uint64]int32 // index in feats by hash
	vec     []float64        // dims sums, zero between uses
	touched []int
	cjk     []rune
	word    []rune // the current word
	// The words of the current sequence: their runes in wrunes, the
	// bounds of word i at wends[i-1] (0 for the first) and wends[i], and
	// their UTF-8 text in wbytes, bounded likewise by bends.
	wrunes []rune
	wends  []int
	wbytes []byte
	bends  []int
	stop   []bool
}

var localScratchPool = sync.Pool{New: func() any { return &localScratch{at: map[uint64]int32{}} }}

func (sc *localScratch) reset(dims int) {
	sc.feats = sc.feats[:0]
	clear(sc.at)
	if len(sc.vec) < dims {
		sc.vec = make([]float64, dims)
	}
	sc.cjk, sc.word = sc.cjk[:0], sc.word[:0]
	sc.wrunes, sc.wends, sc.wbytes, sc.bends, sc.stop = sc.wrunes[:0], sc.wends[:0], sc.wbytes[:0], sc.bends[:0], sc.stop[:0]
}

// add counts the feature of hash h, found with weight w (the weight of
// its first finding is kept).
func (sc *localScratch) add(h uint64, w float64) {
	if i, ok := sc.at[h]; ok {
		sc.feats[i].n++
		return
	}
	sc.at[h] = int32(len(sc.feats))
	sc.feats = append(sc.feats, localFeat{h: h, w: w, n: 1})
}

const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

func fnvByte(h uint64, b byte) uint64 { return (h ^ uint64(b)) * fnvPrime }

func fnvBytes(h uint64, b []byte) uint64 {
	for _, c := range b {
		h = (h ^ uint64(c)) * fnvPrime
	}
	return h
}

// fnvRune hashes r's UTF-8 encoding, as string(r) encodes it.
func fnvRune(h uint64, r rune) uint64 {
	var b [utf8.UTFMax]byte
	return fnvBytes(h, b[:utf8.EncodeRune(b[:], r)])
}

func (sc *localScratch) flushWord() {
	if len(sc.word) == 0 {
		return
	}
	sc.wrunes = append(sc.wrunes, sc.word...)
	sc.wends = append(sc.wends, len(sc.wrunes))
	start := len(sc.wbytes)
	for _, r := range sc.word {
		sc.wbytes = utf8.AppendRune(sc.wbytes, r)
	}
	sc.bends = append(sc.bends, len(sc.wbytes))
	sc.stop = append(sc.stop, lexical.IsStopWordBytes(sc.wbytes[start:]))
	sc.word = sc.word[:0]
}

func (sc *localScratch) flushCJK() {
	for i, r := range sc.cjk {
		sc.add(fnvRune(fnvByte(fnvOffset, 'u'), r), cjkWeight(r))
		if i > 0 {
			h := fnvRune(fnvRune(fnvByte(fnvOffset, 'b'), sc.cjk[i-1]), r)
			sc.add(h, 1.5*math.Min(cjkWeight(sc.cjk[i-1]), cjkWeight(r)))
		}
	}
	sc.cjk = sc.cjk[:0]
}

func (sc *localScratch) flushWords() {
	sc.flushWord()
	rstart, bstart := 0, 0
	for i, rend := range sc.wends {
		w := sc.wbytes[bstart:sc.bends[i]]
		wt := 1.0
		if sc.stop[i] {
			wt = 0.2
		}
		sc.add(fnvBytes(fnvByte(fnvOffset, 'w'), w), wt)
		if i > 0 && !sc.stop[i] && !sc.stop[i-1] {
			pstart := 0
			if i > 1 {
				pstart = sc.bends[i-2]
			}
			h := fnvBytes(fnvByte(fnvOffset, 'p'), sc.wbytes[pstart:bstart])
			sc.add(fnvBytes(fnvByte(h, ' '), w), 1.5)
		}
		// The character trigrams of " " + w + " ".
		rs := sc.wrunes[rstart:rend]
		at := func(j int) rune {
			if j == 0 || j == len(rs)+1 {
				return ' '
			}
			return rs[j-1]
		}
		for j := 0; j+3 <= len(rs)+2; j++ {
			sc.add(fnvRune(fnvRune(fnvRune(fnvByte(fnvOffset, 't'), at(j)), at(j+1)), at(j+2)), 0.3*wt)
		}
		rstart, bstart = rend, sc.bends[i]
	}
	sc.wrunes, sc.wends, sc.wbytes, sc.bends, sc.stop = sc.wrunes[:0], sc.wends[:0], sc.wbytes[:0], sc.bends[:0], sc.stop[:0]
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
