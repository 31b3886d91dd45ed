package extract

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/vibelife/vibe/knowledge"
	"github.com/vibelife/vibe/llm"
)

const (
	// maxSOPCandidates bounds the method steps shown to the SOP pass; the
	// most often stated come first.
	maxSOPCandidates = 60
	// minSOPSupports is the rules, patterns and red flags offered as step
	// support at least, tier-2 rules making up for few of the others.
	minSOPSupports = 20
	// maxStepEvidence bounds the quotes a step keeps.
	maxStepEvidence = 3
)

// toolName is a valid tool name: a core tool or a skill-level tool that
// integrate declares in tools.yaml.
var toolName = regexp.MustCompile(`^[a-z][a-z0-9_]{1,63}$`)

const sopSchema = `{
 "type":"object","additionalProperties":false,"required":["name","description","phases"],
 "properties":{
  "name":{"type":"string","minLength":1},"description":{"type":"string"},
  "phases":{"type":"array","minItems":5,"maxItems":7,"items":{"type":"object",
   "required":["id","name","description","entry_condition","exit_condition","steps"],"properties":{
    "id":{"type":"string"},"name":{"type":"string","minLength":1},"description":{"type":"string"},
    "entry_condition":{"type":"string"},"exit_condition":{"type":"string"},
    "steps":{"type":"array","items":{"type":"object","required":["action","tool","output","supports"],"properties":{
      "action":{"type":"string","minLength":1},
      "tool":{"type":"string","pattern":"^([a-z][a-z0-9_]{1,63})?$"},
      "output":{"type":"string"},
      "supports":{"type":"array","items":{"type":"string"}}}}}}}}
 }}`

type sopAnswer struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Phases      []struct {
		ID             string `json:"id"`
		Name           string `json:"name"`
		Description    string `json:"description"`
		EntryCondition string `json:"entry_condition"`
		ExitCondition  string `json:"exit_condition"`
		Steps          []struct {
			Action   string   `json:"action"`
			Tool     string   `json:"tool"`
			Output   string   `json:"output"`
			Supports []string `json:"supports"`
		} `json:"steps"`
	} `json:"phases"`
}

// sopLine is how the SOP request shows a possible support: a rule as
// condition → conclusion (with its action), a pattern by its name and
// signature (how it is recognised, which a scan step checks; what it
// indicates is no method and was an eighth of the request), a red flag
// with its action.
func sopLine(it *item) string {
	switch it.kind {
	case kindRule:
		return it.arrow()
	case kindPattern:
		return oneLine(it.name) + ": " + oneLine(it.signature)
	}
	return it.line()
}

// sop asks the model for the SOP: 5 to 7 phases with entry and exit
// conditions, steps naming their tools and citing the candidates that
// support them (method steps found by the map and gap passes, grouped by
// embedding similarity, and the selected rules, patterns and red flags).
func (x *llmRun) sop(ctx context.Context, steps []*item, sel selection) (knowledge.SOP, error) {
	if x.pending {
		return knowledge.SOP{}, nil
	}
	clusters, err := x.cluster(ctx, steps)
	if x.embedPending(err) {
		return knowledge.SOP{}, nil
	}
	if err != nil {
		return knowledge.SOP{}, err
	}
	x.ran[StageSOP] = true
	sort.SliceStable(clusters, func(i, j int) bool { return len(clusters[i]) > len(clusters[j]) })
	if len(clusters) > maxSOPCandidates {
		clusters = clusters[:maxSOPCandidates]
	}
	sort.SliceStable(clusters, func(i, j int) bool { return clusters[i][0].seq < clusters[j][0].seq })
	support := map[string]*item{}
	var sb strings.Builder
	fmt.Fprintf(&sb, "Theme: %s\n", x.opt.Theme)
	if len(x.opt.ComputeTools) > 0 {
		fmt.Fprintf(&sb, "Compute tools a plugin runs: %s\n", strings.Join(x.opt.ComputeTools, ", "))
	} else {
		sb.WriteString("Compute tools a plugin runs: none\n")
	}
	sb.WriteString("\nMethod steps found in the sources (id | phase | action):\n")
	for i, c := range clusters {
		s := *c[0]
		s.ev = nil
		for _, it := range c {
			s.addEvidence(it.ev)
		}
		x.st.Merged += len(c) - 1
		s.id = fmt.Sprintf("s%d", i+1)
		support[s.id] = &s
		fmt.Fprintf(&sb, "%s | %s | %s\n", s.id, nonEmpty(s.phase, "P4"), s.line())
	}
	sb.WriteString("\nRules, patterns and red flags of the skill (id | kind | text):\n")
	// Tier-1 rules, patterns and red flags; tier-2 rules only to make up
	// minSOPSupports (every line costs ~40 prompt tokens, and the tier-2
	// rules of a book are mostly judgements, not method).
	var t2 []*item
	if n := len(sel.t1) + len(sel.patterns) + len(sel.flags); n < minSOPSupports {
		t2 = sel.t2[:min(len(sel.t2), minSOPSupports-n)]
	}
	for _, g := range []struct {
		label string
		xs    []*item
	}{{"tier1 rule", sel.t1}, {"tier2 rule", t2}, {"pattern", sel.patterns}, {"red flag", sel.flags}} {
		for _, it := range g.xs {
			support[it.id] = it
			fmt.Fprintf(&sb, "%s | %s | %s\n", it.id, g.label, sopLine(it))
		}
	}
	req := x.request(StageSOP, sopPrompt, "extract_sop", sopSchema, sb.String())
	resps, err := x.send(ctx, StageSOP, []llm.Request{req}, []string{"procedure"})
	if err != nil {
		return knowledge.SOP{}, err
	}
	if x.pending {
		return knowledge.SOP{}, nil
	}
	if resps[0] == nil {
		return knowledge.SOP{}, fmt.Errorf("%s: %s; run again (every other answer is cached) or choose a stronger model (llm.model)",
			StageSOP, x.st.Failed[len(x.st.Failed)-1])
	}
	var ans sopAnswer
	if err := json.Unmarshal([]byte(stripFenceJSON(resps[0].Content)), &ans); err != nil {
		return knowledge.SOP{}, fmt.Errorf("%s: answer is not JSON: %w", StageSOP, err)
	}
	return x.buildLLMSOP(ans, support), nil
}

// buildLLMSOP turns the model's SOP into the knowledge type: phases numbered
// P1, P2, ... in order and chained by next_phase, steps numbered within
// their phase, evidence taken from the supporting candidates only, tool
// names checked. A step citing no known candidate is left out: every item
// of the knowledge files cites its source (vibe check enforces it).
func (x *llmRun) buildLLMSOP(ans sopAnswer, support map[string]*item) knowledge.SOP {
	sop := knowledge.SOP{Name: nonEmpty(ans.Name, x.opt.Theme+" SOP"), Description: ans.Description}
	for i, p := range ans.Phases {
		ph := knowledge.Phase{ID: fmt.Sprintf("P%d", i+1), Name: p.Name, Description: p.Description,
			EntryCondition: p.EntryCondition, ExitCondition: p.ExitCondition, Steps: []knowledge.Step{}}
		if i+1 < len(ans.Phases) {
			ph.NextPhase = fmt.Sprintf("P%d", i+2)
		}
		for _, s := range p.Steps {
			tool := strings.TrimSpace(s.Tool)
			if !toolName.MatchString(tool) || !x.runnableTool(tool) {
				tool = ""
			}
			var ev []knowledge.Evidence
			for _, id := range s.Supports {
				it, ok := support[strings.TrimSpace(id)]
				if !ok {
					continue
				}
				for _, e := range it.ev {
					if len(ev) < maxStepEvidence && !containsEvidence(ev, e) {
						ev = append(ev, e)
					}
				}
			}
			if len(ev) == 0 {
				x.st.StepsDropped++
				continue
			}
			ph.Steps = append(ph.Steps, knowledge.Step{ID: fmt.Sprintf("%s.%d", ph.ID, len(ph.Steps)+1),
				Action: s.Action, Tool: tool, Output: nonEmpty(s.Output, s.Action), Evidence: ev})
		}
		sop.Phases = append(sop.Phases, ph)
	}
	return sop
}

// sopCoreTools are the core tools the SOP prompt offers.
var sopCoreTools = []string{"collect_info", "get_user_profile", "get_rules", "search_knowledge", "show_report",
	"show_insight", "save_skill_data", "use_skill", "read_skill_resource", "upsert_user_profile"}

// runnableTool reports whether a step may name the tool: a core tool, a
// compute tool a plugin runs, a tool declared by hand, or a display or
// retrieve tool integrate can declare itself. Any other (a collect tool
// with no form, a flow with no steps) would fail vibe check.
func (x *llmRun) runnableTool(name string) bool {
	switch {
	case slices.Contains(sopCoreTools, name), slices.Contains(x.opt.DeclaredTools, name):
		return true
	case isComputeTool(name):
		return slices.Contains(x.opt.ComputeTools, name)
	}
	for _, p := range []string{"show_", "display_", "render_", "search_", "get_", "lookup_", "read_"} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// isComputeTool reports whether a tool name is that of a deterministic
// computation (calculate_bazi, compute_chart), which needs a plugin.
func isComputeTool(name string) bool {
	return strings.HasPrefix(name, "calc") || strings.HasPrefix(name, "compute_")
}

func containsEvidence(ev []knowledge.Evidence, e knowledge.Evidence) bool {
	for _, f := range ev {
		if f == e {
			return true
		}
	}
	return false
}
