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

// rateLimiter is a per-key token bucket.
type rateLimiter struct {
	perMin int
	now    func() time.Time
	mu     sync.Mutex
	bucket map[string]*bucket
}

type bucket struct {
	tokens float64
	last   time.Time
}

func (r *rateLimiter) allow(key string) bool {
	if r.perMin <= 0 {
		return true
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.now()
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
	b.tokens--
	return true
}
