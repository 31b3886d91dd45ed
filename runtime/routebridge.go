package runtime

import (
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/vibelife/vibe/skills"
)

// Routing across languages. The router (skills.Set.Route) matches a
// message's words against a skill's vocabulary: its glossary's terms and
// names (renderings, pinyin), its rules, its headings. A question in
// another language than the sources names a term in translation, and the
// router knows only the renderings the glossary lists: "What is the Yang
// Blade, and what should restrain it?" shares no word with a bazi skill
// built offline, whose glossary gives 阳刃 no English name. The search
// bridge (Glossary.Terms, what search_knowledge carries a question over
// by) composes the term from the characters' words ("yang" 阳, "blade"
// 刃) and finds it; the router is told the same, so that a question naming
// a term of a skill in any language is never turned away (issue 28).
//
// Only whole terms named surely enough count, each a term of two
// characters at least (of a Chinese skill), named by two words of the
// question at least (or by its pinyin written as one word, "Shaoyin",
// when that is no English word: joinedPinyin), never a single character a
// word is carried over as
// (one word glosses too many characters: "father" 父, "good" 吉, "day"
// 日):
//   - by one of the entry's own names (its pinyin "kui gang", a rendering),
//     in any inflection;
//   - by the characters' words, one a character, when one of them is a
//     character's pinyin ("Yang Blade" 阳刃, "Tai Ji" 太极, "Jia wood" 甲木);
//   - by English words alone only when each is one of its character's
//     first glosses whole (the words a question's word is carried over as
//     a character by, Glossary.charOf) and none is a particle: "four
//     pillars" is 四柱, "day master" 日主 and "seven killings" 七杀, but
//     "How big is the sun?" is not 太阳 (big is 太's fourth sense), "a big
//     tree" not 大枣 (枣 is "date tree"), "time off" not 时断.
//
// Everyday English ("a good gift for my father", the weather, greetings)
// names none.
const (
	// minBridgedWords is how many of the question's words must name a
	// term for it to count as routing evidence.
	minBridgedWords = 2
	// minBridgedRunes is how many characters a term of a Chinese skill
	// must have to count.
	minBridgedRunes = 2
)

// bridgeParticles are English words that gloss a character only as the
// particle of a phrasal verb ("cut off" 断, "go up" 上): a question's
// "time off" or "get up" names no term by them.
var bridgeParticles = map[string]bool{
	"off": true, "up": true, "out": true, "down": true, "over": true, "away": true, "back": true,
	"in": true, "on": true, "into": true, "onto": true, "upon": true, "through": true, "around": true,
}

// bridgedNames returns the terms of g that msg, written in another
// language than the sources (lang), names surely enough to route by (see
// above): of the entries the search bridge names (Glossary.Terms), those
// named by at least minBridgedWords words of the question, each a term of
// at least minBridgedRunes characters when the sources are Chinese.
// Entries naming one of omit (the skill's name and theme) are left out, as
// the bridge leaves them out.
func bridgedNames(g *Glossary, msg, lang string, omit ...string) []string {
	if g.Len() == 0 {
		return nil
	}
	tokens := phraseTokens(msg)
	forms := matchForms(tokens)
	var out []string
	g.terms(msg, lang, func(s namedSpan) {
		t := s.entry.Term
		if slices.Contains(out, t) || s.start+s.words > len(tokens) {
			return
		}
		if s.words < minBridgedWords && !g.joinedPinyin(s.entry, tokens[s.start]) {
			return
		}
		if lang == langZH && (!isHanOnly(t) || utf8.RuneCountInString(t) < minBridgedRunes) {
			return
		}
		span := forms[s.start : s.start+s.words]
		if !slices.ContainsFunc(s.entry.forms, func(f []string) bool { return equalTokens(f, span) }) &&
			lang == langZH && s.words == utf8.RuneCountInString(t) && !g.surelyComposed(tokens[s.start:s.start+s.words], []rune(t)) {
			return
		}
		out = append(out, t)
	}, omit...)
	return out
}

// minJoinedPinyin is the shortest pinyin written as one word that names a
// term alone (joinedPinyin): shorter ones are English words too often
// ("fare" is 发热's).
const minJoinedPinyin = 6

// joinedPinyin reports whether the word is the entry's pinyin written as
// one word, of two syllables at least and minJoinedPinyin letters
// ("shaoyin" 少阴, "kuigang" 魁罡), and no English word the characters'
// glosses hold: a word an English sentence does not hold by chance.
func (g *Glossary) joinedPinyin(e *glossEntry, w string) bool {
	if utf8.RuneCountInString(e.Term) < minBridgedRunes || !isHanOnly(e.Term) || len(w) < minJoinedPinyin || g.charWords[charStem(w)] != nil {
		return false
	}
	for _, p := range e.Pinyin {
		if p = strings.ToLower(skills.FoldMarks(strings.TrimSpace(p))); p == w && !strings.Contains(p, " ") {
			return true
		}
	}
	return false
}

// surelyComposed reports whether the words name the term's characters,
// one word a character (Glossary.composedAt), surely enough to route by:
// one of them is its character's pinyin, or each is one of its character's
// first glosses whole (charOf: "day" 日, "master" 主, not "tree" of 枣's
// "date tree") and no particle.
func (g *Glossary) surelyComposed(words []string, term []rune) bool {
	first := true
	for i, r := range term {
		w := charStem(words[i])
		r = foldVariant(r)
		if g.charPinyin[w][r] {
			return true
		}
		if !slices.Contains(g.charOf[w], r) || bridgeParticles[words[i]] {
			first = false
		}
	}
	return first
}

// routeCandidates returns the router's candidates for msg
// (skills.Set.Route), each installed skill whose sources are written in
// another language than msg given the terms the bridge finds msg to name
// in its glossary (Candidate.Bridged; bridgedNames, or for a Chinese
// message over English sources reverseNames), a skill the router
// left out joining the candidates with no score. skills.Pick chooses
// among them as skills.Set.Match does among the router's own.
func (a *Agent) routeCandidates(msg string) []skills.Candidate {
	cs := a.cfg.Skills.Route(msg)
	ql := QueryLanguage(msg)
	// A Chinese question over English sources is carried over by its
	// characters' glosses (reverseNames), counted only when the router's
	// own candidates neither fit nor name a term of theirs; cut once, when
	// an English skill is met (the user's dictionary is read on its first
	// lookup).
	reverse := ql == langZH && !anyFits(cs) && len(skills.Named(cs)) == 0
	var units []reverseUnit
	for _, h := range a.cfg.Skills.Headers() {
		sk, err := a.cfg.Skills.Get(h.Name)
		if err != nil {
			continue
		}
		lang := a.themeLanguage(sk, msg)
		if lang == "" || lang == ql {
			continue
		}
		idx, err := a.rules.get(sk)
		if err != nil {
			continue
		}
		terms := bridgedNames(idx.glossary, msg, lang, sk.Name, sk.Theme)
		if len(terms) == 0 && reverse && lang == langEN {
			if units == nil {
				units = reverseUnits(msg, a.cfg.Dictionary)
			}
			if terms = idx.glossary.reverseNames(units, sk.Name, sk.Theme); !a.reverseHeld(sk, terms) {
				terms = nil
			}
		}
		if len(terms) == 0 {
			continue
		}
		i := slices.IndexFunc(cs, func(c skills.Candidate) bool { return c.Name == h.Name })
		if i < 0 {
			cs = append(cs, skills.Candidate{Name: h.Name})
			i = len(cs) - 1
		}
		cs[i].Bridged = terms
	}
	return cs
}
