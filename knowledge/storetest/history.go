package storetest

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/vibelife/vibe/knowledge"
)

// RunHistory is the contract suite of [knowledge.HistoryStore]: a user's
// entries come back newest first with their fields, paged by limit and
// offset, bounded by keep, never another user's; the user summary is
// replaced whole. s must be empty.
func RunHistory(t *testing.T, s knowledge.HistoryStore) {
	t.Helper()
	ctx := context.Background()
	at := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	var ids []int64
	for i := range 5 {
		e, err := s.AppendHistory(ctx, "alice", knowledge.HistoryEntry{
			ConversationID: fmt.Sprintf("c%d", i/2), Skill: "bazi,career", Kind: "tool", Tool: "compute_chart",
			Question: fmt.Sprintf("问题 %d", i), Args: json.RawMessage(`{"birth_date":"1990-03-05"}`),
			Result: json.RawMessage(fmt.Sprintf(`{"result":{"n":%d}}`, i)), CreatedAt: at.Add(time.Duration(i) * time.Minute),
		}, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(ids) > 0 && e.ID <= ids[len(ids)-1] {
			t.Fatalf("ids not increasing: %d after %v", e.ID, ids)
		}
		ids = append(ids, e.ID)
	}
	if _, err := s.AppendHistory(ctx, "bob", knowledge.HistoryEntry{ConversationID: "b1", Kind: "rag", Tool: "get_rules", Result: json.RawMessage(`{"rules":[]}`)}, 0); err != nil {
		t.Fatal(err)
	}
	all, err := s.History(ctx, "alice", 0, 0)
	if err != nil || len(all) != 5 {
		t.Fatalf("history = %d entries, %v", len(all), err)
	}
	e := all[0]
	var args, res map[string]any
	if json.Unmarshal(e.Args, &args) != nil || json.Unmarshal(e.Result, &res) != nil || args["birth_date"] != "1990-03-05" || res["result"].(map[string]any)["n"] != 4.0 {
		t.Fatalf("newest entry = %+v (%s, %s)", e, e.Args, e.Result)
	}
	if e.ID != ids[4] || e.ConversationID != "c2" || e.Skill != "bazi,career" || e.Kind != "tool" || e.Tool != "compute_chart" || e.Question != "问题 4" || !e.CreatedAt.Equal(at.Add(4*time.Minute)) {
		t.Fatalf("newest entry = %+v", e)
	}
	page, err := s.History(ctx, "alice", 2, 1)
	if err != nil || len(page) != 2 || page[0].Question != "问题 3" || page[1].Question != "问题 2" {
		t.Fatalf("page = %+v %v", page, err)
	}
	if bob, _ := s.History(ctx, "bob", 0, 0); len(bob) != 1 || bob[0].Tool != "get_rules" {
		t.Fatalf("bob = %+v", bob)
	}
	if none, err := s.History(ctx, "carol", 10, 0); err != nil || len(none) != 0 {
		t.Fatalf("carol = %+v %v", none, err)
	}
	// keep bounds the user's history to the newest entries, not others'.
	if _, err := s.AppendHistory(ctx, "alice", knowledge.HistoryEntry{ConversationID: "c3", Kind: "rag", Tool: "search_knowledge", Result: json.RawMessage(`{"passages":[]}`)}, 3); err != nil {
		t.Fatal(err)
	}
	kept, _ := s.History(ctx, "alice", 0, 0)
	if len(kept) != 3 || kept[0].Tool != "search_knowledge" || kept[2].Question != "问题 3" {
		t.Fatalf("kept = %+v", kept)
	}
	if bob, _ := s.History(ctx, "bob", 0, 0); len(bob) != 1 {
		t.Fatalf("bob lost entries to alice's bound: %+v", bob)
	}

	if sum, err := s.UserSummary(ctx, "alice"); err != nil || sum.Text != "" || sum.UpTo != 0 {
		t.Fatalf("empty summary = %+v %v", sum, err)
	}
	want := knowledge.UserSummary{Text: "问过八字", UpTo: kept[0].ID, By: "extractive", UpdatedAt: at}
	if err := s.SaveUserSummary(ctx, "alice", want); err != nil {
		t.Fatal(err)
	}
	want.Text, want.By = "问过八字与事业", "model"
	if err := s.SaveUserSummary(ctx, "alice", want); err != nil {
		t.Fatal(err)
	}
	got, err := s.UserSummary(ctx, "alice")
	if err != nil || got.Text != want.Text || got.UpTo != want.UpTo || got.By != "model" || !got.UpdatedAt.Equal(at) {
		t.Fatalf("summary = %+v %v", got, err)
	}
	if b, _ := s.UserSummary(ctx, "bob"); b.Text != "" {
		t.Fatalf("bob sees alice's summary: %+v", b)
	}
}
