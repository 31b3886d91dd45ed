package sqlite

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// TestTokensToday: two Stores on one file (two processes) add 40 × 5 tokens
// of alice's at once and both read 200; the count is per user and UTC day,
// survives reopening the file, and days before yesterday are dropped.
func TestTokensToday(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "q.db")
	open := func() *Store {
		s, err := Open(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	a, b := open(), open()
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
	for _, st := range []*Store{a, b, open()} {
		if n, err := st.TokensToday(ctx, "alice", now.In(shanghai)); err != nil || n != 200 {
			t.Fatalf("alice today = %d, %v; want 200", n, err)
		}
	}
	if n, _ := a.TokensToday(ctx, "bob", now); n != 0 {
		t.Fatalf("bob today = %d, want 0", n)
	}
	if n, _ := a.TokensToday(ctx, "alice", now.Add(time.Hour)); n != 0 {
		t.Fatalf("alice the next UTC day = %d, want 0", n)
	}
	old := now.AddDate(0, 0, -3)
	if err := a.AddTokens(ctx, "carol", 7, old); err != nil {
		t.Fatal(err)
	}
	if n, _ := a.TokensToday(ctx, "carol", old); n != 7 {
		t.Fatalf("carol 3 days ago = %d, want 7", n)
	}
	if err := a.AddTokens(ctx, "bob", 1, now); err != nil {
		t.Fatal(err)
	}
	if n, _ := a.TokensToday(ctx, "carol", old); n != 0 {
		t.Fatalf("carol's count of 3 days ago survived: %d", n)
	}
	if n, _ := a.TokensToday(ctx, "alice", now); n != 200 {
		t.Fatalf("the sweep took today's count: alice = %d", n)
	}
}
