package testcorpus

import (
	"math/rand/v2"
	"unicode"
)

// lookalikes are Chinese characters OCR confuses with one another.
var lookalikes = map[rune]rune{
	'天': '夭', '己': '已', '已': '己', '日': '曰', '未': '末', '末': '未', '土': '士', '人': '入',
	'大': '太', '干': '千', '午': '牛', '戊': '戌', '戌': '戊', '木': '本', '王': '玉', '子': '孑',
	'辛': '幸', '申': '由', '甲': '申', '丙': '两', '壬': '王', '官': '宫', '印': '卬', '财': '则',
}

// Corrupt makes a damaged edition of a Chinese text, as a bad scan and a
// careless copy would: of its Han characters, about 3% read as look-alikes
// (where one is known), 1% swapped with their neighbour, 0.5% followed by a
// stray Latin l and 0.3% by a bar; and only the first keep share of the text
// is left. The same seed gives the same edition.
func Corrupt(text string, seed uint64, keep float64) string {
	rng := rand.New(rand.NewPCG(seed, 1))
	r := []rune(text)
	r = r[:int(float64(len(r))*keep)]
	han := func(c rune) bool { return unicode.Is(unicode.Han, c) }
	out := make([]rune, 0, len(r)+len(r)/50)
	for i := 0; i < len(r); i++ {
		c := r[i]
		if !han(c) {
			out = append(out, c)
			continue
		}
		switch x := rng.Float64(); {
		case x < 0.03:
			if l, ok := lookalikes[c]; ok {
				c = l
			}
		case x < 0.04 && i+1 < len(r) && han(r[i+1]):
			out = append(out, r[i+1], c)
			i++
			continue
		case x < 0.045:
			out = append(out, c, 'l')
			continue
		case x < 0.048:
			out = append(out, c, '|')
			continue
		}
		out = append(out, c)
	}
	return string(out)
}
