package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/vibelife/vibe/chunk"
	"github.com/vibelife/vibe/extract"
	"github.com/vibelife/vibe/internal/iostreams"
	"github.com/vibelife/vibe/knowledge"
	"github.com/vibelife/vibe/knowledge/schema"
	"github.com/vibelife/vibe/llm"
)

// extractOptions are the inputs of `vibe extract`.
type extractOptions struct {
	IO    *iostreams.IOStreams
	Quiet bool
	Theme string
	// LLM is "offline" or "openai"; empty picks from vibe.yaml.
	LLM    string
	DryRun bool
	Budget float64
	JSON   bool
}

func newExtractCmd(a *app) *cobra.Command {
	opts := &extractOptions{}
	cmd := &cobra.Command{
		Use:   "extract <theme>",
		Short: "Distil sop.yaml, patterns.yaml and rules.yaml from the theme's chunks",
		Long: `Distil the expert knowledge of a theme into skills/<theme>/knowledge/
sop.yaml, patterns.yaml and rules.yaml. Every item cites the chunk it came from
and quotes text that is really in it; an item whose quote cannot be found is
dropped.

--llm offline (the default when no endpoint is configured) runs a
deterministic heuristic: rule-like sentences (凡/若/如 ... 则/必/宜/忌,
……者……也, if/when ... then/must), named configurations (……格, defined
terms) for patterns, warnings for red flags, and the generic P1-P5 SOP filled
from the sources. meta.extractor says "offline-heuristic/1".

Items that did not change keep their ids across rebuilds; files whose content
did not change are not rewritten.`,
		Example: `  vibe extract bazi
  vibe extract bazi --llm offline --json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			_, theme, err := a.theme(args)
			if err != nil {
				return err
			}
			opts.IO, opts.Quiet, opts.Theme = a.io, a.quiet, theme
			switch opts.LLM {
			case "", "offline", "openai":
			default:
				return flagErrorf("--llm %q: use offline or openai", opts.LLM)
			}
			if opts.Budget < 0 {
				return flagErrorf("--budget %v: must be 0 (no limit) or more", opts.Budget)
			}
			return a.runExtract(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.LLM, "llm", "", "extractor: offline or openai (default: openai when an endpoint is configured, else offline)")
	cmd.Flags().BoolVar(&opts.DryRun, "dry-run", false, "with --llm openai: print the requests and tokens a build would send, send nothing")
	cmd.Flags().Float64Var(&opts.Budget, "budget", 0, "with --llm openai: most the build may spend (overrides llm.budget)")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the counts as JSON")
	return cmd
}

// stageExtract is the extract stage of `vibe build`.
func (a *app) stageExtract(ctx context.Context, theme string) error {
	return a.runExtract(ctx, &extractOptions{IO: a.io, Quiet: a.quiet, Theme: theme})
}

// extractReport is what `vibe extract --json` prints.
type extractReport struct {
	Theme     string         `json:"theme"`
	Extractor string         `json:"extractor"`
	Counts    extract.Counts `json:"counts"`
	Written   []string       `json:"written"`
	Dir       string         `json:"dir"`
}

func (a *app) runExtract(ctx context.Context, opts *extractOptions) error {
	ws, err := a.workspace()
	if err != nil {
		return err
	}
	cfg, err := a.config()
	if err != nil {
		return err
	}
	mode := opts.LLM
	if mode == "" {
		mode = "offline"
		if cfg.Extract.Extractor == "llm" || (cfg.Extract.Extractor != "offline" && cfg.LLMEnabled()) {
			mode = "openai"
		}
	}
	if mode == "offline" && (opts.DryRun || opts.Budget > 0) {
		return flagErrorf("--dry-run and --budget apply to --llm openai only")
	}
	chunks, err := a.loadThemeChunks(ctx, opts.Theme)
	if err != nil {
		return err
	}
	dir := ws.SkillKnowledgeDir(opts.Theme)
	prev, found, err := knowledge.ReadFiles(dir)
	if err != nil {
		return withExit(exitError, err)
	}
	eo := extract.Options{Theme: opts.Theme, Chunks: chunks}
	if found {
		eo.Previous = &prev
	}
	extractor := extract.OfflineExtractor
	var client *llm.Client
	if mode == "openai" {
		budget := cfg.LLM.Budget
		if opts.Budget > 0 {
			budget = opts.Budget
		}
		client = newLLMClient(ws, cfg, cfg.LLM.Model, budget, opts.DryRun)
		eo.Completer, eo.Model, eo.Concurrency = client, cfg.LLM.Model, max(1, cfg.LLM.MaxConcurrency)
		extractor = "llm:" + cfg.LLM.Model
	}
	res, err := extract.Run(ctx, eo)
	if client != nil {
		defer printUsage(opts, client)
	}
	if opts.DryRun {
		if err != nil {
			return err
		}
		u := client.Usage()["extract.map"]
		p := cfg.LLM.Prices[cfg.LLM.Model]
		cost := float64(u.DryRunPromptTokens) * p.InputPerMTok / 1e6
		fmt.Fprintf(opts.IO.Out, "dry run: extract %s would send %d requests (%d answered from the cache), about %d prompt tokens, estimated input cost %.4f with model %s; nothing was sent\n",
			opts.Theme, u.DryRunRequests, u.CachedHits, u.DryRunPromptTokens, cost, cfg.LLM.Model)
		return nil
	}
	if err != nil {
		if errors.Is(err, extract.ErrNoChunks) {
			return withExit(exitError, err)
		}
		return err
	}
	if err := validateFiles(res.Files); err != nil {
		return err
	}
	written, err := knowledge.WriteFiles(dir, res.Files)
	if err != nil {
		return withExit(exitError, err)
	}
	rep := extractReport{Theme: opts.Theme, Extractor: extractor, Counts: res.Counts, Written: written, Dir: ws.Rel(dir)}
	if rep.Written == nil {
		rep.Written = []string{}
	}
	if opts.JSON {
		return printJSON(opts.IO.Out, rep)
	}
	if opts.Quiet {
		return nil
	}
	c := res.Counts
	fmt.Fprintf(opts.IO.Out, "extract %s (%s, %d chunks)\n", opts.Theme, rep.Extractor, len(chunks))
	fmt.Fprintf(opts.IO.Out, "  sop:      %d phases, %d steps\n", c.Phases, c.Steps)
	fmt.Fprintf(opts.IO.Out, "  patterns: %d quick patterns, %d red flags\n", c.Patterns, c.RedFlags)
	fmt.Fprintf(opts.IO.Out, "  rules:    %d tier1, %d tier2, %d tier3\n", c.Tier1, c.Tier2, c.Tier3)
	if c.Dropped > 0 {
		fmt.Fprintf(opts.IO.Out, "  dropped:  %d candidates whose quote was not in the cited chunk\n", c.Dropped)
	}
	if len(written) == 0 {
		fmt.Fprintf(opts.IO.Out, "  unchanged: %s\n", rep.Dir)
	} else {
		fmt.Fprintf(opts.IO.Out, "  wrote %s in %s (%d ids kept)\n", strings.Join(written, ", "), rep.Dir, c.Kept)
	}
	return nil
}

// validateFiles checks the files against the shipped schemas before they
// are written: a failure here is a bug in the extractor, never the user's.
func validateFiles(f knowledge.Files) error {
	for _, p := range []struct {
		kind string
		v    any
	}{{schema.SOP, f.SOP}, {schema.Patterns, f.Patterns}, {schema.Rules, f.Rules}} {
		data, err := knowledge.Encode(p.v)
		if err != nil {
			return err
		}
		probs, err := schema.ValidateYAML(p.kind, data)
		if err != nil {
			return err
		}
		if len(probs) > 0 {
			return fmt.Errorf("extract: %s.yaml would not be schema-valid: %v (please report this bug)", p.kind, probs[0])
		}
	}
	return nil
}

// loadThemeChunks reads the theme's chunks from the store, so evidence
// cites the very ids ingest stored.
func (a *app) loadThemeChunks(ctx context.Context, theme string) ([]chunk.Chunk, error) {
	store, err := a.openStore(ctx)
	if err != nil {
		return nil, fmt.Errorf("extract %s: open the store: %w", theme, err)
	}
	defer store.Close()
	chunks, err := store.Chunks(ctx, theme)
	if err != nil {
		return nil, fmt.Errorf("extract %s: read chunks: %w", theme, err)
	}
	if len(chunks) == 0 {
		return nil, withExit(exitError, withHint(fmt.Errorf("extract %s: the store holds no chunks for this theme", theme),
			"run `vibe ingest "+theme+"` first"))
	}
	return chunks, nil
}

// printUsage reports LLM usage per stage on stderr.
func printUsage(opts *extractOptions, c *llm.Client) {
	if opts.Quiet || opts.JSON {
		return
	}
	for stage, u := range c.Usage() {
		fmt.Fprintf(opts.IO.ErrOut, "llm %s: %d requests, %d cached, %d retries, %d repairs, %d prompt + %d completion tokens, cost %.4f\n",
			stage, u.Requests, u.CachedHits, u.Retries, u.Repairs, u.PromptTokens, u.CompletionTokens, u.Cost)
	}
}
