package runtime

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/vibelife/vibe/knowledge"
	"github.com/vibelife/vibe/llm"
)

// listingSearcher is fakeSearcher plus the Documents capability of a store.
type listingSearcher struct {
	fakeSearcher
	docs int
	err  error
}

func (l listingSearcher) Documents(ctx context.Context, theme string) ([]knowledge.Document, error) {
	return make([]knowledge.Document, l.docs), l.err
}

type brokenMemory struct{ *MemStore }

func (brokenMemory) Profile(ctx context.Context, userID string) (json.RawMessage, error) {
	return nil, errors.New("database is locked")
}

// TestReadyzNamesNothing is the regression test of issue 26's leak: with the
// database refusing connections, /readyz (no key) returned the driver's
// "failed to connect to user=postgres database=… 127.0.0.1:5432" and the
// model and skill names. It now says ready or not only; the detail is in
// the log and on the authenticated /api/status.
func TestReadyzNamesNothing(t *testing.T) {
	const connErr = "failed to connect to user=postgres database=vibe_prod host=127.0.0.1:5432: connection refused"
	for _, tt := range []struct {
		name   string
		err    error
		code   int
		status string
	}{{"down", errors.New(connErr), 503, "not_ready"}, {"up", nil, 200, "ready"}} {
		t.Run(tt.name, func(t *testing.T) {
			var logBuf syncBuffer
			a, _ := newTestAgent(t, &fakeModel{}, func(c *Config) {
				c.Searcher = listingSearcher{docs: 2, err: tt.err}
				c.ModelName = "gpt-secret-model"
			})
			keys := &Keys{}
			keys.Add("ka", "alice")
			s, err := NewServer(a, ServerOptions{Keys: keys, Logger: slog.New(slog.NewTextHandler(&logBuf, nil))})
			if err != nil {
				t.Fatal(err)
			}
			ts := httptest.NewServer(s)
			defer ts.Close()
			for range 2 {
				code, body := doAuth(t, "GET", ts.URL+"/readyz", "", "")
				if code != tt.code || body != `{"status":"`+tt.status+`"}`+"\n" {
					t.Fatalf("/readyz = %d %q, want %d and the status only", code, body, tt.code)
				}
				for _, leak := range []string{"postgres", "127.0.0.1", "vibe_prod", "gpt-secret-model", "bazi", "store", "mode"} {
					if strings.Contains(body, leak) {
						t.Errorf("/readyz names %q: %s", leak, body)
					}
				}
			}
			if code, _ := doAuth(t, "GET", ts.URL+"/api/status", "", ""); code != 401 {
				t.Errorf("/api/status without a key = %d, want 401", code)
			}
			code, body := doAuth(t, "GET", ts.URL+"/api/status", "Bearer ka", "")
			if code != tt.code || !strings.Contains(body, `"names":["bazi"]`) || !strings.Contains(body, "gpt-secret-model") {
				t.Errorf("/api/status = %d %s, want the detail", code, body)
			}
			log := logBuf.String()
			if tt.err != nil {
				if !strings.Contains(log, "vibe_prod") || strings.Count(log, "not ready") != 1 {
					t.Errorf("the log should hold the problem once (three probes, one change): %s", log)
				}
				if !strings.Contains(body, "vibe_prod") {
					t.Errorf("/api/status lacks the store's error: %s", body)
				}
			} else if strings.Contains(log, "not ready") {
				t.Errorf("log: %s", log)
			}
		})
	}
}

func TestReadyz(t *testing.T) {
	tests := []struct {
		name   string
		model  Model
		mutate func(*Config)
		code   int
		want   []string
	}{
		{"ready with a model", &fakeModel{}, func(c *Config) { c.Searcher = listingSearcher{docs: 3}; c.ModelName = "m1" },
			200, []string{`"status":"ready"`, `"mode":"model"`, `"documents":{"bazi":3}`, `"name":"m1"`, `"names":["bazi"]`}},
		{"offline", nil, func(c *Config) { c.Searcher = listingSearcher{docs: 3} },
			200, []string{`"mode":"retrieval-only"`, "retrieval-only mode"}},
		{"theme not ingested", &fakeModel{}, func(c *Config) { c.Searcher = listingSearcher{} },
			200, []string{`"status":"ready"`, "run `vibe ingest bazi`"}},
		{"store down", &fakeModel{}, func(c *Config) { c.Searcher = listingSearcher{err: errors.New("connection refused")} },
			503, []string{`"status":"not_ready"`, "store: the knowledge store does not answer: connection refused"}},
		{"no store", &fakeModel{}, func(c *Config) { c.Searcher = nil },
			503, []string{"store: no knowledge store"}},
		{"memory down", &fakeModel{}, func(c *Config) { c.Memory = brokenMemory{NewMemStore()} },
			503, []string{"memory: the memory store does not answer: database is locked"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, _ := newTestAgent(t, tt.model, tt.mutate)
			s, err := NewServer(a, ServerOptions{Insecure: true})
			if err != nil {
				t.Fatal(err)
			}
			rec := httptest.NewRecorder()
			s.ServeHTTP(rec, httptest.NewRequest("GET", "/api/status", nil))
			body := rec.Body.String()
			if rec.Code != tt.code {
				t.Fatalf("code %d, want %d: %s", rec.Code, tt.code, body)
			}
			for _, w := range tt.want {
				if !strings.Contains(body, w) {
					t.Errorf("body lacks %s: %s", w, body)
				}
			}
		})
	}
	t.Run("no skills", func(t *testing.T) {
		a := agentOver(t, t.TempDir(), &fakeModel{}, func(c *Config) { c.Searcher = fakeSearcher{} })
		s, _ := NewServer(a, ServerOptions{Insecure: true})
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, httptest.NewRequest("GET", "/api/status", nil))
		if rec.Code != 503 || !strings.Contains(rec.Body.String(), "besides core: run `vibe build <theme>`") {
			t.Fatalf("%d %s", rec.Code, rec.Body)
		}
	})
}

// gateModel streams one piece, then waits for release before answering.
type gateModel struct {
	started chan struct{}
	release chan struct{}
}

func (g *gateModel) Stream(ctx context.Context, req llm.Request, fn func(llm.Delta) error) (llm.Response, error) {
	if req.Stage == "serve.summary" {
		return llm.Response{Content: "s"}, nil
	}
	if err := fn(llm.Delta{Content: "first "}); err != nil {
		return llm.Response{}, err
	}
	close(g.started)
	select {
	case <-g.release:
	case <-ctx.Done():
		return llm.Response{}, ctx.Err()
	}
	_ = fn(llm.Delta{Content: "last"})
	return llm.Response{Content: "first last", FinishReason: "stop"}, nil
}

// TestGracefulShutdown: once asked to stop, the server refuses new
// connections but the open stream runs to its done event.
func TestGracefulShutdown(t *testing.T) {
	g := &gateModel{started: make(chan struct{}), release: make(chan struct{})}
	a, _ := newTestAgent(t, g, nil)
	s, err := NewServer(a, ServerOptions{Insecure: true})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- s.Serve(ctx, ln) }()
	url := "http://" + ln.Addr().String()

	resp, err := http.Post(url+"/api/chat", "application/json", strings.NewReader(`{"message":"hi"}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	<-g.started
	stop()
	// New connections are refused once the listener closed.
	refused := false
	for range 200 {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			refused = true
			break
		}
		c.Close()
		time.Sleep(5 * time.Millisecond)
	}
	if !refused {
		t.Fatal("still accepting connections after shutdown began")
	}
	select {
	case err := <-served:
		t.Fatalf("Serve returned with a stream open: %v", err)
	default:
	}
	close(g.release)
	evs := readSSE(t, resp.Body)
	if len(evs) == 0 || evs[len(evs)-1].Type != EventDone {
		t.Fatalf("stream cut: %+v", evs)
	}
	var text string
	for _, e := range evs {
		text += e.Content
	}
	if text != "first last" {
		t.Fatalf("text = %q", text)
	}
	if err := <-served; err != nil {
		t.Fatalf("Serve = %v", err)
	}
}

// TestShutdownGraceCutsStuckStreams: a stream still open after the grace
// period has its turn cancelled and Serve says so.
func TestShutdownGraceCutsStuckStreams(t *testing.T) {
	g := &gateModel{started: make(chan struct{}), release: make(chan struct{})}
	a, _ := newTestAgent(t, g, nil)
	s, _ := NewServer(a, ServerOptions{Insecure: true, ShutdownGrace: 50 * time.Millisecond})
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- s.Serve(ctx, ln) }()
	resp, err := http.Post("http://"+ln.Addr().String()+"/api/chat", "application/json", strings.NewReader(`{"message":"hi"}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	<-g.started
	stop()
	if err := <-served; err == nil || !strings.Contains(err.Error(), "were cut") {
		t.Fatalf("Serve = %v", err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
}

// TestBodyTimeout: a client that sends its headers and stalls in the body
// gets 408, and the deadline does not outlive the body: a stream slower than
// it, and a second request on the same connection, still work.
func TestBodyTimeout(t *testing.T) {
	m := &fakeModel{script: []step{{text: []string{"a"}}, {text: []string{"b"}}}}
	a, _ := newTestAgent(t, m, nil)
	s, _ := NewServer(a, ServerOptions{Insecure: true, BodyTimeout: 100 * time.Millisecond, WriteTimeout: 100 * time.Millisecond})
	ts := httptest.NewServer(s)
	defer ts.Close()

	c, err := net.Dial("tcp", ts.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second)) // fail rather than hang
	fmt.Fprintf(c, "POST /api/chat HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"mess")
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusRequestTimeout || !strings.Contains(string(b), "not received within 100ms") {
		t.Fatalf("stalled body = %d %s", resp.StatusCode, b)
	}

	// Two requests on one kept-alive connection, the second after both
	// deadlines would have passed.
	cl := &http.Client{Transport: &http.Transport{MaxConnsPerHost: 1}}
	for i := range 2 {
		if i == 1 {
			time.Sleep(250 * time.Millisecond)
		}
		resp, err := cl.Post(ts.URL+"/api/chat", "application/json", strings.NewReader(`{"message":"hi","conversation_id":"k"}`))
		if err != nil {
			t.Fatal(err)
		}
		evs := readSSE(t, resp.Body)
		resp.Body.Close()
		if len(evs) == 0 || evs[len(evs)-1].Type != EventDone {
			t.Fatalf("request %d on the kept-alive connection: %+v", i, evs)
		}
	}
}
