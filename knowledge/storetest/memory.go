package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/vibelife/vibe/knowledge"
)

// RunMemory is the contract suite of [knowledge.MemoryStore]: profiles,
// messages and summaries are scoped to their user: conversation ids are per
// user, so one user never reaches (or squats) another's conversation. s must be empty.
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
	// Ids are per user: bob's "c1" is his own, empty conversation; his
	// writes to it never reach alice's.
	if got, err := s.Messages(ctx, "bob", "c1", 0); err != nil || len(got) != 0 {
		t.Fatalf("bob read %d messages of alice's c1: %v", len(got), err)
	}
	if out, err := s.AppendMessages(ctx, "bob", "c1", msgs[:1]); err != nil || len(out) != 1 || out[0].Seq != 1 {
		t.Fatalf("bob's own c1: append = %+v %v", out, err)
	}
	if err := s.SaveSummary(ctx, "bob", knowledge.Summary{ConversationID: "c1", UpTo: 1, Text: "bob's"}); err != nil {
		t.Fatal(err)
	}
	if all, _ := s.Messages(ctx, "alice", "c1", 0); len(all) != 3 {
		t.Fatalf("alice's c1 holds %d messages after bob wrote his c1 (want 3)", len(all))
	}
	if sum, _ := s.Summary(ctx, "alice", "c1"); sum.Text != "" {
		t.Fatalf("bob's summary reached alice's c1: %+v", sum)
	}
	if c, err := s.Conversation(ctx, "bob", "c1"); err != nil || c.UserID != "bob" || c.ID != "c1" {
		t.Fatalf("bob's c1 = %+v %v", c, err)
	}
	// An id longer than knowledge.MaxConversationIDLen is refused by the
	// store itself, whoever the caller.
	long := strings.Repeat("x", knowledge.MaxConversationIDLen+1)
	if _, err := s.Conversation(ctx, "alice", long); err == nil || !strings.Contains(err.Error(), "at most 128") {
		t.Fatalf("id of %d bytes: err = %v", len(long), err)
	}
	if _, err := s.AppendMessages(ctx, "alice", long, msgs); err == nil {
		t.Fatalf("id of %d bytes stored", len(long))
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
	runMessageEvents(t, s)
}

// runMessageEvents: an assistant message's events (cards, forms,
// citations) come back with it, as the same JSON; a message without any has
// none; events that are not JSON are refused and store nothing.
func runMessageEvents(t *testing.T, s knowledge.MemoryStore) {
	t.Helper()
	ctx := context.Background()
	events := `[{"type":"card","card_type":"brew_card","props":{"tea":"绿茶","grams":6}},{"type":"citations","citations":[{"kind":"passage","chunk_id":"c_0123abcd","quote":"75–80 °C","cited":true}]}]`
	if _, err := s.AppendMessages(ctx, "alice", "ev", []knowledge.StoredMessage{
		{Role: "user", Content: "q"},
		{Role: "assistant", Content: "a", Events: json.RawMessage(events)},
		{Role: "assistant", Content: "b"},
	}); err != nil {
		t.Fatal(err)
	}
	got, err := s.Messages(ctx, "alice", "ev", 0)
	if err != nil || len(got) != 3 {
		t.Fatalf("messages = %+v %v", got, err)
	}
	if got[0].Events != nil || got[2].Events != nil {
		t.Fatalf("messages stored without events read back with %s, %s", got[0].Events, got[2].Events)
	}
	var want, have any
	_ = json.Unmarshal([]byte(events), &want)
	if err := json.Unmarshal(got[1].Events, &have); err != nil || !reflect.DeepEqual(want, have) {
		t.Fatalf("events = %s (%v), want %s", got[1].Events, err, events)
	}
	if _, err := s.AppendMessages(ctx, "alice", "ev", []knowledge.StoredMessage{{Role: "user", Content: "x"}, {Role: "assistant", Content: "y", Events: json.RawMessage(`[{`)}}); err == nil {
		t.Fatal("events that are not JSON were stored")
	}
	if got, _ := s.Messages(ctx, "alice", "ev", 0); len(got) != 3 {
		t.Fatalf("a refused append stored %d messages", len(got)-3)
	}
}

// RunProfileUpdates checks that [knowledge.MemoryStore.UpdateProfile] is an
// atomic read-modify-write: 40 concurrent updates of one user, each adding
// its own key to what it read, all land. Each store in stores is one view of
// the same database (two pools stand for two replicas); the updates are
// spread over them. The stores must hold no profile for user "race".
func RunProfileUpdates(t *testing.T, stores ...knowledge.MemoryStore) {
	t.Helper()
	ctx := context.Background()
	const n = 40
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := stores[i%len(stores)]
			_, err := s.UpdateProfile(ctx, "race", func(raw json.RawMessage) (json.RawMessage, error) {
				m := map[string]any{}
				if err := json.Unmarshal(raw, &m); err != nil {
					return nil, err
				}
				m[fmt.Sprintf("k%02d", i)] = i
				v, _ := m["version"].(float64)
				m["version"] = v + 1
				return json.Marshal(m)
			})
			if err != nil {
				errs <- fmt.Errorf("update %d: %w", i, err)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	raw, err := stores[0].Profile(ctx, "race")
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]any{}
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	if len(m) != n+1 || m["version"] != float64(n) {
		t.Fatalf("after %d concurrent updates the profile holds %d keys, version %v (want %d, %d)", n, len(m)-1, m["version"], n, n)
	}
	// An error from fn stores nothing.
	if _, err := stores[0].UpdateProfile(ctx, "race", func(json.RawMessage) (json.RawMessage, error) {
		return nil, errors.New("refused")
	}); err == nil || !strings.Contains(err.Error(), "refused") {
		t.Fatalf("fn's error = %v", err)
	}
	if again, _ := stores[0].Profile(ctx, "race"); string(again) != string(raw) {
		t.Fatalf("a failed update changed the profile: %s", again)
	}
}
