package runtime

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/vibelife/vibe/knowledge/sqlite"
	"github.com/vibelife/vibe/llm"
)

// BenchmarkTurn measures the runtime's own work per turn (prompt assembly,
// tool dispatch, persistence) with a model that answers instantly: each turn
// calls one core tool and then answers. Report p50 with -benchtime and
// benchstat; ns/op is the mean.
func BenchmarkTurn(b *testing.B) {
	m := &fakeModel{}
	a, _ := newTestAgent(b, m, func(c *Config) { c.SummaryEvery = 1 << 30 })
	ctx := context.Background()
	emit := func(Event) error { return nil }
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		m.mu.Lock()
		m.script = []step{{calls: []llm.ToolCall{call("1", "get_rules", `{"question":"甲木寅月"}`)}}, {text: []string{"答案"}}}
		m.requests = m.requests[:0]
		m.mu.Unlock()
		if _, err := a.Turn(ctx, TurnRequest{UserID: "u", ConversationID: fmt.Sprint("c", i%50), Message: "甲木生于寅月", Skill: "bazi"}, emit); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkIdleConversation reports the memory each idle conversation (one
// finished turn) holds in the in-memory store.
func BenchmarkIdleConversation(b *testing.B) {
	const n = 1000
	for b.Loop() {
		a, _ := newTestAgent(b, &fakeModel{}, nil)
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for i := range n {
			if _, err := a.Turn(context.Background(), TurnRequest{UserID: fmt.Sprint("u", i), ConversationID: fmt.Sprint("c", i), Message: "你好"}, func(Event) error { return nil }); err != nil {
				b.Fatal(err)
			}
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		runtime.KeepAlive(a)
		b.ReportMetric(float64(int64(after.HeapAlloc)-int64(before.HeapAlloc))/n, "bytes/conversation")
	}
}

// BenchmarkTurnSQLite is BenchmarkTurn with the memory in the embedded store.
func BenchmarkTurnSQLite(b *testing.B) {
	st, err := sqlite.Open(context.Background(), filepath.Join(b.TempDir(), "vibe.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	m := &fakeModel{}
	a, _ := newTestAgent(b, m, func(c *Config) { c.SummaryEvery = 1 << 30; c.Memory = st })
	ctx := context.Background()
	emit := func(Event) error { return nil }
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		m.mu.Lock()
		m.script = []step{{calls: []llm.ToolCall{call("1", "get_rules", `{"question":"甲木寅月"}`)}}, {text: []string{"答案"}}}
		m.requests = m.requests[:0]
		m.mu.Unlock()
		if _, err := a.Turn(ctx, TurnRequest{UserID: "u", ConversationID: fmt.Sprint("c", i%50), Message: "甲木生于寅月", Skill: "bazi"}, emit); err != nil {
			b.Fatal(err)
		}
	}
}
