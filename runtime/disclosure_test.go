package runtime

import (
	"context"
	"encoding/json"
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

// TestRulesInContextArePerConversation: the rules get_rules leaves out as
// in_context are those of the conversation's own turn: a rule another
// conversation on the same agent had in its prompt or its results comes
// in full to a fresh one; a rule of a previous step's prompt no longer
// counts once the prompt is built anew.
func TestRulesInContextArePerConversation(t *testing.T) {
	ctx := context.Background()
	root := writeSkills(t, "", graveSkill)
	m := &fakeModel{script: []step{
		// Conversation 1: the message names R002, which the prompt carries.
		{calls: []llm.ToolCall{call("0", "use_skill", `{"skills":["mingli"]}`)}},
		{calls: []llm.ToolCall{call("1", "get_rules", `{"question":"女命辰戌全"}`)}},
		{text: []string{"见R002。"}},
		// Conversation 2, fresh: nothing of conversation 1.
		{calls: []llm.ToolCall{call("0", "use_skill", `{"skills":["mingli"]}`)}},
		{calls: []llm.ToolCall{call("1", "get_rules", `{"question":"女命辰戌全"}`)}},
		{text: []string{"见R002。"}},
	}}
	a := agentOver(t, root, m, func(c *Config) { c.Judge = JudgeOff })
	lastRules := func() string {
		t.Helper()
		msgs := m.requests[len(m.requests)-1].Messages
		for i := len(msgs) - 1; i >= 0; i-- {
			if msgs[i].Role == llm.RoleTool && msgs[i].Name == "get_rules" {
				return msgs[i].Content
			}
		}
		t.Fatal("no get_rules result in the last request")
		return ""
	}
	if _, err := a.Turn(ctx, TurnRequest{UserID: "u", ConversationID: "c1", Message: "女命辰戌全怎么看"}, (&collect{}).emit); err != nil {
		t.Fatal(err)
	}
	sys := m.requests[1].Messages[0].Content
	if !strings.Contains(sys, "R002") {
		t.Fatalf("conversation 1's prompt lacks R002, which its message names:\n%s", sys)
	}
	if r := lastRules(); strings.Contains(sys, "R002") != strings.Contains(r, `"in_context":["R002"]`) {
		t.Fatalf("conversation 1: R002 in the prompt %v, get_rules = %s", strings.Contains(sys, "R002"), r)
	}
	if _, err := a.Turn(ctx, TurnRequest{UserID: "u", ConversationID: "c2", Message: "你好，讲讲命理"}, (&collect{}).emit); err != nil {
		t.Fatal(err)
	}
	if sys := m.requests[4].Messages[0].Content; strings.Contains(sys, "R002") {
		t.Fatalf("conversation 2's prompt carries R002, the test asks nothing:\n%s", sys)
	}
	if r := lastRules(); strings.Contains(r, "in_context") || !strings.Contains(r, `"id":"R002"`) {
		t.Errorf("conversation 2 never had R002, get_rules must give it in full: %s", r)
	}

	// Within a turn: the rules of a prompt built before count no more.
	tr := &turn{a: a, inTurn: true}
	res := json.RawMessage(`{"skill":"mingli","rules":[{"id":"R001"},{"id":"R003"}]}`)
	tr.noteInContext("mingli", "R001", "R003")
	tr.resetPrompt()
	tr.noteInContext("mingli", "R003")
	if got := tr.leanRules(res); !strings.Contains(got, `"id":"R001"`) || !strings.Contains(got, `"in_context":["R003"]`) {
		t.Errorf("after a new prompt carrying only R003: %s", got)
	}
	// A step later: R001, given by get_rules, is in context; R003, only
	// in the earlier prompt, comes in full.
	tr.resetPrompt()
	if got := tr.leanRules(res); !strings.Contains(got, `"in_context":["R001"]`) || !strings.Contains(got, `"id":"R003"`) {
		t.Errorf("rules get_rules gave earlier in the turn are in context, the earlier prompt's not: %s", got)
	}
}
