package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/vibelife/vibe/chunk"
	"github.com/vibelife/vibe/curate"
	"github.com/vibelife/vibe/extract"
	"github.com/vibelife/vibe/integrate"
	"github.com/vibelife/vibe/internal/iostreams"
	"github.com/vibelife/vibe/knowledge"
	"github.com/vibelife/vibe/knowledge/schema"
	"github.com/vibelife/vibe/llm"
	"github.com/vibelife/vibe/runtime"
	"github.com/vibelife/vibe/skills"
	"github.com/vibelife/vibe/workspace"
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

--llm openai (the default when an endpoint is configured) runs the model in
four passes: map (every section read once for candidate rules, patterns, red
flags and method steps, each quoting its chunk), gap (heading groups with
rule-like text that no map candidate cites, read again), reduce (the map's
and the gap's candidates: near-duplicates grouped by the configured embedder,
then merged, judged, tiered and rated by the model; common sense dropped,
with the reason printed) and sop (5-7 phases whose steps name their tools).
tier1/2/3, patterns and red flags are filled from the reduce's tiers and
importances against the design's targets. Every answer is cached in
.vibe/cache/llm: an unchanged rebuild sends nothing and a killed build
resumes. --dry-run prints, before any request, the requests, tokens
(tiktoken) and cost (llm.prices) per pass, with the passes that depend on
answers not yet received marked as estimates.

--llm offline (the default when no endpoint is configured) runs a
deterministic heuristic: rule-like sentences (凡/若/如 ... 则/必/宜/忌,
……者……也, if/when ... then/must), named configurations (……格, defined
terms) for patterns, warnings for red flags, and the generic P1-P5 SOP filled
from the sources. meta.extractor says "offline-heuristic/1".

Items that did not change keep their ids across rebuilds; files whose content
did not change are not rewritten.`,
		Example: `  vibe extract bazi
  vibe extract bazi --llm offline --json
  OPENAI_API_KEY=... vibe extract bazi --dry-run
  vibe extract bazi --llm openai --budget 2.50`,
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
			unlock, err := a.lockTheme(theme)
			if err != nil {
				return err
			}
			defer unlock()
			return a.runExtract(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.LLM, "llm", "", "extractor: offline or openai (default: openai when an endpoint is configured, else offline)")
	cmd.Flags().BoolVar(&opts.DryRun, "dry-run", false, "with --llm openai: print the requests and tokens a build would send, send nothing")
	cmd.Flags().Float64Var(&opts.Budget, "budget", 0, "with --llm openai: most the build may spend (overrides llm.budget)")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the counts as JSON")
	return cmd
}

// stageExtract is the extract stage of `vibe build` (--llm and --budget of
// the build apply).
func (a *app) stageExtract(ctx context.Context, theme string) error {
	return a.runExtract(ctx, &extractOptions{IO: a.io, Quiet: a.quiet, Theme: theme, LLM: a.buildLLM, Budget: a.buildBudget})
}

// extractReport is what `vibe extract --json` prints.
type extractReport struct {
	Theme     string                    `json:"theme"`
	Extractor string                    `json:"extractor"`
	Counts    extract.Counts            `json:"counts"`
	Written   []string                  `json:"written"`
	Dir       string                    `json:"dir"`
	LLM       *extract.LLMStats         `json:"llm,omitempty"`
	Usage     map[string]llm.StageUsage `json:"usage,omitempty"`
	DryRun    *dryRunReport             `json:"dry_run,omitempty"`
	// Credibility says how many rules moved to a better source and how
	// many rest only on sources graded C or D (source_grade in rules.yaml).
	Credibility extract.Weighed `json:"credibility"`
	// Read says what the extraction read: the chunks, their characters,
	// and the theme's character accounting.
	Read *readFigures `json:"read,omitempty"`
	// LeftOut are the items knowledge/<theme>/drop.yaml removed.
	LeftOut []extract.Dropped `json:"left_out,omitempty"`
	// Narrative are the documents read as stories offline: only rules
	// stated generally were taken from them.
	Narrative []extract.NarrativeDoc `json:"narrative,omitempty"`
}

// dryRunReport is the plan `vibe extract --dry-run` prints.
type dryRunReport struct {
	Model    string       `json:"model"`
	Encoding string       `json:"encoding"`
	Passes   []dryRunPass `json:"passes"`
	Total    dryRunPass   `json:"total"`
}

type dryRunPass struct {
	extract.PassPlan
	Cost float64 `json:"cost"`
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
	// The SOP may only name compute tools a plugin runs: those declared by
	// hand in knowledge/<theme>/tools.yaml.
	declared, err := integrate.LoadDeclaredTools(filepath.Join(ws.KnowledgeDir(opts.Theme), integrate.DeclaredToolsName), integrate.DeclaredToolsName)
	if err != nil {
		return withExit(exitError, err)
	}
	for _, t := range declared.Tools {
		eo.DeclaredTools = append(eo.DeclaredTools, t.Name)
		if t.Plugin != nil && (t.Plugin.URL != "" || len(t.Plugin.Command) > 0) {
			eo.ComputeTools = append(eo.ComputeTools, t.Name)
		}
	}
	if found {
		eo.Previous = &prev
	}
	if eo.Glossary, err = glossaryTerms(ws.KnowledgeDir(opts.Theme)); err != nil {
		return withHint(withExit(exitError, fmt.Errorf("extract %s: %w", opts.Theme, err)), "fix the glossary: `terms:` with a list of {term, aliases}")
	}
	dropPath := filepath.Join(ws.KnowledgeDir(opts.Theme), extract.DropFileName)
	if eo.Drops, err = extract.LoadDrops(dropPath); err != nil {
		return withHint(withExit(exitError, fmt.Errorf("extract %s: %w", opts.Theme, err)), "fix "+ws.Rel(dropPath)+" or remove it")
	}
	extractor := extract.OfflineExtractor
	var client *llm.Client
	if mode == "openai" {
		budget := cfg.LLM.Budget
		if opts.Budget > 0 {
			budget = opts.Budget
		}
		if sim := cfg.Extract.Similarity; sim <= 0 || sim > 1 {
			return withHint(fmt.Errorf("extract.similarity is %v: it must be above 0 and at most 1", sim), "set extract.similarity in vibe.yaml (default 0.75)")
		}
		var emb extract.Embedder = remoteInDryRun{cfg.Embedding.Provider}
		if !opts.DryRun || cfg.Embedding.Provider == "" || cfg.Embedding.Provider == "local" {
			e, err := a.openEmbedder(ctx)
			if err != nil {
				return err
			}
			if cl, ok := e.(io.Closer); ok {
				defer cl.Close()
			}
			emb = e
		}
		client = a.trackLLM(newLLMClient(ws, cfg, cfg.LLM.Model, budget, opts.DryRun))
		eo.Completer, eo.Model, eo.Concurrency = client, cfg.LLM.Model, max(1, cfg.LLM.MaxConcurrency)
		eo.Embedder, eo.SimilarityThreshold, eo.CountTokens = emb, cfg.Extract.Similarity, client.CountTokens
		extractor = "llm:" + cfg.LLM.Model
	}
	read, err := readingFigures(ws, opts.Theme, chunks)
	if err != nil {
		return withExit(exitError, fmt.Errorf("extract %s: %w", opts.Theme, err))
	}
	res, err := extract.Run(ctx, eo)
	if client != nil && !opts.DryRun {
		defer printUsage(opts, client)
	}
	if opts.DryRun {
		if err != nil {
			return err
		}
		// The build's integrate stage asks the model for the glossary
		// too: estimated from the chunks' titles.
		n, cached, p, c, est := integrate.GlossaryPlan(cfg.LLM.Model, opts.Theme, ws.SkillDir(opts.Theme), filepath.Join(ws.KnowledgeDir(opts.Theme), "eval.yaml"), runtime.TextLanguage(sampleText(chunks)) == "zh",
			glossaryInputsOf(chunks), client.CountTokens, client.Cached)
		if n+cached > 0 {
			note := "sent by the build's integrate stage; requests and prompt tokens exact for the knowledge extracted now; answers estimated"
			if est {
				note = "estimate: sent by the build's integrate stage; candidates from the chunks' titles and the knowledge's recurring phrases at their cap"
			}
			res.LLM.Plan = append(res.LLM.Plan, extract.PassPlan{Pass: integrate.StageGlossary, Requests: n, Cached: cached, PromptTokens: p, CompletionTokens: c, Estimated: est, Note: note})
		}
		return printDryRun(opts, cfg, res.LLM, read)
	}
	if err != nil {
		if errors.Is(err, extract.ErrNoChunks) {
			return withExit(exitError, err)
		}
		return err
	}
	weighed, err := weighByCredibility(ws, opts.Theme, &res.Files, chunks)
	if err != nil {
		return err
	}
	if err := validateFiles(res.Files); err != nil {
		return err
	}
	written, err := knowledge.WriteFiles(dir, res.Files)
	if err != nil {
		return withExit(exitError, err)
	}
	if err := updateCited(ws, opts.Theme, res.Files, chunks); err != nil {
		return fmt.Errorf("extract %s: record the characters cited: %w", opts.Theme, err)
	}
	var usage map[string]llm.StageUsage
	if client != nil {
		usage = client.Usage()
	}
	if err := recordExtractUsage(ws, opts.Theme, extractor, usage, len(written) > 0); err != nil {
		return fmt.Errorf("extract %s: record the LLM usage: %w", opts.Theme, err)
	}
	if client != nil {
		if err := writeExtractReport(ws, opts.Theme, res.LLM); err != nil {
			return fmt.Errorf("extract %s: write the report: %w", opts.Theme, err)
		}
	}
	rep := extractReport{Theme: opts.Theme, Extractor: extractor, Counts: res.Counts, Written: written, Dir: ws.Rel(dir), Credibility: weighed, Read: read, LeftOut: res.Dropped, Narrative: res.Narrative}
	if rep.Written == nil {
		rep.Written = []string{}
	}
	if client != nil {
		res.LLM.Plan = nil // a dry run's
		rep.LLM, rep.Usage = &res.LLM, client.Usage()
	}
	if opts.JSON {
		return printJSON(opts.IO.Out, rep)
	}
	if opts.Quiet {
		return nil
	}
	c := res.Counts
	fmt.Fprintf(opts.IO.Out, "extract %s (%s, %d chunks)\n", opts.Theme, rep.Extractor, len(chunks))
	read.print(opts.IO.Out)
	fmt.Fprintf(opts.IO.Out, "  sop:      %d phases, %d steps\n", c.Phases, c.Steps)
	fmt.Fprintf(opts.IO.Out, "  patterns: %d quick patterns, %d red flags\n", c.Patterns, c.RedFlags)
	fmt.Fprintf(opts.IO.Out, "  rules:    %d tier1, %d tier2, %d tier3\n", c.Tier1, c.Tier2, c.Tier3)
	for _, n := range res.Narrative {
		measure := fmt.Sprintf("%d quotations attributed after the quote, %.2f per 1,000 words", n.Count, n.PerK)
		if n.Zh {
			measure = fmt.Sprintf("%d speakers of attributed speeches, %.2f per 1,000 Han characters", n.Count, n.PerK)
		}
		fmt.Fprintf(opts.IO.Out, "  narrative: %s (%s): a story; only rules stated generally, outside its dialogue and narration, are taken offline\n", n.Doc, measure)
	}
	if c.Dropped > 0 {
		fmt.Fprintf(opts.IO.Out, "  dropped:  %d candidates whose quote was not in the cited chunk\n", c.Dropped)
	}
	for _, d := range res.Dropped {
		fmt.Fprintf(opts.IO.Out, "  left out: %s %q (%s entry %d)\n", d.Kind, d.Text, ws.Rel(dropPath), d.Entry)
	}
	for _, n := range res.UnusedDrops {
		fmt.Fprintf(opts.IO.Out, "  note: %s entry %d matches no extracted item (remove it if the item is gone)\n", ws.Rel(dropPath), n)
	}
	if weighed.Moved > 0 {
		fmt.Fprintf(opts.IO.Out, "  weighed:  %d rules quoted from a source graded C or D now quote the same words in a better one\n", weighed.Moved)
	}
	if weighed.Marked > 0 {
		fmt.Fprintf(opts.IO.Out, "  weak:     %d rules rest only on sources graded C or D (source_grade in rules.yaml; vibe sources list %s says why)\n", weighed.Marked, opts.Theme)
	}
	if client != nil {
		printLLMStats(opts.IO.Out, res.LLM)
	}
	if len(written) == 0 {
		fmt.Fprintf(opts.IO.Out, "  unchanged: %s\n", rep.Dir)
	} else {
		fmt.Fprintf(opts.IO.Out, "  wrote %s in %s (%d ids kept)\n", strings.Join(written, ", "), rep.Dir, c.Kept)
	}
	return nil
}

// weighByCredibility weighs the rules by the grades curate gave their
// sources in sources.lock.json (see extract.WeighByCredibility); a theme
// without grades changes nothing.
func weighByCredibility(ws *workspace.Workspace, theme string, files *knowledge.Files, chunks []chunk.Chunk) (extract.Weighed, error) {
	lock, err := curate.ReadLock(ws.LockFile(theme))
	if err != nil {
		return extract.Weighed{}, withExit(exitError, err)
	}
	grades := map[string]string{}
	for _, e := range lock.Sources {
		if e.Status == curate.StatusKept && e.Credibility != nil && e.File != "" {
			grades[ws.Rel(filepath.Join(ws.SourceDir(theme), e.File))] = e.Credibility.Grade
		}
	}
	if len(grades) == 0 {
		return extract.Weighed{}, nil
	}
	return extract.WeighByCredibility(files, chunks, func(src string) (string, bool) {
		g, ok := grades[src]
		return g, ok
	}), nil
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

// remoteInDryRun stands for a remote embedder in a dry run, which must send
// nothing: extract estimates the passes that group candidates by embedding.
type remoteInDryRun struct{ provider string }

func (r remoteInDryRun) Embed(context.Context, []string) ([][]float32, error) {
	return nil, fmt.Errorf("%w: the %s embedder is not called in a dry run", llm.ErrDryRun, r.provider)
}

// extractReportPath is where vibe extract --llm openai leaves what the
// passes read, merged and left out: every candidate the reduce dropped and
// every important item the skill does not carry, each with its reason.
func extractReportPath(ws *workspace.Workspace, theme string) string {
	return filepath.Join(ws.StateDir(), "reports", theme, "extract.json")
}

func writeExtractReport(ws *workspace.Workspace, theme string, st extract.LLMStats) error {
	st.Plan = nil
	data, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	p := extractReportPath(ws, theme)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	return os.WriteFile(p, append(data, '\n'), 0o644)
}

// extractUsagePath is where vibe extract leaves the usage record that vibe
// integrate puts in skills/<theme>/meta.json (extract_llm_usage).
func extractUsagePath(ws *workspace.Workspace, theme string) string {
	return filepath.Join(ws.StateDir(), "usage", theme, "extract.json")
}

// recordExtractUsage writes the usage of the extraction per pass, with the
// hashes of the knowledge it wrote. An extraction whose every answer came
// from the response cache and that changed no file keeps the record of the
// extraction that asked, as meta.json keeps the prose's.
func recordExtractUsage(ws *workspace.Workspace, theme, extractor string, usage map[string]llm.StageUsage, changed bool) error {
	path := extractUsagePath(ws, theme)
	rec := integrate.ExtractUsage{Extractor: extractor, Total: integrate.PassUsage{Pass: "total"}}
	for _, stage := range extract.Stages() {
		u, ok := usage[stage]
		if !ok {
			continue
		}
		p := integrate.PassUsage{Pass: stage}
		p.Add(integrate.PassUsage{Requests: u.Requests, CachedHits: u.CachedHits, PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens, Cost: u.Cost,
			EndpointPromptTokens: u.EndpointPromptTokens, EndpointCompletionTokens: u.EndpointCompletionTokens, CountedLarger: u.CountedLarger, Tokenizer: u.Tokenizer})
		rec.Passes = append(rec.Passes, p)
		rec.Total.Add(p)
	}
	if prev, err := integrate.ReadExtractUsage(path); err == nil && prev != nil && prev.Extractor == extractor && !changed && rec.Total.Requests == 0 {
		return nil
	}
	hashes, err := integrate.KnowledgeHashes(ws.SkillDir(theme))
	if err != nil {
		return err
	}
	rec.KnowledgeHashes = hashes
	return integrate.WriteExtractUsage(path, rec)
}

// printUsage reports LLM usage per pass on stderr, in pass order.
func printUsage(opts *extractOptions, c *llm.Client) {
	if opts.Quiet || opts.JSON {
		return
	}
	usage := c.Usage()
	var total llm.StageUsage
	for _, stage := range extract.Stages() {
		u, ok := usage[stage]
		if !ok {
			continue
		}
		fmt.Fprintf(opts.IO.ErrOut, "llm %-16s %4d requests, %4d cached, %d retries, %d repairs, %9d prompt + %8d completion tokens, cost %.4f\n",
			stage+":", u.Requests, u.CachedHits, u.Retries, u.Repairs, u.PromptTokens, u.CompletionTokens, u.Cost)
		total.Requests += u.Requests
		total.CachedHits += u.CachedHits
		total.PromptTokens += u.PromptTokens
		total.CompletionTokens += u.CompletionTokens
		total.EndpointPromptTokens += u.EndpointPromptTokens
		total.EndpointCompletionTokens += u.EndpointCompletionTokens
		total.CountedLarger += u.CountedLarger
		total.SentPromptTokens += u.SentPromptTokens
		total.CountedCompletionTokens += u.CountedCompletionTokens
		total.Cost += u.Cost
	}
	fmt.Fprintf(opts.IO.ErrOut, "llm %-16s %4d requests, %4d cached, %9d prompt + %8d completion tokens, cost %.4f\n",
		"total:", total.Requests, total.CachedHits, total.PromptTokens, total.CompletionTokens, total.Cost)
	if total.Requests > 0 {
		fmt.Fprintln(opts.IO.ErrOut, "llm "+tokenSourceLine(total, c.Tokenizer()))
	}
}

// tokenSourceLine says whose token figures a usage report shows: per
// request the larger of the endpoint's usage and vibe's count.
func tokenSourceLine(u llm.StageUsage, tokenizer string) string {
	src := "the endpoint's usage for every request (at least vibe's count)"
	switch {
	case u.CountedLarger == u.Requests:
		src = "vibe's count for every request (above the endpoint's usage)"
	case u.CountedLarger > 0:
		src = fmt.Sprintf("vibe's count for %d of %d requests (above the endpoint's usage), the endpoint's for the rest", u.CountedLarger, u.Requests)
	}
	return fmt.Sprintf("tokens: %s; the endpoint reported %d prompt + %d completion, vibe counted %d + %d with %s",
		src, u.EndpointPromptTokens, u.EndpointCompletionTokens, u.SentPromptTokens, u.CountedCompletionTokens, tokenizer)
}

// printLLMStats says what the LLM passes merged, dropped and re-read.
func printLLMStats(w io.Writer, st extract.LLMStats) {
	fmt.Fprintf(w, "  map:      %d sections, %d candidates (%d quotes not found in their chunk, left out)\n", st.Sections, st.Candidates, st.Unverified)
	fmt.Fprintf(w, "  reduce:   %d groups (%s), %d merged, %d dropped, %d not judged (kept)\n", st.Clusters, st.Grouping, st.Merged, len(st.Dropped), st.Unjudged)
	reasons := map[string]int{}
	for _, d := range st.Dropped {
		reasons[d.Reason]++
	}
	keys := make([]string, 0, len(reasons))
	for k := range reasons {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(w, "            dropped as %s: %d", k, reasons[k])
		for _, d := range st.Dropped {
			if d.Reason == k {
				fmt.Fprintf(w, ", e.g. %q (%s)", truncate(d.Text, 60), d.Why)
				break
			}
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "  gap:      %d heading groups re-read in %d requests, %d new candidates\n", st.GapSections, st.GapRequests, st.GapCandidates)
	fmt.Fprintf(w, "  tiers:    %d reviewed items, %d left out of the design's targets\n", st.Reviewed, st.NotSelected)
	gave := map[string][2]int{}
	var order []string
	for _, g := range st.GaveWay {
		if _, ok := gave[g.Tier]; !ok {
			order = append(order, g.Tier)
		}
		n := gave[g.Tier]
		if g.To != "" {
			n[0]++
		} else {
			n[1]++
		}
		gave[g.Tier] = n
	}
	for _, t := range order {
		n := gave[t]
		fmt.Fprintf(w, "            %s full: its %d least important rules gave way (%d kept in the room of tier2_core, %d left out; gave_way in the report lists them)\n", t, n[0]+n[1], n[0], n[1])
	}
	if st.StepsDropped > 0 {
		fmt.Fprintf(w, "  sop:      %d steps with neither a supporting source nor a tool left out\n", st.StepsDropped)
	}
	for _, f := range st.Failed {
		fmt.Fprintf(w, "  failed:   %s (skipped; a rebuild asks again)\n", f)
	}
}

func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}

// printDryRun prints what a build would send, pass by pass, with its cost
// from llm.prices; passes that depend on answers not received are marked
// as estimates.
func printDryRun(opts *extractOptions, cfg *workspace.Config, st extract.LLMStats, read *readFigures) error {
	model := cfg.LLM.Model
	p, priced := cfg.LLM.Prices[model]
	rep := dryRunReport{Model: model, Encoding: llm.EncodingFor(model), Total: dryRunPass{PassPlan: extract.PassPlan{Pass: "total"}}}
	for _, pp := range st.Plan {
		d := dryRunPass{PassPlan: pp, Cost: float64(pp.PromptTokens)*p.InputPerMTok/1e6 + float64(pp.CompletionTokens)*p.OutputPerMTok/1e6}
		rep.Passes = append(rep.Passes, d)
		t := &rep.Total
		t.Requests += pp.Requests
		t.Cached += pp.Cached
		t.PromptTokens += pp.PromptTokens
		t.CompletionTokens += pp.CompletionTokens
		t.Estimated = t.Estimated || pp.Estimated
		t.Cost += d.Cost
	}
	if opts.JSON {
		return printJSON(opts.IO.Out, extractReport{Theme: opts.Theme, Extractor: "llm:" + model, Written: []string{}, LLM: &st, DryRun: &rep, Read: read})
	}
	w := opts.IO.Out
	fmt.Fprintf(w, "dry run: extract %s with %s (%d source tokens, counted with tiktoken %s); nothing was sent\n", opts.Theme, model, st.SourceTokens, rep.Encoding)
	read.print(w)
	fmt.Fprintf(w, "  %-16s %9s %7s %12s %12s %10s\n", "pass", "requests", "cached", "prompt tok", "answer tok", "cost")
	row := func(d dryRunPass) {
		mark := " "
		if d.Estimated {
			mark = "~"
		}
		fmt.Fprintf(w, "  %-16s %s%8d %7d %s%11d %12d %10.4f", d.Pass, mark, d.Requests, d.Cached, mark, d.PromptTokens, d.CompletionTokens, d.Cost)
		if d.Note != "" && d.Requests > 0 && d.Pass != "total" {
			fmt.Fprintf(w, "  %s", d.Note)
		}
		fmt.Fprintln(w)
	}
	for _, d := range rep.Passes {
		row(d)
	}
	row(rep.Total)
	fmt.Fprintln(w, "  ~ estimate; answer tokens are always estimated")
	if !priced {
		fmt.Fprintf(w, "  no price for %s in llm.prices: costs are 0 (add llm.prices.%s.input_per_mtok and output_per_mtok to vibe.yaml)\n", model, model)
	}
	if b := cfg.LLM.Budget; opts.Budget > 0 || b > 0 {
		if opts.Budget > 0 {
			b = opts.Budget
		}
		if rep.Total.Cost > b {
			fmt.Fprintf(w, "  the estimate %.4f is above the budget %.4f: the build would stop before overspending\n", rep.Total.Cost, b)
		}
	}
	return nil
}

// glossaryTerms returns the terms and aliases of the theme's hand-kept
// glossary (knowledge/<theme>/glossary.yaml), which the offline extractor
// ranks rules by; none without one. The skill's glossary is not read: it
// is built by integrate from what extract writes, and data flows one way.
func glossaryTerms(knowledgeDir string) ([]string, error) {
	p := filepath.Join(knowledgeDir, "glossary.yaml")
	b, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	g, err := skills.ParseGlossary(b, p)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, t := range g.Terms {
		out = append(out, t.Names()...)
	}
	return out, nil
}
