package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/vibelife/vibe/internal/iostreams"
	"github.com/vibelife/vibe/knowledge"
	"github.com/vibelife/vibe/llm"
	"github.com/vibelife/vibe/runtime"
	"github.com/vibelife/vibe/skills"
)

// ServeOptions are the flags of `vibe serve`.
type ServeOptions struct {
	IO          *iostreams.IOStreams
	Addr        string
	KeysFile    string
	InsecureDev bool
}

func newServeCmd(a *app) *cobra.Command {
	opts := &ServeOptions{IO: a.io}
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the agent runtime over the built skills (HTTP API)",
		Long: `Serve the skills of the workspace to chat clients:

  POST /api/chat               Server-Sent Events: content, tool_call, tool_result, card, form, done, error
  POST /v1/chat/completions    OpenAI-compatible; model "vibe" or "vibe/<skill>"
  GET  /v1/models, /api/skills, /healthz, /readyz
  POST /api/tools/execute      run one tool: {"skill":..., "tool":..., "args":{...}}

Every request needs "Authorization: Bearer <key>". Keys map to user ids:
--keys FILE (one "KEY USER_ID" per line) or VIBE_API_KEYS=key:user,key:user.
--insecure-dev turns authentication off for local development.

With no model configured (llm.provider: offline, or no OPENAI_API_KEY /
OPENAI_BASE_URL) chat runs in a labelled retrieval-only mode.`,
		Example: `  VIBE_API_KEYS=s3cret:alice vibe serve
  vibe serve --addr 0.0.0.0:8080 --keys keys.txt
  vibe serve --insecure-dev`,
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
	ws, err := a.workspace()
	if err != nil {
		return nil, nil, err
	}
	cfg, err := a.config()
	if err != nil {
		return nil, nil, err
	}
	set, err := skills.Open(ws.SkillsRoot(), skills.Options{OnError: func(dir string, err error) {
		fmt.Fprintf(a.io.ErrOut, "warning: skipping skill %s: %v\n", dir, err)
	}})
	if err != nil {
		return nil, nil, err
	}
	rc := runtime.Config{
		Skills: set, Memory: runtime.NewMemStore(),
		MaxSteps: cfg.Serve.MaxSteps, MaxInputChars: cfg.Serve.MaxInputChars,
		SummaryEvery: cfg.Serve.SummaryEvery, History: cfg.Serve.HistoryMessages,
		ToolTimeout: cfg.Serve.ToolTimeout, Now: a.now,
	}
	closer := func() {}
	if st, err := a.openStore(ctx); err != nil {
		fmt.Fprintf(a.io.ErrOut, "warning: no knowledge store (%v); search_knowledge is unavailable, rules still work\n", err)
	} else {
		rc.Searcher = st
		if c, ok := st.(interface{ Close() error }); ok {
			closer = func() { _ = c.Close() }
		}
		if mem, ok := st.(knowledge.MemoryStore); ok {
			rc.Memory = mem
		}
		if emb, err := a.openEmbedder(ctx); err == nil {
			rc.Embedder = emb
		}
	}
	baseURL, apiKey := cfg.LLM.BaseURL, cfg.LLM.APIKey
	if baseURL == "" {
		baseURL = a.getenv("OPENAI_BASE_URL")
	}
	if apiKey == "" {
		apiKey = a.getenv("OPENAI_API_KEY")
	}
	online := cfg.LLM.Provider == "openai" || (cfg.LLM.Provider == "" && (baseURL != "" || apiKey != ""))
	if online {
		model := cfg.LLM.ChatModel
		if model == "" {
			model = cfg.LLM.Model
		}
		rc.Model = llm.New(llm.Options{BaseURL: baseURL, APIKey: apiKey, Model: model, MaxConcurrency: 64})
		rc.ModelName = model
	}
	if _, ok := rc.Memory.(*runtime.MemStore); ok {
		fmt.Fprintln(a.io.ErrOut, "note: conversations and profiles are kept in memory for this process (the store has no memory tables yet)")
	}
	ag, err := runtime.New(rc)
	if err != nil {
		closer()
		return nil, nil, err
	}
	if ag.Offline() {
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

func (a *app) runServe(ctx context.Context, opts *ServeOptions) error {
	cfg, err := a.config()
	if err != nil {
		return err
	}
	keys, err := a.apiKeys(opts.KeysFile)
	if err != nil {
		return err
	}
	if keys.Len() == 0 && !opts.InsecureDev {
		return withHint(errors.New("no API keys configured"), "give --keys FILE (`KEY USER_ID` per line) or VIBE_API_KEYS=key:user, or --insecure-dev for local development")
	}
	if opts.InsecureDev {
		fmt.Fprintln(a.io.ErrOut, "WARNING: --insecure-dev: authentication is OFF; every request acts as user \"dev\". Never expose this server.")
	}
	ag, closeStore, err := a.newAgent(ctx)
	if err != nil {
		return err
	}
	defer closeStore()
	srv, err := runtime.NewServer(ag, runtime.ServerOptions{Keys: keys, Insecure: opts.InsecureDev,
		MaxBodyBytes: cfg.Serve.MaxBodyBytes, RequestsPerMin: cfg.Serve.RequestsPerMin, TurnTimeout: cfg.Serve.TurnTimeout, Now: a.now})
	if err != nil {
		return err
	}
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
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute}
	fmt.Fprintf(a.io.ErrOut, "vibe serve: listening on http://%s (%d skills)\n", ln.Addr(), len(ag.Skills().Headers()))
	if ctx == nil {
		ctx = context.Background()
	}
	sigCtx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-sigCtx.Done():
	}
	fmt.Fprintln(a.io.ErrOut, "vibe serve: shutting down, letting open streams finish (up to 30s)")
	shCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	return hs.Shutdown(shCtx)
}
