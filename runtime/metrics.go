package runtime

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Metrics are the Prometheus metrics of one Agent (and the Server over it),
// in a registry of their own: nothing is registered globally, so two agents
// in one process (tests, benchmarks) keep separate counts. docs/operations.md
// describes each metric.
type Metrics struct {
	reg *prometheus.Registry

	turns         *prometheus.CounterVec   // outcome
	turnSeconds   *prometheus.HistogramVec // outcome
	turnToolCalls prometheus.Histogram
	turnTokens    prometheus.Histogram
	modelCalls    *prometheus.CounterVec   // stage, outcome
	modelSeconds  *prometheus.HistogramVec // stage
	tokens        *prometheus.CounterVec   // stage, direction
	toolCalls     *prometheus.CounterVec   // tool, outcome
	toolSeconds   *prometheus.HistogramVec // tool
	searches      *prometheus.CounterVec   // outcome
	searchSeconds prometheus.Histogram
	guardrails    *prometheus.CounterVec // guard
	activeStreams prometheus.Gauge
	errors        *prometheus.CounterVec // kind
	profileFields *prometheus.CounterVec // outcome
	requests      *prometheus.CounterVec // route, code
	feedback      *prometheus.CounterVec // rating, comment
	judgeVerdicts *prometheus.CounterVec // by, verdict
	judgeTurns    *prometheus.CounterVec // outcome
}

// Search outcomes of vibe_search_total. A search is a hit when the answer
// of its turn names one of the passages it returned (the citations event
// marks them cited); one that returned nothing, or only passages the answer
// did not cite, is a miss.
const (
	searchCited   = "cited"
	searchUncited = "uncited"
	searchEmpty   = "empty"
	searchError   = "error"
	// searchNoTurn is a search run outside a turn (POST /api/tools/execute):
	// no answer to cite it.
	searchNoTurn = "no_turn"
)

// Error kinds of vibe_errors_total.
const (
	errKindModel      = "model"
	errKindTool       = "tool"
	errKindSearch     = "search"
	errKindStore      = "store"
	errKindTimeout    = "timeout"
	errKindClientGone = "client_gone"
	errKindInternal   = "internal"
	errKindAuth       = "auth"
	errKindRateLimit  = "rate_limit"
	errKindBadRequest = "bad_request"
)

// Guardrails of vibe_guardrail_triggers_total.
const (
	guardInputRejected  = "input_rejected"
	guardOutputSoftened = "output_softened"
	guardDisclaimer     = "disclaimer"
	guardMaxSteps       = "max_steps"
	// guardVerdictCaveat: a grave verdict (death, disaster, divorce,
	// ruin) got the caveat that it is the tradition's, not a certainty.
	guardVerdictCaveat = "verdict_caveat"
	// guardInputClassifierFailed: the input classifier's request failed or
	// its answer was unusable; the phrase list alone judged the message.
	guardInputClassifierFailed = "input_classifier_failed"
)

// latencyBuckets cover a tool call or a search (1 ms .. 30 s).
var latencyBuckets = []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30}

// turnBuckets cover a turn or a model call (10 ms .. 5 min).
var turnBuckets = []float64{.01, .025, .05, .1, .25, .5, 1, 2, 4, 8, 15, 30, 60, 120, 300}

// NewMetrics returns the runtime's metrics in a new registry, which also
// holds the Go runtime and process collectors (memory, goroutines, CPU).
func NewMetrics() *Metrics {
	reg := prometheus.NewRegistry()
	m := &Metrics{reg: reg}
	f := func(c prometheus.Collector) { reg.MustRegister(c) }
	m.turns = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "vibe_turns_total",
		Help: "Conversation turns by outcome: stop, form, max_steps, offline, rejected, timeout, cancelled, error."}, []string{"outcome"})
	m.turnSeconds = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "vibe_turn_duration_seconds",
		Help: "Time from a turn's start to its last event, by outcome.", Buckets: turnBuckets}, []string{"outcome"})
	m.turnToolCalls = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "vibe_turn_tool_calls",
		Help: "Tool calls a turn made.", Buckets: []float64{0, 1, 2, 3, 4, 6, 8, 12, 16, 32}})
	m.turnTokens = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "vibe_turn_tokens",
		Help: "Tokens (prompt plus completion) of a turn's model calls.", Buckets: prometheus.ExponentialBuckets(250, 2, 10)})
	m.modelCalls = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "vibe_model_calls_total",
		Help: "Model requests by stage (serve: a turn's step; serve.summary: a rolling summary) and outcome (ok, error)."}, []string{"stage", "outcome"})
	m.modelSeconds = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "vibe_model_call_duration_seconds",
		Help: "Time of one model request, streamed to its end, by stage.", Buckets: turnBuckets}, []string{"stage"})
	m.tokens = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "vibe_model_tokens_total",
		Help: "Tokens of the model requests, by stage and direction (in: prompt, out: completion): per request the larger of the endpoint's usage and vibe's count with the model's tokenizer (or the nearest known one)."}, []string{"stage", "direction"})
	m.toolCalls = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "vibe_tool_calls_total",
		Help: "Tool calls by tool and outcome (ok, error); tools the model invented count as tool=\"unknown\"."}, []string{"tool", "outcome"})
	m.toolSeconds = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "vibe_tool_call_duration_seconds",
		Help: "Time of one tool call, by tool.", Buckets: latencyBuckets}, []string{"tool"})
	m.searches = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "vibe_search_total",
		Help: "Knowledge searches by outcome: cited (the answer cites a passage it returned: a hit), uncited and empty (misses), error, no_turn (run outside a turn)."}, []string{"outcome"})
	m.searchSeconds = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "vibe_search_duration_seconds",
		Help: "Time of one knowledge search (query embedding included).", Buckets: latencyBuckets})
	m.guardrails = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "vibe_guardrail_triggers_total",
		Help: "Guardrail triggers: input_rejected, output_softened (an absolute promise softened), disclaimer, max_steps, verdict_caveat (a grave verdict relayed as the tradition's), input_classifier_failed (the phrase list alone judged a message)."}, []string{"guard"})
	m.activeStreams = prometheus.NewGauge(prometheus.GaugeOpts{Name: "vibe_active_streams",
		Help: "Chat responses being streamed now (/api/chat and /v1/chat/completions)."})
	m.errors = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "vibe_errors_total",
		Help: "Errors by kind: model, tool, search, store, timeout, client_gone, internal, auth, rate_limit, bad_request."}, []string{"kind"})
	m.profileFields = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "vibe_profile_fields_total",
		Help: "Profile fields get_user_profile was asked for, by outcome (found, missing): the profile hit rate."}, []string{"outcome"})
	m.requests = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "vibe_http_requests_total",
		Help: "HTTP requests by route and status code."}, []string{"route", "code"})
	m.feedback = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "vibe_feedback_total",
		Help: "Users' verdicts on answers (POST /api/feedback) by rating (up, down) and comment (yes, no); a changed verdict counts again."}, []string{"rating", "comment"})
	f(m.feedback)
	m.judgeVerdicts = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "vibe_judge_verdicts_total",
		Help: "The judge's verdicts on the claims of answers, by who judged (model: the judge request; check: the deterministic check of cited ids and quotes) and verdict (supported, unsupported, unsafe)."}, []string{"by", "verdict"})
	m.judgeTurns = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "vibe_judge_turns_total",
		Help: "Judged answers by outcome: passed (sent as drafted), rewritten (the user got the judge's rewrite), check_only (no usable judge answer: the deterministic check alone)."}, []string{"outcome"})
	for _, c := range []prometheus.Collector{m.judgeVerdicts, m.judgeTurns, m.turns, m.turnSeconds, m.turnToolCalls, m.turnTokens, m.modelCalls, m.modelSeconds,
		m.tokens, m.toolCalls, m.toolSeconds, m.searches, m.searchSeconds, m.guardrails, m.activeStreams, m.errors,
		m.profileFields, m.requests,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{})} {
		f(c)
	}
	// Series that exist from the start, so a rate over them is 0 rather
	// than absent.
	for _, o := range []string{"stop", "error"} {
		m.turns.WithLabelValues(o)
	}
	for _, o := range []string{searchCited, searchUncited, searchEmpty} {
		m.searches.WithLabelValues(o)
	}
	for _, r := range []string{"up", "down"} {
		m.feedback.WithLabelValues(r, "no")
	}
	return m
}

// Registry returns the registry the metrics are in (for a push or a
// textfile).
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Handler serves the metrics in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}

// feedbackGiven counts a verdict on an answer.
func (m *Metrics) feedbackGiven(rating string, comment bool) {
	c := "no"
	if comment {
		c = "yes"
	}
	m.feedback.WithLabelValues(rating, c).Inc()
}

func (m *Metrics) guard(name string) { m.guardrails.WithLabelValues(name).Inc() }

func (m *Metrics) fail(kind string) { m.errors.WithLabelValues(kind).Inc() }
