package runtime

import (
	"strings"
	"unicode"

	"github.com/vibelife/vibe/internal/unihan"
	"github.com/vibelife/vibe/knowledge/lexical"
)

// The reverse bridge: a Chinese question over English sources, offline. No
// glossary of an English theme names its terms in Chinese, so the question
// shares no word with the books (开局应该先出马还是先出象 over a chess book).
// Its words are carried over to English: with the user's dictionary (CC-CEDICT,
// Config.Dictionary), each run of Han characters outside the question's
// frame (lexical.StripQueryWords) is cut into the longest words the
// dictionary holds (开局 "opening (chess etc)", 马 "knight in Western
// chess"); a character no word takes is carried over as the English words
// the built-in table of the characters' glosses (internal/unihan, the
// Unicode Han Database's kDefinition) gives it first (王 king, 角 horn,
// angle, corner). Of these, only the words of the theme's glossary are
// searched (knownWords: king, knight, opening), beside the question, as a
// model's rewrite would be: the other glosses of each character (开 open,
// initiate, begin; 局 bureau, office) outweighed the few that fit. Unihan
// defines characters, not words: without a dictionary 马 is "horse",
// never a chess book's Knight, and 象 is "elephant" either way. get_rules
// is not bridged so (getrules.go): a rule holding "king" is filler.
const (
	// bridgedByWords is Bridged.BridgedBy for a question carried over
	// word by word (reverseWords, knownWords).
	bridgedByWords = "words"
	// reverseGlosses is how many of a word's or a character's first
	// renderings are taken: later ones are rarer senses.
	reverseGlosses = 3
	// maxDictRunes is the longest word looked up in the dictionary.
	maxDictRunes = 4
	// maxReverseWords bounds the words a question is carried over as.
	maxReverseWords = 48
)

// reverseWords returns the English words a Chinese question is carried
// over as (see above): each once, in the question's order, the words of a
// question's frame (charStopWords) and of the lexical index's stop list
// left out; none for a question with no Han character either source
// glosses. dict is the user's dictionary (nil: the built-in table alone).
func reverseWords(q string, dict func(string) []string) []string {
	var out []string
	seen := map[string]bool{}
	add := func(renderings []string, whole bool) {
		for i, g := range renderings {
			if i == reverseGlosses {
				break
			}
			ws := strings.Fields(strings.ToLower(g))
			if whole && len(ws) != 1 {
				continue // a gloss of several words explains the character
			}
			for _, w := range ws {
				w = strings.TrimFunc(w, func(r rune) bool { return !unicode.IsLetter(r) })
				if w == "" || len(out) == maxReverseWords || charStopWords[w] || lexical.IsStopWord(w) || seen[w] {
					continue
				}
				seen[w] = true
				out = append(out, w)
			}
		}
	}
	var run []rune
	flush := func() {
		for i := 0; i < len(run); {
			n := 0
			if dict != nil {
				for k := min(maxDictRunes, len(run)-i); k >= 1; k-- {
					if rs := dict(string(run[i : i+k])); len(rs) > 0 {
						add(rs, false)
						n = k
						break
					}
				}
			}
			if n == 0 {
				add(unihan.Glosses(run[i]), true)
				n = 1
			}
			i += n
		}
		run = run[:0]
	}
	for _, r := range lexical.StripQueryWords(q) {
		if unicode.Is(unicode.Han, r) {
			run = append(run, r)
			continue
		}
		flush()
	}
	flush()
	return out
}

// knownWords returns those of words that are words of the glossary's
// names (in matchForm: "knight" is a word of "knights"), in their order:
// the theme's own words among the many a question's characters gloss.
func (g *Glossary) knownWords(words []string) []string {
	if g.Len() == 0 {
		return nil
	}
	known := map[string]bool{}
	for _, e := range g.entries {
		for _, f := range e.forms {
			for _, w := range f {
				known[w] = true
			}
		}
	}
	var out []string
	for _, w := range words {
		if known[matchForm(w)] {
			out = append(out, w)
		}
	}
	return out
}
