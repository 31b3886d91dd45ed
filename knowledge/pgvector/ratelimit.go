package pgvector

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/jackc/pgx/v5"
)

// TakeRate spends one request of key's token bucket (perMin tokens, refilled
// continuously), kept in mem_rate so that every replica on this database
// draws from the same bucket: N replicas no longer allow N x perMin. It
// reports whether a token was there and, when not, how long until one is.
// The row is locked for the read-modify-write, so concurrent requests on
// several replicas never spend one token twice.
func (s *Store) TakeRate(ctx context.Context, key string, perMin int, now time.Time) (bool, time.Duration, error) {
	if perMin <= 0 {
		return true, 0, nil
	}
	s.sweepRates(ctx, now)
	ok, wait := false, time.Duration(0)
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO mem_rate(key, tokens, last) VALUES ($1, $2, $3) ON CONFLICT (key) DO NOTHING`, key, float64(perMin), now); err != nil {
			return err
		}
		var tokens float64
		var last time.Time
		if err := tx.QueryRow(ctx, `SELECT tokens, last FROM mem_rate WHERE key = $1 FOR UPDATE`, key).Scan(&tokens, &last); err != nil {
			return err
		}
		if now.After(last) {
			tokens = min(float64(perMin), tokens+now.Sub(last).Minutes()*float64(perMin))
			last = now
		}
		ok = tokens >= 1
		if ok {
			tokens--
		} else {
			wait = time.Duration(math.Ceil((1-tokens)/float64(perMin)*60)) * time.Second
		}
		_, err := tx.Exec(ctx, `UPDATE mem_rate SET tokens = $2, last = $3 WHERE key = $1`, key, tokens, last)
		return err
	})
	if err != nil {
		return false, 0, fmt.Errorf("pgvector: rate limit of %s: %w", key, err)
	}
	return ok, wait, nil
}

// sweepRates drops, at most once a minute per process, the buckets idle
// long enough to be full again (the same as no row).
func (s *Store) sweepRates(ctx context.Context, now time.Time) {
	s.mu.Lock()
	due := now.Sub(s.ratesSwept) >= time.Minute
	if due {
		s.ratesSwept = now
	}
	s.mu.Unlock()
	if due {
		_, _ = s.pool.Exec(ctx, `DELETE FROM mem_rate WHERE last < $1`, now.Add(-2*time.Minute))
	}
}
