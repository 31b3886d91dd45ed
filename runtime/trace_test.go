package runtime

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/vibelife/vibe/llm"
)

// otlpCollector is an OTLP/HTTP trace receiver: it decodes the protobuf
// ExportTraceServiceRequest of POST /v1/traces and keeps the spans.
type otlpCollector struct {
	mu    sync.Mutex
	spans []*tracepb.Span
	paths []string
}

func (c *otlpCollector) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var body io.Reader = r.Body
	if r.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(r.Body)
		if err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		body = zr
	}
	b, err := io.ReadAll(body)
	if err != nil || r.Header.Get("Content-Type") != "application/x-protobuf" {
		http.Error(w, "want a protobuf body", 400)
		return
	}
	var req coltracepb.ExportTraceServiceRequest
	if err := proto.Unmarshal(b, &req); err != nil {
		http.Error(w, err.Error(), 400)
		return
	}
	c.mu.Lock()
	c.paths = append(c.paths, r.URL.Path)
	for _, rs := range req.GetResourceSpans() {
		for _, ss := range rs.GetScopeSpans() {
			c.spans = append(c.spans, ss.GetSpans()...)
		}
	}
	c.mu.Unlock()
	out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(out)
}

// spanAttr returns a string attribute of a span.
func spanAttr(s *tracepb.Span, key string) string {
	for _, kv := range s.GetAttributes() {
		if kv.GetKey() == key {
			return kv.GetValue().GetStringValue()
		}
	}
	return ""
}

// TestTraceOfATurn exports the spans of one turn over OTLP/HTTP to an
// in-test collector and checks the tree: the request's span, the turn under
// it, and under the turn each model call and each tool call, the search
// under its search_knowledge call; every span carries the request id and
// all share one trace.
func TestTraceOfATurn(t *testing.T) {
	col := &otlpCollector{}
	cts := httptest.NewServer(col)
	defer cts.Close()
	exp, err := otlptracehttp.New(context.Background(), otlptracehttp.WithEndpointURL(cts.URL+"/v1/traces"))
	if err != nil {
		t.Fatal(err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp))
	m := &fakeModel{script: []step{
		{calls: []llm.ToolCall{call("1", "use_skill", `{"name":"bazi"}`)}},
		{calls: []llm.ToolCall{call("2", "search_knowledge", `{"query":"甲木"}`), call("3", "get_rules", `{"question":"甲木"}`)}},
		{text: []string{"甲木得令 [knowledge/bazi/converted/a.md#1]"}},
	}}
	a, _ := newTestAgent(t, m, func(c *Config) { c.TracerProvider = tp })
	s, err := NewServer(a, ServerOptions{Insecure: true})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s)
	defer ts.Close()
	req, _ := http.NewRequest("POST", ts.URL+"/api/chat", strings.NewReader(`{"message":"甲木如何"}`))
	req.Header.Set("X-Request-Id", "trace-req-1")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	evs := readSSE(t, resp.Body)
	resp.Body.Close()
	if evs[len(evs)-1].Type != EventDone {
		t.Fatalf("turn ended with %+v", evs[len(evs)-1])
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := tp.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}

	col.mu.Lock()
	defer col.mu.Unlock()
	for _, p := range col.paths {
		if p != "/v1/traces" {
			t.Errorf("export to %s", p)
		}
	}
	byID := map[string]*tracepb.Span{}
	for _, sp := range col.spans {
		byID[hex.EncodeToString(sp.GetSpanId())] = sp
	}
	// Render the tree: each span as name[tool] under its parent, children
	// sorted.
	children := map[string][]string{}
	var roots []string
	label := func(sp *tracepb.Span) string {
		if tool := spanAttr(sp, "vibe.tool"); tool != "" {
			return sp.GetName() + "(" + tool + ")"
		}
		return sp.GetName()
	}
	var trace []byte
	for id, sp := range byID {
		if trace == nil {
			trace = sp.GetTraceId()
		} else if !bytes.Equal(trace, sp.GetTraceId()) {
			t.Errorf("span %s is in another trace", label(sp))
		}
		if got := spanAttr(sp, "vibe.request_id"); got != "trace-req-1" {
			t.Errorf("span %s: vibe.request_id %q, want trace-req-1", label(sp), got)
		}
		parent := hex.EncodeToString(sp.GetParentSpanId())
		if _, ok := byID[parent]; ok {
			children[parent] = append(children[parent], id)
		} else {
			roots = append(roots, id)
		}
	}
	var render func(id string) string
	render = func(id string) string {
		var cs []string
		for _, c := range children[id] {
			cs = append(cs, render(c))
		}
		sort.Strings(cs)
		if len(cs) == 0 {
			return label(byID[id])
		}
		return label(byID[id]) + " { " + strings.Join(cs, " ") + " }"
	}
	if len(roots) != 1 {
		t.Fatalf("%d root spans, want 1: %v", len(roots), roots)
	}
	want := "POST /api/chat { vibe.turn { vibe.model vibe.model vibe.model vibe.tool(get_rules) vibe.tool(search_knowledge) { vibe.search } vibe.tool(use_skill) } }"
	if got := render(roots[0]); got != want {
		t.Fatalf("span tree\n got %s\nwant %s", got, want)
	}
	for _, sp := range byID {
		if sp.GetName() == "vibe.turn" && spanAttr(sp, "vibe.outcome") != "stop" {
			t.Errorf("vibe.turn outcome %q", spanAttr(sp, "vibe.outcome"))
		}
	}
}
