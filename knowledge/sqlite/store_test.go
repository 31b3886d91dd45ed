package sqlite

import (
	"context"
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
