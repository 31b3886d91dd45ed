package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/vibelife/vibe/convert"
	"github.com/vibelife/vibe/internal/atomicfile"
	"github.com/vibelife/vibe/internal/iostreams"
	"github.com/vibelife/vibe/internal/procmem"
	"github.com/vibelife/vibe/llm"
	"github.com/vibelife/vibe/runtime"
	"github.com/vibelife/vibe/workspace"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

// app is what every command gets: streams, the environment, the global flags,
// and lazily the workspace and its configuration. It is the only place that
// wires implementations together (see the per-command files).
type app struct {
	io     *iostreams.IOStreams
	getenv func(string) string
	now    func() time.Time

	// global flags
	workspaceDir string
	logLevel     string
	quiet        bool
	verbose      bool

	// buildLLM and buildBudget are `vibe build --llm/--budget`, for its
	// extract stage.
	buildLLM    string
	buildBudget float64
	// buildRetryFailed is `vibe build --retry-failed`: the curate stage
	// converts again the files whose conversion it remembers failing.
	buildRetryFailed bool
	// buildMetricsFile is `vibe build --metrics-file`; llmClients are the
	// LLM clients the build's stages made, whose usage it reports.
	buildMetricsFile string
	llmClients       []*llm.Client

	ws         *workspace.Workspace
	cfg        *workspace.Config
	cfgSources workspace.Sources
	log        *slog.Logger

	// cmdPath is the running command ("vibe build"), for messages that
	// name the command to run; newTheme is set by the commands that may
	// start a theme (curate), which get no nearest-theme refusal.
	cmdPath  string
	newTheme bool

	// chatModel, when set, is the model vibe serve and vibe chat use instead
	// of the configured endpoint (benchmarks give an instant one).
	chatModel runtime.Model

	// pdfium is the PDF engine convert and curate share. run creates it
	// (it starts only when a PDF is converted) and closes it when the
	// command ends; when nil, each conversion run starts its own.
	pdfium *convert.PDFium
}

// workspace opens the workspace named by --workspace, VIBE_WORKSPACE or the
// current directory.
func (a *app) workspace() (*workspace.Workspace, error) {
	if a.ws != nil {
		return a.ws, nil
	}
	dir := a.workspaceDir
	if dir == "" {
		dir = a.getenv("VIBE_WORKSPACE")
	}
	ws, err := workspace.Open(dir)
	if err != nil {
		return nil, err
	}
	if err := workspace.CheckNotSourceTree(ws.Root, dir != ""); err != nil {
		return nil, withExit(exitError, withHint(err, "run vibe in a workspace of its own (`mkdir ~/bakery && cd ~/bakery`), or name one with --workspace DIR (or VIBE_WORKSPACE)"))
	}
	a.ws = ws
	return ws, nil
}

// config loads vibe.yaml and the environment once. Commands apply their own
// flags on top of the returned value.
func (a *app) config() (*workspace.Config, error) {
	if a.cfg != nil {
		return a.cfg, nil
	}
	ws, err := a.workspace()
	if err != nil {
		return nil, err
	}
	cfg, src, err := workspace.LoadConfigSources(ws.ConfigPath(), a.getenv)
	if err != nil {
		return nil, withExit(exitError, withHint(err, "fix it in vibe.yaml (or the environment variable named); `vibe config --keys` lists every key and its environment variable"))
	}
	if src.Of("store.driver") == "env DATABASE_URL" {
		// A stray DATABASE_URL in the shell must not move vibe silently.
		fmt.Fprintf(a.io.ErrOut, "note: DATABASE_URL is set in the environment: using the PostgreSQL store at %s (set VIBE_STORE_DRIVER=sqlite to keep the embedded store)\n", redactURL(cfg.Store.DatabaseURL))
	}
	a.cfg, a.cfgSources = &cfg, src
	return a.cfg, nil
}

// theme validates args[0] as a theme name and opens the workspace.
func (a *app) theme(args []string) (*workspace.Workspace, string, error) {
	if len(args) == 0 {
		return nil, "", flagErrorf("a theme name is required, e.g. `vibe build bazi`")
	}
	if err := workspace.ValidateTheme(args[0]); err != nil {
		return nil, "", flagErrorf("%v", err)
	}
	ws, err := a.workspace()
	if err != nil {
		return nil, "", err
	}
	if !a.newTheme {
		if err := nearThemeError(ws, a.cmdPath, args[0]); err != nil {
			return nil, "", err
		}
	}
	return ws, args[0], nil
}

func (a *app) setupLogger() error {
	if a.quiet && a.verbose {
		return flagErrorf("-q/--quiet and -v/--verbose contradict each other: give one")
	}
	var lvl slog.Level
	level := strings.ToLower(a.logLevel)
	if a.verbose && (level == "" || level == "info") {
		level = "debug"
	}
	switch level {
	case "debug":
		lvl = slog.LevelDebug
	case "", "info":
		lvl = slog.LevelInfo
	case "warn", "warning":
		lvl = slog.LevelWarn
	case "error":
		lvl = slog.LevelError
	default:
		return flagErrorf("--log-level %q: use debug, info, warn or error", a.logLevel)
	}
	if a.quiet && lvl < slog.LevelWarn {
		lvl = slog.LevelWarn
	}
	var w io.Writer = a.io.ErrOut
	a.log = slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: lvl}))
	return nil
}

// newRootCmd builds the command tree.
func newRootCmd(a *app) *cobra.Command {
	root := &cobra.Command{
		Use:   "vibe",
		Short: "Turn a pile of books on a theme into an expert skill an agent can use",
		Long: `vibe builds expert skills from books and serves an agent that uses them.

The knowledge build runs in stages, each also a command of its own:

  curate     gather the theme's sources into knowledge/<theme>/source/
  convert    PDF, EPUB, DOCX, HTML, TXT -> clean Markdown in knowledge/<theme>/converted/
  ingest     chunk, embed and store the Markdown for hybrid search
  extract    distil sop.yaml, patterns.yaml and rules.yaml, every item cited
  integrate  write SKILL.md, tools.yaml and meta.json, and check them

'vibe build <theme>' runs them all; unchanged input costs nothing on a rebuild.
Without an LLM endpoint configured every stage runs offline with deterministic
local providers, and says so.`,
		Example: `  # Build the demo theme shipped in examples/
  vibe --workspace demo build demo

  # Gather sources, then build
  vibe curate bazi --from ~/books/bazi/ --from 'https://example.org/ziping.html'
  vibe build bazi

  # Search the built knowledge
  vibe search bazi "用神" -k 5`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       version,
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			a.cmdPath = cmd.CommandPath()
			return a.setupLogger()
		},
	}
	root.SetFlagErrorFunc(flagErrorWithSuggestion)
	root.SetOut(a.io.Out)
	root.SetErr(a.io.ErrOut)
	root.SetIn(a.io.In)
	pf := root.PersistentFlags()
	pf.StringVarP(&a.workspaceDir, "workspace", "w", "", "workspace directory (default: $VIBE_WORKSPACE or the current directory)")
	pf.StringVar(&a.logLevel, "log-level", "info", "log level: debug, info, warn, error")
	pf.BoolVarP(&a.quiet, "quiet", "q", false, "only warnings and errors; no progress")
	pf.BoolVarP(&a.verbose, "verbose", "v", false, "more detail: debug logging (same as --log-level debug); the version is --version")

	for _, c := range commands(a) {
		root.AddCommand(c)
	}
	var named func(c *cobra.Command)
	named = func(c *cobra.Command) {
		namedArgs(c)
		for _, sub := range c.Commands() {
			named(sub)
		}
	}
	named(root)
	return root
}

// run executes the command line and returns the process exit status.
func run(ctx context.Context, ios *iostreams.IOStreams, args []string, getenv func(string) string) int {
	if getenv == nil {
		getenv = os.Getenv
	}
	// Start-up is over where pdfium starts and again where it has: the
	// executable's pages touched until then are released, which takes 20-30
	// MiB off the resident set of a PDF conversion
	// (docs/convert-measurements.md). It only changes what is mapped, so a
	// failure is ignored.
	release := func() { _, _ = procmem.ReleaseExecutablePages() }
	a := &app{io: ios, getenv: getenv, now: time.Now, pdfium: convert.NewPDFium(convert.PDFiumOptions{ReleaseMemory: release})}
	defer a.pdfium.Close()
	root := newRootCmd(a)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return 0
	}
	return reportError(ios.ErrOut, root, err)
}

// lockTheme takes the theme's workspace lock for a command that writes the
// theme (build and each stage command); a second build of the same theme is
// refused with the holder's process id. The returned func releases it.
func (a *app) lockTheme(theme string) (func(), error) {
	ws, err := a.workspace()
	if err != nil {
		return nil, err
	}
	l, err := ws.LockTheme(theme)
	if err != nil {
		return nil, withExit(exitFailure, err)
	}
	// Holding the lock, any temporary file in the theme's directories was
	// left by a vibe killed mid-write: remove it so it never reaches a
	// build (or a diff of one).
	for _, dir := range []string{ws.SourceDir(theme), ws.ConvertedDir(theme), ws.SkillDir(theme)} {
		removed, err := atomicfile.RemoveTemps(dir)
		if err != nil {
			l.Unlock()
			return nil, err
		}
		if len(removed) > 0 && a.log != nil {
			a.log.Debug("removed temporary files of an interrupted run", "dir", ws.Rel(dir), "files", len(removed))
		}
	}
	return func() {
		if err := l.Unlock(); err != nil && a.log != nil {
			a.log.Warn("release theme lock", "theme", theme, "err", err)
		}
	}, nil
}

// printJSON is shared by the commands' --json output.
func printJSON(w io.Writer, v any) error {
	enc := jsonEncoder(w)
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("write JSON: %w", err)
	}
	return nil
}
