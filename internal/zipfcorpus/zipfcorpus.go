// Package zipfcorpus generates the synthetic text the search benchmarks
// index (knowledge/storetest's corpus and bench/searchbench's books): a
// fixed vocabulary drawn in Zipf order, with topic words mixed in. It has no
// test dependencies, so a benchmark command can use it.
package zipfcorpus

import (
	"math/rand/v2"
	"strings"
)

// Vocab returns the fixed vocabulary of size words (the same on every
// call): four words in five are 1-3 Han characters of the commonest block
// of CJK ideographs, the rest 3-10 Latin letters, in a random rank order.
func Vocab(size int) []string {
	r := rand.New(rand.NewPCG(20240601, 3))
	seen := map[string]bool{}
	var out []string
	for len(out) < size {
		var b strings.Builder
		if r.IntN(5) < 4 {
			for n := 1 + r.IntN(3); n > 0; n-- {
				b.WriteRune(rune(0x4E00 + r.IntN(3500)))
			}
		} else {
			for n := 3 + r.IntN(8); n > 0; n-- {
				b.WriteByte(byte('a' + r.IntN(26)))
			}
		}
		if w := b.String(); !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	return out
}

// Text writes about size characters of words drawn from vocab by z, each
// replaced by one of topic's with probability mix: CJK words run together,
// Latin words spaced, a comma every six words and a full stop every
// seventeen.
func Text(r *rand.Rand, z *rand.Zipf, vocab, topic []string, mix float64, size int) string {
	var b strings.Builder
	chars, words := 0, 0
	prevLatin := false
	for chars < size {
		w := vocab[z.Uint64()]
		if len(topic) > 0 && r.Float64() < mix {
			w = topic[r.IntN(len(topic))]
		}
		latin := w[0] < 0x80
		if latin && (prevLatin || b.Len() > 0) {
			b.WriteByte(' ')
		}
		b.WriteString(w)
		prevLatin = latin
		chars += len([]rune(w))
		words++
		switch {
		case words%17 == 0:
			b.WriteString("。")
			prevLatin = false
		case words%6 == 0:
			b.WriteString("，")
			prevLatin = false
		}
	}
	return b.String()
}
