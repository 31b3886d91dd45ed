package curate

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// TestRunPrunesTheCache: the workspace's curate cache keeps what some
// theme's last run used; an entry no theme's run uses any more goes once it
// is a day old (a younger one may be another run's, going on meanwhile);
// while a curated theme has no record of its run (an older vibe curated
// it), nothing goes.
func TestRunPrunesTheCache(t *testing.T) {
	root := t.TempDir()
	cache := filepath.Join(root, ".vibe/cache/curate")
	write(t, root, "in/a/green.txt", enText)
	write(t, root, "in/a/oolong.txt", strings.Repeat("Oolong is rolled and partly oxidised; rinse it with boiling water and pour at once. ", 5))
	write(t, root, "in/b/zh.md", "# 绿茶\n\n"+zhText)
	calls := 0
	counting := func(ctx context.Context, p string) (string, error) { calls++; return fakeExtract(ctx, p) }
	run := func(theme string, sources ...string) Result {
		t.Helper()
		var specs []Spec
		for _, s := range sources {
			specs = append(specs, Spec{Source: s})
		}
		res, err := Run(context.Background(), Options{Root: root, SourceDir: filepath.Join(root, "knowledge", theme, "source"),
			Sources: specs, Extract: counting, Now: fixedNow, CacheDir: cache})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	entries := func() []string {
		t.Helper()
		ents, err := os.ReadDir(cache)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, e := range ents {
			if !e.IsDir() {
				out = append(out, e.Name())
			}
		}
		sort.Strings(out)
		return out
	}
	age := func(d time.Duration) {
		t.Helper()
		old := time.Now().Add(-d)
		for _, n := range entries() {
			if err := os.Chtimes(filepath.Join(cache, n), old, old); err != nil {
				t.Fatal(err)
			}
		}
	}
	run("a", "in/a/green.txt", "in/a/oolong.txt")
	run("b", "in/b/zh.md")
	all := entries()
	if len(all) < 3 {
		t.Fatalf("cache after two themes: %v; want an entry a text at least", all)
	}
	// Strays no run uses, and nothing young goes.
	write(t, cache, "agree-000000000000000000000000.json", "{}")
	write(t, cache, strings.Repeat("0", 64)+"-7e4ba780.json", "{}")
	if res := run("a", "in/a/green.txt", "in/a/oolong.txt"); res.CachePruned != 0 {
		t.Fatalf("pruned %d entries younger than a day", res.CachePruned)
	}
	// Theme a drops oolong; everything is two days old.
	age(48 * time.Hour)
	before := calls
	res := run("a", "in/a/green.txt")
	after := entries()
	if calls != before {
		t.Errorf("the kept source was extracted again (%d calls): its entry went", calls-before)
	}
	if res.CachePruned != 3 || len(after) != len(all)-1 {
		t.Fatalf("pruned %d: %v -> %v; want the strays and oolong's entry gone, 3", res.CachePruned, all, after)
	}
	for _, n := range after {
		if strings.HasPrefix(n, "agree-0000") || strings.HasPrefix(n, "0000") {
			t.Errorf("stray %s kept", n)
		}
	}
	// Theme b's entries stay: a run of b reads them.
	before = calls
	run("b", "in/b/zh.md")
	if calls != before {
		t.Errorf("theme b's text was extracted again: its entry went with a's prune")
	}
	// A theme curated without a record (an older vibe): nothing goes.
	write(t, root, "knowledge/c/source/"+LockName, `{"version": 1, "sources": []}`)
	write(t, cache, "agree-111111111111111111111111.json", "{}")
	age(48 * time.Hour)
	if res := run("a", "in/a/green.txt"); res.CachePruned != 0 {
		t.Fatalf("pruned %d while theme c has no record", res.CachePruned)
	}
	// Theme c gone: its record is not waited for.
	if err := os.RemoveAll(filepath.Join(root, "knowledge/c")); err != nil {
		t.Fatal(err)
	}
	if res := run("a", "in/a/green.txt"); res.CachePruned != 1 {
		t.Fatalf("pruned %d after theme c went, want the stray", res.CachePruned)
	}
}
