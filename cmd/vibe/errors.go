package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"
)

// Exit statuses.
const (
	exitOK      = 0
	exitFailure = 1 // the command ran and found a problem, or some items failed
	exitError   = 2 // the command itself could not run (bad usage, I/O, config)
)

// flagError is a usage mistake: reported with the command's usage hint.
type flagError struct{ err error }

func (e *flagError) Error() string { return e.err.Error() }
func (e *flagError) Unwrap() error { return e.err }

func flagErrorf(format string, args ...any) error {
	return &flagError{fmt.Errorf(format, args...)}
}

// exitCodeError carries an explicit exit status, with an optional message
// (an empty message means the command already reported what went wrong).
type exitCodeError struct {
	code int
	err  error
}

func (e *exitCodeError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit status %d", e.code)
	}
	return e.err.Error()
}
func (e *exitCodeError) Unwrap() error { return e.err }

// withExit wraps err so the process exits with code.
func withExit(code int, err error) error { return &exitCodeError{code: code, err: err} }

// hinted is an error with advice on what to do about it.
type hinted struct {
	err  error
	hint string
}

func (e *hinted) Error() string { return e.err.Error() }
func (e *hinted) Unwrap() error { return e.err }

// withHint attaches advice printed under the error.
func withHint(err error, hint string) error {
	if err == nil {
		return nil
	}
	return &hinted{err: err, hint: hint}
}

// reportError prints err the one way every command shares and maps it to an
// exit status.
func reportError(w io.Writer, root *cobra.Command, err error) int {
	if errors.Is(err, context.Canceled) {
		fmt.Fprintln(w, "vibe: interrupted")
		return 130
	}
	var ec *exitCodeError
	if errors.As(err, &ec) {
		if ec.err != nil {
			fmt.Fprintf(w, "vibe: %v\n", ec.err)
			printHint(w, ec.err)
		}
		return ec.code
	}
	var fe *flagError
	if errors.As(err, &fe) || isCobraUsageError(err) {
		fmt.Fprintf(w, "vibe: %v\n", err)
		var h *hinted
		if errors.As(err, &h) && h.hint != "" {
			printHint(w, err)
		} else {
			fmt.Fprintln(w, "hint: run with --help for usage and examples")
		}
		return exitError
	}
	fmt.Fprintf(w, "vibe: %v\n", err)
	printHint(w, err)
	return exitFailure
}

func printHint(w io.Writer, err error) {
	var h *hinted
	if errors.As(err, &h) && h.hint != "" {
		fmt.Fprintf(w, "hint: %s\n", h.hint)
	}
}

// isCobraUsageError recognises cobra's own argument and flag errors.
func isCobraUsageError(err error) bool {
	msg := err.Error()
	for _, p := range []string{"unknown command", "unknown flag", "unknown shorthand flag", "accepts ", "requires at least", "invalid argument", "flag needs an argument", "required flag"} {
		if strings.Contains(msg, p) {
			return true
		}
	}
	return false
}

func jsonEncoder(w io.Writer) *json.Encoder {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc
}

// knownFormat refuses a --format value not among formats.
func knownFormat(format string, formats []string) error {
	if slices.Contains(formats, format) {
		return nil
	}
	return flagErrorf("--format %q: use one of %s", format, strings.Join(formats, ", "))
}

// writeReport runs write on the --output file (standard output when
// output is empty); a failed close (a full disk) is an error, not a
// silently cut report.
func (a *app) writeReport(output string, write func(io.Writer) error) error {
	if output == "" {
		return write(a.io.Out)
	}
	f, err := os.Create(output)
	if err != nil {
		return fmt.Errorf("--output: %w", err)
	}
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("--output: %w", err)
	}
	return nil
}
