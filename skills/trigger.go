package skills

import (
	"strings"
	"unicode"
)

// triggerStopWords are English words a trigger phrase may hold that do not
// have to be in the message ("temperature and time").
var triggerStopWords = map[string]bool{
	"a": true, "an": true, "the": true, "of": true, "and": true, "or": true, "to": true, "in": true,
	"on": true, "for": true, "with": true, "by": true, "at": true, "from": true, "as": true, "into": true,
	"about": true, "how": true, "what": true, "is": true, "are": true, "my": true, "your": true,
}

// MatchTrigger reports whether text mentions trigger. Case is ignored. A
// trigger's CJK runs must occur in text as they are (普洱 matches
// 普洱茶怎么泡). Its other words are matched as whole words, in any order,
// with plural and -ing/-ed endings ignored, and the trigger's small words
// (the, and, of…) need not be there: "green tea" matches "how hot for green
// teas?" and "Temperature and Time" matches "what time and temperature",
// while "tea" does not match "steam".
func MatchTrigger(text, trigger string) bool {
	runs, words := triggerParts(trigger)
	if len(runs) == 0 && len(words) == 0 {
		return false
	}
	low := strings.ToLower(text)
	for _, r := range runs {
		if !strings.Contains(low, r) {
			return false
		}
	}
	if len(words) == 0 {
		return true
	}
	_, have := triggerParts(low)
	in := make(map[string]bool, len(have))
	for _, w := range have {
		in[w] = true
	}
	for _, w := range words {
		if !in[w] {
			return false
		}
	}
	return true
}

// triggerSpecificity weighs a matched trigger: its CJK characters and its
// words, so that "black tea" tells more than "tea".
func triggerSpecificity(trigger string) int {
	runs, words := triggerParts(trigger)
	n := len(words)
	for _, r := range runs {
		n += len([]rune(r))
	}
	return n
}

// triggerParts splits lower-cased s into its runs of CJK characters and its
// other words (stemmed, small words left out unless there are only small
// words).
func triggerParts(s string) (runs, words []string) {
	s = strings.ToLower(s)
	var small []string
	var cur []rune
	cjk := false
	flush := func() {
		if len(cur) == 0 {
			return
		}
		switch w := string(cur); {
		case cjk:
			runs = append(runs, w)
		case triggerStopWords[w]:
			small = append(small, w)
		default:
			words = append(words, stem(w))
		}
		cur = cur[:0]
	}
	for _, r := range s {
		isCJK := unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul)
		switch {
		case isCJK:
			if !cjk {
				flush()
			}
			cjk = true
			cur = append(cur, r)
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			if cjk {
				flush()
			}
			cjk = false
			cur = append(cur, r)
		default:
			flush()
		}
	}
	flush()
	if len(runs) == 0 && len(words) == 0 {
		words = small
	}
	return runs, words
}

// Stem is stem for other packages: it strips the English endings a
// user's phrasing may add or leave out (teas -> tea, brewing -> brew).
func Stem(w string) string { return stem(w) }

// stem strips the English endings a user's phrasing may add or leave out:
// teas -> tea, brewing -> brew, steeped -> steep, leaves -> leave. An -ing
// or -ed form gets back the silent e its stripping took (silentE: giving ->
// give, taking -> take, ruled -> rule), so it meets its base form.
func stem(w string) string {
	switch n := len(w); {
	case n > 5 && strings.HasSuffix(w, "ing"):
		return silentE(w[:n-3])
	case n > 4 && strings.HasSuffix(w, "ed"):
		return silentE(w[:n-2])
	case n > 4 && strings.HasSuffix(w, "ies"):
		return w[:n-3] + "y"
	case n > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss"):
		return w[:n-1]
	}
	return w
}

// silentE returns the stem of an -ing or -ed form with the silent e its base
// form ends in: a stem of one syllable ending in a consonant, a vowel and a
// consonant other than w, x and y ("giv", "tak", "rul", "cod"), as the
// Porter stemmer restores it; others are left as they are ("brew", "cook",
// "eat", "open", "visit", "stopp").
func silentE(s string) string {
	n := len(s)
	if n < 3 || !isConsonant(s, n-1) || isConsonant(s, n-2) || !isConsonant(s, n-3) || strings.ContainsRune("wxy", rune(s[n-1])) {
		return s
	}
	// One syllable: no vowel before the last one's leading consonants.
	for i := n - 3; i >= 0; i-- {
		if !isConsonant(s, i) {
			return s
		}
	}
	return s + "e"
}

// isConsonant reports whether s[i] is a consonant: a letter other than a,
// e, i, o, u, and y after a vowel or first ("yes", "toy"); y after a
// consonant is a vowel ("cry").
func isConsonant(s string, i int) bool {
	switch c := s[i]; {
	case c < 'a' || c > 'z':
		return false
	case strings.IndexByte("aeiou", c) >= 0:
		return false
	case c == 'y':
		return i == 0 || !isConsonant(s, i-1)
	}
	return true
}
