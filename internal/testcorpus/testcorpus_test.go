package testcorpus

import (
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// fakeTB records how Dir ends the test instead of ending this one.
type fakeTB struct {
	testing.TB
	skipped, fatal string
}

func (f *fakeTB) Helper() {}
func (f *fakeTB) Skipf(format string, args ...any) {
	f.skipped = fmt.Sprintf(format, args...)
	runtime.Goexit()
}
func (f *fakeTB) Fatalf(format string, args ...any) {
	f.fatal = fmt.Sprintf(format, args...)
	runtime.Goexit()
}
func (f *fakeTB) Fatal(args ...any) { f.Fatalf("%s", fmt.Sprint(args...)) }

// dirIn runs Dir on its own goroutine, as Skip and Fatal end it.
func dirIn(tb *fakeTB, sub ...string) string {
	got := make(chan string, 1)
	go func() {
		defer close(got)
		got <- Dir(tb, sub...)
	}()
	return <-got
}

func TestMissingCorpusSkipsLoudlyAndFailsUnderCI(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "no-corpus")
	t.Setenv(EnvVar, missing)

	t.Setenv("CI", "")
	tb := &fakeTB{TB: t}
	if got := dirIn(tb, "bazi"); got != "" || tb.fatal != "" || !strings.Contains(tb.skipped, "SKIPPED") || !strings.Contains(tb.skipped, EnvVar) {
		t.Errorf("without CI: returned %q, skip %q, fatal %q", got, tb.skipped, tb.fatal)
	}

	t.Setenv("CI", "true")
	tb = &fakeTB{TB: t}
	if got := dirIn(tb, "bazi"); got != "" || tb.skipped != "" || !strings.Contains(tb.fatal, "missing under CI=true") {
		t.Errorf("under CI: returned %q, skip %q, fatal %q", got, tb.skipped, tb.fatal)
	}

	var b strings.Builder
	Banner(&b, missing)
	for _, want := range []string{"CORPUS TESTS SKIPPED", missing, EnvVar, "CI=true"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("banner lacks %q:\n%s", want, b.String())
		}
	}
}

func TestCorpusFromEnv(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(EnvVar, dir)
	tb := &fakeTB{TB: t}
	if got := dirIn(tb); got != dir || tb.skipped != "" || tb.fatal != "" {
		t.Errorf("Dir = %q (skip %q, fatal %q), want %q", got, tb.skipped, tb.fatal, dir)
	}
}
