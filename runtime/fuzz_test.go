package runtime

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// fuzzEndpoint posts each input as the body of path to a server over a
// model that always answers: the handler must not panic, must not fail
// with a 500 (a bad body is the client's error), and answers 200 only with
// the body it promises. A form_response for a conversation that showed no
// form is the client's error too (409).
func fuzzEndpoint(f *testing.F, path string, seeds []string) {
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	a, _ := newTestAgent(f, &fakeModel{fallback: &step{text: []string{"ok"}}}, nil)
	s, err := NewServer(a, ServerOptions{Insecure: true, MaxBodyBytes: 64 << 10})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		req := httptest.NewRequest("POST", path, strings.NewReader(string(body)))
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, req)
		switch rec.Code {
		case http.StatusOK:
			ct := rec.Header().Get("Content-Type")
			if ct != "text/event-stream" && ct != "application/json" {
				t.Fatalf("200 with content type %q", ct)
			}
		case http.StatusBadRequest, http.StatusNotFound, http.StatusConflict, http.StatusRequestEntityTooLarge:
			if !strings.Contains(rec.Body.String(), `"message"`) {
				t.Fatalf("%d without an error message: %s", rec.Code, rec.Body)
			}
		default:
			t.Fatalf("status %d for body %q: %s", rec.Code, body, rec.Body)
		}
	})
}

// FuzzChatRequest fuzzes the body of POST /api/chat (the native API).
func FuzzChatRequest(f *testing.F) {
	fuzzEndpoint(f, "/api/chat", []string{
		`{"message":"看看八字","conversation_id":"c1"}`,
		`{"message":"hi","skill":"bazi"}`,
		`{"message":"hi","skill":"core"}`,
		`{"message":""}`,
		`{"message":"hi"} {}`,
		`[1,2]`,
		`{"conversation_id":"c1","form_response":{"values":{"identity.birth_info.date":"1990-01-01"}}}`,
		`{"conversation_id":"nowhere","form_response":{"values":{"a":1}}}`,
	})
}

// FuzzCompletionsRequest fuzzes the body of POST /v1/chat/completions (the
// OpenAI-compatible API).
func FuzzCompletionsRequest(f *testing.F) {
	fuzzEndpoint(f, "/v1/chat/completions", []string{
		`{"model":"vibe","messages":[{"role":"user","content":"hi"}]}`,
		`{"model":"vibe/bazi","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"system","content":"s"},{"role":"user","content":[{"type":"text","text":"八字"}]},{"role":"assistant","content":"a"},{"role":"user","content":"再说"}]}`,
		`{"model":"gpt-4","messages":[]}`,
		`{"messages":[{"role":"user","content":null}]}`,
		`{"messages":[{"role":"user","content":[{"type":"image_url"}]}]}`,
	})
}
