package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/vibelife/vibe/eval/agenteval"
	"github.com/vibelife/vibe/knowledge"
	"github.com/vibelife/vibe/llm"
	"github.com/vibelife/vibe/runtime"
	"github.com/vibelife/vibe/workspace"
)

type evalOptions struct {
	theme    string
	file     string
	format   string
	output   string
	baseline string
	generate bool
	// fromFeedback drafts cases from thumbs-down answers.
	fromFeedback bool
	max          int
	noCache      bool
	// thresholds are --threshold MEASURE=FRACTION.
	thresholds []string
}

// thresholdKeys are the measures a threshold gates, as vibe.yaml, the eval
// file, the environment and --threshold name them.
var thresholdKeys = []string{"routing", "rule_hit", "passage_recall", "tools", "contains", "faithfulness", "fact_coverage"}

// thresholdField is the field of t that key gates.
func thresholdField(t *agenteval.Thresholds, key string) **float64 {
	switch key {
	case "routing":
		return &t.Routing
	case "rule_hit":
		return &t.RuleHit
	case "passage_recall":
		return &t.PassageRecall
	case "tools":
		return &t.Tools
	case "contains":
		return &t.Contains
	case "faithfulness":
		return &t.Faithfulness
	case "fact_coverage":
		return &t.FactCoverage
	}
	return nil
}

// overThresholds are the thresholds above the eval file's: those the
// environment sets (VIBE_EVAL_THRESHOLDS_*), then --threshold.
func overThresholds(cfg *workspace.Config, src workspace.Sources, flags []string) (agenteval.Thresholds, error) {
	var over agenteval.Thresholds
	all, err := evalThresholds(cfg.Eval.Thresholds)
	if err != nil {
		return over, err
	}
	for _, k := range thresholdKeys {
		if strings.HasPrefix(src.Of("eval.thresholds."+k), "env ") {
			*thresholdField(&over, k) = *thresholdField(&all, k)
		}
	}
	for _, fl := range flags {
		k, v, ok := strings.Cut(fl, "=")
		field := thresholdField(&over, strings.TrimSpace(k))
		x, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if !ok || field == nil || err != nil || x < 0 || x > 1 {
			return over, flagErrorf("--threshold %q: give MEASURE=FRACTION, e.g. --threshold passage_recall=0.9 (a fraction from 0 to 1; measures: %s)", fl, strings.Join(thresholdKeys, ", "))
		}
		*field = &x
	}
	return over, nil
}

func newEvalCmd(a *app) *cobra.Command {
	opts := &evalOptions{}
	cmd := &cobra.Command{
		Use:   "eval <theme>",
		Short: "Run a theme's eval cases against the built skill: routing, rules, passages, tools, answers",
		Long: `Run the cases of knowledge/<theme>/eval.yaml (schema: ` + "`vibe schema eval`" + `) against the
built skills in-process, through the same runtime ` + "`vibe serve`" + ` uses, and report:

  routing          the skill active after each turn (skill: none for off-topic questions)
  rule hit@k       an expected rule id among get_rules' top k (eval.rules_k, default 3); MRR@10
  passage recall@k each expected passage among search_knowledge's top k (eval.passages_k); MRR@10
  tools            with a model: the expected tools called with the expected arguments, not_tools
                   not called, forms asked; offline: each expected tool offered and its arguments valid
  contains         substrings the answer must contain
  faithfulness     with a model: the share of the answer's claims the retrieved sources support
  fact coverage    with a model: the expected facts the answer states (judged)

Without a model (llm.provider: offline) the retrieval, routing and tool parts run and
the report says which parts were skipped. With a model, every chat answer and every
verdict is cached under .vibe/cache/eval and .vibe/cache/llm, so a rerun sends nothing
and gives the same report (--no-cache asks again).

Each measure is gated by a threshold; the first of these that sets it wins:
  1. --threshold MEASURE=FRACTION (e.g. --threshold passage_recall=0.9)
  2. the environment: VIBE_EVAL_THRESHOLDS_<MEASURE> (VIBE_EVAL_THRESHOLDS_PASSAGE_RECALL=0.9)
  3. thresholds: in the eval file
  4. eval.thresholds in vibe.yaml
  5. the default: 100% for the deterministic measures (any failed case fails the run),
     80% for the judged ones
--baseline FILE (a previous --format json report) also fails on any regression.

The report lists each case that fell short: FAIL when it is part of why the run
fails (a measure it missed is below its threshold), BELOW when the measures it
missed still meet their thresholds (not gated). The last line is the verdict and
matches the exit status: "pass (exit 0)", or "FAIL (exit 1)" naming each gated
measure below its threshold and the regressions. Exit status 2: the eval could not run.

--generate drafts cases from the built rules and SOP into knowledge/<theme>/eval.draft.yaml
for review; it never writes eval.yaml. --from-feedback drafts cases from the answers of
the theme's skill that users of vibe serve gave a thumbs down (the feedback kept in the
store vibe serve uses), with their comments and the answers given, into
knowledge/<theme>/eval.feedback.yaml for review; it never writes eval.yaml either.`,
		Example: `  vibe eval demo
  vibe eval bazi --format junit --output eval.xml
  vibe eval bazi --format json --output eval.json && vibe eval bazi --baseline eval.json
  vibe eval bazi --format markdown >> "$GITHUB_STEP_SUMMARY"
  vibe eval bazi --generate
  vibe eval --from-feedback bazi
  vibe eval bazi --threshold rule_hit=0.6 --threshold passage_recall=0.75`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			_, theme, err := a.theme(args)
			if err != nil {
				return err
			}
			opts.theme = theme
			if err := knownFormat(opts.format, agenteval.Formats); err != nil {
				return err
			}
			if opts.generate && opts.fromFeedback {
				return flagErrorf("--generate and --from-feedback draft into different files: give one")
			}
			if opts.generate {
				return a.runEvalGenerate(opts)
			}
			if opts.fromFeedback {
				return a.runEvalFromFeedback(cmd.Context(), opts)
			}
			return a.runEval(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.file, "file", "", "eval file (default knowledge/<theme>/eval.yaml)")
	cmd.Flags().StringVar(&opts.format, "format", "text", "report format: "+strings.Join(agenteval.Formats, ", "))
	cmd.Flags().StringVarP(&opts.output, "output", "o", "", "write the report to this file instead of standard output")
	cmd.Flags().StringVar(&opts.baseline, "baseline", "", "a previous `--format json` report: fail on any regression against it")
	cmd.Flags().BoolVar(&opts.generate, "generate", false, "draft cases from the built rules and SOP into knowledge/<theme>/eval.draft.yaml")
	cmd.Flags().BoolVar(&opts.fromFeedback, "from-feedback", false, "draft cases from the answers users gave a thumbs down (the serve store's feedback) into knowledge/<theme>/"+agenteval.FeedbackFileName)
	cmd.Flags().IntVar(&opts.max, "max", 40, "with --generate or --from-feedback: the most cases to draft")
	cmd.Flags().BoolVar(&opts.noCache, "no-cache", false, "ask the model again instead of replaying cached answers and verdicts")
	cmd.Flags().StringArrayVar(&opts.thresholds, "threshold", nil, "MEASURE=FRACTION: gate a measure at this value, over the environment, the eval file and vibe.yaml; repeatable ("+strings.Join(thresholdKeys, ", ")+")")
	return cmd
}

func evalThresholds(c workspace.EvalThresholds) (agenteval.Thresholds, error) {
	vals := []struct {
		key string
		v   float64
	}{{"routing", c.Routing}, {"rule_hit", c.RuleHit}, {"passage_recall", c.PassageRecall}, {"tools", c.Tools},
		{"contains", c.Contains}, {"faithfulness", c.Faithfulness}, {"fact_coverage", c.FactCoverage}}
	for _, x := range vals {
		if x.v < 0 || x.v > 1 {
			return agenteval.Thresholds{}, fmt.Errorf("vibe.yaml: eval.thresholds.%s: %g is not a fraction between 0 and 1", x.key, x.v)
		}
	}
	f := func(v float64) *float64 { return &v }
	return agenteval.Thresholds{Routing: f(c.Routing), RuleHit: f(c.RuleHit), PassageRecall: f(c.PassageRecall), Tools: f(c.Tools),
		Contains: f(c.Contains), Faithfulness: f(c.Faithfulness), FactCoverage: f(c.FactCoverage)}, nil
}

func (a *app) runEval(ctx context.Context, opts *evalOptions) error {
	ws, err := a.workspace()
	if err != nil {
		return withExit(exitError, err)
	}
	cfg, err := a.config()
	if err != nil {
		return withExit(exitError, err)
	}
	if _, err := os.Stat(ws.SkillDir(opts.theme)); err != nil {
		return withExit(exitError, withHint(fmt.Errorf("eval %s: no built skill at %s", opts.theme, ws.Rel(ws.SkillDir(opts.theme))), "run `vibe build "+opts.theme+"` first"))
	}
	path := opts.file
	if path == "" {
		path = filepath.Join(ws.KnowledgeDir(opts.theme), agenteval.FileName)
	}
	f, err := agenteval.Load(path)
	if err != nil {
		return withExit(exitError, err)
	}
	th, err := evalThresholds(cfg.Eval.Thresholds)
	if err != nil {
		return withExit(exitError, err)
	}
	over, err := overThresholds(cfg, a.cfgSources, opts.thresholds)
	if err != nil {
		return err
	}
	var baseline *agenteval.Report
	if opts.baseline != "" {
		if baseline, err = agenteval.LoadReport(opts.baseline); err != nil {
			return withExit(exitError, fmt.Errorf("--baseline: %w", err))
		}
	}
	cacheDir := ws.CacheDir("eval")
	if opts.noCache {
		// A fresh directory per run: nothing replayed, the new answers kept
		// for the next run.
		if err := os.RemoveAll(cacheDir); err != nil {
			return withExit(exitError, err)
		}
	}
	var cached *agenteval.CachedModel
	ag, closer, err := a.newAgentWith(ctx, agentOptions{ephemeral: true, quiet: true, wrapModel: func(m runtime.Model) runtime.Model {
		cached = &agenteval.CachedModel{Inner: m, Dir: cacheDir}
		return cached
	}})
	if err != nil {
		return withExit(exitError, err)
	}
	defer closer()
	var judge agenteval.Judge
	if !ag.Offline() && cfg.LLMEnabled() {
		client := newLLMClient(ws, cfg, cfg.LLM.JudgeModel, 0, false)
		judge = agenteval.LLMJudge{Client: noCacheIf(client, opts.noCache), Model: cfg.LLM.JudgeModel}
	}
	rel := ws.Rel(path)
	rep, err := agenteval.Run(ctx, ag, f, rel, agenteval.Options{Theme: opts.theme, RulesK: cfg.Eval.RulesK, PassagesK: cfg.Eval.PassagesK,
		Thresholds: th, Over: over, Judge: judge})
	ag.Wait()
	if err != nil {
		var hint string
		if strings.Contains(err.Error(), "no knowledge store") {
			hint = "run `vibe ingest " + opts.theme + "` (or `vibe build " + opts.theme + "`) first"
		}
		err = fmt.Errorf("eval %s: %w", opts.theme, err)
		if hint != "" {
			err = withHint(err, hint)
		}
		return withExit(exitError, err)
	}
	if baseline != nil {
		agenteval.CompareBaseline(rep, baseline)
	}
	if err := a.writeReport(opts.output, func(w io.Writer) error { return agenteval.Write(w, rep, opts.format) }); err != nil {
		return withExit(exitError, err)
	}
	if opts.output != "" || opts.format != "text" {
		fmt.Fprintln(a.io.ErrOut, agenteval.Summary(rep))
	}
	if cached != nil && !a.quiet {
		fmt.Fprintf(a.io.ErrOut, "eval %s: %d chat requests sent to the model (the rest replayed from %s)\n", opts.theme, cached.Calls.Load(), ws.Rel(cacheDir))
	}
	if !rep.Pass {
		return withExit(exitFailure, nil)
	}
	return nil
}

// noCacheIf makes every judge request bypass the response cache when off
// is set (the fresh verdicts are still not written: llm.Request.NoCache).
func noCacheIf(c agenteval.Chatter, off bool) agenteval.Chatter {
	if !off {
		return c
	}
	return noCacheChatter{c}
}

type noCacheChatter struct{ agenteval.Chatter }

func (n noCacheChatter) Chat(ctx context.Context, req llm.Request) (llm.Response, error) {
	req.NoCache = true
	return n.Chatter.Chat(ctx, req)
}

func (a *app) runEvalGenerate(opts *evalOptions) error {
	ws, err := a.workspace()
	if err != nil {
		return withExit(exitError, err)
	}
	dir := filepath.Join(ws.SkillDir(opts.theme), "knowledge")
	files, found, err := knowledge.ReadFiles(dir)
	if err != nil {
		return withExit(exitError, err)
	}
	if !found {
		return withExit(exitError, withHint(fmt.Errorf("eval --generate %s: no rules or SOP at %s", opts.theme, ws.Rel(dir)), "run `vibe build "+opts.theme+"` first"))
	}
	if opts.max <= 0 {
		return flagErrorf("--max %d: give a positive number of cases", opts.max)
	}
	d := agenteval.Draft(opts.theme, files, opts.max)
	if len(d.Cases) == 0 {
		return withExit(exitFailure, errors.New("eval --generate: the skill has no rule with a condition and no SOP step calling a tool to draft from"))
	}
	b, err := agenteval.EncodeDraft(opts.theme, d)
	if err != nil {
		return withExit(exitError, err)
	}
	out := filepath.Join(ws.KnowledgeDir(opts.theme), agenteval.DraftFileName)
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return withExit(exitError, err)
	}
	if err := os.WriteFile(out, b, 0o644); err != nil {
		return withExit(exitError, err)
	}
	fmt.Fprintf(a.io.ErrOut, "eval %s: drafted %d cases into %s: review them, rewrite each question as a user would ask it, and move the ones you keep into %s\n",
		opts.theme, len(d.Cases), ws.Rel(out), ws.Rel(filepath.Join(ws.KnowledgeDir(opts.theme), agenteval.FileName)))
	return nil
}
