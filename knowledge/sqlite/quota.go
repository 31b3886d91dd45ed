package sqlite

import (
	"context"
	"fmt"
	"time"
)

// utcDay is the UTC date of t (YYYY-MM-DD), the key of a day's token count.
func utcDay(t time.Time) string { return t.UTC().Format(time.DateOnly) }

// TokensToday returns the model tokens user has spent on the UTC day of now.
func (s *Store) TokensToday(ctx context.Context, user string, now time.Time) (int64, error) {
	var n int64
	err := s.db.QueryRowContext(ctx, `SELECT COALESCE(sum(tokens), 0) FROM mem_token_day WHERE user_id = ? AND day = ?`, user, utcDay(now)).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("sqlite: tokens of %s today: %w", user, err)
	}
	return n, nil
}

// AddTokens adds n tokens to user's count for the UTC day of now in one
// upsert, dropping the counts of days before yesterday on the way.
func (s *Store) AddTokens(ctx context.Context, user string, n int64, now time.Time) error {
	if n <= 0 {
		return nil
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	_, err := s.db.ExecContext(ctx, `INSERT INTO mem_token_day(user_id, day, tokens) VALUES (?, ?, ?)
ON CONFLICT (user_id, day) DO UPDATE SET tokens = tokens + excluded.tokens`, user, utcDay(now), n)
	if err == nil {
		_, err = s.db.ExecContext(ctx, `DELETE FROM mem_token_day WHERE day < ?`, utcDay(now.AddDate(0, 0, -1)))
	}
	if err != nil {
		return fmt.Errorf("sqlite: add %d tokens for %s: %w", n, user, err)
	}
	return nil
}
