package integrate

import (
	"path"
	"regexp"
	"sort"
	"strings"
	"unicode/utf8"
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
	for _, r := range ks.rules.Rules.All() {
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

// skillTriggers picks the words that should activate a skill: the theme,
// then the works and topics the rules cite (a work weighs three citations),
// most cited first, then pattern names. A runtime matches triggers against
// the user's message, so they are short phrases, not procedure names.
func skillTriggers(theme string, ks *knowledgeSet, max int) []string {
	works, topics := citations(ks)
	all := newRanked()
	for _, w := range works.sorted() {
		if t := cleanHeading(w); t != "" {
			all.add(t, 3*works.counts[w])
		}
	}
	for _, t := range topics.sorted() {
		all.add(t, topics.counts[t])
	}
	for _, p := range ks.pats.Patterns.QuickPatterns {
		all.add(cleanHeading(p.Name), 1)
	}
	out := []string{theme}
	for _, t := range all.sorted() {
		if len(out) >= max {
			break
		}
		if !strings.EqualFold(t, theme) {
			out = append(out, t)
		}
	}
	return out
}
