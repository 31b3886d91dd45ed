package runtime

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"gopkg.in/yaml.v3"

	"github.com/vibelife/vibe/knowledge"
	"github.com/vibelife/vibe/llm"
	"github.com/vibelife/vibe/skills"
)

// ruleIndex is a skill's knowledge/rules.yaml parsed once: the grams of
// each rule's fields (condition; conclusion, action and note; evidence
// quotes; the heading path of its source), their document frequencies, and
// the skill's glossary, which carries a question in the user's words (or in
// English) over to the terms the rules are written in.
type ruleIndex struct {
	rules []knowledge.TieredRule
	// fields[i][f] are the grams of field f of rule i.
	fields [][numRuleFields]map[string]bool
	// weight[i] maps each gram of rule i to the weight of the best field
	// holding it.
	weight []map[string]float64
	// cond[i] is rule i's condition as comparable text (letters and Han
	// characters only, lower-cased, variants folded).
	cond    [][]rune
	condHan []bool
	// size[i] is the number of grams of rule i's condition and conclusion.
	size    []int
	avgSize float64
	// df counts the rules holding each gram; nCore is the number of core
	// rules (knowledge.Rules.Core), the size of the file the rarity of a
	// question's words is reckoned at (idf).
	df    map[string]int
	nCore int
	// glossary holds each term of the sources with its aliases, and the
	// phrases (term and aliases) tokenised for matching (nil: none).
	glossary *Glossary
	// termGlossary is glossary naming whole terms only (no single
	// character a word is carried over as), what get_rules bridges a
	// question by.
	termGlossary *Glossary
	// statedText[i] is what rule i states (condition, conclusion, action)
	// as comparable text (plainText), statedTokens the same as words
	// (phraseTokens: lower-cased, stemmed) for Latin names.
	statedText   []string
	statedTokens [][]string
	// langShares is languageShares, computed once with the index (the
	// themeLanguage of every search and get_rules call reads it).
	langShares map[string]float64
	// fate is set when the skill reads a person's fate: it needs their
	// birth data (requires_birth_info) or its rules read fortunes
	// (knowledge.ReadsFortunes). Only then is a rule's grave verdict a
	// prediction, and Grave set on it (Agent.readsFate).
	fate bool
	// grave is set when a rule is Grave.
	grave bool
	// core indexes the core rules alone (knowledge.Rules.Core) when the
	// file holds extra ones (an offline tier 2 of one rule a chunk), nil
	// otherwise: get_rules and the prompt answer from the core as from a
	// file of the design's size, and an extra rule joins only when it is
	// about what the question names (withExtras).
	core *ruleIndex
	// pos maps each rule's ID to its place in rules.
	pos map[string]int
}

// languageShares returns the share of the rules whose stated text is in
// each language (TextLanguage), nil for a skill without rules.
func (idx *ruleIndex) languageShares() map[string]float64 {
	n := 0
	count := map[string]int{}
	for _, t := range idx.statedText {
		if l := TextLanguage(t); l != "" {
			count[l]++
			n++
		}
	}
	if n == 0 {
		return nil
	}
	out := make(map[string]float64, len(count))
	for l, c := range count {
		out[l] = float64(c) / float64(n)
	}
	return out
}

// otherLanguage returns the language a question in ql is carried over to
// for the rules: the one most of them are written in (a Spanish question
// over English rules, English) when that is not ql; else Chinese for a
// Latin-script question and English for a Chinese one (a mixed theme's
// other half).
func (idx *ruleIndex) otherLanguage(ql string) string {
	main, share := "", 0.0
	for l, sh := range idx.langShares {
		if sh > share || (sh == share && l < main) {
			main, share = l, sh
		}
	}
	switch {
	case main != "" && main != ql:
		return main
	case ql == langZH:
		return langEN
	}
	return langZH
}

// The fields of a rule, and how much a query gram found in each counts: a
// match in the condition or the conclusion is the rule itself; in the
// evidence quote, its source's wording; in the source's heading path, only
// its topic.
const (
	fieldCondition = iota
	fieldThen
	fieldQuote
	fieldSource
	numRuleFields
)

var fieldWeight = [numRuleFields]float64{1, 1, 0.6, 0.35}

// ruleCache keeps the rule index of each skill until the skill reloads
// (a reload gives a new *skills.Skill). It is safe for concurrent use.
type ruleCache struct {
	mu sync.Mutex
	m  map[string]ruleCacheEntry
}

type ruleCacheEntry struct {
	sk  *skills.Skill
	idx *ruleIndex
	err error
}

func (c *ruleCache) get(sk *skills.Skill) (*ruleIndex, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.m[sk.Name]; ok && e.sk == sk {
		return e.idx, e.err
	}
	idx, err := buildRuleIndex(sk)
	if c.m == nil {
		c.m = map[string]ruleCacheEntry{}
	}
	c.m[sk.Name] = ruleCacheEntry{sk: sk, idx: idx, err: err}
	return idx, err
}

func buildRuleIndex(sk *skills.Skill) (*ruleIndex, error) {
	idx := &ruleIndex{}
	if b, err := sk.ReadResource(skills.GlossaryPath); err == nil {
		g, err := skills.ParseGlossary(b, "skill "+sk.Name+" "+skills.GlossaryPath)
		if err != nil {
			return nil, fmt.Errorf("get_rules: %w", err)
		}
		idx.glossary = NewGlossary(g)
		// get_rules bridges a question by the glossary's terms, named in
		// any form (pinyin and the characters' glosses word by word: "Kui
		// Gang" is 魁罡), but never by a single character a word is
		// carried over as: "defeat" carried as 败 of "Ten Evils and Great
		// Defeat days" finds a passage worth reading, but a rule holding
		// 败 is filler, where get_rules must answer or say it cannot.
		idx.termGlossary = NewGlossary(g)
		idx.termGlossary.wholeTerms = true
	}
	b, err := sk.ReadResource("knowledge/rules.yaml")
	if err != nil {
		return idx, nil // a skill without rules has none to retrieve
	}
	var rf knowledge.RulesFile
	if err := yaml.Unmarshal(b, &rf); err != nil {
		return nil, fmt.Errorf("get_rules: skill %s knowledge/rules.yaml: %w", sk.Name, err)
	}
	all := rf.Rules.All()
	fate := sk.RequiresBirthInfo || knowledge.ReadsFortunes(all)
	full := indexRules(markFate(all, fate), idx.glossary)
	full.fate = fate
	if core := rf.Rules.Core(); len(core) < len(full.rules) {
		full.core = indexRules(markFate(core, fate), idx.glossary)
		full.core.fate = fate
	}
	return full, nil
}

// markFate sets Grave on the rules stating a grave verdict (IsGrave) when
// the skill reads fates, and clears it on every rule when it does not: a
// travel policy's "emergency leave for certain disasters" is no verdict.
func markFate(rules []knowledge.TieredRule, fate bool) []knowledge.TieredRule {
	for i := range rules {
		rules[i].Grave = fate && rules[i].IsGrave()
	}
	return rules
}

// indexRules indexes rules, with the skill's glossary g (nil: none).
func indexRules(rules []knowledge.TieredRule, g *Glossary) *ruleIndex {
	idx := &ruleIndex{rules: rules, glossary: g, pos: make(map[string]int, len(rules))}
	idx.df = map[string]int{}
	total := 0
	for i, r := range idx.rules {
		idx.pos[r.ID] = i
		if !r.Extra {
			idx.nCore++
		}
		idx.grave = idx.grave || r.Grave
		var quotes strings.Builder
		for _, e := range r.Evidence {
			quotes.WriteString(e.Quote + " ")
		}
		var f [numRuleFields]map[string]bool
		f[fieldCondition] = grams(r.Condition)
		f[fieldThen] = grams(r.Conclusion + " " + r.Action + " " + r.Note)
		f[fieldQuote] = grams(quotes.String())
		f[fieldSource] = grams(r.Source)
		idx.fields = append(idx.fields, f)
		w := map[string]float64{}
		for k, m := range f {
			for g := range m {
				w[g] = max(w[g], fieldWeight[k])
			}
		}
		idx.weight = append(idx.weight, w)
		idx.cond = append(idx.cond, []rune(plainText(r.Condition)))
		idx.statedText = append(idx.statedText, plainText(r.Condition+" "+r.Conclusion+" "+r.Action))
		idx.statedTokens = append(idx.statedTokens, phraseTokens(r.Condition+" "+r.Conclusion+" "+r.Action))
		idx.condHan = append(idx.condHan, hasHan(r.Condition))
		n := len(f[fieldCondition]) + len(f[fieldThen])
		idx.size = append(idx.size, n)
		total += n
		seen := map[string]bool{}
		for _, m := range f {
			for g := range m {
				if !seen[g] {
					seen[g] = true
					idx.df[g]++
				}
			}
		}
	}
	if len(idx.rules) > 0 {
		idx.avgSize = float64(total) / float64(len(idx.rules))
	}
	idx.langShares = idx.languageShares()
	return idx
}

// idf is the inverse document frequency of a gram among the rules,
// reckoned by the share of the rules holding it over a file the size of
// the core rules (nCore): a gram half the rules hold, or one rule of the
// core's size, weighs the same whether an offline build keeps 90 rules or
// 640 (its extra tier-2 rules, one a chunk). With the plain count a gram no
// rule holds would weigh more the longer the file, so a question's unmatched
// words would count for more, and the cut-offs tuned on the scores
// (minRuleScore, strongRuleScore, minMatchedRare) would move with the
// file's size.
func (idx *ruleIndex) idf(g string) float64 {
	n, df := float64(idx.nCore), float64(idx.df[g])
	if all := float64(len(idx.rules)); all > n && n > 0 {
		df *= n / all
	}
	return math.Log(1 + (n-df+0.5)/(df+0.5))
}

// gramWeight makes a Han bigram (a term) count more than a lone character.
func gramWeight(g string) float64 {
	if n := utf8.RuneCountInString(g); n == 2 && hasHan(g) {
		return 1.5
	}
	return 1
}

// query is a question prepared for ranking: its grams, their summed
// weight, and its comparable text.
type query struct {
	grams []qgram
	mass  float64
	text  []rune
	// best is scratch space: the field weight each gram matched in the
	// rule being scored.
	best []float64
}

// qgram is one gram of a query with its weight (rarity times gramWeight)
// and, for a character, the bigrams of the query that hold it.
type qgram struct {
	g       string
	w       float64
	bigrams []int
}

// expansion returns the glossary entries text names, each term with all
// its aliases (so "hurting officer meets officer" also asks for 伤官见官,
// and "steep" for "brew"); "" when it names none.
func (idx *ruleIndex) expansion(text string) string {
	var out []string
	if idx.glossary == nil {
		return ""
	}
	tokens := phraseTokens(text)
	for _, t := range idx.glossary.entries {
		hit := false
		for _, p := range t.phrases {
			hit = hit || containsPhrase(tokens, p)
		}
		if hit {
			out = append(out, t.names...)
		}
	}
	return strings.Join(out, " ")
}

// prepare computes the grams of text with their weights.
func (idx *ruleIndex) prepare(text string) query {
	q := query{text: []rune(plainText(text))}
	at := map[string]int{}
	for g := range grams(text) {
		at[g] = len(q.grams)
		w := idx.idf(g) * gramWeight(g)
		q.grams = append(q.grams, qgram{g: g, w: w})
		q.mass += w
	}
	for j, qg := range q.grams {
		if r := []rune(qg.g); len(r) == 2 {
			for _, c := range r {
				if k, ok := at[string(c)]; ok {
					q.grams[k].bigrams = append(q.grams[k].bigrams, j)
				}
			}
		}
	}
	q.best = make([]float64, len(q.grams))
	return q
}

// reaches reports whether any rule holds a gram of q.
func (idx *ruleIndex) reaches(q query) bool {
	for _, g := range q.grams {
		if idx.df[g.g] > 0 {
			return true
		}
	}
	return false
}

// expansionWeight is how much the glossary's expansion of a question counts
// against the question's own words.
const expansionWeight = 0.5

// Ranking constants. unigramInBigram is what a character counts for when
// the rule also matches a bigram holding it (正官格 matched is one term,
// not five grams). lengthNorm softens the advantage a long rule has by
// holding more words; exactBoost rewards a question that holds a rule's
// whole condition (伤官见官 in "What does 伤官见官 mean?"), in proportion
// to the longest stretch of the condition found in the question.
const (
	unigramInBigram = 0.5
	lengthNorm      = 0.3
	exactBoost      = 1.0
	minExactRun     = 2
)

// tierBoost breaks near-ties in favour of the rules the skill marks as
// must-know.
var tierBoost = map[string]float64{knowledge.Tier1: 1.08, knowledge.Tier2: 1.0, knowledge.Tier3: 0.95}

// score is how well rule i answers q: the share of the question's weight
// (each gram by its rarity among the rules, bigrams above characters) the
// rule's fields hold, each field at its weight, length-normalised; times
// one plus how much of the rule's condition the question holds verbatim;
// times the tier's boost. Zero when nothing matches.
func (idx *ruleIndex) score(i int, q query) float64 {
	if q.mass == 0 {
		return 0
	}
	any, condBigram := false, false
	for j, qg := range q.grams {
		best := idx.weight[i][qg.g]
		q.best[j] = best
		any = any || best > 0
		condBigram = condBigram || (best > 0 && utf8.RuneCountInString(qg.g) == 2 && idx.fields[i][fieldCondition][qg.g])
	}
	if !any {
		return 0
	}
	num := 0.0
	for j, qg := range q.grams {
		w := q.best[j]
		if w == 0 {
			continue
		}
		// A character already counted in a matched bigram counts for
		// less: 正官格 matched is one term, not five grams.
		for _, b := range qg.bigrams {
			if q.best[b] > 0 {
				w *= unigramInBigram
				break
			}
		}
		num += w * qg.w
	}
	s := num / q.mass
	if idx.avgSize > 0 {
		s /= 1 - lengthNorm + lengthNorm*float64(idx.size[i])/idx.avgSize
	}
	// A Han condition shares a run of two with the question only if it
	// shares a bigram: the common case of none is not worth the search.
	if c := idx.cond[i]; len(c) > 0 && (condBigram || !idx.condHan[i]) {
		if run := longestCommonRun(c, q.text); run >= minExactRun {
			s *= 1 + exactBoost*float64(run)/float64(len(c))
		}
	}
	if b, ok := tierBoost[idx.rules[i].Tier]; ok {
		s *= b
	}
	return s
}

// modernFunction are characters of a modern question's frame (question
// words, pronouns, particles, modern negation and "what to do") that say
// nothing of its subject: skills' function characters and a few more.
var modernFunction = map[rune]bool{}

func init() {
	for _, r := range "的了吗呢么什怎样我你他她它们是这那个请吧啊呀帮看下能会要该哪谁嘛呗哦给说讲问想知道里些就都也还很太更最和与及或着过把被让没办如何为啥意思点特吉凶好坏" {
		modernFunction[r] = true
	}
}

// subjectCoverage is how much of the question's subject rule i states in
// its condition and its conclusion (not its quote or its source): the
// share of the question's content (its Han characters, the frame's left
// out, and its words) the two fields hold, each weighted by its rarity
// among the rules. "身弱财多怎么办" is 身弱财多: 身弱无制伏 → 为七杀 holds half
// of it, 甲人生亥子月中，水为印 → 忌火伤官… most of "甲木日主生在亥月子月，
// 以水为印，忌什么".
func (idx *ruleIndex) subjectCoverage(i int, q query) float64 {
	total, held := 0.0, 0.0
	for _, qg := range q.grams {
		r := []rune(qg.g)
		if len(r) != 1 && hasHan(qg.g) {
			continue // bigrams: their characters count
		}
		if len(r) == 1 && modernFunction[r[0]] {
			continue
		}
		w := idx.idf(qg.g)
		total += w
		if idx.fields[i][fieldCondition][qg.g] || idx.fields[i][fieldThen][qg.g] {
			held += w
		}
	}
	if total == 0 {
		return 0
	}
	return held / total
}

// relevant reports whether rule i states something of q in its
// condition, its conclusion or action, or its source's headings: a Han
// bigram of the question (neither character of the question's frame: 什么,
// 怎么) or a word, or at least minSharedChars of the question's content
// characters (甲日酉月透辛、时丙 and 甲用辛官而透丙合辛 share 甲, 辛, 透, 丙
// and no bigram). A rule sharing one or two characters with the question
// (金神格 and 终以月令为主 → …非用而即用神, by 神 and 格) is filler.
func (idx *ruleIndex) relevant(i int, q query) bool {
	f := idx.fields[i]
	chars := 0
	for _, qg := range q.grams {
		r := []rune(qg.g)
		stated := f[fieldCondition][qg.g] || f[fieldThen][qg.g] || f[fieldSource][qg.g]
		switch {
		case !hasHan(qg.g):
			if stated {
				return true
			}
		case len(r) == 2 && !modernFunction[r[0]] && !modernFunction[r[1]]:
			if stated {
				return true
			}
		case len(r) == 1 && !modernFunction[r[0]]:
			if stated {
				chars++
			}
		}
	}
	return chars >= minSharedChars
}

// matched is the rarity-weighted mass of q's grams rule i states in its
// condition, conclusion or action, or its source's headings (a character
// counted in a stated bigram at unigramInBigram).
func (idx *ruleIndex) matched(i int, q query) float64 {
	f := idx.fields[i]
	stated := func(g string) bool { return f[fieldCondition][g] || f[fieldThen][g] || f[fieldSource][g] }
	m := 0.0
	for _, qg := range q.grams {
		if !stated(qg.g) {
			continue
		}
		w := qg.w
		for _, b := range qg.bigrams {
			if stated(q.grams[b].g) {
				w *= unigramInBigram
				break
			}
		}
		m += w
	}
	return m
}

// minMatchedRare is the matched mass (matched) a rule needs for some Han
// part of the query, in units of the rarity of a gram only one rule holds:
// about a rare term and a character of the question besides. Filler that
// shares a common bigram or a few characters with the question falls below
// it (闲神 and 吉神有物，合去 by 神 and 去: 1.5 at most), the rules that
// answer the project's questions lie above (阳刃格 and 阳刃用之 → …: 1.9);
// 1.8 cut an answering rule of the demo theme (冲泡时用什么器具).
const minMatchedRare = 1.5

// minRulesForMatched is the fewest rules a skill has for matchedEnough to
// apply: among a handful of rules no gram is much rarer than another.
const minRulesForMatched = 20

// matchedEnough reports whether rule i states enough of one of the query
// parts qs (minMatchedRare).
func (idx *ruleIndex) matchedEnough(i int, qs []query) bool {
	if idx.nCore < minRulesForMatched {
		return true
	}
	rare := idx.idf("\x00") // a gram no rule holds weighs as one only one rule holds, nearly
	for _, q := range qs {
		m := idx.matched(i, q)
		if !hasHan(string(q.text)) {
			// Words: a rule stating one common word of the question
			// ("king", "work") is filler; a rare word and another, or
			// a quarter of the question, is not (minMatchedRareWords).
			if m >= minMatchedRareWords*rare || q.mass > 0 && m >= minMatchedShareWords*q.mass {
				return true
			}
			continue
		}
		if m >= minMatchedRare*rare || q.mass > 0 && m >= minMatchedShare*q.mass {
			return true
		}
	}
	return false
}

// minMatchedRareWords and minMatchedShareWords are minMatchedRare and
// minMatchedShare for a query part in words (an English question over
// English rules): a word is a term, so less suffices than of characters.
// Tuned on the dev half of the blind chess and travel-leave themes
// (docs/blind.md): at 0.8 and 0.25 get_rules returned 46 rules instead of
// 57 for their 19 rule questions and kept every hit; at 1.0 and 0.3 it
// lost one.
const (
	minMatchedRareWords  = 0.8
	minMatchedShareWords = 0.25
)

// minMatchedShare is the share of a query part's weight a rule stating
// most of it needs instead: a short part ("brewing green tea" of a
// question written half in Chinese) holds no more than its few words.
const minMatchedShare = 0.6

// minSharedChars is how many content characters a rule sharing no bigram
// with the question must share to be relevant.
const minSharedChars = 3

// weighted is one part of a rule query with its weight.
type weighted struct {
	text   string
	weight float64
}

// scoredRule is a rule with its relevance to a query.
type scoredRule struct {
	knowledge.TieredRule
	Score float64
	// at is the rule's place in the index.
	at int
}

// rank returns the k rules most relevant to the query parts: each part's
// score of the rule, times the part's weight, plus the score of the part's
// glossary expansion at expansionWeight, summed, at least min, and only
// rules that state something of a part (relevant). Ties
// keep the file's order (tier 1 first). Never the whole file: a rule no
// part touches is left out.
func (idx *ruleIndex) rank(parts []weighted, k int, min float64) []scoredRule {
	var qs []query
	var ws []float64
	for _, p := range parts {
		q := idx.prepare(p.text)
		qs = append(qs, q)
		ws = append(ws, p.weight)
		if !idx.reaches(q) {
			// A question none of whose words any rule holds (English over
			// rules written in Chinese) is carried over by the glossary:
			// the terms it names in the other language stand for it, at
			// its weight. Its expansion would count half and bring its own
			// language's aliases into the weight a rule must hold a share
			// of, so such a question could never reach the cut-off (minRuleScore)
			// ("hurting officer meets the officer" and 伤官见官 → 为祸百端
			// on the five bazi books: 0.28).
			other := idx.otherLanguage(QueryLanguage(p.text))
			if t := idx.termGlossary.Terms(p.text, other); len(t) > 0 {
				qs = append(qs, idx.prepare(strings.Join(t, " ")))
				ws = append(ws, p.weight)
				continue
			}
		}
		if x := idx.expansion(p.text); x != "" {
			qs = append(qs, idx.prepare(x))
			ws = append(ws, p.weight*expansionWeight)
		}
	}
	var all []scoredRule
	for i := range idx.rules {
		s := 0.0
		rel := false
		for j, q := range qs {
			if v := idx.score(i, q); v > 0 {
				s += ws[j] * v
				rel = rel || idx.relevant(i, q)
			}
		}
		if rel && s > 0 && s >= min && (min == 0 || idx.matchedEnough(i, qs)) {
			all = append(all, scoredRule{idx.rules[i], s, i})
		}
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].Score > all[j].Score })
	if len(all) > k {
		all = all[:k]
	}
	return all
}

func plainRules(rs []scoredRule) []knowledge.TieredRule {
	out := make([]knowledge.TieredRule, len(rs))
	for i, r := range rs {
		out[i] = r.TieredRule
	}
	return out
}

// plainText keeps the letters, digits and Han characters of s, lower-cased
// and with variants folded, for verbatim comparison.
func plainText(s string) string {
	var sb strings.Builder
	for _, r := range strings.ToLower(s) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			sb.WriteRune(foldVariant(r))
		}
	}
	return sb.String()
}

// longestCommonRun is the length in runes of the longest substring of a
// found in b.
func longestCommonRun(a, b []rune) int {
	if len(a) == 0 || len(b) == 0 {
		return 0
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	best := 0
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			if a[i-1] == b[j-1] {
				cur[j] = prev[j-1] + 1
				if cur[j] > best {
					best = cur[j]
				}
			} else {
				cur[j] = 0
			}
		}
		prev, cur = cur, prev
	}
	return best
}

// rulesFor returns what get_rules answers a question with, unbridged: the
// k rules of a skill most relevant to it (idx.answer), those scoring at
// least min (minRuleScore: get_rules' cut-off; the offline answer asks
// minContextScore, the prompt's). When the question asks about a term no
// rule states, missing names it and the rules are partial: they touch only
// the rest of the question ("阳刃格成格的条件是什么" gets 阳刃用之 → 赖以制刃…,
// and no rule states 阳刃格).
func (a *Agent) rulesFor(skill, question string, k int, min float64) (rules []knowledge.TieredRule, missing []string, err error) {
	sk, err := a.cfg.Skills.Get(skill)
	if err != nil {
		return nil, nil, err
	}
	idx, err := a.rules.get(sk)
	if err != nil {
		return nil, nil, err
	}
	ranked, missing := idx.answer(question, Bridged{}, k)
	ranked = slices.DeleteFunc(ranked, func(r scoredRule) bool { return r.Score < min })
	return plainRules(ranked), missing, nil
}

// contextRules returns the rules the system prompt carries for this step:
// relevant to the conversation, not only to the last message. The current
// message weighs most; the user's earlier turns (most recent first), the
// last answer and the protocol in progress (its name and next step) add
// to it, so a follow-up such as "and then?" keeps the rules of the topic.
//
// chat holds the earlier messages (the stored ones, or the client's
// transcript); all is the stored history the protocol's progress is read
// from.
func (a *Agent) contextRules(skill, msg string, chat, all []knowledge.StoredMessage, p *skills.Protocol, k int) ([]knowledge.TieredRule, error) {
	sk, err := a.cfg.Skills.Get(skill)
	if err != nil {
		return nil, err
	}
	idx, err := a.rules.get(sk)
	if err != nil || len(idx.rules) == 0 {
		return nil, err
	}
	if idx.core != nil {
		// The prompt carries core rules only: an extra rule is fetched by
		// get_rules when the question names its subject.
		idx = idx.core
	}
	parts := []weighted{{msg, 1}}
	userW, answered := 0.5, false
	for i := len(chat) - 1; i >= 0 && userW > 0.1; i-- {
		switch chat[i].Role {
		case llm.RoleUser:
			parts = append(parts, weighted{chat[i].Content, userW})
			userW /= 2
		case llm.RoleAssistant:
			if !answered {
				parts = append(parts, weighted{chat[i].Content, 0.25})
				answered = true
			}
		}
	}
	if p != nil {
		q := p.Name + " " + strings.Join(p.Triggers, " ")
		if len(p.Steps) > 0 {
			if _, next := progress(p, protocolRun(all, p)); next != "" {
				q += " " + next
			}
		}
		parts = append(parts, weighted{q, 0.5})
	}
	// The prompt's rules pass get_rules' cut-off (answer), and none is put
	// in while the message asks about a term no rule states; after a weak
	// match, a rule not about the message's subject is left out as
	// get_rules leaves it out.
	if _, missing := idx.answer(msg, Bridged{}, k); len(missing) > 0 {
		return nil, nil
	}
	rules := idx.rank(parts, k, minContextScore)
	if len(rules) > 0 && rules[0].Score < strongRuleScore {
		rules, _ = idx.aboutSubject(rules, msg)
	}
	return plainRules(rules), nil
}

// stopWords are English words too common to tell rules apart.
var stopWords = map[string]bool{
	"the": true, "an": true, "of": true, "to": true, "is": true, "are": true, "be": true, "and": true,
	"or": true, "for": true, "in": true, "on": true, "at": true, "it": true, "its": true, "with": true,
	"as": true, "by": true, "from": true, "that": true, "this": true, "what": true, "how": true,
	"should": true, "do": true, "does": true, "my": true, "me": true, "you": true, "your": true,
	"can": true, "when": true, "if": true, "then": true, "not": true, "no": true, "so": true,
	"was": true, "were": true, "will": true, "which": true, "there": true, "they": true, "them": true,
}

// grams returns the lower-cased word tokens (stop words left out) and CJK
// characters and character bigrams of s. A word is taken in the form the
// search bridge compares words in (matchForm): a rule under "Voting and
// poll volunteering" is about "vote", one saying "touches one of his
// pieces" about "touch".
func grams(s string) map[string]bool {
	out := map[string]bool{}
	var word []rune
	var prev rune
	flush := func() {
		if w := string(word); len(word) > 1 && !stopWords[w] {
			out[matchForm(w)] = true
		}
		word = word[:0]
	}
	for _, r := range strings.ToLower(skills.FoldMarks(s)) {
		r = foldVariant(r)
		switch {
		case unicode.Is(unicode.Han, r):
			flush()
			out[string(r)] = true
			if prev != 0 {
				out[string([]rune{prev, r})] = true
			}
			prev = r
			continue
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			word = append(word, r)
		default:
			flush()
		}
		prev = 0
	}
	flush()
	return out
}

// foldVariant maps a variant character to the form the rules are indexed
// under (煞 and 杀 are one word of the classics). This is a local minimal
// table for rule ranking only; the search index has its own normalisation.
func foldVariant(r rune) rune {
	switch r {
	case '煞':
		return '杀'
	}
	return r
}

// phraseTokens splits s into lower-cased stemmed words (small words such
// as "the" left out) and single Han characters, in order.
func phraseTokens(s string) []string {
	var out []string
	var word []rune
	flush := func() {
		if w := string(word); w != "" && !stopWords[w] && w != "a" {
			out = append(out, skills.Stem(w))
		}
		word = word[:0]
	}
	for _, r := range strings.ToLower(skills.FoldMarks(s)) {
		r = foldVariant(r)
		switch {
		case unicode.Is(unicode.Han, r):
			flush()
			out = append(out, string(r))
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			word = append(word, r)
		case r == '\'' || r == '’':
		default:
			flush()
		}
	}
	flush()
	return out
}

// containsPhrase reports whether the phrase's tokens p occur in tokens
// contiguously, in order (both from phraseTokens, so small words aside):
// "white tea" is in "how to brew white tea" but not in "white frost on my
// tea"; "officer meets officer" is in "the officer meets the officer".
func containsPhrase(tokens, p []string) bool {
	if len(p) == 0 || len(p) > len(tokens) {
		return false
	}
	for i := 0; i+len(p) <= len(tokens); i++ {
		ok := true
		for j := range p {
			if tokens[i+j] != p[j] {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}
