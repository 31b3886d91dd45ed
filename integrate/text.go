package integrate

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// normalizeSpace collapses every run of white space to one space.
func normalizeSpace(s string) string { return strings.Join(strings.Fields(s), " ") }

// quoteOccurs reports whether quote occurs in text, white space normalised.
// Between CJK characters line breaks carry no meaning, so a second comparison
// ignores white space altogether.
func quoteOccurs(quote, text string) bool {
	q := normalizeSpace(quote)
	if q == "" {
		return false
	}
	if strings.Contains(normalizeSpace(text), q) {
		return true
	}
	strip := func(s string) string {
		return strings.Map(func(r rune) rune {
			if unicode.IsSpace(r) {
				return -1
			}
			return r
		}, s)
	}
	return strings.Contains(strip(text), strip(quote))
}

// grams returns the comparison units of s, lower-cased, punctuation and
// spaces dropped: character bigrams inside runs of CJK (or other unspaced)
// script, and whole words for Latin-like scripts, so the measure works for
// both.
func grams(s string) map[string]int {
	out := map[string]int{}
	var run []rune
	latin := false
	flush := func() {
		if len(run) == 0 {
			return
		}
		if latin || len(run) == 1 {
			out[string(run)]++
		} else {
			for i := 0; i+1 < len(run); i++ {
				out[string(run[i:i+2])]++
			}
		}
		run = run[:0]
	}
	for _, r := range strings.ToLower(s) {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			flush()
			continue
		}
		l := r < 0x2E80 // below the CJK blocks: a spaced script
		if len(run) > 0 && l != latin {
			flush()
		}
		latin = l
		run = append(run, r)
	}
	flush()
	return out
}

// containment is the share of claim's bigrams that occur in source.
func containment(claim, source string) float64 {
	return containmentOf(grams(claim), grams(source))
}

// containmentOf is containment over precomputed grams.
func containmentOf(c, s map[string]int) float64 {
	if len(c) == 0 {
		return 0
	}
	hit, total := 0, 0
	for g, n := range c {
		total += n
		if m := s[g]; m > 0 {
			hit += min(n, m)
		}
	}
	return float64(hit) / float64(total)
}

// dice is the Sørensen–Dice similarity of two texts' bigram multisets.
func dice(a, b string) float64 {
	ga, gb := grams(a), grams(b)
	na, nb, inter := 0, 0, 0
	for g, n := range ga {
		na += n
		inter += min(n, gb[g])
	}
	for _, n := range gb {
		nb += n
	}
	if na+nb == 0 {
		return 0
	}
	return 2 * float64(inter) / float64(na+nb)
}

var (
	negZH = []string{"不", "非", "无", "忌", "勿", "莫", "未"}
	negEN = regexp.MustCompile(`(?i)\b(not|never|no|avoid|don't|cannot|mustn't|shouldn't)\b`)
)

// negated reports whether s carries a negation cue.
func negated(s string) bool {
	for _, c := range negZH {
		if strings.Contains(s, c) {
			return true
		}
	}
	return negEN.MatchString(s)
}

// stripNegation removes negation cues, so "宜用火" and "忌用火" compare equal.
func stripNegation(s string) string {
	for _, c := range append(negZH, "宜", "必", "则") {
		s = strings.ReplaceAll(s, c, "")
	}
	s = negEN.ReplaceAllString(s, "")
	return regexp.MustCompile(`(?i)\b(must|should|always|then)\b`).ReplaceAllString(s, "")
}

// letters returns the comparison units of s for a paraphrase: every
// character of CJK (or other unspaced) script on its own, and whole words
// of Latin-like scripts, lower-cased, punctuation and spaces dropped.
// Classical Chinese paraphrases keep the source's characters but not their
// order or their function words, which bigrams miss.
func letters(s string) map[string]int {
	out := map[string]int{}
	var word []rune
	flush := func() {
		if len(word) > 0 {
			out[string(word)]++
			word = word[:0]
		}
	}
	for _, r := range strings.ToLower(s) {
		switch {
		case !unicode.IsLetter(r) && !unicode.IsDigit(r):
			flush()
		case r >= 0x2E80:
			flush()
			out[string(r)]++
		default:
			word = append(word, r)
		}
	}
	flush()
	return out
}

// letterContainment is the share of claim's letters (characters of CJK,
// words of Latin script) that occur in source.
func letterContainment(claim, source string) float64 {
	return containmentOf(letters(claim), letters(source))
}

// negCues are the negations of Chinese.
const negCues = "不非无勿莫未毋弗"

// hanClauses cuts s at every character that is not a letter or a digit
// and keeps the clauses holding Chinese.
func hanClauses(s string) []string {
	var out []string
	for _, c := range strings.FieldsFunc(s, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		for _, r := range c {
			if unicode.Is(unicode.Han, r) {
				out = append(out, c)
				break
			}
		}
	}
	return out
}

// affirming are negated phrases that affirm (无二法: the same method).
var affirming = strings.NewReplacer("无二", "同", "无异", "同", "不异", "同", "无别", "同", "不殊", "同", "无不", "皆", "莫不", "皆")

// rhetorical reports whether a source clause is a rhetorical question
// (可乎, 安……哉), whose polarity is the opposite of its words.
func rhetorical(c string) bool {
	r, _ := utf8.DecodeLastRuneInString(c)
	return strings.ContainsRune("乎耶邪欤哉", r) || strings.HasPrefix(c, "安") || strings.HasPrefix(c, "岂")
}

// reportedView reports whether a source clause's negation governs a verb
// of thinking (不以为, 不知, 不问, 不识): such a clause tells what someone
// fails to think, often the view the author refutes (不以为水火通根身库，
// 甚至求刑冲开之。此种谬论), not that the thing is not so.
func reportedView(c string) bool {
	for _, p := range []string{"不以为", "不知", "不问", "不识"} {
		if strings.Contains(c, p) {
			return true
		}
	}
	return false
}

// negatedClause reports whether a clause holds an odd number of
// negations (不不 cancels out; 无不 and 无二 affirm).
func negatedClause(c string) bool {
	c = affirming.Replace(c)
	n := 0
	for _, r := range c {
		if strings.ContainsRune(negCues, r) {
			n++
		}
	}
	return n%2 == 1
}

// Negation characters that are names: 未 is also the eighth earthly
// branch (丁未, 辰戌丑未, 命在未, 羊酉陀未夹忌), and a theme's glossary holds
// names with 未, 非, 不, 无 or English no/not in them. nameVocab masks them
// in claim and source alike, so only a real negation counts.
const (
	stems    = "甲乙丙丁戊己庚辛壬癸"
	branches = "子丑寅卯辰巳午未申酉戌亥"
	// maskRune stands in for a negation character that is part of a
	// name: a Han letter (so clauses are not cut there) that no text uses.
	maskRune = '㐀'
)

// notBefore are the words 未 negates (未必, 未能, 未见): before them it is
// "not yet", whatever surrounds it.
const notBefore = "必能可曾尝免及始知见得有为敢肯足尽全遂尽识闻经"

// branchWei reports whether rs[i], a 未, is the earthly branch: after a
// stem (丁未), beside another branch (午未, 亥卯未), after a place verb
// (在未, 坐未), before a calendar word (未月, 未土, 未宫), or two characters
// from a branch in a parallel listing (羊酉陀未); not before a word 未
// negates (未必, 未见), unless a stem makes it a pair.
func branchWei(rs []rune, i int) bool {
	at := func(j int) rune {
		if j < 0 || j >= len(rs) {
			return 0
		}
		return rs[j]
	}
	prev, next := at(i-1), at(i+1)
	if prev != 0 && strings.ContainsRune(stems, prev) {
		return true
	}
	if next != 0 && strings.ContainsRune(notBefore, next) || prev != 0 && strings.ContainsRune("尚犹并亦殊从既仍", prev) {
		return false
	}
	isBranch := func(r rune) bool { return r != 0 && r != '未' && strings.ContainsRune(branches, r) }
	switch {
	case isBranch(prev) || isBranch(next):
		return true
	case prev != 0 && strings.ContainsRune("在坐居临入到落见逢遇支", prev):
		return true
	case next != 0 && strings.ContainsRune("月日时年宫土库位支山向", next):
		return true
	case isBranch(at(i-2)) && unicode.Is(unicode.Han, prev) || isBranch(at(i+2)) && unicode.Is(unicode.Han, next):
		return true
	}
	return false
}

// nameVocab is a theme's names that hold a negation (from its glossary:
// the terms, aliases and English renderings a person or a model wrote, not
// the mined phrases, which include 不作 and 不得), longest first.
type nameVocab struct {
	han []string
	en  []*regexp.Regexp
}

var negWordEN = regexp.MustCompile(`(?i)\b(no|not|never|non)\b`)

// newNameVocab keeps the names of terms that hold a negation cue.
func newNameVocab(names []string) *nameVocab {
	v := &nameVocab{}
	seen := map[string]bool{}
	for _, n := range names {
		n = strings.TrimSpace(n)
		if n == "" || seen[n] {
			continue
		}
		seen[n] = true
		if isHanText(n) {
			if strings.ContainsAny(n, negCues) && runeCount(n) >= 2 {
				v.han = append(v.han, n)
			}
			continue
		}
		if negWordEN.MatchString(n) {
			v.en = append(v.en, regexp.MustCompile(`(?i)\b`+regexp.QuoteMeta(n)+`\b`))
		}
	}
	sort.Slice(v.han, func(i, j int) bool { return runeCount(v.han[i]) > runeCount(v.han[j]) })
	return v
}

func isHanText(s string) bool {
	for _, r := range s {
		if unicode.Is(unicode.Han, r) {
			return true
		}
	}
	return false
}

func runeCount(s string) int { return utf8.RuneCountInString(s) }

// mask replaces the negation characters of names in s (the theme's names,
// and 未 where it is a branch) with maskRune, and the no/not of English
// names with a letter, so neither reads as a negation. A nil vocabulary
// masks the branches only.
func (v *nameVocab) mask(s string) string {
	if v != nil {
		for _, n := range v.han {
			if strings.Contains(s, n) {
				s = strings.ReplaceAll(s, n, strings.Map(func(r rune) rune {
					if strings.ContainsRune(negCues, r) {
						return maskRune
					}
					return r
				}, n))
			}
		}
		for _, re := range v.en {
			s = re.ReplaceAllStringFunc(s, func(m string) string {
				return negWordEN.ReplaceAllStringFunc(m, func(w string) string { return strings.Repeat("x", len(w)) })
			})
		}
	}
	if !strings.ContainsRune(s, '未') {
		return s
	}
	rs := []rune(s)
	for i, r := range rs {
		if r == '未' && branchWei(rs, i) {
			rs[i] = maskRune
		}
	}
	return string(rs)
}

// reversal reports how a Chinese claim turns round what its source says,
// or "" when it keeps the source's polarity. Each clause of the claim is
// aligned with the source clauses sharing the most of its characters
// (negations left out); when some share at least minAligned of them and
// every such clause is negated where the claim's is not (or the other way
// round), the claim reverses its source. Clauses of fewer than three
// characters are too short to align. Latin-script claims are not
// judged here (the embedder and the judge are).
func reversal(claim, source string) string {
	src := hanClauses(source)
	sets := make([]map[rune]bool, len(src))
	for i, c := range src {
		sets[i] = map[rune]bool{}
		for _, r := range c {
			sets[i][r] = true
		}
	}
	flat := strings.Join(strings.Fields(source), "")
	for _, cc := range hanClauses(claim) {
		// A clause quoted verbatim keeps the polarity of the words
		// before it: 金木生旺而克破 of 若金木生旺而克破则不然 is not negated.
		// It drops a negation only when every occurrence follows one.
		if strings.Contains(flat, cc) {
			if !negatedClause(cc) {
				negatedEverywhere, prev := true, rune(0)
				for rest := flat; ; {
					i := strings.Index(rest, cc)
					if i < 0 {
						break
					}
					prev, _ = utf8.DecodeLastRuneInString(rest[:i])
					if !strings.ContainsRune(negCues, prev) {
						negatedEverywhere = false
						break
					}
					rest = rest[i+len(cc):]
				}
				if negatedEverywhere {
					return fmt.Sprintf("%q drops the negation of the source (%q)", cc, string(prev)+cc)
				}
			}
			continue
		}
		var rs []rune
		for _, r := range cc {
			if !strings.ContainsRune(negCues, r) {
				rs = append(rs, r)
			}
		}
		if len(rs) < 3 {
			continue
		}
		best, agree, match := 0.0, false, ""
		for i, set := range sets {
			hit := 0
			for _, r := range rs {
				if set[r] {
					hit++
				}
			}
			f := float64(hit) / float64(len(rs))
			same := negatedClause(src[i]) == negatedClause(cc) || rhetorical(src[i]) || reportedView(src[i])
			if f >= minAligned && same {
				agree = true
			}
			if f > best {
				best, match = f, src[i]
			}
		}
		if best >= minAligned && !agree {
			if negatedClause(cc) {
				return fmt.Sprintf("%q negates what the source says (%q)", cc, match)
			}
			return fmt.Sprintf("%q drops the negation of the source (%q)", cc, match)
		}
	}
	return ""
}

// minAligned is the share of a claim clause's characters a source clause
// must hold for reversal to compare their polarity.
const minAligned = 0.8
