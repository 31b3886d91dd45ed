package agenteval

import (
	"bytes"
	"fmt"
	"unicode"

	"github.com/vibelife/vibe/knowledge"
)

// Draft drafts cases from a skill's rules and SOP, offline: one question
// per rule built from its condition, expecting the skill and the rule, and
// one per SOP step that calls a tool, expecting the tool. At most max
// cases (tier 1 first). The drafts are for a knowledge engineer to review
// and rephrase as users ask; nothing reads them as an eval file.
func Draft(skill string, f knowledge.Files, max int) *File {
	out := &File{Version: 1, Skill: skill}
	seen := map[string]bool{}
	add := func(c Case) bool {
		if len(out.Cases) >= max {
			return false
		}
		if seen[c.Question] {
			return true
		}
		seen[c.Question] = true
		out.Cases = append(out.Cases, c)
		return true
	}
	for _, r := range f.Rules.Rules.All() {
		if r.Condition == "" {
			continue
		}
		if !add(Case{ID: "rule-" + r.ID, Tags: []string{"draft", r.Tier}, Question: ruleQuestion(r.Condition), Expect: Expect{Rules: []string{r.ID}}}) {
			break
		}
	}
	for _, ph := range f.SOP.SOP.Phases {
		for _, st := range ph.Steps {
			if st.Tool == "" || st.Action == "" {
				continue
			}
			add(Case{ID: "step-" + ph.ID + "-" + st.ID, Tags: []string{"draft", "sop"}, Question: st.Action, Expect: Expect{Tools: []ToolCall{{Name: st.Tool}}}})
		}
	}
	return out
}

// ruleQuestion turns a rule's condition into the question a user in that
// situation might ask.
func ruleQuestion(cond string) string {
	for _, r := range cond {
		if unicode.Is(unicode.Han, r) {
			return cond + "，该怎么看？"
		}
	}
	return "What should I do when " + cond + "?"
}

// EncodeDraft returns the drafted file as YAML behind a header saying what
// to do with it.
func EncodeDraft(theme string, f *File) ([]byte, error) {
	b, err := knowledge.Encode(f)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	fmt.Fprintf(&buf, "# Drafted by `vibe eval --generate %s` from the built rules and SOP. vibe never reads this\n", theme)
	fmt.Fprintf(&buf, "# file: review each case, rewrite the question as a user would ask it, add passages,\n")
	fmt.Fprintf(&buf, "# facts and off-topic cases (skill: none), then move the cases you keep into %s.\n", FileName)
	buf.Write(b)
	return buf.Bytes(), nil
}
