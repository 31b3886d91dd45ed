package runtime

import (
	"context"
	"strings"
	"testing"

	"github.com/vibelife/vibe/llm"
)

// lastServe returns the system prompt and history length of the model's last
// chat request.
func lastServe(m *fakeModel) (sys string, history int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for i := len(m.requests) - 1; i >= 0; i-- {
		if r := m.requests[i]; r.Stage == "serve" {
			n := 0
			for _, msg := range r.Messages[1:] {
				if msg.Role == llm.RoleUser || msg.Role == llm.RoleAssistant {
					n++
				}
			}
			return r.Messages[0].Content, n - 1 // without the new message
		}
	}
	return "", 0
}

// TestProtocolStateFromHistory: a protocol started by a trigger stays in
// progress after the trigger left the history window, its progress read from
// the answers; once every step is done it ends (and the window shrinks back);
// a new trigger starts it afresh.
func TestProtocolStateFromHistory(t *testing.T) {
	m := &fakeModel{}
	a, mem := newTestAgent(t, m, func(c *Config) { c.History = 2 })
	ctx := context.Background()
	turn := func(msg, answer string) (sys string, history int) {
		t.Helper()
		m.mu.Lock()
		m.script = []step{{text: []string{answer}}}
		m.mu.Unlock()
		if _, err := a.Turn(ctx, TurnRequest{UserID: "u", ConversationID: "p", Message: msg, Skill: "bazi"}, func(Event) error { return nil }); err != nil {
			t.Fatal(err)
		}
		return lastServe(m)
	}
	sys, _ := turn("看看我的八字", "好的，先确认出生信息。")
	if !strings.Contains(sys, "protocol in progress: reading") || !strings.Contains(sys, "next: 出生信息") {
		t.Fatalf("turn 1 prompt:\n%s", sys)
	}
	turn("1990年3月5日", "收到。")
	turn("子时", "好的。")
	sys, hist := turn("然后呢", "接下来进行下一步。")
	if !strings.Contains(sys, "protocol in progress: reading") || !strings.Contains(sys, "done: 出生信息；下一步 / next: 排盘") {
		t.Fatalf("protocol lost once its trigger left the window:\n%s", sys)
	}
	if hist != 4 {
		t.Fatalf("history during the protocol = %d, want 2×2", hist)
	}
	sys, _ = turn("好", "排盘完成，开始解读。")
	if !strings.Contains(sys, "next: 排盘") {
		t.Fatalf("prompt:\n%s", sys)
	}
	// Every step marker has appeared: the protocol ended.
	sys, hist = turn("谢谢", "不客气。")
	if strings.Contains(sys, "protocol in progress") || hist != 2 {
		t.Fatalf("protocol did not end (history %d):\n%s", hist, sys)
	}
	sys, _ = turn("再解读命盘一次", "好的。")
	if !strings.Contains(sys, "protocol in progress: reading") || !strings.Contains(sys, "done: ；下一步 / next: 出生信息") {
		t.Fatalf("a new trigger did not restart the protocol:\n%s", sys)
	}
	msgs, _ := mem.Messages(ctx, "u", "p", 0)
	var recs []string
	for _, m := range msgs {
		if m.Role == roleProtocol {
			recs = append(recs, "["+m.Content+"]")
		}
	}
	if got := strings.Join(recs, ""); got != "[reading][][reading]" {
		t.Fatalf("protocol records = %s", got)
	}
}

// TestProtocolPulledInAfterUseSkill: the skill activated in the first step
// brings its protocol into the prompt of the second.
func TestProtocolPulledInAfterUseSkill(t *testing.T) {
	m := &fakeModel{script: []step{{calls: []llm.ToolCall{call("1", "use_skill", `{"name":"bazi"}`)}}, {text: []string{"好"}}}}
	a, _ := newTestAgent(t, m, nil)
	if _, err := a.Turn(context.Background(), TurnRequest{UserID: "u", Message: "帮我解读命盘"}, func(Event) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if sys := m.requests[0].Messages[0].Content; strings.Contains(sys, "protocol in progress") || strings.Contains(sys, "Runtime context") {
		t.Fatalf("protocol or an empty runtime context before any skill was active:\n%s", sys)
	}
	if !strings.Contains(m.requests[1].Messages[0].Content, "protocol in progress: reading") {
		t.Fatalf("step 2 prompt:\n%s", m.requests[1].Messages[0].Content)
	}
}

// TestPromptRulesFollowTheConversation: a follow-up with no words of its own
// keeps the rules of the topic under discussion; a new topic brings its own.
func TestPromptRulesFollowTheConversation(t *testing.T) {
	m := &fakeModel{}
	a, _ := newTestAgent(t, m, nil)
	ctx := context.Background()
	rulesOf := func(msg string) string {
		t.Helper()
		if _, err := a.Turn(ctx, TurnRequest{UserID: "u", ConversationID: "r", Message: msg, Skill: "bazi"}, func(Event) error { return nil }); err != nil {
			t.Fatal(err)
		}
		sys, _ := lastServe(m)
		_, after, _ := strings.Cut(sys, "relevant rules:\n")
		var ids []string
		for _, line := range strings.Split(after, "\n") {
			if id, _, ok := strings.Cut(strings.TrimPrefix(line, "- "), " ("); ok && strings.HasPrefix(line, "- ") {
				ids = append(ids, id)
			}
		}
		return strings.Join(ids, ",")
	}
	if got := rulesOf("日主甲木生于寅月怎么看"); !strings.HasPrefix(got, "r2") {
		t.Fatalf("first turn rules = %s", got)
	}
	if rs, _, _ := a.rulesFor("bazi", "那然后呢？", 3, 0); len(rs) != 0 {
		t.Fatalf("the follow-up alone matches %v", rs)
	}
	if got := rulesOf("那然后呢？"); !strings.HasPrefix(got, "r2") {
		t.Fatalf("follow-up rules = %q, want the topic's r2 first", got)
	}
	if got := rulesOf("财星透干且有根又如何"); !strings.HasPrefix(got, "r3") {
		t.Fatalf("new topic rules = %s, want r3 first", got)
	}
}

// summaryBlocker answers chat instantly but holds the summary request until
// released.
type summaryBlocker struct {
	fakeModel
	release chan struct{}
}

func (s *summaryBlocker) Stream(ctx context.Context, req llm.Request, fn func(llm.Delta) error) (llm.Response, error) {
	if req.Stage == "serve.summary" {
		<-s.release
	}
	return s.fakeModel.Stream(ctx, req, fn)
}

// TestSummaryDoesNotDelayTheTurn: the rolling summary is written after the
// done event, in the background; Wait waits for it.
func TestSummaryDoesNotDelayTheTurn(t *testing.T) {
	m := &summaryBlocker{release: make(chan struct{})}
	a, mem := newTestAgent(t, m, func(c *Config) { c.SummaryEvery = 1 })
	c := &collect{}
	if _, err := a.Turn(context.Background(), TurnRequest{UserID: "u", ConversationID: "s", Message: "你好"}, c.emit); err != nil {
		t.Fatal(err)
	}
	if d := c.of(EventDone); len(d) != 1 {
		t.Fatalf("done = %+v", d)
	}
	if s, _ := mem.Summary(context.Background(), "u", "s"); s.Text != "" {
		t.Fatalf("summary before release: %+v", s)
	}
	close(m.release)
	a.Wait()
	if s, _ := mem.Summary(context.Background(), "u", "s"); s.Text != "summary" || s.UpTo != 2 {
		t.Fatalf("summary = %+v", s)
	}
}
