package runtime

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// SharedTokenQuota is a store that keeps each user's model tokens of the
// UTC day for every replica on it (PostgreSQL, and the processes on one
// SQLite file): with it, serve.tokens_per_day is a limit per user across
// all replicas and restarts, not per process.
type SharedTokenQuota interface {
	TokensToday(ctx context.Context, user string, now time.Time) (int64, error)
	AddTokens(ctx context.Context, user string, n int64, now time.Time) error
}

// tokenCounter counts each user's tokens of the current UTC day in this
// process (stores that are not a SharedTokenQuota, and a shared store that
// does not answer).
type tokenCounter struct {
	mu   sync.Mutex
	day  time.Time
	used map[string]int64
}

func utcDay(t time.Time) time.Time {
	y, m, d := t.UTC().Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}

// roll starts a new count when now is on another day than the count's.
func (c *tokenCounter) roll(now time.Time) {
	if day := utcDay(now); !day.Equal(c.day) || c.used == nil {
		c.day, c.used = day, map[string]int64{}
	}
}

func (c *tokenCounter) today(user string, now time.Time) int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.roll(now)
	return c.used[user]
}

func (c *tokenCounter) add(user string, n int64, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.roll(now)
	c.used[user] += n
}

// allowTokens applies serve.tokens_per_day before a turn: a user whose
// tokens of today are at or over the limit gets 429 with Retry-After (the
// seconds until the next UTC midnight) and false. A retrieval-only agent
// calls no model, so it is never limited.
func (s *Server) allowTokens(w http.ResponseWriter, r *http.Request, user string) bool {
	limit := s.opts.TokensPerDay
	if limit <= 0 || s.agent.Offline() {
		return true
	}
	now := s.opts.Now()
	var used int64
	shared, isShared := s.agent.cfg.Memory.(SharedTokenQuota)
	if isShared {
		var err error
		if used, err = shared.TokensToday(r.Context(), user, now); err != nil {
			slog.Warn("shared token quota unavailable; using this replica's count", "err", err)
			isShared = false
		}
	}
	if !isShared {
		used = s.tokens.today(user, now)
	}
	if used < limit {
		return true
	}
	wait := utcDay(now).AddDate(0, 0, 1).Sub(now)
	w.Header().Set("Retry-After", strconv.Itoa(max(1, int((wait+time.Second-1)/time.Second))))
	writeErr(w, http.StatusTooManyRequests, "token_limit_exceeded", fmt.Sprintf("daily limit of %d model tokens used up (%d used today, UTC; serve.tokens_per_day): try again after midnight UTC", limit, used))
	return false
}

// turn runs an agent turn for the server and adds the tokens of its model
// calls (the done event's usage) to the user's count of today.
func (s *Server) turn(ctx context.Context, req TurnRequest, emit func(Event) error) (string, error) {
	var used int64
	answer, err := s.agent.Turn(ctx, req, func(ev Event) error {
		if ev.Type == EventDone && ev.Usage != nil {
			used = int64(ev.Usage.TotalTokens)
		}
		return emit(ev)
	})
	if s.opts.TokensPerDay > 0 && used > 0 {
		s.addTokens(ctx, req.UserID, used)
	}
	return answer, err
}

// addTokens counts n tokens for user, in the shared store when there is
// one (falling back to this process's count, logged, when it fails). It
// runs even when the client has gone: the tokens were spent.
func (s *Server) addTokens(ctx context.Context, user string, n int64) {
	now := s.opts.Now()
	if shared, ok := s.agent.cfg.Memory.(SharedTokenQuota); ok {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		err := shared.AddTokens(ctx, user, n, now)
		if err == nil {
			return
		}
		slog.Warn("shared token quota unavailable; counting in this replica", "err", err)
	}
	s.tokens.add(user, n, now)
}
