// Package racetest lets a test know whether its binary was built with
// -race, and moves the tests that the race detector only slows down out of
// `make test`'s -race pass.
//
// The race detector finds nothing in a test that runs one goroutine, but it
// makes such a test 5 to 60 times slower (the pure-Go SQLite, the parsers
// over whole books). A test of that kind calls [SequentialOnly] first: under
// -race it is skipped with a message saying where it runs, and `make test`
// runs it in its second pass, without -race (the NORACE list in the
// Makefile; TestNoRaceListIsComplete keeps that list and the calls in step).
// Every test that starts goroutines of its own stays in the -race pass.
package racetest

import "testing"

// Enabled reports a -race build.
const Enabled = enabled

// SequentialOnly skips tb in a -race build: tb runs in one goroutine (the
// code under test may use a bounded pool, but the test exercises no
// concurrency of its own), so the detector adds nothing but time. The test
// must be named in the Makefile's NORACE list so `make test` runs it
// without -race.
func SequentialOnly(tb testing.TB) {
	tb.Helper()
	if Enabled {
		tb.Skip("single-goroutine test: make test runs it without -race (Makefile NORACE, docs/ci.md)")
	}
}
