package extract

import (
	"regexp"
	"slices"
	"strings"
	"unicode"

	"github.com/vibelife/vibe/chunk"
)

// English rules whose subject the sentence leaves to its section.
//
// A policy or a manual states most of its rules to the reader, or leaves
// the subject to its heading: "You can receive 15 Military Leave days each
// year…" under "Military leave", "May only be reimbursable if travel
// involves at least 4 consecutive nights" under "Laundry expenses", "This
// reduced rate is always 75% of normal M&IE" under "Meals and Incidental
// Expenses". enRule refuses them (the reader, a pronoun or nothing is no
// condition): on the blind travel-leave theme the answering sentence of 4
// of the 9 dev rule questions it missed was of this kind. enSectionRule
// reads them with the section's topic as the condition, as a Chinese rule
// carries its heading's topic (ruleCondition); a purpose clause ("To
// request over 80 hours of LWOP, you must…") is the situation itself, and
// a subject every member of which the statement binds ("All federal
// employees … accrue four hours of sick leave per pay period") is the
// condition, as it is.

var (
	// enReaderModal is a statement to the reader: an optional purpose
	// clause, an optional "The rule is that" and a short adverbial, then
	// "you" and a modal or a deontic "are".
	enReaderModal = regexp.MustCompile(`(?i)^(?:(?:the|a) (?:rule|principle|law|policy) (?:is|says),? that,? )?(?:(?:to|in order to) ([^,;:]{6,80}), )?(?:(?:at any (?:time|moment)|in (?:this|that|such a) case|in general|generally|normally|usually|otherwise|then|also|only|however),? )?you (can not|cannot|can't|can|may not|may|must not|must|should not|should|need to|needn't|do not need to|don't need to|have to|are (?:not )?(?:allowed|required|entitled|eligible|expected|permitted|responsible)|will (?:not )?(?:receive|get|be))\b\s*(.*)$`)
	// enBareModal opens a statement whose subject its section names (a
	// list item or a table cell): "May only be reimbursable if…".
	enBareModal = regexp.MustCompile(`^(May not|May|Must not|Must|Cannot|Can|Should not|Should|Is not|Is|Are not|Are) (.*)$`)
	// enDemonstrative opens a statement about "this rate", "these
	// expenses": what they are, the section says.
	// Only a statement that binds or measures: "This reduced rate is
	// always 75% of normal M&IE", not "This line of thought is wrong".
	enDemonstrative = regexp.MustCompile(`^(?:This|These|Such) ((?:[\w&'-]+ ){0,3}?[\w&'-]+) ((?:is|are) (?:always|never|only|not allowed|not permitted|required|limited)|must not|must|may not|may|cannot|should not|should|always|never)\b (.*)$`)
	// enQuantified is a statement of every member of a class, its verb
	// after an aside ("All federal employees, no matter how long they have
	// worked in government, accrue four hours of sick leave per pay
	// period") or an auxiliary ("Each traveler must…").
	enQuantified = regexp.MustCompile(`^((?:All|Every|Each) (?:[\w&'-]+ ){0,4}?[\w&'-]+)(?:(, [^,]{3,80},) ([a-z]+)|( [a-z]+))\b (.*)$`)
	// enPolicyVerb is a statement of when a right or a balance runs
	// out or accrues: "Comp time expires one year (26 pay periods) after
	// it is earned".
	enPolicyVerb = regexp.MustCompile(`^((?:[A-Z][\w&'-]*)(?: [\w&'-]+){0,4}?) (expires|expire|lapses|lapse|accrues|accrue|is forfeited|are forfeited|is capped|are capped|is limited to|are limited to|is paid|are paid|is granted|are granted)\b (.*)$`)
)

// enDemonstrativeWord point back at the text before.
var enDemonstrativeWord = map[string]bool{"this": true, "these": true, "that": true, "those": true, "such": true, "of": true}

// enOpenEnd ends a sentence that a list after it completes: "…an
// unexpected event such as".
var enOpenEnd = regexp.MustCompile(`(?i)\b(?:such as|including|as follows|the following|for example|e\.g\.?|i\.e\.?)$`)

// enSectionRule reads an English sentence as a rule whose condition is
// its section's topic (needTopic) or a situation it states itself. The
// conclusion is the whole statement; a prohibition or an obligation is
// tier 1.
func enSectionRule(s string) (p ruleParse, needTopic, ok bool) {
	s = joinLines(s)
	if n := runeLen(s); n < 12 || n > enMaxRunes || hasCorruption(s) || strings.Contains(s, "?") {
		return ruleParse{}, false, false
	}
	if strings.HasSuffix(s, ":") || strings.HasSuffix(s, "：") || enOpenEnd.MatchString(s) {
		// "You can use Sick Leave for:" and the list after it: the
		// sentence goes on in the list, alone it is cut.
		return ruleParse{}, false, false
	}
	main := strings.TrimRight(s, ".!; ")
	concl := trimClause(main)
	if len(strings.Fields(concl)) < 4 || !enPhraseOK(concl, 4) {
		return ruleParse{}, false, false
	}
	p = ruleParse{Concl: concl, Tier: 2, Confidence: "medium", score: 0.5}
	deontic := func(modal string) {
		m := strings.ToLower(modal)
		switch {
		case strings.Contains(m, "not") || strings.Contains(m, "n't"):
			if !strings.Contains(m, "need") {
				p.Tier, p.Priority = 1, "high"
			}
		case m == "must" || m == "have to" || m == "need to" || strings.Contains(m, "required"):
			p.Tier, p.Priority = 1, "high"
		}
	}
	switch {
	case enReaderModal.MatchString(main):
		m := enReaderModal.FindStringSubmatch(main)
		if len(strings.Fields(m[3])) < 2 || enNarration.MatchString(m[3]) {
			return ruleParse{}, false, false
		}
		deontic(m[2])
		if m[1] != "" {
			if sit := purposeSituation(m[1]); sit != "" {
				p.Cond = sit
				break
			}
		}
		needTopic = true
	case enBareModal.MatchString(main):
		m := enBareModal.FindStringSubmatch(main)
		if len(strings.Fields(m[2])) < 3 || enPronoun[strings.ToLower(firstWord(m[2]))] || enSubjectPronoun[strings.ToLower(firstWord(m[2]))] {
			// "Should you need to rebook…": a condition, not a statement.
			return ruleParse{}, false, false
		}
		if len(strings.Fields(m[2])) < 3 {
			return ruleParse{}, false, false
		}
		deontic(m[1])
		needTopic = true
	case enDemonstrative.MatchString(main):
		m := enDemonstrative.FindStringSubmatch(main)
		if len(strings.Fields(m[3])) < 2 || enPast(m[2]+" "+m[3]) {
			return ruleParse{}, false, false
		}
		deontic(m[2])
		needTopic = true
	case enQuantified.MatchString(main):
		m := enQuantified.FindStringSubmatch(main)
		verb := m[3] + strings.TrimSpace(m[4])
		w := strings.Fields(m[1])
		if m[2] == "" && !enVerbAfter.MatchString(verb) || m[2] != "" && (enStop[verb] && !enFiniteAux[verb] || enBefore.MatchString(verb)) || enPast(verb) || len(strings.Fields(m[5])) < 2 ||
			enDemonstrativeWord[strings.ToLower(w[1])] || enStop[strings.ToLower(w[len(w)-1])] {
			// "All these fares are…": which fares, the text before says.
			return ruleParse{}, false, false
		}
		p.Cond = lowerFirst(m[1])
	case enPolicyVerb.MatchString(main):
		m := enPolicyVerb.FindStringSubmatch(main)
		subj := strings.TrimSpace(enDiscourseLead.ReplaceAllString(m[1], ""))
		if !enSubjectOK(subj) || len(strings.Fields(m[3])) < 2 {
			return ruleParse{}, false, false
		}
		p.Cond = lowerFirst(subj)
	default:
		return ruleParse{}, false, false
	}
	if enCertain.MatchString(concl) && !enHedge.MatchString(concl) {
		p.Confidence = "high"
	}
	return p, needTopic, true
}

// purposeSituation turns a purpose clause "request over 80 hours of LWOP"
// into the situation "requesting over 80 hours of LWOP"; "" when it does
// not open with a verb.
func purposeSituation(purpose string) string {
	w := strings.Fields(purpose)
	if len(w) < 2 || len(w) > 12 {
		return ""
	}
	v := strings.ToLower(w[0])
	if !isVerbish(v) || enDeterminer[v] || enPronoun[v] {
		return ""
	}
	return gerund(v) + " " + strings.Join(w[1:], " ")
}

// enHeadingNoise are headings that name a place in the book, not a topic:
// "CHAPTER III", "Part 2", "Section 4.1", "Appendix", "Introduction".
var enHeadingNoise = regexp.MustCompile(`(?i)^(?:(?:chapter|part|book|section|lesson|article|appendix|volume|vol\.?|no\.?|game(?: no\.?)?|example|diagram|diag\.?|fig\.?|figure|position|problem|exercise|table)\b[\s\dIVXLCivxlc.:-]*$|introduction|preface|contents|index|notes?|summary|overview|conclusion|general|miscellaneous|faq|frequently asked questions|[\dIVXLC.\s-]+)$`)

// enWord reports a word of four letters or more, in lower case after its
// first letter or all in capitals ("expenses", "QUEEN"), not "RxKt".
func enWord(w string) bool {
	w = strings.Trim(w, ",.;:()\"'")
	rs := []rune(w)
	if len(rs) < 4 {
		return false
	}
	upper := 0
	for i, r := range rs {
		if !unicode.IsLetter(r) {
			return false
		}
		if unicode.IsUpper(r) {
			if i > 0 && upper < i {
				return false // a capital after a small letter: RxKt
			}
			upper++
		}
	}
	return true
}

// enSectionTopic is what a chunk's section is about, for a rule its
// sentence leaves the subject of: its innermost heading that names a
// topic, without numbering ("3. Laundry expenses" → "Laundry expenses"),
// a chapter label ("CHAPTER III") or one longer than eight words naming
// none. "" when no heading does.
func enSectionTopic(c *chunk.Chunk) string {
	for k := len(c.HeadingPath) - 1; k >= 0; k-- {
		h := strings.TrimSpace(strings.TrimLeft(c.HeadingPath[k], "# "))
		h = strings.TrimSpace(headingNumeral.ReplaceAllString(h, ""))
		h = strings.TrimSpace(strings.TrimRight(h, ".:"))
		if i := strings.Index(h, "--"); i > 0 {
			h = strings.TrimSpace(h[:i])
		}
		w := strings.Fields(h)
		if len(w) == 0 || len(w) > 8 || enHeadingNoise.MatchString(h) || isHan(h) || strings.ContainsAny(h, "?!") {
			continue
		}
		// A topic has a word: "Laundry expenses", "QUEEN AGAINST ROOK";
		// a game's moves set as a heading ("Kt - B 3 Kt - B 3", "RxKt",
		// "PxP BxKt") have none.
		if !slices.ContainsFunc(w, enWord) {
			continue
		}
		return h
	}
	return ""
}
