package skills

import (
	"fmt"
	"io/fs"
	"math"
	"slices"
	"sort"
	"strings"
	"sync"
	"unicode"

	"github.com/vibelife/vibe/internal/unihan"

	"golang.org/x/text/unicode/norm"
	"gopkg.in/yaml.v3"
)

// GlossaryPath is the skill file holding the theme's term table: each term
// of the sources with the other ways users write it (synonyms, variant
// spellings, its renderings in another language, its pinyin), so that a
// question in the user's own words reaches the skill. `vibe integrate`
// builds it from the sources and the extracted knowledge and lays the
// theme's hand-kept knowledge/<theme>/glossary.yaml over it (docs/glossary.md).
const GlossaryPath = "knowledge/glossary.yaml"

// Where a glossary entry comes from ([GlossaryTerm.From]).
const (
	// FromHand is an entry of the hand-kept knowledge/<theme>/glossary.yaml.
	FromHand = "hand"
	// FromModel is an entry the model wrote when the glossary was built.
	FromModel = "model"
	// FromMined is an entry mined offline from headings, pattern names
	// and rule conditions.
	FromMined = "mined"
)

// GlossaryTerm is one entry of a glossary: a term as the sources write it,
// its aliases (synonyms and variant spellings, or any other form a user
// writes), its renderings in English (the common translations), and its
// pinyin (with and without tones, spaced and joined).
type GlossaryTerm struct {
	Term    string   `yaml:"term" json:"term"`
	Aliases []string `yaml:"aliases,omitempty" json:"aliases,omitempty"`
	English []string `yaml:"english,omitempty" json:"english,omitempty"`
	Pinyin  []string `yaml:"pinyin,omitempty" json:"pinyin,omitempty"`
	// From says who wrote the entry: FromHand, FromModel, FromMined
	// (empty in a hand-written file).
	From string `yaml:"from,omitempty" json:"from,omitempty"`
}

// Names returns every way the entry is written: the term, then its
// aliases, English renderings and pinyin, each once (case-insensitive).
func (t GlossaryTerm) Names() []string {
	out := []string{t.Term}
	seen := map[string]bool{strings.ToLower(t.Term): true}
	for _, l := range [][]string{t.Aliases, t.English, t.Pinyin} {
		for _, n := range l {
			n = strings.TrimSpace(n)
			if k := strings.ToLower(n); n != "" && !seen[k] {
				seen[k] = true
				out = append(out, n)
			}
		}
	}
	return out
}

// Glossary is the content of knowledge/glossary.yaml.
type Glossary struct {
	Terms []GlossaryTerm `yaml:"terms" json:"terms"`
	// Characters gives, for the Han characters of the terms, the English
	// words and pinyin a question may name each by, from the user's
	// dictionary (docs/glossary.md): a term is named by as many
	// consecutive words, one per character ("seven killings" is 七杀).
	Characters map[string]GlossaryChar `yaml:"characters,omitempty" json:"characters,omitempty"`
}

// GlossaryChar is how a question may name one character of the terms: its
// English glosses, most common first, and its pinyin without tones.
type GlossaryChar struct {
	English []string `yaml:"english,omitempty" json:"english,omitempty"`
	Pinyin  []string `yaml:"pinyin,omitempty" json:"pinyin,omitempty"`
}

// ParseGlossary decodes and checks a glossary; where names the file in
// errors.
func ParseGlossary(b []byte, where string) (Glossary, error) {
	var g Glossary
	if err := yaml.Unmarshal(b, &g); err != nil {
		return g, fmt.Errorf("%s: %w (expected `terms:` with a list of {term, aliases, english, pinyin})", where, err)
	}
	for i, t := range g.Terms {
		if strings.TrimSpace(t.Term) == "" {
			return g, fmt.Errorf("%s: terms[%d]: term is empty; give the term as the sources write it", where, i)
		}
	}
	return g, nil
}

// Overlay returns g with over laid on it: an entry of over replaces the
// entry of g with the same term (over wins by term), the others of over
// follow g's in their order.
func (g Glossary) Overlay(over Glossary) Glossary {
	at := map[string]int{}
	out := Glossary{Terms: append([]GlossaryTerm(nil), g.Terms...), Characters: g.Characters}
	if len(over.Characters) > 0 {
		out.Characters = map[string]GlossaryChar{}
		for c, ws := range g.Characters {
			out.Characters[c] = ws
		}
		for c, ws := range over.Characters {
			out.Characters[c] = ws
		}
	}
	for i, t := range out.Terms {
		at[strings.TrimSpace(t.Term)] = i
	}
	for _, t := range over.Terms {
		k := strings.TrimSpace(t.Term)
		if i, ok := at[k]; ok {
			out.Terms[i] = t
			continue
		}
		at[k] = len(out.Terms)
		out.Terms = append(out.Terms, t)
	}
	return out
}

// Weights of the two kinds of vocabulary a skill is routed by: whole terms
// (triggers, glossary terms and aliases, pattern and protocol names) tell
// more than words of its prose (description, body, rules).
const (
	termWeight = 2.0
	textWeight = 1.0
	// matchedTermBonus is added, times the term's rarity among the skills,
	// for each term the question contains whole.
	matchedTermBonus = 1.0
)

// Routing thresholds: the best skill must reach minRouteScore (a term of
// its own, or two words of its prose) and cover
// minRouteCoverage of the question's content (minTermCoverage when the
// question holds one of its terms whole), else no skill fits.
const (
	minRouteScore    = 1.5
	minRouteCoverage = 0.2
	minTermCoverage  = 0.08
)

// vocabulary is what one skill is routed by.
type vocabulary struct {
	terms []term             // matched whole (as MatchTrigger does)
	seen  map[string]bool    // lower-cased terms already in terms
	gloss map[string]bool    // lower-cased names of the glossary's entries
	heads map[string]bool    // Han bigrams of the sources' headings
	feats map[string]float64 // feature -> weight
	// pinyin holds the features of the glossary's pinyin names that are
	// English words too (englishPinyin: "fare" of 发热) and no other word
	// of the skill's: they weigh as words of prose, and only next to a
	// term of the skill, unless the message writes them with tone marks.
	pinyin map[string]bool
}

// term is a whole term, parsed once for matching.
type term struct {
	text  string
	runs  []string // CJK runs, lower-cased
	words []string // other words, stemmed
	feats []string // its routing features
	// phrase: the words name the term only side by side, in order (a
	// glossary's spaced pinyin: "jin yao" 紧要 is not named by "Jin Gui
	// Yao Lue"). An English term's words may come in any order ("luck in
	// marriage" names "marriage luck").
	phrase bool
}

// matches reports whether the message, given lower-cased with its set of
// words and its words in order, holds the term (MatchTrigger's rule).
func (t term) matches(low string, words map[string]bool, seq []string) bool {
	for _, r := range t.runs {
		if !strings.Contains(low, r) {
			return false
		}
	}
	for _, w := range t.words {
		if !words[w] {
			return false
		}
	}
	if t.phrase && len(t.words) > 1 && !hasRun(seq, t.words) {
		return false
	}
	return len(t.runs)+len(t.words) > 0
}

// hasRun reports whether seq holds run as consecutive elements.
func hasRun(seq, run []string) bool {
	for i := 0; i+len(run) <= len(seq); i++ {
		if slices.Equal(seq[i:i+len(run)], run) {
			return true
		}
	}
	return false
}

// addTerm adds a whole term. A term of several English words ("marriage
// luck") lends its words only the weight of prose: they tell of the skill
// when they come together, which the whole-term bonus rewards.
func (v *vocabulary) addTerm(t string) { v.addTermBut(t, nil, false) }

// addTermBut adds a whole term, its features in skip left out of the
// skill's words (they are still the term's own, matched with the rest);
// a phrase's words name it only side by side (term.phrase).
func (v *vocabulary) addTermBut(t string, skip map[string]bool, phrase bool) {
	t = strings.TrimSpace(FoldMarks(t))
	if t == "" {
		return
	}
	runs, words := triggerParts(t)
	w := termWeight
	if len(runs) == 0 && len(words) > 1 {
		w = textWeight
	}
	for f := range features(t) {
		if !skip[f] && v.feats[f] < w {
			v.feats[f] = w
		}
	}
	lt := strings.ToLower(t)
	if v.seen[lt] || triggerSpecificity(t) < 2 {
		return // a single word or character is matched as a feature only
	}
	v.seen[lt] = true
	pt := term{text: t, runs: runs, words: words, phrase: phrase}
	for f := range features(t) {
		pt.feats = append(pt.feats, f)
	}
	v.terms = append(v.terms, pt)
}

// headingParticles are characters of a heading's frame, not its topic
// (如何, 之法, 所以): a bigram holding one names no section.
const headingParticles = "之乎者也而其以为于则乃所此彼若如何即亦又且皆必在与及或哉矣焉曰云故凡盖夫"

// Numbering in headings: a bigram of two numerals (十八), or of a numeral
// and a word that numbers a part (第一, 一卷, 卷上, 三篇), counts (一次,
// 三日) or measures (一斤, 三升, 五钱: a formula's line taken for a
// heading, "葵子（一斤）", which routed 一斤猪肉多少钱 to a book of
// formulas), numbers a heading and names no section. A numeral and a noun
// (十枣 of 十枣汤, 五苓, 四逆, 六合) does.
const (
	headingNumerals = "一二三四五六七八九十百千零〇两半"
	headingCounters = "第卷篇章节回部集编上中下次日月年天个斤升斗钱枚铢尺寸丈克"
)

// numbersHeading reports whether a Han bigram is a heading's numbering.
func numbersHeading(r []rune) bool {
	num := func(c rune) bool { return strings.ContainsRune(headingNumerals, c) }
	cnt := func(c rune) bool { return strings.ContainsRune(headingCounters, c) }
	return num(r[0]) && num(r[1]) || num(r[0]) && cnt(r[1]) || cnt(r[0]) && num(r[1]) || r[0] == '卷' && cnt(r[1])
}

// addHeading records the Han bigrams of a heading of the sources: a
// question holding one that no other skill knows names a section of this
// skill's books (肠痈 of 疮痈肠痈浸淫病脉证并治).
func (v *vocabulary) addHeading(h string) {
	for f := range features(h) {
		if r := []rune(f); len(r) == 2 && unicode.Is(unicode.Han, r[0]) && unicode.Is(unicode.Han, r[1]) &&
			!strings.ContainsRune(headingParticles, r[0]) && !strings.ContainsRune(headingParticles, r[1]) && !numbersHeading(r) {
			if v.heads == nil {
				v.heads = map[string]bool{}
			}
			v.heads[f] = true
		}
	}
}

func (v *vocabulary) addText(s string, w float64) {
	for f := range features(s) {
		if v.feats[f] < w {
			v.feats[f] = w
		}
	}
}

// skillVocabulary gathers a skill's routing vocabulary from its files: the
// front matter, the body, the protocols, the glossary, and the text of its
// knowledge files (rules' conditions and conclusions, pattern names and
// signatures, the sources' heading paths) and the sources' headings
// (ContentsPath), never their evidence quotes.
func skillVocabulary(sk *Skill) (*vocabulary, error) {
	v := &vocabulary{feats: map[string]float64{}, seen: map[string]bool{}, gloss: map[string]bool{}}
	v.addTerm(sk.Name)
	if sk.Theme != sk.Name {
		v.addTerm(sk.Theme)
	}
	for _, t := range sk.Triggers {
		v.addTerm(t)
	}
	v.addText(sk.Description, textWeight)
	v.addText(htmlComment.ReplaceAllString(sk.Body, ""), textWeight)
	for _, p := range sk.Protocols {
		v.addTerm(p.Name)
		for _, t := range p.Triggers {
			v.addTerm(t)
		}
	}
	var loose []string // the glossary's pinyin names that are English words too
	if b, err := fs.ReadFile(sk.fsys, GlossaryPath); err == nil {
		g, err := ParseGlossary(b, GlossaryPath)
		if err != nil {
			return nil, err
		}
		for _, t := range g.Terms {
			for _, n := range t.Names() {
				skip := englishPinyin(t, n)
				for f := range skip {
					loose = append(loose, f)
				}
				v.addTermBut(n, skip, slices.Contains(t.Pinyin, n))
				v.gloss[strings.ToLower(strings.TrimSpace(FoldMarks(n)))] = true
			}
		}
	}
	for _, f := range []string{"knowledge/rules.yaml", "knowledge/patterns.yaml", "knowledge/sop.yaml"} {
		b, err := fs.ReadFile(sk.fsys, f)
		if err != nil {
			continue
		}
		var doc any
		if err := yaml.Unmarshal(b, &doc); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		walkKnowledge(doc, "", v)
	}
	// The sources' headings say what the books are about, section by
	// section: words of the skill's prose.
	if b, err := fs.ReadFile(sk.fsys, ContentsPath); err == nil {
		c, err := ParseContents(b, ContentsPath)
		if err != nil {
			return nil, err
		}
		for _, d := range c.Documents {
			v.addText(d.Title, textWeight)
			for _, h := range d.Headings {
				v.addText(h, textWeight)
				v.addHeading(h)
			}
		}
	}
	// A pinyin name that is an English word ("fare" 发热) and no other
	// word of the skill's vocabulary weighs as a word of prose, and only
	// next to a term of the skill (router.route).
	for _, f := range loose {
		if v.feats[f] == 0 || v.pinyin[f] {
			if v.pinyin == nil {
				v.pinyin = map[string]bool{}
			}
			v.feats[f] = textWeight
			v.pinyin[f] = true
		}
	}
	return v, nil
}

// englishPinyin returns, when n is only a pinyin name of the entry, the
// features of its syllables (or of the word it is, joined) that are English
// words too once their tone marks are folded (EnglishWord): "fare" (发热),
// "ride" (日德), "mén" (门), the "hang" of "wu hang" (五行). An English
// question holds such a word by chance ("What is the bus fare to the
// airport?", "Why did she hang the picture?"), so it names the term no
// more surely than a word of the skill's prose does, and only next to a
// term of the skill, unless the question writes it with tone marks
// (router.route); spaced pinyin matched whole ("kui gang", "fa re") and
// joined pinyin no English word ("shaoyin") still name it.
func englishPinyin(t GlossaryTerm, n string) map[string]bool {
	n = FoldMarks(strings.TrimSpace(n))
	if n == "" || strings.ContainsFunc(n, func(r rune) bool { return r != ' ' && (r < 'A' || r > 'Z' && r < 'a' || r > 'z') }) {
		return nil
	}
	is := func(p string) bool { return strings.EqualFold(FoldMarks(strings.TrimSpace(p)), n) }
	if !slices.ContainsFunc(t.Pinyin, is) || is(t.Term) || slices.ContainsFunc(t.Aliases, is) || slices.ContainsFunc(t.English, is) {
		return nil
	}
	var out map[string]bool
	for f := range features(n) {
		if EnglishWord(f) {
			if out == nil {
				out = map[string]bool{}
			}
			out[f] = true
		}
	}
	return out
}

var (
	glossStemsOnce sync.Once
	glossStems     map[string]bool
)

// EnglishWord reports whether w is an English word: a word of the built-in
// table of the Han characters' English glosses (unihan.Words, some ten
// thousand everyday words: "fare", "ride", "men", "long") or of a word's
// stem there ("fares"). Case is ignored.
func EnglishWord(w string) bool {
	glossStemsOnce.Do(func() {
		glossStems = map[string]bool{}
		for g := range unihan.Words() {
			glossStems[stem(g)] = true
		}
	})
	w = strings.ToLower(w)
	return unihan.Words()[w] || glossStems[stem(w)]
}

// walkKnowledge adds the strings of a decoded knowledge file: names as
// terms, other prose as text; ids, evidence and quotes are left out (a
// quote is the source's wording, not the skill's topic), and so are the
// rules an offline build marks extra (knowledge.Rule.Extra: the rules past
// the core, one a chunk, which get_rules looks up but which do not say what
// the skill is about; integrate mines triggers and the glossary from the
// core alone too). Read, they made every skill's vocabulary share more
// words, which lowered the weight of the words that tell skills apart.
func walkKnowledge(x any, key string, v *vocabulary) {
	switch t := x.(type) {
	case map[string]any:
		if extra, _ := t["extra"].(bool); extra {
			return
		}
		for k, c := range t {
			switch k {
			case "evidence", "quote", "chunk", "id", "priority", "confidence", "tool", "next", "requires":
				continue
			}
			walkKnowledge(c, k, v)
		}
	case []any:
		for _, c := range t {
			walkKnowledge(c, key, v)
		}
	case string:
		if key == "name" {
			v.addTerm(t)
		} else {
			v.addText(t, textWeight)
		}
	}
}

// router scores a message against every loaded skill.
type router struct {
	names []string
	vocab map[string]*vocabulary
	df    map[string]int
}

func newRouter(m map[string]*Skill, onError func(name string, err error)) *router {
	r := &router{vocab: map[string]*vocabulary{}, df: map[string]int{}}
	for name, sk := range m {
		if name == CoreName {
			continue
		}
		v, err := skillVocabulary(sk)
		if err != nil {
			if onError != nil {
				onError(name, err)
			}
			// The skill still routes by its front matter.
			v = &vocabulary{feats: map[string]float64{}, seen: map[string]bool{}, gloss: map[string]bool{}}
			v.addTerm(sk.Name)
			for _, t := range sk.Triggers {
				v.addTerm(t)
			}
			v.addText(sk.Description, textWeight)
		}
		r.names = append(r.names, name)
		r.vocab[name] = v
		for f := range v.feats {
			r.df[f]++
		}
	}
	sort.Strings(r.names)
	return r
}

// idf is how well a feature tells the skills apart.
func (r *router) idf(f string) float64 {
	return math.Log(1 + float64(len(r.names))/float64(max(r.df[f], 1)))
}

// Candidate is a skill scored against a message by [Set.Route].
type Candidate struct {
	Name string `json:"name"`
	// Score is the summed weight of the message's terms the skill knows,
	// each weighted by how rare it is among the installed skills, in units
	// of a word of prose no other skill has (a whole term's word counts 2).
	Score float64 `json:"score"`
	// Coverage is the share of the message's content the skill knows.
	Coverage float64 `json:"coverage"`
	// Matched lists the skill's whole terms found in the message.
	Matched []string `json:"matched,omitempty"`
	// Glossary lists those of Matched that are names of the skill's
	// glossary entries (a term, a synonym, an English rendering, its
	// pinyin): the message names a term of the skill, in some language.
	Glossary []string `json:"glossary,omitempty"`
	// Sections lists the message's words that are words of the headings
	// of this skill's sources and of no other skill: the message names a
	// section of its books.
	Sections []string `json:"sections,omitempty"`
	// Bridged lists the glossary terms the message names in translation,
	// as the search bridge carries it over to the skill's sources (the
	// runtime's: "Kui Gang" and "Yang Blade" name 魁罡 and 阳刃 through
	// the characters' English words and pinyin): the router's own
	// vocabulary holds none of these words.
	Bridged []string `json:"bridged,omitempty"`
}

func (r *router) route(text string) []Candidate {
	marked := markedWords(text)
	text = FoldMarks(text)
	q := features(text)
	if len(q) == 0 || len(r.names) == 0 {
		return nil
	}
	maxIDF := math.Log(1 + float64(len(r.names)))
	mass := 0.0
	for range q {
		mass += termWeight * maxIDF
	}
	low := strings.ToLower(text)
	_, ws := triggerParts(low)
	words := make(map[string]bool, len(ws))
	for _, w := range ws {
		words[w] = true
	}
	var out []Candidate
	for _, name := range r.names {
		v := r.vocab[name]
		c := Candidate{Name: name}
		// loose is the weight of the skill's pinyin names the message
		// holds as English words (vocabulary.pinyin): it counts only
		// next to other evidence, a term of the skill (strong).
		loose, strong := 0.0, false
		for f := range q {
			w := v.feats[f]
			if w == 0 {
				continue
			}
			if v.pinyin[f] {
				if !marked[f] {
					loose += w * r.idf(f)
					continue
				}
				// "fārè" is the pinyin, not the English word.
				w = termWeight
			}
			strong = strong || w >= termWeight
			s := w * r.idf(f)
			c.Score += s
			c.Coverage += s
		}
		if c.Score == 0 && loose == 0 {
			continue
		}
		for f := range q {
			if v.heads[f] && r.df[f] == 1 {
				c.Sections = append(c.Sections, f)
			}
		}
		sort.Strings(c.Sections)
		for _, t := range v.terms {
			// A term the message holds has its features among the
			// message's: one lookup rules most terms out.
			if len(t.feats) > 0 && !q[t.feats[0]] || !t.matches(low, words, ws) {
				continue
			}
			c.Matched = append(c.Matched, t.text)
			if v.gloss[strings.ToLower(t.text)] {
				c.Glossary = append(c.Glossary, t.text)
			}
			rare := 0.0
			for _, f := range t.feats {
				rare = math.Max(rare, r.idf(f))
			}
			c.Score += matchedTermBonus * rare
		}
		if strong || len(c.Matched) > 0 || len(c.Sections) > 0 {
			c.Score += loose
			c.Coverage += loose
		}
		if c.Score == 0 {
			continue
		}
		c.Coverage /= mass
		// In units of a term only this skill knows, whatever the number
		// of skills installed.
		c.Score /= maxIDF
		out = append(out, c)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Score > out[j].Score })
	return out
}

// Route scores text against every skill except core, best first, leaving
// out the skills that share nothing with it. A skill is routed by its
// triggers, description and body, its glossary (knowledge/glossary.yaml:
// terms with their synonyms and English names), and the names and wording
// of its rules and patterns; each term counts by how rare it is among the
// installed skills. Only the first candidate, and only when
// [Candidate.Fits], should be taken as the skill the text is about.
func (s *Set) Route(text string) []Candidate {
	s.mu.RLock()
	r := s.router
	s.mu.RUnlock()
	if r == nil {
		return nil
	}
	return r.route(text)
}

// Fits reports whether the candidate is strong enough to be chosen: some
// specific terms of the message are the skill's, not only common words. A
// long question holding one of the skill's terms whole (绿茶 in
// 绿茶用多少度的水泡) needs less of the rest of it.
func (c Candidate) Fits() bool {
	if len(c.Sections) > 0 && c.Coverage >= minTermCoverage {
		// A section of its books only this skill has, named.
		return true
	}
	if c.Score < minRouteScore {
		return false
	}
	return c.Coverage >= minRouteCoverage || (len(c.Matched) > 0 && c.Coverage >= minTermCoverage)
}

// ProseOnly reports whether the candidate shares only words of prose with
// the message: none of its whole terms and no section of its books.
func (c Candidate) ProseOnly() bool {
	return len(c.Matched) == 0 && len(c.Sections) == 0 && len(c.Bridged) == 0
}

// names reports whether the message names a term of the candidate's
// glossary, in its own words or in translation (Bridged).
func (c Candidate) names() bool { return len(c.Glossary) > 0 || len(c.Bridged) > 0 }

// tieMargin is how much the best candidate must lead the second by, when
// neither holds one of its terms whole, for the text to be about it rather
// than ambiguous ("what is the best water" to a tea skill and a bazi skill
// whose glossary speaks of water).
const tieMargin = 1.1

// Match returns the skill the text is about (the best [Set.Route]
// candidate when it fits and clearly leads, or, when none fits, the one
// skill whose glossary names a term of the text); "" when no skill fits.
// A best candidate that shares only words of prose with the text gives way
// to the one fitting candidate whose glossary names a term of it: "Jin Gui
// Yao Lue" names 金匮 of a medical skill, while "causes of disease" are
// words a fate-reading skill's books use too.
func (s *Set) Match(text string) string {
	return Pick(s.Route(text))
}

// Pick returns the skill [Set.Match] chooses among the candidates cs, best
// first (those of [Set.Route], with the terms a caller found the text to
// name in translation in their Bridged): "" when none fits.
func Pick(cs []Candidate) string {
	if len(cs) == 0 {
		return ""
	}
	if !cs[0].Fits() {
		return namedOnly(cs)
	}
	if cs[0].ProseOnly() {
		if n := namedOnly(cs); n != "" {
			for _, c := range cs {
				if c.Name == n && c.Fits() {
					return n
				}
			}
		}
	}
	if len(cs) > 1 && cs[0].Score < tieMargin*cs[1].Score && len(cs[0].Matched)+len(cs[0].Bridged) <= len(cs[1].Matched)+len(cs[1].Bridged) {
		return ""
	}
	return cs[0].Name
}

// namedOnly returns the one candidate the text names a glossary term of,
// "" when none or several.
func namedOnly(cs []Candidate) string {
	name := ""
	for _, c := range cs {
		if c.names() {
			if name != "" {
				return ""
			}
			name = c.Name
		}
	}
	return name
}

// Named returns the candidates the text names a glossary term of (in any
// language: a term, a synonym, an English rendering, its pinyin, or in
// translation: Bridged), best first: a router must never tell the model
// that no skill fits such a text.
func Named(cs []Candidate) []Candidate {
	var out []Candidate
	for _, c := range cs {
		if c.names() {
			out = append(out, c)
		}
	}
	return out
}

// routeStopWords are English words of questions that tell nothing of their
// topic.
var routeStopWords = map[string]bool{
	"a": true, "an": true, "the": true, "of": true, "and": true, "or": true, "to": true, "in": true,
	"on": true, "for": true, "with": true, "by": true, "at": true, "from": true, "as": true, "into": true,
	"about": true, "how": true, "what": true, "whats": true, "is": true, "are": true, "was": true, "were": true,
	"be": true, "been": true, "my": true, "your": true, "me": true, "i": true, "you": true, "it": true,
	"its": true, "this": true, "that": true, "these": true, "those": true, "do": true, "doe": true,
	"does": true, "did": true, "can": true, "could": true, "should": true, "would": true, "will": true,
	"shall": true, "may": true, "might": true, "must": true, "please": true, "tell": true, "explain": true,
	"mean": true, "meaning": true, "which": true, "when": true, "where": true, "why": true, "who": true,
	"if": true, "then": true, "there": true, "their": true, "they": true, "them": true, "we": true,
	"our": true, "us": true, "not": true, "no": true, "yes": true, "so": true, "some": true, "any": true,
	"get": true, "got": true, "have": true, "has": true, "had": true, "make": true, "like": true,
	"look": true, "help": true, "want": true, "need": true, "know": true, "give": true, "use": true,
	"good": true, "bad": true, "best": true, "more": true, "most": true, "much": true, "many": true,
	"one": true, "two": true, "s": true, "t": true, "don": true, "happen": true, "happens": true,
	"write": true, "today": true, "now": true, "way": true, "thing": true, "also": true, "than": true,
	"too": true, "very": true, "just": true, "all": true, "out": true, "up": true, "down": true,
}

// functionHan are Chinese characters of the question's frame (question
// words, pronouns, particles, "help me look"): a bigram holding one says
// nothing of the topic (什么, 帮我, 看看, 会怎).
var functionHan = map[rune]bool{}

func init() {
	for _, r := range "的了吗呢么什怎样我你他她它们是这那个请吧啊呀帮看下能会要该哪谁嘛么呗哦吧给说讲问想知道里些就都也还很太更最和与及或着过把被让" {
		functionHan[r] = true
	}
}

// features returns the routing features of s: lower-cased, stemmed English
// words (question words left out) and Han character bigrams (a lone Han
// character stands for itself), bigrams holding a function character left
// out.
func features(s string) map[string]bool {
	out := map[string]bool{}
	var word []rune
	var run []rune
	flushWord := func() {
		if len(word) > 0 {
			w := stem(string(word))
			if !routeStopWords[w] && !routeStopWords[string(word)] && len(w) > 1 {
				out[w] = true
			}
		}
		word = word[:0]
	}
	flushRun := func() {
		switch len(run) {
		case 0:
		case 1:
			if !functionHan[run[0]] {
				out[string(run)] = true
			}
		default:
			for i := 1; i < len(run); i++ {
				if !functionHan[run[i-1]] && !functionHan[run[i]] {
					out[string(run[i-1:i+1])] = true
				}
			}
		}
		run = run[:0]
	}
	for _, r := range strings.ToLower(s) {
		switch {
		case unicode.Is(unicode.Han, r):
			flushWord()
			run = append(run, r)
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			flushRun()
			word = append(word, r)
		case r == '\'' || r == '’':
			// "what's", "pu'er": keep the word whole.
		default:
			flushWord()
			flushRun()
		}
	}
	flushWord()
	flushRun()
	return out
}

// markedWords returns the features of the words of s written with
// diacritics (pinyin's tone marks: "fārè" gives "fare"), nil when s is
// ASCII.
func markedWords(s string) map[string]bool {
	if FoldMarks(s) == s {
		return nil
	}
	out := map[string]bool{}
	for _, w := range strings.FieldsFunc(s, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.Is(unicode.Mn, r) }) {
		if f := FoldMarks(w); f != w {
			for k := range features(f) {
				out[k] = true
			}
		}
	}
	return out
}

// FoldMarks strips the diacritics of Latin letters (pinyin's tone marks:
// "kuí gāng" is "kui gang"; ü is u), leaving other scripts alone. It
// returns s itself when s holds no combining mark to remove.
func FoldMarks(s string) string {
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			ascii = false
			break
		}
	}
	if ascii {
		return s
	}
	var sb strings.Builder
	changed := false
	for _, r := range s {
		if r < 0x80 || unicode.Is(unicode.Han, r) {
			sb.WriteRune(r)
			continue
		}
		d := norm.NFD.String(string(r))
		kept := 0
		for _, c := range d {
			if unicode.Is(unicode.Mn, c) {
				changed = true
				continue
			}
			sb.WriteRune(c)
			kept++
		}
		if kept == 0 {
			sb.WriteRune(r)
		}
	}
	if !changed {
		return s
	}
	return sb.String()
}
