package integrate

import (
	"regexp"
	"strings"
	"unicode"
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
