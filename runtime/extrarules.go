package runtime

import (
	"slices"
	"strings"
)

// An offline build keeps, besides the design's tiers, one tier-2 rule a
// chunk marked Extra (knowledge.Rule.Extra): the sentences of a long book
// that state a rule. Among 640 of them some share a word or two with
// almost any question, so ranking them with the core rules by score alone
// returns filler ("身弱财多怎么办" -> 正财：身弱 → 其祸立至). get_rules
// therefore answers from the core rules as from a file of the design's
// size (ruleIndex.core), and an extra rule joins the answer only when its
// subject is what the question asks about (withExtras).

// questionTerms returns the glossary terms text names, leaving out a term
// another named one holds (身弱 of 财多身弱).
func (idx *ruleIndex) questionTerms(text string) []glossEntry {
	named := idx.glossary.namedEntries(text)
	var out []glossEntry
	for _, e := range named {
		t := plainText(e.Term)
		inner := slices.ContainsFunc(named, func(o glossEntry) bool {
			ot := plainText(o.Term)
			return ot != t && strings.Contains(ot, t)
		})
		if !inner {
			out = append(out, e)
		}
	}
	return out
}

// ruleSubject is what a rule is about: its condition up to the first
// colon (the topic an offline rule carries, 金神 of 金神：惧水乡), else the
// whole condition.
func ruleSubject(condition string) string {
	if i := strings.IndexAny(condition, "：:"); i > 0 {
		return condition[:i]
	}
	return condition
}

// subjectHolds reports whether the subject of a rule's condition
// (ruleSubject) names the glossary entry: a Han name as a substring
// (variants folded, a four-character term's halves swapped too), another
// as a phrase of its words.
func subjectHolds(condition string, e glossEntry) bool {
	return namesEntry(ruleSubject(condition), e)
}

// namesEntry reports whether text names the glossary entry: a Han name as a
// substring (variants folded, a four-character term's halves swapped too),
// another as a phrase of its words.
func namesEntry(text string, e glossEntry) bool {
	plain, tokens := plainText(text), phraseTokens(text)
	for _, n := range e.names {
		if isHanOnly(n) {
			p := plainText(n)
			if strings.Contains(plain, p) || swapHalves(p) != "" && strings.Contains(plain, swapHalves(p)) {
				return true
			}
			continue
		}
		if pt := nameTokens(n); len(pt) > 0 && containsPhrase(tokens, pt) {
			return true
		}
	}
	return false
}

// aboutAll reports whether the subject of a rule's condition names every
// one of terms (none: false).
func aboutAll(condition string, terms []glossEntry) bool {
	if len(terms) == 0 {
		return false
	}
	for _, t := range terms {
		if !subjectHolds(condition, t) {
			return false
		}
	}
	return true
}

// statesAll reports whether a rule's whole condition names every one of
// terms (none: false): 格局：伤官见官果难辨 states 伤官见官, whose subject is
// 格局.
func statesAll(condition string, terms []glossEntry) bool {
	if len(terms) == 0 {
		return false
	}
	for _, t := range terms {
		if !namesEntry(condition, t) {
			return false
		}
	}
	return true
}

// minExtraShare is the share of the best core rule's score on the whole
// file an extra rule needs to join the answer to a question that names no
// glossary term.
const minExtraShare = 0.5

// minExtraLead is how far an extra rule must outscore the best core rule
// on the whole file to join the answer whatever the core holds and
// whatever the question names, in its place by score: on the blind dev
// themes built offline the sentence that answers scored 1.4 to 3.8 times
// the core's best filler (Doubled pawns are weak for "Are doubled pawns
// always a weakness?", 1.38 against 0.97).
const minExtraLead = 1.25

// withExtras adds to the answer the core rules gave (rules, and the terms
// missing from them) the extra rules about what the question asks: the
// extra rules, above min on the whole file, whose condition's subject
// names every glossary term the question names (questionTerms; 金神：惧水乡
// for "Which hours are the Jin Shen…", not 三秋丁火：一派庚金，名财多身弱 for
// 身弱财多怎么办); for a question naming no glossary term, those scoring at
// least minExtraShare of the best core rule on the whole file when the
// core answers it, those stating most of its content when the core does
// not (coversSubject). The core's rules keep their places, the extra ones
// follow by score, at most k in all. When the core's answer is partial (a
// term it asks about no core rule states: missing), the extra rules whose
// subject names that term answer instead, and when none does it stays
// partial (金神：惧水乡 does not say what 金神格 is); when the core had no
// rule, the extra ones about the question answer.
func (idx *ruleIndex) withExtras(question string, parts []weighted, rules []scoredRule, missing []string, k int, min float64) ([]scoredRule, []string) {
	terms := idx.questionTerms(question)
	all := idx.rank(parts, len(idx.rules), min)
	bestCore := 0.0
	for _, r := range all {
		if !r.Extra {
			bestCore = max(bestCore, r.Score)
		}
	}
	// over reports whether an extra rule clearly outscores every core rule
	// on the whole file (minExtraLead): the sentence that states what the
	// question asks, where the core holds only filler sharing a word or
	// two ("As a supervisor, can I get reimbursed for professional
	// liability insurance?": Supervisors may be reimbursed for up to half
	// the cost… 1.73, the best core rule 0.46).
	over := func(r scoredRule) bool {
		return r.Extra && bestCore > 0 && r.Score >= minExtraLead*bestCore
	}
	var qs []query
	for _, p := range parts {
		qs = append(qs, idx.prepare(p.text))
	}
	// A core rule whose condition states nothing of the question matches
	// it only by its conclusion's words ("that’s the case → … after you
	// get back" for "How much meal per diem do I get on the day I fly
	// out and the day I fly back?"): an extra rule whose condition
	// states what the question asks and that scores above it on the
	// whole file takes its place (Meals and Incidental Expenses (M&IE) →
	// This reduced rate is always 75% of normal M&IE…).
	fullScore, fullAt := map[string]float64{}, map[string]int{}
	for _, r := range all {
		fullScore[r.ID], fullAt[r.ID] = r.Score, r.at
	}
	weakest := -1.0 // the best score on the whole file of a core rule matching by its conclusion only
	if len(missing) == 0 {
		for _, r := range rules {
			if at := slices.IndexFunc(all, func(o scoredRule) bool { return o.ID == r.ID }); at < 0 || !idx.condStates(all[at].at, qs) {
				weakest = max(weakest, fullScore[r.ID])
			}
		}
	}
	displaces := func(r scoredRule) bool {
		return r.Extra && weakest >= 0 && r.Score > weakest && idx.condStates(r.at, qs)
	}
	if len(rules) >= k && len(missing) == 0 && (len(terms) == 0 || statesAll(rules[0].Condition, terms)) &&
		(len(all) == 0 || !over(all[0])) && !slices.ContainsFunc(all, displaces) {
		return rules, missing
	}
	for _, m := range missing {
		terms = append(terms, glossEntry{names: []string{m}})
	}
	var extras []scoredRule
	about := false // an extra rule joined for naming what the question does
	byLead := map[int]bool{}
	ahead := map[int]bool{} // about the question, and over the core or displacing its filler
	for _, r := range all {
		switch {
		case !r.Extra:
		case len(terms) > 0 && aboutAll(r.Condition, terms):
			extras = append(extras, r)
			about = true
			ahead[r.at] = over(r) || displaces(r)
		case over(r) || displaces(r):
			extras = append(extras, r)
			byLead[r.at] = true
		case len(terms) > 0:
		case len(rules) > 0 && r.Score >= minExtraShare*bestCore:
			// A question naming no glossary term that the core answers
			// in part ("How many days of leave may I carry over?") takes
			// the extra rules that score near the core's best on the
			// whole file.
			extras = append(extras, r)
		case len(rules) == 0 && r.Score >= minExtraShare*all[0].Score && idx.coversSubject(r.at, qs):
			// One the core does not answer takes the extra rules that
			// score near the best and state most of it
			// (minSubjectCoverage): not 五行提纲：看命排下八字 for
			// 八字的清与浊怎么分辨, which shares only 八字.
			extras = append(extras, r)
		}
	}
	if len(extras) == 0 {
		return rules, missing
	}
	if len(missing) > 0 && about {
		rules, missing = nil, nil
	}
	// The extra rules follow the core's, except that one whose condition
	// states every term the question names takes the place of the first
	// core rule below it that does not ("伤官见官会怎样": 伤官见官 → 为祸百端
	// before the core's 恒不喜见官星 → 忌倒食).
	merged := slices.Clip(rules)
	byScore := func(x scoredRule) int {
		at := slices.IndexFunc(merged, func(r scoredRule) bool {
			s, ok := fullScore[r.ID]
			if !ok {
				s = r.Score
			}
			return s < x.Score
		})
		if at < 0 {
			return len(merged)
		}
		return at
	}
	for _, x := range extras {
		at := len(merged)
		if byLead[x.at] {
			// It takes its place by score among the core's rules, on
			// the whole file.
			at = byScore(x)
		} else if statesAll(x.Condition, terms) {
			for i, r := range merged {
				if !r.Extra && r.Score < x.Score && !statesAll(r.Condition, terms) {
					at = i
					break
				}
			}
			if ahead[x.at] {
				// One far above the core or matching by its condition
				// where the core does not goes before the first core
				// rule below it whose condition holds less of the
				// question, whether or not it states the term: "Black
				// recaptures with the pawn" (0.97) states "pawns" but
				// not "doubled" for "Are doubled pawns always a
				// weakness?", where "doubled pawns when ISOLATED →
				// Doubled pawns are weak" scores 1.38; 格局：伤官见官果难辨
				// holds as much of 伤官见官会怎样 as 伤官见官 → 为祸百端 and
				// stays first.
				share := idx.condShare(x.at, qs)
				for i, r := range merged {
					if i >= at {
						break
					}
					fs, ok := fullScore[r.ID]
					if !ok {
						fs = r.Score
					}
					if j, ok := fullAt[r.ID]; !r.Extra && fs < x.Score && (!ok || idx.condShare(j, qs) < share) {
						at = i
						break
					}
				}
			}
		}
		merged = slices.Insert(merged, at, x)
	}
	// Once rules state what the question names, a core rule that does
	// not and scores below minExtraShare of the best of them is filler.
	best := 0.0
	for _, r := range merged {
		if statesAll(r.Condition, terms) {
			best = max(best, r.Score)
		}
	}
	if best > 0 {
		merged = slices.DeleteFunc(merged, func(r scoredRule) bool {
			return r.Score < minExtraShare*best && !statesAll(r.Condition, terms)
		})
	}
	// Likewise once an extra rule joined for matching by its condition
	// (displaces), a core rule whose condition states nothing of the
	// question and that scores below minExtraShare of it on the whole
	// file is filler: "Can I get time off work to vote in a local
	// election?" keeps the two rules under "Voting and poll volunteering"
	// (0.39) and drops "you’re in a full-day event … → mark that time on
	// your calendar" (0.14).
	bestCond := 0.0
	for _, r := range merged {
		if r.Extra && displaces(r) {
			bestCond = max(bestCond, r.Score)
		}
	}
	if bestCond > 0 {
		merged = slices.DeleteFunc(merged, func(r scoredRule) bool {
			at, ok := fullAt[r.ID]
			return !r.Extra && (!ok || !idx.condStates(at, qs) && fullScore[r.ID] < minExtraShare*bestCond)
		})
	}
	if len(merged) > k {
		merged = merged[:k]
	}
	return merged, missing
}

// coversSubject reports whether rule i states at least minSubjectCoverage
// of one of the queries' content (subjectCoverage).
func (idx *ruleIndex) coversSubject(i int, qs []query) bool {
	for _, q := range qs {
		if idx.subjectCoverage(i, q) >= minSubjectCoverage {
			return true
		}
	}
	return false
}

// condStates reports whether rule i's condition states something of one
// of the queries: a word, or a Han bigram neither of whose characters is
// of a question's frame (relevant's test, on the condition alone).
func (idx *ruleIndex) condStates(i int, qs []query) bool {
	cond := idx.fields[i][fieldCondition]
	for _, q := range qs {
		for _, qg := range q.grams {
			if !cond[qg.g] {
				continue
			}
			r := []rune(qg.g)
			if !hasHan(qg.g) || len(r) == 2 && !modernFunction[r[0]] && !modernFunction[r[1]] {
				return true
			}
		}
	}
	return false
}

// condShare is the largest share of a query's weight rule i's condition
// holds.
func (idx *ruleIndex) condShare(i int, qs []query) float64 {
	cond := idx.fields[i][fieldCondition]
	best := 0.0
	for _, q := range qs {
		if q.mass == 0 {
			continue
		}
		held := 0.0
		for _, qg := range q.grams {
			if cond[qg.g] {
				held += qg.w
			}
		}
		best = max(best, held/q.mass)
	}
	return best
}
