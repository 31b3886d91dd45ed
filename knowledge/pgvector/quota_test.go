package pgvector

import (
	"context"
	"sync"
	"testing"
	"time"
)

// TestTokensTodaySharedAndAtomic: two Stores on one schema (two replicas)
// add 40 × 5 tokens of alice's at once and both read 200 (the upsert loses
// none); the count is per user and per UTC day (23:30 UTC and the next
// 00:30 UTC are two days, whatever the time zone of now); counts of days
// before yesterday are dropped by the next process's first add of a day.
func TestTokensTodaySharedAndAtomic(t *testing.T) {
	ctx := context.Background()
	a := openFreshURL(t, testURL(t))
	b := openFreshURLInSchema(t, a)
	t.Cleanup(func() { b.Close() })
	now := time.Date(2026, 11, 25, 23, 30, 0, 0, time.UTC)
	var wg sync.WaitGroup
	errs := make(chan error, 40)
	for i := range 40 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			st := a
			if i%2 == 1 {
				st = b
			}
			errs <- st.AddTokens(ctx, "alice", 5, now)
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	shanghai := time.FixedZone("CST", 8*3600)
	for _, st := range []*Store{a, b} {
		if n, err := st.TokensToday(ctx, "alice", now.In(shanghai)); err != nil || n != 200 {
			t.Fatalf("alice today = %d, %v; want 200", n, err)
		}
	}
	if n, err := a.TokensToday(ctx, "bob", now); err != nil || n != 0 {
		t.Fatalf("bob today = %d, %v; want 0", n, err)
	}
	next := now.Add(time.Hour)
	if n, err := a.TokensToday(ctx, "alice", next); err != nil || n != 0 {
		t.Fatalf("alice the next UTC day = %d, %v; want 0", n, err)
	}
	if err := a.AddTokens(ctx, "alice", 0, next); err != nil {
		t.Fatal(err)
	}

	old := now.AddDate(0, 0, -3)
	if err := a.AddTokens(ctx, "carol", 7, old); err != nil {
		t.Fatal(err)
	}
	if n, _ := a.TokensToday(ctx, "carol", old); n != 7 {
		t.Fatalf("carol 3 days ago = %d, want 7", n)
	}
	c := openFreshURLInSchema(t, a)
	t.Cleanup(func() { c.Close() })
	if err := c.AddTokens(ctx, "bob", 1, now); err != nil {
		t.Fatal(err)
	}
	if n, _ := a.TokensToday(ctx, "carol", old); n != 0 {
		t.Fatalf("carol's count of 3 days ago survived the sweep: %d", n)
	}
	if n, _ := a.TokensToday(ctx, "alice", now); n != 200 {
		t.Fatalf("the sweep took today's count: alice = %d", n)
	}
}
