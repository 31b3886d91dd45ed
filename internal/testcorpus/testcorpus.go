// Package testcorpus locates the shared corpus of real documents
// (../shared/corpus beside the repository) for tests.
package testcorpus

import (
	"os"
	"path/filepath"
	"testing"
)

// Dir returns ../shared/corpus/<sub...> relative to the repository root (the
// directory holding go.mod above the test's working directory). When it is
// missing the test is skipped, except under CI=true, where it fails: CI must
// prove the code against the real documents.
func Dir(t testing.TB, sub ...string) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("testcorpus: no go.mod above the test's directory")
		}
		dir = parent
	}
	c := filepath.Join(append([]string{dir, "..", "shared", "corpus"}, sub...)...)
	if _, err := os.Stat(c); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("testcorpus: %s missing under CI: %v", c, err)
		}
		t.Skipf("testcorpus: %s missing", c)
	}
	return c
}
