package runtime

import (
	"context"
	"strings"
	"testing"

	"github.com/vibelife/vibe/llm"
)

// TestGetRulesWithoutQuestionIsAnError: a core tool called without an
// argument its schema requires (or with it empty) fails naming the
// argument, without running (no rewrite request to the model).
func TestGetRulesWithoutQuestionIsAnError(t *testing.T) {
	ctx := context.Background()
	root := writeSkills(t, "", graveSkill)
	m := &fakeModel{script: []step{
		{calls: []llm.ToolCall{call("0", "use_skill", `{"skills":["mingli"]}`)}},
		{calls: []llm.ToolCall{call("1", "get_rules", `{}`), call("2", "get_rules", `{"question":"  "}`), call("3", "search_knowledge", `{"query":null}`)}},
		{text: []string{"好。"}},
	}}
	a := agentOver(t, root, m, func(c *Config) { c.Judge = JudgeOff })
	c := &collect{}
	if _, err := a.Turn(ctx, TurnRequest{UserID: "u", Message: "甲木生于寅月怎么看"}, c.emit); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range c.of(EventToolResult) {
		if e.Tool != "get_rules" && e.Tool != "search_knowledge" {
			continue
		}
		n++
		want := "missing required argument question"
		if e.Tool == "search_knowledge" {
			want = "missing required argument query"
		}
		if !e.IsError || !strings.Contains(string(e.Result), want) {
			t.Errorf("%s %s: want an error with %q, got error=%v %s", e.Tool, e.CallID, want, e.IsError, e.Result)
		}
	}
	if n != 3 {
		t.Fatalf("tool results = %d, want 3: %+v", n, c.of(EventToolResult))
	}
	if len(m.requests) != 3 {
		t.Errorf("model requests = %d, want 3 (no rewrite of an empty question)", len(m.requests))
	}
	if err := checkRequired("recommend_skills", map[string]any{}); err != nil {
		t.Errorf("recommend_skills ranks for the message without a question: %v", err)
	}
	if err := checkRequired("get_rules", map[string]any{"question": "甲木"}); err != nil {
		t.Error(err)
	}
}
