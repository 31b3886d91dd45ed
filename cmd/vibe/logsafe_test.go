package main

import (
	"strings"
	"testing"
)

// TestLogSafe: a newline in a file or skill name cannot start a forged log
// line; ordinary text (Chinese included) is left as it is.
func TestLogSafe(t *testing.T) {
	for in, want := range map[string]string{
		"skills/八字":                        "skills/八字",
		"a\nwarning: forged line":          `a\nwarning: forged line`,
		"tab\there\r":                      `tab\there\r`,
		"load skill x: \x1b[31mred\x1b[0m": `load skill x: \x1b[31mred\x1b[0m`,
	} {
		got := logSafe(in)
		if got != want || strings.ContainsAny(got, "\n\r\x1b") {
			t.Errorf("logSafe(%q) = %q, want %q", in, got, want)
		}
	}
}
