// Package sqlite is the embedded (default) knowledge store: one SQLite
// database file through the pure-Go modernc.org/sqlite driver, in WAL mode,
// with versioned migrations, an inverted index of its own in its tables
// (package lexindex, over package lexical's tokens) for the lexical side and
// cosine search over vectors cached in memory per theme for the vector side.
package sqlite
