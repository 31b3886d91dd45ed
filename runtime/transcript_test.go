package runtime

import (
	"context"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/vibelife/vibe/llm"
)

// firstServe returns the first chat request the model got from index from
// on (the first step of a turn).
func firstServe(t *testing.T, m *fakeModel, from int) llm.Request {
	t.Helper()
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, r := range m.requests[from:] {
		if r.Stage == "serve" {
			return r
		}
	}
	t.Fatalf("no model request after %d", from)
	return llm.Request{}
}

// TestOpenAIConversationsFollowTheTranscript: without X-Conversation-ID the
// state a chat keeps between turns follows its own transcript. Two chats
// that open with the same message share nothing once their answers differ;
// an answer resent with other whitespace still continues the chat; an
// edited message starts from the state before it.
func TestOpenAIConversationsFollowTheTranscript(t *testing.T) {
	m := &fakeModel{}
	ts, _ := newTestServer(t, m, ServerOptions{})
	client := openai.NewClient(option.WithBaseURL(ts.URL+"/v1/"), option.WithAPIKey("ka"), option.WithMaxRetries(0))
	ctx := context.Background()
	u := func(s string) openai.ChatCompletionMessageParamUnion { return openai.UserMessage(s) }
	a := func(s string) openai.ChatCompletionMessageParamUnion { return openai.AssistantMessage(s) }
	// ask sends the transcript and reports whether the turn started with
	// the bazi skill active (its tools offered in the first step).
	ask := func(script []step, msgs ...openai.ChatCompletionMessageParamUnion) (answer string, active bool) {
		t.Helper()
		m.mu.Lock()
		m.script = script
		from := len(m.requests)
		m.mu.Unlock()
		res, err := client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "vibe", Messages: msgs})
		if err != nil {
			t.Fatal(err)
		}
		return res.Choices[0].Message.Content, hasTool(firstServe(t, m, from).Tools, "compute_chart")
	}
	activate := []step{{calls: []llm.ToolCall{call("1", "use_skill", `{"name":"bazi"}`)}}, {text: []string{"甲：已激活八字技能。"}}}
	plain := func(text string) []step { return []step{{text: []string{text}}} }

	a1, active := ask(activate, u("看看我的运势"))
	if active || a1 != "甲：已激活八字技能。" {
		t.Fatalf("chat A turn 1: active %v, answer %q", active, a1)
	}
	// Chat B opens with the same message, after A activated a skill.
	b1, active := ask(plain("乙：你想了解哪方面？"), u("看看我的运势"))
	if active {
		t.Fatal("chat B's first turn started with chat A's skill")
	}
	if _, active = ask(plain("乙2"), u("看看我的运势"), a(b1), u("事业")); active {
		t.Fatal("chat B's second turn has chat A's skill: chats with the same first message share state")
	}
	if _, active = ask(plain("甲2"), u("看看我的运势"), a(a1), u("事业")); !active {
		t.Fatal("chat A's second turn lost the skill it activated")
	}
	// The answer resent re-indented still continues chat A.
	if _, active = ask(plain("甲3"), u("看看我的运势"), a("  甲：已激活八字技能。\n"), u("事业"), a("甲2"), u("财运")); !active {
		t.Fatal("chat A lost its state when its transcript came back with other whitespace")
	}
	// An edited first message is a new branch with the state before it.
	if _, active = ask(plain("丙"), u("看看我的财运"), a(a1), u("事业")); active {
		t.Fatal("an edited transcript kept the state of the branch it left")
	}
	// A regenerated answer starts from the state before the turn, like the
	// answer it replaces.
	if _, active = ask(plain("甲2′"), u("看看我的运势"), a(a1), u("事业")); !active {
		t.Fatal("a regenerated turn lost the state before it")
	}
	// Another user's identical chat has nothing of alice's.
	bob := openai.NewClient(option.WithBaseURL(ts.URL+"/v1/"), option.WithAPIKey("kb"), option.WithMaxRetries(0))
	m.mu.Lock()
	m.script = plain("乙")
	from := len(m.requests)
	m.mu.Unlock()
	if _, err := bob.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "vibe", Messages: []openai.ChatCompletionMessageParamUnion{u("看看我的运势"), a(a1), u("事业")}}); err != nil {
		t.Fatal(err)
	}
	if hasTool(firstServe(t, m, from).Tools, "compute_chart") {
		t.Fatal("bob's chat started with alice's skill")
	}
}

// TestTranscriptTurnsCarryProtocolAndSummary drives the protocol of
// TestProtocolStateFromHistory through transcript-keyed turns: its progress
// is read from the answers carried from node to node, and the rolling
// summary, due every third turn, reaches the turns after it.
func TestTranscriptTurnsCarryProtocolAndSummary(t *testing.T) {
	m := &fakeModel{}
	a, _ := newTestAgent(t, m, func(c *Config) { c.History = 2; c.SummaryEvery = 3 })
	ctx := context.Background()
	var transcript []llm.Message
	turn := func(msg, answer string) (sys string) {
		t.Helper()
		m.mu.Lock()
		m.script = []step{{text: []string{answer}}}
		m.mu.Unlock()
		got, err := a.Turn(ctx, TurnRequest{UserID: "u", Message: msg, Skill: "bazi", Transcript: append([]llm.Message(nil), transcript...), TranscriptScope: "vibe/bazi"}, func(Event) error { return nil })
		if err != nil {
			t.Fatal(err)
		}
		a.Wait() // the summary
		transcript = append(transcript, llm.Message{Role: llm.RoleUser, Content: msg}, llm.Message{Role: llm.RoleAssistant, Content: got})
		sys, _ = lastServe(m)
		return sys
	}
	sys := turn("看看我的八字", "好的，先确认出生信息。")
	if !strings.Contains(sys, "protocol in progress: reading") || !strings.Contains(sys, "next: 出生信息") {
		t.Fatalf("turn 1 prompt:\n%s", sys)
	}
	turn("1990年3月5日", "收到。")
	turn("子时", "好的。")
	sys = turn("然后呢", "接下来进行下一步。")
	if !strings.Contains(sys, "protocol in progress: reading") || !strings.Contains(sys, "done: 出生信息；下一步 / next: 排盘") {
		t.Fatalf("the protocol's progress was not carried:\n%s", sys)
	}
	if !strings.Contains(sys, "conversation summary: summary") {
		t.Fatalf("the summary due after turn 3 is not in turn 4:\n%s", sys)
	}
	sys = turn("好", "排盘完成，开始解读。")
	if !strings.Contains(sys, "next: 排盘") || !strings.Contains(sys, "conversation summary: summary") {
		t.Fatalf("turn 5 lost the protocol or the summary:\n%s", sys)
	}
	if sys = turn("谢谢", "不客气。"); strings.Contains(sys, "protocol in progress") {
		t.Fatalf("the protocol did not end:\n%s", sys)
	}
	// The summary request saw the transcript's turns, not one node's.
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, r := range m.requests {
		if r.Stage == "serve.summary" {
			in := r.Messages[1].Content
			if !strings.Contains(in, "看看我的八字") || !strings.Contains(in, "子时") {
				t.Errorf("summary input lacks the earlier turns:\n%s", in)
			}
			break
		}
	}
}

func TestTranscriptNode(t *testing.T) {
	msgs := []llm.Message{{Role: llm.RoleSystem, Content: "ignored"}, {Role: llm.RoleUser, Content: "a b"}, {Role: llm.RoleAssistant, Content: "c"}}
	n := transcriptNode("u", "vibe", msgs)
	if !strings.HasPrefix(n, "oai-") || len(n) != 4+24 {
		t.Fatalf("node %q", n)
	}
	same := []llm.Message{{Role: llm.RoleUser, Content: " a\n b "}, {Role: llm.RoleAssistant, Content: "c"}}
	if transcriptNode("u", "vibe", same) != n {
		t.Error("whitespace or a system message changed the node")
	}
	for name, other := range map[string]string{
		"user":    transcriptNode("v", "vibe", msgs),
		"scope":   transcriptNode("u", "vibe/bazi", msgs),
		"answer":  transcriptNode("u", "vibe", []llm.Message{{Role: llm.RoleUser, Content: "a b"}, {Role: llm.RoleAssistant, Content: "d"}}),
		"roles":   transcriptNode("u", "vibe", []llm.Message{{Role: llm.RoleUser, Content: "a b"}, {Role: llm.RoleUser, Content: "c"}}),
		"framing": transcriptNode("u", "vibe", []llm.Message{{Role: llm.RoleUser, Content: "a bc"}}),
	} {
		if other == n {
			t.Errorf("a different %s gives the same node", name)
		}
	}
	if transcriptNode("u", "vibe", nil) != "" {
		t.Error("an empty transcript has a node")
	}
}
