package runtime

import (
	"context"
	"encoding/json"
	"io"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/vibelife/vibe/knowledge"
	"github.com/vibelife/vibe/llm"
)

// chatDone runs one /api/chat turn and returns its done event.
func chatDone(t *testing.T, url, key, body string) Event {
	t.Helper()
	resp := do(t, "POST", url+"/api/chat", key, body)
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("chat %s: %d %s", body, resp.StatusCode, b)
	}
	for _, e := range readSSE(t, resp.Body) {
		if e.Type == EventDone {
			return e
		}
		if e.Type == EventError {
			t.Fatalf("chat %s: %s", body, e.Error)
		}
	}
	t.Fatalf("chat %s: no done event", body)
	return Event{}
}

// Feedback names an answer by the done event's turn; it is stored with
// the answer, shown again with the conversation's history, replaced by a
// later verdict, counted in /metrics, and refused for a turn that is not
// the user's answer or a bad rating.
func TestFeedbackOnAnAnswer(t *testing.T) {
	m := &fakeModel{fallback: &step{text: []string{"答案"}}}
	a, mem := newTestAgent(t, m, nil)
	keys := &Keys{}
	if err := ParseKeysEnv("ka:alice,kb:bob", keys); err != nil {
		t.Fatal(err)
	}
	s, err := NewServer(a, ServerOptions{Keys: keys})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s)
	defer ts.Close()

	d1 := chatDone(t, ts.URL, "ka", `{"message":"第一个问题","conversation_id":"f1"}`)
	d2 := chatDone(t, ts.URL, "ka", `{"message":"第二个问题","conversation_id":"f1"}`)
	if d1.Turn <= 0 || d2.Turn <= d1.Turn {
		t.Fatalf("done turns %d, %d: want increasing positive sequence numbers", d1.Turn, d2.Turn)
	}
	post := func(key, body string) int {
		t.Helper()
		resp := do(t, "POST", ts.URL+"/api/feedback", key, body)
		resp.Body.Close()
		return resp.StatusCode
	}
	fb := func(turn int, rating, comment string) string {
		b, _ := json.Marshal(FeedbackRequest{ConversationID: "f1", Turn: turn, Rating: rating, Comment: comment})
		return string(b)
	}
	if c := post("ka", fb(d1.Turn, "up", "")); c != 200 {
		t.Fatalf("thumbs up: %d", c)
	}
	if c := post("ka", fb(d2.Turn, "down", "  漏了伤官见官的例外 ")); c != 200 {
		t.Fatalf("thumbs down: %d", c)
	}
	if c := post("ka", fb(d1.Turn, "down", "")); c != 200 {
		t.Fatalf("changed verdict: %d", c)
	}
	for _, bad := range []struct {
		key, body string
		code      int
	}{
		{"kb", fb(d1.Turn, "up", ""), 404},   // bob has no conversation f1
		{"ka", fb(d1.Turn-1, "up", ""), 404}, // the question, not an answer
		{"ka", fb(d1.Turn, "meh", ""), 400},  // not up or down
		{"ka", fb(0, "up", ""), 400},         // no turn
		{"ka", fb(d1.Turn, "up", strings.Repeat("x", 2001)), 400},
		{"", fb(d1.Turn, "up", ""), 401},
	} {
		if c := post(bad.key, bad.body); c != bad.code {
			t.Errorf("%s as %q: %d, want %d", bad.body[:min(60, len(bad.body))], bad.key, c, bad.code)
		}
	}

	got, err := mem.ConversationFeedback(context.Background(), "alice", "f1")
	if err != nil || len(got) != 2 || got[0].Rating != "down" || got[1].Comment != "漏了伤官见官的例外" {
		t.Fatalf("stored feedback = %+v, %v", got, err)
	}
	// The history shows each answer's turn and verdict.
	resp := do(t, "GET", ts.URL+"/api/conversations/f1", "ka", "")
	var h struct{ Messages []HistoryMessage }
	json.NewDecoder(resp.Body).Decode(&h)
	resp.Body.Close()
	var turns []int
	for _, m := range h.Messages {
		if m.Role == "assistant" {
			turns = append(turns, m.Turn)
			if m.Feedback == nil || m.Feedback.Rating != "down" {
				t.Errorf("answer %d shows feedback %+v", m.Turn, m.Feedback)
			}
		}
	}
	if len(turns) != 2 || turns[0] != d1.Turn || turns[1] != d2.Turn {
		t.Errorf("history turns %v, want %d and %d", turns, d1.Turn, d2.Turn)
	}

	rec := httptest.NewRecorder()
	a.Metrics().Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	for _, want := range []string{`vibe_feedback_total{comment="no",rating="up"} 1`, `vibe_feedback_total{comment="yes",rating="down"} 1`, `vibe_feedback_total{comment="no",rating="down"} 1`} {
		if !strings.Contains(rec.Body.String(), want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}

// replace_last (the page's regenerate and edit) takes the last question
// and its answer out of the history the model and the page see, and asks
// the new message in their place; a conversation without a question has
// nothing to replace.
func TestReplaceLastQuestion(t *testing.T) {
	m := &fakeModel{fallback: &step{text: []string{"答"}}}
	ts, _ := newTestServer(t, m, ServerOptions{})
	chatDone(t, ts.URL, "ka", `{"message":"问一","conversation_id":"r1"}`)
	chatDone(t, ts.URL, "ka", `{"message":"问二","conversation_id":"r1"}`)
	n := len(m.requests)
	chatDone(t, ts.URL, "ka", `{"message":"问二，改过","conversation_id":"r1","replace_last":true}`)
	var users []string
	for _, msg := range m.requests[n].Messages {
		if msg.Role == llm.RoleUser {
			users = append(users, msg.Content)
		}
	}
	if strings.Join(users, "|") != "问一|问二，改过" {
		t.Errorf("the model saw the questions %q after the edit", users)
	}
	resp := do(t, "GET", ts.URL+"/api/conversations/r1", "ka", "")
	var h struct{ Messages []HistoryMessage }
	json.NewDecoder(resp.Body).Decode(&h)
	resp.Body.Close()
	var shown []string
	for _, msg := range h.Messages {
		shown = append(shown, msg.Role+":"+msg.Content)
	}
	if strings.Join(shown, "|") != "user:问一|assistant:答|user:问二，改过|assistant:答" {
		t.Errorf("history after the edit: %q", shown)
	}
	if resp := do(t, "POST", ts.URL+"/api/chat", "ka", `{"message":"x","replace_last":true}`); resp.StatusCode != 400 {
		t.Errorf("replace_last without a conversation: %d", resp.StatusCode)
	}
	resp = do(t, "POST", ts.URL+"/api/chat", "ka", `{"message":"x","conversation_id":"empty","replace_last":true}`)
	evs := readSSE(t, resp.Body)
	resp.Body.Close()
	if len(evs) == 0 || evs[len(evs)-1].Type != EventError || !strings.Contains(evs[len(evs)-1].Error, "no question to replace") {
		t.Errorf("replace_last in a new conversation: %+v", evs)
	}
}

// AnswerContext finds an answer by its turn, the question before it and
// the skills active then.
func TestAnswerContext(t *testing.T) {
	msgs := []knowledge.StoredMessage{
		{Seq: 1, Role: roleSkill, Content: "bazi,career"}, {Seq: 2, Role: "user", Content: "问一"}, {Seq: 3, Role: "assistant", Content: "答一"},
		{Seq: 4, Role: roleSkill, Content: "tea"}, {Seq: 5, Role: "user", Content: "问二"}, {Seq: 6, Role: roleEffect, Content: "{}"}, {Seq: 7, Role: "assistant", Content: "答二"},
	}
	q, a, sk, ok := AnswerContext(msgs, 3)
	if !ok || q != "问一" || a != "答一" || strings.Join(sk, "|") != "bazi|career" {
		t.Errorf("turn 3: %q %q %q %v", q, a, sk, ok)
	}
	q, a, sk, ok = AnswerContext(msgs, 7)
	if !ok || q != "问二" || a != "答二" || strings.Join(sk, "|") != "tea" {
		t.Errorf("turn 7: %q %q %q %v", q, a, sk, ok)
	}
	if _, _, _, ok := AnswerContext(msgs, 5); ok {
		t.Errorf("a question taken for an answer")
	}
}
