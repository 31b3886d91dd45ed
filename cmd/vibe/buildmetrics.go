package main

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/vibelife/vibe/llm"
)

// trackLLM records c as one of the build's LLM clients, whose usage the
// build's metrics report, and returns it.
func (a *app) trackLLM(c *llm.Client) *llm.Client {
	a.llmClients = append(a.llmClients, c)
	return c
}

// stageRun is how one build stage went.
type stageRun struct {
	name    string
	took    time.Duration
	cpu     time.Duration // the process's CPU time during the stage
	outcome string        // ok, partial, failed
}

// buildMetricsPath is where a build's metrics go: --metrics-file, else
// .vibe/metrics/build_<theme>.prom in the workspace ("" without one).
func (a *app) buildMetricsPath(theme string) string {
	if a.buildMetricsFile != "" {
		return a.buildMetricsFile
	}
	if a.ws == nil {
		return ""
	}
	return filepath.Join(a.ws.StateDir(), "metrics", "build_"+theme+".prom")
}

// writeBuildMetrics writes the metrics of a build run as a Prometheus
// textfile (node_exporter's textfile collector reads a directory of them):
// each stage's time and outcome, the build's, and the LLM calls, cache hits,
// tokens and cost of its stages under the names vibe serve uses
// (vibe_model_calls_total, vibe_model_tokens_total), labelled with the
// theme. The counters count this run only. The file is replaced atomically.
func (a *app) writeBuildMetrics(path, theme string, runs []stageRun, took time.Duration, ok bool) error {
	reg := prometheus.NewRegistry()
	stageSeconds := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "vibe_build_stage_duration_seconds",
		Help: "Time of one stage of the last vibe build of the theme."}, []string{"theme", "stage"})
	stageCPU := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "vibe_build_stage_cpu_seconds",
		Help: "CPU time (user plus system) vibe used during one stage of the last build: unlike the stage's duration, it does not grow when the machine is busy or the stage waits on the LLM."}, []string{"theme", "stage"})
	stageOutcome := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "vibe_build_stage_outcome",
		Help: "1 for how the stage of the last build ended: ok, partial (some items failed) or failed."}, []string{"theme", "stage", "outcome"})
	buildSeconds := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "vibe_build_duration_seconds",
		Help: "Time of the last vibe build of the theme."}, []string{"theme"})
	buildOK := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "vibe_build_success",
		Help: "1 when the last build of the theme succeeded, 0 when it failed or some items failed."}, []string{"theme"})
	buildTime := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "vibe_build_last_run_timestamp_seconds",
		Help: "When the last build of the theme ended (Unix time)."}, []string{"theme"})
	calls := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "vibe_model_calls_total",
		Help: "LLM requests the build sent, by LLM stage (extract's passes, integrate's prose)."}, []string{"theme", "stage", "outcome"})
	cached := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "vibe_model_cached_calls_total",
		Help: "LLM answers the build took from the cache in .vibe/cache/llm, sending nothing."}, []string{"theme", "stage"})
	tokens := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "vibe_model_tokens_total",
		Help: "Tokens of the build's requests, by direction (in: prompt, out: completion): per request the larger of the endpoint's usage and vibe's count with the model's tokenizer (or the nearest known one); cost and budget use them."}, []string{"theme", "stage", "direction"})
	endpointTokens := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "vibe_model_endpoint_tokens_total",
		Help: "The usage the endpoint returned for the build's requests, by direction (in: prompt, out: completion)."}, []string{"theme", "stage", "direction"})
	countedLarger := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "vibe_model_counted_larger_calls_total",
		Help: "Requests recorded with vibe's token count because it was above the endpoint's usage (or the endpoint returned none)."}, []string{"theme", "stage"})
	cost := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "vibe_model_cost_total",
		Help: "Estimated cost of the build's LLM requests at llm.prices (the prices' currency)."}, []string{"theme", "stage"})
	reg.MustRegister(stageSeconds, stageCPU, stageOutcome, buildSeconds, buildOK, buildTime, calls, cached, tokens, endpointTokens, countedLarger, cost)

	for _, r := range runs {
		stageSeconds.WithLabelValues(theme, r.name).Set(r.took.Seconds())
		stageCPU.WithLabelValues(theme, r.name).Set(r.cpu.Seconds())
		stageOutcome.WithLabelValues(theme, r.name, r.outcome).Set(1)
	}
	buildSeconds.WithLabelValues(theme).Set(took.Seconds())
	if ok {
		buildOK.WithLabelValues(theme).Set(1)
	} else {
		buildOK.WithLabelValues(theme).Set(0)
	}
	buildTime.WithLabelValues(theme).Set(float64(a.now().UnixMilli()) / 1000)
	usage := map[string]llm.StageUsage{}
	for _, c := range a.llmClients {
		for stage, u := range c.Usage() {
			t := usage[stage]
			t.Requests += u.Requests
			t.CachedHits += u.CachedHits
			t.PromptTokens += u.PromptTokens
			t.CompletionTokens += u.CompletionTokens
			t.EndpointPromptTokens += u.EndpointPromptTokens
			t.EndpointCompletionTokens += u.EndpointCompletionTokens
			t.CountedLarger += u.CountedLarger
			t.Cost += u.Cost
			usage[stage] = t
		}
	}
	stages := make([]string, 0, len(usage))
	for s := range usage {
		stages = append(stages, s)
	}
	sort.Strings(stages)
	for _, s := range stages {
		u := usage[s]
		calls.WithLabelValues(theme, s, "ok").Add(float64(u.Requests))
		cached.WithLabelValues(theme, s).Add(float64(u.CachedHits))
		tokens.WithLabelValues(theme, s, "in").Add(float64(u.PromptTokens))
		tokens.WithLabelValues(theme, s, "out").Add(float64(u.CompletionTokens))
		endpointTokens.WithLabelValues(theme, s, "in").Add(float64(u.EndpointPromptTokens))
		endpointTokens.WithLabelValues(theme, s, "out").Add(float64(u.EndpointCompletionTokens))
		countedLarger.WithLabelValues(theme, s).Add(float64(u.CountedLarger))
		cost.WithLabelValues(theme, s).Add(u.Cost)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("build metrics: %w", err)
	}
	if err := prometheus.WriteToTextfile(path, reg); err != nil {
		return fmt.Errorf("build metrics %s: %w", path, err)
	}
	return nil
}
