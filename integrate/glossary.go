package integrate

import (
	"errors"
	"os"
	"regexp"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/mozillazg/go-pinyin"
	"gopkg.in/yaml.v3"

	"github.com/vibelife/vibe/internal/atomicfile"
	"github.com/vibelife/vibe/skills"
)

// The built glossary (docs/glossary.md). `vibe integrate` writes the skill's
// knowledge/glossary.yaml (skills.GlossaryPath) from what flows into it:
// the heading titles and document titles of the theme's chunks, and the
// extracted knowledge (pattern names, red-flag signals, SOP phases, rule
// conditions and conclusions). Offline it mines the terms and gives each
// its pinyin (go-pinyin's dictionary: every reading of a polyphonic
// character, since it has no phrase table: 长生 is zhang sheng and chang
// sheng); with a model the model adds synonyms, variant spellings and the
// English renderings (glossary_llm.go). The theme's hand-kept
// knowledge/<theme>/glossary.yaml is laid over the result and wins by term.

// Glossary sizes: at most maxMinedTerms terms mined from the knowledge's
// wording besides the headings' and names' terms; terms of minTermRunes to
// maxTermRunes Han characters; at most maxPinyinReadings readings of a
// term with polyphonic characters.
const (
	maxMinedTerms     = 300
	minTermRunes      = 2
	maxTermRunes      = 6
	maxGramRunes      = 4
	minGramDocs       = 3
	maxPinyinReadings = 4
)

// GlossaryInputs is what the glossary is built from, besides the extracted
// knowledge: the theme's chunks' heading titles (each heading of each
// path, any order, repeats allowed) and document titles.
type GlossaryInputs struct {
	Headings []string
	Titles   []string
	// Passages are the chunks' texts, which tell the terms a heading runs
	// together (topicParts).
	Passages []string
}

// candidate is a term found offline, with where it was found (the first
// place, for the model's context) and how often.
type candidate struct {
	term    string
	context string
	docs    int
	named   bool // a heading, title or name: a term in its own right
}

// headingNumber matches the numbering and volume markers a heading title
// starts with: "2.3.3 ", "四十一、", "第三章 ", "卷六".
var headingNumber = regexp.MustCompile(`^(?:[0-9０-９]+(?:[.．][0-9０-９]+)*[.．、]?\s*|[一二三四五六七八九十百零〇两]+[、.．]\s*|第[一二三四五六七八九十百零〇两0-9]+[章节回卷篇部]\s*)`)

// discourseEnd matches the words that end a title "论X之说" (on X: the
// theory, the method, the principle of it), which are no part of X.
var discourseEnd = regexp.MustCompile(`之[说论法理辨要义]$`)

// stripNumbering takes a heading title's numbering off ("第十一回 " and
// "十七、"), which would otherwise recur as a phrase (十一回).
func stripNumbering(h string) string {
	h = strings.TrimSpace(h)
	for {
		t := strings.TrimSpace(headingNumber.ReplaceAllString(h, ""))
		if t == h {
			return h
		}
		h = t
	}
}

// numeralHan are the characters of a Chinese number or ordinal.
const numeralHan = "一二三四五六七八九十百千零〇两第"

// termOfHeading returns the term a heading title names ("25 论魁罡" is
// 魁罡, "1.12 衰旺论" is 衰旺), or "" when the title is no term (a volume,
// a sentence, not Han).
func termOfHeading(h string) string {
	h, chapter := topicOfHeading(h)
	if !isTermText(h) {
		return ""
	}
	if chapter {
		// A chapter's name, not a phrase of prose: 将威, 论将 hold
		// 将 (general) and are terms.
		return h
	}
	// A title that reads as a phrase of prose or a question (杂气如何取用,
	// 日为主 of 论日为主) is no term: its words would route unrelated
	// questions (如何). Only particles, copulas and question words tell
	// so (titleProse): a name holds other characters of gramStop (水火既济,
	// 玄武当权, 伤夫克子, 桂枝汤方).
	for _, r := range h {
		if titleProse[r] {
			return ""
		}
	}
	return h
}

// titleProse are the characters that make a title a phrase of prose or a
// question: particles, copulas, question words and modal verbs.
var titleProse = map[rune]bool{}

func init() {
	for _, r := range "之乎者也而其以于则乃所此彼若如何是为在哉矣焉曰云的了吗呢么这那个着过把被让可能" {
		titleProse[r] = true
	}
}

// discourseHead and discourseTail are the words around a heading's topic
// that say it is discussed (论魁罡, 衰旺论, 总论岁运, 附论墓运, 偏正财合论,
// 官煞去留杂论, 六亲总篇), no part of it: longest first.
var (
	discourseHead = []string{"总论", "杂论", "附论", "通论", "论"}
	discourseTail = []string{"合论", "杂论", "总论", "总篇", "论", "篇"}
)

// topicOfHeading returns what a heading title discusses, its numbering,
// volume, parentheses and the words of discussion taken off (论将星华盖 is
// 将星华盖, 十七、论墓库刑冲之说 is 墓库刑冲), whatever its characters; "" for a
// volume of a book. chapter says the title is a chapter's name before its
// ordinal (文师第一, 论将第十九), which is the term whole.
func topicOfHeading(h string) (topic string, chapter bool) {
	h = strings.TrimSpace(h)
	for {
		t := strings.TrimSpace(headingNumber.ReplaceAllString(h, ""))
		if t == h {
			break
		}
		h = t
	}
	if i := strings.IndexAny(h, "（(【["); i > 0 {
		h = strings.TrimSpace(h[:i])
	}
	// A chapter titled by its name then its ordinal (文师第一), the name
	// maybe repeated after it (用间篇第十三用间篇), and 篇 after the name:
	// the name is the term.
	if name, rest, ok := strings.Cut(h, "第"); ok && utf8.RuneCountInString(name) >= minTermRunes && isHanOnly(name) {
		if rest = strings.TrimSuffix(rest, name); rest != "" && strings.Trim(rest, numeralHan) == "" {
			h = name
			if r := []rune(h); len(r) > minTermRunes && r[len(r)-1] == '篇' {
				h = string(r[:len(r)-1])
			}
			return h, true
		}
	}
	if strings.ContainsRune(h, '卷') {
		return "", false // a volume of a book, not a topic
	}
	trim := func(t string) bool {
		if utf8.RuneCountInString(t) >= minTermRunes && t != h {
			h = t
			return true
		}
		return false
	}
	for _, w := range discourseHead {
		if strings.HasPrefix(h, w) && trim(strings.TrimPrefix(h, w)) {
			break
		}
	}
	// "论墓库刑冲之说": a discussion "of" its terms; the 之说 says so.
	trim(discourseEnd.ReplaceAllString(h, ""))
	for _, w := range discourseTail {
		if strings.HasSuffix(h, w) && trim(strings.TrimSuffix(h, w)) {
			break
		}
	}
	return h, false
}

// isTermText reports whether s can be a term: minTermRunes to maxTermRunes
// Han characters only.
func isTermText(s string) bool {
	n := utf8.RuneCountInString(s)
	if n < minTermRunes || n > maxTermRunes {
		return false
	}
	for _, r := range s {
		if !unicode.Is(unicode.Han, r) {
			return false
		}
	}
	return true
}

// gramStop are characters of classical and modern Chinese prose that do not
// begin or end a term (particles, pronouns, connectives, copulas).
var gramStop = map[rune]bool{}

func init() {
	for _, r := range "之乎者也而其以为于则乃所此彼若如即亦又且皆必是在与及或哉矣焉曰云故凡盖夫的了吗呢么是这那个就都还很最和或着过把被让既因虽但然亦仍方只已尚更再即犹将可能要当" {
		gramStop[r] = true
	}
}

// MineGlossary builds the glossary offline from the extracted knowledge
// and the chunks' titles: the terms the headings and document titles name,
// the names of patterns and SOP phases, and the Han phrases of two to four
// characters that recur across rules, patterns and headings (at least
// minGramDocs of them, the phrase not only ever part of a longer one); each
// with its pinyin. It is deterministic: the same inputs give the same
// glossary.
func MineGlossary(ks *knowledgeSet, in GlossaryInputs) skills.Glossary {
	_, g := mineCandidates(ks, in)
	return g
}

// mineCandidates returns the mined terms, the named ones first then the
// recurring phrases by frequency, and the glossary they make.
func mineCandidates(ks *knowledgeSet, in GlossaryInputs) ([]candidate, skills.Glossary) {
	cands := map[string]*candidate{}
	add := func(term, ctx string, named bool) {
		if !isTermText(term) {
			// An English title or name is a term as enTermOf writes
			// it ("Chess Strategy" is "chess strategy").
			if !named || !isEnglishTerm(term) {
				return
			}
			if term = enTermOf(enTermWords(term)); term == "" || enGenericHeading[strings.ToLower(term)] {
				return
			}
		}
		c := cands[term]
		if c == nil {
			c = &candidate{term: term, context: ctx}
			cands[term] = c
		}
		c.named = c.named || named
	}
	for _, t := range in.Titles {
		add(strings.TrimSpace(t), "title", true)
	}
	var docs []string
	var headingTerms []candidate // the Han terms the headings name, and where
	for _, h := range in.Headings {
		if t := termOfHeading(h); t != "" {
			add(t, h, true)
			if discourse(h) {
				headingTerms = append(headingTerms, candidate{term: t, context: h})
			}
		} else if t := termOfHeadingEN(h); t != "" {
			add(t, h, true)
		}
		docs = append(docs, stripNumbering(h))
	}
	nameOf, cuts := headingNames(in.Headings)
	for _, h := range in.Headings {
		if n := nameOf[h]; n != "" {
			add(n, h, true)
		}
	}
	headingDocs := len(docs)
	for _, p := range ks.pats.Patterns.QuickPatterns {
		add(strings.TrimSpace(p.Name), p.Signature, true)
		docs = append(docs, p.Name+" "+p.Signature+" "+p.Indication)
	}
	for _, f := range ks.pats.Patterns.RedFlags {
		add(strings.TrimSpace(f.Signal), f.Action, true)
		docs = append(docs, f.Signal)
	}
	for _, ph := range ks.sop.SOP.Phases {
		if name := strings.TrimSpace(ph.Name); !isProcedureStep(name) {
			add(name, "", true)
		}
	}
	for _, r := range ks.rules.Rules.Core() {
		docs = append(docs, r.Condition+" "+r.Conclusion+" "+r.Action)
	}
	for _, g := range append(recurringGrams(docs), recurringEnglish(docs)...) {
		if cuts[g.term] && !foundIn(docs[headingDocs:], g.term) {
			// A name run into the verb after it (诸葛亮智 of 诸葛亮智算华容),
			// found nowhere else.
			continue
		}
		if c := cands[g.term]; c != nil {
			c.docs = max(c.docs, g.docs)
			continue
		}
		cands[g.term] = &candidate{term: g.term, context: g.context, docs: g.docs}
	}
	// A discussion of terms run together (论将星华盖, 论刑冲会合,
	// 论财官印绶, 论X与Y) names each of them, when each is used in the
	// sources on its own or is a term found elsewhere.
	topics := map[string]string{} // topic -> its heading
	want := map[string]bool{}
	for _, h := range in.Headings {
		t, chapter := topicOfHeading(h)
		bare := strings.Map(func(r rune) rune {
			if strings.ContainsRune(topicSeparators, r) {
				return -1
			}
			return r
		}, t)
		if n := utf8.RuneCountInString(bare); chapter || !discourse(h) || !isHanOnly(t) || n < 2*minPartRunes || n > maxTermRunes {
			continue
		}
		if _, ok := topics[t]; ok {
			continue
		}
		topics[t] = h
		want[t] = true
		for _, cut := range topicCuts([]rune(t)) {
			for _, p := range cut {
				want[p] = true
			}
		}
	}
	uses, listed := countIn(in.Passages, want)
	known := func(s string) bool { return cands[s] != nil }
	topicList := make([]string, 0, len(topics))
	for t := range topics {
		topicList = append(topicList, t)
	}
	sort.Strings(topicList)
	var parts []candidate
	for _, t := range topicList {
		for _, p := range topicParts(t, uses, listed, known) {
			parts = append(parts, candidate{term: p, context: topics[t]})
		}
	}
	for _, p := range parts {
		add(p.term, p.context, true)
	}
	// A discussion of two terms side by side (论墓库刑冲之说, 论建禄月劫)
	// names each of them, when one is a term found elsewhere.
	for _, ht := range headingTerms {
		for _, part := range pairOf(ht.term, cands) {
			add(part, ht.context, true)
		}
	}
	out := make([]*candidate, 0, len(cands))
	for _, c := range cands {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].named != out[j].named {
			return out[i].named
		}
		if out[i].docs != out[j].docs {
			return out[i].docs > out[j].docs
		}
		return out[i].term < out[j].term
	})
	var g skills.Glossary
	var kept []candidate
	mined := 0
	namedReading := map[string]string{} // a named term's first toneless reading, joined -> the term
	for _, c := range out {
		if !c.named {
			if mined == maxMinedTerms {
				continue
			}
			mined++
		}
		kept = append(kept, *c)
		var py []string
		if isTermText(c.term) {
			py = PinyinOf(c.term)
		}
		if c.named {
			if len(py) > 1 {
				if _, ok := namedReading[strings.ReplaceAll(py[1], " ", "")]; !ok {
					namedReading[strings.ReplaceAll(py[1], " ", "")] = c.term
				}
			}
		} else {
			py = givenWay(c.term, py, namedReading)
		}
		g.Terms = append(g.Terms, skills.GlossaryTerm{Term: c.term, Pinyin: py, From: skills.FromMined})
	}
	sort.SliceStable(g.Terms, func(i, j int) bool { return g.Terms[i].Term < g.Terms[j].Term })
	return kept, g
}

// givenWay returns the pinyin forms of a phrase mined from the wording
// (PinyinOf's) without those reading as a named term (a heading's, a
// pattern's, a title's) reads first: the reading names the named term.
// "ri gui" is 日贵 (the heading 论日贵), not 日癸, the day's stem run into
// the hour's pillar (甲日癸酉时), whose passages took a question's top five;
// "ri ren" is 日刃, not 日壬. The toned form goes with its first toneless
// reading. Only the named term's first reading counts (亡神 is wang shen:
// its reading wu shen is still 戊申's), and a variant spelling of the named
// term (七煞 of 七杀) keeps its readings: it is the same term.
func givenWay(term string, py []string, named map[string]string) []string {
	if len(py) < 2 {
		return py
	}
	var out []string
	for i, p := range py {
		key := strings.ReplaceAll(p, " ", "")
		if i == 0 {
			key = strings.ReplaceAll(py[1], " ", "")
		}
		if n, ok := named[key]; !ok || variantOf(n, term) {
			out = append(out, p)
		}
	}
	return out
}

// variantOf reports whether a and b are one term in two spellings: 煞 for
// 杀, 㑹 for 会.
func variantOf(a, b string) bool {
	fold := strings.NewReplacer("煞", "杀", "㑹", "会").Replace
	return fold(a) == fold(b)
}

// pairOf splits a heading's four-character term into its two terms when one
// of them is a candidate of its own: 墓库刑冲 is 墓库 and 刑冲. Nothing
// otherwise.
func pairOf(term string, cands map[string]*candidate) []string {
	r := []rune(term)
	if len(r) != 2*minTermRunes {
		return nil
	}
	a, b := string(r[:2]), string(r[2:])
	if gramStop[r[1]] || gramStop[r[2]] || cands[a] == nil && cands[b] == nil {
		return nil
	}
	return []string{a, b}
}

// discourse reports whether a heading title is a discussion: "论X",
// "总论X", "X论", "X合论" or "X之说".
func discourse(h string) bool {
	h = stripNumbering(h)
	if i := strings.IndexAny(h, "（(【["); i > 0 {
		h = strings.TrimSpace(h[:i])
	}
	for _, w := range discourseHead {
		if strings.HasPrefix(h, w) {
			return true
		}
	}
	return strings.HasSuffix(h, "论") || discourseEnd.MatchString(h)
}

// foundIn reports whether any of docs holds s.
func foundIn(docs []string, s string) bool {
	for _, d := range docs {
		if strings.Contains(d, s) {
			return true
		}
	}
	return false
}

// Names at the head of headings: a title that joins a name and a verb
// phrase (诸葛亮智算华容, 诸葛亮火烧新野, 曹操煮酒论英雄: a novel's chapter
// titles) names the name. The name is the start of the title after which the
// titles go on in the most different ways (诸葛亮 is followed by 智, 火, 大,
// 乘…; 诸葛 only by 亮; 诸葛亮智 by 算 and 取), and at least minNameBranches.
const (
	minNameBranches = 3
	minNamedPhrase  = 5 // Han characters of a title phrase a name heads
)

// headingNames returns the name each heading starts a phrase with (by
// heading), and the phrases that run such a name into the verb after it
// (诸葛亮智): cuts, no terms.
func headingNames(headings []string) (map[string]string, map[string]bool) {
	type phrase struct {
		heading string
		run     []rune
	}
	var phrases []phrase
	seen := map[string]bool{}
	for _, h := range headings {
		for _, run := range hanRuns(stripNumbering(h)) {
			if len(run) < minNamedPhrase || seen[string(run)] {
				continue
			}
			seen[string(run)] = true
			phrases = append(phrases, phrase{h, run})
		}
	}
	next := map[string]map[rune]bool{} // a phrase's start -> the characters after it
	for _, p := range phrases {
		for n := minTermRunes; n <= maxGramRunes && n < len(p.run); n++ {
			s := string(p.run[:n])
			if next[s] == nil {
				next[s] = map[rune]bool{}
			}
			next[s][p.run[n]] = true
		}
	}
	names := map[string]string{}
	cuts := map[string]bool{}
	for _, p := range phrases {
		best, most := 0, minNameBranches-1
		for n := minTermRunes; n <= maxGramRunes && n < len(p.run); n++ {
			if k := len(next[string(p.run[:n])]); k > most {
				best, most = n, k
			}
		}
		if best == 0 || gramStop[p.run[0]] || gramStop[p.run[best-1]] || p.run[0] == '论' {
			// A discussion (论十干合, 论十恶大败) starts with its topic,
			// not a name.
			continue
		}
		if _, ok := names[p.heading]; !ok {
			names[p.heading] = string(p.run[:best])
		}
		for n := best + 1; n <= maxGramRunes && n <= len(p.run); n++ {
			cuts[string(p.run[:n])] = true
		}
	}
	return names, cuts
}

// gram is a recurring phrase of the knowledge's wording.
type gram struct {
	term, context string
	docs          int
}

// unitHan are measure words and units of weight, length, volume and time.
const unitHan = "升斤两钱分铢枚个斗尺寸丈里日月年天次遍剂服片粒杯碗盏"

// endsInQuantity reports whether w ends with a number, or a number and a
// unit (一升, 三日, 半斤, 桂枝三两, 大枣十二, 枣十二枚): a quantity a text repeats
// (every recipe of a book of formulas), or a term run into one, not a term
// of its field. A number and a noun (五行, 六亲, 三合, 六丁日) is a term and
// stays, and so are 脉数 (数 is "rapid") and 夜半.
func endsInQuantity(w []rune) bool {
	i, digits := len(w), numeralHan
	if i > 0 && strings.ContainsRune(unitHan, w[i-1]) {
		i, digits = i-1, numeralHan+"半" // 半斤, but 夜半 is a time of day
	}
	j := i
	for j > 0 && w[j-1] != '第' && strings.ContainsRune(digits, w[j-1]) {
		j--
	}
	return j < i
}

// recurringGrams returns the Han phrases of minTermRunes to maxGramRunes
// characters found in at least minGramDocs of docs, neither starting nor
// ending with a prose character (gramStop), no number or quantity
// (endsInQuantity), and not only ever part of one
// longer such phrase (a phrase found in nearly as many documents as a
// longer one holding it is left for the longer one).
func recurringGrams(docs []string) []gram {
	df := map[string]int{}
	ctx := map[string]string{}
	for _, d := range docs {
		seen := map[string]bool{}
		for _, run := range hanRuns(d) {
			for n := minTermRunes; n <= maxGramRunes; n++ {
				for i := 0; i+n <= len(run); i++ {
					w := run[i : i+n]
					if gramStop[w[0]] || gramStop[w[n-1]] || w[0] == '不' || w[0] == '论' || w[n-1] == '论' {
						// A negation starts no term (不得, 不宜), and 论
						// ("on X", "X discussed") is a heading's word
						// around its term (论偏 of 论偏官, 官论 of 正官论).
						continue
					}
					s := string(w)
					if i := strings.Index(s, "第"); strings.Trim(s, numeralHan) == "" || i >= 0 && strings.Trim(s[i:], numeralHan) == "" {
						// A number (十一, 第十), or a chapter name's end
						// run into its ordinal (兵第, 启第十 of 文启第十三),
						// is no term.
						continue
					}
					if endsInQuantity(w) {
						continue
					}
					if !seen[s] {
						seen[s] = true
						df[s]++
						if _, ok := ctx[s]; !ok {
							ctx[s] = clipRunes(d, 40)
						}
					}
				}
			}
		}
	}
	// super[s] is the most documents a phrase one character longer than
	// s, holding it, is found in.
	super := map[string]int{}
	for w, m := range df {
		r := []rune(w)
		if len(r) <= minTermRunes {
			continue
		}
		for _, sub := range []string{string(r[1:]), string(r[:len(r)-1])} {
			super[sub] = max(super[sub], m)
		}
	}
	var out []gram
	for s, n := range df {
		if n < minGramDocs || super[s]*5 >= n*4 {
			continue
		}
		out = append(out, gram{term: s, context: ctx[s], docs: n})
	}
	sortGrams(out)
	return out
}

// sortGrams orders mined grams by the number of documents naming them,
// most first, then by term.
func sortGrams(g []gram) {
	sort.Slice(g, func(i, j int) bool {
		if g[i].docs != g[j].docs {
			return g[i].docs > g[j].docs
		}
		return g[i].term < g[j].term
	})
}

// hanRuns splits s into its runs of Han characters.
func hanRuns(s string) [][]rune {
	var out [][]rune
	var cur []rune
	for _, r := range s {
		if unicode.Is(unicode.Han, r) {
			cur = append(cur, r)
			continue
		}
		if len(cur) > 0 {
			out = append(out, cur)
			cur = nil
		}
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}

func clipRunes(s string, n int) string {
	r := []rune(strings.TrimSpace(s))
	if len(r) > n {
		return string(r[:n]) + "…"
	}
	return string(r)
}

// PinyinOf returns the pinyin forms of a Han term: the reading of
// go-pinyin's dictionary with tone marks, spaced ("kuí gāng"), then each
// reading without tones (every combination of a polyphonic character's
// readings, the dictionary's first, at most maxPinyinReadings), spaced and
// joined ("kui gang", "kuigang"). A single character gets none: one
// syllable ("he", "an", "long") is too often an English word.
func PinyinOf(term string) []string {
	if utf8.RuneCountInString(term) < minTermRunes {
		return nil
	}
	tone := pinyin.NewArgs()
	tone.Style = pinyin.Tone
	toned := pinyin.Pinyin(term, tone)
	plain := pinyin.NewArgs()
	plain.Heteronym = true
	alts := pinyin.Pinyin(term, plain)
	if len(alts) != utf8.RuneCountInString(term) || len(toned) != len(alts) {
		return nil // a character the dictionary lacks
	}
	var first []string
	for _, t := range toned {
		if len(t) == 0 {
			return nil
		}
		first = append(first, t[0])
	}
	out := []string{strings.Join(first, " ")}
	readings := [][]string{{}}
	for _, a := range alts {
		var next [][]string
		for _, r := range readings {
			for _, syl := range a {
				if len(next) == maxPinyinReadings {
					break
				}
				next = append(next, append(append([]string(nil), r...), syl))
			}
		}
		readings = next
	}
	for _, r := range readings {
		out = append(out, strings.Join(r, " "), strings.Join(r, ""))
	}
	return dedupe(out)
}

func dedupe(xs []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, x := range xs {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

// glossaryHeader heads the built glossary.
const glossaryHeader = "# Built by `vibe integrate` from the sources' headings and the extracted knowledge (from: mined),\n" +
	"# with a model's synonyms and English renderings when one is configured (from: model), with the theme's\n" +
	"# hand-kept knowledge/<theme>/glossary.yaml laid over it (from: hand, wins by term). Rewritten on every\n" +
	"# build: change knowledge/<theme>/glossary.yaml instead (docs/glossary.md).\n"

// readGlossaryFile reads a glossary file; a missing file is an empty
// glossary.
func readGlossaryFile(path string) (skills.Glossary, bool, error) {
	if path == "" {
		return skills.Glossary{}, false, nil
	}
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return skills.Glossary{}, false, nil
	}
	if err != nil {
		return skills.Glossary{}, false, err
	}
	g, err := skills.ParseGlossary(b, path)
	return g, err == nil, err
}

// markHand marks the entries of a hand-kept glossary as such.
func markHand(g skills.Glossary) skills.Glossary {
	out := skills.Glossary{Terms: make([]skills.GlossaryTerm, len(g.Terms))}
	for i, t := range g.Terms {
		t.From = skills.FromHand
		out.Terms[i] = t
	}
	return out
}

// writeGlossary writes the built glossary into the skill, leaving the file
// alone when its content is unchanged.
func writeGlossary(path string, g skills.Glossary) error {
	b, err := yaml.Marshal(g)
	if err != nil {
		return err
	}
	if old, err := os.ReadFile(path); err == nil && string(old) == glossaryHeader+string(b) {
		return nil
	}
	if err := os.MkdirAll(strings.TrimSuffix(path, "/glossary.yaml"), 0o755); err != nil {
		return err
	}
	return atomicfile.WriteFile(path, []byte(glossaryHeader+string(b)), 0o644)
}

// glossaryTermsOf lists the terms of g (each entry's term), for the
// SKILL.md's triggers and the prose facts.
func glossaryTermsOf(g skills.Glossary) []string {
	out := make([]string, 0, len(g.Terms))
	for _, t := range g.Terms {
		out = append(out, strings.TrimSpace(t.Term))
	}
	return out
}

// englishName names a theme built from Chinese sources for users who
// write English, offline: "In English: <theme> (<term>, <term>)." with the
// theme's name (its pinyin, capitalised, when it is Chinese) and the first
// English rendering, else the pinyin, of its two most used glossary terms
// (ks.terms, by how often the knowledge uses them).
func englishName(theme string, ks *knowledgeSet) string {
	name := theme
	if isHanOnly(theme) {
		if py := PinyinOf(theme); len(py) > 1 {
			name = titleWords(py[1])
		}
	}
	byTerm := map[string]skills.GlossaryTerm{}
	for _, e := range ks.glossary.Terms {
		byTerm[e.Term] = e
	}
	text := knowledgeText(ks)
	counts := map[string]int{}
	var terms []string
	for _, t := range ks.terms {
		if n := strings.Count(text, strings.ToLower(t)); n > 0 && utf8.RuneCountInString(t) >= minTermRunes && !strings.EqualFold(t, theme) {
			counts[t] = n
			terms = append(terms, t)
		}
	}
	sort.SliceStable(terms, func(i, j int) bool { return counts[terms[i]] > counts[terms[j]] })
	var shown []string
	for _, t := range terms {
		if len(shown) == 2 {
			break
		}
		e := byTerm[t]
		switch {
		case len(e.English) > 0:
			shown = append(shown, e.English[0])
		case len(e.Pinyin) > 1:
			shown = append(shown, titleWords(e.Pinyin[1]))
		}
	}
	if len(shown) == 0 {
		return "In English: " + name + "."
	}
	return "In English: " + name + " (" + strings.Join(shown, ", ") + ")."
}

// titleWords capitalises each word of s ("kui gang" is "Kui Gang").
func titleWords(s string) string {
	ws := strings.Fields(s)
	for i, w := range ws {
		r := []rune(w)
		r[0] = unicode.ToUpper(r[0])
		ws[i] = string(r)
	}
	return strings.Join(ws, " ")
}

// isHanOnly reports whether s is Han characters only.
func isHanOnly(s string) bool {
	for _, r := range s {
		if !unicode.Is(unicode.Han, r) {
			return false
		}
	}
	return s != ""
}

// procedureVerbs begin the name of a phase that is a step of the
// procedure ("identify the situation", "apply the policy", 收集出生信息),
// no term of the field.
var (
	procedureVerbsEN = map[string]bool{"identify": true, "apply": true, "collect": true, "gather": true, "determine": true, "assess": true, "check": true, "review": true, "analyse": true, "analyze": true, "compute": true, "calculate": true, "confirm": true, "verify": true, "clarify": true, "explain": true, "summarise": true, "summarize": true, "give": true, "understand": true, "establish": true, "evaluate": true, "decide": true, "respond": true, "recommend": true, "provide": true, "ask": true, "read": true, "find": true, "select": true, "choose": true, "classify": true, "prepare": true, "handle": true, "resolve": true, "compare": true, "interpret": true, "deliver": true, "write": true, "communicate": true, "escalate": true, "triage": true, "diagnose": true}
	procedureVerbsZH = []string{"收集", "判断", "确定", "分析", "计算", "识别", "输出", "检查", "核实", "核对", "确认", "评估", "给出", "查找", "了解", "应用",
		"解释", "总结", "回答", "提供", "整理", "生成", "展示", "选择", "匹配", "制定", "比较", "审查", "询问", "获取", "明确", "梳理", "归纳", "呈现", "扫描", "排查",
		"依规则"} // the offline SOP's one phase, 依规则作答
)

// isProcedureStep reports whether a phase name names a step of the
// procedure: it begins with a verb of doing (identify, apply, 收集,
// 判断), so it is no candidate term. A phase named for a term ("Paid
// parental leave", 用神) stays a candidate.
func isProcedureStep(name string) bool {
	for _, v := range procedureVerbsZH {
		if strings.HasPrefix(name, v) {
			return true
		}
	}
	first, _, _ := strings.Cut(strings.ToLower(name), " ")
	return procedureVerbsEN[strings.Trim(first, ".,:;()")]
}

// Terms run together in a discussion's topic (论将星华盖, 论刑冲会合,
// 论财官印绶): the topic is cut into parts of minPartRunes to maxPartRunes
// characters, each of them a term when every part is one the sources use
// on their own, outside the topic (minPartUses times), or a candidate of
// its own (another heading's term, a recurring phrase).
const (
	minPartRunes = 2
	maxPartRunes = 3
	minPartUses  = 2
)

// topicCuts returns the ways to cut a topic into parts of minPartRunes to
// maxPartRunes characters, fewest parts first.
func topicCuts(r []rune) [][]string {
	var out [][]string
	var walk func(i int, parts []string)
	walk = func(i int, parts []string) {
		if i == len(r) {
			out = append(out, append([]string(nil), parts...))
			return
		}
		if i > 0 && strings.ContainsRune(topicSeparators, r[i]) {
			walk(i+1, parts) // 论X与Y: 与 is no part of either
			return
		}
		for n := minPartRunes; n <= maxPartRunes && i+n <= len(r); n++ {
			if strings.ContainsAny(string(r[i:i+n]), topicSeparators) {
				break
			}
			walk(i+n, append(parts, string(r[i:i+n])))
		}
	}
	walk(0, nil)
	sort.SliceStable(out, func(i, j int) bool { return len(out[i]) < len(out[j]) })
	return out
}

// listMarks open and close an item of a list or a name set apart in the
// sources: 劫煞、亡神、六厄 or 〈空亡〉, as the books enumerate the terms of
// their field and never their words of prose (紧要, 高低, 成败).
const (
	listOpen  = "、〈《（(「【"
	listClose = "、〉》）)」】"
)

// countIn counts the occurrences of each of want in passages, and those of
// them set apart as an item of a list or a name (listMarks).
func countIn(passages []string, want map[string]bool) (uses, listed map[string]int) {
	longest := 0
	for w := range want {
		longest = max(longest, utf8.RuneCountInString(w))
	}
	uses, listed = map[string]int{}, map[string]int{}
	for _, p := range passages {
		rs := []rune(p)
		for i, r := range rs {
			if !unicode.Is(unicode.Han, r) {
				continue
			}
			for j := i + minTermRunes; j <= i+longest && j <= len(rs) && unicode.Is(unicode.Han, rs[j-1]); j++ {
				s := string(rs[i:j])
				if !want[s] {
					continue
				}
				uses[s]++
				if i > 0 && strings.ContainsRune(listOpen, rs[i-1]) || j < len(rs) && strings.ContainsRune(listClose, rs[j]) {
					listed[s]++
				}
			}
		}
	}
	return uses, listed
}

// topicSeparators join the terms of a topic (论X与Y): no part of a term.
const topicSeparators = "与及并"

// partStop are the characters that start or end no part of a topic: the
// function words of classical and modern prose (合而, 如何, 神能, 的煞 of
// 十干合而不合, 杂气如何取用, 四吉神能破格, 暗金的煞). Unlike gramStop they
// leave out the characters that are also nouns in a field's names (将 of
// 将星, 盖 of 华盖, 夫 of 伤夫, 要 of 紧要).
var partStop = map[rune]bool{}

// partNegation start no part: a topic's clause (无关, 有别, 不合), not a term.
const partNegation = "不无有非未莫勿"

func init() {
	for _, r := range "之乎者也而其以于则乃所此彼若如何即亦又且皆必是在为哉矣焉曰云故凡的了吗呢么这那个就都还很着过把被让既因虽但然仍只已尚更再犹可能" {
		partStop[r] = true
	}
}

// topicParts returns the terms a discussion's topic runs together: the cut
// of the topic (topicCuts) whose every part is a candidate of its own
// (known) or one the sources use outside the topic (uses, minPartUses
// times at least) and set apart as a term at least once (listed: an item
// of a list, a bracketed name), no part starting or ending with a function
// word (partStop), starting with a negation or being a number; of the cuts
// that qualify, the one of fewest parts, then the one whose least used
// part is used the most. None when no cut qualifies (杂气如何取用, 进交退伏,
// 相神紧要: 紧要 "important" is used, never listed).
func topicParts(topic string, uses, listed map[string]int, known func(string) bool) []string {
	var best []string
	bestMin := -1
	for _, cut := range topicCuts([]rune(topic)) {
		if best != nil && len(cut) > len(best) {
			break
		}
		least := int(^uint(0) >> 1)
		for _, p := range cut {
			r := []rune(p)
			if partStop[r[0]] || partStop[r[len(r)-1]] || strings.ContainsRune(partNegation, r[0]) || strings.Trim(p, numeralHan) == "" {
				least = -1
				break
			}
			n := uses[p] - uses[topic]*strings.Count(topic, p)
			if listed[p] == 0 {
				n = 0
			}
			if known(p) {
				n = max(n, minPartUses)
			}
			if n < minPartUses {
				least = -1
				break
			}
			least = min(least, n)
		}
		if least > bestMin {
			best, bestMin = cut, least
		}
	}
	if bestMin < 0 {
		return nil
	}
	return best
}
