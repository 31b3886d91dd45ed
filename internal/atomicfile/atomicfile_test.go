package atomicfile

import (
	"os"
	"path/filepath"
	"testing"
)

func TestWriteFileCreatesAndReplaces(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "a", "b", "out.md")
	if err := WriteFile(p, []byte("one"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(p, []byte("two"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != "two" {
		t.Fatalf("content = %q, want %q", got, "two")
	}
	entries, _ := os.ReadDir(filepath.Dir(p))
	if len(entries) != 1 {
		t.Fatalf("temporary files left behind: %v", entries)
	}
}

func TestWriteFileLeavesOriginalOnError(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "out.md")
	if err := os.WriteFile(p, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A directory in place of the temp dir's target makes rename fail.
	target := filepath.Join(dir, "sub")
	if err := os.MkdirAll(filepath.Join(target, "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(target, []byte("new"), 0o644); err == nil {
		t.Fatal("expected an error renaming over a non-empty directory")
	}
	got, _ := os.ReadFile(p)
	if string(got) != "keep" {
		t.Fatalf("original changed: %q", got)
	}
}

func TestRemoveTempsDeletesOnlyLeftovers(t *testing.T) {
	dir := t.TempDir()
	keep := filepath.Join(dir, "sub", "book.md")
	if err := WriteFile(keep, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	hidden := filepath.Join(dir, ".hidden.md")
	os.WriteFile(hidden, []byte("y"), 0o644)
	stale := filepath.Join(dir, "sub", ".book.md.tmp-123")
	os.WriteFile(stale, []byte("half"), 0o644)
	removed, err := RemoveTemps(dir)
	if err != nil || len(removed) != 1 || removed[0] != stale {
		t.Fatalf("removed %v, %v; want only %s", removed, err, stale)
	}
	for _, p := range []string{keep, hidden} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s removed: %v", p, err)
		}
	}
	if _, err := RemoveTemps(filepath.Join(dir, "nope")); err != nil {
		t.Errorf("missing dir: %v", err)
	}
}
