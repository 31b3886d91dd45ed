//go:build race

package pgvector

// raceEnabled reports a -race build. The pure-Go SQLite runs about 60 times
// slower under the race detector, so single-goroutine tests over large
// synthetic corpora use a smaller one there (same assertions); `make test`
// runs them at full size in a pass without -race.
const raceEnabled = true
