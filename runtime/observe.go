package runtime

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/vibelife/vibe/llm"
)

// tracerName names the runtime's spans' instrumentation scope.
const tracerName = "github.com/vibelife/vibe/runtime"

type requestIDKey struct{}

// WithRequestID returns ctx carrying the request id; the turn's spans and
// log line carry it.
func WithRequestID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, requestIDKey{}, id)
}

// RequestID returns the request id ctx carries ("" for none).
func RequestID(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}

// maxRequestIDLen is the longest X-Request-Id accepted from a client.
const maxRequestIDLen = 128

// validRequestID reports whether a client's X-Request-Id can be kept: short,
// printable ASCII without spaces (it is written into logs and headers).
func validRequestID(id string) bool {
	if id == "" || len(id) > maxRequestIDLen {
		return false
	}
	for _, r := range id {
		if r > unicode.MaxASCII || r <= ' ' || r == 0x7f {
			return false
		}
	}
	return true
}

// turnStats is what a turn did, for its metrics, span and log line.
type turnStats struct {
	modelCalls atomic.Int64 // stage "serve" requests
	toolCalls  atomic.Int64

	mu       sync.Mutex
	errKind  string
	searches [][]string // chunk ids each search of the turn returned
}

// setErr records the kind of the error that ends the turn (the first one
// wins); s may be nil (a tool run outside a turn).
func (s *turnStats) setErr(kind string) {
	if s == nil {
		return
	}
	s.mu.Lock()
	if s.errKind == "" {
		s.errKind = kind
	}
	s.mu.Unlock()
}

func (s *turnStats) addSearch(ids []string) {
	if s == nil {
		return
	}
	s.mu.Lock()
	s.searches = append(s.searches, ids)
	s.mu.Unlock()
}

type turnStatsKey struct{}

func statsFrom(ctx context.Context) *turnStats {
	s, _ := ctx.Value(turnStatsKey{}).(*turnStats)
	return s
}

// TurnInfo describes one finished turn (the request log line's fields).
type TurnInfo struct {
	ConversationID string
	Skill          string
	// Outcome is the done event's reason (stop, form, max_steps, offline)
	// or rejected, timeout, cancelled, error.
	Outcome   string
	ErrorKind string
	Duration  time.Duration
	// ModelCalls are the turn's model requests (steps); ToolCalls its tool
	// calls.
	ModelCalls int
	ToolCalls  int
	Usage      Usage
	// Message and Answer are the turn's texts; the request log writes them
	// only when asked to (ServerOptions.LogContent).
	Message string
	Answer  string
}

// requestInfo collects, for the request log, what the handlers and the turn
// learnt about a request.
type requestInfo struct {
	mu   sync.Mutex
	user string
	turn *TurnInfo
}

type requestInfoKey struct{}

func requestInfoFrom(ctx context.Context) *requestInfo {
	ri, _ := ctx.Value(requestInfoKey{}).(*requestInfo)
	return ri
}

// turnOutcome names how a turn ended, and the error kind when it failed.
func turnOutcome(ctx context.Context, reason string, err error, st *turnStats) (outcome, kind string) {
	if err == nil {
		if reason == "" {
			reason = "stop"
		}
		return reason, ""
	}
	if errors.Is(err, ErrInputRejected) {
		return "rejected", ""
	}
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded) || errors.Is(err, context.DeadlineExceeded):
		return "timeout", errKindTimeout
	case ctx.Err() != nil || errors.Is(err, context.Canceled):
		return "cancelled", errKindClientGone
	}
	st.mu.Lock()
	kind = st.errKind
	st.mu.Unlock()
	if kind == "" {
		kind = errKindInternal
	}
	return "error", kind
}

// classifySearches counts each search of a finished turn as cited when the
// answer names a chunk it returned, else uncited, or empty when it returned
// nothing.
func (m *Metrics) classifySearches(st *turnStats, answer string) {
	st.mu.Lock()
	defer st.mu.Unlock()
	for _, ids := range st.searches {
		outcome := searchEmpty
		if len(ids) > 0 {
			outcome = searchUncited
			for _, id := range ids {
				if id != "" && strings.Contains(answer, id) {
					outcome = searchCited
					break
				}
			}
		}
		m.searches.WithLabelValues(outcome).Inc()
	}
}

// observedModel counts, times and traces the model's requests.
type observedModel struct {
	Model
	m      *Metrics
	tracer trace.Tracer
}

func (o observedModel) Stream(ctx context.Context, req llm.Request, fn func(llm.Delta) error) (llm.Response, error) {
	stage := req.Stage
	if stage == "" {
		stage = "default"
	}
	ctx, span := o.tracer.Start(ctx, "vibe.model", trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(
		attribute.String("vibe.stage", stage), attribute.String("vibe.request_id", RequestID(ctx)),
		attribute.String("gen_ai.request.model", req.Model)))
	defer span.End()
	if st := statsFrom(ctx); st != nil && stage == "serve" {
		st.modelCalls.Add(1)
	}
	t0 := time.Now()
	resp, err := o.Model.Stream(ctx, req, fn)
	o.m.modelSeconds.WithLabelValues(stage).Observe(time.Since(t0).Seconds())
	o.m.tokens.WithLabelValues(stage, "in").Add(float64(resp.Usage.PromptTokens))
	o.m.tokens.WithLabelValues(stage, "out").Add(float64(resp.Usage.CompletionTokens))
	span.SetAttributes(attribute.Int("gen_ai.usage.input_tokens", resp.Usage.PromptTokens),
		attribute.Int("gen_ai.usage.output_tokens", resp.Usage.CompletionTokens),
		attribute.Int("vibe.tool_calls", len(resp.ToolCalls)))
	outcome := "ok"
	if err != nil {
		outcome = "error"
		if ctx.Err() == nil {
			o.m.fail(errKindModel)
		}
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
	}
	o.m.modelCalls.WithLabelValues(stage, outcome).Inc()
	return resp, err
}
