package pgvector

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/vibelife/vibe/knowledge"
	"github.com/vibelife/vibe/knowledge/storetest"
)

func TestMemory(t *testing.T) {
	storetest.RunMemory(t, openFreshURL(t, testURL(t)))
}

// TestMigrateMessageEvents upgrades a database of the schema before
// migration 10 (messages without events): its messages load, with no
// events, and the conversation takes new messages that carry some.
func TestMigrateMessageEvents(t *testing.T) {
	ctx := context.Background()
	url, schema, conn := schemaAt(t, 9)
	for _, q := range []string{
		`INSERT INTO mem_user(id) VALUES ('alice')`,
		`INSERT INTO mem_conversation(id, user_id) VALUES ('c1', 'alice')`,
		`INSERT INTO mem_message(user_id, conversation_id, seq, role, content) VALUES ('alice', 'c1', 1, 'user', 'hello'), ('alice', 'c1', 2, 'assistant', 'hi')`,
	} {
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	s, err := Open(ctx, withSearchPath(url, schema))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got, err := s.Messages(ctx, "alice", "c1", 0); err != nil || len(got) != 2 || got[1].Content != "hi" || got[1].Events != nil {
		t.Fatalf("alice's c1 after migration = %+v %v", got, err)
	}
	if _, err := s.AppendMessages(ctx, "alice", "c1", []knowledge.StoredMessage{{Role: "assistant", Content: "card", Events: json.RawMessage(`[{"type":"card","card_type":"insight"}]`)}}); err != nil {
		t.Fatal(err)
	}
	got, err := s.Messages(ctx, "alice", "c1", 0)
	if err != nil || len(got) != 3 {
		t.Fatalf("after a message with events = %+v %v", got, err)
	}
	var ev []map[string]any
	if err := json.Unmarshal(got[2].Events, &ev); err != nil || len(ev) != 1 || ev[0]["card_type"] != "insight" {
		t.Fatalf("events after migration = %s %v", got[2].Events, err)
	}
}

// TestMigrateConversationsPerUser upgrades a database of the schema before
// migration 5 (conversation ids global): alice's conversation keeps its
// messages and summary, and bob can now open his own "c1".
func TestMigrateConversationsPerUser(t *testing.T) {
	ctx := context.Background()
	url, schema, conn := schemaAt(t, 4)
	for _, q := range []string{
		`INSERT INTO mem_user(id) VALUES ('alice'), ('bob')`,
		`INSERT INTO mem_conversation(id, user_id, skill) VALUES ('c1', 'alice', 'tea'), ('c2', 'bob', '')`,
		`INSERT INTO mem_message(conversation_id, seq, role, content) VALUES ('c1', 1, 'user', 'hello'), ('c1', 2, 'assistant', 'hi'), ('c2', 1, 'user', 'bob here')`,
		`INSERT INTO mem_summary(conversation_id, up_to, text) VALUES ('c1', 2, 'greeting')`,
	} {
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	s, err := Open(ctx, withSearchPath(url, schema))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got, err := s.Messages(ctx, "alice", "c1", 0); err != nil || len(got) != 2 || got[1].Content != "hi" {
		t.Fatalf("alice's c1 after migration = %+v %v", got, err)
	}
	if sum, err := s.Summary(ctx, "alice", "c1"); err != nil || sum.Text != "greeting" || sum.UpTo != 2 {
		t.Fatalf("alice's summary after migration = %+v %v", sum, err)
	}
	if c, err := s.Conversation(ctx, "alice", "c1"); err != nil || c.Skill != "tea" {
		t.Fatalf("alice's c1 = %+v %v", c, err)
	}
	if got, err := s.Messages(ctx, "bob", "c2", 0); err != nil || len(got) != 1 {
		t.Fatalf("bob's c2 after migration = %+v %v", got, err)
	}
	if out, err := s.AppendMessages(ctx, "bob", "c1", []knowledge.StoredMessage{{Role: "user", Content: "mine"}}); err != nil || out[0].Seq != 1 {
		t.Fatalf("bob's c1 = %+v %v", out, err)
	}
	if got, _ := s.Messages(ctx, "alice", "c2", 0); len(got) != 0 {
		t.Fatalf("alice reads bob's c2: %+v", got)
	}
	if got, _ := s.Messages(ctx, "alice", "c1", 0); len(got) != 2 {
		t.Fatalf("alice's c1 holds %d messages after bob's write", len(got))
	}
}

// TestProfileUpdates: 40 concurrent UpdateProfile calls spread over two
// Stores (two pools: two replicas) on one database all land.
func TestProfileUpdates(t *testing.T) {
	url := testURL(t)
	s1 := openFreshURL(t, url)
	defer s1.Close()
	s2, err := Open(context.Background(), withSearchPath(url, s1SearchSchema(t, s1)))
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	storetest.RunProfileUpdates(t, s1, s2)
}

// s1SearchSchema returns the schema the store's pool writes to.
func s1SearchSchema(t *testing.T, s *Store) string {
	var schema string
	if err := s.pool.QueryRow(context.Background(), `SELECT current_schema()`).Scan(&schema); err != nil {
		t.Fatal(err)
	}
	return schema
}

func TestHistory(t *testing.T) {
	storetest.RunHistory(t, openFreshURL(t, testURL(t)))
}

func TestFeedback(t *testing.T) {
	storetest.RunFeedback(t, openFreshURL(t, testURL(t)))
}

// schemaAt makes a fresh schema of the test database migrated to version
// (dropped when the test ends) and returns the database URL, the schema's
// name and a connection whose search path is the schema, closed at the end.
func schemaAt(t *testing.T, version int) (url, schema string, conn *pgx.Conn) {
	t.Helper()
	url = testURL(t)
	ctx := context.Background()
	schema = fmt.Sprintf("vibe_test_%d_%d", os.Getpid(), schemaSeq.Add(1))
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		conn.Exec(context.Background(), `DROP SCHEMA `+schema+` CASCADE`)
		conn.Close(context.Background())
	})
	if _, err := conn.Exec(ctx, `CREATE SCHEMA `+schema+`; SET search_path = `+schema+`, public`); err != nil {
		t.Fatal(err)
	}
	if err := migrateTo(ctx, conn, version); err != nil {
		t.Fatal(err)
	}
	return url, schema, conn
}
