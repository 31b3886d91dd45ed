//go:build !race

package sqlite

// raceEnabled reports a -race build (see race_test.go).
const raceEnabled = false
