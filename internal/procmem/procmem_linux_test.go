//go:build linux

package procmem

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// executableRss is the resident KiB of the test binary's read-only mappings
// (the ones ReleaseExecutablePages releases), from /proc/self/smaps.
func executableRss(t *testing.T) int64 {
	t.Helper()
	var exe syscall.Stat_t
	if err := syscall.Stat("/proc/self/exe", &exe); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		t.Fatal(err)
	}
	var kib int64
	counting := false
	for _, line := range strings.Split(string(b), "\n") {
		if ms := parseMaps(line); len(ms) == 1 {
			m := ms[0]
			counting = m.inode == exe.Ino && m.perms[1] != 'w'
			continue
		}
		if counting && strings.HasPrefix(line, "Rss:") {
			n, err := strconv.ParseInt(strings.Fields(line)[1], 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			kib += n
		}
	}
	return kib
}

func TestReleaseExecutablePages(t *testing.T) {
	// Touch code all over the binary first, as start-up does.
	_ = strings.ToUpper(strconv.Quote(t.Name()))
	before := executableRss(t)
	if before == 0 {
		t.Fatal("the test binary's read-only mappings are not resident: nothing to measure")
	}
	released, err := ReleaseExecutablePages()
	if err != nil {
		t.Fatal(err)
	}
	after := executableRss(t)
	t.Logf("read-only executable mappings: %d KiB resident before, %d KiB after releasing %d KiB of mappings", before, after, released>>10)
	if released <= 0 {
		t.Errorf("released %d bytes; want the executable's read-only mappings", released)
	}
	if after >= before {
		t.Errorf("resident %d KiB after release, %d KiB before; want less", after, before)
	}
	// The released code still runs: it is mapped back on use.
	if got := strings.Repeat("ab", 3); got != "ababab" {
		t.Errorf("strings.Repeat after release = %q", got)
	}
	if _, err := ReleaseExecutablePages(); err != nil {
		t.Errorf("second release: %v", err)
	}
}

func TestParseMaps(t *testing.T) {
	in := "00400000-01f01000 r-xp 00000000 fd:00 1234 /usr/bin/vibe (deleted)\n" +
		"7f00-7f10 rw-p 00000000 00:00 0 \n" +
		"garbage\n" +
		"zz-01 r--p 0 fd:00 1 /x\n"
	got := parseMaps(in)
	if len(got) != 2 {
		t.Fatalf("parseMaps: %d mappings, want 2: %+v", len(got), got)
	}
	if m := got[0]; m.start != 0x400000 || m.end != 0x1f01000 || m.perms != "r-xp" || m.inode != 1234 || m.path != "/usr/bin/vibe (deleted)" {
		t.Errorf("first mapping = %+v", m)
	}
	if m := got[1]; m.inode != 0 || m.path != "" || m.perms != "rw-p" {
		t.Errorf("second mapping = %+v", m)
	}
}
