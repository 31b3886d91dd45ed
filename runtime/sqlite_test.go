package runtime

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vibelife/vibe/knowledge/sqlite"
	"github.com/vibelife/vibe/llm"
)

// TestSQLiteMemoryAcrossRestart keeps the conversation, the active skill and
// the profile in the embedded store: a new Agent over the same file
// continues where the first stopped, and another user still sees nothing.
func TestSQLiteMemoryAcrossRestart(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "vibe.db")
	st, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	m := &fakeModel{script: []step{
		{calls: []llm.ToolCall{call("1", "use_skill", `{"name":"bazi"}`), call("2", "save_skill_data", `{"skill":"bazi","data":{"chart":{"day_master":"甲"}}}`)}},
		{text: []string{"记住了"}},
	}}
	a, _ := newTestAgent(t, m, func(c *Config) { c.Memory = st })
	if _, err := a.Turn(ctx, TurnRequest{UserID: "alice", ConversationID: "c", Message: "八字"}, func(Event) error { return nil }); err != nil {
		t.Fatal(err)
	}
	st.Close()

	st2, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer st2.Close()
	m2 := &fakeModel{script: []step{{calls: []llm.ToolCall{call("1", "get_user_profile", `{"fields":["skills.bazi.chart.day_master"]}`)}}}}
	a2, _ := newTestAgent(t, m2, func(c *Config) { c.Memory = st2 })
	c := &collect{}
	if _, err := a2.Turn(ctx, TurnRequest{UserID: "alice", ConversationID: "c", Message: "继续"}, c.emit); err != nil {
		t.Fatal(err)
	}
	r := toolResult(t, c, "get_user_profile")
	if r["found"].(map[string]any)["skills.bazi.chart.day_master"] != "甲" {
		t.Fatalf("profile after restart = %v", r)
	}
	req := m2.requests[0]
	if !hasTool(req.Tools, "compute_chart") || len(req.Messages) != 4 || !strings.Contains(req.Messages[2].Content, "记住了") {
		t.Fatalf("restart lost state: %d messages, tools %v", len(req.Messages), req.Tools)
	}
	// Ids are per user: bob's "c" is his own conversation; alice's keeps
	// its messages.
	before, _ := st2.Messages(ctx, "alice", "c", 0)
	if _, err := a2.Turn(ctx, TurnRequest{UserID: "bob", ConversationID: "c", Message: "hi"}, func(Event) error { return nil }); err != nil {
		t.Fatalf("bob's own conversation: %v", err)
	}
	if after, _ := st2.Messages(ctx, "alice", "c", 0); len(after) != len(before) {
		t.Fatalf("bob's turn changed alice's conversation: %d -> %d messages", len(before), len(after))
	}
	if m2.requests[len(m2.requests)-1].Messages[len(m2.requests[len(m2.requests)-1].Messages)-1].Content != "hi" {
		t.Fatal("bob's prompt does not end with his message")
	}
	for _, msg := range m2.requests[len(m2.requests)-1].Messages {
		if strings.Contains(msg.Content, "记住了") || strings.Contains(msg.Content, "继续") {
			t.Fatalf("bob's prompt holds alice's message %q", msg.Content)
		}
	}
}
