package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/vibelife/vibe/knowledge"
)

// memorySQL is migration 2: the runtime's memory tables (users, profiles,
// conversations, messages, summaries), in the same file as the knowledge.
const memorySQL = `
CREATE TABLE users (id TEXT PRIMARY KEY, profile TEXT NOT NULL DEFAULT '{}', created_at TEXT NOT NULL);
CREATE TABLE conversations (
	id TEXT PRIMARY KEY,
	user_id TEXT NOT NULL REFERENCES users(id),
	skill TEXT NOT NULL DEFAULT '',
	created_at TEXT NOT NULL,
	updated_at TEXT NOT NULL
);
CREATE INDEX conversations_user ON conversations(user_id, updated_at);
CREATE TABLE messages (
	conversation_id TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
	seq INTEGER NOT NULL,
	role TEXT NOT NULL,
	content TEXT NOT NULL,
	created_at TEXT NOT NULL,
	PRIMARY KEY (conversation_id, seq)
);
CREATE TABLE summaries (
	conversation_id TEXT PRIMARY KEY REFERENCES conversations(id) ON DELETE CASCADE,
	up_to INTEGER NOT NULL,
	text TEXT NOT NULL,
	updated_at TEXT NOT NULL
);
`

var _ knowledge.MemoryStore = (*Store)(nil)

func nowText() string { return time.Now().UTC().Format(time.RFC3339Nano) }

func parseTime(s string) time.Time { t, _ := time.Parse(time.RFC3339Nano, s); return t }

// EnsureUser implements knowledge.MemoryStore.
func (s *Store) EnsureUser(ctx context.Context, userID string) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	_, err := s.db.ExecContext(ctx, `INSERT INTO users(id, created_at) VALUES (?, ?) ON CONFLICT(id) DO NOTHING`, userID, nowText())
	if err != nil {
		return fmt.Errorf("sqlite: ensure user %s: %w", userID, err)
	}
	return nil
}

// Profile implements knowledge.MemoryStore.
func (s *Store) Profile(ctx context.Context, userID string) (json.RawMessage, error) {
	var p string
	err := s.db.QueryRowContext(ctx, `SELECT profile FROM users WHERE id = ?`, userID).Scan(&p)
	if errors.Is(err, sql.ErrNoRows) {
		return json.RawMessage(`{}`), nil
	}
	if err != nil {
		return nil, fmt.Errorf("sqlite: profile of %s: %w", userID, err)
	}
	return json.RawMessage(p), nil
}

// SaveProfile implements knowledge.MemoryStore.
func (s *Store) SaveProfile(ctx context.Context, userID string, p json.RawMessage) error {
	if !json.Valid(p) {
		return fmt.Errorf("sqlite: save profile of %s: invalid JSON", userID)
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	_, err := s.db.ExecContext(ctx, `INSERT INTO users(id, profile, created_at) VALUES (?, ?, ?) ON CONFLICT(id) DO UPDATE SET profile = excluded.profile`, userID, string(p), nowText())
	if err != nil {
		return fmt.Errorf("sqlite: save profile of %s: %w", userID, err)
	}
	return nil
}

// UpdateProfile implements knowledge.MemoryStore: the transaction takes
// SQLite's write lock at BEGIN (_txlock=immediate), so no other process's
// update can interleave; wmu queues this process's writers.
func (s *Store) UpdateProfile(ctx context.Context, userID string, fn func(json.RawMessage) (json.RawMessage, error)) (json.RawMessage, error) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("sqlite: update profile of %s: %w", userID, err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `INSERT INTO users(id, created_at) VALUES (?, ?) ON CONFLICT(id) DO NOTHING`, userID, nowText()); err != nil {
		return nil, fmt.Errorf("sqlite: update profile of %s: %w", userID, err)
	}
	var cur string
	if err := tx.QueryRowContext(ctx, `SELECT profile FROM users WHERE id = ?`, userID).Scan(&cur); err != nil {
		return nil, fmt.Errorf("sqlite: update profile of %s: %w", userID, err)
	}
	p, err := fn(json.RawMessage(cur))
	if err != nil {
		return nil, err
	}
	if !json.Valid(p) {
		return nil, fmt.Errorf("sqlite: update profile of %s: invalid JSON", userID)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE users SET profile = ? WHERE id = ?`, string(p), userID); err != nil {
		return nil, fmt.Errorf("sqlite: update profile of %s: %w", userID, err)
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("sqlite: update profile of %s: %w", userID, err)
	}
	return p, nil
}

func (s *Store) conv(ctx context.Context, q interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
	ExecContext(context.Context, string, ...any) (sql.Result, error)
}, userID, id string) (knowledge.Conversation, error) {
	var c knowledge.Conversation
	if err := knowledge.CheckConversationID(id); err != nil {
		return c, fmt.Errorf("sqlite: %w", err)
	}
	var created, updated string
	read := func() error {
		return q.QueryRowContext(ctx, `SELECT id, user_id, skill, created_at, updated_at FROM conversations WHERE user_id = ? AND id = ?`, userID, id).Scan(&c.ID, &c.UserID, &c.Skill, &created, &updated)
	}
	err := read()
	if errors.Is(err, sql.ErrNoRows) {
		// Created idempotently, then read back: two first turns of one id
		// at once both see it missing, and the second INSERT must not fail
		// (UNIQUE constraint failed). Ids are per user: another user's
		// conversation of the same id is another row.
		if q == s.db {
			// Outside a transaction (which holds wmu already).
			s.wmu.Lock()
			defer s.wmu.Unlock()
		}
		now := nowText()
		if _, err := q.ExecContext(ctx, `INSERT INTO users(id, created_at) VALUES (?, ?) ON CONFLICT(id) DO NOTHING`, userID, now); err != nil {
			return c, fmt.Errorf("sqlite: conversation %q: %w", id, err)
		}
		if _, err := q.ExecContext(ctx, `INSERT INTO conversations(id, user_id, created_at, updated_at) VALUES (?, ?, ?, ?) ON CONFLICT(user_id, id) DO NOTHING`, id, userID, now, now); err != nil {
			return c, fmt.Errorf("sqlite: conversation %q: %w", id, err)
		}
		err = read()
	}
	if err != nil {
		return c, fmt.Errorf("sqlite: conversation %q: %w", id, err)
	}
	c.CreatedAt, c.UpdatedAt = parseTime(created), parseTime(updated)
	return c, nil
}

// Conversation implements knowledge.MemoryStore.
func (s *Store) Conversation(ctx context.Context, userID, id string) (knowledge.Conversation, error) {
	return s.conv(ctx, s.db, userID, id)
}

// AppendMessages implements knowledge.MemoryStore.
func (s *Store) AppendMessages(ctx context.Context, userID, convID string, msgs []knowledge.StoredMessage) ([]knowledge.StoredMessage, error) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("sqlite: append messages: %w", err)
	}
	defer tx.Rollback()
	if _, err := s.conv(ctx, tx, userID, convID); err != nil {
		return nil, err
	}
	var seq int
	if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(seq), 0) FROM messages WHERE user_id = ? AND conversation_id = ?`, userID, convID).Scan(&seq); err != nil {
		return nil, fmt.Errorf("sqlite: append messages: %w", err)
	}
	out := make([]knowledge.StoredMessage, len(msgs))
	now := nowText()
	for i, m := range msgs {
		seq++
		m.ConversationID, m.Seq = convID, seq
		if m.CreatedAt.IsZero() {
			m.CreatedAt = parseTime(now)
		}
		var events any // NULL when none
		if len(m.Events) > 0 {
			if !json.Valid(m.Events) {
				return nil, fmt.Errorf("sqlite: append messages: message %d: events are not JSON", i)
			}
			events = string(m.Events)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO messages(user_id, conversation_id, seq, role, content, created_at, events) VALUES (?, ?, ?, ?, ?, ?, ?)`, userID, convID, seq, m.Role, m.Content, m.CreatedAt.UTC().Format(time.RFC3339Nano), events); err != nil {
			return nil, fmt.Errorf("sqlite: append messages: %w", err)
		}
		out[i] = m
	}
	if _, err := tx.ExecContext(ctx, `UPDATE conversations SET updated_at = ? WHERE user_id = ? AND id = ?`, now, userID, convID); err != nil {
		return nil, fmt.Errorf("sqlite: append messages: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("sqlite: append messages: %w", err)
	}
	return out, nil
}

// Messages implements knowledge.MemoryStore.
func (s *Store) Messages(ctx context.Context, userID, convID string, n int) ([]knowledge.StoredMessage, error) {
	if _, err := s.conv(ctx, s.db, userID, convID); err != nil {
		return nil, err
	}
	limit := n
	if limit <= 0 {
		limit = -1
	}
	rows, err := s.db.QueryContext(ctx, `SELECT seq, role, content, created_at, events FROM (SELECT * FROM messages WHERE user_id = ? AND conversation_id = ? ORDER BY seq DESC LIMIT ?) ORDER BY seq`, userID, convID, limit)
	if err != nil {
		return nil, fmt.Errorf("sqlite: messages: %w", err)
	}
	defer rows.Close()
	var out []knowledge.StoredMessage
	for rows.Next() {
		m := knowledge.StoredMessage{ConversationID: convID}
		var created string
		var events sql.NullString
		if err := rows.Scan(&m.Seq, &m.Role, &m.Content, &created, &events); err != nil {
			return nil, fmt.Errorf("sqlite: messages: %w", err)
		}
		m.CreatedAt = parseTime(created)
		if events.Valid && events.String != "" {
			m.Events = json.RawMessage(events.String)
		}
		out = append(out, m)
	}
	return out, rows.Err()
}

// Summary implements knowledge.MemoryStore.
func (s *Store) Summary(ctx context.Context, userID, convID string) (knowledge.Summary, error) {
	if _, err := s.conv(ctx, s.db, userID, convID); err != nil {
		return knowledge.Summary{}, err
	}
	sum := knowledge.Summary{ConversationID: convID}
	var updated string
	err := s.db.QueryRowContext(ctx, `SELECT up_to, text, updated_at FROM summaries WHERE user_id = ? AND conversation_id = ?`, userID, convID).Scan(&sum.UpTo, &sum.Text, &updated)
	if errors.Is(err, sql.ErrNoRows) {
		return sum, nil
	}
	if err != nil {
		return sum, fmt.Errorf("sqlite: summary: %w", err)
	}
	sum.UpdatedAt = parseTime(updated)
	return sum, nil
}

// SaveSummary implements knowledge.MemoryStore.
func (s *Store) SaveSummary(ctx context.Context, userID string, sum knowledge.Summary) error {
	if _, err := s.conv(ctx, s.db, userID, sum.ConversationID); err != nil {
		return err
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	_, err := s.db.ExecContext(ctx, `INSERT INTO summaries(user_id, conversation_id, up_to, text, updated_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT(user_id, conversation_id) DO UPDATE SET up_to = excluded.up_to, text = excluded.text, updated_at = excluded.updated_at`,
		userID, sum.ConversationID, sum.UpTo, sum.Text, sum.UpdatedAt.UTC().Format(time.RFC3339Nano))
	if err != nil {
		return fmt.Errorf("sqlite: save summary: %w", err)
	}
	return nil
}

// Conversations lists the user's conversations, most recently updated
// first; limit <= 0 means all.
func (s *Store) Conversations(ctx context.Context, userID string, limit int) ([]knowledge.Conversation, error) {
	if limit <= 0 {
		limit = -1 // SQLite: no limit
	}
	rows, err := s.db.QueryContext(ctx, `SELECT id, user_id, skill, created_at, updated_at FROM conversations WHERE user_id = ? ORDER BY updated_at DESC, id LIMIT ?`, userID, limit)
	if err != nil {
		return nil, fmt.Errorf("sqlite: conversations of %s: %w", userID, err)
	}
	defer rows.Close()
	var out []knowledge.Conversation
	for rows.Next() {
		var c knowledge.Conversation
		var created, updated string
		if err := rows.Scan(&c.ID, &c.UserID, &c.Skill, &created, &updated); err != nil {
			return nil, fmt.Errorf("sqlite: conversations of %s: %w", userID, err)
		}
		c.CreatedAt, c.UpdatedAt = parseTime(created), parseTime(updated)
		out = append(out, c)
	}
	return out, rows.Err()
}
