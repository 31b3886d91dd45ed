//go:build !race

package pgvector

// raceEnabled reports a -race build (see race_test.go).
const raceEnabled = false
