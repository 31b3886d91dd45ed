package runtime

import (
	"container/list"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"sync"

	"github.com/vibelife/vibe/skills"
)

// DefaultToolCacheSize is how many compute-tool results the agent keeps
// when Config.ToolCacheSize is 0.
const DefaultToolCacheSize = 256

// toolCache keeps the results of deterministic tools (compute tools whose
// plugin answers the same arguments the same way), least recently used
// first out. A key is the skill, the tool, its version, its declaration and
// its canonical arguments: editing the tool or bumping its version misses.
// Random, flow and collect tools never reach it (their results are draws,
// state or a form); neither does a compute tool declaring cache: false.
type toolCache struct {
	max int
	mu  sync.Mutex
	ll  *list.List // of *cacheEntry, most recent first
	m   map[string]*list.Element
	// hits and misses count lookups (for tests and logs).
	hits, misses int
}

type cacheEntry struct {
	key string
	val json.RawMessage
}

func newToolCache(n int) *toolCache {
	if n <= 0 {
		return nil
	}
	return &toolCache{max: n, ll: list.New(), m: map[string]*list.Element{}}
}

// cacheable reports whether a tool's results may be cached.
func cacheable(t skills.Tool) bool {
	return t.Type == skills.TypeCompute && (t.Cache == nil || *t.Cache)
}

// cacheKey is the key of a call: args are the validated arguments
// (defaults filled); encoding/json writes map keys sorted, so equal
// arguments give equal keys whatever order the model wrote them in.
func cacheKey(skill string, t skills.Tool, args map[string]any) (string, bool) {
	decl, err := json.Marshal(t)
	if err != nil {
		return "", false
	}
	canon, err := json.Marshal(args)
	if err != nil {
		return "", false
	}
	h := sha256.New()
	for _, part := range [][]byte{[]byte(skill), []byte(t.Name), []byte(t.Version), decl, canon} {
		h.Write(part)
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil)), true
}

func (c *toolCache) get(key string) (json.RawMessage, bool) {
	if c == nil {
		return nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.m[key]; ok {
		c.ll.MoveToFront(e)
		c.hits++
		return e.Value.(*cacheEntry).val, true
	}
	c.misses++
	return nil, false
}

func (c *toolCache) put(key string, val json.RawMessage) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.m[key]; ok {
		e.Value.(*cacheEntry).val = val
		c.ll.MoveToFront(e)
		return
	}
	c.m[key] = c.ll.PushFront(&cacheEntry{key: key, val: val})
	for c.ll.Len() > c.max {
		last := c.ll.Back()
		c.ll.Remove(last)
		delete(c.m, last.Value.(*cacheEntry).key)
	}
}

func (c *toolCache) len() int {
	if c == nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ll.Len()
}
