package runtime

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/vibelife/vibe/llm"
	"github.com/vibelife/vibe/skills"
)

// TestSymlinkLeavingASkillIsRefused is the regression test of issue 18's
// leak: `ln -s / skills/bazi/rootdir`, then read_skill_resource
// rootdir/proc/self/environ returned the server's environment (API keys
// included). Through both chat APIs, driven by a model that calls the tool,
// and through /api/tools/execute, the read is refused and the environment
// never reaches the model nor the client.
func TestSymlinkLeavingASkillIsRefused(t *testing.T) {
	const secret = "vibe-symlink-secret-4711"
	t.Setenv("VIBE_SYMLINK_TEST_SECRET", secret)
	root := t.TempDir()
	if err := os.CopyFS(root, os.DirFS(filepath.Join("testdata", "skills"))); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/", filepath.Join(root, "bazi", "rootdir")); err != nil {
		t.Skipf("symlinks unavailable: %v", err)
	}
	if _, err := os.ReadFile("/proc/self/environ"); err != nil {
		t.Skipf("no /proc/self/environ to leak: %v", err)
	}
	readCall := call("1", "read_skill_resource", `{"skill":"bazi","path":"rootdir/proc/self/environ"}`)
	// The model calls the tool on every user message and answers after the
	// tool result.
	model := func(req llm.Request) step {
		if req.Messages[len(req.Messages)-1].Role == llm.RoleTool {
			return step{text: []string{"done"}}
		}
		return step{calls: []llm.ToolCall{readCall}}
	}
	set, err := skills.Open(root, skills.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rec := &recordingModel{inner: model}
	a, err := New(Config{Skills: set, Model: rec, Searcher: fakeSearcher{}, Memory: NewMemStore()})
	if err != nil {
		t.Fatal(err)
	}
	keys := &Keys{}
	keys.Add("ka", "alice")
	s, err := NewServer(a, ServerOptions{Keys: keys})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s)
	defer ts.Close()

	for _, tt := range []struct{ name, path, body string }{
		{"native", "/api/chat", `{"message":"读文件","conversation_id":"leak"}`},
		{"openai", "/v1/chat/completions", `{"model":"vibe","messages":[{"role":"user","content":"读文件"}]}`},
		{"openai-stream", "/v1/chat/completions", `{"model":"vibe","stream":true,"messages":[{"role":"user","content":"读文件"}]}`},
		{"tools-execute", "/api/tools/execute", `{"skill":"bazi","tool":"read_skill_resource","args":{"path":"rootdir/proc/self/environ"}}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			before := rec.count()
			resp := do(t, "POST", ts.URL+tt.path, "ka", tt.body)
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if strings.Contains(string(b), secret) {
				t.Fatalf("the environment leaked to the client: %.300s", b)
			}
			if tt.name == "tools-execute" {
				if resp.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(string(b), "refused") {
					t.Fatalf("tools/execute = %d %s", resp.StatusCode, b)
				}
				return
			}
			if resp.StatusCode != 200 {
				t.Fatalf("%s = %d %s", tt.path, resp.StatusCode, b)
			}
			reqs := rec.since(before)
			if len(reqs) != 2 {
				t.Fatalf("model called %d times, want 2 (tool call, answer)", len(reqs))
			}
			tool := reqs[1].Messages[len(reqs[1].Messages)-1]
			if tool.Role != llm.RoleTool || tool.Name != "read_skill_resource" {
				t.Fatalf("last message to the model = %+v", tool)
			}
			if strings.Contains(tool.Content, secret) || !strings.Contains(tool.Content, "refused") {
				t.Fatalf("tool result given to the model = %.300s", tool.Content)
			}
		})
	}
}

// recordingModel answers each request with the step inner gives for it
// and keeps the requests (summaries excepted).
type recordingModel struct {
	inner    func(llm.Request) step
	mu       sync.Mutex
	requests []llm.Request
}

func (r *recordingModel) Stream(ctx context.Context, req llm.Request, fn func(llm.Delta) error) (llm.Response, error) {
	if req.Stage == "serve.summary" {
		return llm.Response{Content: "summary", FinishReason: "stop"}, nil
	}
	r.mu.Lock()
	r.requests = append(r.requests, req)
	r.mu.Unlock()
	s := r.inner(req)
	var resp llm.Response
	for _, t := range s.text {
		if err := fn(llm.Delta{Content: t}); err != nil {
			return resp, err
		}
		resp.Content += t
	}
	resp.ToolCalls, resp.FinishReason = s.calls, "stop"
	if len(s.calls) > 0 {
		resp.FinishReason = "tool_calls"
	}
	return resp, nil
}

func (r *recordingModel) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.requests)
}

func (r *recordingModel) since(n int) []llm.Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]llm.Request(nil), r.requests[n:]...)
}
