package runtime

import (
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/vibelife/vibe/llm"
	"github.com/vibelife/vibe/llm/llmtest"
)

// TestEndToEndWithFakeOpenAIServer drives the whole conversation through the
// HTTP API with the real llm client against the scripted fake
// OpenAI-compatible server: use_skill -> get_user_profile -> collect_info,
// then compute plugin -> display card -> answer citing a passage.
func TestEndToEndWithFakeOpenAIServer(t *testing.T) {
	fake := llmtest.New(t,
		llmtest.ToolCall("use_skill", `{"name":"bazi"}`),
		llmtest.ToolCall("get_user_profile", `{"fields":["identity.birth_info"]}`),
		llmtest.ToolCall("collect_info", `{"fields":[{"name":"birth_date","type":"date","required":true}]}`),
		llmtest.ToolCall("compute_chart", `{"birth_date":"1990-03-05"}`),
		llmtest.ToolCall("show_chart", `{"day_master":"甲"}`),
		llmtest.ToolCall("search_knowledge", `{"query":"甲木寅月"}`),
		llmtest.Text("日主甲木得令 [knowledge/bazi/converted/a.md#1]。"),
	)
	client := llm.New(llm.Options{BaseURL: fake.URL, APIKey: "k", Model: "m", MaxRetries: -1, Timeout: 10 * time.Second})
	a, _ := newTestAgent(t, client, nil)
	keys := &Keys{}
	keys.Add("ka", "alice")
	s, err := NewServer(a, ServerOptions{Keys: keys})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s)
	defer ts.Close()

	turn := func(msg string) (types []string, evs []Event) {
		resp := do(t, "POST", ts.URL+"/api/chat", "ka", `{"message":"`+msg+`","conversation_id":"e2e"}`)
		defer resp.Body.Close()
		evs = readSSE(t, resp.Body)
		for _, e := range evs {
			types = append(types, e.Type+":"+e.Tool+e.CardType+e.Reason)
		}
		return types, evs
	}
	types, _ := turn("帮我看看八字")
	want := "tool_call:use_skill,tool_result:use_skill,tool_call:get_user_profile,tool_result:get_user_profile,tool_call:collect_info,form:,tool_result:collect_info,done:form"
	if got := strings.Join(types, ","); got != want {
		t.Fatalf("turn 1 = %s\nwant %s", got, want)
	}
	types, evs := turn("1990-03-05")
	got := strings.Join(types, ",")
	for _, w := range []string{"tool_result:compute_chart", "card:bazi_chart", "tool_result:search_knowledge", "content:", "done:stop"} {
		if !strings.Contains(got, w) {
			t.Fatalf("turn 2 lacks %s: %s", w, got)
		}
	}
	for _, e := range evs {
		if e.IsError {
			t.Fatalf("tool error: %+v", e)
		}
	}
	reqs := fake.Requests()
	if len(reqs) != 7 {
		t.Fatalf("model requests = %d", len(reqs))
	}
	// The last request carried the search result with its citation back to
	// the model, wrapped as the skill spec says.
	last := reqs[len(reqs)-1]
	found := false
	for _, m := range last.Messages {
		if m.Role == llm.RoleTool && strings.Contains(m.Content, `chunk="knowledge/bazi/converted/a.md#1"`) &&
			strings.Contains(m.Content, "来源 / source: a.pdf > 论日主 [knowledge/bazi/converted/a.md#1]\n</knowledge>") {
			found = true
		}
	}
	if !found {
		t.Fatalf("search result not fed back: %+v", last.Messages)
	}
}
