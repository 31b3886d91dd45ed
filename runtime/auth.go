package runtime

import (
	"bufio"
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

// Keys maps bearer API keys to user ids.
type Keys struct {
	hashes [][32]byte
	users  []string
}

// Add registers a key for a user.
func (k *Keys) Add(key, user string) {
	k.hashes = append(k.hashes, sha256.Sum256([]byte(key)))
	k.users = append(k.users, user)
}

// Len is the number of keys.
func (k *Keys) Len() int { return len(k.users) }

// Lookup returns the user of a key, comparing every key in constant time.
func (k *Keys) Lookup(key string) (string, bool) {
	h := sha256.Sum256([]byte(key))
	user, ok := "", false
	for i := range k.hashes {
		if subtle.ConstantTimeCompare(h[:], k.hashes[i][:]) == 1 {
			user, ok = k.users[i], true
		}
	}
	return user, ok
}

// ParseKeysFile reads "KEY USER_ID" lines (# comments and blank lines
// ignored). name is used in errors.
func ParseKeysFile(r io.Reader, name string, k *Keys) error {
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if len(f) != 2 {
			return fmt.Errorf("%s:%d: want `KEY USER_ID`, got %d fields", name, n, len(f))
		}
		k.Add(f[0], f[1])
	}
	return sc.Err()
}

// ParseKeysEnv reads VIBE_API_KEYS: "key:user,key:user".
func ParseKeysEnv(s string, k *Keys) error {
	for i, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		key, user, ok := strings.Cut(part, ":")
		if !ok || key == "" || user == "" {
			return fmt.Errorf("VIBE_API_KEYS entry %d: want key:user", i+1)
		}
		k.Add(key, user)
	}
	return nil
}

// bearerToken returns the token of an "Authorization: Bearer TOKEN" header:
// the scheme is case-insensitive (RFC 9110) and spaces around the token are
// trimmed.
func bearerToken(h string) (string, bool) {
	scheme, tok, ok := strings.Cut(strings.TrimSpace(h), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	tok = strings.TrimSpace(tok)
	return tok, tok != ""
}

// rateLimiter is a token bucket per key (a user, or a client address for
// failed logins): perMin tokens, refilled continuously. Buckets idle long
// enough to be full again are dropped, so the map does not grow with every
// key ever seen.
type rateLimiter struct {
	perMin int
	now    func() time.Time
	mu     sync.Mutex
	bucket map[string]*bucket
	swept  time.Time
}

type bucket struct {
	tokens float64
	last   time.Time
}

func newRateLimiter(perMin int, now func() time.Time) *rateLimiter {
	return &rateLimiter{perMin: perMin, now: now, bucket: map[string]*bucket{}}
}

// take refreshes key's bucket and, when it holds a token and spend is set,
// spends one; it reports whether a token was there.
func (r *rateLimiter) take(key string, spend bool) bool {
	if r.perMin <= 0 {
		return true
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.now()
	r.sweep(now)
	b, ok := r.bucket[key]
	if !ok {
		b = &bucket{tokens: float64(r.perMin), last: now}
		r.bucket[key] = b
	}
	b.tokens = min(float64(r.perMin), b.tokens+now.Sub(b.last).Minutes()*float64(r.perMin))
	b.last = now
	if b.tokens < 1 {
		return false
	}
	if spend {
		b.tokens--
	}
	return true
}

func (r *rateLimiter) allow(key string) bool { return r.take(key, true) }

// sweep drops, at most once a minute, the buckets untouched for a minute:
// they are full again, the same as a new bucket.
func (r *rateLimiter) sweep(now time.Time) {
	if now.Sub(r.swept) < time.Minute {
		return
	}
	r.swept = now
	for k, b := range r.bucket {
		if now.Sub(b.last) >= time.Minute {
			delete(r.bucket, k)
		}
	}
}

// size is the number of buckets kept.
func (r *rateLimiter) size() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.bucket)
}
