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
	subj := ruleSubject(condition)
	plain, tokens := plainText(subj), phraseTokens(subj)
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

// withExtras adds to the answer the core rules gave (rules, and the terms
// missing from them) the extra rules about what the question asks: the
// extra rules, above min on the whole file, whose condition's subject
// names every glossary term the question names (questionTerms; 金神：惧水乡
// for "Which hours are the Jin Shen…", not 三秋丁火：一派庚金，名财多身弱 for
// 身弱财多怎么办). The core's rules keep their places, the extra ones
// follow by score, at most k in all. When the core's answer is partial (a
// term it asks about no core rule states: missing), the extra rules whose
// subject names that term answer instead, and when none does it stays
// partial (金神：惧水乡 does not say what 金神格 is); when the core had no
// rule, the extra ones about the question answer.
func (idx *ruleIndex) withExtras(question string, parts []weighted, rules []scoredRule, missing []string, k int, min float64) ([]scoredRule, []string) {
	if len(rules) >= k && len(missing) == 0 {
		return rules, missing
	}
	terms := idx.questionTerms(question)
	for _, m := range missing {
		terms = append(terms, glossEntry{names: []string{m}})
	}
	var extras []scoredRule
	for _, r := range idx.rank(parts, len(idx.rules), min) {
		if r.Extra && aboutAll(r.Condition, terms) {
			extras = append(extras, r)
		}
	}
	if len(extras) == 0 {
		return rules, missing
	}
	if len(missing) > 0 {
		rules, missing = nil, nil
	}
	merged := append(slices.Clip(rules), extras...)
	if len(merged) > k {
		merged = merged[:k]
	}
	return merged, missing
}
