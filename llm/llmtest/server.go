package llmtest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vibelife/vibe/llm"
)

// Reply is one scripted answer.
type Reply struct {
	// Text is the assistant's content.
	Text string
	// ToolCalls are function calls the assistant asks for.
	ToolCalls []llm.ToolCall
	// Status, when not 0 or 200, answers with this HTTP status and an
	// OpenAI-style error body carrying Message.
	Status  int
	Message string
	// RetryAfter sets the Retry-After header (seconds or an HTTP date).
	RetryAfter string
	// Delay waits this long before answering (or until the client gives up).
	Delay time.Duration
	// CutAfter, for a streamed answer, aborts the connection after this many
	// content pieces, before the stream ends. For a plain (non-streamed)
	// answer any value above 0 sends the first half of the JSON body and
	// then aborts the connection.
	CutAfter int
	// PromptTokens and CompletionTokens are reported in usage; when 0 they
	// are estimated from the text (about 4 bytes per token).
	PromptTokens, CompletionTokens int
	// FinishReason overrides "stop" / "tool_calls".
	FinishReason string
	// Handler, when set, serves the request instead of everything above.
	Handler http.HandlerFunc
}

// Text answers with content s.
func Text(s string) Reply { return Reply{Text: s} }

// JSON answers with v encoded as JSON content (for structured output).
func JSON(v any) Reply {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("llmtest.JSON: %v", err))
	}
	return Reply{Text: string(b)}
}

// ToolCall answers with one call of the named function.
func ToolCall(name, args string) Reply {
	return Reply{ToolCalls: []llm.ToolCall{{ID: "call_" + name, Name: name, Arguments: args}}}
}

// Status answers with an HTTP error.
func Status(code int, msg string) Reply { return Reply{Status: code, Message: msg} }

// RateLimited answers 429 with a Retry-After header.
func RateLimited(retryAfter string) Reply {
	return Reply{Status: http.StatusTooManyRequests, Message: "rate limit exceeded", RetryAfter: retryAfter}
}

// CutStream streams text in pieces and aborts the connection after n pieces.
func CutStream(text string, n int) Reply { return Reply{Text: text, CutAfter: n} }

// CutBody answers text without streaming but aborts the connection half-way
// through the JSON body, like a proxy dropping the connection.
func CutBody(text string) Reply { return Reply{Text: text, CutAfter: 1} }

// Slow delays r by d.
func Slow(d time.Duration, r Reply) Reply { r.Delay = d; return r }

// Request is a request the server received.
type Request struct {
	Method string
	Path   string
	Header http.Header
	// Body is the raw JSON body.
	Body []byte
	// Parsed fields of the body.
	Model          string          `json:"model"`
	Messages       []llm.Message   `json:"-"`
	Stream         bool            `json:"stream"`
	ResponseFormat json.RawMessage `json:"response_format"`
	Tools          json.RawMessage `json:"tools"`
}

// ResponseFormatType returns response_format.type ("json_schema",
// "json_object" or "" when absent).
func (r Request) ResponseFormatType() string {
	var rf struct {
		Type string `json:"type"`
	}
	_ = json.Unmarshal(r.ResponseFormat, &rf)
	return rf.Type
}

// SchemaName returns response_format.json_schema.name ("" in JSON mode or
// without structured output).
func (r Request) SchemaName() string {
	var rf struct {
		JSONSchema struct {
			Name string `json:"name"`
		} `json:"json_schema"`
	}
	_ = json.Unmarshal(r.ResponseFormat, &rf)
	return rf.JSONSchema.Name
}

// SystemMessage returns the system messages' contents joined by newlines.
func (r Request) SystemMessage() string {
	var parts []string
	for _, m := range r.Messages {
		if m.Role == llm.RoleSystem {
			parts = append(parts, m.Content)
		}
	}
	return strings.Join(parts, "\n")
}

// LastUserMessage returns the content of the last user message.
func (r Request) LastUserMessage() string {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if r.Messages[i].Role == llm.RoleUser {
			return r.Messages[i].Content
		}
	}
	return ""
}

// Server is a running fake endpoint.
type Server struct {
	// URL is the base URL to give a client (ends in /v1).
	URL string

	mu       sync.Mutex
	script   []Reply
	requests []Request
	// fallback answers requests past the end of the script.
	fallback func(Request) Reply
	// noJSONSchema makes the server reject response_format json_schema with
	// a 400, like endpoints that only know JSON mode.
	noJSONSchema bool
	srv          *httptest.Server
}

// New starts a server with the given script; it is closed when the test ends.
func New(t testing.TB, script ...Reply) *Server {
	t.Helper()
	s := &Server{script: script}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	s.URL = s.srv.URL + "/v1"
	t.Cleanup(s.srv.Close)
	return s
}

// Push appends replies to the script.
func (s *Server) Push(r ...Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.script = append(s.script, r...)
}

// SetFallback sets the answer to requests past the end of the script (for
// example one computed from the request).
func (s *Server) SetFallback(f func(Request) Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fallback = f
}

// RejectJSONSchema makes the server answer 400 to every request asking for
// response_format json_schema, without consuming the script.
func (s *Server) RejectJSONSchema(on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.noJSONSchema = on
}

// Requests returns a copy of every request received, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Count returns how many requests the server received.
func (s *Server) Count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.requests)
}

// Remaining returns how many scripted replies are left.
func (s *Server) Remaining() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.script)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if !strings.HasSuffix(r.URL.Path, "/chat/completions") {
		writeError(w, http.StatusNotFound, "llmtest: only /chat/completions is served, not "+r.URL.Path)
		return
	}
	body, _ := io.ReadAll(r.Body)
	req := Request{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: body}
	var parsed struct {
		Model          string          `json:"model"`
		Stream         bool            `json:"stream"`
		ResponseFormat json.RawMessage `json:"response_format"`
		Tools          json.RawMessage `json:"tools"`
		Messages       []struct {
			Role       string          `json:"role"`
			Content    json.RawMessage `json:"content"`
			ToolCallID string          `json:"tool_call_id"`
			ToolCalls  []struct {
				ID       string `json:"id"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &parsed); err != nil {
		writeError(w, http.StatusBadRequest, "llmtest: body is not JSON: "+err.Error())
		return
	}
	req.Model, req.Stream, req.ResponseFormat, req.Tools = parsed.Model, parsed.Stream, parsed.ResponseFormat, parsed.Tools
	for _, m := range parsed.Messages {
		msg := llm.Message{Role: m.Role, Content: contentText(m.Content), ToolCallID: m.ToolCallID}
		for _, tc := range m.ToolCalls {
			msg.ToolCalls = append(msg.ToolCalls, llm.ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments})
		}
		req.Messages = append(req.Messages, msg)
	}

	s.mu.Lock()
	s.requests = append(s.requests, req)
	var rep Reply
	switch {
	case s.noJSONSchema && req.ResponseFormatType() == "json_schema":
		rep = Status(http.StatusBadRequest, "response_format json_schema is not supported by this model")
	case len(s.script) > 0:
		rep, s.script = s.script[0], s.script[1:]
	case s.fallback != nil:
		f := s.fallback
		s.mu.Unlock()
		rep = f(req)
		s.mu.Lock()
	default:
		rep = Status(http.StatusInternalServerError, fmt.Sprintf("llmtest: no scripted reply for request %d", len(s.requests)))
	}
	s.mu.Unlock()

	if rep.Delay > 0 {
		select {
		case <-time.After(rep.Delay):
		case <-r.Context().Done():
			return
		}
	}
	if rep.Handler != nil {
		rep.Handler(w, r)
		return
	}
	if rep.RetryAfter != "" {
		w.Header().Set("Retry-After", rep.RetryAfter)
	}
	if rep.Status != 0 && rep.Status != http.StatusOK {
		writeError(w, rep.Status, rep.Message)
		return
	}
	if rep.PromptTokens == 0 {
		rep.PromptTokens = estimate(string(body))
	}
	if rep.CompletionTokens == 0 {
		n := len(rep.Text)
		for _, tc := range rep.ToolCalls {
			n += len(tc.Name) + len(tc.Arguments)
		}
		rep.CompletionTokens = max(1, n/4)
	}
	finish := rep.FinishReason
	if finish == "" {
		finish = "stop"
		if len(rep.ToolCalls) > 0 {
			finish = "tool_calls"
		}
	}
	if req.Stream {
		s.stream(w, req, rep, finish)
		return
	}
	msg := map[string]any{"role": "assistant", "content": rep.Text}
	if len(rep.ToolCalls) > 0 {
		msg["tool_calls"] = toolCalls(rep.ToolCalls, false)
	}
	resp := map[string]any{
		"id": "chatcmpl-llmtest", "object": "chat.completion", "created": 1700000000, "model": req.Model,
		"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}},
		"usage":   usage(rep),
	}
	b, _ := json.Marshal(resp)
	w.Header().Set("Content-Type", "application/json")
	if rep.CutAfter > 0 {
		w.Header().Set("Content-Length", fmt.Sprint(len(b)))
		_, _ = w.Write(b[:len(b)/2])
		if fl, ok := w.(http.Flusher); ok {
			fl.Flush()
		}
		panic(http.ErrAbortHandler) // the client sees the body end early
	}
	_, _ = w.Write(append(b, '\n'))
}

func (s *Server) stream(w http.ResponseWriter, req Request, rep Reply, finish string) {
	w.Header().Set("Content-Type", "text/event-stream")
	fl, _ := w.(http.Flusher)
	send := func(v any) {
		b, _ := json.Marshal(v)
		fmt.Fprintf(w, "data: %s\n\n", b)
		if fl != nil {
			fl.Flush()
		}
	}
	chunk := func(delta map[string]any, finish any) map[string]any {
		return map[string]any{"id": "chatcmpl-llmtest", "object": "chat.completion.chunk", "created": 1700000000, "model": req.Model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}}
	}
	send(chunk(map[string]any{"role": "assistant", "content": ""}, nil))
	pieces := split(rep.Text, 8)
	for i, p := range pieces {
		if rep.CutAfter > 0 && i >= rep.CutAfter {
			panic(http.ErrAbortHandler) // the client sees the stream end abruptly
		}
		send(chunk(map[string]any{"content": p}, nil))
	}
	if rep.CutAfter > 0 {
		panic(http.ErrAbortHandler)
	}
	if len(rep.ToolCalls) > 0 {
		send(chunk(map[string]any{"tool_calls": toolCalls(rep.ToolCalls, true)}, nil))
	}
	send(chunk(map[string]any{}, finish))
	end := map[string]any{"id": "chatcmpl-llmtest", "object": "chat.completion.chunk", "created": 1700000000, "model": req.Model, "choices": []any{}, "usage": usage(rep)}
	send(end)
	fmt.Fprint(w, "data: [DONE]\n\n")
	if fl != nil {
		fl.Flush()
	}
}

func toolCalls(tcs []llm.ToolCall, indexed bool) []any {
	var out []any
	for i, tc := range tcs {
		m := map[string]any{"id": tc.ID, "type": "function", "function": map[string]any{"name": tc.Name, "arguments": tc.Arguments}}
		if indexed {
			m["index"] = i
		}
		out = append(out, m)
	}
	return out
}

func usage(r Reply) map[string]any {
	return map[string]any{"prompt_tokens": r.PromptTokens, "completion_tokens": r.CompletionTokens, "total_tokens": r.PromptTokens + r.CompletionTokens}
}

func writeError(w http.ResponseWriter, code int, msg string) {
	if msg == "" {
		msg = http.StatusText(code)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"message": msg, "type": "llmtest_error", "code": code}})
}

// contentText flattens a message content: a string or a list of text parts.
func contentText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) == nil {
		var b strings.Builder
		for _, p := range parts {
			b.WriteString(p.Text)
		}
		return b.String()
	}
	return ""
}

func estimate(s string) int { return max(1, len(s)/4) }

// split cuts s into pieces of about n runes.
func split(s string, n int) []string {
	r := []rune(s)
	var out []string
	for len(r) > 0 {
		k := min(n, len(r))
		out = append(out, string(r[:k]))
		r = r[k:]
	}
	return out
}
