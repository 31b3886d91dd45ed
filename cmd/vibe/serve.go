package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode"

	"github.com/spf13/cobra"
	"go.opentelemetry.io/otel/trace"

	"github.com/vibelife/vibe/internal/iostreams"
	"github.com/vibelife/vibe/knowledge"
	"github.com/vibelife/vibe/llm"
	"github.com/vibelife/vibe/runtime"
	"github.com/vibelife/vibe/skills"
	"github.com/vibelife/vibe/workspace"
)

// ServeOptions are the flags of `vibe serve`.
type ServeOptions struct {
	IO          *iostreams.IOStreams
	Addr        string
	KeysFile    string
	InsecureDev bool
	// listening, when set, is told the address once the server listens
	// (tests use it to find a port chosen with --addr 127.0.0.1:0).
	listening func(net.Addr)
}

func newServeCmd(a *app) *cobra.Command {
	opts := &ServeOptions{IO: a.io}
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the agent runtime over the built skills (HTTP API)",
		Long: `Serve the skills of the workspace to chat clients:

  POST /api/chat               Server-Sent Events: content, tool_call, tool_result, card, form, done, error
  POST /v1/chat/completions    OpenAI-compatible; model "vibe" or "vibe/<skill>"
  GET  /v1/models, /api/skills, /healthz, /readyz (ready or not only)
  GET  /api/status             readiness with its detail (key needed)
  POST /api/tools/execute      run one tool: {"skill":..., "tool":..., "args":{...}}

Every request needs "Authorization: Bearer <key>". Keys map to user ids:
--keys FILE (one "KEY USER_ID" per line) or VIBE_API_KEYS=key:user,key:user.
--insecure-dev turns authentication off for local development.

With no model configured (llm.provider: offline, or no OPENAI_API_KEY /
OPENAI_BASE_URL) chat runs in a labelled retrieval-only mode.

Operations (docs/operations.md): one log line per request on stderr
(serve.log_format text or json; X-Request-Id is kept or generated and
returned; no message content unless serve.log_content), Prometheus metrics at
/metrics on a listener of their own (serve.metrics_addr, off by default), and
OpenTelemetry traces over OTLP/HTTP when serve.otlp_endpoint or
OTEL_EXPORTER_OTLP_ENDPOINT is set (off by default).`,
		Example: `  VIBE_API_KEYS=s3cret:alice vibe serve
  vibe serve --addr 0.0.0.0:8080 --keys keys.txt
  vibe serve --insecure-dev
  VIBE_SERVE_METRICS_ADDR=127.0.0.1:9464 VIBE_SERVE_LOG_FORMAT=json vibe serve --keys keys.txt`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.runServe(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Addr, "addr", "", "listen address HOST:PORT (default serve.addr, loopback)")
	cmd.Flags().StringVar(&opts.KeysFile, "keys", "", "API keys file: one `KEY USER_ID` per line")
	cmd.Flags().BoolVar(&opts.InsecureDev, "insecure-dev", false, "disable authentication (local development only)")
	return cmd
}

// newAgent wires the runtime: skills of the workspace, the model (or none:
// offline), the knowledge store for search and the memory. The returned
// closer releases the store.
func (a *app) newAgent(ctx context.Context) (*runtime.Agent, func(), error) {
	return a.newAgentWith(ctx, agentOptions{})
}

// agentOptions adjust the runtime for other uses than serving.
type agentOptions struct {
	// ephemeral keeps conversations in memory, never in the store.
	ephemeral bool
	// wrapModel wraps the chat model (vibe eval's answer cache).
	wrapModel func(runtime.Model) runtime.Model
	// quiet drops the notes about the mode.
	quiet bool
	// tracerProvider records the runtime's spans (nil: none).
	tracerProvider trace.TracerProvider
	// requireStore makes a store that cannot be opened an error (vibe
	// serve): replicas must never split into private in-memory memories.
	requireStore bool
}

func (a *app) newAgentWith(ctx context.Context, opt agentOptions) (*runtime.Agent, func(), error) {
	ws, err := a.workspace()
	if err != nil {
		return nil, nil, err
	}
	cfg, err := a.config()
	if err != nil {
		return nil, nil, err
	}
	set, err := skills.Open(ws.SkillsRoot(), skills.Options{OnError: func(dir string, err error) {
		fmt.Fprintf(a.io.ErrOut, "warning: skipping skill %q: %s\n", dir, logSafe(err.Error()))
	}})
	if err != nil {
		return nil, nil, err
	}
	rc := runtime.Config{
		Skills: set, Memory: runtime.NewMemStore(),
		MaxSteps: cfg.Serve.MaxSteps, MaxInputChars: cfg.Serve.MaxInputChars, Judge: cfg.Serve.Judge,
		SummaryEvery: cfg.Serve.SummaryEvery, History: cfg.Serve.HistoryMessages,
		ToolTimeout: cfg.Serve.ToolTimeout, PluginDir: ws.Root, Now: a.now, ToolCacheSize: cfg.Serve.ToolCache,
		TracerProvider:    opt.tracerProvider,
		SkillTokens:       cfg.Check.MaxSkillTokens,
		PluginOutputBytes: cfg.Serve.PluginOutputBytes, Getenv: a.getenv, Logger: a.log,
		// serve.command_plugins: [] (or null) refuses every command plugin.
		CommandPluginSkills: append([]string{}, cfg.Serve.CommandPlugins...),
	}
	rc.Dictionary = a.userDictionary()
	if cfg.Serve.WebSearch {
		p, err := searchProvider(cfg)
		if err != nil {
			return nil, nil, withExit(exitError, withHint(fmt.Errorf("serve.web_search is on but the web search cannot be used: %w", err), searchHint))
		}
		rc.WebSearch = p
	}
	closer := func() {}
	if st, err := a.openStore(ctx); err != nil && opt.requireStore {
		return nil, nil, storeOpenError(cfg, err)
	} else if err != nil {
		fmt.Fprintf(a.io.ErrOut, "warning: no knowledge store (%v); search_knowledge is unavailable, rules still work\n", err)
	} else {
		rc.Searcher = st
		if c, ok := st.(interface{ Close() error }); ok {
			closer = func() { _ = c.Close() }
		}
		if mem, ok := st.(knowledge.MemoryStore); ok && !opt.ephemeral {
			rc.Memory = mem
		}
		if emb, err := a.openEmbedder(ctx); err == nil {
			rc.Embedder = emb
		}
	}
	switch {
	case a.chatModel != nil:
		rc.Model = a.chatModel
	case cfg.LLMEnabled():
		model := chatModelName(cfg)
		// One request per conversation step: the concurrency bound is the
		// number of turns in flight, not llm.max_concurrency (a build setting).
		count, tokenizer := tokenCounter(model)
		rc.Model = llm.New(llm.Options{BaseURL: cfg.LLM.BaseURL, APIKey: cfg.LLM.APIKey, Model: model,
			MaxConcurrency: 256, Timeout: cfg.LLM.Timeout, MaxRetries: cfg.LLM.MaxRetries,
			CountTokens: count, Tokenizer: tokenizer})
		rc.ModelName = model
	}
	if rc.Model != nil && opt.wrapModel != nil {
		rc.Model = opt.wrapModel(rc.Model)
	}
	if _, ok := rc.Memory.(*runtime.MemStore); ok && !opt.quiet {
		fmt.Fprintln(a.io.ErrOut, "note: without a store, conversations and profiles are kept in memory for this process only")
	}
	ag, err := runtime.New(rc)
	if err != nil {
		closer()
		return nil, nil, err
	}
	if ag.Offline() && !opt.quiet {
		fmt.Fprintln(a.io.ErrOut, "note: no model configured: chat runs in retrieval-only mode (set OPENAI_API_KEY / OPENAI_BASE_URL or llm.provider: openai)")
	}
	return ag, closer, nil
}

// apiKeys reads --keys FILE and VIBE_API_KEYS.
func (a *app) apiKeys(file string) (*runtime.Keys, error) {
	k := &runtime.Keys{}
	if file != "" {
		f, err := os.Open(file)
		if err != nil {
			return nil, withHint(fmt.Errorf("keys file: %w", err), "give --keys a file with one `KEY USER_ID` per line")
		}
		defer f.Close()
		if err := runtime.ParseKeysFile(f, file, k); err != nil {
			return nil, err
		}
	}
	if env := a.getenv("VIBE_API_KEYS"); env != "" {
		if err := runtime.ParseKeysEnv(env, k); err != nil {
			return nil, err
		}
	}
	return k, nil
}

// newServer builds the HTTP API of `vibe serve` over the workspace: the keys,
// the agent and the server options from vibe.yaml. The closer waits for the
// agent's background work and releases the store.
func (a *app) newServer(ctx context.Context, opts *ServeOptions) (*runtime.Server, *runtime.Agent, func(), error) {
	cfg, err := a.config()
	if err != nil {
		return nil, nil, nil, err
	}
	keys, err := a.apiKeys(opts.KeysFile)
	if err != nil {
		return nil, nil, nil, err
	}
	if keys.Len() == 0 && !opts.InsecureDev {
		return nil, nil, nil, withHint(errors.New("no API keys configured"), "give --keys FILE (`KEY USER_ID` per line) or VIBE_API_KEYS=key:user, or --insecure-dev for local development")
	}
	if opts.InsecureDev {
		fmt.Fprintln(a.io.ErrOut, "WARNING: --insecure-dev: authentication is OFF; every request acts as user \"dev\". Never expose this server.")
	}
	tp, stopTracing, err := a.newTracerProvider(ctx, cfg.Serve.OTLPEndpoint)
	if err != nil {
		return nil, nil, nil, err
	}
	ag, closeAgent, err := a.newAgentWith(ctx, agentOptions{tracerProvider: tp, requireStore: true})
	if err != nil {
		stopTracing()
		return nil, nil, nil, err
	}
	closeStore := func() { closeAgent(); stopTracing() }
	var proxies []netip.Prefix
	for _, p := range cfg.Serve.TrustedProxies {
		pfx, err := workspace.ParseCIDROrIP(p)
		if err != nil { // vibe.yaml's validation said so already
			closeStore()
			return nil, nil, nil, fmt.Errorf("serve.trusted_proxies %q: %w", p, err)
		}
		proxies = append(proxies, pfx)
	}
	srv, err := runtime.NewServer(ag, runtime.ServerOptions{Keys: keys, Insecure: opts.InsecureDev, TrustedProxies: proxies,
		MaxBodyBytes: cfg.Serve.MaxBodyBytes, RequestsPerMin: cfg.Serve.RequestsPerMin, TokensPerDay: cfg.Serve.TokensPerDay, TurnTimeout: cfg.Serve.TurnTimeout, Now: a.now,
		CORSOrigins: cfg.Serve.CORSOrigins, Logger: a.requestLogger(ctx, cfg.Serve.LogFormat), LogContent: cfg.Serve.LogContent})
	if err != nil {
		closeStore()
		return nil, nil, nil, err
	}
	return srv, ag, func() { ag.Wait(); closeStore() }, nil
}

func (a *app) runServe(ctx context.Context, opts *ServeOptions) error {
	cfg, err := a.config()
	if err != nil {
		return err
	}
	srv, ag, closeServer, err := a.newServer(ctx, opts)
	if err != nil {
		return err
	}
	defer closeServer()
	addr := opts.Addr
	if addr == "" {
		addr = cfg.Serve.Addr
	}
	if addr == "" {
		addr = "127.0.0.1:8080"
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return withHint(fmt.Errorf("listen %s: %w", addr, err), "choose another --addr HOST:PORT")
	}
	if opts.InsecureDev && !isLoopback(ln.Addr()) {
		fmt.Fprintf(a.io.ErrOut, "WARNING: --insecure-dev on %s, which is reachable from other machines: anyone who can connect acts as user \"dev\".\n", ln.Addr())
	}
	fmt.Fprintf(a.io.ErrOut, "vibe serve: listening on http://%s (%d skills)\n", ln.Addr(), len(ag.Skills().Headers()))
	if opts.listening != nil {
		opts.listening(ln.Addr())
	}
	_, stopMetrics, err := a.serveMetrics(cfg.Serve.MetricsAddr, srv)
	if err != nil {
		return err
	}
	defer stopMetrics()
	if ctx == nil {
		ctx = context.Background()
	}
	sigCtx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	served := make(chan error, 1)
	go func() { served <- srv.Serve(sigCtx, ln) }()
	select {
	case err := <-served:
		return err
	case <-sigCtx.Done():
	}
	fmt.Fprintf(a.io.ErrOut, "vibe serve: shutting down, letting open streams finish (up to %s)\n", srv.ShutdownGrace())
	if err := <-served; err != nil {
		return err
	}
	fmt.Fprintln(a.io.ErrOut, "vibe serve: stopped")
	return nil
}

// requestLogger is the logger of the request log: one line per request on
// stderr, text or JSON (serve.log_format), at the level of --log-level.
func (a *app) requestLogger(ctx context.Context, format string) *slog.Logger {
	if ctx == nil {
		ctx = context.Background()
	}
	lvl := slog.LevelWarn
	switch {
	case a.log == nil || a.log.Enabled(ctx, slog.LevelDebug):
		lvl = slog.LevelDebug
	case a.log.Enabled(ctx, slog.LevelInfo):
		lvl = slog.LevelInfo
	}
	ho := &slog.HandlerOptions{Level: lvl}
	if format == "json" {
		return slog.New(slog.NewJSONHandler(a.io.ErrOut, ho))
	}
	return slog.New(slog.NewTextHandler(a.io.ErrOut, ho))
}

// serveMetrics serves GET /metrics on addr (serve.metrics_addr), a listener
// of its own so the metrics are never reachable through the API's address
// by accident; "" serves none. It returns the address listened on and the
// function that stops it.
func (a *app) serveMetrics(addr string, srv *runtime.Server) (net.Addr, func(), error) {
	if addr == "" {
		return nil, func() {}, nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, nil, withHint(fmt.Errorf("metrics listener serve.metrics_addr %s: %w", addr, err), "choose another serve.metrics_addr HOST:PORT, or \"\" for none")
	}
	if !isLoopback(ln.Addr()) {
		fmt.Fprintf(a.io.ErrOut, "note: metrics on %s are reachable from other machines; keep that port behind a firewall\n", ln.Addr())
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", srv.Metrics().Handler())
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = hs.Serve(ln) }()
	fmt.Fprintf(a.io.ErrOut, "vibe serve: metrics on http://%s/metrics\n", ln.Addr())
	return ln.Addr(), func() { _ = hs.Close() }, nil
}

// isLoopback reports whether addr only accepts local connections.
func isLoopback(addr net.Addr) bool {
	tcp, ok := addr.(*net.TCPAddr)
	return ok && tcp.IP.IsLoopback()
}

// logSafe escapes the control characters of s (as in a Go string literal)
// so a name from a file or a request, which may hold a newline, cannot
// forge a log line; other text, Chinese included, stays as it is.
func logSafe(s string) string {
	if strings.IndexFunc(s, unicode.IsControl) < 0 {
		return s
	}
	q := strconv.Quote(s)
	return q[1 : len(q)-1]
}
