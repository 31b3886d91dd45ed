package sqlite

import (
	"context"
	"path/filepath"
	"testing"

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

func TestHistory(t *testing.T) {
	s, err := Open(context.Background(), filepath.Join(t.TempDir(), "h.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	storetest.RunHistory(t, s)
}
