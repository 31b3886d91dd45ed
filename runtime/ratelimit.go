package runtime

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"time"
)

// SharedRateLimiter is a store that keeps the per-user request buckets for
// every replica on it (PostgreSQL): with it, serve.requests_per_minute is a
// limit per user across all replicas, not per process.
type SharedRateLimiter interface {
	TakeRate(ctx context.Context, key string, perMin int, now time.Time) (ok bool, retryAfter time.Duration, err error)
}

// allowUser applies the per-user request limit: in the shared store when
// the memory store is a SharedRateLimiter, else in this process. A store
// that fails to answer falls back to this process's bucket (logged), so a
// database hiccup neither lets everything through nor refuses everyone.
// On refusal it writes the 429 with Retry-After and returns false.
func (s *Server) allowUser(w http.ResponseWriter, r *http.Request, user string) bool {
	retry := time.Minute
	ok := true
	shared, isShared := s.agent.cfg.Memory.(SharedRateLimiter)
	if isShared && s.opts.RequestsPerMin > 0 {
		var err error
		ok, retry, err = shared.TakeRate(r.Context(), "user:"+user, s.opts.RequestsPerMin, s.opts.Now())
		if err != nil {
			slog.Warn("shared rate limit unavailable; using this replica's", "err", err)
			isShared = false
		}
	}
	if !isShared {
		ok, retry = s.rate.allow(user), time.Minute
	}
	if ok {
		return true
	}
	w.Header().Set("Retry-After", strconv.Itoa(max(1, int(retry.Round(time.Second)/time.Second))))
	writeErr(w, http.StatusTooManyRequests, "rate_limit_exceeded", fmt.Sprintf("rate limit of %d requests per minute exceeded (serve.requests_per_minute)", s.opts.RequestsPerMin))
	return false
}
