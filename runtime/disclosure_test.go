package runtime

import (
	"context"
	"strings"
	"testing"

	"github.com/vibelife/vibe/llm"
)

// get_rules does not send the model a rule it already has: one SKILL.md
// lists (R003 of graveSkill) is named in in_context, and a second get_rules
// of the turn names all it returned before; the tool_result event keeps the
// full rules. A rule the answer names that no tool returned (listed in
// SKILL.md) is among the answer's citations, cited. use_skill confirms
// without the instructions, which the next system prompt carries once.
func TestGetRulesLeavesOutRulesInContext(t *testing.T) {
	ctx := context.Background()
	root := writeSkills(t, "", graveSkill)
	m := &fakeModel{script: []step{
		{calls: []llm.ToolCall{call("0", "use_skill", `{"skills":["mingli"]}`)}},
		{calls: []llm.ToolCall{call("1", "get_rules", `{"question":"甲木生于寅月"}`)}},
		{calls: []llm.ToolCall{call("2", "get_rules", `{"question":"甲木生于寅月"}`)}},
		{text: []string{"身强（R003）。"}},
	}}
	a := agentOver(t, root, m, func(c *Config) { c.Judge = JudgeOff })
	c := &collect{}
	if _, err := a.Turn(ctx, TurnRequest{UserID: "u", Message: "甲木生于寅月怎么看"}, c.emit); err != nil {
		t.Fatal(err)
	}
	if r := toolResult(t, c, "use_skill"); r["instructions"] != nil || r["skill"] != "mingli" {
		t.Fatalf("use_skill = %v", r)
	}
	sys := m.requests[1].Messages[0].Content
	if strings.Count(sys, "- R003: 甲木生于寅月") != 1 {
		t.Fatalf("SKILL.md not once in the prompt:\n%s", sys)
	}
	var results []string
	for _, msg := range m.requests[3].Messages {
		if msg.Role == llm.RoleTool && msg.Name == "get_rules" {
			results = append(results, msg.Content)
		}
	}
	if len(results) != 2 {
		t.Fatalf("get_rules results = %q", results)
	}
	for i, r := range results {
		if strings.Contains(r, `"id":"R003"`) || !strings.Contains(r, `"in_context":["R003"]`) {
			t.Errorf("get_rules %d repeats a rule in context: %s", i+1, r)
		}
	}
	full := toolResult(t, c, "get_rules")
	if rs, _ := full["rules"].([]any); len(rs) == 0 {
		t.Fatalf("the event lost the rules: %v", full)
	}
	cited := false
	for _, e := range c.of(EventCitations) {
		for _, ci := range e.Citations {
			cited = cited || ci.RuleID == "R003" && ci.Cited
		}
	}
	if !cited {
		t.Errorf("R003, named by the answer, is not among its cited sources: %+v", c.of(EventCitations))
	}
	if !namesID("见R008。", "R008") || namesID("R0081", "R008") {
		t.Error("namesID")
	}
}
