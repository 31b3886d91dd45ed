package integrate

import (
	"regexp"
	"strings"
	"unicode"
)

// English terms (docs/glossary.md). Sources in English get their terms
// mined the same way as Chinese ones, by words instead of characters:
//   - heading terms: "SALIENT POINTS ABOUT PAWNS" is "salient points about
//     pawns", "16. QUEEN AGAINST ROOK" is "queen against rook", "THE
//     OPENING" is "opening"; a title in notation or figures ("5. PxP QxP"),
//     a sentence or a question is none;
//   - recurring phrases: two or three words, neither end a function word,
//     found in at least minGramDocs rules, patterns or headings ("passed
//     pawn", "travel card", "HR Links");
//   - recurring names: a capitalised word inside sentences ("Bishop",
//     "Concur", "FMLA") found in at least minGramDocs of them.

// Sizes of an English term: at most maxTermWords words, each of a letter
// or more, the term minTermLetters letters at least.
const (
	maxTermWords   = 5
	minTermLetters = 4
)

// enHeadingNumber matches what numbers an English heading: "16. ",
// "IV. ", "CHAPTER X", "PART I.", "BOOK 2:", "EXAMPLE 39.--", "Section 3 -".
var enHeadingNumber = regexp.MustCompile(`(?i)^(?:(?:chapter|part|book|section|example|lesson|appendix|article|rule|step)\s+(?:[0-9]+|[ivxlc]+)\b[.:)]*(?:\s*-+\s*)?|[0-9]+(?:\.[0-9]+)*[.):]?\s+|[ivxlc]+[.)]\s+|[a-z][.)]\s+)`)

// enGenericHeading are titles that name no topic of the theme.
var enGenericHeading = map[string]bool{
	"introduction": true, "preface": true, "contents": true, "index": true, "notes": true, "note": true, "summary": true,
	"conclusion": true, "overview": true, "examples": true, "example": true, "appendix": true, "glossary": true,
	"references": true, "resources": true, "faq": true, "questions": true, "background": true, "part": true, "chapter": true,
	"more information": true, "related": true, "see also": true, "next steps": true, "getting started": true,
	"collect": true, "output": true, "page": true, "information": true, "diagram": true, "diagrams": true, "edition": true,
	"e-text": true, "license": true, "licence": true, "gutenberg": true, "acknowledgements": true,
}

// enFunction are English words that neither begin nor end a term.
var enFunction = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`a an the of and or to in on at for with by from as into onto over under about against between
		is are was were be been being has have had do does did will would shall should can could may might must need
		not no nor but if then than when while once unless until because so that this these those such which who whom whose what how why where
		it its he she they them his her their you your we our us i me my one ones there here all any each every some more most other
		very also only just even still again first second new same own many much few up out off down away back
		therefore thus hence however now then yet perhaps indeed
		s t e g i.e etc vs viz`) {
		enFunction[w] = true
	}
}

// enTermWords returns the words of s as a term's words: letters (an
// apostrophe or hyphen inside), or nil when a token is in figures or
// notation (a digit, a one-letter word other than "a").
func enTermWords(s string) []string {
	var out []string
	for _, f := range strings.Fields(s) {
		f = strings.Trim(f, ".,;:!()[]{}\"'“”‘’*_`")
		if f == "" || f == "-" || f == "--" || f == "&" {
			continue
		}
		for _, r := range f {
			if !unicode.IsLetter(r) && r != '\'' && r != '’' && r != '-' {
				return nil
			}
		}
		if len([]rune(f)) == 1 && !strings.EqualFold(f, "a") {
			return nil
		}
		out = append(out, f)
	}
	return out
}

// enTermCase lower-cases a term's word unless it is an acronym or a
// name written with capitals inside ("HR", "AdTrav", "PPL").
func enTermCase(w string) string {
	rs := []rune(w)
	upper := 0
	for _, r := range rs {
		if unicode.IsUpper(r) {
			upper++
		}
	}
	if len(rs) <= 4 && upper == len(rs) || upper > 1 && upper < len(rs) {
		return w
	}
	return strings.ToLower(w)
}

// enTermOf returns the term words name, trimmed of function words at
// either end; "" when none is left, when it is too long or too short.
func enTermOf(words []string) string {
	for len(words) > 0 && enFunction[strings.ToLower(words[0])] {
		words = words[1:]
	}
	for len(words) > 0 && enFunction[strings.ToLower(words[len(words)-1])] {
		words = words[:len(words)-1]
	}
	if len(words) == 0 || len(words) > maxTermWords {
		return ""
	}
	// A title in capitals ("CONTROL OF THE CENTRE") is lower-cased whole;
	// otherwise an acronym or a name with capitals inside keeps them.
	caps := true
	for _, w := range words {
		caps = caps && strings.ToUpper(w) == w
	}
	out := make([]string, len(words))
	letters := 0
	for i, w := range words {
		if notation(w) || enGenericHeading[strings.ToLower(w)] && i == len(words)-1 && len(words) > 1 {
			return "" // "BxKt", "QxKPch"; "translator's preface"
		}
		if caps && len(words) > 1 || caps && len([]rune(w)) > 4 {
			out[i] = strings.ToLower(w)
		} else {
			out[i] = enTermCase(w)
		}
		letters += len([]rune(w))
	}
	t := strings.Join(out, " ")
	if letters < minTermLetters && !(len(words) == 1 && out[0] != strings.ToLower(out[0])) {
		return ""
	}
	return t
}

// notation reports a word in mixed case with no run of three lower-case
// letters: a move or a square in notation ("BxKt", "QxKPch", "PxP"), not
// a name ("AdTrav", "McDonald").
func notation(w string) bool {
	upper, lower, run, maxRun := 0, 0, 0, 0
	for _, r := range w {
		switch {
		case unicode.IsUpper(r):
			upper++
			run = 0
		case unicode.IsLower(r):
			lower++
			run++
			maxRun = max(maxRun, run)
		default:
			run = 0
		}
	}
	return upper > 0 && lower > 0 && maxRun < 3 && upper+lower <= 7 && !(upper == 1 && unicode.IsUpper([]rune(w)[0]))
}

// termOfHeadingEN returns the term an English heading title names, or ""
// when the title is no term (notation, a sentence, a question, a generic
// title).
func termOfHeadingEN(h string) string {
	h = strings.TrimSpace(h)
	for {
		t := strings.TrimSpace(enHeadingNumber.ReplaceAllString(h, ""))
		if t == h {
			break
		}
		h = t
	}
	if i := strings.IndexAny(h, "([{"); i > 0 {
		h = strings.TrimSpace(h[:i])
	}
	if h == "" || strings.ContainsAny(h, "?!") || strings.Count(h, ",") > 1 {
		return ""
	}
	for _, r := range h {
		if unicode.Is(unicode.Han, r) {
			// A Chinese title termOfHeading found no term in (论将星华盖,
			// 论日为主) is none: kept whole, it named nothing a question
			// asks (hua gai).
			return ""
		}
	}
	if i := strings.Index(h, "--"); i >= 0 {
		return "" // "The ending Rook and King against King." after a dash: a description
	}
	words := enTermWords(h)
	if len(words) == 0 {
		return ""
	}
	for _, w := range words {
		switch strings.ToLower(w) {
		case "is", "are", "was", "were", "how", "what", "why", "when", "where", "who", "do", "does", "can", "should", "you", "your", "we", "i":
			return "" // a sentence or a question
		}
	}
	for _, w := range words {
		switch strings.ToLower(w) {
		case "e-text", "gutenberg", "edition", "license", "licence", "ebook":
			return "" // about the file, not the theme
		}
	}
	if strings.ToUpper(h) == h {
		// A title in capitals: "GAME" is a word, not an acronym.
		for i := range words {
			words[i] = strings.ToLower(words[i])
		}
	}
	t := enTermOf(words)
	if enGenericHeading[strings.ToLower(t)] {
		return ""
	}
	return t
}

// isEnglishTerm reports whether a title or name is English text a term
// can be made of.
func isEnglishTerm(s string) bool {
	has := false
	for _, r := range s {
		if unicode.Is(unicode.Han, r) {
			return false
		}
		has = has || unicode.IsLetter(r)
	}
	return has
}

// recurringEnglish returns the phrases of two or three words (neither end
// a function word) and the capitalised names found in at least minGramDocs
// of docs, a phrase found nearly only inside a longer one left for it.
func recurringEnglish(docs []string) []gram {
	df := map[string]int{}
	ctx := map[string]string{}
	names := map[string]int{} // capitalised inside a sentence
	for _, d := range docs {
		seen := map[string]bool{}
		note := func(s string) {
			if !seen[s] {
				seen[s] = true
				df[s]++
				if _, ok := ctx[s]; !ok {
					ctx[s] = clipRunes(d, 60)
				}
			}
		}
		for _, run := range enRuns(d) {
			for i := range run {
				w := run[i]
				if i > 0 && unicode.IsUpper([]rune(w)[0]) && !enFunction[strings.ToLower(w)] && len([]rune(w)) >= 2 {
					if t := enTermOf([]string{w}); t != "" && !seen["\x00"+t] {
						seen["\x00"+t] = true
						names[t]++
						if _, ok := ctx[t]; !ok {
							ctx[t] = clipRunes(d, 60)
						}
					}
				}
				for n := 2; n <= 3 && i+n <= len(run); n++ {
					ws := run[i : i+n]
					if enFunction[strings.ToLower(ws[0])] || enFunction[strings.ToLower(ws[n-1])] {
						continue
					}
					if t := enTermOf(ws); t != "" && strings.Contains(t, " ") {
						note(t)
					}
				}
			}
		}
	}
	super := map[string]int{}
	for w, m := range df {
		ws := strings.Fields(w)
		if len(ws) < 3 {
			continue
		}
		for _, sub := range []string{strings.Join(ws[1:], " "), strings.Join(ws[:len(ws)-1], " ")} {
			super[sub] = max(super[sub], m)
		}
	}
	var out []gram
	for s, n := range df {
		if n >= minGramDocs && super[s]*5 < n*4 {
			out = append(out, gram{term: s, context: ctx[s], docs: n})
		}
	}
	for s, n := range names {
		if n >= minGramDocs && df[s] == 0 {
			out = append(out, gram{term: s, context: ctx[s], docs: n})
		}
	}
	sortGrams(out)
	return out
}

// enRuns splits English text into runs of term words: a run ends at
// punctuation, a figure, notation or a non-Latin character.
func enRuns(s string) [][]string {
	var out [][]string
	var cur []string
	end := func() {
		if len(cur) > 0 {
			out = append(out, cur)
			cur = nil
		}
	}
	for _, f := range strings.Fields(s) {
		stop := strings.ContainsAny(f, ".,;:!?()[]{}\"“”")
		w := enTermWords(f)
		if len(w) != 1 {
			end()
			continue
		}
		cur = append(cur, w[0])
		if stop {
			end()
		}
	}
	end()
	return out
}
