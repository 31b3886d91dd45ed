package lexical

import (
	"strings"
	"unicode"
)

// MaxQueryTokens bounds the distinct tokens a query contributes, so a 100 KB
// query stays cheap.
const MaxQueryTokens = 256

// isCJK reports whether r is written without spaces between words.
func isCJK(r rune) bool {
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul)
}

// Tokens splits text into index tokens, in order, with repeats.
func Tokens(text string) []string {
	var out []string
	var word []rune
	var cjk []rune
	flushWord := func() {
		if len(word) > 0 {
			out = append(out, strings.ToLower(string(word)))
			word = word[:0]
		}
	}
	flushCJK := func() {
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
		case isCJK(r):
			flushWord()
			cjk = append(cjk, r)
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			flushCJK()
			word = append(word, unicode.ToLower(r))
			if len(word) > 64 { // a gigantic "word" is junk; cut it
				flushWord()
			}
		default:
			flushWord()
			flushCJK()
		}
	}
	flushWord()
	flushCJK()
	return out
}

// IndexText is the space-joined token string stored in the lexical index.
func IndexText(text string) string { return strings.Join(Tokens(text), " ") }

// QueryTokens returns the distinct tokens of a query, in first-seen order,
// at most MaxQueryTokens of them. Tokens contain only letters and digits, so
// they are safe to quote in FTS5 and tsquery syntax.
func QueryTokens(text string) []string {
	seen := map[string]bool{}
	var out []string
	for _, t := range Tokens(text) {
		if seen[t] {
			continue
		}
		seen[t] = true
		out = append(out, t)
		if len(out) == MaxQueryTokens {
			break
		}
	}
	return out
}
