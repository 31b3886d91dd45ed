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

// historySQL is migration 5: each user's history of tool and retrieval
// results across conversations, and the user's cross-conversation summary.
const historySQL = `
CREATE TABLE user_history (
	id INTEGER PRIMARY KEY AUTOINCREMENT,
	user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
	conversation_id TEXT NOT NULL,
	skill TEXT NOT NULL DEFAULT '',
	kind TEXT NOT NULL,
	tool TEXT NOT NULL,
	question TEXT NOT NULL DEFAULT '',
	args TEXT NOT NULL DEFAULT 'null',
	result TEXT NOT NULL,
	created_at TEXT NOT NULL
);
CREATE INDEX user_history_user ON user_history(user_id, id);
CREATE TABLE user_summaries (
	user_id TEXT PRIMARY KEY REFERENCES users(id) ON DELETE CASCADE,
	text TEXT NOT NULL,
	up_to INTEGER NOT NULL,
	author TEXT NOT NULL,
	updated_at TEXT NOT NULL
);
`

var _ knowledge.HistoryStore = (*Store)(nil)

func rawOr(b json.RawMessage, def string) string {
	if len(b) == 0 {
		return def
	}
	return string(b)
}

// AppendHistory implements knowledge.HistoryStore.
func (s *Store) AppendHistory(ctx context.Context, userID string, e knowledge.HistoryEntry, keep int) (knowledge.HistoryEntry, error) {
	if e.CreatedAt.IsZero() {
		e.CreatedAt = time.Now()
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return e, fmt.Errorf("sqlite: append history: %w", err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `INSERT INTO users(id, created_at) VALUES (?, ?) ON CONFLICT(id) DO NOTHING`, userID, nowText()); err != nil {
		return e, fmt.Errorf("sqlite: append history: %w", err)
	}
	res, err := tx.ExecContext(ctx, `INSERT INTO user_history(user_id, conversation_id, skill, kind, tool, question, args, result, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		userID, e.ConversationID, e.Skill, e.Kind, e.Tool, e.Question, rawOr(e.Args, "null"), rawOr(e.Result, "null"), e.CreatedAt.UTC().Format(time.RFC3339Nano))
	if err != nil {
		return e, fmt.Errorf("sqlite: append history: %w", err)
	}
	if e.ID, err = res.LastInsertId(); err != nil {
		return e, fmt.Errorf("sqlite: append history: %w", err)
	}
	if keep > 0 {
		if _, err := tx.ExecContext(ctx, `DELETE FROM user_history WHERE user_id = ? AND id <= (SELECT id FROM user_history WHERE user_id = ? ORDER BY id DESC LIMIT 1 OFFSET ?)`, userID, userID, keep); err != nil {
			return e, fmt.Errorf("sqlite: trim history: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return e, fmt.Errorf("sqlite: append history: %w", err)
	}
	return e, nil
}

// History implements knowledge.HistoryStore.
func (s *Store) History(ctx context.Context, userID string, limit, offset int) ([]knowledge.HistoryEntry, error) {
	if limit <= 0 {
		limit = -1
	}
	rows, err := s.db.QueryContext(ctx, `SELECT id, conversation_id, skill, kind, tool, question, args, result, created_at FROM user_history WHERE user_id = ? ORDER BY id DESC LIMIT ? OFFSET ?`, userID, limit, max(offset, 0))
	if err != nil {
		return nil, fmt.Errorf("sqlite: history of %s: %w", userID, err)
	}
	defer rows.Close()
	var out []knowledge.HistoryEntry
	for rows.Next() {
		var e knowledge.HistoryEntry
		var args, result, created string
		if err := rows.Scan(&e.ID, &e.ConversationID, &e.Skill, &e.Kind, &e.Tool, &e.Question, &args, &result, &created); err != nil {
			return nil, fmt.Errorf("sqlite: history of %s: %w", userID, err)
		}
		e.Args, e.Result, e.CreatedAt = json.RawMessage(args), json.RawMessage(result), parseTime(created)
		out = append(out, e)
	}
	return out, rows.Err()
}

// UserSummary implements knowledge.HistoryStore.
func (s *Store) UserSummary(ctx context.Context, userID string) (knowledge.UserSummary, error) {
	var sum knowledge.UserSummary
	var updated string
	err := s.db.QueryRowContext(ctx, `SELECT text, up_to, author, updated_at FROM user_summaries WHERE user_id = ?`, userID).Scan(&sum.Text, &sum.UpTo, &sum.By, &updated)
	if errors.Is(err, sql.ErrNoRows) {
		return sum, nil
	}
	if err != nil {
		return sum, fmt.Errorf("sqlite: summary of %s: %w", userID, err)
	}
	sum.UpdatedAt = parseTime(updated)
	return sum, nil
}

// SaveUserSummary implements knowledge.HistoryStore.
func (s *Store) SaveUserSummary(ctx context.Context, userID string, sum knowledge.UserSummary) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if _, err := s.db.ExecContext(ctx, `INSERT INTO users(id, created_at) VALUES (?, ?) ON CONFLICT(id) DO NOTHING`, userID, nowText()); err != nil {
		return fmt.Errorf("sqlite: save summary of %s: %w", userID, err)
	}
	_, err := s.db.ExecContext(ctx, `INSERT INTO user_summaries(user_id, text, up_to, author, updated_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT(user_id) DO UPDATE SET text = excluded.text, up_to = excluded.up_to, author = excluded.author, updated_at = excluded.updated_at`,
		userID, sum.Text, sum.UpTo, sum.By, sum.UpdatedAt.UTC().Format(time.RFC3339Nano))
	if err != nil {
		return fmt.Errorf("sqlite: save summary of %s: %w", userID, err)
	}
	return nil
}
