package runtime

import (
	"context"
	"encoding/json"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/vibelife/vibe/knowledge"
	"github.com/vibelife/vibe/knowledge/sqlite"
	"github.com/vibelife/vibe/llm"
)

// TestHistoryKeepsCardsFormsAndCitations: GET /api/conversations/{id}
// returns, with each assistant message, the events the chat stream showed
// beside its text (the card, the form, the citations), as the stream sent
// them, on the three memory stores; an answer stored without any (before
// they were kept) has none.
func TestHistoryKeepsCardsFormsAndCitations(t *testing.T) {
	stores := map[string]func(t *testing.T) knowledge.MemoryStore{
		"memory": func(t *testing.T) knowledge.MemoryStore { return NewMemStore() },
		"sqlite": func(t *testing.T) knowledge.MemoryStore {
			st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "vibe.db"))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			return st
		},
		"postgres": func(t *testing.T) knowledge.MemoryStore { return openPostgres(t) },
	}
	for _, name := range []string{"memory", "sqlite", "postgres"} {
		t.Run(name, func(t *testing.T) { checkHistoryEvents(t, stores[name](t)) })
	}
}

func checkHistoryEvents(t *testing.T, st knowledge.MemoryStore) {
	m := &fakeModel{script: []step{
		{calls: []llm.ToolCall{
			call("1", "get_rules", `{"question":"日主甲木生于寅月","k":2}`),
			call("2", "search_knowledge", `{"query":"甲木寅月"}`),
		}},
		{calls: []llm.ToolCall{call("3", "show_insight", `{"title":"身强","content":"日主得令","level":"info"}`)}},
		{text: []string{"日主得令，身强（r2，", "knowledge/bazi/converted/a.md#1）。"}},
		{text: []string{"请填写出生信息。"}, calls: []llm.ToolCall{call("4", "collect_info", `{"reason":"排盘","fields":[{"name":"identity.birth_info.date","type":"date","required":true}]}`)}},
	}}
	ts := citationServer(t, m, func(c *Config) { c.Memory = st })

	// shown are the events of a live turn the page shows beside the text.
	shown := func(body string) []Event {
		t.Helper()
		resp := do(t, "POST", ts.URL+"/api/chat", "ka", body)
		defer resp.Body.Close()
		var out []Event
		for _, e := range readSSE(t, resp.Body) {
			switch e.Type {
			case EventCard, EventForm, EventCitations:
				out = append(out, e)
			case EventError:
				t.Fatalf("turn failed: %s", e.Error)
			}
		}
		return out
	}
	live1 := shown(`{"message":"日主甲木生于寅月怎么样","skill":"bazi","conversation_id":"h1"}`)
	live2 := shown(`{"message":"帮我排盘","conversation_id":"h1"}`)
	// (The form turn has citations too: the rules its prompt held.)
	if len(live1) != 2 || live1[0].Type != EventCard || live1[1].Type != EventCitations || len(live2) == 0 || live2[0].Type != EventForm {
		t.Fatalf("live events: %+v, %+v", live1, live2)
	}
	// An answer stored before events were kept.
	if _, err := st.AppendMessages(context.Background(), "alice", "h1", []knowledge.StoredMessage{{Role: "user", Content: "旧"}, {Role: "assistant", Content: "旧答"}}); err != nil {
		t.Fatal(err)
	}

	resp := do(t, "GET", ts.URL+"/api/conversations/h1", "ka", "")
	defer resp.Body.Close()
	var hist struct {
		Messages []struct {
			Role    string          `json:"role"`
			Content string          `json:"content"`
			Events  json.RawMessage `json:"events"`
		} `json:"messages"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&hist); err != nil || resp.StatusCode != 200 {
		t.Fatalf("history: %d %v", resp.StatusCode, err)
	}
	var answers [][]Event
	for _, msg := range hist.Messages {
		if msg.Role == "user" && msg.Events != nil {
			t.Errorf("a user message carries events: %s", msg.Events)
		}
		if msg.Role != "assistant" {
			continue
		}
		var evs []Event
		if msg.Events != nil {
			if err := json.Unmarshal(msg.Events, &evs); err != nil {
				t.Fatalf("events of %q: %v", msg.Content, err)
			}
		}
		answers = append(answers, evs)
	}
	if len(answers) != 3 {
		t.Fatalf("%d assistant messages in the history, want 3: %+v", len(answers), hist)
	}
	if !sameJSON(t, answers[0], live1) {
		t.Errorf("the first answer's stored events\n%s\ndiffer from the live ones\n%s", mustJSON(answers[0]), mustJSON(live1))
	}
	checkCitations(t, answers[0][1].Citations)
	if !sameJSON(t, answers[1], live2) {
		t.Errorf("the form turn's stored events\n%s\ndiffer from the live ones\n%s", mustJSON(answers[1]), mustJSON(live2))
	}
	if answers[2] != nil {
		t.Errorf("an answer stored without events has %+v", answers[2])
	}
	// Another user's id is still not found, events or not.
	if r := do(t, "GET", ts.URL+"/api/conversations/h1", "kb", ""); r.StatusCode != 404 {
		t.Errorf("bob reading alice's h1: %d", r.StatusCode)
	}
}

// sameJSON compares a and b as JSON values (PostgreSQL's JSONB reorders
// object keys).
func sameJSON(t *testing.T, a, b any) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal([]byte(mustJSON(a)), &x); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(mustJSON(b)), &y); err != nil {
		t.Fatal(err)
	}
	return reflect.DeepEqual(x, y)
}

// TestOfflineAnswerKeepsFormAndCitations: a retrieval-only answer is stored
// with the form and the citations it showed, as it showed them.
func TestOfflineAnswerKeepsFormAndCitations(t *testing.T) {
	ctx := context.Background()
	a, mem := newAgentAt(t, birthRoot(t), nil, nil)
	c := &collect{}
	if _, err := a.Turn(ctx, TurnRequest{UserID: "alice", ConversationID: "b1", Message: "帮我看看八字"}, c.emit); err != nil {
		t.Fatal(err)
	}
	var live []Event
	for _, e := range c.events {
		if e.Type == EventForm || e.Type == EventCitations {
			live = append(live, e)
		}
	}
	if len(live) != 2 || live[0].Type != EventForm || live[1].Type != EventCitations {
		t.Fatalf("offline events = %+v", c.events)
	}
	msgs, err := mem.Messages(ctx, "alice", "b1", 0)
	if err != nil {
		t.Fatal(err)
	}
	last := msgs[len(msgs)-1]
	var stored []Event
	if last.Role != "assistant" || json.Unmarshal(last.Events, &stored) != nil || !sameJSON(t, stored, live) {
		t.Fatalf("stored answer %q with events %s; live %s", last.Content, last.Events, mustJSON(live))
	}
}
