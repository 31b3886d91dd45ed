package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/vibelife/vibe/knowledge"
)

// RunMemory is the contract suite of [knowledge.MemoryStore]: profiles,
// messages and summaries are scoped to their user, so one user never reaches
// another's conversation. s must be empty.
func RunMemory(t *testing.T, s knowledge.MemoryStore) {
	t.Helper()
	ctx := context.Background()
	if err := s.EnsureUser(ctx, "alice"); err != nil {
		t.Fatal(err)
	}
	if p, err := s.Profile(ctx, "alice"); err != nil || string(p) != "{}" {
		t.Fatalf("profile = %s %v", p, err)
	}
	if err := s.SaveProfile(ctx, "alice", json.RawMessage(`{"a":1}`)); err != nil {
		t.Fatal(err)
	}
	if p, _ := s.Profile(ctx, "alice"); string(p) != `{"a":1}` {
		t.Fatalf("profile = %s", p)
	}
	if p, _ := s.Profile(ctx, "bob"); string(p) != `{}` {
		t.Fatalf("bob profile = %s", p)
	}
	var msgs []knowledge.StoredMessage
	for _, c := range []string{"1", "2", "3"} {
		msgs = append(msgs, knowledge.StoredMessage{Role: "user", Content: c})
	}
	out, err := s.AppendMessages(ctx, "alice", "c1", msgs)
	if err != nil || len(out) != 3 || out[2].Seq != 3 {
		t.Fatalf("append = %+v %v", out, err)
	}
	got, err := s.Messages(ctx, "alice", "c1", 2)
	if err != nil || len(got) != 2 || got[0].Content != "2" || got[1].Content != "3" {
		t.Fatalf("messages = %+v %v", got, err)
	}
	if all, _ := s.Messages(ctx, "alice", "c1", 0); len(all) != 3 {
		t.Fatalf("all = %d", len(all))
	}
	for _, f := range []func() error{
		func() error { _, err := s.Messages(ctx, "bob", "c1", 0); return err },
		func() error { _, err := s.AppendMessages(ctx, "bob", "c1", msgs); return err },
		func() error { _, err := s.Summary(ctx, "bob", "c1"); return err },
		func() error { return s.SaveSummary(ctx, "bob", knowledge.Summary{ConversationID: "c1"}) },
	} {
		if err := f(); !errors.Is(err, knowledge.ErrNotFound) {
			t.Fatalf("bob reached alice's conversation: %v", err)
		}
	}
	if err := s.SaveSummary(ctx, "alice", knowledge.Summary{ConversationID: "c1", UpTo: 3, Text: "sum"}); err != nil {
		t.Fatal(err)
	}
	if sum, err := s.Summary(ctx, "alice", "c1"); err != nil || sum.Text != "sum" || sum.UpTo != 3 {
		t.Fatalf("summary = %+v %v", sum, err)
	}
	// Many first turns of one new id at once: each creates the
	// conversation if missing, none fails (no UNIQUE violation, no busy
	// error), and every message is kept once.
	const n = 64
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := s.Conversation(ctx, "carol", "shared"); err != nil {
				errs <- fmt.Errorf("conversation %d: %w", i, err)
				return
			}
			if _, err := s.AppendMessages(ctx, "carol", "shared", []knowledge.StoredMessage{{Role: "user", Content: fmt.Sprint(i)}}); err != nil {
				errs <- fmt.Errorf("append %d: %w", i, err)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if all, err := s.Messages(ctx, "carol", "shared", 0); err != nil || len(all) != n || all[n-1].Seq != n {
		t.Fatalf("concurrent appends kept %d messages (want %d): %v", len(all), n, err)
	}
}
