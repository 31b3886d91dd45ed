package integrate

import (
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

// skillTriggers picks the words that should activate a skill: the theme,
// then the topics the cited sources are about (their titles and section
// headings, most cited first), then pattern names. A runtime matches
// triggers against the user's message, so they are short phrases, not
// procedure names.
func skillTriggers(theme string, ks *knowledgeSet, max int) []string {
	counts := map[string]int{}
	first := map[string]int{}
	order := 0
	add := func(s string, weight int) {
		s = strings.TrimSpace(reNumbering.ReplaceAllString(strings.TrimSpace(s), ""))
		s = strings.TrimPrefix(strings.TrimPrefix(s, "Method: "), "Pattern: ")
		s = reFileExt.ReplaceAllString(s, "")
		n := utf8.RuneCountInString(s)
		if n < 2 || n > 24 || strings.EqualFold(s, "目录") {
			return
		}
		if _, ok := first[s]; !ok {
			first[s] = order
			order++
		}
		counts[s] += weight
	}
	for _, r := range ks.rules.Rules.All() {
		for i, seg := range strings.Split(r.Source, ">") {
			w := 1
			if i == 0 {
				w = 3
			}
			add(seg, w)
		}
	}
	for _, p := range ks.pats.Patterns.QuickPatterns {
		add(p.Name, 1)
	}
	var topics []string
	for s := range counts {
		topics = append(topics, s)
	}
	sort.Slice(topics, func(i, j int) bool {
		if counts[topics[i]] != counts[topics[j]] {
			return counts[topics[i]] > counts[topics[j]]
		}
		return first[topics[i]] < first[topics[j]]
	})
	out := []string{theme}
	for _, t := range topics {
		if len(out) >= max {
			break
		}
		if !strings.EqualFold(t, theme) {
			out = append(out, t)
		}
	}
	return out
}
