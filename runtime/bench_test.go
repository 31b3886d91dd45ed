package runtime

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/vibelife/vibe/internal/latency"
	"github.com/vibelife/vibe/knowledge/sqlite"
	"github.com/vibelife/vibe/llm"
)

// benchTurns runs turns with a model that answers instantly: each turn
// calls get_rules and search_knowledge in one step, shows a card in the
// next, then answers, so it measures the runtime's own work (prompt
// assembly three times, tool dispatch, persistence).
func benchTurns(b *testing.B, mutate func(*Config)) {
	m := &fakeModel{}
	a, _ := newTestAgent(b, m, func(c *Config) {
		c.SummaryEvery = 1 << 30
		if mutate != nil {
			mutate(c)
		}
	})
	ctx := context.Background()
	emit := func(Event) error { return nil }
	rec := latency.Start()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		m.mu.Lock()
		m.script = []step{
			{calls: []llm.ToolCall{call("1", "get_rules", `{"question":"甲木寅月"}`), call("2", "search_knowledge", `{"query":"甲木寅月"}`)}},
			{calls: []llm.ToolCall{call("3", "show_chart", `{"day_master":"甲"}`)}},
			{text: []string{"日主", "得令。"}},
		}
		m.requests = m.requests[:0]
		m.mu.Unlock()
		// 50 conversations of growing history, so the window and the
		// stored history are exercised.
		if err := rec.Time(func() error {
			_, err := a.Turn(ctx, TurnRequest{UserID: "u", ConversationID: fmt.Sprint("c", i%50), Message: "甲木生于寅月", Skill: "bazi"}, emit)
			return err
		}); err != nil {
			b.Fatal(err)
		}
	}
	rec.Report(b)
}

// BenchmarkTurn is the runtime's work per turn with the in-memory store.
func BenchmarkTurn(b *testing.B) { benchTurns(b, nil) }

// BenchmarkTurnSQLite is the runtime's work per turn with the memory in the
// embedded store (the default of vibe serve): the p50 target is under 5 ms.
func BenchmarkTurnSQLite(b *testing.B) {
	st, err := sqlite.Open(context.Background(), filepath.Join(b.TempDir(), "vibe.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	benchTurns(b, func(c *Config) { c.Memory = st })
}

// idleConversations runs one short turn in each of n conversations and
// returns the heap they keep once idle, per conversation.
func idleConversations(b *testing.B, a *Agent, n int) float64 {
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for i := range n {
		if _, err := a.Turn(context.Background(), TurnRequest{UserID: fmt.Sprint("u", i), ConversationID: fmt.Sprint("c", i), Message: "你好"}, func(Event) error { return nil }); err != nil {
			b.Fatal(err)
		}
	}
	a.Wait()
	runtime.GC()
	runtime.ReadMemStats(&after)
	return float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / float64(n)
}

// BenchmarkIdleConversation reports the heap each idle conversation (one
// finished turn) holds: with the in-memory store, its messages; with the
// embedded store, nothing but what SQLite caches, since the runtime keeps no
// state between turns.
func BenchmarkIdleConversation(b *testing.B) {
	const n = 1000
	b.Run("memstore", func(b *testing.B) {
		for b.Loop() {
			a, _ := newTestAgent(b, &fakeModel{}, nil)
			b.ReportMetric(idleConversations(b, a, n), "heap-bytes/conversation")
			runtime.KeepAlive(a)
		}
	})
	b.Run("sqlite", func(b *testing.B) {
		for b.Loop() {
			st, err := sqlite.Open(context.Background(), filepath.Join(b.TempDir(), "vibe.db"))
			if err != nil {
				b.Fatal(err)
			}
			a, _ := newTestAgent(b, &fakeModel{}, func(c *Config) { c.Memory = st })
			b.ReportMetric(idleConversations(b, a, n), "heap-bytes/conversation")
			runtime.KeepAlive(a)
			st.Close()
		}
	})
}
