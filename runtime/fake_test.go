package runtime

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"github.com/vibelife/vibe/chunk"
	"github.com/vibelife/vibe/knowledge"
	"github.com/vibelife/vibe/llm"
	"github.com/vibelife/vibe/skills"
)

// step is one scripted model response: text pieces, then tool calls.
type step struct {
	text  []string
	calls []llm.ToolCall
}

// fakeModel answers from a script; when the script runs out it repeats
// the fallback step (if any) or answers "ok".
type fakeModel struct {
	mu       sync.Mutex
	script   []step
	fallback *step
	requests []llm.Request
	// guard is the input classifier's verdict (default allow), answered
	// out of the script; guards counts the classifier's requests.
	guard  string
	guards int
}

func (f *fakeModel) Stream(ctx context.Context, req llm.Request, fn func(llm.Delta) error) (llm.Response, error) {
	if req.Stage == "serve.rewrite" {
		// A search's query rewrite is asked out of the script (and not
		// recorded among the turn's requests): the fake echoes the query,
		// which the agent takes as no rewrite (the glossary then bridges).
		// TestSearchRewritesTheQueryWithTheModel scripts real rewrites.
		q := req.Messages[len(req.Messages)-1].Content
		if err := fn(llm.Delta{Content: q}); err != nil {
			return llm.Response{}, err
		}
		return llm.Response{Content: q, FinishReason: "stop"}, nil
	}
	if req.Stage == "serve.guard_input" {
		f.mu.Lock()
		f.guards++
		v := f.guard
		f.mu.Unlock()
		if v == "" {
			v = "allow"
		}
		out := fmt.Sprintf(`{"verdict":%q,"reason":"scripted"}`, v)
		return llm.Response{Content: out, FinishReason: "stop"}, nil
	}
	f.mu.Lock()
	f.requests = append(f.requests, req)
	var s step
	switch {
	case req.Stage == "serve.summary":
		s = step{text: []string{"summary"}}
	case len(f.script) > 0:
		s, f.script = f.script[0], f.script[1:]
	case f.fallback != nil:
		s = *f.fallback
	default:
		s = step{text: []string{"ok"}}
	}
	f.mu.Unlock()
	var resp llm.Response
	for _, t := range s.text {
		if err := fn(llm.Delta{Content: t}); err != nil {
			return resp, err
		}
		resp.Content += t
	}
	resp.ToolCalls = s.calls
	// Usage as an endpoint reports it: 10 tokens a prompt message, 3 a text
	// piece and 5 a tool call.
	resp.Usage = llm.Usage{PromptTokens: 10 * len(req.Messages), CompletionTokens: 3*len(s.text) + 5*len(s.calls)}
	resp.FinishReason = "stop"
	if len(s.calls) > 0 {
		resp.FinishReason = "tool_calls"
	}
	return resp, nil
}

type fakeSearcher struct{}

func (fakeSearcher) Search(ctx context.Context, q knowledge.Query) ([]knowledge.Hit, error) {
	if q.Theme != "bazi" {
		return nil, fmt.Errorf("unexpected theme %q", q.Theme)
	}
	return []knowledge.Hit{{Score: 1, Chunk: chunk.Chunk{ID: "knowledge/bazi/converted/a.md#1", Doc: "knowledge/bazi/converted/a.md", Source: "knowledge/bazi/source/a.pdf", HeadingPath: []string{"论日主"}, Start: 120, End: 180, Text: "甲木生于寅月，得令而旺。"}}}, nil
}

func call(id, name, args string) llm.ToolCall {
	return llm.ToolCall{ID: id, Name: name, Arguments: args}
}

func newTestAgent(t testing.TB, m Model, mutate func(*Config)) (*Agent, *MemStore) {
	t.Helper()
	set, err := skills.Open(filepath.Join("testdata", "skills"), skills.Options{})
	if err != nil {
		t.Fatal(err)
	}
	mem := NewMemStore()
	cfg := Config{Skills: set, Model: m, Searcher: fakeSearcher{}, Memory: mem}
	if mutate != nil {
		mutate(&cfg)
	}
	a, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return a, mem
}

// collect gathers a turn's events.
type collect struct {
	mu     sync.Mutex
	events []Event
}

func (c *collect) emit(e Event) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.events = append(c.events, e)
	return nil
}

func (c *collect) of(typ string) []Event {
	var out []Event
	for _, e := range c.events {
		if e.Type == typ {
			out = append(out, e)
		}
	}
	return out
}

func (c *collect) text() string {
	s := ""
	for _, e := range c.of(EventContent) {
		s += e.Content
	}
	return s
}

func toolResult(t *testing.T, c *collect, tool string) map[string]any {
	t.Helper()
	for _, e := range c.of(EventToolResult) {
		if e.Tool == tool {
			m := map[string]any{}
			if err := json.Unmarshal(e.Result, &m); err != nil {
				t.Fatal(err)
			}
			m["_is_error"] = e.IsError
			return m
		}
	}
	t.Fatalf("no tool_result for %s in %+v", tool, c.events)
	return nil
}

// toolThenAnswer calls get_rules once per turn, then answers; it keeps no
// script, so any number of conversations can share it.
type toolThenAnswer struct{}

func (toolThenAnswer) Stream(ctx context.Context, req llm.Request, fn func(llm.Delta) error) (llm.Response, error) {
	if last := req.Messages[len(req.Messages)-1]; last.Role == llm.RoleUser {
		return llm.Response{ToolCalls: []llm.ToolCall{call("1", "get_rules", `{"question":"`+last.Content+`"}`)}, FinishReason: "tool_calls"}, nil
	}
	if err := fn(llm.Delta{Content: "答"}); err != nil {
		return llm.Response{}, err
	}
	return llm.Response{Content: "答", FinishReason: "stop"}, nil
}
