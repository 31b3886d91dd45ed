package pgvector

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/vibelife/vibe/knowledge"
)

// memorySQL is migration 2: the runtime's memory tables, in the same
// database as the knowledge.
const memorySQL = `
CREATE TABLE mem_user (id TEXT PRIMARY KEY, profile JSONB NOT NULL DEFAULT '{}', created_at TIMESTAMPTZ NOT NULL DEFAULT now());
CREATE TABLE mem_conversation (
	id TEXT PRIMARY KEY,
	user_id TEXT NOT NULL REFERENCES mem_user(id),
	skill TEXT NOT NULL DEFAULT '',
	created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
	updated_at TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX mem_conversation_user ON mem_conversation(user_id, updated_at);
CREATE TABLE mem_message (
	conversation_id TEXT NOT NULL REFERENCES mem_conversation(id) ON DELETE CASCADE,
	seq INTEGER NOT NULL,
	role TEXT NOT NULL,
	content TEXT NOT NULL,
	created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
	PRIMARY KEY (conversation_id, seq)
);
CREATE TABLE mem_summary (
	conversation_id TEXT PRIMARY KEY REFERENCES mem_conversation(id) ON DELETE CASCADE,
	up_to INTEGER NOT NULL,
	text TEXT NOT NULL,
	updated_at TIMESTAMPTZ NOT NULL DEFAULT now()
);
`

var _ knowledge.MemoryStore = (*Store)(nil)

// EnsureUser implements knowledge.MemoryStore.
func (s *Store) EnsureUser(ctx context.Context, userID string) error {
	if _, err := s.pool.Exec(ctx, `INSERT INTO mem_user(id) VALUES ($1) ON CONFLICT (id) DO NOTHING`, userID); err != nil {
		return fmt.Errorf("pgvector: ensure user %s: %w", userID, err)
	}
	return nil
}

// Profile implements knowledge.MemoryStore.
func (s *Store) Profile(ctx context.Context, userID string) (json.RawMessage, error) {
	var p []byte
	err := s.pool.QueryRow(ctx, `SELECT profile::text FROM mem_user WHERE id = $1`, userID).Scan(&p)
	if errors.Is(err, pgx.ErrNoRows) {
		return json.RawMessage(`{}`), nil
	}
	if err != nil {
		return nil, fmt.Errorf("pgvector: profile of %s: %w", userID, err)
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, p); err != nil {
		return nil, fmt.Errorf("pgvector: profile of %s: %w", userID, err)
	}
	return json.RawMessage(buf.Bytes()), nil
}

// SaveProfile implements knowledge.MemoryStore.
func (s *Store) SaveProfile(ctx context.Context, userID string, p json.RawMessage) error {
	if !json.Valid(p) {
		return fmt.Errorf("pgvector: save profile of %s: invalid JSON", userID)
	}
	_, err := s.pool.Exec(ctx, `INSERT INTO mem_user(id, profile) VALUES ($1, $2::jsonb) ON CONFLICT (id) DO UPDATE SET profile = excluded.profile`, userID, string(p))
	if err != nil {
		return fmt.Errorf("pgvector: save profile of %s: %w", userID, err)
	}
	return nil
}

// UpdateProfile implements knowledge.MemoryStore: the user's row is locked
// (SELECT ... FOR UPDATE) for the transaction, so updates from every
// replica on this database queue one behind the other.
func (s *Store) UpdateProfile(ctx context.Context, userID string, fn func(json.RawMessage) (json.RawMessage, error)) (json.RawMessage, error) {
	var out json.RawMessage
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO mem_user(id) VALUES ($1) ON CONFLICT (id) DO NOTHING`, userID); err != nil {
			return err
		}
		var cur []byte
		if err := tx.QueryRow(ctx, `SELECT profile::text FROM mem_user WHERE id = $1 FOR UPDATE`, userID).Scan(&cur); err != nil {
			return err
		}
		var buf bytes.Buffer
		if err := json.Compact(&buf, cur); err != nil {
			return err
		}
		p, err := fn(json.RawMessage(buf.Bytes()))
		if err != nil {
			return userErr{err}
		}
		if !json.Valid(p) {
			return errors.New("invalid JSON")
		}
		if _, err := tx.Exec(ctx, `UPDATE mem_user SET profile = $2::jsonb WHERE id = $1`, userID, string(p)); err != nil {
			return err
		}
		out = p
		return nil
	})
	var ue userErr
	if errors.As(err, &ue) {
		return nil, ue.error
	}
	if err != nil {
		return nil, fmt.Errorf("pgvector: update profile of %s: %w", userID, err)
	}
	return out, nil
}

// userErr carries the error of a caller's function out of a transaction
// unwrapped.
type userErr struct{ error }

// conv returns the user's conversation, creating it when new.
func (s *Store) conv(ctx context.Context, tx pgx.Tx, userID, id string) (knowledge.Conversation, error) {
	var c knowledge.Conversation
	if err := knowledge.CheckConversationID(id); err != nil {
		return c, fmt.Errorf("pgvector: %w", err)
	}
	row := s.pool.QueryRow
	exec := func(sql string, args ...any) error { _, err := s.pool.Exec(ctx, sql, args...); return err }
	if tx != nil {
		row = tx.QueryRow
		exec = func(sql string, args ...any) error { _, err := tx.Exec(ctx, sql, args...); return err }
	}
	err := row(ctx, `SELECT id, user_id, skill, created_at, updated_at FROM mem_conversation WHERE user_id = $1 AND id = $2`, userID, id).Scan(&c.ID, &c.UserID, &c.Skill, &c.CreatedAt, &c.UpdatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		if err := exec(`INSERT INTO mem_user(id) VALUES ($1) ON CONFLICT (id) DO NOTHING`, userID); err != nil {
			return c, fmt.Errorf("pgvector: conversation %s: %w", id, err)
		}
		if err := exec(`INSERT INTO mem_conversation(id, user_id) VALUES ($1, $2) ON CONFLICT (user_id, id) DO NOTHING`, id, userID); err != nil {
			return c, fmt.Errorf("pgvector: conversation %s: %w", id, err)
		}
		err = row(ctx, `SELECT id, user_id, skill, created_at, updated_at FROM mem_conversation WHERE user_id = $1 AND id = $2`, userID, id).Scan(&c.ID, &c.UserID, &c.Skill, &c.CreatedAt, &c.UpdatedAt)
	}
	if err != nil {
		return c, fmt.Errorf("pgvector: conversation %s: %w", id, err)
	}
	return c, nil
}

// Conversation implements knowledge.MemoryStore.
func (s *Store) Conversation(ctx context.Context, userID, id string) (knowledge.Conversation, error) {
	return s.conv(ctx, nil, userID, id)
}

// AppendMessages implements knowledge.MemoryStore.
func (s *Store) AppendMessages(ctx context.Context, userID, convID string, msgs []knowledge.StoredMessage) ([]knowledge.StoredMessage, error) {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return nil, fmt.Errorf("pgvector: append messages: %w", err)
	}
	defer tx.Rollback(ctx)
	if _, err := s.conv(ctx, tx, userID, convID); err != nil {
		return nil, err
	}
	// Serialise appends to one conversation.
	if _, err := tx.Exec(ctx, `SELECT 1 FROM mem_conversation WHERE user_id = $1 AND id = $2 FOR UPDATE`, userID, convID); err != nil {
		return nil, fmt.Errorf("pgvector: append messages: %w", err)
	}
	var seq int
	if err := tx.QueryRow(ctx, `SELECT COALESCE(MAX(seq), 0) FROM mem_message WHERE user_id = $1 AND conversation_id = $2`, userID, convID).Scan(&seq); err != nil {
		return nil, fmt.Errorf("pgvector: append messages: %w", err)
	}
	out := make([]knowledge.StoredMessage, len(msgs))
	for i, m := range msgs {
		seq++
		m.ConversationID, m.Seq = convID, seq
		if m.CreatedAt.IsZero() {
			m.CreatedAt = time.Now()
		}
		var events any // NULL when none
		if len(m.Events) > 0 {
			if !json.Valid(m.Events) {
				return nil, fmt.Errorf("pgvector: append messages: message %d: events are not JSON", i)
			}
			events = string(m.Events)
		}
		if _, err := tx.Exec(ctx, `INSERT INTO mem_message(user_id, conversation_id, seq, role, content, created_at, events) VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb)`, userID, convID, seq, m.Role, m.Content, m.CreatedAt, events); err != nil {
			return nil, fmt.Errorf("pgvector: append messages: %w", err)
		}
		out[i] = m
	}
	if _, err := tx.Exec(ctx, `UPDATE mem_conversation SET updated_at = now() WHERE user_id = $1 AND id = $2`, userID, convID); err != nil {
		return nil, fmt.Errorf("pgvector: append messages: %w", err)
	}
	if err := tx.Commit(ctx); err != nil {
		return nil, fmt.Errorf("pgvector: append messages: %w", err)
	}
	return out, nil
}

// Messages implements knowledge.MemoryStore.
func (s *Store) Messages(ctx context.Context, userID, convID string, n int) ([]knowledge.StoredMessage, error) {
	if _, err := s.conv(ctx, nil, userID, convID); err != nil {
		return nil, err
	}
	var limit any
	if n > 0 {
		limit = n
	}
	rows, err := s.pool.Query(ctx, `SELECT seq, role, content, created_at, events::text FROM (SELECT * FROM mem_message WHERE user_id = $1 AND conversation_id = $2 ORDER BY seq DESC LIMIT $3) m ORDER BY seq`, userID, convID, limit)
	if err != nil {
		return nil, fmt.Errorf("pgvector: messages: %w", err)
	}
	defer rows.Close()
	var out []knowledge.StoredMessage
	for rows.Next() {
		m := knowledge.StoredMessage{ConversationID: convID}
		var events *string
		if err := rows.Scan(&m.Seq, &m.Role, &m.Content, &m.CreatedAt, &events); err != nil {
			return nil, fmt.Errorf("pgvector: messages: %w", err)
		}
		if events != nil && *events != "" {
			m.Events = json.RawMessage(*events)
		}
		out = append(out, m)
	}
	return out, rows.Err()
}

// Summary implements knowledge.MemoryStore.
func (s *Store) Summary(ctx context.Context, userID, convID string) (knowledge.Summary, error) {
	if _, err := s.conv(ctx, nil, userID, convID); err != nil {
		return knowledge.Summary{}, err
	}
	sum := knowledge.Summary{ConversationID: convID}
	err := s.pool.QueryRow(ctx, `SELECT up_to, text, updated_at FROM mem_summary WHERE user_id = $1 AND conversation_id = $2`, userID, convID).Scan(&sum.UpTo, &sum.Text, &sum.UpdatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return sum, nil
	}
	if err != nil {
		return sum, fmt.Errorf("pgvector: summary: %w", err)
	}
	return sum, nil
}

// SaveSummary implements knowledge.MemoryStore.
func (s *Store) SaveSummary(ctx context.Context, userID string, sum knowledge.Summary) error {
	if _, err := s.conv(ctx, nil, userID, sum.ConversationID); err != nil {
		return err
	}
	if sum.UpdatedAt.IsZero() {
		sum.UpdatedAt = time.Now()
	}
	_, err := s.pool.Exec(ctx, `INSERT INTO mem_summary(user_id, conversation_id, up_to, text, updated_at) VALUES ($1, $2, $3, $4, $5) ON CONFLICT (user_id, conversation_id) DO UPDATE SET up_to = excluded.up_to, text = excluded.text, updated_at = excluded.updated_at`,
		userID, sum.ConversationID, sum.UpTo, sum.Text, sum.UpdatedAt)
	if err != nil {
		return fmt.Errorf("pgvector: save summary: %w", err)
	}
	return nil
}

// Conversations lists the user's conversations, most recently updated
// first; limit <= 0 means all.
func (s *Store) Conversations(ctx context.Context, userID string, limit int) ([]knowledge.Conversation, error) {
	q := `SELECT id, user_id, skill, created_at, updated_at FROM mem_conversation WHERE user_id = $1 ORDER BY updated_at DESC, id`
	args := []any{userID}
	if limit > 0 {
		q += ` LIMIT $2`
		args = append(args, limit)
	}
	rows, err := s.pool.Query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("pgvector: conversations of %s: %w", userID, err)
	}
	defer rows.Close()
	var out []knowledge.Conversation
	for rows.Next() {
		var c knowledge.Conversation
		if err := rows.Scan(&c.ID, &c.UserID, &c.Skill, &c.CreatedAt, &c.UpdatedAt); err != nil {
			return nil, fmt.Errorf("pgvector: conversations of %s: %w", userID, err)
		}
		out = append(out, c)
	}
	return out, rows.Err()
}
