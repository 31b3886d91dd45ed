package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/vibelife/vibe/integrate"
	"github.com/vibelife/vibe/internal/iostreams"
)

type checkOptions struct {
	theme  string
	format string
	strict bool
	judge  bool
	output string
}

func newCheckCmd(a *app) *cobra.Command {
	opts := &checkOptions{}
	cmd := &cobra.Command{
		Use:   "check <theme>",
		Short: "Check a built skill: schema, references, grounding in the sources, duplicates, size",
		Long: `Check a built skill, offline by default:

  schema      sop.yaml, patterns.yaml, rules.yaml, tools/tools.yaml and the hand-declared
              knowledge/<theme>/tools.yaml against their schemas; plugins and cards of tools
  references  unique ids; every cited chunk exists in the store; every SOP step's tool is
              declared in tools.yaml or is a core tool; every next_phase exists; no phase cycle;
              every hand-declared tool is merged into tools.yaml (else: run vibe integrate)
  grounding   each quote occurs in its cited chunk; each rule's condition and conclusion are
              supported by it (lexical overlap, check.min_lexical_support in vibe.yaml)
  coverage    rule-like passages of the sources no rule cites (notes), with a percentage
  duplicates  near-duplicate rules and patterns across tiers; contradictory rules
  size        tier and pattern counts against the design targets; SKILL.md body and metadata tokens
  SKILL.md    front matter name and description, required sections

Every finding has a severity, a rule id (VIBE0xx), the item, file, line and column.
Exit status: 0 clean, 1 errors (or warnings with --strict), 2 the check could not run.`,
		Example: `  vibe check bazi
  vibe check bazi --format sarif --output vibe-check.sarif
  vibe check bazi --format github          # annotations in a GitHub Actions log
  vibe check bazi --strict --format junit --output check.xml`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			_, theme, err := a.theme(args)
			if err != nil {
				return err
			}
			opts.theme = theme
			if err := knownFormat(opts.format, integrate.Formats); err != nil {
				return err
			}
			return a.runCheck(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.format, "format", "text", "report format: "+strings.Join(integrate.Formats, ", "))
	cmd.Flags().BoolVar(&opts.strict, "strict", false, "exit 1 on warnings too")
	cmd.Flags().BoolVar(&opts.judge, "judge", false, "ask the configured LLM for an entailment verdict on weakly supported rules")
	cmd.Flags().StringVarP(&opts.output, "output", "o", "", "write the report to this file instead of standard output")
	return cmd
}

// check runs integrate.Check for a theme; the error means the check could not run.
func (a *app) check(ctx context.Context, theme string, judge bool) (integrate.Report, error) {
	ws, err := a.workspace()
	if err != nil {
		return integrate.Report{}, err
	}
	cfg, err := a.config()
	if err != nil {
		return integrate.Report{}, err
	}
	if _, err := os.Stat(ws.SkillDir(theme)); err != nil {
		return integrate.Report{}, withHint(fmt.Errorf("check %s: no built skill at %s", theme, ws.Rel(ws.SkillDir(theme))), "run `vibe build "+theme+"` first")
	}
	if judge && !cfg.LLMEnabled() {
		return integrate.Report{}, withHint(errors.New("--judge needs an LLM endpoint"), "set OPENAI_BASE_URL (and OPENAI_API_KEY), or drop --judge")
	}
	var verdict integrate.Judge
	if judge {
		// Verdicts are cached with every other answer in .vibe/cache/llm.
		verdict = integrate.NewLLMJudge(newLLMClient(ws, cfg, cfg.LLM.JudgeModel, cfg.LLM.Budget, false), cfg.LLM.JudgeModel)
	}
	embedder, err := a.openEmbedder(ctx)
	if err != nil {
		return integrate.Report{}, err
	}
	store, err := a.openStore(ctx)
	if err != nil {
		return integrate.Report{}, fmt.Errorf("check %s: open the store: %w", theme, err)
	}
	defer store.Close()
	rep, err := integrate.Check(ctx, integrate.Options{
		Theme:    theme,
		SkillDir: ws.SkillDir(theme),
		RelTo:    ws.Root,
		Chunks:   store,
		Config:   cfg.Check,
		Embedder: embedder,
		Judge:    verdict,
		// The hand-written declarations are checked too, and against the merged tools.yaml.
		DeclaredTools: filepath.Join(ws.KnowledgeDir(theme), integrate.DeclaredToolsName),
		// Relative plugin commands run from the workspace root.
		PluginDir: ws.Root,
	})
	if errors.Is(err, integrate.ErrNoSources) {
		return rep, withHint(err, "run `vibe ingest "+theme+"` (or vibe build "+theme+") first: the check compares every rule with its sources")
	}
	return rep, err
}

// ingestThenCheck ingests the theme's converted sources when there are any,
// then checks again; without them it says which command builds them.
func (a *app) ingestThenCheck(ctx context.Context, opts *checkOptions) (integrate.Report, error) {
	theme := opts.theme
	ws, err := a.workspace()
	if err != nil {
		return integrate.Report{}, err
	}
	need := fmt.Errorf("check %s: %w", theme, integrate.ErrNoSources)
	firstHint := "run `vibe ingest " + theme + "` (or vibe build " + theme + ") first"
	entries, err := os.ReadDir(ws.ConvertedDir(theme))
	md := 0
	for _, e := range entries {
		if !e.IsDir() && strings.HasSuffix(e.Name(), ".md") {
			md++
		}
	}
	if err != nil || md == 0 {
		return integrate.Report{}, withHint(fmt.Errorf("%w, and %s holds no converted sources to ingest", need, ws.Rel(ws.ConvertedDir(theme))), firstHint)
	}
	fmt.Fprintf(a.io.ErrOut, "note: the store holds no chunks of %s: ingesting %s first (vibe ingest %s)\n", theme, ws.Rel(ws.ConvertedDir(theme)), theme)
	unlock, err := a.lockTheme(theme)
	if err != nil {
		return integrate.Report{}, err
	}
	// Ingest's progress goes to stderr: stdout carries the report.
	quiet := &iostreams.IOStreams{In: a.io.In, Out: a.io.ErrOut, ErrOut: a.io.ErrOut}
	err = a.runIngest(ctx, &IngestOptions{IO: quiet, Theme: theme})
	unlock()
	if err != nil {
		return integrate.Report{}, withHint(fmt.Errorf("%w; ingesting it failed: %w", need, err), firstHint)
	}
	return a.check(ctx, theme, opts.judge)
}

func (a *app) runCheck(ctx context.Context, opts *checkOptions) error {
	rep, err := a.check(ctx, opts.theme, opts.judge)
	if errors.Is(err, integrate.ErrNoSources) {
		// A fresh clone (or CI) has the skill and the converted sources but
		// no store: build what the check needs instead of failing.
		rep, err = a.ingestThenCheck(ctx, opts)
	}
	if err != nil {
		return withExit(exitError, err)
	}
	if err := a.writeReport(opts.output, func(w io.Writer) error { return integrate.Write(w, rep, opts.format) }); err != nil {
		return withExit(exitError, err)
	}
	if opts.output != "" && (!a.quiet || rep.Failed(opts.strict)) {
		fmt.Fprintln(a.io.ErrOut, integrate.SummaryLine(rep))
	}
	if ws, err := a.workspace(); err == nil {
		_ = integrate.RecordCheck(ws.SkillDir(opts.theme), rep.Summary) // meta.json may not exist yet
	}
	if rep.Failed(opts.strict) {
		return withExit(exitFailure, nil)
	}
	return nil
}
