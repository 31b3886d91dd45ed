package integrate

import (
	"fmt"
	"regexp"
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
