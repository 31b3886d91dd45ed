package runtime

import (
	"encoding/json"
	"regexp"
	"sort"
	"strings"

	"github.com/vibelife/vibe/knowledge"
	"github.com/vibelife/vibe/llm"
	"github.com/vibelife/vibe/skills"
)

// Progressive disclosure (docs/agent.md): a request carries only what the
// step can use. The core tools offered depend on the turn's state (which
// skills are active, whether the conversation has a past, whether the
// question needs data the profile lacks); use_skill answers with a short
// confirmation, as the skill's instructions are in the next system prompt;
// get_rules leaves out the rules the model already has.

// stepState is what decides the tools of a model step.
type stepState struct {
	// active is the active skills joined by skillSep ("" for none).
	active string
	// past is set when the conversation has earlier messages or a summary.
	past bool
	// collect is set when a collect step is offered (the question needs
	// data the profile lacks, or a protocol is in progress).
	collect bool
	// instructions are the active skills' instructions, for the display
	// tools they name.
	instructions string
	// installed counts the installed skills (core aside).
	installed int
	// profile is set when an active skill reads the profile (birth data,
	// compute tools) or the message is about the user (needsChart).
	profile bool
}

// offeredCore returns the core tools callable in a step of state st:
// read_skill_resource always; use_skill while no skill is active or there
// is another to switch to; the profile tools when the question is about
// the user, a skill computes from the profile, a collect step is offered
// or there is a past; recommend_skills while no skill is active and
// several are installed; get_rules and search_knowledge
// while one is; save_skill_data for a skill with compute tools; collect_info
// when a collect step is offered; show_report and show_insight when the
// skills' instructions name them; the history tools when there is a past
// to read.
func offeredCore(st stepState, sks []*skills.Skill) []llm.Tool {
	active := st.active != ""
	computes := false
	for _, sk := range sks {
		for _, tl := range sk.OfferedTools() {
			computes = computes || tl.Type == skills.TypeCompute
		}
	}
	st.profile = st.profile || computes
	var out []llm.Tool
	for _, tl := range coreTools {
		var ok bool
		switch tl.Name {
		case "read_skill_resource":
			ok = true
		case "use_skill":
			// While a skill is active, only to switch or add one.
			ok = !active || st.installed > 1
		case "get_user_profile", "upsert_user_profile":
			// Writing the profile: for skills that read it, and when the
			// user gives personal data (a collect step, a past to amend).
			ok = st.collect || st.past || st.profile
		case "recommend_skills":
			// Ranking helps while none is active and there is a choice.
			ok = !active && st.installed > 1
		case "get_rules", "search_knowledge":
			ok = active
		case "save_skill_data":
			ok = computes
		case "collect_info":
			ok = st.collect
		case "show_report", "show_insight":
			ok = strings.Contains(st.instructions, tl.Name)
		case "get_user_history", "get_conversation_summary":
			ok = st.past
		default:
			ok = true
		}
		if ok {
			out = append(out, tl)
		}
	}
	return out
}

// ruleIDLine finds the rules a SKILL.md lists ("- R005: condition →
// conclusion").
var ruleIDLine = regexp.MustCompile(`(?m)^\s*- ([A-Za-z]*\d+[A-Za-z0-9_-]*): `)

// resetPrompt forgets the rules of the previous step's system prompt: the
// prompt is built anew each step, and what it carried then (the listing
// of a skill no longer active, the relevant rules of a single skill where
// two now share the prompt) the model no longer has.
func (t *turn) resetPrompt() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.inPrompt = map[string]bool{}
}

// noteInContext records rules the system prompt being built carries (key
// skill|id), so get_rules does not send them again in this step.
func (t *turn) noteInContext(skill string, ids ...string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.inPrompt == nil {
		t.inPrompt = map[string]bool{}
	}
	for _, id := range ids {
		t.inPrompt[skill+"|"+id] = true
	}
}

// listedRules returns the ids of the rules a skill's instructions list.
func listedRules(instructions string) []string {
	var ids []string
	for _, m := range ruleIDLine.FindAllStringSubmatch(instructions, -1) {
		ids = append(ids, m[1])
	}
	return ids
}

// leanRules is get_rules' result as the model gets it: the rules it already
// has (listed in the system prompt, or returned earlier in the turn) are
// named in in_context instead of being repeated; the rest are recorded as
// given. The tool_result event and the citations keep the full result.
func (t *turn) leanRules(res json.RawMessage) string {
	var m map[string]any
	if json.Unmarshal(res, &m) != nil {
		return string(res)
	}
	skill, _ := m["skill"].(string)
	delete(m, "question") // the model asked it
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.given == nil {
		t.given = map[string]bool{}
	}
	var had, hadPartial []string
	for _, field := range []string{"rules", "partial"} {
		rs, ok := m[field].([]any)
		if !ok {
			continue
		}
		kept := []any{}
		for _, r := range rs {
			rm, _ := r.(map[string]any)
			id, _ := rm["id"].(string)
			sn, _ := rm["skill"].(string)
			if sn == "" {
				sn = skill
			}
			if _, several := m["skills"]; !several {
				delete(rm, "skill") // the result's skill says it once
			}
			// What the model weighs by: a low confidence, a critical
			// priority; the usual values are left out.
			if rm["confidence"] != "low" {
				delete(rm, "confidence")
			}
			if rm["priority"] != "critical" {
				delete(rm, "priority")
			}
			key := sn + "|" + id
			if id != "" && (t.inPrompt[key] || t.given[key]) {
				name := id
				if _, several := m["skills"]; several {
					name = sn + ":" + id // ids of two skills may collide
				}
				if field == "partial" {
					hadPartial = append(hadPartial, name)
				} else {
					had = append(had, name)
				}
				continue
			}
			t.given[key] = true
			kept = append(kept, r)
		}
		m[field] = kept
	}
	if len(hadPartial) > 0 {
		// Partial rules the model has: named apart, as partial.
		sort.Strings(hadPartial)
		m["partial_in_context"] = hadPartial
	}
	if len(had) == 0 {
		b, _ := jsonOf(m)
		return string(b)
	}
	sort.Strings(had)
	m["in_context"] = had
	note, _ := m["note"].(string)
	m["note"] = strings.TrimSpace(note + " The rules in in_context also answer and are already in your context (system prompt or an earlier result): cite them by id.")
	b, _ := jsonOf(m)
	return string(b)
}

// stepState is the state of a model step of turn t with the active skills
// (all: the stored conversation).
func (a *Agent) stepState(t *turn, active string, all []knowledge.StoredMessage) stepState {
	st := stepState{active: active, profile: needsChart(t.question)}
	for _, m := range all {
		st.past = st.past || m.Role == llm.RoleUser || m.Role == llm.RoleAssistant
	}
	st.past = st.past || len(chatOf(t.transcript)) > 0
	t.mu.Lock()
	st.collect = t.collect
	if t.summary != nil && t.summary.Text != "" {
		st.past = true
	}
	t.mu.Unlock()
	return st
}
