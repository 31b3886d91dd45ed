// Package sqlite is the embedded (default) knowledge store: one SQLite
// database file through the pure-Go modernc.org/sqlite driver, in WAL mode,
// with versioned migrations, FTS5 over pre-tokenised text (package lexical)
// for the lexical side and exact cosine search over vectors cached in memory
// per theme for the vector side.
package sqlite
