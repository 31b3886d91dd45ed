package lexical

import (
	"strings"
	"unicode"

	"github.com/vibelife/vibe/chunk"
)

// MaxQueryTokens bounds the distinct tokens a query contributes, so a 100 KB
// query stays cheap.
const MaxQueryTokens = 256

// isCJK reports whether r is written without spaces between words.
func isCJK(r rune) bool {
	if r < 0x1100 { // below Hangul Jamo, the first of the four scripts
		return false
	}
	if 0x4E00 <= r && r <= 0x9FFF { // CJK Unified Ideographs, most of it
		return true
	}
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul)
}

// Tokens splits text into index tokens, in order, with repeats. Han
// characters are folded to one form (see [Folder]), so traditional and
// simplified spellings and variants such as 杀/煞 give the same tokens.
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
			cjk = append(cjk, defaultFolder.Rune(r))
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			flushCJK()
			word = append(word, unicode.ToLower(r))
			if len(word) > MaxWordRunes { // a gigantic "word" is junk; cut it
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

// IndexChunk is the token string stored in the lexical index for a chunk:
// [ChunkTokens] joined by spaces.
func IndexChunk(c chunk.Chunk) string { return strings.Join(ChunkTokens(c), " ") }

// ChunkTokens are the index tokens of a chunk: the tokens of its document
// title and heading path, then those of its text. A passage deep in a
// section is found by the words of the section's title, which a reader's
// question often shares while the passage does not repeat them (measured
// in docs/retrieval.md).
func ChunkTokens(c chunk.Chunk) []string { return chunkTokens(c, "") }

// DocTokens are the index tokens of each of chunks, the chunks of one
// document in order: [ChunkTokens] with the chunk's subject
// ([chunk.Subjects]) after its heading path. A later chunk of a document
// without headings is found by the name its lead sentence gives, which a
// question uses while the chunk says 本鱼 or "it" (docs/retrieval.md).
func DocTokens(chunks []chunk.Chunk) [][]string {
	subj := chunk.Subjects(chunks)
	out := make([][]string, len(chunks))
	for i, c := range chunks {
		out[i] = chunkTokens(c, subj[i])
	}
	return out
}

func chunkTokens(c chunk.Chunk, subject string) []string {
	head := append([]string{c.Title}, c.HeadingPath...)
	if subject != "" {
		head = append(head, subject)
	}
	return append(Tokens(strings.Join(head, " ")), Tokens(c.Text)...)
}

// QueryTokens returns the distinct tokens of a query, in first-seen order,
// at most MaxQueryTokens of them, without Chinese question words and
// function characters or English function words (see [StripQueryWords]);
// a query made only of such words keeps them all. Tokens contain only
// letters and digits, so they are safe to quote in FTS5 and tsquery syntax.
func QueryTokens(text string) []string {
	out := distinct(Tokens(StripQueryWords(text)), true)
	if len(out) == 0 {
		out = distinct(Tokens(text), false)
	}
	return out
}

func distinct(toks []string, dropStop bool) []string {
	seen := map[string]bool{}
	var out []string
	for _, t := range toks {
		if seen[t] || dropStop && IsStopWord(t) {
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

// IsCJK reports whether r is a character [Tokens] cuts into unigrams and
// bigrams (Han, kana, Hangul).
func IsCJK(r rune) bool { return isCJK(r) }

// FoldRune is the folding [Tokens] applies to a CJK character (see
// [Folder]); other runes are returned unchanged.
func FoldRune(r rune) rune { return defaultFolder.Rune(r) }

// MaxWordRunes is the longest Latin or digit run [Tokens] keeps as one
// token; a longer run is cut after MaxWordRunes+1 runes.
const MaxWordRunes = 64
