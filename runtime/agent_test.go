package runtime

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/vibelife/vibe/knowledge"
	"github.com/vibelife/vibe/llm"
)

func TestWholeConversation(t *testing.T) {
	m := &fakeModel{script: []step{
		{text: []string{"好的，"}, calls: []llm.ToolCall{call("1", "use_skill", `{"name":"bazi"}`)}},
		{calls: []llm.ToolCall{call("2", "get_user_profile", `{"fields":["identity.birth_info","skills.bazi.chart"]}`)}},
		{text: []string{"请填写出生信息。"}, calls: []llm.ToolCall{call("3", "collect_info", `{"reason":"排盘","fields":[{"name":"birth_date","type":"date","required":true}]}`)}},
		// turn 2
		{calls: []llm.ToolCall{call("4", "compute_chart", `{"birth_date":"1990-03-05","birth_hour":0}`), call("5", "save_skill_data", `{"data":{"chart":{"day_master":"甲"}}}`)}},
		{calls: []llm.ToolCall{call("6", "show_chart", `{"day_master":"甲","pillars":["庚午","戊寅","甲子","甲子"]}`), call("7", "search_knowledge", `{"query":"甲木 寅月"}`)}},
		{text: []string{"日主甲木生于寅月，得令 [knowledge/bazi/converted/a.md#1]。你必", "然大富大贵。"}},
	}}
	a, mem := newTestAgent(t, m, nil)
	ctx := context.Background()

	c1 := &collect{}
	if _, err := a.Turn(ctx, TurnRequest{UserID: "alice", ConversationID: "conv1", Message: "帮我看看八字"}, c1.emit); err != nil {
		t.Fatal(err)
	}
	// use_skill confirms; the instructions come once, in the next system
	// prompt (progressive disclosure).
	if r := toolResult(t, c1, "use_skill"); r["skill"] != "bazi" || r["instructions"] != nil || !strings.Contains(m.requests[1].Messages[0].Content, "compute_chart") {
		t.Fatalf("use_skill result = %v", r)
	}
	prof := toolResult(t, c1, "get_user_profile")
	if miss := prof["missing"].([]any); len(miss) != 2 {
		t.Fatalf("profile result = %v", prof)
	}
	forms := c1.of(EventForm)
	if len(forms) != 1 || !strings.Contains(string(forms[0].Form), "birth_date") {
		t.Fatalf("forms = %+v", forms)
	}
	done := c1.of(EventDone)
	if len(done) != 1 || done[0].Reason != "form" || done[0].Skill != "bazi" {
		t.Fatalf("done = %+v", done)
	}
	// The second model request carried the skill tools and the tier-2 body.
	if len(m.requests) < 2 || !hasTool(m.requests[1].Tools, "compute_chart") || hasTool(m.requests[0].Tools, "compute_chart") {
		t.Fatalf("skill tools not added on activation")
	}
	if !strings.Contains(m.requests[1].Messages[0].Content, "当前激活的技能") {
		t.Fatalf("system prompt lacks the active skill: %s", m.requests[1].Messages[0].Content)
	}

	c2 := &collect{}
	answer, err := a.Turn(ctx, TurnRequest{UserID: "alice", ConversationID: "conv1", Message: "1990-03-05 子时"}, c2.emit)
	if err != nil {
		t.Fatal(err)
	}
	comp := toolResult(t, c2, "compute_chart")
	if comp["_is_error"] == true || comp["confidence"] != 0.8 || comp["result"].(map[string]any)["day_master"] != "甲" {
		t.Fatalf("compute result = %v", comp)
	}
	cards := c2.of(EventCard)
	if len(cards) != 1 || cards[0].CardType != "bazi_chart" || !strings.Contains(string(cards[0].Props), "庚午") {
		t.Fatalf("cards = %+v", cards)
	}
	sr := toolResult(t, c2, "search_knowledge")
	ps := sr["passages"].([]any)
	if len(ps) != 1 || ps[0].(map[string]any)["chunk_id"] != "knowledge/bazi/converted/a.md#1" || ps[0].(map[string]any)["start"] != 120.0 {
		t.Fatalf("search result = %v", sr)
	}
	if !strings.Contains(answer, "a.md#1") || strings.Contains(answer, "必然") || !strings.Contains(answer, "很可能大富大贵") {
		t.Fatalf("answer = %q", answer)
	}
	if c2.text() != answer {
		t.Fatalf("streamed %q != answer %q", c2.text(), answer)
	}
	// The runtime context of the last request holds the computed data and relevant rules.
	last := m.requests[len(m.requests)-1].Messages[0].Content
	if !strings.Contains(last, "compute_chart →") || !strings.Contains(last, `"confidence":0.8`) {
		t.Fatalf("runtime context missing: %s", last)
	}
	p, _ := mem.Profile(ctx, "alice")
	var pm map[string]any
	_ = json.Unmarshal(p, &pm)
	bz := pm["skill_data"].(map[string]any)["bazi"].(map[string]any)
	if bz["chart"].(map[string]any)["day_master"] != "甲" || bz["_meta"].(map[string]any)["version"] != 1.0 {
		t.Fatalf("profile = %s", p)
	}
	msgs, _ := mem.Messages(ctx, "alice", "conv1", 0)
	var roles []string
	for _, m := range msgs {
		roles = append(roles, m.Role)
	}
	// The second turn's save_skill_data is recorded (effect) with its user
	// message as soon as it is made, before the answer.
	if got := strings.Join(roles, ","); got != "user,skill,assistant,user,effect,assistant" {
		t.Fatalf("stored roles = %s", got)
	}
}

func hasTool(ts []llm.Tool, name string) bool {
	for _, t := range ts {
		if t.Name == name {
			return true
		}
	}
	return false
}

func TestToolErrorsGoBackToTheModel(t *testing.T) {
	tests := []struct {
		name    string
		calls   []llm.ToolCall
		tool    string
		wantErr string
	}{
		{"inactive skill tool", []llm.ToolCall{call("1", "compute_chart", `{"birth_date":"x"}`)}, "compute_chart", "not active"},
		// The plugin's stderr ("boom") stays in the server log (issue 26).
		{"failing plugin", []llm.ToolCall{call("0", "use_skill", `{"name":"bazi"}`), call("1", "broken_tool", `{}`)}, "broken_tool", "plugin sh: failed (exit status 3; its stderr is in the server log)"},
		{"invalid input", []llm.ToolCall{call("0", "use_skill", `{"name":"bazi"}`), call("1", "compute_chart", `{"birth_hour":"noon"}`)}, "compute_chart", "birth_date is required; birth_hour must be integer"},
		{"card prop missing", []llm.ToolCall{call("0", "use_skill", `{"name":"bazi"}`), call("1", "show_chart", `{}`)}, "show_chart", "day_master is required"},
		{"unknown skill", []llm.ToolCall{call("1", "use_skill", `{"name":"tarot"}`)}, "use_skill", "unknown skill"},
		{"bad json", []llm.ToolCall{call("1", "get_rules", `{`)}, "get_rules", "not a JSON object"},
		{"path escape", []llm.ToolCall{call("1", "read_skill_resource", `{"skill":"bazi","path":"../../x"}`)}, "read_skill_resource", "inside the skill"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := &fakeModel{script: []step{{calls: tt.calls}, {text: []string{"抱歉，工具出错了。"}}}}
			a, _ := newTestAgent(t, m, nil)
			c := &collect{}
			answer, err := a.Turn(context.Background(), TurnRequest{UserID: "u", Message: "hi"}, c.emit)
			if err != nil {
				t.Fatal(err)
			}
			r := toolResult(t, c, tt.tool)
			if r["_is_error"] != true || !strings.Contains(r["error"].(string), tt.wantErr) {
				t.Fatalf("result = %v", r)
			}
			// The error went back to the model as a tool message.
			lastReq := m.requests[len(m.requests)-1]
			found := false
			for _, msg := range lastReq.Messages {
				if msg.Role == llm.RoleTool && strings.Contains(msg.Content, tt.wantErr) {
					found = true
				}
				if msg.Role == llm.RoleTool && strings.Contains(msg.Content, "boom") {
					t.Errorf("the plugin's stderr reached the model: %s", msg.Content)
				}
			}
			if !found || answer != "抱歉，工具出错了。" {
				t.Fatalf("error not fed back (answer %q)", answer)
			}
		})
	}
}

func TestStepLimit(t *testing.T) {
	m := &fakeModel{fallback: &step{calls: []llm.ToolCall{call("x", "show_insight", `{"title":"t","content":"c"}`)}}}
	a, _ := newTestAgent(t, m, func(c *Config) { c.MaxSteps = 3 })
	c := &collect{}
	answer, err := a.Turn(context.Background(), TurnRequest{UserID: "u", Message: "loop"}, c.emit)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.requests) != 3 || len(c.of(EventCard)) != 3 {
		t.Fatalf("requests = %d, cards = %d", len(m.requests), len(c.of(EventCard)))
	}
	if d := c.of(EventDone); len(d) != 1 || d[0].Reason != "max_steps" || !strings.Contains(answer, "max_steps") {
		t.Fatalf("done = %+v answer = %q", d, answer)
	}
}

func TestUserIsolation(t *testing.T) {
	m := &fakeModel{}
	a, mem := newTestAgent(t, m, nil)
	ctx := context.Background()
	if err := mem.SaveProfile(ctx, "alice", json.RawMessage(`{"identity":{"name":"Alice","birth_info":"1990"}}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Turn(ctx, TurnRequest{UserID: "alice", ConversationID: "ca", Message: "secret alice message"}, func(Event) error { return nil }); err != nil {
		t.Fatal(err)
	}
	// Conversation ids are per user: bob's "ca" is his own conversation,
	// which holds nothing of alice's (checked on every request below).
	if _, err := a.Turn(ctx, TurnRequest{UserID: "bob", ConversationID: "ca", Message: "hi"}, func(Event) error { return nil }); err != nil {
		t.Fatalf("bob's own conversation ca: %v", err)
	}
	if msgs, _ := mem.Messages(ctx, "alice", "ca", 0); len(msgs) != 2 {
		t.Fatalf("alice's ca holds %d messages after bob's turn (want 2)", len(msgs))
	}
	m.script = []step{{calls: []llm.ToolCall{call("1", "get_user_profile", `{"fields":["identity.name","identity.birth_info"]}`)}}}
	c := &collect{}
	if _, err := a.Turn(ctx, TurnRequest{UserID: "bob", ConversationID: "cb", Message: "who am i"}, c.emit); err != nil {
		t.Fatal(err)
	}
	r := toolResult(t, c, "get_user_profile")
	if len(r["found"].(map[string]any)) != 0 {
		t.Fatalf("bob saw %v", r)
	}
	for _, req := range m.requests[1:] {
		for _, msg := range req.Messages {
			if strings.Contains(msg.Content, "Alice") || strings.Contains(msg.Content, "secret alice") {
				t.Fatalf("bob's request leaked alice's data: %q", msg.Content)
			}
		}
	}
	// Alice's own narrative includes her name.
	if !strings.Contains(m.requests[0].Messages[0].Content, "用户的 姓名 是 Alice") {
		t.Fatalf("alice's narrative: %s", m.requests[0].Messages[0].Content)
	}
}

func TestOfflineMode(t *testing.T) {
	a, _ := newTestAgent(t, nil, nil)
	c := &collect{}
	answer, err := a.Turn(context.Background(), TurnRequest{UserID: "u", Message: "我的八字日主甲木生于寅月，健康如何"}, c.emit)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{OfflineLabelZH, "技能：bazi", "r2", "knowledge/bazi/converted/a.md#1", "医疗"} {
		if !strings.Contains(answer, want) {
			t.Errorf("offline answer lacks %q:\n%s", want, answer)
		}
	}
	if d := c.of(EventDone); len(d) != 1 || d[0].Reason != "offline" {
		t.Fatalf("done = %+v", d)
	}
}

func TestOfflineModeFallsBackToTheOnlySkill(t *testing.T) {
	a, _ := newTestAgent(t, nil, nil)
	c := &collect{}
	answer, err := a.Turn(context.Background(), TurnRequest{UserID: "u", Message: "what about wood in spring?"}, c.emit)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(answer, "using the only skill") || !strings.Contains(answer, "Skill: bazi") {
		t.Fatalf("offline answer without a trigger match:\n%s", answer)
	}
}

func TestProtocolWindowAndSummary(t *testing.T) {
	m := &fakeModel{}
	a, mem := newTestAgent(t, m, func(c *Config) { c.SummaryEvery = 2; c.History = 2 })
	ctx := context.Background()
	for i, msg := range []string{"看看我的八字", "出生信息是1990", "继续"} {
		req := TurnRequest{UserID: "u", ConversationID: "c", Message: msg}
		if i == 0 {
			req.Skill = "bazi"
		}
		if _, err := a.Turn(ctx, req, func(Event) error { return nil }); err != nil {
			t.Fatal(err)
		}
		a.Wait() // the rolling summary is written after the turn
	}
	var last llm.Request
	for _, r := range m.requests {
		if r.Stage == "serve" {
			last = r
		}
	}
	sys := last.Messages[0].Content
	if !strings.Contains(sys, "protocol in progress: reading") || !strings.Contains(sys, "conversation summary: summary") {
		t.Fatalf("system prompt: %s", sys)
	}
	// The protocol doubles the window: 4 history messages + the new one.
	if n := len(last.Messages) - 1; n != 5 {
		t.Fatalf("history messages = %d", n)
	}
	if s, _ := mem.Summary(ctx, "u", "c"); s.Text != "summary" || s.UpTo == 0 {
		t.Fatalf("summary = %+v", s)
	}
}

// TestProfileReadAgainAfterSave: the user narrative is read once per turn,
// and again in the step after save_skill_data changed the profile.
func TestProfileReadAgainAfterSave(t *testing.T) {
	m := &fakeModel{script: []step{
		{calls: []llm.ToolCall{call("1", "get_rules", `{"question":"甲木"}`)}},
		{calls: []llm.ToolCall{call("2", "save_skill_data", `{"data":{"chart":{"day_master":"甲"}}}`)}},
		{text: []string{"好"}},
	}}
	a, _ := newTestAgent(t, m, nil)
	if _, err := a.Turn(context.Background(), TurnRequest{UserID: "u", Message: "排盘", Skill: "bazi"}, func(Event) error { return nil }); err != nil {
		t.Fatal(err)
	}
	const line = "用户的 skill_data.bazi.chart.day_master 是 甲"
	for i, want := range []bool{false, false, true} {
		if got := strings.Contains(m.requests[i].Messages[0].Content, line); got != want {
			t.Errorf("step %d prompt has the saved data: %v, want %v", i+1, got, want)
		}
	}
}

// countingMemory counts the reads of whole conversations.
type countingMemory struct {
	*MemStore
	mu   sync.Mutex
	full int
}

func (c *countingMemory) Messages(ctx context.Context, userID, convID string, n int) ([]knowledge.StoredMessage, error) {
	if n <= 0 {
		c.mu.Lock()
		c.full++
		c.mu.Unlock()
	}
	return c.MemStore.Messages(ctx, userID, convID, n)
}

// TestLongConversationKeepsItsSkill: a turn reads the recent messages only;
// when the skill was chosen before them it reads the whole conversation once
// and records the skill again, so the next turn needs no full read.
func TestLongConversationKeepsItsSkill(t *testing.T) {
	mem := &countingMemory{MemStore: NewMemStore()}
	m := &fakeModel{}
	a, _ := newTestAgent(t, m, func(c *Config) { c.Memory = mem; c.SummaryEvery = 1 << 30 })
	ctx := context.Background()
	if _, err := a.Turn(ctx, TurnRequest{UserID: "u", ConversationID: "long", Message: "八字", Skill: "bazi"}, func(Event) error { return nil }); err != nil {
		t.Fatal(err)
	}
	var filler []knowledge.StoredMessage
	for i := range recentMessages + 50 {
		role := llm.RoleUser
		if i%2 == 1 {
			role = llm.RoleAssistant
		}
		filler = append(filler, knowledge.StoredMessage{Role: role, Content: fmt.Sprint("m", i)})
	}
	if _, err := mem.AppendMessages(ctx, "u", "long", filler); err != nil {
		t.Fatal(err)
	}
	for i, wantFull := range []int{1, 1} {
		if _, err := a.Turn(ctx, TurnRequest{UserID: "u", ConversationID: "long", Message: "继续"}, func(Event) error { return nil }); err != nil {
			t.Fatal(err)
		}
		if last := m.requests[len(m.requests)-1]; !hasTool(last.Tools, "compute_chart") {
			t.Fatalf("turn %d lost the skill", i)
		}
		if mem.full != wantFull {
			t.Fatalf("turn %d: %d full reads, want %d", i, mem.full, wantFull)
		}
	}
}
