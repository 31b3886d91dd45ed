package runtime

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/vibelife/vibe/llm"
)

// syncBuffer is a bytes.Buffer safe for the server's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// logLines decodes JSON log lines.
func logLines(t *testing.T, s string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(s), "\n") {
		if l == "" {
			continue
		}
		m := map[string]any{}
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("log line %q: %v", l, err)
		}
		out = append(out, m)
	}
	return out
}

// TestRequestLogOfATurn checks a turn writes one log line with the request
// id (the client's, returned in the response header), user, skill, outcome,
// latency, tool steps and tokens, and not the message or the answer unless
// LogContent asks for them.
func TestRequestLogOfATurn(t *testing.T) {
	const message, answer = "帮我看看甲木的命", "甲木得令而旺"
	for _, withContent := range []bool{false, true} {
		m := &fakeModel{script: []step{
			{calls: []llm.ToolCall{call("1", "search_knowledge", `{"query":"甲木"}`), call("2", "get_rules", `{"question":"甲木"}`)}},
			{text: []string{answer}},
		}}
		a, _ := newTestAgent(t, m, nil)
		keys := &Keys{}
		keys.Add("ka", "alice")
		var buf syncBuffer
		s, err := NewServer(a, ServerOptions{Keys: keys, Logger: slog.New(slog.NewJSONHandler(&buf, nil)), LogContent: withContent})
		if err != nil {
			t.Fatal(err)
		}
		ts := httptest.NewServer(s)
		req, _ := http.NewRequest("POST", ts.URL+"/api/chat", strings.NewReader(`{"message":"`+message+`","skill":"bazi"}`))
		req.Header.Set("Authorization", "Bearer ka")
		req.Header.Set("X-Request-Id", "rq-7f3a")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		evs := readSSE(t, resp.Body)
		resp.Body.Close()
		if got := resp.Header.Get("X-Request-Id"); got != "rq-7f3a" {
			t.Errorf("X-Request-Id = %q, want the client's rq-7f3a", got)
		}
		done := evs[len(evs)-1]
		if done.Type != EventDone || done.Usage == nil {
			t.Fatalf("last event %+v", done)
		}
		// A request without an id (or with one holding a space) gets a
		// generated one.
		for _, id := range []string{"", "bad id"} {
			r2, _ := http.NewRequest("GET", ts.URL+"/healthz", nil)
			if id != "" {
				r2.Header.Set("X-Request-Id", id)
			}
			resp2, err := http.DefaultClient.Do(r2)
			if err != nil {
				t.Fatal(err)
			}
			resp2.Body.Close()
			if got := resp2.Header.Get("X-Request-Id"); !strings.HasPrefix(got, "req-") || len(got) != 28 {
				t.Errorf("X-Request-Id for %q = %q, want a generated req-…", id, got)
			}
		}
		ts.Close()

		lines := logLines(t, buf.String())
		// healthz is logged at debug level, which this handler drops.
		if len(lines) != 1 {
			t.Fatalf("content=%v: %d log lines, want 1:\n%s", withContent, len(lines), buf.String())
		}
		l := lines[0]
		want := map[string]any{
			"msg": "request", "request_id": "rq-7f3a", "user": "alice", "skill": "bazi", "route": "POST /api/chat",
			"status": float64(200), "outcome": "stop", "model_calls": float64(2), "tool_steps": float64(2),
			"tokens_in": float64(done.Usage.PromptTokens), "tokens_out": float64(done.Usage.CompletionTokens),
			"conversation_id": done.ConversationID,
		}
		for k, v := range want {
			if l[k] != v {
				t.Errorf("content=%v: log %s = %v, want %v", withContent, k, l[k], v)
			}
		}
		if ms, _ := l["turn_ms"].(float64); ms <= 0 {
			t.Errorf("turn_ms = %v", l["turn_ms"])
		}
		if ms, _ := l["duration_ms"].(float64); ms <= 0 {
			t.Errorf("duration_ms = %v", l["duration_ms"])
		}
		hasText := strings.Contains(buf.String(), message) || strings.Contains(buf.String(), answer) || strings.Contains(buf.String(), "甲木")
		if hasText != withContent {
			t.Errorf("content=%v: log holds the message text: %v\n%s", withContent, hasText, buf.String())
		}
		if withContent && (l["message"] != message || !strings.Contains(l["answer"].(string), answer)) {
			t.Errorf("content logging: message %v answer %v", l["message"], l["answer"])
		}
	}
}
