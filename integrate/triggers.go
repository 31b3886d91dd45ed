package integrate

import (
	"path"
	"regexp"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/vibelife/vibe/skills"
)

// reNumbering strips chapter numbering from a heading so the topic remains:
// "Chapter 2. Method: Gongfu Brewing" -> "Method: Gongfu Brewing",
// "第二章 醒茶与润茶" -> "醒茶与润茶", "八、论用神" -> "论用神".
var reNumbering = regexp.MustCompile(`^(?i:(chapter|part|section)\s+[\dIVXLC]+[.:]?\s*|第[一二三四五六七八九十百千\d]+[章节回卷篇部]\s*|[一二三四五六七八九十百\d]+(\.\d+)*[.、．]?\s+|[一二三四五六七八九十百]+[、．.]\s*)`)

var reFileExt = regexp.MustCompile(`(?i)\.(md|markdown|txt|pdf|epub|docx|html?)$`)

// genericHeadings are section titles that name a kind of text, not a topic.
var genericHeadings = map[string]bool{
	"rules": true, "rule": true, "patterns": true, "pattern": true, "rules and patterns": true, "rules of thumb": true,
	"method": true, "methods": true, "introduction": true, "overview": true, "summary": true, "notes": true,
	"contents": true, "table of contents": true, "appendix": true, "preface": true, "index": true,
	"目录": true, "序": true, "序言": true, "前言": true, "凡例": true, "附录": true, "总论": true, "跋": true,
}

// cleanHeading strips chapter numbering, "Method: "/"Pattern: " prefixes and
// a file extension from a source segment, leaving its topic ("" when what
// is left is too short, too long, or generic).
func cleanHeading(s string) string {
	s = strings.TrimSpace(reNumbering.ReplaceAllString(strings.TrimSpace(s), ""))
	s = strings.TrimPrefix(strings.TrimPrefix(s, "Method: "), "Pattern: ")
	s = strings.TrimSpace(reFileExt.ReplaceAllString(s, ""))
	if n := utf8.RuneCountInString(s); n < 2 || n > 24 || genericHeadings[strings.ToLower(s)] {
		return ""
	}
	return s
}

// ranked counts strings, remembering the order they first appeared in.
type ranked struct {
	counts map[string]int
	first  map[string]int
}

func newRanked() *ranked { return &ranked{counts: map[string]int{}, first: map[string]int{}} }

func (r *ranked) add(s string, weight int) {
	if s == "" {
		return
	}
	if _, ok := r.first[s]; !ok {
		r.first[s] = len(r.first)
	}
	r.counts[s] += weight
}

// sorted lists the strings, most counted first, then in order of appearance.
func (r *ranked) sorted() []string {
	out := make([]string, 0, len(r.counts))
	for s := range r.counts {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool {
		if r.counts[out[i]] != r.counts[out[j]] {
			return r.counts[out[i]] > r.counts[out[j]]
		}
		return r.first[out[i]] < r.first[out[j]]
	})
	return out
}

// citations summarises what the rules cite: the works (the first segment of
// each rule's source) and the section topics (the later segments). A work
// title that contains a converted file's name ("三命通会卷前" for
// 三命通会.md) is called by the file's name.
func citations(ks *knowledgeSet) (works, topics *ranked) {
	var files []string
	if m := ks.rules.Meta; m != nil {
		for _, s := range m.Sources {
			files = append(files, strings.TrimSuffix(path.Base(s), path.Ext(s)))
		}
	}
	works, topics = newRanked(), newRanked()
	for _, r := range ks.rules.Rules.Core() {
		segs := strings.Split(r.Source, ">")
		title := strings.TrimSpace(reFileExt.ReplaceAllString(strings.TrimSpace(segs[0]), ""))
		for _, f := range files {
			if utf8.RuneCountInString(f) >= 2 && strings.Contains(title, f) {
				title = f
				break
			}
		}
		works.add(title, 1)
		for _, seg := range segs[1:] {
			topics.add(cleanHeading(seg), 1)
		}
	}
	return works, topics
}

// skillTriggers picks the words that should activate a skill, in the words
// users use: the theme; the triggers the model wrote, where one did
// (userTerm ones only); the theme's glossary terms the knowledge uses, most
// used first (用神, 格局), up to half the places; the key terms of the works
// the rules cite; the other glossary terms; then the terms of the section
// topics and the pattern names, most cited first. A runtime matches triggers against the
// user's message (skills.MatchTrigger: CJK runs as they are, other words as
// whole words in any order), so they are the terms a user would say
// ("green tea", "普洱", "用神"), not whole book titles ("Brewing Green
// Tea", "普洱茶冲泡要略") nor chapter titles ("论十干合而不合"), and never a
// single common English word a topic happens to be ("Water"), which would
// activate the skill for unrelated questions. A term already matched by an
// earlier trigger is left out.
func skillTriggers(theme string, ks *knowledgeSet, model []string, max int) []string {
	works, topics := citations(ks)
	var titles []string
	for _, w := range works.sorted() {
		if t := cleanHeading(w); t != "" {
			titles = append(titles, t)
		}
	}
	text := knowledgeText(ks)
	out := []string{theme}
	add := func(t string) {
		if t == "" || len(out) >= max {
			return
		}
		for _, o := range out {
			if skills.MatchTrigger(t, o) {
				return
			}
		}
		out = append(out, t)
	}
	for _, t := range model {
		if t = strings.TrimSpace(t); userTerm(t) {
			add(t)
		}
	}
	// A theme named in Chinese is named in pinyin too, for users who
	// write English ("Zi Wei Dou Shu" for 紫微斗数).
	if isHanOnly(theme) {
		if py := PinyinOf(theme); len(py) > 1 {
			add(titleWords(py[1]))
		}
	}
	// The theme's terms most used by the knowledge take up to half the
	// places before the works' names, the rest after them.
	tr := newRanked()
	for _, t := range ks.terms {
		if utf8.RuneCountInString(t) < 2 {
			continue
		}
		if n := strings.Count(text, strings.ToLower(t)); n > 0 {
			tr.add(t, n)
		}
	}
	terms := tr.sorted()
	for len(terms) > 0 && len(out) < max/2 {
		add(terms[0])
		terms = terms[1:]
	}
	wr := newRanked()
	for _, t := range titles {
		wr.add(workTerm(t, titles), works.counts[t])
	}
	for _, t := range wr.sorted() {
		add(t)
	}
	for _, t := range terms {
		add(t)
	}
	all := newRanked()
	for _, t := range topics.sorted() {
		for _, term := range topicTerms(t) {
			all.add(term, topics.counts[t])
		}
	}
	for _, p := range ks.pats.Patterns.QuickPatterns {
		for _, term := range topicTerms(cleanHeading(p.Name)) {
			all.add(term, 1)
		}
	}
	for _, t := range all.sorted() {
		add(t)
	}
	return out
}

// userTerm reports whether a trigger the model wrote is a term a user
// would type: a few words or up to eight Han characters, not a chapter
// title (论……).
func userTerm(t string) bool {
	if t == "" || strings.ContainsAny(t, "\n#》《") {
		return false
	}
	if hasHan(t) {
		n := utf8.RuneCountInString(t)
		return n >= 2 && n <= 8 && !(strings.HasPrefix(t, "论") && n > 3)
	}
	return len(strings.Fields(t)) <= 4
}

// knowledgeText is the text of the rules and patterns, lower-cased, in
// which glossary terms are looked up.
func knowledgeText(ks *knowledgeSet) string {
	var b strings.Builder
	for _, r := range ks.rules.Rules.Core() {
		b.WriteString(r.Condition + " " + r.Conclusion + " " + r.Action + "\n")
	}
	for _, p := range ks.pats.Patterns.QuickPatterns {
		b.WriteString(p.Name + " " + p.Signature + " " + p.Indication + "\n")
	}
	for _, p := range ks.pats.Patterns.RedFlags {
		b.WriteString(p.Signal + "\n")
	}
	return strings.ToLower(b.String())
}

// titleStopWords are English words that head or link a title without
// naming its subject.
var titleStopWords = map[string]bool{
	"a": true, "an": true, "the": true, "of": true, "and": true, "or": true, "to": true, "in": true,
	"on": true, "for": true, "with": true, "by": true, "at": true, "from": true, "about": true,
	"guide": true, "handbook": true, "manual": true, "introduction": true, "notes": true, "essays": true,
	"art": true, "book": true, "treatise": true, "complete": true, "practical": true, "essential": true,
	"principles": true, "basics": true, "primer": true,
}

// cjkGenre are endings of Chinese book titles that name the kind of book,
// not its subject (要略 "essentials", 指南 "guide").
var cjkGenre = []string{"要略", "简要", "概论", "指南", "入门", "大全", "全书", "通论", "精要", "要诀", "手册", "浅说", "详解", "通解", "纲要", "概要", "要义", "心法", "集成", "汇编"}

// workTerm returns the key term of a work's title among the titles of the
// other works cited: what is left of it once the words it shares with the
// others are gone. English: the leading words shared with another title,
// gerunds (Brewing, Reading) and title words (The Art of, A Guide to) are
// dropped and the rest lower-cased: "Brewing Green Tea" -> "green tea",
// "Brewing Oolong" -> "oolong". Chinese: a title of up to four characters
// is a name and stays whole (滴天髓); a longer one is cut before the first
// part it shares with another title or its genre ending, and loses a last
// character shared with another title when three or more remain:
// "普洱茶冲泡要略" beside "白茶冲泡简要" -> "普洱", and that one -> "白茶".
func workTerm(title string, titles []string) string {
	if hasHan(title) {
		return cjkWorkTerm(title, titles)
	}
	words := strings.Fields(strings.ToLower(title))
	shared := map[string]bool{}
	for _, o := range titles {
		if o == title || hasHan(o) {
			continue
		}
		for _, w := range strings.Fields(strings.ToLower(o)) {
			shared[w] = true
		}
	}
	i := 0
	for i < len(words)-1 && (shared[words[i]] || titleStopWords[words[i]] || (strings.HasSuffix(words[i], "ing") && len(words[i]) > 5)) {
		i++
	}
	j := len(words)
	for j > i+1 && titleStopWords[words[j-1]] {
		j--
	}
	if i >= j {
		return strings.ToLower(title)
	}
	return strings.Join(words[i:j], " ")
}

func cjkWorkTerm(title string, titles []string) string {
	r := []rune(title)
	if len(r) <= 4 {
		return title
	}
	cut := len(r)
	for _, o := range titles {
		if o == title || !hasHan(o) {
			continue
		}
		for i := 2; i+1 < cut; i++ { // the subject takes two characters at least
			if strings.Contains(o, string(r[i:i+2])) {
				cut = i
				break
			}
		}
	}
	head := string(r[:cut])
	for _, g := range cjkGenre {
		if h := strings.TrimSuffix(head, g); h != head && len([]rune(h)) >= 2 {
			head = h
			break
		}
	}
	hr := []rune(head)
	if len(hr) < 2 {
		return title
	}
	if len(hr) >= 3 {
		last := string(hr[len(hr)-1])
		for _, o := range titles {
			if o != title && strings.Contains(o, last) {
				return string(hr[:len(hr)-1])
			}
		}
	}
	return head
}

// topicTerms returns the trigger terms of a section topic or pattern name:
// a Chinese one without the 论 that opens an essay's title, split at
// 与/和/及/、 into its parts of two to four characters (醒茶与润茶 -> 醒茶,
// 润茶; 论正官 -> 正官; a chapter title such as 论十干合而不合 gives none);
// an English one lower-cased without its leading small words, and only
// when two or more words are left ("The temperature rule" -> "temperature
// rule"; not "Water").
func topicTerms(t string) []string {
	if t == "" {
		return nil
	}
	if hasHan(t) {
		if r := []rune(t); len(r) > 2 && r[0] == '论' {
			t = string(r[1:])
		}
		var out []string
		for _, p := range strings.FieldsFunc(t, func(r rune) bool { return strings.ContainsRune("与和及、，,／/·・ ", r) }) {
			if n := utf8.RuneCountInString(p); n >= 2 && n <= 4 {
				out = append(out, p)
			}
		}
		return out
	}
	words := strings.Fields(strings.ToLower(t))
	for len(words) > 0 && titleStopWords[words[0]] {
		words = words[1:]
	}
	if len(words) < 2 {
		return nil
	}
	return []string{strings.Join(words, " ")}
}

func hasHan(s string) bool {
	for _, r := range s {
		if unicode.Is(unicode.Han, r) {
			return true
		}
	}
	return false
}
