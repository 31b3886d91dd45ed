package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/vibelife/vibe/knowledge"
)

// migration is one schema step. Versions are applied in order, each in its
// own transaction, and recorded in schema_migrations; append new steps with
// the next version number, never edit an applied one.
type migration struct {
	version int
	name    string
	sql     string
	// fn, when set, runs after sql in the same transaction.
	fn func(ctx context.Context, tx *sql.Tx) error
}

// migrations is the schema history of the store.
var migrations = []migration{
	{1, "knowledge", `
CREATE TABLE documents (
	id TEXT PRIMARY KEY,
	theme TEXT NOT NULL,
	source TEXT NOT NULL,
	title TEXT NOT NULL,
	content_hash TEXT NOT NULL,
	chunks INTEGER NOT NULL,
	updated_at TEXT NOT NULL
);
CREATE INDEX documents_theme ON documents(theme, id);
CREATE TABLE chunks (
	id TEXT PRIMARY KEY,
	doc_id TEXT NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
	theme TEXT NOT NULL,
	ordinal INTEGER NOT NULL,
	source TEXT NOT NULL,
	title TEXT NOT NULL,
	heading_path TEXT NOT NULL,
	start_off INTEGER NOT NULL,
	end_off INTEGER NOT NULL,
	text TEXT NOT NULL,
	tokens INTEGER NOT NULL
);
CREATE INDEX chunks_doc ON chunks(doc_id, ordinal);
CREATE INDEX chunks_theme ON chunks(theme, doc_id, ordinal);
CREATE TABLE embeddings (
	chunk_id TEXT PRIMARY KEY REFERENCES chunks(id) ON DELETE CASCADE,
	theme TEXT NOT NULL,
	vector BLOB NOT NULL
);
CREATE INDEX embeddings_theme ON embeddings(theme);
CREATE TABLE embedding_info (
	id INTEGER PRIMARY KEY CHECK (id = 1),
	model TEXT NOT NULL,
	dimensions INTEGER NOT NULL
);
CREATE VIRTUAL TABLE chunk_fts USING fts5(
	chunk_id UNINDEXED, theme UNINDEXED, tokens,
	tokenize = 'unicode61 remove_diacritics 0'
);
`, nil},
	{2, "memory", memorySQL, nil},
	// theme_gen counts the writes to each theme, so a process's caches see
	// other processes' writes; chunk_fts_vocab gives the document frequency
	// of each token, for dropping uninformative query tokens.
	{3, "generations and token frequencies", `
CREATE TABLE theme_gen (theme TEXT PRIMARY KEY, gen INTEGER NOT NULL);
INSERT INTO theme_gen(theme, gen) SELECT DISTINCT theme, 1 FROM documents;
CREATE VIRTUAL TABLE chunk_fts_vocab USING fts5vocab(chunk_fts, row);
`, nil},
	{4, "conversations scoped per user", convPerUserSQL, nil},
	{5, "user history and summaries", historySQL, nil},
	// Per-user model tokens a UTC day (serve.tokens_per_day), kept across
	// restarts and shared by the processes on the file.
	{6, "daily token quotas", `
CREATE TABLE mem_token_day (user_id TEXT NOT NULL, day TEXT NOT NULL, tokens INTEGER NOT NULL, PRIMARY KEY (user_id, day));
`, nil},
	// The events an assistant message showed beside its text (cards, forms,
	// citations), as JSON; NULL for the messages stored before.
	{7, "message events", `
ALTER TABLE messages ADD COLUMN events TEXT;
`, nil},
	// Each chunk records the rowid of its row in chunk_fts, whose chunk_id
	// FTS5 cannot index: deleting a document's chunks from chunk_fts by
	// chunk_id scanned the whole table, for every document ingested. The
	// existing rows are matched once through a temporary index.
	{8, "chunk_fts rowids", `
ALTER TABLE chunks ADD COLUMN fts_rowid INTEGER;
CREATE TEMP TABLE fts_map AS SELECT rowid AS r, chunk_id AS c FROM chunk_fts;
CREATE INDEX temp.fts_map_c ON fts_map(c);
UPDATE chunks SET fts_rowid = (SELECT r FROM fts_map WHERE c = chunks.id);
DROP TABLE temp.fts_map;
`, nil},
	{9, "answer feedback", feedbackSQL, nil},
	// The vector index of themes of dense vectors (ivf.go): each theme's
	// centroids, and each document's vectors in the lists of their nearest
	// centroids. A store of an older version has none until its next
	// ingest (Store.IndexVectors) and scans exactly meanwhile.
	{10, "vector index", `
CREATE TABLE vec_ivf (
	theme TEXT PRIMARY KEY,
	version INTEGER NOT NULL,
	dims INTEGER NOT NULL,
	trained_n INTEGER NOT NULL,
	centroids BLOB NOT NULL
);
CREATE TABLE vec_ivf_lists (
	theme TEXT NOT NULL,
	list INTEGER NOT NULL,
	doc_id TEXT NOT NULL,
	rowids BLOB NOT NULL,
	scales BLOB NOT NULL,
	codes BLOB NOT NULL,
	PRIMARY KEY (theme, list, doc_id)
);
CREATE INDEX vec_ivf_lists_doc ON vec_ivf_lists(doc_id);
`, nil},
	// vibe's own lexical index (lexical.go, knowledge/lexindex) replaces
	// FTS5, whose ORDER BY rank scored every chunk matching a query token;
	// the stored chunks are numbered here and indexed by migration 12
	// (a store migrated to 11 before 12 existed was indexed here, in one
	// segment, which 12 keeps).
	{11, "lexical index", lexIndexSQL, numberChunks},
	// The lexical index in segments (lexical.go): the rows of a version 11
	// store become one segment, of the level its documents would have
	// reached, and documents not yet indexed (a store older than 11) are
	// indexed a segment each.
	{12, "lexical index segments", lexSegSQL, lexSegLevel},
	// Incremental merges of the lexical index's segments (lexical.go):
	// the merges in progress, and the ones a store older than 11 needs
	// after 12 indexed its documents a segment each.
	{13, "lexical index merges", `
CREATE TABLE lex_merge (
	level INTEGER PRIMARY KEY,
	seg INTEGER NOT NULL,
	last INTEGER NOT NULL,
	term TEXT NOT NULL,
	theme TEXT NOT NULL
);
`, mergeAll},
	// Vectors may be stored sparse (vecblob.go): nothing to change in the
	// tables, but a vibe older than this cannot read such a blob, so it
	// must refuse the store (checkNewer) once this vibe has opened it.
	// Vectors written before stay dense until their document is written
	// again (vibe ingest --rebuild rewrites them all).
	{14, "sparse vectors", `SELECT 1`, nil},
}

const lexSegSQL = `
ALTER TABLE lex_posting RENAME TO lex_posting_v11;
CREATE TABLE lex_posting (
	seg INTEGER NOT NULL,
	term TEXT NOT NULL,
	theme TEXT NOT NULL,
	first INTEGER NOT NULL,
	last INTEGER NOT NULL,
	n INTEGER NOT NULL,
	maxtf INTEGER NOT NULL,
	minlen INTEGER NOT NULL,
	data BLOB NOT NULL,
	PRIMARY KEY (seg, term, theme, first)
) WITHOUT ROWID;
INSERT INTO lex_posting(seg, term, theme, first, last, n, maxtf, minlen, data)
	SELECT 1, term, theme, first, last, n, maxtf, minlen, data FROM lex_posting_v11 ORDER BY term, theme, first;
DROP TABLE lex_posting_v11;
CREATE TABLE lex_seg (
	seg INTEGER PRIMARY KEY,
	level INTEGER NOT NULL,
	lo INTEGER NOT NULL,
	hi INTEGER NOT NULL,
	docs INTEGER NOT NULL
);
INSERT INTO lex_seg(seg, level, lo, hi, docs)
	SELECT 1, 0, min(c.lex_num), max(c.lex_num), count(DISTINCT c.doc_id) FROM chunks c JOIN lex_doc d ON d.doc_id = c.doc_id
	HAVING count(*) > 0;
`

// lexSegLevel sets the level of the segment migration 12 made of a version
// 11 store's rows to the one its documents would have reached by merges
// (the largest whose size, segFanIn^level, they fill), so that new
// documents' segments are merged into it only when as many have been
// written, then indexes the documents not yet indexed.
func lexSegLevel(ctx context.Context, tx *sql.Tx) error {
	var docs int64
	err := tx.QueryRowContext(ctx, `SELECT docs FROM lex_seg WHERE seg = 1`).Scan(&docs)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return err
	}
	level := 0
	for size := int64(segFanIn); size <= docs; size *= segFanIn {
		level++
	}
	if _, err := tx.ExecContext(ctx, `UPDATE lex_seg SET level = ? WHERE seg = 1`, level); err != nil {
		return err
	}
	return indexStored(ctx, tx)
}

const lexIndexSQL = `
DROP TABLE chunk_fts_vocab;
DROP TABLE chunk_fts;
ALTER TABLE chunks DROP COLUMN fts_rowid;
ALTER TABLE chunks ADD COLUMN lex_num INTEGER;
CREATE UNIQUE INDEX chunks_lex_num ON chunks(lex_num);
CREATE TABLE lex_posting (
	theme TEXT NOT NULL,
	term TEXT NOT NULL,
	first INTEGER NOT NULL,
	last INTEGER NOT NULL,
	n INTEGER NOT NULL,
	maxtf INTEGER NOT NULL,
	minlen INTEGER NOT NULL,
	data BLOB NOT NULL,
	PRIMARY KEY (term, theme, first)
) WITHOUT ROWID;
CREATE TABLE lex_doc (
	doc_id TEXT PRIMARY KEY,
	theme TEXT NOT NULL,
	chunks INTEGER NOT NULL,
	tokens INTEGER NOT NULL,
	terms TEXT NOT NULL
);
CREATE TABLE lex_theme (theme TEXT PRIMARY KEY, chunks INTEGER NOT NULL, tokens INTEGER NOT NULL);
`

// convPerUserSQL is migration 4: a conversation is keyed by (user_id, id),
// so two users' "c1" are two conversations and no user can squat another's
// id. The old tables are renamed, their rows copied (each message and
// summary takes the user of its conversation), then dropped.
const convPerUserSQL = `
ALTER TABLE summaries RENAME TO summaries_v3;
ALTER TABLE messages RENAME TO messages_v3;
ALTER TABLE conversations RENAME TO conversations_v3;
DROP INDEX conversations_user;
CREATE TABLE conversations (
	user_id TEXT NOT NULL REFERENCES users(id),
	id TEXT NOT NULL,
	skill TEXT NOT NULL DEFAULT '',
	created_at TEXT NOT NULL,
	updated_at TEXT NOT NULL,
	PRIMARY KEY (user_id, id)
);
CREATE INDEX conversations_user ON conversations(user_id, updated_at);
CREATE TABLE messages (
	user_id TEXT NOT NULL,
	conversation_id TEXT NOT NULL,
	seq INTEGER NOT NULL,
	role TEXT NOT NULL,
	content TEXT NOT NULL,
	created_at TEXT NOT NULL,
	PRIMARY KEY (user_id, conversation_id, seq),
	FOREIGN KEY (user_id, conversation_id) REFERENCES conversations(user_id, id) ON DELETE CASCADE
);
CREATE TABLE summaries (
	user_id TEXT NOT NULL,
	conversation_id TEXT NOT NULL,
	up_to INTEGER NOT NULL,
	text TEXT NOT NULL,
	updated_at TEXT NOT NULL,
	PRIMARY KEY (user_id, conversation_id),
	FOREIGN KEY (user_id, conversation_id) REFERENCES conversations(user_id, id) ON DELETE CASCADE
);
INSERT INTO conversations(user_id, id, skill, created_at, updated_at)
	SELECT user_id, id, skill, created_at, updated_at FROM conversations_v3;
INSERT INTO messages(user_id, conversation_id, seq, role, content, created_at)
	SELECT c.user_id, m.conversation_id, m.seq, m.role, m.content, m.created_at
	FROM messages_v3 m JOIN conversations_v3 c ON c.id = m.conversation_id;
INSERT INTO summaries(user_id, conversation_id, up_to, text, updated_at)
	SELECT c.user_id, m.conversation_id, m.up_to, m.text, m.updated_at
	FROM summaries_v3 m JOIN conversations_v3 c ON c.id = m.conversation_id;
DROP TABLE summaries_v3;
DROP TABLE messages_v3;
DROP TABLE conversations_v3;
`

// knownVersion is the newest schema version this binary applies.
func knownVersion() int { return migrations[len(migrations)-1].version }

// checkNewer refuses a store a newer vibe has migrated past knownVersion:
// its tables may be laid out otherwise (a version 11 binary reading a
// version 12 lexical index scans the whole posting table for each query
// without a word), and this binary's writes would not keep what the newer
// schema keeps.
func checkNewer(ctx context.Context, db *sql.DB) error {
	var found int
	if err := db.QueryRowContext(ctx, `SELECT coalesce(max(version), 0) FROM schema_migrations`).Scan(&found); err != nil {
		return fmt.Errorf("read schema_migrations: %w", err)
	}
	if found > knownVersion() {
		return &knowledge.SchemaNewerError{Store: "store " + dbPath(ctx, db), Found: found, Known: knownVersion()}
	}
	return nil
}

// dbPath is the file of db's main database.
func dbPath(ctx context.Context, db *sql.DB) string {
	var seq int
	var name, file string
	if err := db.QueryRowContext(ctx, `PRAGMA database_list`).Scan(&seq, &name, &file); err != nil || file == "" {
		return "(the SQLite store)"
	}
	return file
}

func migrate(ctx context.Context, db *sql.DB) error { return migrateTo(ctx, db, 1<<30) }

// migrateTo applies the migrations up to version last (tests build a
// database of an older schema with it).
func migrateTo(ctx context.Context, db *sql.DB, last int) error {
	if _, err := db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL)`); err != nil {
		return fmt.Errorf("create schema_migrations: %w", err)
	}
	if err := checkNewer(ctx, db); err != nil {
		return err
	}
	for _, m := range migrations {
		if m.version > last {
			break
		}
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM schema_migrations WHERE version = ?`, m.version).Scan(&n); err != nil {
			tx.Rollback()
			return err
		}
		if n > 0 {
			tx.Rollback()
			continue
		}
		if _, err := tx.ExecContext(ctx, m.sql); err != nil {
			tx.Rollback()
			return fmt.Errorf("migration %d (%s): %w", m.version, m.name, err)
		}
		if m.fn != nil {
			if err := m.fn(ctx, tx); err != nil {
				tx.Rollback()
				return fmt.Errorf("migration %d (%s): %w", m.version, m.name, err)
			}
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations(version, name) VALUES (?, ?)`, m.version, m.name); err != nil {
			tx.Rollback()
			return err
		}
		if err := tx.Commit(); err != nil {
			return fmt.Errorf("migration %d (%s): %w", m.version, m.name, err)
		}
	}
	return nil
}
