package pgvector

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/vibelife/vibe/knowledge"
)

// feedbackSQL is migration 11: users' verdicts on answers, kept with the
// answer's message (deleted with it).
const feedbackSQL = `
CREATE TABLE mem_feedback (
	user_id TEXT NOT NULL,
	conversation_id TEXT NOT NULL,
	seq INTEGER NOT NULL,
	rating TEXT NOT NULL CHECK (rating IN ('up', 'down')),
	comment TEXT NOT NULL DEFAULT '',
	created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
	PRIMARY KEY (user_id, conversation_id, seq),
	FOREIGN KEY (user_id, conversation_id, seq) REFERENCES mem_message(user_id, conversation_id, seq) ON DELETE CASCADE
);
CREATE INDEX mem_feedback_rating ON mem_feedback(rating, created_at);
`

var _ knowledge.FeedbackStore = (*Store)(nil)

// SaveFeedback implements knowledge.FeedbackStore.
func (s *Store) SaveFeedback(ctx context.Context, f knowledge.Feedback) error {
	if f.CreatedAt.IsZero() {
		f.CreatedAt = time.Now()
	}
	_, err := s.pool.Exec(ctx, `INSERT INTO mem_feedback(user_id, conversation_id, seq, rating, comment, created_at) VALUES ($1, $2, $3, $4, $5, $6)
		ON CONFLICT (user_id, conversation_id, seq) DO UPDATE SET rating = EXCLUDED.rating, comment = EXCLUDED.comment, created_at = EXCLUDED.created_at`,
		f.UserID, f.ConversationID, f.Turn, f.Rating, f.Comment, f.CreatedAt)
	if err != nil {
		return fmt.Errorf("pgvector: save feedback: %w", err)
	}
	return nil
}

// ConversationFeedback implements knowledge.FeedbackStore.
func (s *Store) ConversationFeedback(ctx context.Context, userID, convID string) ([]knowledge.Feedback, error) {
	rows, err := s.pool.Query(ctx, `SELECT user_id, conversation_id, seq, rating, comment, created_at FROM mem_feedback WHERE user_id = $1 AND conversation_id = $2 ORDER BY seq`, userID, convID)
	if err != nil {
		return nil, fmt.Errorf("pgvector: feedback of %s: %w", convID, err)
	}
	return scanFeedback(rows)
}

// ListFeedback implements knowledge.FeedbackStore.
func (s *Store) ListFeedback(ctx context.Context, rating string, limit int) ([]knowledge.Feedback, error) {
	var lim *int
	if limit > 0 {
		lim = &limit
	}
	rows, err := s.pool.Query(ctx, `SELECT user_id, conversation_id, seq, rating, comment, created_at FROM mem_feedback WHERE $1 = '' OR rating = $1 ORDER BY created_at DESC, seq DESC LIMIT $2`, rating, lim)
	if err != nil {
		return nil, fmt.Errorf("pgvector: list feedback: %w", err)
	}
	return scanFeedback(rows)
}

func scanFeedback(rows pgx.Rows) ([]knowledge.Feedback, error) {
	defer rows.Close()
	var out []knowledge.Feedback
	for rows.Next() {
		var f knowledge.Feedback
		if err := rows.Scan(&f.UserID, &f.ConversationID, &f.Turn, &f.Rating, &f.Comment, &f.CreatedAt); err != nil {
			return nil, fmt.Errorf("pgvector: feedback: %w", err)
		}
		out = append(out, f)
	}
	return out, rows.Err()
}
