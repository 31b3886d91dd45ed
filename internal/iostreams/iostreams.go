// Package iostreams carries the standard streams and terminal facts to the
// commands, so that nothing below cmd/vibe writes to os.Stdout directly and
// tests can capture every byte.
package iostreams

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/term"
)

// IOStreams are the streams a command reads and writes.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer

	stdoutTTY bool
	stderrTTY bool
}

// System returns the process's streams.
func System() *IOStreams {
	return &IOStreams{
		In:        os.Stdin,
		Out:       os.Stdout,
		ErrOut:    os.Stderr,
		stdoutTTY: term.IsTerminal(int(os.Stdout.Fd())),
		stderrTTY: term.IsTerminal(int(os.Stderr.Fd())),
	}
}

// Test returns streams backed by buffers: stdin, stdout, stderr.
func Test() (*IOStreams, *bytes.Buffer, *bytes.Buffer, *bytes.Buffer) {
	in, out, errOut := &bytes.Buffer{}, &bytes.Buffer{}, &bytes.Buffer{}
	return &IOStreams{In: in, Out: out, ErrOut: errOut}, in, out, errOut
}

// IsStdoutTTY reports whether standard output is a terminal.
func (s *IOStreams) IsStdoutTTY() bool { return s.stdoutTTY }

// IsStderrTTY reports whether standard error is a terminal.
func (s *IOStreams) IsStderrTTY() bool { return s.stderrTTY }

// SetTTY overrides terminal detection (tests).
func (s *IOStreams) SetTTY(stdout, stderr bool) { s.stdoutTTY, s.stderrTTY = stdout, stderr }

// Progress reports the progress of a stage over a known number of items. On a
// terminal it redraws one bar line on stderr; otherwise it writes a plain line
// per item, so logs of CI runs stay readable. It is safe for concurrent use.
type Progress struct {
	mu      sync.Mutex
	w       io.Writer
	tty     bool
	label   string
	total   int
	done    int
	last    time.Time
	quiet   bool
	started time.Time
}

// NewProgress starts a progress report for total items labelled label (the
// stage name). With quiet set it reports nothing.
func (s *IOStreams) NewProgress(label string, total int, quiet bool) *Progress {
	return &Progress{w: s.ErrOut, tty: s.stderrTTY, label: label, total: total, quiet: quiet, started: time.Now()}
}

// Step records that one item, named item, is finished.
func (p *Progress) Step(item string) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done++
	if p.quiet {
		return
	}
	if !p.tty {
		fmt.Fprintf(p.w, "%s: [%d/%d] %s\n", p.label, p.done, p.total, item)
		return
	}
	if time.Since(p.last) < 50*time.Millisecond && p.done < p.total {
		return
	}
	p.last = time.Now()
	const width = 30
	filled := 0
	if p.total > 0 {
		filled = width * p.done / p.total
	}
	name := item
	if r := []rune(name); len(r) > 40 {
		name = "…" + string(r[len(r)-39:])
	}
	fmt.Fprintf(p.w, "\r\033[K%s [%s%s] %d/%d %s", p.label,
		strings.Repeat("█", filled), strings.Repeat("░", width-filled), p.done, p.total, name)
}

// Done ends the report; on a terminal it finishes the bar line.
func (p *Progress) Done() {
	if p == nil || p.quiet {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.tty {
		fmt.Fprintf(p.w, "\r\033[K%s: %d/%d in %s\n", p.label, p.done, p.total, time.Since(p.started).Round(time.Millisecond))
	}
}
