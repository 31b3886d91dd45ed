package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/vibelife/vibe/internal/iostreams"
	"github.com/vibelife/vibe/llm"
	"github.com/vibelife/vibe/llm/llmtest"
)

func TestSelectStages(t *testing.T) {
	all := []buildStage{{name: "a"}, {name: "b"}, {name: "c"}}
	names := func(ss []buildStage) string {
		var n []string
		for _, s := range ss {
			n = append(n, s.name)
		}
		return strings.Join(n, ",")
	}
	tests := []struct {
		from, until, want string
		wantErr           bool
	}{
		{"", "", "a,b,c", false},
		{"b", "", "b,c", false},
		{"", "b", "a,b", false},
		{"b", "b", "b", false},
		{"c", "a", "", true},
		{"x", "", "", true},
	}
	for _, tt := range tests {
		got, err := selectStages(all, "demo", tt.from, tt.until)
		if (err != nil) != tt.wantErr {
			t.Fatalf("from=%q until=%q: err=%v", tt.from, tt.until, err)
		}
		if err == nil && names(got) != tt.want {
			t.Errorf("from=%q until=%q: got %s, want %s", tt.from, tt.until, names(got), tt.want)
		}
	}
}

func TestRunBuildGoesOnAfterPartialFailureAndStopsOnError(t *testing.T) {
	ios, _, _, errOut := iostreams.Test()
	a := &app{io: ios, getenv: func(string) string { return "" }, now: time.Now}
	if err := a.setupLogger(); err != nil {
		t.Fatal(err)
	}
	var ran []string
	stage := func(name string, err error) buildStage {
		return buildStage{name, func(ctx context.Context, theme string) error {
			ran = append(ran, name)
			return err
		}}
	}
	err := a.runBuild(context.Background(), "demo", []buildStage{
		stage("curate", nil),
		stage("convert", withExit(exitFailure, errors.New("1 of 3 files failed"))),
		stage("ingest", nil),
	})
	var ec *exitCodeError
	if !errors.As(err, &ec) || ec.code != exitFailure {
		t.Fatalf("want exit status 1 after a partial failure, got %v", err)
	}
	if strings.Join(ran, ",") != "curate,convert,ingest" {
		t.Fatalf("stages run: %v", ran)
	}
	if !strings.Contains(errOut.String(), "1 of 3 files failed") {
		t.Fatalf("partial failure not reported: %q", errOut.String())
	}

	ran = nil
	err = a.runBuild(context.Background(), "demo", []buildStage{
		stage("curate", errors.New("disk full")),
		stage("convert", nil),
	})
	if err == nil || !strings.Contains(err.Error(), "stage curate") || len(ran) != 1 {
		t.Fatalf("a hard error must stop the build: err=%v ran=%v", err, ran)
	}
}

// TestBuildWritesMetricsTextfile checks vibe build's Prometheus textfile:
// each stage's time and outcome, the build's success, and the LLM calls,
// tokens and cost its stages' clients report, under vibe serve's names.
func TestBuildWritesMetricsTextfile(t *testing.T) {
	fake := llmtest.New(t, llmtest.Text("a"), llmtest.Text("b"), llmtest.Text("c"))
	ios, _, _, _ := iostreams.Test()
	path := filepath.Join(t.TempDir(), "metrics", "build.prom")
	a := &app{io: ios, getenv: func(string) string { return "" }, now: time.Now, quiet: true, buildMetricsFile: path}
	if err := a.setupLogger(); err != nil {
		t.Fatal(err)
	}
	var client *llm.Client
	stages := []buildStage{
		{"convert", func(ctx context.Context, theme string) error { time.Sleep(20 * time.Millisecond); return nil }},
		{"extract", func(ctx context.Context, theme string) error {
			client = a.trackLLM(llm.New(llm.Options{BaseURL: fake.URL, APIKey: "k", Model: "m", MaxRetries: -1,
				Prices: map[string]llm.Price{"m": {InputPerMTok: 1e6, OutputPerMTok: 2e6}}}))
			for _, stage := range []string{"map", "map", "reduce"} {
				if _, err := client.Chat(ctx, llm.Request{Stage: stage, Messages: []llm.Message{{Role: llm.RoleUser, Content: "x"}}}); err != nil {
					return err
				}
			}
			return nil
		}},
		{"integrate", func(ctx context.Context, theme string) error {
			return withExit(exitFailure, errors.New("1 of 2 items failed"))
		}},
	}
	if err := a.runBuild(context.Background(), "demo", stages); err == nil {
		t.Fatal("a partial build succeeded")
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(f)
	if err != nil {
		t.Fatal(err)
	}
	value := func(name string, labels ...string) (float64, bool) {
		for _, m := range fams[name].GetMetric() {
			got := map[string]string{}
			for _, l := range m.GetLabel() {
				got[l.GetName()] = l.GetValue()
			}
			match := true
			for i := 0; i+1 < len(labels); i += 2 {
				match = match && got[labels[i]] == labels[i+1]
			}
			if match {
				if c := m.GetCounter(); c != nil {
					return c.GetValue(), true
				}
				return m.GetGauge().GetValue(), true
			}
		}
		return 0, false
	}
	if v, _ := value("vibe_build_stage_duration_seconds", "theme", "demo", "stage", "convert"); v < 0.02 {
		t.Errorf("convert took %v s, want at least 0.02", v)
	}
	if _, ok := value("vibe_build_stage_cpu_seconds", "theme", "demo", "stage", "extract"); !ok {
		t.Error("no CPU time for the extract stage")
	}
	for stage, outcome := range map[string]string{"convert": "ok", "extract": "ok", "integrate": "partial"} {
		if v, ok := value("vibe_build_stage_outcome", "stage", stage, "outcome", outcome); !ok || v != 1 {
			t.Errorf("stage %s: outcome %s = %v (%v)", stage, outcome, v, ok)
		}
	}
	if v, ok := value("vibe_build_success", "theme", "demo"); !ok || v != 0 {
		t.Errorf("vibe_build_success = %v (%v), want 0 after a partial build", v, ok)
	}
	usage := client.Usage()
	for _, stage := range []string{"map", "reduce"} {
		u := usage[stage]
		if u.Requests == 0 || u.PromptTokens == 0 {
			t.Fatalf("stage %s: no usage recorded: %+v", stage, u)
		}
		checks := []struct {
			name   string
			labels []string
			want   float64
		}{
			{"vibe_model_calls_total", []string{"stage", stage}, float64(u.Requests)},
			{"vibe_model_tokens_total", []string{"stage", stage, "direction", "in"}, float64(u.PromptTokens)},
			{"vibe_model_tokens_total", []string{"stage", stage, "direction", "out"}, float64(u.CompletionTokens)},
			{"vibe_model_cost_total", []string{"stage", stage}, u.Cost},
			{"vibe_model_endpoint_tokens_total", []string{"stage", stage, "direction", "in"}, float64(u.EndpointPromptTokens)},
			{"vibe_model_endpoint_tokens_total", []string{"stage", stage, "direction", "out"}, float64(u.EndpointCompletionTokens)},
			{"vibe_model_counted_larger_calls_total", []string{"stage", stage}, float64(u.CountedLarger)},
		}
		for _, c := range checks {
			if v, ok := value(c.name, append([]string{"theme", "demo"}, c.labels...)...); !ok || v != c.want {
				t.Errorf("%s%v = %v (%v), want %v", c.name, c.labels, v, ok, c.want)
			}
		}
	}
	if v, _ := value("vibe_model_calls_total", "stage", "map"); v != 2 {
		t.Errorf("map calls = %v, want 2", v)
	}

	// A failed stage is recorded as failed, and the stages after it not at all.
	a.llmClients = nil
	err = a.runBuild(context.Background(), "demo", []buildStage{
		{"convert", func(ctx context.Context, theme string) error { return errors.New("disk full") }},
		{"ingest", func(ctx context.Context, theme string) error { return nil }},
	})
	if err == nil {
		t.Fatal("a failed build succeeded")
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := string(b)
	if !strings.Contains(out, `vibe_build_stage_outcome{outcome="failed",stage="convert",theme="demo"} 1`) || strings.Contains(out, `stage="ingest"`) || strings.Contains(out, "vibe_model_calls_total{") {
		t.Errorf("metrics after a failed build:\n%s", out)
	}
}
