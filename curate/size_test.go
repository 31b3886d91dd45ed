package curate

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// sparse makes a file of size bytes that takes no disk (Truncate).
func sparse(t *testing.T, p string, size int64) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(size); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestRunDropsAFileOverTheLimitUnread is the regression test of issue 26's
// finding that a 1 GB sparse file in a source folder was read whole (1.07 GB
// resident, 15.6 s) before it was dropped as an unsupported type: its size
// is checked first and it is dropped with its size and the limit named, in
// a listed directory and hand-placed in source/ alike, and the run
// allocates far less than the file holds.
func TestRunDropsAFileOverTheLimitUnread(t *testing.T) {
	root := t.TempDir()
	src := filepath.Join(root, "knowledge/tea/source")
	write(t, filepath.Join(root, "in"), "a-green.txt", enText)
	sparse(t, filepath.Join(root, "in", "huge.txt"), 1<<30)
	sparse(t, filepath.Join(src, "dropped-here.md"), 1<<30)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	res, err := Run(context.Background(), Options{Root: root, SourceDir: src, Sources: []Spec{{Source: "in"}}, Extract: fakeExtract, Now: fixedNow})
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 64<<20 {
		t.Errorf("the run allocated %d MiB: the big files were read", alloc>>20)
	}
	got := map[string]Entry{}
	for _, e := range res.Lock.Sources {
		got[e.Origin] = e
	}
	if e := got["in/a-green.txt"]; e.Status != StatusKept {
		t.Errorf("a-green.txt: %s %s", e.Status, e.Reason)
	}
	for _, origin := range []string{"in/huge.txt", "knowledge/tea/source/dropped-here.md"} {
		e, ok := got[origin]
		if !ok {
			t.Errorf("%s: missing from the lock: %+v", origin, res.Lock.Sources)
			continue
		}
		if e.Status != StatusDropped || !strings.Contains(e.Reason, "1.0 GiB (1073741824 bytes) is over convert.max_file_bytes (512.0 MiB)") {
			t.Errorf("%s: %s %q, want dropped naming its size and the limit", origin, e.Status, e.Reason)
		}
	}
	// A lower limit drops a small file the same way.
	res, err = Run(context.Background(), Options{Root: root, SourceDir: src, Sources: []Spec{{Source: "in"}}, Extract: fakeExtract, Now: fixedNow, MaxFileBytes: 100})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range res.Lock.Sources {
		if e.Origin == "in/a-green.txt" && (e.Status != StatusDropped || !strings.Contains(e.Reason, "is over convert.max_file_bytes (100 bytes)")) {
			t.Errorf("a-green.txt under a 100-byte limit: %s %q", e.Status, e.Reason)
		}
	}
}

// errSlow stands for the converter's "took too long".
var errSlow = errors.New("conversion took too long")

// TestRunRemembersALastingFailure: a file whose conversion took too long is
// remembered by its bytes: the next run drops it with the same reason
// without converting it again; changed bytes or RetryFailed convert it
// again, and a success forgets the failure (issue 26: curate retried four
// such files on every build).
func TestRunRemembersALastingFailure(t *testing.T) {
	root := t.TempDir()
	src := filepath.Join(root, "knowledge/tea/source")
	write(t, filepath.Join(root, "in"), "a-green.txt", enText)
	write(t, filepath.Join(root, "in"), "slow.txt", zhText)
	calls := map[string]int{}
	slow := true
	extract := func(ctx context.Context, p string) (string, error) {
		calls[filepath.Base(p)]++
		if filepath.Base(p) == "slow.txt" && slow {
			return "", fmt.Errorf("slow.txt: %w: not done after 2m0s", errSlow)
		}
		return fakeExtract(ctx, p)
	}
	run := func(retry bool) Entry {
		t.Helper()
		res, err := Run(context.Background(), Options{Root: root, SourceDir: src, Sources: []Spec{{Source: "in"}}, Extract: extract, Now: fixedNow,
			CacheDir: filepath.Join(root, ".vibe/cache/curate"), Lasting: func(err error) bool { return errors.Is(err, errSlow) }, RetryFailed: retry})
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range res.Lock.Sources {
			if e.Origin == "in/slow.txt" {
				return e
			}
		}
		t.Fatalf("slow.txt missing from the lock")
		return Entry{}
	}
	first := run(false)
	if first.Status != StatusDropped || !first.Failed || !strings.Contains(first.Reason, "not done after 2m0s") || !strings.Contains(first.Reason, "--retry-failed") || calls["slow.txt"] != 1 {
		t.Fatalf("first run: %+v, %d calls", first, calls["slow.txt"])
	}
	second := run(false)
	if calls["slow.txt"] != 1 {
		t.Errorf("the remembered failure was converted again (%d calls)", calls["slow.txt"])
	}
	if second.Status != StatusDropped || second.Reason != first.Reason {
		t.Errorf("second run: %+v, want the first run's reason %q", second, first.Reason)
	}
	// Asked to, it converts it again; now it works, and is kept from then on.
	slow = false
	if e := run(true); e.Status != StatusKept || calls["slow.txt"] != 2 {
		t.Errorf("--retry-failed: %+v, %d calls", e, calls["slow.txt"])
	}
	slow = true
	if e := run(false); e.Status != StatusKept {
		t.Errorf("after a success: %+v (the failure should be forgotten, the text cached)", e)
	}
	// Changed bytes are converted again, whatever is remembered.
	write(t, filepath.Join(root, "in"), "slow.txt", zhText+"\n\n新的一段。")
	before := calls["slow.txt"]
	if e := run(false); e.Status != StatusDropped || calls["slow.txt"] != before+1 {
		t.Errorf("changed bytes: %+v, %d calls (want one more)", e, calls["slow.txt"]-before)
	}
	// ... and that failure is remembered in turn.
	if e := run(false); calls["slow.txt"] != before+1 || e.Status != StatusDropped {
		t.Errorf("the changed file's failure was not remembered: %d calls", calls["slow.txt"]-before)
	}
}
