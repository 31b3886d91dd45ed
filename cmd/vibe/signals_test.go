package main

import (
	"bytes"
	"os"
	"strings"
	"syscall"
	"testing"
)

func TestInterruptsSecondSignalExits(t *testing.T) {
	for _, tc := range []struct {
		sig  os.Signal
		want int
	}{{os.Interrupt, 130}, {syscall.SIGTERM, 143}} {
		sigs := make(chan os.Signal, 2)
		cancelled := 0
		code := -1
		var stderr bytes.Buffer
		sigs <- tc.sig
		sigs <- tc.sig
		close(sigs)
		interrupts(sigs, func() { cancelled++ }, &stderr, func(c int) { code = c })
		if cancelled != 1 {
			t.Errorf("%v: cancel called %d times, want 1 (on the first signal)", tc.sig, cancelled)
		}
		if code != tc.want {
			t.Errorf("%v: exit code %d, want %d", tc.sig, code, tc.want)
		}
		if !strings.Contains(stderr.String(), "again") {
			t.Errorf("%v: stderr %q does not tell how to quit at once", tc.sig, stderr.String())
		}
	}
}

func TestInterruptsOneSignalOnlyCancels(t *testing.T) {
	sigs := make(chan os.Signal, 1)
	sigs <- os.Interrupt
	close(sigs)
	cancelled, exited := false, false
	interrupts(sigs, func() { cancelled = true }, &bytes.Buffer{}, func(int) { exited = true })
	if !cancelled || exited {
		t.Fatalf("one signal: cancelled=%v exited=%v, want cancelled only", cancelled, exited)
	}
}
