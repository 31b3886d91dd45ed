package pgvector

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/vibelife/vibe/knowledge"
)

// historySQL is migration 8: each user's history of tool and retrieval
// results across conversations (the design's divination_history), and the
// user's cross-conversation summary (its conversation_summary).
const historySQL = `
CREATE TABLE mem_history (
	id BIGSERIAL PRIMARY KEY,
	user_id TEXT NOT NULL REFERENCES mem_user(id) ON DELETE CASCADE,
	conversation_id TEXT NOT NULL,
	skill TEXT NOT NULL DEFAULT '',
	kind TEXT NOT NULL,
	tool TEXT NOT NULL,
	question TEXT NOT NULL DEFAULT '',
	args JSONB NOT NULL DEFAULT 'null',
	result JSONB NOT NULL,
	created_at TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX mem_history_user ON mem_history(user_id, id);
CREATE TABLE mem_user_summary (
	user_id TEXT PRIMARY KEY REFERENCES mem_user(id) ON DELETE CASCADE,
	text TEXT NOT NULL,
	up_to BIGINT NOT NULL,
	author TEXT NOT NULL,
	updated_at TIMESTAMPTZ NOT NULL DEFAULT now()
);
`

var _ knowledge.HistoryStore = (*Store)(nil)

func jsonOr(b json.RawMessage) string {
	if len(b) == 0 || !json.Valid(b) {
		return "null"
	}
	return string(b)
}

// AppendHistory implements knowledge.HistoryStore.
func (s *Store) AppendHistory(ctx context.Context, userID string, e knowledge.HistoryEntry, keep int) (knowledge.HistoryEntry, error) {
	if e.CreatedAt.IsZero() {
		e.CreatedAt = time.Now()
	}
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO mem_user(id) VALUES ($1) ON CONFLICT (id) DO NOTHING`, userID); err != nil {
			return err
		}
		if err := tx.QueryRow(ctx, `INSERT INTO mem_history(user_id, conversation_id, skill, kind, tool, question, args, result, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, $8::jsonb, $9) RETURNING id`,
			userID, e.ConversationID, e.Skill, e.Kind, e.Tool, e.Question, jsonOr(e.Args), jsonOr(e.Result), e.CreatedAt).Scan(&e.ID); err != nil {
			return err
		}
		if keep > 0 {
			_, err := tx.Exec(ctx, `DELETE FROM mem_history WHERE user_id = $1 AND id <= (SELECT id FROM mem_history WHERE user_id = $1 ORDER BY id DESC LIMIT 1 OFFSET $2)`, userID, keep)
			return err
		}
		return nil
	})
	if err != nil {
		return e, fmt.Errorf("pgvector: append history of %s: %w", userID, err)
	}
	return e, nil
}

// History implements knowledge.HistoryStore.
func (s *Store) History(ctx context.Context, userID string, limit, offset int) ([]knowledge.HistoryEntry, error) {
	var lim any
	if limit > 0 {
		lim = limit
	}
	rows, err := s.pool.Query(ctx, `SELECT id, conversation_id, skill, kind, tool, question, args::text, result::text, created_at FROM mem_history WHERE user_id = $1 ORDER BY id DESC LIMIT $2 OFFSET $3`, userID, lim, max(offset, 0))
	if err != nil {
		return nil, fmt.Errorf("pgvector: history of %s: %w", userID, err)
	}
	defer rows.Close()
	var out []knowledge.HistoryEntry
	for rows.Next() {
		var e knowledge.HistoryEntry
		var args, result string
		if err := rows.Scan(&e.ID, &e.ConversationID, &e.Skill, &e.Kind, &e.Tool, &e.Question, &args, &result, &e.CreatedAt); err != nil {
			return nil, fmt.Errorf("pgvector: history of %s: %w", userID, err)
		}
		e.Args, e.Result = json.RawMessage(args), json.RawMessage(result)
		out = append(out, e)
	}
	return out, rows.Err()
}

// UserSummary implements knowledge.HistoryStore.
func (s *Store) UserSummary(ctx context.Context, userID string) (knowledge.UserSummary, error) {
	var sum knowledge.UserSummary
	err := s.pool.QueryRow(ctx, `SELECT text, up_to, author, updated_at FROM mem_user_summary WHERE user_id = $1`, userID).Scan(&sum.Text, &sum.UpTo, &sum.By, &sum.UpdatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return sum, nil
	}
	if err != nil {
		return sum, fmt.Errorf("pgvector: summary of %s: %w", userID, err)
	}
	return sum, nil
}

// SaveUserSummary implements knowledge.HistoryStore.
func (s *Store) SaveUserSummary(ctx context.Context, userID string, sum knowledge.UserSummary) error {
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO mem_user(id) VALUES ($1) ON CONFLICT (id) DO NOTHING`, userID); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO mem_user_summary(user_id, text, up_to, author, updated_at) VALUES ($1, $2, $3, $4, $5) ON CONFLICT (user_id) DO UPDATE SET text = excluded.text, up_to = excluded.up_to, author = excluded.author, updated_at = excluded.updated_at`,
			userID, sum.Text, sum.UpTo, sum.By, sum.UpdatedAt)
		return err
	})
	if err != nil {
		return fmt.Errorf("pgvector: save summary of %s: %w", userID, err)
	}
	return nil
}
