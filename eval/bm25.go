package eval

import (
	"context"
	"math"
	"sort"
	"strings"
	"unicode"

	"github.com/vibelife/vibe/chunk"
)

// BM25 is the reference lexical engine retrieval is compared against: Okapi
// BM25 over the chunks' text, as a public benchmark's baseline would run it.
// It is part of the measurement, not of the product, and deliberately has
// its own tokenizer (BM25Tokens) so that changes to the product's lexical
// side cannot move the baseline.
//
// Scoring: for each distinct query token t present in chunk d,
// idf(t) * tf*(k1+1) / (tf + k1*(1-b+b*|d|/avgdl)), with
// idf(t) = ln(1 + (N-df+0.5)/(df+0.5)) (the Lucene form, never negative),
// k1 = 1.2, b = 0.75. Ties break by chunk order.
type BM25 struct {
	K1, B    float64
	chunks   []chunk.Chunk
	postings map[string][]posting
	lengths  []int
	avgLen   float64
}

type posting struct {
	doc, tf int
}

// NewBM25 indexes chunks.
func NewBM25(chunks []chunk.Chunk) *BM25 {
	b := &BM25{K1: 1.2, B: 0.75, chunks: chunks, postings: map[string][]posting{}, lengths: make([]int, len(chunks))}
	total := 0
	for i, c := range chunks {
		tf := map[string]int{}
		toks := BM25Tokens(c.Text)
		for _, t := range toks {
			tf[t]++
		}
		for t, n := range tf {
			b.postings[t] = append(b.postings[t], posting{i, n})
		}
		b.lengths[i] = len(toks)
		total += len(toks)
	}
	if len(chunks) > 0 {
		b.avgLen = float64(total) / float64(len(chunks))
	}
	return b
}

// Search implements Searcher.
func (b *BM25) Search(_ context.Context, query string, k int) ([]chunk.Chunk, error) {
	scores := b.scores(query)
	ids := make([]int, 0, len(scores))
	for d := range scores {
		ids = append(ids, d)
	}
	sort.Slice(ids, func(i, j int) bool {
		if scores[ids[i]] != scores[ids[j]] {
			return scores[ids[i]] > scores[ids[j]]
		}
		return ids[i] < ids[j]
	})
	if len(ids) > k {
		ids = ids[:k]
	}
	out := make([]chunk.Chunk, len(ids))
	for i, d := range ids {
		out[i] = b.chunks[d]
	}
	return out, nil
}

// scores returns the BM25 score of every chunk matching a query token, by
// chunk index.
func (b *BM25) scores(query string) map[int]float64 {
	scores := map[int]float64{}
	n := float64(len(b.chunks))
	seen := map[string]bool{}
	for _, t := range BM25Tokens(query) {
		if seen[t] {
			continue
		}
		seen[t] = true
		ps := b.postings[t]
		if len(ps) == 0 {
			continue
		}
		df := float64(len(ps))
		idf := math.Log(1 + (n-df+0.5)/(df+0.5))
		for _, p := range ps {
			tf := float64(p.tf)
			norm := b.K1 * (1 - b.B + b.B*float64(b.lengths[p.doc])/b.avgLen)
			scores[p.doc] += idf * tf * (b.K1 + 1) / (tf + norm)
		}
	}
	return scores
}

// BM25Tokens is the baseline's tokenizer: Han (and kana, hangul) runs become
// character unigrams and bigrams, runs of letters and digits lower-cased
// words; everything else separates tokens.
func BM25Tokens(text string) []string {
	var out []string
	var word strings.Builder
	var cjk []rune
	flush := func() {
		if word.Len() > 0 {
			out = append(out, word.String())
			word.Reset()
		}
		for i, r := range cjk {
			out = append(out, string(r))
			if i+1 < len(cjk) {
				out = append(out, string(cjk[i:i+2]))
			}
		}
		cjk = cjk[:0]
	}
	for _, r := range text {
		switch {
		case unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul):
			if word.Len() > 0 {
				flush()
			}
			cjk = append(cjk, r)
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			if len(cjk) > 0 {
				flush()
			}
			word.WriteRune(unicode.ToLower(r))
		default:
			flush()
		}
	}
	flush()
	return out
}
