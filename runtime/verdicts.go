package runtime

import (
	"strings"

	"github.com/vibelife/vibe/knowledge"
	"github.com/vibelife/vibe/skills"
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
// (knowledge.TraditionSays); other rules as they are. A rule is grave when
// Grave is set, as the rule index sets it for a skill that reads fates
// (markFate).
func safeRule(r knowledge.TieredRule) knowledge.TieredRule {
	if !r.Grave {
		return r
	}
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

// safeInstructionsOf is safeInstructions for the instructions of skills
// sks: unchanged unless one of them reads fates (readsFate).
func (a *Agent) safeInstructionsOf(sks []*skills.Skill, text string) string {
	for _, sk := range sks {
		if a.readsFate(sk) {
			return safeInstructions(text)
		}
	}
	return text
}

// fateIn reports whether one of the skills named in active (a skill or a
// stack, splitSkills) reads fates; with none active, whether an installed
// skill does, since the answer may still be about one.
func (a *Agent) fateIn(active string) bool {
	names := splitSkills(active)
	if len(names) == 0 {
		for _, h := range a.cfg.Skills.Headers() {
			names = append(names, h.Name)
		}
	}
	for _, n := range names {
		if sk, err := a.cfg.Skills.Get(n); err == nil && a.readsFate(sk) {
			return true
		}
	}
	return false
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
