package embedding

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakeServer is a scripted OpenAI-compatible /embeddings endpoint.
type fakeServer struct {
	dims      int
	requests  atomic.Int64
	inFlight  atomic.Int64
	maxFlight atomic.Int64
	mu        sync.Mutex
	batches   []int
	// script returns a status and headers for the n-th request (from 1);
	// status 0 means answer normally.
	script func(n int64) (int, map[string]string)
	hold   time.Duration
}

func (f *fakeServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n := f.requests.Add(1)
	cur := f.inFlight.Add(1)
	defer f.inFlight.Add(-1)
	for {
		m := f.maxFlight.Load()
		if cur <= m || f.maxFlight.CompareAndSwap(m, cur) {
			break
		}
	}
	if r.URL.Path != "/embeddings" {
		http.Error(w, "not found", 404)
		return
	}
	if f.script != nil {
		if status, h := f.script(n); status != 0 {
			for k, v := range h {
				w.Header().Set(k, v)
			}
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			fmt.Fprintf(w, `{"error":{"message":"scripted %d","type":"x","code":"x","param":""}}`, status)
			return
		}
	}
	var req struct {
		Input []string `json:"input"`
		Model string   `json:"model"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, err.Error(), 400)
		return
	}
	f.mu.Lock()
	f.batches = append(f.batches, len(req.Input))
	f.mu.Unlock()
	time.Sleep(f.hold) // lets concurrent requests overlap; not an assertion
	type item struct {
		Object    string    `json:"object"`
		Index     int       `json:"index"`
		Embedding []float64 `json:"embedding"`
	}
	resp := struct {
		Object string `json:"object"`
		Data   []item `json:"data"`
		Model  string `json:"model"`
	}{Object: "list", Model: req.Model}
	for i, s := range req.Input {
		v := make([]float64, f.dims)
		v[len(s)%f.dims] = 1
		resp.Data = append(resp.Data, item{"embedding", i, v})
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(resp)
}

func texts(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("text %d %s", i, string(rune('a'+i%26)))
	}
	return out
}

func newFake(t *testing.T, f *fakeServer, opts OpenAIOptions) (*OpenAI, *[]time.Duration) {
	t.Helper()
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	var mu sync.Mutex
	var slept []time.Duration
	opts.BaseURL = srv.URL
	opts.APIKey = "test"
	if opts.Model == "" {
		opts.Model = "fake-embed"
	}
	if opts.Dimensions == 0 {
		opts.Dimensions = 8
	}
	opts.Sleep = func(ctx context.Context, d time.Duration) error {
		mu.Lock()
		slept = append(slept, d)
		mu.Unlock()
		return nil
	}
	e, err := NewOpenAI(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e, &slept
}

func TestOpenAIBatchingAndConcurrency(t *testing.T) {
	f := &fakeServer{dims: 8, hold: 20 * time.Millisecond}
	e, _ := newFake(t, f, OpenAIOptions{BatchSize: 10, Concurrency: 2})
	in := texts(95)
	vecs, err := e.Embed(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if len(vecs) != 95 {
		t.Fatalf("%d vectors", len(vecs))
	}
	for i, v := range vecs {
		if len(v) != 8 || v[len(in[i])%8] != 1 {
			t.Fatalf("vector %d out of order: %v", i, v)
		}
	}
	if got := f.requests.Load(); got != 10 {
		t.Errorf("%d requests, want 10", got)
	}
	for _, b := range f.batches {
		if b > 10 {
			t.Errorf("batch of %d over 10", b)
		}
	}
	if m := f.maxFlight.Load(); m > 2 {
		t.Errorf("%d requests in flight, bound is 2", m)
	}
}

func TestOpenAIRetry(t *testing.T) {
	tests := []struct {
		name      string
		script    func(n int64) (int, map[string]string)
		wantErr   bool
		requests  int64
		wantSleep []time.Duration
	}{
		{"429 with Retry-After", func(n int64) (int, map[string]string) {
			if n == 1 {
				return 429, map[string]string{"Retry-After": "3"}
			}
			return 0, nil
		}, false, 2, []time.Duration{3 * time.Second}},
		{"500 then 503 then ok", func(n int64) (int, map[string]string) {
			if n <= 2 {
				return 500 + int(n-1)*3, nil
			}
			return 0, nil
		}, false, 3, []time.Duration{100 * time.Millisecond, 200 * time.Millisecond}},
		{"400 not retried", func(n int64) (int, map[string]string) { return 400, nil }, true, 1, nil},
		{"always 500 gives up", func(n int64) (int, map[string]string) { return 500, nil }, true, 3, []time.Duration{100 * time.Millisecond, 200 * time.Millisecond}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeServer{dims: 8, script: tt.script}
			e, slept := newFake(t, f, OpenAIOptions{MaxRetries: 2, Backoff: 100 * time.Millisecond, Concurrency: 1})
			_, err := e.Embed(context.Background(), texts(3))
			if (err != nil) != tt.wantErr {
				t.Fatalf("err %v, wantErr %v", err, tt.wantErr)
			}
			if got := f.requests.Load(); got != tt.requests {
				t.Errorf("%d requests, want %d", got, tt.requests)
			}
			if fmt.Sprint(*slept) != fmt.Sprint(tt.wantSleep) {
				t.Errorf("slept %v, want %v", *slept, tt.wantSleep)
			}
		})
	}
}

func TestOpenAICache(t *testing.T) {
	dir := t.TempDir()
	f := &fakeServer{dims: 8}
	e, _ := newFake(t, f, OpenAIOptions{CacheDir: dir, BatchSize: 4})
	in := texts(10)
	first, err := e.Embed(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	e.Close()
	before := f.requests.Load()
	// A new embedder over the same cache directory: zero requests.
	e2, _ := newFake(t, f, OpenAIOptions{CacheDir: dir, BatchSize: 4})
	srvReq := f.requests.Load()
	second, err := e2.Embed(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if f.requests.Load() != srvReq {
		t.Errorf("second run sent %d requests", f.requests.Load()-srvReq)
	}
	if before == 0 {
		t.Fatal("first run sent no requests")
	}
	for i := range first {
		if fmt.Sprint(first[i]) != fmt.Sprint(second[i]) {
			t.Fatalf("cached vector %d differs", i)
		}
	}
	// One new text: exactly one request.
	if _, err := e2.Embed(context.Background(), append(in, "brand new")); err != nil {
		t.Fatal(err)
	}
	if got := f.requests.Load() - srvReq; got != 1 {
		t.Errorf("%d requests for one new text", got)
	}
}

func TestOpenAIDimensionMismatch(t *testing.T) {
	f := &fakeServer{dims: 16}
	e, _ := newFake(t, f, OpenAIOptions{Dimensions: 8})
	_, err := e.Embed(context.Background(), texts(2))
	if !errors.Is(err, ErrDimensionMismatch) {
		t.Fatalf("err %v, want ErrDimensionMismatch", err)
	}
}

func TestOpenAICacheSurvivesTornWrite(t *testing.T) {
	dir := t.TempDir()
	f := &fakeServer{dims: 8}
	e, _ := newFake(t, f, OpenAIOptions{CacheDir: dir})
	if _, err := e.Embed(context.Background(), texts(3)); err != nil {
		t.Fatal(err)
	}
	e.Close()
	// Simulate a crash in the middle of appending a line.
	fh, err := os.OpenFile(filepath.Join(dir, "embeddings.jsonl"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fh.WriteString(`{"k":"fake-embed:8:abc","v":[0.1,0.`)
	fh.Close()
	e2, _ := newFake(t, f, OpenAIOptions{CacheDir: dir})
	n := f.requests.Load()
	if _, err := e2.Embed(context.Background(), append(texts(3), "new")); err != nil {
		t.Fatal(err)
	}
	if got := f.requests.Load() - n; got != 1 {
		t.Fatalf("%d requests after torn write, want 1", got)
	}
	e2.Close()
	e3, _ := newFake(t, f, OpenAIOptions{CacheDir: dir})
	n = f.requests.Load()
	if _, err := e3.Embed(context.Background(), append(texts(3), "new")); err != nil {
		t.Fatal(err)
	}
	if got := f.requests.Load() - n; got != 0 {
		t.Fatalf("%d requests after reopening, want 0", got)
	}
}
