package runtime

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/vibelife/vibe/knowledge"
	"github.com/vibelife/vibe/llm"
	"github.com/vibelife/vibe/skills"
)

// ServerOptions configure the HTTP API.
type ServerOptions struct {
	// Keys maps bearer keys to users; nil or empty requires Insecure.
	Keys *Keys
	// Insecure disables authentication (every request is user "dev").
	Insecure       bool
	MaxBodyBytes   int64
	RequestsPerMin int
	// TokensPerDay caps each user's model tokens a UTC day (0: no cap).
	TokensPerDay int64
	// FailedAuthPerMin is how many requests with a missing or wrong key a
	// client address may send a minute before it gets 429 (default 20;
	// negative: no limit). A valid key is never refused by it.
	FailedAuthPerMin int
	// TrustedProxies are the load balancers in front of the server
	// (serve.trusted_proxies): for a connection from one of them, the
	// client's address is the last address of X-Forwarded-For that is not
	// a trusted proxy. From any other peer X-Forwarded-For is ignored.
	TrustedProxies []netip.Prefix
	// CORSOrigins are the exact origins allowed to call the API from a
	// browser page served elsewhere; empty (the default) sends no CORS
	// header, so browsers refuse cross-origin calls.
	CORSOrigins []string
	// TurnTimeout bounds one turn (default 5 minutes).
	TurnTimeout time.Duration
	// BodyTimeout bounds reading a request body (default 30s); WriteTimeout
	// bounds writing one streamed event to a client that stopped reading
	// (default 30s).
	BodyTimeout  time.Duration
	WriteTimeout time.Duration
	// ShutdownGrace is how long Serve lets open streams finish once asked
	// to stop (default TurnTimeout plus 10s).
	ShutdownGrace time.Duration
	Now           func() time.Time
	// Logger receives one line per request (nil: none); LogContent adds
	// the turn's message and answer to it (off: logs hold no content).
	Logger     *slog.Logger
	LogContent bool
}

// Server is the HTTP API over an Agent.
type Server struct {
	agent *Agent
	opts  ServerOptions
	rate  *rateLimiter // per user
	fails *rateLimiter // failed logins, per client address
	mux   *http.ServeMux

	tokens tokenCounter // per user, today (when the store does not share them)

	// readyLogged is the last set of readiness problems logged.
	readyMu     sync.Mutex
	readyLogged string
}

// NewServer returns the HTTP handler of the API.
func NewServer(a *Agent, opts ServerOptions) (*Server, error) {
	if !opts.Insecure && (opts.Keys == nil || opts.Keys.Len() == 0) {
		return nil, errors.New("no API keys: give --keys FILE or VIBE_API_KEYS=key:user, or --insecure-dev for local development")
	}
	if opts.MaxBodyBytes <= 0 {
		opts.MaxBodyBytes = 1 << 20
	}
	if opts.TurnTimeout <= 0 {
		opts.TurnTimeout = 5 * time.Minute
	}
	if opts.BodyTimeout <= 0 {
		opts.BodyTimeout = 30 * time.Second
	}
	if opts.WriteTimeout <= 0 {
		opts.WriteTimeout = 30 * time.Second
	}
	if opts.ShutdownGrace <= 0 {
		opts.ShutdownGrace = opts.TurnTimeout + 10*time.Second
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.FailedAuthPerMin == 0 {
		opts.FailedAuthPerMin = 20
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Server{agent: a, opts: opts, mux: http.NewServeMux(),
		rate:  newRateLimiter(opts.RequestsPerMin, opts.Now),
		fails: newRateLimiter(opts.FailedAuthPerMin, opts.Now)}
	s.mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) { writeJSON(w, 200, map[string]string{"status": "ok"}) })
	s.mux.HandleFunc("GET /readyz", s.readyz)
	s.mux.HandleFunc("GET /api/status", s.auth(s.status))
	s.mux.HandleFunc("GET /api/skills", s.auth(s.listSkills))
	s.mux.HandleFunc("POST /api/chat", s.auth(s.chat))
	s.mux.HandleFunc("POST /api/tools/execute", s.auth(s.executeTool))
	s.mux.HandleFunc("GET /v1/models", s.auth(s.models))
	s.mux.HandleFunc("POST /v1/chat/completions", s.auth(s.completions))
	s.registerWeb()
	return s, nil
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	securityHeaders(w.Header())
	s.observe(w, r, http.HandlerFunc(s.route))
}

// apiCSP is the Content-Security-Policy of every response but the chat
// page's (pageCSP): a JSON body, an error or a redirect loads nothing and
// is framed by nobody.
const apiCSP = "default-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// securityHeaders sets the headers every response carries, whatever
// answers it (a handler, the mux's 404, 405 and redirects, the limiters'
// 429): no framing, no content sniffing, no referrer, and a CSP.
func securityHeaders(h http.Header) {
	h.Set("Content-Security-Policy", apiCSP)
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
}

// Metrics returns the metrics of the server and its agent; serve them on a
// listener of their own (Metrics.Handler), not on the API's.
func (s *Server) Metrics() *Metrics { return s.agent.metrics }

func (s *Server) route(w http.ResponseWriter, r *http.Request) {
	if origin := r.Header.Get("Origin"); origin != "" && s.corsAllowed(origin) {
		h := w.Header()
		h.Set("Access-Control-Allow-Origin", origin)
		h.Set("Access-Control-Expose-Headers", "X-Request-Id")
		h.Add("Vary", "Origin")
		if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
			h.Set("Access-Control-Allow-Methods", "GET, POST, PUT, DELETE")
			h.Set("Access-Control-Allow-Headers", "Authorization, Content-Type, X-Conversation-ID, X-Request-Id")
			h.Set("Access-Control-Max-Age", "600")
			w.WriteHeader(http.StatusNoContent)
			return
		}
	}
	s.mux.ServeHTTP(w, r)
}

// corsAllowed reports whether origin is one of serve.cors_origins (exact,
// scheme and host and port; "*" is not accepted: keys are credentials).
func (s *Server) corsAllowed(origin string) bool {
	for _, o := range s.opts.CORSOrigins {
		if strings.EqualFold(strings.TrimRight(o, "/"), origin) {
			return true
		}
	}
	return false
}

// ShutdownGrace returns how long Serve lets open streams finish.
func (s *Server) ShutdownGrace() time.Duration { return s.opts.ShutdownGrace }

// Serve answers connections on ln until ctx is done, then shuts down
// gracefully: it stops accepting, lets the open streams finish (up to
// ShutdownGrace, after which their turns are cancelled), and waits for the
// agent's background work. It returns nil after a clean shutdown.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	// No server-wide ReadTimeout or WriteTimeout: either would cut long
	// streams (a read deadline cancels the request context once it passes).
	// The body read and every streamed write get their own deadlines.
	turns, cancelTurns := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelTurns()
	hs := &http.Server{
		Handler:           s,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		BaseContext:       func(net.Listener) context.Context { return turns },
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.opts.ShutdownGrace)
	defer cancel()
	err := hs.Shutdown(shCtx)
	if err != nil {
		cancelTurns() // past the grace period: end the turns still running
		_ = hs.Close()
	}
	s.agent.Wait()
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("shutdown: streams still open after %s were cut", s.opts.ShutdownGrace)
	}
	return err
}

type apiError struct {
	Error struct {
		Message string `json:"message"`
		Type    string `json:"type"`
	} `json:"error"`
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}

// marshal encodes v as JSON without escaping <, > and & (streamed text and
// heading paths such as "A > B" stay readable).
func marshal(v any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	return bytes.TrimRight(buf.Bytes(), "\n")
}

func writeErr(w http.ResponseWriter, code int, typ, msg string) {
	var e apiError
	e.Error.Message, e.Error.Type = msg, typ
	writeJSON(w, code, e)
}

type userKey struct{}

func userOf(r *http.Request) string { u, _ := r.Context().Value(userKey{}).(string); return u }

// auth resolves the bearer key to a user id, applies the rate limit (per
// user, whatever the spelling of the header) and the body size limit. Failed
// logins are limited per client address (clientAddr): one that used up its
// allowance gets 429 for a missing or wrong key until it refills. A valid
// key is looked up first and never refused by it, so wrong keys sent from
// an address others share (a proxy, a NAT) lock nobody out.
func (s *Server) auth(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		user := "dev"
		if !s.opts.Insecure {
			u, found := "", false
			if tok, ok := bearerToken(r.Header.Get("Authorization")); ok {
				u, found = s.opts.Keys.Lookup(tok)
			}
			if !found {
				client := s.clientAddr(r)
				if !s.fails.allow(client) {
					w.Header().Set("Retry-After", "60")
					writeErr(w, http.StatusTooManyRequests, "rate_limit_exceeded", fmt.Sprintf("too many requests with a wrong API key from this address (more than %d a minute); wait a minute", s.opts.FailedAuthPerMin))
					return
				}
				w.Header().Set("WWW-Authenticate", `Bearer realm="vibe"`)
				writeErr(w, http.StatusUnauthorized, "invalid_api_key", "a valid API key is required: send Authorization: Bearer <key>")
				return
			}
			user = u
		}
		noteUser(r.Context(), user)
		if !s.allowUser(w, r, user) {
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, s.opts.MaxBodyBytes)
		h(w, r.WithContext(context.WithValue(r.Context(), userKey{}, user)))
	}
}

// clientAddr is the address of the request's client: the host of the
// connection's remote address (the port changes with every connection),
// or, when that is a trusted proxy, the last address of X-Forwarded-For
// that is not one (the one the nearest untrusted hop reached the proxies
// from; a client can put anything on the left of the list, never on the
// right).
func (s *Server) clientAddr(r *http.Request) string {
	host := r.RemoteAddr
	if h, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		host = h
	}
	peer, err := netip.ParseAddr(host)
	if err != nil || !s.trusted(peer) {
		return host
	}
	var hops []string
	for _, v := range r.Header.Values("X-Forwarded-For") {
		hops = append(hops, strings.Split(v, ",")...)
	}
	client := peer
	for i := len(hops) - 1; i >= 0; i-- {
		a, err := netip.ParseAddr(strings.TrimSpace(hops[i]))
		if err != nil {
			break // not an address: keep the last one the proxies vouch for
		}
		client = a.Unmap()
		if !s.trusted(client) {
			break
		}
	}
	return client.String()
}

// trusted reports whether a is one of serve.trusted_proxies.
func (s *Server) trusted(a netip.Addr) bool {
	a = a.Unmap()
	for _, p := range s.opts.TrustedProxies {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

func (s *Server) decodeBody(w http.ResponseWriter, r *http.Request, v any) bool {
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Now().Add(s.opts.BodyTimeout))
	dec := json.NewDecoder(r.Body)
	err := dec.Decode(v)
	if err == nil {
		err = trailing(dec)
	}
	if err != nil {
		// The connection is not reused: what is left of the body is not
		// worth waiting for.
		w.Header().Set("Connection", "close")
		if errors.Is(err, os.ErrDeadlineExceeded) {
			writeErr(w, http.StatusRequestTimeout, "invalid_request_error", fmt.Sprintf("request body not received within %s", s.opts.BodyTimeout))
			return false
		}
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			writeErr(w, http.StatusRequestEntityTooLarge, "invalid_request_error", fmt.Sprintf("request body larger than %d bytes (serve.max_body_bytes)", mbe.Limit))
			return false
		}
		writeErr(w, http.StatusBadRequest, "invalid_request_error", "request body is not valid JSON: "+err.Error())
		return false
	}
	// Clear the deadline: once passed, it would cancel a streaming turn.
	_ = rc.SetReadDeadline(time.Time{})
	return true
}

// errTrailing is a request body with more after its JSON value.
var errTrailing = errors.New("data after the JSON value; send one JSON object")

// trailing reports data after the value dec decoded (white space aside).
func trailing(dec *json.Decoder) error {
	if _, err := dec.Token(); err != io.EOF {
		if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
			var se *json.SyntaxError
			if !errors.As(err, &se) {
				return err // a read error: timeout, too large
			}
		}
		return errTrailing
	}
	return nil
}

// documentLister is the store capability /readyz uses to check each skill's
// theme is ingested (knowledge.Store satisfies it).
type documentLister interface {
	Documents(ctx context.Context, theme string) ([]knowledge.Document, error)
}

// readyz answers 200 {"status":"ready"} when the server can answer as
// configured and 503 {"status":"not_ready"} otherwise, and nothing else: it
// needs no key, so it names no store, connection, model or skill. What is
// wrong goes to the log (once for each new set of problems) and to the
// authenticated GET /api/status.
func (s *Server) readyz(w http.ResponseWriter, r *http.Request) {
	code, _, problems := s.readiness(r.Context())
	s.logReadiness(problems)
	status := "ready"
	if code != http.StatusOK {
		status = "not_ready"
	}
	body := map[string]string{"status": status}
	if s.opts.Insecure {
		// The sign-in page says that any key works: it does for anyone
		// who can reach the API, so this tells nobody anything more.
		body["auth"] = "insecure-dev"
	}
	writeJSON(w, code, body)
}

// status is GET /api/status: readyz with every check and what to do about
// a failing one.
func (s *Server) status(w http.ResponseWriter, r *http.Request) {
	code, body, problems := s.readiness(r.Context())
	s.logReadiness(problems)
	writeJSON(w, code, body)
}

// logReadiness logs the problems that make the server not ready when they
// differ from the last ones logged (a balancer probes every few seconds),
// and the return to ready.
func (s *Server) logReadiness(problems []string) {
	key := strings.Join(problems, "\n")
	s.readyMu.Lock()
	changed := key != s.readyLogged
	s.readyLogged = key
	s.readyMu.Unlock()
	if !changed {
		return
	}
	if len(problems) == 0 {
		s.opts.Logger.Info("ready")
		return
	}
	s.opts.Logger.Warn("not ready", "problems", problems)
}

// readiness runs the checks of /readyz: the skills loaded (at least one
// besides core), the memory store answering, the knowledge store answering
// (and each skill's theme holding documents, a warning when not), and the
// model configured or the retrieval-only mode. It returns the status code,
// the detailed body and the problems.
func (s *Server) readiness(ctx context.Context) (int, map[string]any, []string) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	a := s.agent
	checks := map[string]any{}
	var problems, warnings []string
	fail := func(name, msg string) {
		checks[name] = map[string]any{"ok": false, "error": msg}
		problems = append(problems, name+": "+msg)
	}

	var hs []skills.Header
	if err := a.Skills().Refresh(); err != nil {
		fail("skills", err.Error())
	} else if hs = a.Skills().Headers(); len(hs) == 0 {
		fail("skills", fmt.Sprintf("no skill under %s besides core: run `vibe build <theme>`", a.Skills().Root()))
	} else {
		checks["skills"] = map[string]any{"ok": true, "count": len(hs), "names": strings.Split(names(hs), ", ")}
	}

	if _, err := a.cfg.Memory.Profile(ctx, "readyz"); err != nil {
		fail("memory", "the memory store does not answer: "+err.Error())
	} else {
		checks["memory"] = map[string]any{"ok": true}
	}

	switch dl, ok := a.cfg.Searcher.(documentLister); {
	case a.cfg.Searcher == nil:
		fail("store", "no knowledge store: search_knowledge is unavailable; check store.driver / DATABASE_URL and restart")
	case !ok:
		checks["store"] = map[string]any{"ok": true}
	default:
		docs := map[string]int{}
		var err error
		for _, h := range hs {
			var ds []knowledge.Document
			if ds, err = dl.Documents(ctx, h.Theme); err != nil {
				break
			}
			docs[h.Theme] = len(ds)
			if len(ds) == 0 {
				warnings = append(warnings, fmt.Sprintf("skill %s: theme %s has no documents in the store, so search_knowledge finds nothing: run `vibe ingest %s`", h.Name, h.Theme, h.Theme))
			}
		}
		if err != nil {
			fail("store", "the knowledge store does not answer: "+err.Error())
		} else {
			checks["store"] = map[string]any{"ok": true, "documents": docs}
		}
	}

	mode := "model"
	if a.Offline() {
		mode = "retrieval-only"
		checks["model"] = map[string]any{"ok": true, "configured": false, "note": "no model configured: chat answers in retrieval-only mode (set OPENAI_API_KEY / OPENAI_BASE_URL or llm.provider: openai)"}
	} else {
		checks["model"] = map[string]any{"ok": true, "configured": true, "name": a.cfg.ModelName}
	}

	body := map[string]any{"status": "ready", "mode": mode, "checks": checks}
	if len(warnings) > 0 {
		body["warnings"] = warnings
	}
	code := http.StatusOK
	if len(problems) > 0 {
		body["status"], body["problems"] = "not_ready", problems
		code = http.StatusServiceUnavailable
	}
	return code, body, problems
}

// SkillInfo is one entry of GET /api/skills: the skill's front matter and
// the language it is written in ("zh" or "en"), which the chat page shows
// its labels in.
type SkillInfo struct {
	skills.Header
	Language string `json:"language,omitempty"`
}

func (s *Server) listSkills(w http.ResponseWriter, r *http.Request) {
	_ = s.agent.Skills().Refresh()
	out := []SkillInfo{}
	for _, h := range s.agent.Skills().Headers() {
		out = append(out, SkillInfo{Header: h, Language: s.agent.skillLanguage(h.Name)})
	}
	writeJSON(w, 200, map[string]any{"skills": out})
}

// ChatRequest is the body of POST /api/chat.
type ChatRequest struct {
	Message        string `json:"message"`
	ConversationID string `json:"conversation_id,omitempty"`
	Skill          string `json:"skill,omitempty"`
	// FormResponse answers the form a collect_info call showed: the
	// message is then made from it.
	FormResponse *FormResponse `json:"form_response,omitempty"`
	// Seed replays the random draws of a recorded turn (the done event's
	// seed).
	Seed *int64 `json:"seed,omitempty"`
	// ReplaceLast asks message in place of the conversation's last
	// question and its answer (the page's regenerate and edit).
	ReplaceLast bool `json:"replace_last,omitempty"`
}

// sse writes Server-Sent Events, each write bounded by a deadline so a
// client that stopped reading ends its turn instead of holding it.
type sse struct {
	w       http.ResponseWriter
	rc      *http.ResponseController
	timeout time.Duration
}

func (s *Server) newSSE(w http.ResponseWriter) *sse {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	return &sse{w: w, rc: http.NewResponseController(w), timeout: s.opts.WriteTimeout}
}

// end clears the write deadline: the server does not reset it, so it would
// otherwise fail the next response on a kept-alive connection.
func (s *sse) end() { _ = s.rc.SetWriteDeadline(time.Time{}) }

func (s *sse) send(event string, data []byte) error {
	_ = s.rc.SetWriteDeadline(time.Now().Add(s.timeout))
	if event != "" {
		if _, err := fmt.Fprintf(s.w, "event: %s\n", event); err != nil {
			return err
		}
	}
	if _, err := fmt.Fprintf(s.w, "data: %s\n\n", data); err != nil {
		return err
	}
	return s.rc.Flush()
}

func (s *Server) chat(w http.ResponseWriter, r *http.Request) {
	var req ChatRequest
	if !s.decodeBody(w, r, &req) {
		return
	}
	if req.FormResponse != nil {
		if len(req.FormResponse.Values) == 0 {
			writeErr(w, http.StatusBadRequest, "invalid_request_error", "form_response.values: give the form's fields and their values")
			return
		}
		if req.ConversationID == "" {
			writeErr(w, http.StatusBadRequest, "invalid_request_error", "form_response needs the conversation_id of the conversation that showed the form")
			return
		}
		if err := CheckConversationID(req.ConversationID); err != nil {
			writeErr(w, http.StatusBadRequest, "invalid_request_error", err.Error())
			return
		}
		// Before the conversation is opened (which would create it).
		if err := s.agent.checkFormShown(r.Context(), userOf(r), req.ConversationID); err != nil {
			switch {
			case errors.Is(err, ErrConversationNotFound):
				writeErr(w, http.StatusNotFound, "not_found", fmt.Sprintf("conversation %q not found: a form_response answers a form a conversation of yours showed", req.ConversationID))
			case errors.Is(err, ErrNoFormShown):
				writeErr(w, http.StatusConflict, "invalid_request_error", err.Error())
			default:
				writeErr(w, http.StatusInternalServerError, "server_error", err.Error())
			}
			return
		}
	} else if _, err := CheckInput(req.Message, s.agent.cfg.MaxInputChars); err != nil {
		s.agent.metrics.guard(guardInputRejected)
		writeErr(w, http.StatusBadRequest, "invalid_request_error", "message: "+err.Error())
		return
	}
	if req.Skill != "" {
		_ = s.agent.Skills().Refresh()
		// Several skills: their names joined by commas.
		names := splitSkills(req.Skill)
		if len(names) == 0 {
			names = []string{req.Skill}
		}
		for _, n := range names {
			if _, err := s.agent.Skills().Get(n); err != nil || n == skills.CoreName {
				writeErr(w, http.StatusNotFound, "not_found", fmt.Sprintf("skill %q: not found; GET /api/skills lists the skills", n))
				return
			}
		}
	}
	if req.ReplaceLast && req.ConversationID == "" {
		writeErr(w, http.StatusBadRequest, "invalid_request_error", "replace_last needs the conversation_id of the conversation whose last question it replaces")
		return
	}
	if req.ConversationID != "" && !s.openConversation(w, r, req.ConversationID, "omit conversation_id to start a new conversation") {
		return
	}
	if !s.allowTokens(w, r, userOf(r)) {
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), s.opts.TurnTimeout)
	defer cancel()
	defer s.streaming()()
	out := s.newSSE(w)
	defer out.end()
	_, err := s.turn(ctx, TurnRequest{UserID: userOf(r), ConversationID: req.ConversationID, Message: req.Message, Skill: req.Skill, Form: req.FormResponse, Seed: req.Seed, ReplaceLast: req.ReplaceLast}, func(ev Event) error {
		b := marshal(ev)
		return out.send(ev.Type, b)
	})
	if err != nil && r.Context().Err() == nil {
		b := marshal(Event{Type: EventError, Error: err.Error()})
		_ = out.send(EventError, b)
	}
}

// openConversation checks, before any response is written, that the user
// may continue the conversation id; it answers 404 when not (the same answer
// whether the id is another user's or not) and reports whether to go on.
func (s *Server) openConversation(w http.ResponseWriter, r *http.Request, id, hint string) bool {
	if err := CheckConversationID(id); err != nil {
		writeErr(w, http.StatusBadRequest, "invalid_request_error", err.Error())
		return false
	}
	err := s.agent.OpenConversation(r.Context(), userOf(r), id)
	switch {
	case err == nil:
		return true
	case errors.Is(err, ErrConversationNotFound):
		writeErr(w, http.StatusNotFound, "not_found", fmt.Sprintf("conversation %q not found: %s", id, hint))
	default:
		writeErr(w, http.StatusInternalServerError, "server_error", err.Error())
	}
	return false
}

// MaxConversationIDLen is the longest conversation id accepted, in bytes.
const MaxConversationIDLen = knowledge.MaxConversationIDLen

// CheckConversationID refuses a conversation id longer than
// MaxConversationIDLen bytes or holding control characters or invalid
// UTF-8 (ids are stored, and written into logs).
func CheckConversationID(id string) error { return knowledge.CheckConversationID(id) }

// ToolRequest is the body of POST /api/tools/execute.
type ToolRequest struct {
	Skill string          `json:"skill,omitempty"`
	Tool  string          `json:"tool"`
	Args  json.RawMessage `json:"args"`
	// Seed seeds a random tool's draw (its result's turn_seed replays it).
	Seed *int64 `json:"seed,omitempty"`
}

func (s *Server) executeTool(w http.ResponseWriter, r *http.Request) {
	var req ToolRequest
	if !s.decodeBody(w, r, &req) {
		return
	}
	if req.Skill != "" {
		if _, err := s.agent.Skills().Get(req.Skill); err != nil {
			writeErr(w, http.StatusNotFound, "not_found", err.Error())
			return
		}
	}
	events := []Event{}
	ctx := r.Context()
	if req.Seed != nil {
		ctx = WithSeed(ctx, *req.Seed)
	}
	res, err := s.agent.ExecuteTool(ctx, userOf(r), req.Skill, req.Tool, req.Args, func(e Event) error { events = append(events, e); return nil })
	if err != nil {
		code := http.StatusUnprocessableEntity
		if errors.Is(err, ErrToolUnavailable) {
			code = http.StatusNotFound
		}
		writeErr(w, code, "tool_error", err.Error())
		return
	}
	writeJSON(w, 200, map[string]any{"result": res, "events": events})
}

func (s *Server) models(w http.ResponseWriter, r *http.Request) {
	_ = s.agent.Skills().Refresh()
	created := s.opts.Now().Unix()
	data := []map[string]any{{"id": "vibe", "object": "model", "created": created, "owned_by": "vibe"}}
	for _, h := range s.agent.Skills().Headers() {
		data = append(data, map[string]any{"id": "vibe/" + h.Name, "object": "model", "created": created, "owned_by": "vibe"})
	}
	writeJSON(w, 200, map[string]any{"object": "list", "data": data})
}

type oaiMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// text returns the content as text (string or an array of text parts).
func (m oaiMessage) text() string {
	var s string
	if json.Unmarshal(m.Content, &s) == nil {
		return s
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	_ = json.Unmarshal(m.Content, &parts)
	var sb strings.Builder
	for _, p := range parts {
		if p.Type == "text" {
			sb.WriteString(p.Text)
		}
	}
	return sb.String()
}

type oaiRequest struct {
	Model         string       `json:"model"`
	Messages      []oaiMessage `json:"messages"`
	Stream        bool         `json:"stream"`
	StreamOptions struct {
		// IncludeUsage asks for a last chunk with the usage, as OpenAI
		// sends it: empty choices, before [DONE].
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	User string `json:"user,omitempty"`
	// Seed seeds the turn's random draws (OpenAI's seed parameter).
	Seed *int64 `json:"seed,omitempty"`
}

// completions is the OpenAI-compatible endpoint. The last user message is
// the turn and what comes before it the history. The state a conversation
// keeps between turns (active skill, protocol in progress, summary) lives in
// the stored conversation the X-Conversation-ID header names, or else is
// keyed by the client's transcript (TurnRequest.TranscriptScope), so a
// front-end resending the whole history continues its own chat and no other.
func (s *Server) completions(w http.ResponseWriter, r *http.Request) {
	var req oaiRequest
	if !s.decodeBody(w, r, &req) {
		return
	}
	skill := ""
	switch {
	case req.Model == "vibe" || req.Model == "":
	case strings.HasPrefix(req.Model, "vibe/"):
		skill = strings.TrimPrefix(req.Model, "vibe/")
		if _, err := s.agent.Skills().Get(skill); err != nil || skill == skills.CoreName {
			writeErr(w, http.StatusNotFound, "model_not_found", fmt.Sprintf("model %q: no skill %q; GET /v1/models lists the models", req.Model, skill))
			return
		}
	default:
		writeErr(w, http.StatusNotFound, "model_not_found", fmt.Sprintf("model %q: use \"vibe\" or \"vibe/<skill>\"; GET /v1/models lists them", req.Model))
		return
	}
	var last string
	lastAt := -1
	for i, m := range req.Messages {
		if m.Role == "user" {
			last, lastAt = m.text(), i
		}
	}
	// The client holds the conversation: what came before the last user
	// message is the history the model sees (edits and regenerations
	// included).
	transcript := []llm.Message{}
	for _, m := range req.Messages[:max(lastAt, 0)] {
		if m.Role == "user" || m.Role == "assistant" {
			transcript = append(transcript, llm.Message{Role: m.Role, Content: m.text()})
		}
	}
	if strings.TrimSpace(last) == "" {
		writeErr(w, http.StatusBadRequest, "invalid_request_error", "messages: at least one user message with text is required")
		return
	}
	if _, err := CheckInput(last, s.agent.cfg.MaxInputChars); err != nil {
		s.agent.metrics.guard(guardInputRejected)
		writeErr(w, http.StatusBadRequest, "invalid_request_error", "messages: "+err.Error())
		return
	}
	model := req.Model
	if model == "" {
		model = "vibe"
	}
	turn := TurnRequest{UserID: userOf(r), Message: last, Skill: skill, Transcript: transcript, Seed: req.Seed}
	if turn.ConversationID = r.Header.Get("X-Conversation-ID"); turn.ConversationID == "" {
		turn.TranscriptScope = model
	} else if !s.openConversation(w, r, turn.ConversationID, "send another X-Conversation-ID, or none") {
		return
	}
	if !s.allowTokens(w, r, userOf(r)) {
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), s.opts.TurnTimeout)
	defer cancel()
	defer s.streaming()()
	id := randomID("chatcmpl-")
	created := s.opts.Now().Unix()
	// usage is the done event's: the tokens of the turn's model calls
	// (zeros in retrieval-only mode, which calls none).
	var usage Usage
	// citations are the answer's sources, from its citations event: a
	// "citations" field of the message (non-streaming) or of the last
	// delta before the finish (streaming), which OpenAI clients keep among
	// the fields they do not know.
	citations := []Citation{}
	noteUsage := func(ev Event) {
		if ev.Type == EventDone && ev.Usage != nil {
			usage = *ev.Usage
		}
		if ev.Type == EventCitations {
			citations = ev.Citations
		}
	}
	if !req.Stream {
		var sb strings.Builder
		_, err := s.turn(ctx, turn, func(ev Event) error {
			noteUsage(ev)
			if ev.Type == EventCorrection {
				// The judge changed text already sent: the reply is the
				// corrected answer alone.
				sb.Reset()
				sb.WriteString(ev.Content)
				return nil
			}
			sb.WriteString(EventText(ev))
			return nil
		})
		if err != nil {
			writeErr(w, http.StatusInternalServerError, "server_error", err.Error())
			return
		}
		writeJSON(w, 200, map[string]any{
			"id": id, "object": "chat.completion", "created": created, "model": model,
			"choices": []map[string]any{{"index": 0, "message": map[string]any{"role": "assistant", "content": sb.String(), "citations": citations}, "finish_reason": "stop"}},
			"usage":   usage,
		})
		return
	}
	out := s.newSSE(w)
	defer out.end()
	withUsage := req.StreamOptions.IncludeUsage
	send := func(choices []map[string]any, u *Usage) error {
		c := map[string]any{"id": id, "object": "chat.completion.chunk", "created": created, "model": model, "choices": choices}
		if withUsage {
			// As OpenAI: null on every chunk but the last.
			c["usage"] = u
		}
		return out.send("", marshal(c))
	}
	chunk := func(delta map[string]any, finish any) error {
		return send([]map[string]any{{"index": 0, "delta": delta, "finish_reason": finish}}, nil)
	}
	if err := chunk(map[string]any{"role": "assistant", "content": ""}, nil); err != nil {
		return
	}
	_, err := s.turn(ctx, turn, func(ev Event) error {
		noteUsage(ev)
		if t := EventText(ev); t != "" {
			return chunk(map[string]any{"content": t}, nil)
		}
		return nil
	})
	if err != nil {
		if r.Context().Err() != nil {
			return
		}
		var e apiError
		e.Error.Message, e.Error.Type = err.Error(), "server_error"
		b := marshal(e)
		_ = out.send("", b)
		return
	}
	if len(citations) > 0 {
		if err := chunk(map[string]any{"citations": citations}, nil); err != nil {
			return
		}
	}
	_ = chunk(map[string]any{}, "stop")
	if withUsage {
		_ = send([]map[string]any{}, &usage)
	}
	_ = out.send("", []byte("[DONE]"))
}
