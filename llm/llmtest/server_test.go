package llmtest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

func post(t *testing.T, url string, body string) (*http.Response, []byte, error) {
	t.Helper()
	resp, err := http.Post(url+"/chat/completions", "application/json", strings.NewReader(body))
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp, b, err
}

func TestScript(t *testing.T) {
	srv := New(t,
		Text("你好"),
		ToolCall("search_knowledge", `{"query":"用神"}`),
		RateLimited("3"),
		Status(500, "boom"),
	)
	srv.RejectJSONSchema(true)
	plain := `{"model":"m","messages":[{"role":"user","content":"hi"}]}`
	tests := []struct {
		name       string
		body       string
		wantStatus int
		wantIn     string
		wantHeader string
	}{
		{"text", plain, 200, `"content":"你好"`, ""},
		{"json_schema rejected without consuming the script", `{"model":"m","messages":[],"response_format":{"type":"json_schema","json_schema":{"name":"x","schema":{}}}}`, 400, "json_schema", ""},
		{"tool call", plain, 200, `"name":"search_knowledge"`, ""},
		{"429", plain, 429, "rate limit", "3"},
		{"500", plain, 500, "boom", ""},
		{"exhausted", plain, 500, "no scripted reply", ""},
	}
	for _, tt := range tests {
		resp, body, err := post(t, srv.URL, tt.body)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if resp.StatusCode != tt.wantStatus || !bytes.Contains(body, []byte(tt.wantIn)) {
			t.Errorf("%s: %d %s, want %d containing %q", tt.name, resp.StatusCode, body, tt.wantStatus, tt.wantIn)
		}
		if got := resp.Header.Get("Retry-After"); got != tt.wantHeader {
			t.Errorf("%s: Retry-After %q, want %q", tt.name, got, tt.wantHeader)
		}
	}
	reqs := srv.Requests()
	if len(reqs) != len(tests) {
		t.Fatalf("recorded %d requests, want %d", len(reqs), len(tests))
	}
	if reqs[0].LastUserMessage() != "hi" || reqs[1].ResponseFormatType() != "json_schema" {
		t.Errorf("recorded %+v / %q", reqs[0].Messages, reqs[1].ResponseFormatType())
	}
}

func TestStream(t *testing.T) {
	srv := New(t, Text("abcdefghijklmnopqrstuvwxyz"), CutStream("abcdefghijklmnopqrstuvwxyz", 1))
	body := `{"model":"m","stream":true,"messages":[{"role":"user","content":"x"}]}`
	resp, err := http.Post(srv.URL+"/chat/completions", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	done := false
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := strings.TrimPrefix(sc.Text(), "data: ")
		if line == "[DONE]" {
			done = true
			continue
		}
		var c struct {
			Choices []struct {
				Delta struct {
					Content string `json:"content"`
				} `json:"delta"`
			} `json:"choices"`
		}
		if json.Unmarshal([]byte(line), &c) == nil && len(c.Choices) > 0 {
			text.WriteString(c.Choices[0].Delta.Content)
		}
	}
	resp.Body.Close()
	if text.String() != "abcdefghijklmnopqrstuvwxyz" || !done {
		t.Errorf("stream gave %q done=%v", text.String(), done)
	}
	// The cut stream ends without [DONE] and with a read error.
	resp, err = http.Post(srv.URL+"/chat/completions", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err == nil || bytes.Contains(b, []byte("[DONE]")) {
		t.Errorf("cut stream: err=%v body=%s, want an abrupt end", err, b)
	}
}

func TestCutBodyAndSchemaName(t *testing.T) {
	srv := New(t, CutBody(`{"rules":[]}`), Text("ok"))
	body := `{"model":"m","response_format":{"type":"json_schema","json_schema":{"name":"extract_map","schema":{}}},"messages":[{"role":"system","content":"version: map/2"},{"role":"user","content":"x"}]}`
	resp, err := http.Post(srv.URL+"/chat/completions", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err == nil || json.Valid(b) {
		t.Errorf("cut body: err=%v body=%s, want an unexpected EOF and half a JSON document", err, b)
	}
	reqs := srv.Requests()
	if reqs[0].SchemaName() != "extract_map" || reqs[0].SystemMessage() != "version: map/2" {
		t.Errorf("schema name %q, system %q", reqs[0].SchemaName(), reqs[0].SystemMessage())
	}
}
