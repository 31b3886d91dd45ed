package runtime

import (
	"context"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// statusWriter records the status code a handler wrote. Unwrap lets
// http.ResponseController reach the connection's flush and deadlines.
type statusWriter struct {
	http.ResponseWriter
	code int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.code == 0 {
		w.code = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// observe wraps every request: it takes the client's X-Request-Id (or makes
// one) and returns it in the response header, starts the request's span
// (continuing a W3C traceparent the client sent), counts the request by
// route and status, and writes one log line when it ends: the request id,
// route, status, latency, user and, for a turn, its skill, conversation,
// outcome, model and tool calls and tokens. Message texts are logged only
// with ServerOptions.LogContent.
func (s *Server) observe(w http.ResponseWriter, r *http.Request, next http.Handler) {
	start := time.Now()
	id := r.Header.Get("X-Request-Id")
	if !validRequestID(id) {
		id = randomID("req-")
	}
	w.Header().Set("X-Request-Id", id)
	_, route := s.mux.Handler(r)
	if route == "" {
		route = "unmatched"
	}
	ri := &requestInfo{}
	ctx := propagation.TraceContext{}.Extract(r.Context(), propagation.HeaderCarrier(r.Header))
	ctx = context.WithValue(WithRequestID(ctx, id), requestInfoKey{}, ri)
	ctx, span := s.agent.tracer.Start(ctx, route, trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(
		attribute.String("vibe.request_id", id), attribute.String("http.request.method", r.Method),
		attribute.String("http.route", route)))
	sw := &statusWriter{ResponseWriter: w}
	next.ServeHTTP(sw, r.WithContext(ctx))
	code := sw.code
	if code == 0 {
		code = http.StatusOK
	}
	span.SetAttributes(attribute.Int("http.response.status_code", code))
	if code >= 500 {
		span.SetStatus(codes.Error, http.StatusText(code))
	}
	span.End()
	m := s.agent.metrics
	m.requests.WithLabelValues(route, strconv.Itoa(code)).Inc()
	switch code {
	case http.StatusUnauthorized:
		m.fail(errKindAuth)
	case http.StatusTooManyRequests:
		m.fail(errKindRateLimit)
	case http.StatusBadRequest, http.StatusRequestEntityTooLarge, http.StatusRequestTimeout:
		m.fail(errKindBadRequest)
	}

	lg := s.opts.Logger
	level := slog.LevelInfo
	if r.Method == http.MethodGet && (route == "GET /healthz" || route == "GET /readyz" || route == "GET /metrics") {
		level = slog.LevelDebug // load balancer probes
	}
	if !lg.Enabled(ctx, level) {
		return
	}
	ri.mu.Lock()
	user, ti := ri.user, ri.turn
	ri.mu.Unlock()
	attrs := []slog.Attr{
		slog.String("request_id", id), slog.String("method", r.Method), slog.String("route", route),
		slog.Int("status", code), slog.Float64("duration_ms", float64(time.Since(start).Microseconds())/1000),
	}
	if user != "" {
		attrs = append(attrs, slog.String("user", user))
	}
	if ti != nil {
		attrs = append(attrs, slog.String("skill", ti.Skill), slog.String("conversation_id", ti.ConversationID),
			slog.String("outcome", ti.Outcome), slog.Float64("turn_ms", float64(ti.Duration.Microseconds())/1000),
			slog.Int("model_calls", ti.ModelCalls), slog.Int("tool_steps", ti.ToolCalls),
			slog.Int("tokens_in", ti.Usage.PromptTokens), slog.Int("tokens_out", ti.Usage.CompletionTokens))
		if ti.ErrorKind != "" {
			attrs = append(attrs, slog.String("error_kind", ti.ErrorKind))
		}
		if s.opts.LogContent {
			attrs = append(attrs, slog.String("message", ti.Message), slog.String("answer", ti.Answer))
		}
	}
	lg.LogAttrs(ctx, level, "request", attrs...)
}

// noteUser records the authenticated user for the request log.
func noteUser(ctx context.Context, user string) {
	if ri := requestInfoFrom(ctx); ri != nil {
		ri.mu.Lock()
		ri.user = user
		ri.mu.Unlock()
	}
}

// streaming counts a chat response being streamed until the returned
// function is called.
func (s *Server) streaming() func() {
	g := s.agent.metrics.activeStreams
	g.Inc()
	return g.Dec
}
