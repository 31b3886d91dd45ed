package llm_test

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/vibelife/vibe/chunk"
	"github.com/vibelife/vibe/internal/testcorpus"
	"github.com/vibelife/vibe/llm"
	"github.com/vibelife/vibe/llm/llmtest"
)

type sleeps struct {
	mu sync.Mutex
	d  []time.Duration
}

func (s *sleeps) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.d = append(s.d, d)
	return ctx.Err()
}

func newClient(t *testing.T, srv *llmtest.Server, mod func(*llm.Options)) (*llm.Client, *sleeps) {
	t.Helper()
	sl := &sleeps{}
	o := llm.Options{BaseURL: srv.URL, APIKey: "test", Model: "m", MaxRetries: 3, Timeout: 5 * time.Second,
		Sleep: sl.sleep, Jitter: func() float64 { return 0 }}
	if mod != nil {
		mod(&o)
	}
	return llm.New(o), sl
}

var ruleSchema = &llm.Schema{Name: "rule", JSON: json.RawMessage(`{"type":"object","required":["condition"],"properties":{"condition":{"type":"string","minLength":1}},"additionalProperties":false}`)}

func user(s string) []llm.Message { return []llm.Message{{Role: llm.RoleUser, Content: s}} }

func TestChatFaults(t *testing.T) {
	tests := []struct {
		name         string
		script       []llmtest.Reply
		req          llm.Request
		timeout      time.Duration
		wantContent  string
		wantTool     string
		wantRequests int
		wantSleeps   []time.Duration
		wantErr      error
	}{
		{name: "text", script: []llmtest.Reply{llmtest.Text("答")}, wantContent: "答", wantRequests: 1},
		{name: "tool call", script: []llmtest.Reply{llmtest.ToolCall("search_knowledge", `{"query":"用神"}`)}, wantTool: "search_knowledge", wantRequests: 1},
		{name: "429 honours Retry-After", script: []llmtest.Reply{llmtest.RateLimited("2"), llmtest.Text("ok")}, wantContent: "ok", wantRequests: 2, wantSleeps: []time.Duration{2 * time.Second}},
		{name: "500 then backoff", script: []llmtest.Reply{llmtest.Status(500, "boom"), llmtest.Status(503, "busy"), llmtest.Text("ok")}, wantContent: "ok", wantRequests: 3, wantSleeps: []time.Duration{250 * time.Millisecond, 500 * time.Millisecond}},
		{name: "400 is not retried", script: []llmtest.Reply{llmtest.Status(400, "bad")}, wantRequests: 1, wantErr: errAny},
		{name: "gives up", script: []llmtest.Reply{llmtest.Status(500, "a"), llmtest.Status(500, "b"), llmtest.Status(500, "c"), llmtest.Status(500, "d")}, wantRequests: 4, wantErr: errAny,
			wantSleeps: []time.Duration{250 * time.Millisecond, 500 * time.Millisecond, time.Second}},
		{name: "slow response past the timeout is retried", timeout: 50 * time.Millisecond, script: []llmtest.Reply{llmtest.Slow(2*time.Second, llmtest.Text("late")), llmtest.Text("ok")}, wantContent: "ok", wantRequests: 2, wantSleeps: []time.Duration{250 * time.Millisecond}},
		{name: "schema repair round", req: llm.Request{Schema: ruleSchema}, script: []llmtest.Reply{llmtest.Text(`{"condition":""}`), llmtest.Text(`{"condition":"身弱"}`)}, wantContent: `{"condition":"身弱"}`, wantRequests: 2},
		{name: "schema still broken after repair", req: llm.Request{Schema: ruleSchema}, script: []llmtest.Reply{llmtest.Text(`{"x":1}`), llmtest.Text(`not json`)}, wantRequests: 2, wantErr: llm.ErrInvalidOutput},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.New(t, tt.script...)
			c, sl := newClient(t, srv, func(o *llm.Options) {
				if tt.timeout > 0 {
					o.Timeout = tt.timeout
				}
			})
			req := tt.req
			req.Messages, req.Stage = user("问"), "test"
			r, err := c.Chat(context.Background(), req)
			switch {
			case tt.wantErr == errAny && err == nil:
				t.Fatal("want an error")
			case tt.wantErr != nil && tt.wantErr != errAny && !errors.Is(err, tt.wantErr):
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			case tt.wantErr == nil && err != nil:
				t.Fatal(err)
			}
			if r.Content != tt.wantContent {
				t.Errorf("content %q, want %q", r.Content, tt.wantContent)
			}
			if tt.wantTool != "" && (len(r.ToolCalls) != 1 || r.ToolCalls[0].Name != tt.wantTool) {
				t.Errorf("tool calls %+v, want %s", r.ToolCalls, tt.wantTool)
			}
			if srv.Count() != tt.wantRequests {
				t.Errorf("server saw %d requests, want %d", srv.Count(), tt.wantRequests)
			}
			if len(sl.d) != len(tt.wantSleeps) {
				t.Fatalf("sleeps %v, want %v", sl.d, tt.wantSleeps)
			}
			for i := range sl.d {
				if sl.d[i] != tt.wantSleeps[i] {
					t.Errorf("sleep %d = %v, want %v", i, sl.d[i], tt.wantSleeps[i])
				}
			}
		})
	}
}

var errAny = errors.New("any error")

func TestJSONSchemaFallback(t *testing.T) {
	srv := llmtest.New(t, llmtest.Text(`{"condition":"a"}`), llmtest.Text(`{"condition":"b"}`))
	srv.RejectJSONSchema(true)
	c, _ := newClient(t, srv, nil)
	for _, want := range []string{"a", "b"} {
		r, err := c.Chat(context.Background(), llm.Request{Messages: user(want), Schema: ruleSchema})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(r.Content, want) {
			t.Errorf("content %q", r.Content)
		}
	}
	reqs := srv.Requests()
	// json_schema once, rejected; then JSON mode for good.
	var kinds []string
	for _, r := range reqs {
		kinds = append(kinds, r.ResponseFormatType())
	}
	if strings.Join(kinds, ",") != "json_schema,json_object,json_object" {
		t.Errorf("response formats %v", kinds)
	}
}

func TestCacheBudgetDryRun(t *testing.T) {
	dir := t.TempDir()
	srv := llmtest.New(t, llmtest.Text("one"), llmtest.Text("two"))
	c, _ := newClient(t, srv, func(o *llm.Options) { o.CacheDir = dir })
	for _, q := range []string{"q1", "q2"} {
		if _, err := c.Chat(context.Background(), llm.Request{Stage: "map", Messages: user(q), PromptVersion: "v1"}); err != nil {
			t.Fatal(err)
		}
	}
	// A new client over the same cache sends nothing.
	c2, _ := newClient(t, srv, func(o *llm.Options) { o.CacheDir = dir })
	for i, q := range []string{"q1", "q2"} {
		r, err := c2.Chat(context.Background(), llm.Request{Stage: "map", Messages: user(q), PromptVersion: "v1"})
		if err != nil {
			t.Fatal(err)
		}
		if !r.Cached || r.Content != []string{"one", "two"}[i] {
			t.Errorf("%s: %+v, want cached answer", q, r)
		}
	}
	if u := c.Usage()["map"]; u.SentPromptTokens != 2*llm.PromptTokens(llm.Request{Messages: user("q1")}, nil) {
		t.Errorf("sent prompt tokens %d, want the two requests counted", u.SentPromptTokens)
	}
	if srv.Count() != 2 || c2.Usage()["map"].CachedHits != 2 || c2.Usage()["map"].SentPromptTokens != 0 {
		t.Errorf("requests %d, usage %+v", srv.Count(), c2.Usage())
	}
	// A new prompt version misses the cache; dry run counts it without sending.
	dry, _ := newClient(t, srv, func(o *llm.Options) { o.CacheDir = dir; o.DryRun = true })
	_, err := dry.Chat(context.Background(), llm.Request{Stage: "map", Messages: user("q1"), PromptVersion: "v2"})
	if !errors.Is(err, llm.ErrDryRun) || srv.Count() != 2 || dry.Usage()["map"].DryRunRequests != 1 || dry.Usage()["map"].DryRunPromptTokens == 0 {
		t.Errorf("dry run: err %v, requests %d, usage %+v", err, srv.Count(), dry.Usage())
	}
	// Budget: the first request fits, the second would overspend.
	srv.Push(llmtest.Reply{Text: "x", PromptTokens: 1000, CompletionTokens: 1000})
	b, _ := newClient(t, srv, func(o *llm.Options) {
		o.Prices = map[string]llm.Price{"m": {InputPerMTok: 1000, OutputPerMTok: 1000}}
		o.Budget = 2.5
	})
	if _, err := b.Chat(context.Background(), llm.Request{Messages: user("a"), MaxTokens: 10}); err != nil {
		t.Fatal(err)
	}
	before := srv.Count()
	_, err = b.Chat(context.Background(), llm.Request{Messages: user("b"), MaxTokens: 1000})
	if !errors.Is(err, llm.ErrBudgetExceeded) || srv.Count() != before || !strings.Contains(err.Error(), "spent 2.0000 of 2.5000") {
		t.Errorf("budget: err %v, requests %d->%d", err, before, srv.Count())
	}
}

func TestStream(t *testing.T) {
	cut := llmtest.Reply{Handler: func(w http.ResponseWriter, r *http.Request) { panic(http.ErrAbortHandler) }}
	srv := llmtest.New(t, cut, llmtest.Text("流式回答的全部内容"), llmtest.CutStream("abcdefghijklmnopqrstuvwxyz", 1), llmtest.ToolCall("show_report", `{}`))
	c, sl := newClient(t, srv, nil)
	var got strings.Builder
	r, err := c.Stream(context.Background(), llm.Request{Messages: user("x")}, func(d llm.Delta) error { got.WriteString(d.Content); return nil })
	if err != nil {
		t.Fatal(err)
	}
	if got.String() != "流式回答的全部内容" || r.Content != got.String() || len(sl.d) != 1 {
		t.Errorf("streamed %q, response %q, sleeps %v", got.String(), r.Content, sl.d)
	}
	// Cut after text was delivered: not retried, ErrStreamCut.
	_, err = c.Stream(context.Background(), llm.Request{Messages: user("y")}, func(llm.Delta) error { return nil })
	if !errors.Is(err, llm.ErrStreamCut) {
		t.Errorf("err = %v, want ErrStreamCut", err)
	}
	var calls []llm.ToolCall
	r, err = c.Stream(context.Background(), llm.Request{Messages: user("z")}, func(d llm.Delta) error {
		if d.ToolCall != nil {
			calls = append(calls, *d.ToolCall)
		}
		return nil
	})
	if err != nil || len(calls) != 1 || calls[0].Name != "show_report" || len(r.ToolCalls) != 1 {
		t.Errorf("tool stream: err %v, calls %+v, response %+v", err, calls, r)
	}
}

func TestStructuredFaults(t *testing.T) {
	good := `{"condition":"财多身弱"}`
	tests := []struct {
		name         string
		script       []llmtest.Reply
		timeout      time.Duration
		wantRequests int
		wantRepairs  int
		wantRetries  int
	}{
		{name: "answer as a tool call", script: []llmtest.Reply{llmtest.ToolCall("extract", good)}, wantRequests: 1},
		{name: "schema broken then repaired", script: []llmtest.Reply{llmtest.Text(`{"condition":""}`), llmtest.Text(good)}, wantRequests: 2, wantRepairs: 1},
		{name: "body cut mid-way", script: []llmtest.Reply{llmtest.CutBody(good), llmtest.Text(good)}, wantRequests: 2, wantRetries: 1},
		{name: "slow past the timeout", script: []llmtest.Reply{llmtest.Slow(2*time.Second, llmtest.Text(good)), llmtest.Text(good)}, timeout: 100 * time.Millisecond, wantRequests: 2, wantRetries: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.New(t, tt.script...)
			c, _ := newClient(t, srv, func(o *llm.Options) {
				if tt.timeout > 0 {
					o.Timeout = tt.timeout
				}
			})
			r, err := c.Chat(context.Background(), llm.Request{Stage: "s", Messages: user("x"), Schema: ruleSchema})
			if err != nil {
				t.Fatal(err)
			}
			u := c.Usage()["s"]
			if r.Content != good || srv.Count() != tt.wantRequests || u.Repairs != tt.wantRepairs || u.Retries != tt.wantRetries {
				t.Errorf("content %q, requests %d, usage %+v", r.Content, srv.Count(), u)
			}
		})
	}
}

func TestPromptTokens(t *testing.T) {
	words := func(s string) int { return len(strings.Fields(s)) }
	req := llm.Request{Messages: []llm.Message{{Role: llm.RoleSystem, Content: "a b c"}, {Role: llm.RoleUser, Content: "d e"}},
		Schema: &llm.Schema{Name: "x", JSON: json.RawMessage(`{"type": "object"}`)}}
	// 3 priming + (4+3) + (4+2) + 2 schema words.
	if got := llm.PromptTokens(req, words); got != 18 {
		t.Errorf("PromptTokens = %d, want 18", got)
	}
	for model, want := range map[string]string{"gpt-4o-mini": llm.EncodingO200K, "openai/gpt-4.1": llm.EncodingO200K, "o3-mini": llm.EncodingO200K,
		"gpt-4-turbo": llm.EncodingCL100K, "qwen2.5-72b-instruct": llm.EncodingCL100K, "gpt-3.5-turbo": llm.EncodingCL100K} {
		if got := llm.EncodingFor(model); got != want {
			t.Errorf("EncodingFor(%s) = %s, want %s", model, got, want)
		}
	}
}

// relayUsage is the usage an OpenAI-compatible relay estimates (like
// shared/tools/llm_relay.py): three characters of the JSON-encoded messages
// a prompt token, three characters of the answer a completion token plus 10.
func relayUsage(t *testing.T, msgs []llm.Message, answer string) (prompt, completion int) {
	t.Helper()
	b, err := json.Marshal(msgs)
	if err != nil {
		t.Fatal(err)
	}
	return utf8.RuneCount(b) / 3, utf8.RuneCount([]byte(answer))/3 + 10
}

// TestUsageNotLowWhenEndpointEstimates checks that an endpoint estimating
// its usage at three characters a token, 2-3 times low for Chinese, does not
// make the recorded usage, the cost or the budget low: vibe's count with the
// model's tokenizer (cl100k_base, as for a model whose own is not bundled)
// is larger and is what the client records, reports and charges; an
// endpoint reporting more than vibe counts keeps its own figures.
func TestUsageNotLowWhenEndpointEstimates(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(testcorpus.Dir(t), "bazi", "子平真诠.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := []rune(string(raw))
	passage := string(text[:6000])
	answer := string(text[6000:7000])
	sp, err := chunk.New(chunk.Options{Encoding: llm.EncodingCL100K})
	if err != nil {
		t.Fatal(err)
	}
	msgs := []llm.Message{{Role: llm.RoleSystem, Content: "摘录规则。"}, {Role: llm.RoleUser, Content: passage}}
	relayPrompt, relayCompletion := relayUsage(t, msgs, answer)
	srv := llmtest.New(t, llmtest.Reply{Text: answer, PromptTokens: relayPrompt, CompletionTokens: relayCompletion})
	c, _ := newClient(t, srv, func(o *llm.Options) {
		o.Model = "qwen2.5-72b-instruct"
		o.CountTokens, o.Tokenizer = sp.Count, llm.DescribeTokenizer("qwen2.5-72b-instruct")
		o.Prices = map[string]llm.Price{"qwen2.5-72b-instruct": {InputPerMTok: 100, OutputPerMTok: 100}}
	})
	req := llm.Request{Stage: "extract.map", Messages: msgs}
	r, err := c.Chat(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	counted := llm.PromptTokens(req, sp.Count)
	countedAnswer := sp.Count(answer)
	if counted < 2*relayPrompt {
		t.Fatalf("the fixture does not show the problem: vibe counts %d prompt tokens, the relay %d", counted, relayPrompt)
	}
	want := llm.Usage{PromptTokens: counted, CompletionTokens: max(countedAnswer, relayCompletion),
		EndpointPromptTokens: relayPrompt, EndpointCompletionTokens: relayCompletion,
		CountedPromptTokens: counted, CountedCompletionTokens: countedAnswer}
	if r.Usage != want {
		t.Errorf("response usage %+v, want %+v", r.Usage, want)
	}
	u := c.Usage()["extract.map"]
	if u.PromptTokens != counted || u.EndpointPromptTokens != relayPrompt || u.SentPromptTokens != counted || u.CountedLarger != 1 {
		t.Errorf("stage usage %+v: want vibe's %d prompt tokens recorded over the relay's %d, counted larger once", u, counted, relayPrompt)
	}
	if !strings.Contains(u.Tokenizer, "cl100k_base") || !strings.Contains(u.Tokenizer, "nearest known") {
		t.Errorf("tokenizer %q does not say it is the nearest known one", u.Tokenizer)
	}
	if d := llm.DescribeTokenizer("gpt-4o-mini"); d != "tiktoken o200k_base (gpt-4o-mini's own)" {
		t.Errorf("DescribeTokenizer(gpt-4o-mini) = %q", d)
	}
	wantCost := float64(want.PromptTokens+want.CompletionTokens) * 100 / 1e6
	if math.Abs(u.Cost-wantCost) > 1e-9 || math.Abs(c.Spent()-wantCost) > 1e-9 {
		t.Errorf("cost %.6f, spent %.6f, want %.6f (from vibe's count)", u.Cost, c.Spent(), wantCost)
	}

	// The budget: a short question answered at length. Charged with the
	// relay's figures the second question would fit the budget; charged
	// with vibe's count of the answer it is refused before it is sent.
	q := []llm.Message{{Role: llm.RoleUser, Content: "论用神"}}
	qPrompt, _ := relayUsage(t, q, answer)
	price := func(tokens int) float64 { return float64(tokens) * 100 / 1e6 }
	relaySpent := price(max(qPrompt, llm.PromptTokens(llm.Request{Messages: q}, sp.Count)) + relayCompletion)
	vibeSpent := price(max(qPrompt, llm.PromptTokens(llm.Request{Messages: q}, sp.Count)) + countedAnswer)
	next := price(llm.PromptTokens(llm.Request{Messages: q}, sp.Count) + 10)
	budget := (relaySpent+vibeSpent)/2 + next
	srv.Push(llmtest.Reply{Text: answer, PromptTokens: qPrompt, CompletionTokens: relayCompletion})
	b, _ := newClient(t, srv, func(o *llm.Options) {
		o.Model = "qwen2.5-72b-instruct"
		o.CountTokens = sp.Count
		o.Prices = map[string]llm.Price{"qwen2.5-72b-instruct": {InputPerMTok: 100, OutputPerMTok: 100}}
		o.Budget = budget
	})
	if _, err := b.Chat(context.Background(), llm.Request{Messages: q, MaxTokens: 10}); err != nil {
		t.Fatal(err)
	}
	before := srv.Count()
	_, err = b.Chat(context.Background(), llm.Request{Messages: q, MaxTokens: 10, PromptVersion: "again"})
	if !errors.Is(err, llm.ErrBudgetExceeded) || srv.Count() != before {
		t.Errorf("second question under a budget of %.6f (spent %.6f by the relay's figures, %.6f by vibe's count): err %v, sent %d", budget, relaySpent, vibeSpent, err, srv.Count()-before)
	}

	// An endpoint that reports more than vibe counts keeps its figures.
	srv.Push(llmtest.Reply{Text: "好", PromptTokens: 10 * counted, CompletionTokens: 50})
	h, _ := newClient(t, srv, func(o *llm.Options) { o.CountTokens = sp.Count })
	r, err = h.Chat(context.Background(), llm.Request{Stage: "s", Messages: msgs})
	if err != nil {
		t.Fatal(err)
	}
	if r.Usage.PromptTokens != 10*counted || r.Usage.CompletionTokens != 50 || h.Usage()["s"].CountedLarger != 0 {
		t.Errorf("endpoint above vibe's count: usage %+v, stage %+v", r.Usage, h.Usage()["s"])
	}
}
