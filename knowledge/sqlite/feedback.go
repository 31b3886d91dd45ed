package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/vibelife/vibe/knowledge"
)

// feedbackSQL is migration 9: users' verdicts on answers, kept with the
// answer's message (deleted with it).
const feedbackSQL = `
CREATE TABLE feedback (
	user_id TEXT NOT NULL,
	conversation_id TEXT NOT NULL,
	seq INTEGER NOT NULL,
	rating TEXT NOT NULL CHECK (rating IN ('up', 'down')),
	comment TEXT NOT NULL DEFAULT '',
	created_at TEXT NOT NULL,
	PRIMARY KEY (user_id, conversation_id, seq),
	FOREIGN KEY (user_id, conversation_id, seq) REFERENCES messages(user_id, conversation_id, seq) ON DELETE CASCADE
);
CREATE INDEX feedback_rating ON feedback(rating, created_at);
`

var _ knowledge.FeedbackStore = (*Store)(nil)

// feedbackTime is created_at's format: fixed width, so the text sorts as
// the time does.
const feedbackTime = "2006-01-02T15:04:05.000000000Z07:00"

// SaveFeedback implements knowledge.FeedbackStore.
func (s *Store) SaveFeedback(ctx context.Context, f knowledge.Feedback) error {
	if f.CreatedAt.IsZero() {
		f.CreatedAt = time.Now()
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	_, err := s.db.ExecContext(ctx, `INSERT INTO feedback(user_id, conversation_id, seq, rating, comment, created_at) VALUES (?, ?, ?, ?, ?, ?)
		ON CONFLICT(user_id, conversation_id, seq) DO UPDATE SET rating = excluded.rating, comment = excluded.comment, created_at = excluded.created_at`,
		f.UserID, f.ConversationID, f.Turn, f.Rating, f.Comment, f.CreatedAt.UTC().Format(feedbackTime))
	if err != nil {
		return fmt.Errorf("sqlite: save feedback: %w", err)
	}
	return nil
}

// ConversationFeedback implements knowledge.FeedbackStore.
func (s *Store) ConversationFeedback(ctx context.Context, userID, convID string) ([]knowledge.Feedback, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT user_id, conversation_id, seq, rating, comment, created_at FROM feedback WHERE user_id = ? AND conversation_id = ? ORDER BY seq`, userID, convID)
	if err != nil {
		return nil, fmt.Errorf("sqlite: feedback of %s: %w", convID, err)
	}
	return scanFeedback(rows)
}

// ListFeedback implements knowledge.FeedbackStore.
func (s *Store) ListFeedback(ctx context.Context, rating string, limit int) ([]knowledge.Feedback, error) {
	if limit <= 0 {
		limit = -1
	}
	rows, err := s.db.QueryContext(ctx, `SELECT user_id, conversation_id, seq, rating, comment, created_at FROM feedback WHERE ? = '' OR rating = ? ORDER BY created_at DESC, seq DESC LIMIT ?`, rating, rating, limit)
	if err != nil {
		return nil, fmt.Errorf("sqlite: list feedback: %w", err)
	}
	return scanFeedback(rows)
}

func scanFeedback(rows *sql.Rows) ([]knowledge.Feedback, error) {
	defer rows.Close()
	var out []knowledge.Feedback
	for rows.Next() {
		var f knowledge.Feedback
		var created string
		if err := rows.Scan(&f.UserID, &f.ConversationID, &f.Turn, &f.Rating, &f.Comment, &created); err != nil {
			return nil, fmt.Errorf("sqlite: feedback: %w", err)
		}
		f.CreatedAt = parseTime(created)
		out = append(out, f)
	}
	return out, rows.Err()
}
