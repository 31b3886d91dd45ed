package runtime

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	goruntime "runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vibelife/vibe/knowledge/sqlite"
)

// BenchmarkConcurrentStreams keeps 200 streaming conversations going at once
// over HTTP (/api/chat), with the memory in the embedded store and a model
// that calls get_rules then answers; one op is one turn, each of the 200
// clients continuing its own conversation. The figure in docs/serving.md comes from
//
//	go test -run '^$' -bench ConcurrentStreams -benchtime 30s ./runtime
//
// It reports the failed turns (errors, must be 0: an HTTP error, an error
// event or a stream without its done event), the p50/p99 of a turn and the
// turns a second.
func BenchmarkConcurrentStreams(b *testing.B) {
	const streams = 200
	st, err := sqlite.Open(context.Background(), filepath.Join(b.TempDir(), "vibe.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	a, _ := newTestAgent(b, toolThenAnswer{}, func(c *Config) { c.Memory = st })
	s, err := NewServer(a, ServerOptions{Insecure: true})
	if err != nil {
		b.Fatal(err)
	}
	ts := httptest.NewServer(s)
	defer ts.Close()
	tr := &http.Transport{MaxIdleConnsPerHost: streams, MaxConnsPerHost: streams}
	defer tr.CloseIdleConnections()
	cl := &http.Client{Transport: tr}

	var (
		next     atomic.Int64
		failed   atomic.Int64
		firstErr atomic.Value
		mu       sync.Mutex
		all      []time.Duration
	)
	fail := func(err error) {
		failed.Add(1)
		firstErr.CompareAndSwap(nil, err)
	}
	b.SetParallelism((streams + goruntime.GOMAXPROCS(0) - 1) / goruntime.GOMAXPROCS(0))
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		conv := fmt.Sprint("s", next.Add(1))
		var ds []time.Duration
		for i := 0; pb.Next(); i++ {
			t0 := time.Now()
			body := fmt.Sprintf(`{"message":"hello %d","conversation_id":%q,"skill":"bazi"}`, i, conv)
			resp, err := cl.Post(ts.URL+"/api/chat", "application/json", strings.NewReader(body))
			if err != nil {
				fail(err)
				continue
			}
			evs := readSSE(b, resp.Body)
			resp.Body.Close()
			ds = append(ds, time.Since(t0))
			switch {
			case resp.StatusCode != 200:
				fail(fmt.Errorf("%s turn %d: HTTP %d", conv, i, resp.StatusCode))
			case len(evs) == 0 || evs[len(evs)-1].Type != EventDone:
				fail(fmt.Errorf("%s turn %d: stream without done: %+v", conv, i, evs))
			default:
				for _, e := range evs {
					if e.Type == EventError || e.IsError {
						fail(fmt.Errorf("%s turn %d: %+v", conv, i, e))
						break
					}
				}
			}
		}
		mu.Lock()
		all = append(all, ds...)
		mu.Unlock()
	})
	elapsed := time.Since(start)
	slices.Sort(all)
	pct := func(q float64) float64 {
		if len(all) == 0 {
			return 0
		}
		return float64(all[int(q*float64(len(all)-1))]) / 1e6
	}
	b.ReportMetric(float64(failed.Load()), "errors")
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
	b.ReportMetric(float64(len(all))/elapsed.Seconds(), "turns/s")
	if n := failed.Load(); n > 0 {
		b.Errorf("%d of %d turns failed; first: %v", n, b.N, firstErr.Load())
	}
}
