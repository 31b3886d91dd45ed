package pgvector

import (
	"context"
	"fmt"
	"time"
)

// utcDay is the UTC date of t, the key of a day's token count.
func utcDay(t time.Time) time.Time {
	y, m, d := t.UTC().Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}

// TokensToday returns the model tokens user has spent on the UTC day of now,
// counted by every replica on this database.
func (s *Store) TokensToday(ctx context.Context, user string, now time.Time) (int64, error) {
	var n int64
	err := s.pool.QueryRow(ctx, `SELECT COALESCE(sum(tokens), 0) FROM mem_token_day WHERE user_id = $1 AND day = $2`, user, utcDay(now)).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("pgvector: tokens of %s today: %w", user, err)
	}
	return n, nil
}

// AddTokens adds n tokens to user's count for the UTC day of now in one
// statement (an upsert), so replicas adding at once lose none. Once a day
// per process it drops the counts of days before yesterday.
func (s *Store) AddTokens(ctx context.Context, user string, n int64, now time.Time) error {
	if n <= 0 {
		return nil
	}
	day := utcDay(now)
	s.mu.Lock()
	sweep := !s.tokenDaysSwept.Equal(day)
	if sweep {
		s.tokenDaysSwept = day
	}
	s.mu.Unlock()
	if sweep {
		_, _ = s.pool.Exec(ctx, `DELETE FROM mem_token_day WHERE day < $1`, day.AddDate(0, 0, -1))
	}
	_, err := s.pool.Exec(ctx, `INSERT INTO mem_token_day(user_id, day, tokens) VALUES ($1, $2, $3)
ON CONFLICT (user_id, day) DO UPDATE SET tokens = mem_token_day.tokens + EXCLUDED.tokens`, user, day, n)
	if err != nil {
		return fmt.Errorf("pgvector: add %d tokens for %s: %w", n, user, err)
	}
	return nil
}
