package pgvector

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/vibelife/vibe/knowledge"
)

// migration is one schema step, applied once in order and recorded in
// schema_migrations; append new steps with the next version.
type migration struct {
	version int
	name    string
	sql     string
	// fn, when set, runs after sql in the same transaction.
	fn func(ctx context.Context, tx pgx.Tx) error
}

var migrations = []migration{
	{1, "knowledge", `
CREATE EXTENSION IF NOT EXISTS vector;
CREATE TABLE kb_document (
	id TEXT PRIMARY KEY,
	theme TEXT NOT NULL,
	source TEXT NOT NULL,
	title TEXT NOT NULL,
	content_hash TEXT NOT NULL,
	chunks INTEGER NOT NULL,
	updated_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX kb_document_theme ON kb_document(theme, id);
CREATE TABLE kb_chunk (
	id TEXT PRIMARY KEY,
	doc_id TEXT NOT NULL REFERENCES kb_document(id) ON DELETE CASCADE,
	theme TEXT NOT NULL,
	ordinal INTEGER NOT NULL,
	source TEXT NOT NULL,
	title TEXT NOT NULL,
	heading_path TEXT[] NOT NULL,
	start_off INTEGER NOT NULL,
	end_off INTEGER NOT NULL,
	text TEXT NOT NULL,
	tokens INTEGER NOT NULL,
	lex TEXT NOT NULL,
	tsv TSVECTOR GENERATED ALWAYS AS (to_tsvector('simple', lex)) STORED
);
CREATE INDEX kb_chunk_doc ON kb_chunk(doc_id, ordinal);
CREATE INDEX kb_chunk_theme ON kb_chunk(theme, doc_id, ordinal);
CREATE INDEX kb_chunk_tsv ON kb_chunk USING GIN (tsv);
CREATE TABLE kb_embedding (
	chunk_id TEXT PRIMARY KEY REFERENCES kb_chunk(id) ON DELETE CASCADE,
	theme TEXT NOT NULL,
	embedding vector NOT NULL
);
CREATE INDEX kb_embedding_theme ON kb_embedding(theme);
CREATE TABLE kb_embedding_info (
	id INTEGER PRIMARY KEY CHECK (id = 1),
	model TEXT NOT NULL,
	dimensions INTEGER NOT NULL
);
`, nil},
	{2, "memory", memorySQL, nil},
	// The client builds the tsvector from the lexical tokens (tsvectorOf):
	// running the server's text-search parser over the token text cost most
	// of a write. Existing rows keep their (equal) vectors.
	{3, "client-built tsvector", `
ALTER TABLE kb_chunk ALTER COLUMN tsv DROP EXPRESSION;
ALTER TABLE kb_chunk ALTER COLUMN tsv SET NOT NULL;
ALTER TABLE kb_chunk DROP COLUMN lex;
`, nil},
	// BM25 statistics: each chunk's length in index tokens, and per theme
	// the chunk and token counts, kept by every write in its transaction.
	{4, "bm25 statistics", `
ALTER TABLE kb_chunk ADD COLUMN lex_len INTEGER;
UPDATE kb_chunk SET lex_len = (SELECT coalesce(sum(array_length(positions, 1)), 0) FROM unnest(tsv));
ALTER TABLE kb_chunk ALTER COLUMN lex_len SET NOT NULL;
CREATE TABLE kb_theme_stats (theme TEXT PRIMARY KEY, chunks BIGINT NOT NULL, tokens BIGINT NOT NULL);
INSERT INTO kb_theme_stats SELECT theme, count(*), sum(lex_len) FROM kb_chunk GROUP BY theme;
`, nil},
	// Conversations keyed by (user_id, id): two users' "c1" are two
	// conversations and no user can squat another's id. Each message and
	// summary takes the user of its conversation.
	{5, "conversations scoped per user", `
ALTER TABLE mem_message DROP CONSTRAINT mem_message_conversation_id_fkey;
ALTER TABLE mem_summary DROP CONSTRAINT mem_summary_conversation_id_fkey;
ALTER TABLE mem_message ADD COLUMN user_id TEXT;
ALTER TABLE mem_summary ADD COLUMN user_id TEXT;
UPDATE mem_message m SET user_id = c.user_id FROM mem_conversation c WHERE c.id = m.conversation_id;
UPDATE mem_summary m SET user_id = c.user_id FROM mem_conversation c WHERE c.id = m.conversation_id;
DELETE FROM mem_message WHERE user_id IS NULL;
DELETE FROM mem_summary WHERE user_id IS NULL;
ALTER TABLE mem_message ALTER COLUMN user_id SET NOT NULL;
ALTER TABLE mem_summary ALTER COLUMN user_id SET NOT NULL;
ALTER TABLE mem_message DROP CONSTRAINT mem_message_pkey;
ALTER TABLE mem_summary DROP CONSTRAINT mem_summary_pkey;
ALTER TABLE mem_conversation DROP CONSTRAINT mem_conversation_pkey;
ALTER TABLE mem_conversation ADD PRIMARY KEY (user_id, id);
ALTER TABLE mem_message ADD PRIMARY KEY (user_id, conversation_id, seq);
ALTER TABLE mem_summary ADD PRIMARY KEY (user_id, conversation_id);
ALTER TABLE mem_message ADD FOREIGN KEY (user_id, conversation_id) REFERENCES mem_conversation(user_id, id) ON DELETE CASCADE;
ALTER TABLE mem_summary ADD FOREIGN KEY (user_id, conversation_id) REFERENCES mem_conversation(user_id, id) ON DELETE CASCADE;
`, nil},
	// The workspace each theme is built from, and who holds a theme's build
	// lock (for the message of a refused second build).
	{6, "theme owners and build holders", `
CREATE TABLE kb_theme_owner (theme TEXT PRIMARY KEY, workspace TEXT NOT NULL, updated_at TIMESTAMPTZ NOT NULL DEFAULT now());
CREATE TABLE kb_build_holder (theme TEXT PRIMARY KEY, holder TEXT NOT NULL, started_at TIMESTAMPTZ NOT NULL DEFAULT now());
`, nil},
	// Per-user request buckets shared by every vibe serve on the database.
	{7, "shared rate limits", `
CREATE TABLE mem_rate (key TEXT PRIMARY KEY, tokens DOUBLE PRECISION NOT NULL, last TIMESTAMPTZ NOT NULL);
`, nil},
	{8, "user history and summaries", historySQL, nil},
	// Per-user model tokens a UTC day, shared by every vibe serve on the
	// database (serve.tokens_per_day).
	{9, "daily token quotas", `
CREATE TABLE mem_token_day (user_id TEXT NOT NULL, day DATE NOT NULL, tokens BIGINT NOT NULL, PRIMARY KEY (user_id, day));
`, nil},
	// The events an assistant message showed beside its text (cards, forms,
	// citations); NULL for the messages stored before.
	{10, "message events", `
ALTER TABLE mem_message ADD COLUMN events JSONB;
`, nil},
	{11, "answer feedback", feedbackSQL, nil},
	// vibe's own lexical index (lexical.go, knowledge/lexindex) replaces
	// the tsvector, its GIN index and the two-stage BM25 over them, which
	// read and scored every chunk holding a query token; the stored
	// documents are indexed by buildLexIndex.
	{12, "lexical index", lexIndexSQL, buildLexIndex},
	// The HNSW index holds half-precision vectors (hnswOn): the float32
	// one goes, and Open (ensureIndexes) builds the new one.
	{13, "half-precision HNSW index", `SELECT 1`, dropHNSW},
}

// dropHNSW drops the store's HNSW index, named in the schema of
// kb_embedding (the search path may hold another store's).
func dropHNSW(ctx context.Context, tx pgx.Tx) error {
	var schema string
	if err := tx.QueryRow(ctx, `SELECT n.nspname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = 'kb_embedding'::regclass`).Scan(&schema); err != nil {
		return err
	}
	_, err := tx.Exec(ctx, `DROP INDEX IF EXISTS `+pgx.Identifier{schema, "kb_embedding_hnsw"}.Sanitize())
	return err
}

const lexIndexSQL = `
DROP INDEX IF EXISTS kb_chunk_tsv;
ALTER TABLE kb_chunk DROP COLUMN tsv;
ALTER TABLE kb_chunk DROP COLUMN lex_len;
ALTER TABLE kb_chunk ADD COLUMN lex_num BIGINT;
ALTER TABLE kb_theme_stats ADD COLUMN next_num BIGINT NOT NULL DEFAULT 1;
CREATE TABLE kb_lex_posting (
	term TEXT NOT NULL,
	theme TEXT NOT NULL,
	first BIGINT NOT NULL,
	last BIGINT NOT NULL,
	n INTEGER NOT NULL,
	maxtf INTEGER NOT NULL,
	minlen INTEGER NOT NULL,
	data BYTEA NOT NULL,
	PRIMARY KEY (term, theme, first)
) WITH (fillfactor = 80);
CREATE TABLE kb_lex_doc (
	doc_id TEXT PRIMARY KEY,
	theme TEXT NOT NULL,
	lo BIGINT NOT NULL,
	hi BIGINT NOT NULL,
	chunks INTEGER NOT NULL,
	tokens BIGINT NOT NULL,
	terms TEXT[] NOT NULL
);
`

// knownVersion is the newest schema version this binary applies.
func knownVersion() int { return migrations[len(migrations)-1].version }

// checkNewer refuses a database a newer vibe has migrated past
// knownVersion: its tables may be laid out otherwise, and this binary
// would read them wrongly and write without keeping what the newer schema
// keeps.
func checkNewer(ctx context.Context, conn *pgx.Conn) error {
	var found int
	var db, schema string
	if err := conn.QueryRow(ctx, `SELECT coalesce(max(version), 0), current_database(), current_schema() FROM schema_migrations`).Scan(&found, &db, &schema); err != nil {
		return fmt.Errorf("read schema_migrations: %w", err)
	}
	if found > knownVersion() {
		cfg := conn.Config()
		return &knowledge.SchemaNewerError{Store: fmt.Sprintf("PostgreSQL database %q (schema %q) on %s:%d", db, schema, cfg.Host, cfg.Port), Found: found, Known: knownVersion()}
	}
	return nil
}

// migrationLock is the advisory lock key held while migrating.
const migrationLock = 0x766962656d6967 // "vibemig"

func migrate(ctx context.Context, conn *pgx.Conn) error { return migrateTo(ctx, conn, 1<<30) }

// migrateTo applies the migrations up to version last (tests build a
// database of an older schema with it).
func migrateTo(ctx context.Context, conn *pgx.Conn, last int) error {
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1)`, int64(migrationLock)); err != nil {
		return fmt.Errorf("migration lock: %w", err)
	}
	defer conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, int64(migrationLock))
	if _, err := conn.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())`); err != nil {
		return fmt.Errorf("create schema_migrations: %w", err)
	}
	if err := checkNewer(ctx, conn); err != nil {
		return err
	}
	for _, m := range migrations {
		if m.version > last {
			break
		}
		var n int
		if err := conn.QueryRow(ctx, `SELECT count(*) FROM schema_migrations WHERE version = $1`, m.version).Scan(&n); err != nil {
			return err
		}
		if n > 0 {
			continue
		}
		err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, m.sql); err != nil {
				return err
			}
			if m.fn != nil {
				if err := m.fn(ctx, tx); err != nil {
					return err
				}
			}
			_, err := tx.Exec(ctx, `INSERT INTO schema_migrations(version, name) VALUES ($1, $2)`, m.version, m.name)
			return err
		})
		if err != nil {
			return fmt.Errorf("migration %d (%s): %w", m.version, m.name, err)
		}
	}
	return nil
}
