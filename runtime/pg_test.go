package runtime

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/vibelife/vibe/knowledge/pgvector"
	"github.com/vibelife/vibe/llm"
)

// openPostgres opens the PostgreSQL store in a fresh schema of the test
// database (VIBE_TEST_DATABASE_URL), skipping loudly when none is configured
// and failing under CI=true.
func openPostgres(t *testing.T) *pgvector.Store {
	t.Helper()
	st, err := pgvector.Open(context.Background(), postgresURL(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

var pgSchemaSeq atomic.Int64

// postgresURL makes a fresh schema of the test database and returns the
// database URL whose search_path is it: stores opened on it share one
// database, as replicas do.
func postgresURL(t *testing.T) string {
	t.Helper()
	url := os.Getenv("VIBE_TEST_DATABASE_URL")
	if url == "" {
		msg := "VIBE_TEST_DATABASE_URL is not set: runtime tests on PostgreSQL NOT RUN (run scripts/postgres.sh and source .vibe/test.env)"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip("*** " + msg + " ***")
	}
	ctx := context.Background()
	schema := fmt.Sprintf("vibe_runtime_test_%d_%d", os.Getpid(), pgSchemaSeq.Add(1))
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatalf("connect %s: %v", url, err)
	}
	if _, err := conn.Exec(ctx, `DROP SCHEMA IF EXISTS `+schema+` CASCADE; CREATE SCHEMA `+schema); err != nil {
		t.Fatal(err)
	}
	conn.Close(ctx)
	t.Cleanup(func() {
		if conn, err := pgx.Connect(ctx, url); err == nil {
			conn.Exec(ctx, `DROP SCHEMA `+schema+` CASCADE`)
			conn.Close(ctx)
		}
	})
	sep := "?"
	if strings.Contains(url, "?") {
		sep = "&"
	}
	return url + sep + "search_path=" + schema + ",public"
}

// TestPostgresMemory: the production store keeps the conversation, the
// active skill, the protocol state and the profile across agents, user by
// user, and takes concurrent streams.
func TestPostgresMemory(t *testing.T) {
	st := openPostgres(t)
	ctx := context.Background()
	m := &fakeModel{script: []step{
		{calls: []llm.ToolCall{call("1", "use_skill", `{"name":"bazi"}`), call("2", "save_skill_data", `{"skill":"bazi","data":{"chart":{"day_master":"甲"}}}`)}},
		{text: []string{"好的，先确认出生信息。"}},
	}}
	a, _ := newTestAgent(t, m, func(c *Config) { c.Memory = st })
	if _, err := a.Turn(ctx, TurnRequest{UserID: "alice", ConversationID: "pg", Message: "看看我的八字"}, func(Event) error { return nil }); err != nil {
		t.Fatal(err)
	}

	m2 := &fakeModel{script: []step{{calls: []llm.ToolCall{call("1", "get_user_profile", `{"fields":["skills.bazi.chart.day_master"]}`)}}}}
	a2, _ := newTestAgent(t, m2, func(c *Config) { c.Memory = st })
	c := &collect{}
	if _, err := a2.Turn(ctx, TurnRequest{UserID: "alice", ConversationID: "pg", Message: "继续"}, c.emit); err != nil {
		t.Fatal(err)
	}
	if r := toolResult(t, c, "get_user_profile"); r["found"].(map[string]any)["skills.bazi.chart.day_master"] != "甲" {
		t.Fatalf("profile = %v", r)
	}
	sys := m2.requests[0].Messages[0].Content
	if !hasTool(m2.requests[0].Tools, "compute_chart") || !strings.Contains(sys, "protocol in progress: reading") || !strings.Contains(sys, "done: 出生信息") {
		t.Fatalf("state lost in PostgreSQL:\n%s", sys)
	}
	// Ids are per user: bob's "pg" is his own conversation; alice's keeps
	// its messages.
	before, _ := st.Messages(ctx, "alice", "pg", 0)
	if _, err := a2.Turn(ctx, TurnRequest{UserID: "bob", ConversationID: "pg", Message: "hi"}, func(Event) error { return nil }); err != nil {
		t.Fatalf("bob's own conversation: %v", err)
	}
	if after, _ := st.Messages(ctx, "alice", "pg", 0); len(after) != len(before) {
		t.Fatalf("bob's turn changed alice's conversation: %d -> %d messages", len(before), len(after))
	}
	if m2.requests[len(m2.requests)-1].Messages[len(m2.requests[len(m2.requests)-1].Messages)-1].Content != "hi" {
		t.Fatal("bob's prompt does not end with his message")
	}
	for _, msg := range m2.requests[len(m2.requests)-1].Messages {
		if strings.Contains(msg.Content, "看看我的八字") || strings.Contains(msg.Content, "继续") {
			t.Fatalf("bob's prompt holds alice's message %q", msg.Content)
		}
	}

	var wg sync.WaitGroup
	errs := make(chan error, 50)
	b, _ := newTestAgent(t, toolThenAnswer{}, func(c *Config) { c.Memory = st })
	for i := range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n := 0
			_, err := b.Turn(ctx, TurnRequest{UserID: fmt.Sprint("u", i%5), ConversationID: fmt.Sprint("pc", i), Message: "甲木", Skill: "bazi"}, func(e Event) error {
				if e.IsError || e.Type == EventError {
					return fmt.Errorf("turn %d: %+v", i, e)
				}
				n++
				return nil
			})
			// tool call, tool result, content, citations, done
			if err == nil && n != 5 {
				err = fmt.Errorf("turn %d: %d events", i, n)
			}
			if err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
