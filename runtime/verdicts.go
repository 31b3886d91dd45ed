package runtime

import (
	"strings"

	"github.com/vibelife/vibe/knowledge"
)

// Safe verdicts (docs/agent.md): a rule, red flag or passage predicting
// death, disaster, divorce or ruin reaches neither the model nor the user
// as a certainty. Rules are rendered as what the tradition says with a
// caveat (in the prompt, get_rules, the citations and the retrieval-only
// answer); a skill's instructions that tell the agent to relay such a
// verdict are rewritten to relay it as the book's; passages of the
// retrieval-only answer that state one carry the caveat; an answer that
// states one without it gets the caveat appended.

// safeRule returns r with a grave verdict rendered as the tradition's
// (knowledge.TraditionSays) and marked Grave; other rules as they are.
func safeRule(r knowledge.TieredRule) knowledge.TieredRule {
	if !r.IsGrave() {
		return r
	}
	r.Grave = true
	if r.Conclusion != "" && len(knowledge.GraveTerms(r.Conclusion)) > 0 {
		r.Conclusion = knowledge.TraditionSays(r.Conclusion)
	}
	if r.Action != "" && len(knowledge.GraveTerms(r.Action)) > 0 {
		r.Action = knowledge.TraditionSays(r.Action)
	}
	return r
}

// safeSkillRules applies safeRule to rules returned with their skill.
func safeSkillRules(rs []skillRule) []skillRule {
	out := make([]skillRule, len(rs))
	for i, r := range rs {
		out[i] = skillRule{safeRule(r.TieredRule), r.Skill}
	}
	return out
}

// relayPhrases are how extraction told the agent to pass a verdict on, and
// what they become for a grave one.
var relayPhrases = []struct{ from, to string }{
	{"再向用户说明此断语及其出处", "只可作为典籍的说法转述此断语及其出处，并说明这不是确定的预言"},
	{"then tell the user and cite the source", "then relay it only as what the source says, with the caveat that it is not a certain prediction"},
}

// graveNote ends a line of instructions that states a grave verdict
// (graveNoteEn a line without Han).
const (
	graveNote   = "（凶断：典籍的说法，非确定预言）"
	graveNoteEn = " (a grave verdict: the tradition's, not a certainty)"
)

// safeInstructions rewrites the lines of a skill's instructions that state
// a grave verdict: an instruction to relay it becomes one to relay it as
// the book's with a caveat, and any other such line (a listed rule) is
// marked as the tradition's verdict.
func safeInstructions(text string) string {
	if len(knowledge.GraveTerms(text)) == 0 {
		return text
	}
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		if len(knowledge.GraveTerms(l)) == 0 || hedged(l) {
			continue
		}
		relayed := false
		for _, p := range relayPhrases {
			if strings.Contains(l, p.from) {
				l, relayed = strings.ReplaceAll(l, p.from, p.to), true
			}
		}
		switch {
		case relayed:
		case hasHan(l):
			l += graveNote
		default:
			l += graveNoteEn
		}
		lines[i] = l
	}
	return strings.Join(lines, "\n")
}

// hedged reports whether text already presents a verdict as the
// tradition's rather than as certain.
func hedged(text string) bool {
	for _, m := range []string{"典籍认为", "古籍认为", "传统说法", "非确定预言", "不是确定的预言", "古籍的断语", "典籍的说法",
		"the tradition holds", "not a certain prediction", "what the classical texts say", "traditional verdict", "the tradition's, not a certainty"} {
		if strings.Contains(text, m) {
			return true
		}
	}
	return false
}

// verdictCaveat returns the caveat an answer stating a grave verdict
// without one gets ("" when it needs none).
func verdictCaveat(answer string) string {
	if len(knowledge.GraveTerms(answer)) == 0 || hedged(answer) {
		return ""
	}
	return "（提示 / Note: " + knowledge.GraveCaveat + "）"
}
