package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/vibelife/vibe/internal/iostreams"
	"github.com/vibelife/vibe/llm/llmtest"
	"github.com/vibelife/vibe/runtime"
)

// TestServeMetricsAndRequestLog wires vibe serve as runServe does over the
// built demo workspace, with serve.metrics_addr and serve.log_format from
// the environment: a turn through the API is counted on the metrics
// listener (and only there) and logged as one JSON line.
func TestServeMetricsAndRequestLog(t *testing.T) {
	ws := demoWorkspace(t)
	fake := llmtest.New(t)
	fake.SetFallback(brewAgent(t))
	env := map[string]string{"OPENAI_BASE_URL": fake.URL, "OPENAI_API_KEY": "test", "VIBE_API_KEYS": "ka:alice",
		"VIBE_SERVE_LOG_FORMAT": "json"}
	ios, _, _, errOut := iostreams.Test()
	a := &app{io: ios, getenv: func(k string) string { return env[k] }, now: time.Now, workspaceDir: ws}
	if err := a.setupLogger(); err != nil {
		t.Fatal(err)
	}
	srv, _, closeServer, err := a.newServer(context.Background(), &ServeOptions{IO: ios})
	if err != nil {
		t.Fatalf("%v: %s", err, errOut.String())
	}
	api := httptest.NewServer(srv)
	defer func() { api.Close(); closeServer() }()
	addr, stop, err := a.serveMetrics("127.0.0.1:0", srv)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()

	req, _ := http.NewRequest("POST", api.URL+"/api/chat", strings.NewReader(`{"message":"How do I brew green tea in a 300 ml glass?"}`))
	req.Header.Set("Authorization", "Bearer ka")
	req.Header.Set("X-Request-Id", "serve-metrics-1")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	evs := sseEvents(t, resp.Body)
	resp.Body.Close()
	done := evs[len(evs)-1]
	if done.Type != runtime.EventDone || done.Usage == nil || done.Usage.PromptTokens == 0 {
		t.Fatalf("last event %+v", done)
	}
	if r := post(t, api.URL+"/metrics", "ka", ""); r.StatusCode == 200 {
		t.Fatal("the API listener serves /metrics")
	}

	mresp, err := http.Get("http://" + addr.String() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer mresp.Body.Close()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(mresp.Body)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for name, f := range fams {
		for _, m := range f.GetMetric() {
			var ls []string
			for _, l := range m.GetLabel() {
				ls = append(ls, l.GetName()+"="+l.GetValue())
			}
			sort.Strings(ls)
			if f.GetType() == dto.MetricType_COUNTER {
				got[name+"{"+strings.Join(ls, ",")+"}"] = m.GetCounter().GetValue()
			}
		}
	}
	want := map[string]float64{
		"vibe_turns_total{outcome=stop}":                          1,
		"vibe_model_calls_total{outcome=ok,stage=serve}":          float64(fake.Count()),
		"vibe_model_tokens_total{direction=in,stage=serve}":       float64(done.Usage.PromptTokens),
		"vibe_model_tokens_total{direction=out,stage=serve}":      float64(done.Usage.CompletionTokens),
		"vibe_tool_calls_total{outcome=ok,tool=use_skill}":        1,
		"vibe_tool_calls_total{outcome=ok,tool=get_rules}":        1,
		"vibe_tool_calls_total{outcome=ok,tool=search_knowledge}": 1,
		"vibe_tool_calls_total{outcome=ok,tool=calc_brew}":        1,
		"vibe_tool_calls_total{outcome=ok,tool=show_brew_card}":   1,
		"vibe_http_requests_total{code=200,route=POST /api/chat}": 1,
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %v, want %v", k, got[k], v)
		}
	}

	var line map[string]any
	for _, l := range strings.Split(errOut.String(), "\n") {
		if strings.Contains(l, `"request_id":"serve-metrics-1"`) {
			if line != nil {
				t.Fatalf("two log lines for one request:\n%s", errOut.String())
			}
			if err := json.Unmarshal([]byte(l), &line); err != nil {
				t.Fatalf("log line %q: %v", l, err)
			}
		}
	}
	if line == nil {
		t.Fatalf("no JSON log line for the request:\n%s", errOut.String())
	}
	if line["user"] != "alice" || line["skill"] != "demo" || line["tool_steps"] != float64(5) || line["outcome"] != "stop" ||
		line["tokens_in"] != float64(done.Usage.PromptTokens) {
		t.Errorf("log line %v", line)
	}
	if strings.Contains(errOut.String(), "300 ml glass") {
		t.Error("the log holds the message")
	}
}
