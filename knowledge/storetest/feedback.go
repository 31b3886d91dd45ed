package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/vibelife/vibe/knowledge"
)

// RunFeedback is the contract suite of [knowledge.FeedbackStore]: a
// verdict is kept with its answer and replaced by the user's next one on
// it; a conversation's verdicts are the user's only; the list across users
// filters by rating, newest first, bounded by limit. s must be empty.
func RunFeedback(t *testing.T, s interface {
	knowledge.MemoryStore
	knowledge.FeedbackStore
}) {
	t.Helper()
	ctx := context.Background()
	at := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	// The answers judged: alice's c1 and bob's c1, two turns each.
	answers := func(user string) []int {
		t.Helper()
		if _, err := s.Conversation(ctx, user, "c1"); err != nil {
			t.Fatal(err)
		}
		var msgs []knowledge.StoredMessage
		for range 2 {
			msgs = append(msgs, knowledge.StoredMessage{Role: "user", Content: "问"}, knowledge.StoredMessage{Role: "skill", Content: "bazi"}, knowledge.StoredMessage{Role: "assistant", Content: "答"})
		}
		out, err := s.AppendMessages(ctx, user, "c1", msgs)
		if err != nil {
			t.Fatal(err)
		}
		return []int{out[2].Seq, out[5].Seq}
	}
	for _, u := range []string{"alice", "bob"} {
		if err := s.EnsureUser(ctx, u); err != nil {
			t.Fatal(err)
		}
	}
	a, b := answers("alice"), answers("bob")
	save := func(f knowledge.Feedback) {
		t.Helper()
		if err := s.SaveFeedback(ctx, f); err != nil {
			t.Fatalf("save %+v: %v", f, err)
		}
	}
	save(knowledge.Feedback{UserID: "alice", ConversationID: "c1", Turn: a[0], Rating: knowledge.FeedbackUp, CreatedAt: at})
	save(knowledge.Feedback{UserID: "alice", ConversationID: "c1", Turn: a[1], Rating: knowledge.FeedbackDown, Comment: "不对：伤官见官", CreatedAt: at.Add(time.Minute)})
	// The same conversation id of another user is another conversation.
	save(knowledge.Feedback{UserID: "bob", ConversationID: "c1", Turn: b[0], Rating: knowledge.FeedbackDown, Comment: "wrong", CreatedAt: at.Add(2 * time.Minute)})
	// Alice changes her mind on turn 2: the new verdict replaces the old.
	save(knowledge.Feedback{UserID: "alice", ConversationID: "c1", Turn: a[0], Rating: knowledge.FeedbackDown, Comment: "on second thought, no", CreatedAt: at.Add(3 * time.Minute)})

	got, err := s.ConversationFeedback(ctx, "alice", "c1")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Turn != a[0] || got[1].Turn != a[1] {
		t.Fatalf("alice's c1 feedback = %+v, want turns %v", got, a)
	}
	if f := got[0]; f.Rating != knowledge.FeedbackDown || f.Comment != "on second thought, no" || f.UserID != "alice" || f.ConversationID != "c1" || !f.CreatedAt.Equal(at.Add(3*time.Minute)) {
		t.Errorf("the first answer after the change = %+v", f)
	}
	if f := got[1]; f.Comment != "不对：伤官见官" || f.Rating != knowledge.FeedbackDown {
		t.Errorf("the second answer = %+v", f)
	}
	if b, err := s.ConversationFeedback(ctx, "bob", "c1"); err != nil || len(b) != 1 || b[0].Comment != "wrong" {
		t.Fatalf("bob's c1 feedback = %+v, %v", b, err)
	}
	if n, err := s.ConversationFeedback(ctx, "carol", "c1"); err != nil || len(n) != 0 {
		t.Fatalf("carol's = %+v, %v", n, err)
	}

	down, err := s.ListFeedback(ctx, knowledge.FeedbackDown, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(down) != 3 || down[0].UserID != "alice" || down[0].Turn != a[0] || down[1].UserID != "bob" || down[2].Turn != a[1] {
		t.Fatalf("thumbs down, newest first = %+v", down)
	}
	if two, err := s.ListFeedback(ctx, knowledge.FeedbackDown, 2); err != nil || len(two) != 2 {
		t.Fatalf("limit 2 = %+v, %v", two, err)
	}
	if up, err := s.ListFeedback(ctx, knowledge.FeedbackUp, 0); err != nil || len(up) != 0 {
		t.Fatalf("thumbs up after the change = %+v, %v", up, err)
	}
	if all, err := s.ListFeedback(ctx, "", 0); err != nil || len(all) != 3 {
		t.Fatalf("all = %+v, %v", all, err)
	}
}
