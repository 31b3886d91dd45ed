package runtime

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestConversationIDLimits: an id longer than MaxConversationIDLen (a
// 100,000-character one was stored) or holding a control character is a
// clear 400 on both APIs, before any stream starts; one of the maximum
// length is accepted.
func TestConversationIDLimits(t *testing.T) {
	ts, _ := newTestServer(t, &fakeModel{}, ServerOptions{})
	long, max := strings.Repeat("x", MaxConversationIDLen+1), strings.Repeat("y", MaxConversationIDLen)
	for _, tt := range []struct {
		id   string
		want int
		msg  string
	}{
		{long, 400, "at most 128"},
		{strings.Repeat("z", 100000), 400, "at most 128"},
		{"a\nb", 400, "control characters"},
		{max, 200, ""},
	} {
		for _, api := range []string{"native", "openai"} {
			var req *http.Request
			if api == "native" {
				req, _ = http.NewRequest("POST", ts.URL+"/api/chat", strings.NewReader(`{"message":"hi","conversation_id":`+quote(tt.id)+`}`))
			} else {
				req, _ = http.NewRequest("POST", ts.URL+"/v1/chat/completions", strings.NewReader(`{"model":"vibe","messages":[{"role":"user","content":"hi"}]}`))
				req.Header.Set("X-Conversation-ID", strings.ReplaceAll(tt.id, "\n", "\t"))
			}
			req.Header.Set("Authorization", "Bearer ka")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tt.want || !strings.Contains(string(b), tt.msg) {
				t.Errorf("%s id of %d bytes = %d %.200s", api, len(tt.id), resp.StatusCode, b)
			}
		}
	}
}

func quote(s string) string { return string(marshal(s)) }
