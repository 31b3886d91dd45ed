package main

import (
	"fmt"
	"io"
	"os"
	"syscall"
)

// interrupts handles SIGINT and SIGTERM: the first cancels the run (stages
// stop at their next safe point and clean up), the second exits at once
// with 130 (SIGINT) or 143 (SIGTERM), the shell's codes for a process killed
// by that signal, whatever the run is doing: a parser stuck on a hostile
// file must not keep the user from getting the terminal back.
func interrupts(sigs <-chan os.Signal, cancel func(), stderr io.Writer, exit func(int)) {
	first := true
	for s := range sigs {
		if first {
			first = false
			cancel()
			fmt.Fprintln(stderr, "vibe: interrupted; stopping (press Ctrl-C again to quit at once)")
			continue
		}
		fmt.Fprintln(stderr, "vibe: interrupted again; quitting now")
		exit(signalExitCode(s))
		return
	}
}

// signalExitCode is 128 + the signal number: 130 for SIGINT, 143 for SIGTERM.
func signalExitCode(s os.Signal) int {
	if n, ok := s.(syscall.Signal); ok {
		return 128 + int(n)
	}
	return 130
}
