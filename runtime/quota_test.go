package runtime

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vibelife/vibe/knowledge"
	"github.com/vibelife/vibe/knowledge/pgvector"
	"github.com/vibelife/vibe/knowledge/sqlite"
	"github.com/vibelife/vibe/llm"
)

// usageModel answers "ok" to every call and reports 40 prompt and 10
// completion tokens for it, counting the calls.
type usageModel struct{ calls atomic.Int32 }

func (m *usageModel) Stream(ctx context.Context, req llm.Request, fn func(llm.Delta) error) (llm.Response, error) {
	m.calls.Add(1)
	if err := fn(llm.Delta{Content: "ok"}); err != nil {
		return llm.Response{}, err
	}
	return llm.Response{Content: "ok", FinishReason: "stop", Usage: llm.Usage{PromptTokens: 40, CompletionTokens: 10}}, nil
}

// newQuotaServer starts a Server of an agent on model m (nil: retrieval
// only) over mem (nil: a MemStore), with keys ka (alice) and kb (bob).
func newQuotaServer(t *testing.T, m Model, mem knowledge.MemoryStore, opts ServerOptions) string {
	t.Helper()
	a, _ := newTestAgent(t, m, func(c *Config) {
		if mem != nil {
			c.Memory = mem
		}
	})
	opts.Keys = &Keys{}
	if err := ParseKeysEnv("ka:alice,kb:bob", opts.Keys); err != nil {
		t.Fatal(err)
	}
	s, err := NewServer(a, opts)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	return ts.URL
}

// quotaTurn sends one /api/chat turn; on 200 it returns the done event's
// total tokens, else the Retry-After header and the error body.
func quotaTurn(t *testing.T, url, key string) (code, tokens int, retry, body string) {
	t.Helper()
	resp := do(t, "POST", url+"/api/chat", key, `{"message":"你好"}`)
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, 0, resp.Header.Get("Retry-After"), string(b)
	}
	done := false
	for _, ev := range readSSE(t, resp.Body) {
		if ev.Type == EventDone {
			done = true
			if ev.Usage != nil {
				tokens = ev.Usage.TotalTokens
			}
		}
	}
	if !done {
		t.Fatalf("turn of %s on %s: no done event", key, url)
	}
	return 200, tokens, "", ""
}

// checkTokenRefusal checks a 429 of serve.tokens_per_day: Retry-After is
// the seconds to the next UTC midnight, the error names the setting.
func checkTokenRefusal(t *testing.T, what string, code int, retry, body, wantRetry string) {
	t.Helper()
	if code != 429 {
		t.Fatalf("%s = %d, want 429", what, code)
	}
	if retry != wantRetry {
		t.Fatalf("%s: Retry-After %q, want %q (seconds to midnight UTC)", what, retry, wantRetry)
	}
	var e apiError
	if err := json.Unmarshal([]byte(body), &e); err != nil {
		t.Fatalf("%s: body %q is not a JSON error: %v", what, body, err)
	}
	if e.Error.Type != "token_limit_exceeded" || !strings.Contains(e.Error.Message, "serve.tokens_per_day") {
		t.Fatalf("%s: error %+v does not name serve.tokens_per_day", what, e.Error)
	}
}

// TestTokensPerDay: with serve.tokens_per_day 80 over a MemStore, each turn
// of the model spends 50 tokens: alice's second turn starts at 50 (under
// the limit) and is answered, her third (at 100) is 429 with Retry-After to
// midnight UTC and reaches no model, on /api/chat and on
// /v1/chat/completions; bob is not limited by alice's tokens; the next UTC
// day alice may talk again. A retrieval-only server is never limited.
func TestTokensPerDay(t *testing.T) {
	var mu sync.Mutex
	now := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	m := &usageModel{}
	url := newQuotaServer(t, m, nil, ServerOptions{TokensPerDay: 80, Now: clock})
	for i := range 2 {
		code, tokens, _, body := quotaTurn(t, url, "ka")
		if code != 200 || tokens != 50 {
			t.Fatalf("alice's turn %d = %d, %d tokens (%s); want 200, 50 tokens", i+1, code, tokens, body)
		}
	}
	calls := m.calls.Load()
	code, _, retry, body := quotaTurn(t, url, "ka")
	checkTokenRefusal(t, "alice's third turn", code, retry, body, "50400")
	resp := do(t, "POST", url+"/v1/chat/completions", "ka", `{"model":"vibe","messages":[{"role":"user","content":"你好"}]}`)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	checkTokenRefusal(t, "alice's completion", resp.StatusCode, resp.Header.Get("Retry-After"), string(b), "50400")
	if got := m.calls.Load(); got != calls {
		t.Fatalf("refused turns called the model %d times", got-calls)
	}
	if code, tokens, _, body := quotaTurn(t, url, "kb"); code != 200 || tokens != 50 {
		t.Fatalf("bob = %d, %d tokens (%s)", code, tokens, body)
	}
	mu.Lock()
	now = time.Date(2026, 11, 25, 23, 59, 59, 500_000_000, time.UTC)
	mu.Unlock()
	code, _, retry, body = quotaTurn(t, url, "ka")
	checkTokenRefusal(t, "alice half a second before midnight", code, retry, body, "1")
	mu.Lock()
	now = time.Date(2026, 11, 26, 0, 0, 1, 0, time.UTC)
	mu.Unlock()
	if code, _, _, body := quotaTurn(t, url, "ka"); code != 200 {
		t.Fatalf("alice the next day = %d (%s)", code, body)
	}

	offline := newQuotaServer(t, nil, nil, ServerOptions{TokensPerDay: 1, Now: clock})
	for i := range 3 {
		if code, tokens, _, body := quotaTurn(t, offline, "ka"); code != 200 || tokens != 0 {
			t.Fatalf("retrieval-only turn %d = %d, %d tokens (%s); want 200, 0 tokens", i+1, code, tokens, body)
		}
	}
}

// TestTokensPerDaySharedByReplicas: two Servers on one PostgreSQL (two
// replicas) add alice's tokens to one count of the day.
func TestTokensPerDaySharedByReplicas(t *testing.T) {
	url := postgresURL(t)
	var stores []knowledge.MemoryStore
	for range 2 {
		st, err := pgvector.Open(context.Background(), url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		stores = append(stores, st)
	}
	sharedTokens(t, stores)
}

// TestTokensPerDayOnSQLite: two Servers on one SQLite file count alice's
// tokens together, and a third that served none of her turns (as after a
// restart) refuses her too.
func TestTokensPerDayOnSQLite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "vibe.db")
	var stores []knowledge.MemoryStore
	for range 3 {
		st, err := sqlite.Open(context.Background(), path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		stores = append(stores, st)
	}
	sharedTokens(t, stores)
}

// sharedTokens runs Servers over stores (one file or database) with
// serve.tokens_per_day 80: alice spends 50 on the first, then 50 on the
// second (which saw 50, under 80), then every one refuses her; bob is not
// limited.
func sharedTokens(t *testing.T, stores []knowledge.MemoryStore) {
	t.Helper()
	now := time.Date(2026, 11, 25, 18, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	var urls []string
	for _, st := range stores {
		urls = append(urls, newQuotaServer(t, &usageModel{}, st, ServerOptions{TokensPerDay: 80, Now: clock}))
	}
	for i := range 2 {
		if code, tokens, _, body := quotaTurn(t, urls[i], "ka"); code != 200 || tokens != 50 {
			t.Fatalf("alice's turn on server %d = %d, %d tokens (%s)", i+1, code, tokens, body)
		}
	}
	for i := range urls {
		code, _, retry, body := quotaTurn(t, urls[i], "ka")
		checkTokenRefusal(t, fmt.Sprintf("alice's third turn on server %d", i+1), code, retry, body, "21600")
	}
	if code, _, _, body := quotaTurn(t, urls[1], "kb"); code != 200 {
		t.Fatalf("bob = %d (%s)", code, body)
	}
}
