package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/vibelife/vibe/knowledge"
	"github.com/vibelife/vibe/knowledge/storetest"
)

func TestMemory(t *testing.T) {
	s, err := Open(context.Background(), filepath.Join(t.TempDir(), "m.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	storetest.RunMemory(t, s)
}

// TestMigrateConversationsPerUser upgrades a database of the schema before
// migration 4 (conversation ids global): alice's conversation keeps its
// messages and summary, and bob can now open his own "c1".
func TestMigrateConversationsPerUser(t *testing.T) {
	ctx := context.Background()
	path := dbAt(t, 3,
		`INSERT INTO users(id, created_at) VALUES ('alice', '2026-01-01T00:00:00Z'), ('bob', '2026-01-01T00:00:00Z')`,
		`INSERT INTO conversations(id, user_id, skill, created_at, updated_at) VALUES ('c1', 'alice', 'tea', '2026-01-01T00:00:00Z', '2026-01-02T00:00:00Z'), ('c2', 'bob', '', '2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z')`,
		`INSERT INTO messages(conversation_id, seq, role, content, created_at) VALUES ('c1', 1, 'user', 'hello', '2026-01-01T00:00:00Z'), ('c1', 2, 'assistant', 'hi', '2026-01-01T00:00:00Z'), ('c2', 1, 'user', 'bob here', '2026-01-01T00:00:00Z')`,
		`INSERT INTO summaries(conversation_id, up_to, text, updated_at) VALUES ('c1', 2, 'greeting', '2026-01-01T00:00:00Z')`,
	)

	s, err := Open(ctx, path)
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
	// bob's "c1" is his own now, and alice's "c2" hers.
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

// TestProfileUpdates: 40 concurrent UpdateProfile calls, over one Store and
// over two Stores on the same file (two processes' view), all land.
func TestProfileUpdates(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.db")
	s1, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer s1.Close()
	s2, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	t.Run("one", func(t *testing.T) { storetest.RunProfileUpdates(t, s1) })
	if _, err := s1.UpdateProfile(context.Background(), "race", func(json.RawMessage) (json.RawMessage, error) { return json.RawMessage(`{}`), nil }); err != nil {
		t.Fatal(err)
	}
	t.Run("two", func(t *testing.T) { storetest.RunProfileUpdates(t, s1, s2) })
}

func TestHistory(t *testing.T) {
	s, err := Open(context.Background(), filepath.Join(t.TempDir(), "h.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	storetest.RunHistory(t, s)
}

// TestMigrateMessageEvents upgrades a database of the schema before
// migration 7 (messages without events): its messages load, with no
// events, and the conversation takes new messages that carry some.
func TestMigrateMessageEvents(t *testing.T) {
	ctx := context.Background()
	path := dbAt(t, 6,
		`INSERT INTO users(id, created_at) VALUES ('alice', '2026-01-01T00:00:00Z')`,
		`INSERT INTO conversations(user_id, id, skill, created_at, updated_at) VALUES ('alice', 'c1', '', '2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z')`,
		`INSERT INTO messages(user_id, conversation_id, seq, role, content, created_at) VALUES ('alice', 'c1', 1, 'user', 'hello', '2026-01-01T00:00:00Z'), ('alice', 'c1', 2, 'assistant', 'hi', '2026-01-01T00:00:00Z')`,
	)

	s, err := Open(ctx, path)
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
	if got, err := s.Messages(ctx, "alice", "c1", 0); err != nil || len(got) != 3 || string(got[2].Events) != `[{"type":"card","card_type":"insight"}]` {
		t.Fatalf("after a message with events = %+v %v", got, err)
	}
}

// dbAt writes a database of the schema at migration version, holding what
// stmts insert, and returns its path.
func dbAt(t *testing.T, version int, stmts ...string) string {
	t.Helper()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "old.db")
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=foreign_keys(1)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := migrateTo(ctx, db, version); err != nil {
		t.Fatal(err)
	}
	for _, q := range stmts {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	return path
}

func TestFeedback(t *testing.T) {
	s, err := Open(context.Background(), filepath.Join(t.TempDir(), "f.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	storetest.RunFeedback(t, s)
}
