package runtime

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vibelife/vibe/knowledge"
	"github.com/vibelife/vibe/knowledge/pgvector"
	"github.com/vibelife/vibe/knowledge/sqlite"
	"github.com/vibelife/vibe/llm"
)

// newStoreServer starts a Server over mem, as `vibe serve` does over its
// store; two of them on one database are two replicas.
func newStoreServer(t *testing.T, mem knowledge.MemoryStore, opts ServerOptions) *httptest.Server {
	t.Helper()
	a, _ := newTestAgent(t, &fakeModel{}, func(c *Config) { c.Memory = mem })
	if opts.Keys == nil {
		opts.Keys = &Keys{}
		if err := ParseKeysEnv("ka:alice,kb:bob", opts.Keys); err != nil {
			t.Fatal(err)
		}
	}
	s, err := NewServer(a, opts)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	return ts
}

// concurrentSkillData sends 40 save_skill_data calls for alice at once,
// spread over the servers, each saving its own key, and checks that all 40
// keys and version 40 are in the stored profile.
func concurrentSkillData(t *testing.T, mem knowledge.MemoryStore, urls ...string) {
	t.Helper()
	const n = 40
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp := do(t, "POST", urls[i%len(urls)]+"/api/tools/execute", "ka",
				fmt.Sprintf(`{"skill":"bazi","tool":"save_skill_data","args":{"data":{"k%02d":%d}}}`, i, i))
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 {
				t.Errorf("save_skill_data %d = %d %s", i, resp.StatusCode, b)
			}
		}()
	}
	wg.Wait()
	raw, err := mem.Profile(context.Background(), "alice")
	if err != nil {
		t.Fatal(err)
	}
	var p struct {
		SkillData map[string]map[string]any `json:"skill_data"`
	}
	if err := json.Unmarshal(raw, &p); err != nil {
		t.Fatal(err)
	}
	bazi := p.SkillData["bazi"]
	meta, _ := bazi["_meta"].(map[string]any)
	if len(bazi)-1 != n || meta["version"] != float64(n) {
		t.Fatalf("%d concurrent save_skill_data over %d server(s) kept %d keys, version %v (want %d)", n, len(urls), len(bazi)-1, meta["version"], n)
	}
}

// TestSaveSkillDataConcurrent: 40 concurrent save_skill_data calls of one
// user keep 40 keys on every store (the profile was read, changed and
// written back without a lock: 22 survived).
func TestSaveSkillDataConcurrent(t *testing.T) {
	t.Run("memory", func(t *testing.T) {
		mem := NewMemStore()
		concurrentSkillData(t, mem, newStoreServer(t, mem, ServerOptions{}).URL)
	})
	t.Run("sqlite", func(t *testing.T) {
		st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "vibe.db"))
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		concurrentSkillData(t, st, newStoreServer(t, st, ServerOptions{}).URL)
	})
	t.Run("postgres", func(t *testing.T) {
		st := openPostgres(t)
		concurrentSkillData(t, st, newStoreServer(t, st, ServerOptions{}).URL)
	})
}

// TestSaveSkillDataTwoReplicasPostgres: two Servers, each with its own
// connection pool to the one test database (two replicas), take 40
// concurrent save_skill_data calls of one user between them; all 40 land.
func TestSaveSkillDataTwoReplicasPostgres(t *testing.T) {
	url := postgresURL(t)
	var urls []string
	var first *pgvector.Store
	for range 2 {
		st, err := pgvector.Open(context.Background(), url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		if first == nil {
			first = st
		}
		urls = append(urls, newStoreServer(t, st, ServerOptions{}).URL)
	}
	concurrentSkillData(t, first, urls...)
}

// TestRateLimitSharedByReplicas: two Servers on one PostgreSQL (two
// replicas) draw alice's requests from one bucket of
// serve.requests_per_minute: 10 a minute in all, not 10 each; the 11th, on
// either replica, is 429 with Retry-After; bob has his own bucket, and the
// bucket refills with time.
func TestRateLimitSharedByReplicas(t *testing.T) {
	url := postgresURL(t)
	var mu sync.Mutex
	now := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	var urls []string
	for range 2 {
		st, err := pgvector.Open(context.Background(), url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		urls = append(urls, newStoreServer(t, st, ServerOptions{RequestsPerMin: 10, Now: clock}).URL)
	}
	get := func(i int, key string) (int, string) {
		resp := do(t, "GET", urls[i%2]+"/api/skills", key, "")
		resp.Body.Close()
		return resp.StatusCode, resp.Header.Get("Retry-After")
	}
	for i := range 10 {
		if code, _ := get(i, "ka"); code != 200 {
			t.Fatalf("request %d of 10 = %d", i+1, code)
		}
	}
	for i := range 2 {
		code, retry := get(i, "ka")
		if n, _ := strconv.Atoi(retry); code != 429 || n < 1 || n > 60 {
			t.Fatalf("11th request on replica %d = %d, Retry-After %q", i+1, code, retry)
		}
	}
	if code, _ := get(0, "kb"); code != 200 {
		t.Fatalf("bob = %d", code)
	}
	mu.Lock()
	now = now.Add(6 * time.Second) // one token back at 10 a minute
	mu.Unlock()
	if code, _ := get(1, "ka"); code != 200 {
		t.Fatalf("after 6 s = %d", code)
	}
	if code, _ := get(0, "ka"); code != 429 {
		t.Fatalf("second request after 6 s = %d", code)
	}
}

// effectThenBlockModel calls save_skill_data, then blocks its second step until
// released (a replica killed there never answers).
type effectThenBlockModel struct {
	reached chan struct{}
	release chan struct{}
	calls   int
	mu      sync.Mutex
}

func (m *effectThenBlockModel) Stream(ctx context.Context, req llm.Request, fn func(llm.Delta) error) (llm.Response, error) {
	m.mu.Lock()
	m.calls++
	n := m.calls
	m.mu.Unlock()
	if n == 1 {
		return llm.Response{ToolCalls: []llm.ToolCall{call("1", "save_skill_data", `{"skill":"bazi","data":{"chart":{"day_master":"甲"}}}`)}, FinishReason: "tool_calls"}, nil
	}
	close(m.reached)
	select {
	case <-m.release:
	case <-ctx.Done():
		return llm.Response{}, ctx.Err()
	}
	_ = fn(llm.Delta{Content: "记住了"})
	return llm.Response{Content: "记住了", FinishReason: "stop"}, nil
}

// TestTurnEffectsInHistoryBeforeTheAnswer: the turn's user message is
// stored before its tool writes the profile, and the write right after,
// both before the answer: a replica killed while streaming the answer leaves a history
// that agrees with the profile. The answer is added when it comes.
func TestTurnEffectsInHistoryBeforeTheAnswer(t *testing.T) {
	m := &effectThenBlockModel{reached: make(chan struct{}), release: make(chan struct{})}
	a, mem := newTestAgent(t, m, nil)
	ctx := context.Background()
	done := make(chan error, 1)
	go func() {
		_, err := a.Turn(ctx, TurnRequest{UserID: "alice", ConversationID: "c", Message: "记下我的日主", Skill: "bazi"}, func(Event) error { return nil })
		done <- err
	}()
	<-m.reached
	msgs, err := mem.Messages(ctx, "alice", "c", 0)
	if err != nil {
		t.Fatal(err)
	}
	var roles []string
	for _, x := range msgs {
		roles = append(roles, x.Role)
	}
	if len(msgs) < 2 || msgs[len(msgs)-2].Content != "记下我的日主" || msgs[len(msgs)-1].Role != roleEffect || !strings.Contains(msgs[len(msgs)-1].Content, `save_skill_data {"saved":"skill_data.bazi"`) {
		t.Fatalf("history while the answer streams: %v %+v", roles, msgs)
	}
	if p, _ := mem.Profile(ctx, "alice"); !strings.Contains(string(p), `"day_master":"甲"`) {
		t.Fatalf("profile = %s", p)
	}
	close(m.release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	msgs, _ = mem.Messages(ctx, "alice", "c", 0)
	users, answers := 0, 0
	for _, x := range msgs {
		switch x.Role {
		case "user":
			users++
		case "assistant":
			answers++
		}
	}
	if users != 1 || answers != 1 || msgs[len(msgs)-1].Content != "记住了" {
		t.Fatalf("history after the answer: %+v", msgs)
	}
}
