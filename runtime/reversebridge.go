package runtime

import (
	"context"
	"slices"
	"strings"
	"unicode"

	"github.com/vibelife/vibe/internal/unihan"
	"github.com/vibelife/vibe/knowledge"
	"github.com/vibelife/vibe/knowledge/lexical"
	"github.com/vibelife/vibe/skills"
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
	for _, u := range reverseUnits(q, dict) {
		for _, w := range u.words() {
			if len(out) == maxReverseWords || seen[w] {
				continue
			}
			seen[w] = true
			out = append(out, w)
		}
	}
	return out
}

// reverseUnit is one piece a Chinese question is cut into by the reverse
// bridge: a word of the user's dictionary, or a character no word takes,
// with the English renderings the dictionary or the built-in table gives it
// (whole: the built-in table's, of which only glosses of one word are
// taken, one of several words explaining the character).
type reverseUnit struct {
	renderings []string
	whole      bool
	// runes is the number of characters the unit holds.
	runes int
}

// words returns the words the unit is carried over as: of its first
// reverseGlosses renderings, the words outside a question's frame
// (charStopWords) and the lexical index's stop list.
func (u reverseUnit) words() []string {
	var out []string
	for i, g := range u.renderings {
		if i == reverseGlosses {
			break
		}
		ws := strings.Fields(strings.ToLower(g))
		if u.whole && len(ws) != 1 {
			continue // a gloss of several words explains the character
		}
		for _, w := range ws {
			w = strings.TrimFunc(w, func(r rune) bool { return !unicode.IsLetter(r) })
			if w == "" || charStopWords[w] || lexical.IsStopWord(w) {
				continue
			}
			out = append(out, w)
		}
	}
	return out
}

// reverseUnits cuts the runs of Han characters of q outside its frame
// (lexical.StripQueryWords) into the longest words dict holds, a character
// no word takes standing alone with the built-in table's glosses.
func reverseUnits(q string, dict func(string) []string) []reverseUnit {
	var out []reverseUnit
	var run []rune
	flush := func() {
		for i := 0; i < len(run); {
			n := 0
			if dict != nil {
				for k := min(maxDictRunes, len(run)-i); k >= 1; k-- {
					if rs := dict(string(run[i : i+k])); len(rs) > 0 {
						out = append(out, reverseUnit{renderings: rs, runes: k})
						n = k
						break
					}
				}
			}
			if n == 0 {
				out = append(out, reverseUnit{renderings: unihan.Glosses(run[i]), whole: true, runes: 1})
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

// nameWords is the set of the words of the glossary's names, in matchForm.
func (g *Glossary) nameWords() map[string]bool {
	known := map[string]bool{}
	for _, e := range g.entries {
		for _, f := range e.forms {
			for _, w := range f {
				known[w] = true
			}
		}
	}
	return known
}

// knownWords returns those of words that are words of the glossary's
// names (in matchForm: "knight" is a word of "knights"), in their order:
// the theme's own words among the many a question's characters gloss.
func (g *Glossary) knownWords(words []string) []string {
	if g.Len() == 0 {
		return nil
	}
	known := g.nameWords()
	var out []string
	for _, w := range words {
		if known[matchForm(w)] {
			out = append(out, w)
		}
	}
	return out
}

// Routing a Chinese question to a skill whose sources are English. The
// router (skills.Set.Route) matches a message's words against a skill's
// vocabulary, which for English sources holds no Chinese, and
// routeCandidates asked only the forward bridge (bridgedNames), which
// carries English words to Chinese terms: offline, every Chinese question
// over the blind chess books went to no skill. The reverse bridge's units
// (reverseUnits) are now the router's evidence (Candidate.Bridged), and,
// since a character's gloss is a common English word more often than a
// term of the field ("king" of 王 in 王先生, "queen" of 后 in 三日后, "open"
// of 开 in 开车), only when they say enough (reverseNames):
//   - the skill's name, outright: a character of the question, or a word
//     of the user's dictionary, means it and nothing else (each of its
//     first renderings holds the name: 棋 "chess; any game similar to
//     chess"; 法 "law, rule, code, model" names no skill called law, being
//     the 法 of 办法 and 方法 too); or two units of the question have a
//     sense the dictionary labels with the name (开局 "opening (chess
//     etc)", 马 "knight in Western chess", a rendering of several words
//     holding it);
//   - or the glossary's words, said in several places of the question:
//     minReverseUnits units (characters, or words of the user's
//     dictionary) each gloss a word of the glossary's names no earlier
//     unit glossed, and one of them a whole term, or two do and one of
//     them is a word of the dictionary of two characters or more naming a
//     whole term. Such words are everyday English as often as not (白天开车
//     glosses white, open and direct of a chess glossary), so they count
//     only when the skill's sources hold two of them, rare there, in one
//     passage (reverseHeld), offline and in the model's advice alike, or
//     when a unit has a sense the
//     dictionary labels with the skill's name (马 "horse or cavalry piece
//     in Chinese chess", beside 王 king and 杀 attack).
//
// The caller (routeCandidates) counts it only when none of the router's own
// candidates fits or names a term: a Chinese question whose words a skill
// of Chinese sources knows is that skill's.
const minReverseUnits = 3

// reverseNames returns what the question cut into units (reverseUnits)
// names of an English glossary, when that is evidence enough to route by
// (see above): the skill's name alone, or the whole terms named and then
// the question's other words that are words of the glossary's names; nil
// when it is not enough. names are the skill's name and theme.
func (g *Glossary) reverseNames(units []reverseUnit, names ...string) []string {
	if name := namedOutright(units, names); name != "" {
		return []string{name}
	}
	if g.Len() == 0 {
		return nil
	}
	known := g.nameWords()      // the glossary's words
	said := map[string]string{} // a glossary word the question says -> the question's word
	var units1, strong int      // units saying a glossary word; of them, dictionary words naming a whole term
	var termUnits int           // units naming a whole term
	var terms, words []string
	termSets := map[string]bool{}
	for _, u := range units {
		// The glossary's words the unit says first: a character said
		// again (王 of 国王和王后) is no further evidence.
		var mine []string
		for _, w := range u.words() {
			for _, f := range matchForms(phraseTokens(w)) {
				if _, ok := said[f]; known[f] && !ok {
					said[f] = w
					words = append(words, w)
					mine = append(mine, f)
				}
			}
		}
		if len(mine) == 0 {
			continue
		}
		units1++
		named := false
		for _, e := range g.entries {
			for _, f := range e.forms {
				if len(f) == 0 || !slices.ContainsFunc(f, func(w string) bool { return slices.Contains(mine, w) }) {
					continue
				}
				if slices.ContainsFunc(f, func(w string) bool { _, ok := said[w]; return !ok }) {
					continue
				}
				named = true
				if set := strings.Join(sortedSet(f), " "); !termSets[set] {
					termSets[set] = true
					terms = append(terms, strings.ToLower(e.Term))
				}
			}
		}
		if named {
			termUnits++
			if u.runes >= 2 {
				strong++
			}
		}
	}
	if termUnits == 0 || units1 < minReverseUnits && (strong == 0 || units1 < 2) {
		return nil
	}
	out := terms
	if name := labelledBy(units, names); name != "" {
		// The dictionary says a word of the question is of the skill's
		// field: the skill's name first, and no need to ask its sources
		// (reverseHeld).
		out = append([]string{name}, slices.DeleteFunc(terms, func(t string) bool { return strings.EqualFold(t, name) })...)
	}
	for _, w := range words {
		if !slices.ContainsFunc(out, func(t string) bool {
			return slices.Contains(matchForms(phraseTokens(t)), matchForm(w))
		}) {
			out = append(out, w)
		}
	}
	return out
}

// sortedSet returns the distinct strings of s, sorted.
func sortedSet(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return slices.Compact(out)
}

// namedOutright returns the first of names (a skill's name and theme) that
// the question names outright (reverseNames): each of the name's words is
// meant by a unit of the question, every one of whose first reverseGlosses
// renderings holds it (棋), or is the label of a sense the user's
// dictionary gives two units of it (labelled: 开局 "opening (chess etc)"
// and 马 "knight in Western chess"); "" when none.
func namedOutright(units []reverseUnit, names []string) string {
	for _, name := range names {
		ws := letterWords(name)
		if len(ws) == 0 {
			continue
		}
		named := 0
		for _, w := range ws {
			labels := 0
			for _, u := range units {
				if u.labelled(w) {
					labels++
				}
			}
			if labels >= 2 || slices.ContainsFunc(units, func(u reverseUnit) bool { return u.means(w) }) {
				named++
			}
		}
		if named == len(ws) {
			return name
		}
	}
	return ""
}

// labelledBy returns the first of names (a skill's name and theme) whose
// words label a sense the user's dictionary gives a unit of the question
// (labelled), "" when none.
func labelledBy(units []reverseUnit, names []string) string {
	for _, name := range names {
		ws := letterWords(name)
		if len(ws) > 0 && slices.ContainsFunc(units, func(u reverseUnit) bool {
			return !slices.ContainsFunc(ws, func(w string) bool { return !u.labelled(w) })
		}) {
			return name
		}
	}
	return ""
}

// labelled reports whether one of the unit's first reverseGlosses
// renderings, from the user's dictionary, holds the word w among others: a
// sense of the field w names ("knight in Western chess", "opening (chess
// etc)", "rook (in chess)"), where a rendering that is the word alone (法
// "law") is the word's everyday sense.
func (u reverseUnit) labelled(w string) bool {
	if u.whole {
		return false
	}
	for i, r := range u.renderings {
		if i == reverseGlosses {
			break
		}
		if ws := letterWords(r); len(ws) > 1 && slices.Contains(ws, w) {
			return true
		}
	}
	return false
}

// means reports whether each of the unit's first reverseGlosses renderings
// holds the word w.
func (u reverseUnit) means(w string) bool {
	n := 0
	for i, r := range u.renderings {
		if i == reverseGlosses {
			break
		}
		if !slices.Contains(letterWords(r), w) {
			return false
		}
		n++
	}
	return n > 0
}

// letterWords returns the lower-cased words of letters of s, the lexical
// index's stop words and words of a question's frame left out: "travel"
// and "leave" of travel-leave, "chess" and "game" of "chess-like game".
func letterWords(s string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) }) {
		if len(w) > 2 && !charStopWords[w] && !lexical.IsStopWord(w) {
			out = append(out, w)
		}
	}
	return out
}

// reverseHeld reports whether the reverse bridge's evidence for a skill
// (reverseNames' terms) holds: always when the skill's name comes first
// (named outright, or labelling a sense the user's dictionary gives a word
// of the question); else only when one passage of the skill's sources
// holds minEvidenceTerms of those words that are rare there (evidenceIn:
// held by at most rareShare of its chunks), as a question about the books
// would find them. 白天开车要注意什么安全问题 glosses white, open and direct of
// the blind chess glossary, and its best passage holds only "direct" of
// them rare. So does the castling question (王车易位…: king, position,
// pass, control), whose best passage holds "pass" alone: the sources cannot
// tell it from everyday words. A store that cannot count terms
// (knowledge.TermCounter) holds none. The router's candidates carry only
// evidence that holds, offline and as the model's advice alike; the
// lexical search is one of evidenceK passages, asked only for a Chinese
// message no candidate fits whose characters gloss words of an English
// skill's glossary in three places.
func (a *Agent) reverseHeld(sk *skills.Skill, terms []string) bool {
	if len(terms) == 0 {
		return false
	}
	if strings.EqualFold(terms[0], sk.Name) || strings.EqualFold(terms[0], sk.Theme) {
		return true
	}
	tc, ok := a.cfg.Searcher.(knowledge.TermCounter)
	if !ok || a.cfg.Searcher == nil {
		return false
	}
	theme := sk.Theme
	if theme == "" {
		theme = sk.Name
	}
	text := strings.Join(terms, " ")
	// routeCandidates is asked where no request context reaches (the
	// prompt, a tool's description); the search is local and bounded.
	e, err := evidenceIn(context.Background(), a.cfg.Searcher, tc, theme, text, lexical.QueryTokens(text))
	return err == nil && len(e.Terms) >= minEvidenceTerms
}
