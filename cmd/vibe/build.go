package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/vibelife/vibe/internal/latency"
	"github.com/vibelife/vibe/knowledge"
)

// buildStage is one stage of `vibe build`.
type buildStage struct {
	name string
	run  func(ctx context.Context, theme string) error
}

func (a *app) buildStages() []buildStage {
	return []buildStage{
		{"curate", a.stageCurate},
		{"convert", a.stageConvert},
		{"ingest", a.stageIngest},
		{"extract", a.stageExtract},
		{"integrate", a.stageIntegrate},
	}
}

func newBuildCmd(a *app) *cobra.Command {
	var from, until, oldFrom, oldUntil string
	var takeOver bool
	cmd := &cobra.Command{
		Use:   "build <theme>",
		Short: "Run the whole knowledge build: curate, convert, ingest, extract, integrate",
		Long: `Run every stage of the knowledge build for a theme, in order:

  curate     gather sources listed in knowledge/<theme>/curate.yaml
  convert    sources -> Markdown in knowledge/<theme>/converted/
  ingest     chunk, embed and store the Markdown for search
  extract    distil sop.yaml, patterns.yaml, rules.yaml into skills/<theme>/knowledge/
  integrate  write SKILL.md, tools/tools.yaml, meta.json and check them

Rebuilds are incremental: unchanged sources are not converted again, unchanged
documents are not re-embedded, and unchanged extraction input makes no LLM call.
A stage whose items partly failed (a damaged PDF, say) lets the build go on
with the rest and makes the build exit with status 1 at the end.
A failure of the store itself (a lost connection, a deadlock) stops the build.

On a PostgreSQL store shared by several machines, a build of a theme holds
the store's lock of that theme: a second build of it is refused at once,
naming the holder. A theme belongs to the workspace that built it (document
ids are paths in that workspace): a build from another workspace is refused
unless --take-over.

Use --from-stage and --until-stage to run a slice of the pipeline. (To add
a source, use 'vibe curate <theme> --from PATH'.)

Each build writes its stage timings, outcome and LLM calls, tokens and cost
as a Prometheus textfile: .vibe/metrics/build_<theme>.prom, or --metrics-file
(docs/operations.md).`,
		Example: `  vibe build bazi
  vibe build bazi --from-stage ingest      # sources already converted
  vibe build bazi --until-stage convert    # only gather and convert
  OPENAI_BASE_URL=http://localhost:8000/v1 vibe build bazi
  vibe build bazi --llm openai --budget 5`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			_, theme, err := a.theme(args)
			if err != nil {
				return err
			}
			switch a.buildLLM {
			case "", "offline", "openai":
			default:
				return flagErrorf("--llm %q: use offline or openai", a.buildLLM)
			}
			if a.buildBudget < 0 {
				return flagErrorf("--budget %v: must be 0 (no limit) or more", a.buildBudget)
			}
			from, err := stageFlag(theme, "--from-stage", from, "--from", oldFrom)
			if err != nil {
				return err
			}
			until, err := stageFlag(theme, "--until-stage", until, "--until", oldUntil)
			if err != nil {
				return err
			}
			stages, err := selectStages(a.buildStages(), theme, from, until)
			if err != nil {
				return err
			}
			unlock, err := a.lockTheme(theme)
			if err != nil {
				return err
			}
			defer unlock()
			release, err := a.lockStoreTheme(cmd.Context(), theme, stages, takeOver)
			if err != nil {
				return err
			}
			defer release()
			return a.runBuild(cmd.Context(), theme, stages)
		},
	}
	cmd.Flags().StringVar(&from, "from-stage", "", "first stage to run (curate, convert, ingest, extract, integrate)")
	cmd.Flags().StringVar(&until, "until-stage", "", "last stage to run")
	// --from and --until were the stage flags before; --from means a source
	// on curate, so they are kept only as deprecated aliases.
	cmd.Flags().StringVar(&oldFrom, "from", "", "deprecated: use --from-stage")
	cmd.Flags().StringVar(&oldUntil, "until", "", "deprecated: use --until-stage")
	_ = cmd.Flags().MarkDeprecated("from", "use --from-stage STAGE (to add a source: vibe curate THEME --from PATH)")
	_ = cmd.Flags().MarkDeprecated("until", "use --until-stage STAGE")
	cmd.Flags().StringVar(&a.buildLLM, "llm", "", "extractor of the extract stage: offline or openai (default: openai when an endpoint is configured)")
	cmd.Flags().BoolVar(&takeOver, "take-over", false, "build the theme even though the store holds it from another workspace (its documents are replaced)")
	cmd.Flags().BoolVar(&a.buildRetryFailed, "retry-failed", false, "convert again the sources whose conversion took too long or needed too much memory on an earlier run (remembered by their bytes, skipped otherwise)")
	cmd.Flags().Float64Var(&a.buildBudget, "budget", 0, "most the extract stage may spend on the LLM (overrides llm.budget)")
	cmd.Flags().StringVar(&a.buildMetricsFile, "metrics-file", "", "write the build's metrics (Prometheus text format) to `FILE` (default .vibe/metrics/build_<theme>.prom)")
	return cmd
}

// stageFlag merges a stage flag with its deprecated alias.
func stageFlag(theme, name, val, oldName, old string) (string, error) {
	switch {
	case old == "":
		return val, nil
	case val == "" || val == old:
		return old, nil
	}
	return "", flagErrorf("%s %s and %s %s disagree: give only %s", name, val, oldName, old, name)
}

// looksLikeSource tells a path or URL from a stage name.
func looksLikeSource(s string) bool {
	if strings.ContainsAny(s, `/\.~*`) || strings.HasPrefix(s, "http:") || strings.HasPrefix(s, "https:") {
		return true
	}
	_, err := os.Stat(s)
	return err == nil
}

func selectStages(all []buildStage, theme, from, until string) ([]buildStage, error) {
	idx := func(name string, def int) (int, error) {
		if name == "" {
			return def, nil
		}
		if looksLikeSource(name) {
			return 0, withHint(flagErrorf("build takes a stage name for --from-stage/--until-stage, not a source: %q", name),
				fmt.Sprintf("to gather it, run `vibe curate %s --from %s`, then `vibe build %s`", theme, name, theme))
		}
		var names []string
		for i, s := range all {
			if s.name == name {
				return i, nil
			}
			names = append(names, s.name)
		}
		return 0, flagErrorf("unknown stage %q: use one of %s", name, strings.Join(names, ", "))
	}
	lo, err := idx(from, 0)
	if err != nil {
		return nil, err
	}
	hi, err := idx(until, len(all)-1)
	if err != nil {
		return nil, err
	}
	if lo > hi {
		return nil, flagErrorf("--from-stage %s comes after --until-stage %s", from, until)
	}
	return all[lo : hi+1], nil
}

// lockStoreTheme takes the store's build lock of the theme when the stages
// write the store (ingest and later) and the store keeps one
// (PostgreSQL): the workspace lock only keeps apart the builds of one
// workspace, and two machines sharing a database deadlocked and mixed their
// chunks. It also refuses a theme the store holds from another workspace.
func (a *app) lockStoreTheme(ctx context.Context, theme string, stages []buildStage, takeOver bool) (func(), error) {
	writes := false
	for _, s := range stages {
		writes = writes || s.name == "ingest" || s.name == "extract" || s.name == "integrate"
	}
	if !writes {
		return func() {}, nil
	}
	ws, err := a.workspace()
	if err != nil {
		return nil, err
	}
	st, err := a.openStore(ctx)
	if err != nil {
		return nil, fmt.Errorf("build %s: open the store: %w", theme, err)
	}
	bl, ok := st.(knowledge.BuildLocker)
	if !ok {
		st.Close()
		return func() {}, nil
	}
	host, _ := os.Hostname()
	release, err := bl.LockBuild(ctx, theme, host+":"+ws.Root, takeOver)
	if err != nil {
		st.Close()
		return nil, withExit(exitFailure, err)
	}
	return func() { release(); st.Close() }, nil
}

func (a *app) runBuild(ctx context.Context, theme string, stages []buildStage) (err error) {
	start := a.now()
	t0build := time.Now()
	partial := false
	var runs []stageRun
	defer func() {
		path := a.buildMetricsPath(theme)
		if path == "" {
			return
		}
		if werr := a.writeBuildMetrics(path, theme, runs, time.Since(t0build), err == nil); werr != nil {
			fmt.Fprintf(a.io.ErrOut, "warning: %v\n", werr)
		}
	}()
	for _, s := range stages {
		t0, cpu0 := time.Now(), latency.ProcessCPU()
		if !a.quiet {
			fmt.Fprintf(a.io.ErrOut, "==> %s %s\n", s.name, theme)
		}
		err := s.run(ctx, theme)
		run := stageRun{name: s.name, took: time.Since(t0), cpu: latency.ProcessCPU() - cpu0, outcome: "ok"}
		var ec *exitCodeError
		switch {
		case err == nil:
		case errors.As(err, &ec) && ec.code == exitFailure:
			// Some items failed but the stage produced the rest: go on.
			partial = true
			run.outcome = "partial"
			if ec.err != nil {
				fmt.Fprintf(a.io.ErrOut, "vibe: %s: %v\n", s.name, ec.err)
			}
		default:
			run.outcome = "failed"
			runs = append(runs, run)
			return fmt.Errorf("build %s: stage %s: %w", theme, s.name, err)
		}
		runs = append(runs, run)
		a.log.Debug("stage finished", "stage", s.name, "took", run.took.Round(time.Millisecond))
	}
	took := a.now().Sub(start).Round(time.Millisecond)
	a.reportAccounting(theme, stages)
	if partial {
		return withExit(exitFailure, fmt.Errorf("build %s finished in %s, but some items failed (see above)", theme, took))
	}
	if !a.quiet {
		fmt.Fprintf(a.io.ErrOut, "==> build %s done in %s\n", theme, took)
	}
	return nil
}
