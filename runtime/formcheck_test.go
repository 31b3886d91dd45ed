package runtime

import (
	"context"
	"io"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/vibelife/vibe/llm"
)

// TestFormResponseOnlyForAShownForm is the regression test of issue 26's
// finding that a form_response was accepted for a conversation that never
// showed a form, and created it: it is refused (404 for a conversation the
// user does not have, which is not created; 409 for one whose answers
// showed no form, or whose form was answered already), before anything
// reaches the profile; the answer to a form the conversation showed is
// taken once.
func TestFormResponseOnlyForAShownForm(t *testing.T) {
	m := &fakeModel{script: []step{
		{text: []string{"hello"}}, // conversation "plain": no form
		{calls: []llm.ToolCall{call("1", "collect_info", `{"fields":[{"name":"identity.birth_info.date","type":"date","required":true}]}`)}},
		{text: []string{"thanks"}}, // the form's answer
	}}
	a, mem := newTestAgent(t, m, nil)
	keys := &Keys{}
	keys.Add("ka", "alice")
	keys.Add("kb", "bob")
	s, err := NewServer(a, ServerOptions{Keys: keys})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s)
	defer srv.Close()
	ts := srv.URL
	chat := func(body string) (int, string) {
		t.Helper()
		resp := do(t, "POST", ts+"/api/chat", "ka", body)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	form := func(conv, date string) string {
		return `{"conversation_id":"` + conv + `","form_response":{"values":{"identity.birth_info.date":"` + date + `"}}}`
	}
	profileUnset := func(when string) {
		t.Helper()
		p, _ := mem.Profile(context.Background(), "alice")
		if strings.Contains(string(p), "birth_info") {
			t.Errorf("%s: the profile was written: %s", when, p)
		}
	}

	if code, body := chat(form("never-seen", "1990-01-01")); code != 404 || !strings.Contains(body, "not found") {
		t.Errorf("form_response for an unknown conversation = %d %s, want 404", code, body)
	}
	convs, _ := mem.Conversations(context.Background(), "alice", 0)
	if len(convs) != 0 {
		t.Errorf("the refused form_response created %v", convs)
	}
	profileUnset("unknown conversation")

	if code, body := chat(`{"conversation_id":"plain","message":"hi"}`); code != 200 || !strings.Contains(body, "hello") {
		t.Fatalf("plain turn = %d %s", code, body)
	}
	if code, body := chat(form("plain", "1990-01-01")); code != 409 || !strings.Contains(body, "shows no form waiting for an answer") {
		t.Errorf("form_response for a conversation without a form = %d %s, want 409", code, body)
	}
	profileUnset("conversation without a form")

	if code, body := chat(`{"conversation_id":"asks","message":"read my chart"}`); code != 200 || !strings.Contains(body, `"reason":"form"`) {
		t.Fatalf("form turn = %d %s", code, body)
	}
	if code, body := chat(form("asks", "1990-05-01")); code != 200 || !strings.Contains(body, "thanks") {
		t.Fatalf("the form's answer = %d %s", code, body)
	}
	if p, _ := mem.Profile(context.Background(), "alice"); !strings.Contains(string(p), "1990-05-01") {
		t.Errorf("the form's answer did not reach the profile: %s", p)
	}
	if code, body := chat(form("asks", "1999-09-09")); code != 409 || !strings.Contains(body, "answered already") {
		t.Errorf("a second answer to the same form = %d %s, want 409", code, body)
	}
	// Another user cannot answer alice's form.
	resp := do(t, "POST", ts+"/api/chat", "kb", form("asks", "2000-01-01"))
	resp.Body.Close()
	if resp.StatusCode != 404 {
		t.Errorf("bob answering alice's form = %d, want 404", resp.StatusCode)
	}
	// The library API refuses it the same way.
	if _, err := a.Turn(context.Background(), TurnRequest{UserID: "alice", ConversationID: "plain", Form: &FormResponse{Values: map[string]any{"x": 1}}}, func(Event) error { return nil }); err == nil || !strings.Contains(err.Error(), "no form") {
		t.Errorf("Turn with a form for a conversation without one: %v", err)
	}
}
