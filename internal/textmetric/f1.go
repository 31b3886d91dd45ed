// Package textmetric measures how close two texts are, for the conversion
// fidelity tests and benchmarks.
package textmetric

import (
	"strings"
	"unicode"
)

// Tokens splits text the way the fidelity measure counts it: each CJK
// character (Han, Hiragana, Katakana, Hangul) is a token, and runs of other
// letters and digits are lower-cased word tokens. Punctuation, symbols,
// Markdown syntax and white space are not tokens.
func Tokens(text string) []string {
	var out []string
	var word strings.Builder
	flush := func() {
		if word.Len() > 0 {
			out = append(out, strings.ToLower(word.String()))
			word.Reset()
		}
	}
	for _, r := range text {
		switch {
		case IsCJK(r):
			flush()
			out = append(out, string(r))
		case unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r):
			word.WriteRune(r)
		default:
			flush()
		}
	}
	flush()
	return out
}

// IsCJK reports whether r is a CJK ideograph or kana/hangul syllable.
func IsCJK(r rune) bool {
	return unicode.Is(unicode.Han, r) || unicode.Is(unicode.Hiragana, r) ||
		unicode.Is(unicode.Katakana, r) || unicode.Is(unicode.Hangul, r)
}

// F1 is the token F1 of got against want: the harmonic mean of precision and
// recall over the multisets of [Tokens]. Two empty texts score 1.
func F1(got, want string) (f1, precision, recall float64) {
	g, w := Tokens(got), Tokens(want)
	if len(g) == 0 && len(w) == 0 {
		return 1, 1, 1
	}
	if len(g) == 0 || len(w) == 0 {
		return 0, 0, 0
	}
	counts := make(map[string]int, len(w))
	for _, t := range w {
		counts[t]++
	}
	common := 0
	for _, t := range g {
		if counts[t] > 0 {
			counts[t]--
			common++
		}
	}
	if common == 0 {
		return 0, 0, 0
	}
	precision = float64(common) / float64(len(g))
	recall = float64(common) / float64(len(w))
	return 2 * precision * recall / (precision + recall), precision, recall
}
