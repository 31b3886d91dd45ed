package sqlite

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/vibelife/vibe/knowledge"
	"github.com/vibelife/vibe/knowledge/storetest"
)

func openTemp(t *testing.T) knowledge.Store {
	t.Helper()
	s, err := Open(context.Background(), filepath.Join(t.TempDir(), "vibe.db"))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestContract(t *testing.T) { storetest.Run(t, openTemp) }

func TestReopenKeepsDataAndMigratesOnce(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "sub", "vibe.db")
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.ReplaceDocument(ctx, knowledge.Document{ID: "d", Theme: "t", ContentHash: "h"}, nil, nil, knowledge.EmbeddingInfo{}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s, err = Open(ctx, path)
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer s.Close()
	docs, err := s.Documents(ctx, "t")
	if err != nil || len(docs) != 1 || docs[0].ContentHash != "h" {
		t.Fatalf("docs after reopen = %+v, %v", docs, err)
	}
	var n int
	if err := s.db.QueryRow(`SELECT count(*) FROM schema_migrations`).Scan(&n); err != nil || n != len(migrations) {
		t.Fatalf("schema_migrations rows = %d, %v; want %d", n, err, len(migrations))
	}
}

func TestVectorCodec(t *testing.T) {
	for _, v := range [][]float32{nil, {0}, {1.5, -2.25, 3e-9}} {
		got := DecodeVector(EncodeVector(v))
		if len(got) != len(v) {
			t.Fatalf("len %d, want %d", len(got), len(v))
		}
		for i := range v {
			if got[i] != v[i] {
				t.Fatalf("got %v, want %v", got, v)
			}
		}
	}
}

// TestCrashMidWrite kills a process in the middle of its writes and checks
// the reopened database holds whole documents only and passes SQLite's and
// FTS5's integrity checks.
func TestCrashMidWrite(t *testing.T) {
	if target := os.Getenv(storetest.CrashEnv); target != "" {
		s, err := Open(context.Background(), target)
		if err != nil {
			fmt.Println("error", err)
			os.Exit(3)
		}
		storetest.CrashChild(s)
	}
	path := filepath.Join(t.TempDir(), "crash.db")
	storetest.RunCrash(t, "TestCrashMidWrite", path, func(t *testing.T, target string) knowledge.Store {
		s, err := Open(context.Background(), target)
		if err != nil {
			t.Fatalf("reopen after the crash: %v", err)
		}
		return s
	}, func(t *testing.T, ks knowledge.Store) {
		s := ks.(*Store)
		var res string
		if err := s.db.QueryRow(`PRAGMA integrity_check`).Scan(&res); err != nil || res != "ok" {
			t.Errorf("integrity_check = %q, %v", res, err)
		}
		if _, err := s.db.Exec(`INSERT INTO chunk_fts(chunk_fts) VALUES('integrity-check')`); err != nil {
			t.Errorf("FTS5 integrity-check: %v", err)
		}
	})
}
