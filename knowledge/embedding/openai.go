package embedding

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
)

// OpenAIOptions configure [NewOpenAI].
type OpenAIOptions struct {
	BaseURL    string // OPENAI_BASE_URL; empty means the OpenAI API
	APIKey     string
	Model      string // e.g. text-embedding-3-small
	Dimensions int    // expected vector size; answers of another size are refused
	// BatchSize is the number of texts per request (default 64).
	BatchSize int
	// Concurrency bounds the requests in flight (default 4).
	Concurrency int
	// MaxRetries is how many times a request is retried after a 429, a 5xx or
	// a transport error (default 4). Other errors are not retried.
	MaxRetries int
	// Backoff is the first retry delay, doubled on each retry (default 500ms)
	// and capped at MaxBackoff (default 30s). A Retry-After header (seconds or
	// HTTP date) replaces the computed delay, also capped at MaxBackoff.
	Backoff, MaxBackoff time.Duration
	// CacheDir, when set, holds the persistent cache (embeddings.jsonl),
	// e.g. .vibe/cache/embeddings.
	CacheDir string
	// HTTPClient overrides the HTTP client (tests).
	HTTPClient *http.Client
	// Sleep waits between retries; nil means a context-aware timer.
	Sleep func(ctx context.Context, d time.Duration) error
}

// OpenAI embeds through any OpenAI-compatible /embeddings endpoint. The
// client's own retries are disabled; the policy is the one documented on
// [OpenAIOptions]. It is safe for concurrent use.
type OpenAI struct {
	opts   OpenAIOptions
	client openai.Client
	cache  *cache
}

// NewOpenAI builds the embedder and loads its cache.
func NewOpenAI(opts OpenAIOptions) (*OpenAI, error) {
	if opts.Model == "" {
		return nil, errors.New("embedding: openai: embedding.model is empty; set it in vibe.yaml (e.g. text-embedding-3-small)")
	}
	if opts.Dimensions <= 0 {
		return nil, errors.New("embedding: openai: embedding.dimensions must be positive")
	}
	if opts.BatchSize <= 0 {
		opts.BatchSize = 64
	}
	if opts.Concurrency <= 0 {
		opts.Concurrency = 4
	}
	if opts.MaxRetries < 0 {
		opts.MaxRetries = 0
	} else if opts.MaxRetries == 0 {
		opts.MaxRetries = 4
	}
	if opts.Backoff <= 0 {
		opts.Backoff = 500 * time.Millisecond
	}
	if opts.MaxBackoff <= 0 {
		opts.MaxBackoff = 30 * time.Second
	}
	if opts.Sleep == nil {
		opts.Sleep = sleep
	}
	ro := []option.RequestOption{option.WithMaxRetries(0), option.WithAPIKey(opts.APIKey)}
	if opts.BaseURL != "" {
		ro = append(ro, option.WithBaseURL(opts.BaseURL))
	}
	if opts.HTTPClient != nil {
		ro = append(ro, option.WithHTTPClient(opts.HTTPClient))
	}
	e := &OpenAI{opts: opts, client: openai.NewClient(ro...)}
	if opts.CacheDir != "" {
		c, err := openCache(filepath.Join(opts.CacheDir, "embeddings.jsonl"))
		if err != nil {
			return nil, err
		}
		e.cache = c
	} else {
		e.cache = &cache{m: map[string][]float32{}}
	}
	return e, nil
}

// Model returns the configured model.
func (e *OpenAI) Model() string { return e.opts.Model }

// Dimensions returns the configured vector size.
func (e *OpenAI) Dimensions() int { return e.opts.Dimensions }

// Close closes the cache file.
func (e *OpenAI) Close() error { return e.cache.close() }

// Embed embeds texts, answering from the cache where it can and sending the
// rest in batches of BatchSize with at most Concurrency requests in flight.
// The first failing batch cancels the others; vectors already received are
// kept in the cache.
func (e *OpenAI) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	var missing []int
	keys := make([]string, len(texts))
	for i, t := range texts {
		h := sha256.Sum256([]byte(t))
		keys[i] = e.opts.Model + ":" + strconv.Itoa(e.opts.Dimensions) + ":" + hex.EncodeToString(h[:])
		if v, ok := e.cache.get(keys[i]); ok {
			out[i] = v
		} else {
			missing = append(missing, i)
		}
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	sem := make(chan struct{}, e.opts.Concurrency)
	var wg sync.WaitGroup
	for b := 0; b < len(missing); b += e.opts.BatchSize {
		idx := missing[b:min(b+e.opts.BatchSize, len(missing))]
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			batch := make([]string, len(idx))
			for k, i := range idx {
				batch[k] = texts[i]
			}
			vecs, err := e.request(ctx, batch)
			if err != nil {
				cancel(err)
				return
			}
			for k, i := range idx {
				out[i] = vecs[k]
				if err := e.cache.put(keys[i], vecs[k]); err != nil {
					cancel(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if err := context.Cause(ctx); err != nil {
		return nil, err
	}
	return out, nil
}

func (e *OpenAI) request(ctx context.Context, batch []string) ([][]float32, error) {
	params := openai.EmbeddingNewParams{
		Model: e.opts.Model,
		Input: openai.EmbeddingNewParamsInputUnion{OfArrayOfStrings: batch},
	}
	var lastErr error
	for attempt := 0; ; attempt++ {
		res, err := e.client.Embeddings.New(ctx, params)
		if err == nil {
			return e.vectors(res, len(batch))
		}
		lastErr = err
		delay, retry := e.retryDelay(err, attempt)
		if !retry || attempt >= e.opts.MaxRetries || ctx.Err() != nil {
			break
		}
		if err := e.opts.Sleep(ctx, delay); err != nil {
			return nil, err
		}
	}
	return nil, fmt.Errorf("embedding: openai %s: %w", e.opts.Model, lastErr)
}

func (e *OpenAI) vectors(res *openai.CreateEmbeddingResponse, n int) ([][]float32, error) {
	if len(res.Data) != n {
		return nil, fmt.Errorf("embedding: openai %s: %d vectors for %d inputs", e.opts.Model, len(res.Data), n)
	}
	out := make([][]float32, n)
	for _, d := range res.Data {
		if d.Index < 0 || int(d.Index) >= n {
			return nil, fmt.Errorf("embedding: openai %s: vector index %d out of range", e.opts.Model, d.Index)
		}
		if len(d.Embedding) != e.opts.Dimensions {
			return nil, fmt.Errorf("%w: model %s returned %d dimensions, embedding.dimensions is %d; set embedding.dimensions to %d (and rebuild the store) or choose another model",
				ErrDimensionMismatch, e.opts.Model, len(d.Embedding), e.opts.Dimensions, len(d.Embedding))
		}
		v := make([]float32, len(d.Embedding))
		for i, x := range d.Embedding {
			v[i] = float32(x)
		}
		out[d.Index] = v
	}
	return out, nil
}

// retryDelay says whether err is worth retrying and after how long.
func (e *OpenAI) retryDelay(err error, attempt int) (time.Duration, bool) {
	d := e.opts.Backoff << attempt
	if d > e.opts.MaxBackoff || d <= 0 {
		d = e.opts.MaxBackoff
	}
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) {
		return d, !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded)
	}
	if apiErr.StatusCode != http.StatusTooManyRequests && apiErr.StatusCode < 500 {
		return 0, false
	}
	if apiErr.Response != nil {
		if ra := apiErr.Response.Header.Get("Retry-After"); ra != "" {
			if s, err := strconv.Atoi(ra); err == nil && s >= 0 {
				d = time.Duration(s) * time.Second
			} else if t, err := http.ParseTime(ra); err == nil {
				d = time.Until(t)
			}
			if d > e.opts.MaxBackoff {
				d = e.opts.MaxBackoff
			}
			if d < 0 {
				d = 0
			}
		}
	}
	return d, true
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// cache is an append-only JSON-lines file of {"k": key, "v": vector}. A
// crash mid-write leaves at most one torn last line, which is skipped on
// load. Safe for concurrent use.
type cache struct {
	mu sync.RWMutex
	m  map[string][]float32
	f  *os.File
}

type cacheLine struct {
	K string    `json:"k"`
	V []float32 `json:"v"`
}

func openCache(path string) (*cache, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("embedding cache %s: %w", path, err)
	}
	c := &cache{m: map[string][]float32{}}
	if f, err := os.Open(path); err == nil {
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		for sc.Scan() {
			var l cacheLine
			if json.Unmarshal(sc.Bytes(), &l) == nil && l.K != "" {
				c.m[l.K] = l.V
			}
		}
		f.Close()
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("embedding cache %s: %w", path, err)
	}
	// Start on a fresh line in case the previous run was torn mid-line.
	if _, err := f.Write([]byte("\n")); err != nil {
		f.Close()
		return nil, fmt.Errorf("embedding cache %s: %w", path, err)
	}
	c.f = f
	return c, nil
}

func (c *cache) get(k string) ([]float32, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	v, ok := c.m[k]
	return v, ok
}

func (c *cache) put(k string, v []float32) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.m[k] = v
	if c.f == nil {
		return nil
	}
	b, err := json.Marshal(cacheLine{K: k, V: v})
	if err != nil {
		return err
	}
	if _, err := c.f.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("embedding cache %s: %w", c.f.Name(), err)
	}
	return nil
}

func (c *cache) close() error {
	if c.f == nil {
		return nil
	}
	return c.f.Close()
}
