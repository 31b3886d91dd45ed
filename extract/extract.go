package extract

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/vibelife/vibe/chunk"
	"github.com/vibelife/vibe/knowledge"
)

// OfflineExtractor names the offline heuristic in meta.extractor.
const OfflineExtractor = "offline-heuristic/2"

// ErrNoChunks means there is nothing to extract from.
var ErrNoChunks = errors.New("no chunks to extract from")

// Options configure a run.
type Options struct {
	// Theme names the skill.
	Theme string
	// Chunks are the theme's chunks, from the store.
	Chunks []chunk.Chunk
	// Glossary are the theme's terms and their aliases
	// (knowledge/<theme>/glossary.yaml), if it has one: the offline
	// extractor keeps first the rules stated in them.
	Glossary []string
	// Previous are the existing files, for stable ids; nil for a first build.
	Previous *knowledge.Files
	// Completer, when set, extracts with a model (*llm.Client) instead of
	// the offline heuristic; Model names it.
	Completer Completer
	Model     string
	// Concurrency bounds map requests in flight (default 1).
	Concurrency int
	// Embedder, for the LLM path, groups near-duplicate candidates before
	// the model merges them; nil groups identical text only. In a dry run
	// an embedder that would send requests answers an error wrapping
	// llm.ErrDryRun, and the passes needing it are estimated.
	Embedder Embedder
	// SimilarityThreshold is the cosine at which candidates are grouped
	// (default 0.75).
	SimilarityThreshold float64
	// CountTokens counts tokens for the dry-run plan and the figures (a
	// tiktoken counter); nil uses llm.EstimateTokens.
	CountTokens func(string) int
	// ComputeTools names the compute tools a plugin runs (declared by hand
	// in knowledge/<theme>/tools.yaml). An SOP step of the LLM path may
	// name only these: a compute tool nothing runs would dead-end the
	// agent at serve time.
	ComputeTools []string
	// DeclaredTools names every tool declared by hand in
	// knowledge/<theme>/tools.yaml; a step may name them, the core tools
	// and display or retrieve tools, no other.
	DeclaredTools []string
	// Drops are the user's knowledge/<theme>/drop.yaml: items left out
	// of the files (ApplyDrops).
	Drops []Drop
}

// Counts says how many items of each kind were produced.
type Counts struct {
	Phases, Steps, Patterns, RedFlags, Tier1, Tier2, Tier3 int
	// Dropped counts candidates whose quote was not found in their chunk.
	Dropped int
	// Kept counts items that kept their id from the previous files.
	Kept int
}

// Result is the outcome of a run.
type Result struct {
	Files  knowledge.Files
	Counts Counts
	// LLM counts what the LLM path read (zero offline).
	LLM LLMStats
	// Dropped are the items Options.Drops removed; UnusedDrops the drop
	// entries (1-based) that matched nothing.
	Dropped     []Dropped
	UnusedDrops []int
	// Narrative are the documents the offline extractor read as novels
	// (NarrativeDocuments): it took from them only rules stated generally.
	Narrative []NarrativeDoc
}

// Run extracts the knowledge files, with the model when opt.Completer is
// set (see LLM), else offline. In a dry run (the completer answers
// llm.ErrDryRun) it returns no files, only Result.LLM.Plan.
func Run(ctx context.Context, opt Options) (Result, error) {
	if len(opt.Chunks) == 0 {
		return Result{}, fmt.Errorf("extract %s: %w: run `vibe ingest %s` first", opt.Theme, ErrNoChunks, opt.Theme)
	}
	var res Result
	var files knowledge.Files
	var err error
	if opt.Completer != nil {
		files, res.LLM, err = LLM(ctx, opt)
		if err == nil && res.LLM.DryRun {
			// Nothing was sent: res.LLM.Plan says what a build would send.
			return res, nil
		}
	} else {
		files, err = Offline(ctx, opt.Theme, opt.Chunks, opt.Glossary)
		res.Narrative = NarrativeDocuments(opt.Chunks)
	}
	if err != nil {
		return Result{}, fmt.Errorf("extract %s: %w", opt.Theme, err)
	}
	res.Counts.Dropped = Verify(&files, opt.Chunks)
	res.Counts.Kept = StableIDs(&files, opt.Previous)
	res.Dropped, res.UnusedDrops = ApplyDrops(&files, opt.Drops)
	LinkRedFlags(&files)
	knowledge.MarkGrave(&files)
	res.Files = files
	res.Counts.count(files)
	return res, nil
}

func (c *Counts) count(f knowledge.Files) {
	c.Phases = len(f.SOP.SOP.Phases)
	c.Steps = 0
	for _, p := range f.SOP.SOP.Phases {
		c.Steps += len(p.Steps)
	}
	c.Patterns = len(f.Patterns.Patterns.QuickPatterns)
	c.RedFlags = len(f.Patterns.Patterns.RedFlags)
	c.Tier1 = len(f.Rules.Rules.Tier1)
	c.Tier2 = len(f.Rules.Rules.Tier2)
	c.Tier3 = len(f.Rules.Rules.Tier3)
}

// sources lists the distinct documents of chunks, sorted.
func sources(chunks []chunk.Chunk) []string {
	seen := map[string]bool{}
	var out []string
	for _, c := range chunks {
		if !seen[c.Doc] {
			seen[c.Doc] = true
			out = append(out, c.Doc)
		}
	}
	sort.Strings(out)
	return out
}

// quoteOK reports whether every evidence quote occurs in its cited chunk.
func quoteOK(ev []knowledge.Evidence, byID map[string]string) bool {
	if len(ev) == 0 {
		return false
	}
	for _, e := range ev {
		text, ok := byID[e.Chunk]
		if !ok || e.Quote == "" || !strings.Contains(text, e.Quote) {
			return false
		}
	}
	return true
}

// Verify drops every item whose evidence does not cite an existing chunk with
// a quote found verbatim in it, and returns how many were dropped. SOP steps
// with no evidence at all are kept (the generic phases may have none); steps
// with bad evidence lose it.
func Verify(f *knowledge.Files, chunks []chunk.Chunk) int {
	byID := make(map[string]string, len(chunks))
	for _, c := range chunks {
		byID[c.ID] = c.Text
	}
	dropped := 0
	keepRules := func(in []knowledge.Rule) []knowledge.Rule {
		out := in[:0]
		for _, r := range in {
			if quoteOK(r.Evidence, byID) {
				out = append(out, r)
			} else {
				dropped++
			}
		}
		return out
	}
	r := &f.Rules.Rules
	r.Tier1, r.Tier2, r.Tier3 = keepRules(r.Tier1), keepRules(r.Tier2), keepRules(r.Tier3)
	p := &f.Patterns.Patterns
	qp := p.QuickPatterns[:0]
	for _, x := range p.QuickPatterns {
		if quoteOK(x.Evidence, byID) {
			qp = append(qp, x)
		} else {
			dropped++
		}
	}
	p.QuickPatterns = qp
	rf := p.RedFlags[:0]
	for _, x := range p.RedFlags {
		if quoteOK(x.Evidence, byID) {
			rf = append(rf, x)
		} else {
			dropped++
		}
	}
	p.RedFlags = rf
	for i := range f.SOP.SOP.Phases {
		ph := &f.SOP.SOP.Phases[i]
		if len(ph.Evidence) > 0 && !quoteOK(ph.Evidence, byID) {
			ph.Evidence = nil
			dropped++
		}
		for j := range ph.Steps {
			st := &ph.Steps[j]
			if len(st.Evidence) > 0 && !quoteOK(st.Evidence, byID) {
				st.Evidence = []knowledge.Evidence{}
				dropped++
			}
		}
	}
	return dropped
}

// LinkRedFlags sets the rule of every red flag that restates one of the
// skill's rules: its signal has most of the rule's condition's wording
// (bigram Dice at least restateSimilarity with the condition, or with the
// condition and conclusion), or it quotes the same span of the same chunk.
// The agent then reads the flag and the rule as one piece of knowledge.
func LinkRedFlags(f *knowledge.Files) {
	rules := f.Rules.Rules.All()
	for i := range f.Patterns.Patterns.RedFlags {
		rf := &f.Patterns.Patterns.RedFlags[i]
		rf.Rule = ""
		sig := bigrams(rf.Signal)
		best, bestSim := "", restateSimilarity
		for _, r := range rules {
			sim := max(dice(sig, bigrams(r.Condition)), dice(sig, bigrams(r.Condition+r.Conclusion)))
			if sameQuote(rf.Evidence, r.Evidence) {
				sim = max(sim, 1)
			}
			if sim >= bestSim && (best == "" || sim > bestSim) {
				best, bestSim = r.ID, sim
			}
		}
		rf.Rule = best
	}
}

// sameQuote reports whether two items quote the same span of one chunk
// (one quote containing the other).
func sameQuote(a, b []knowledge.Evidence) bool {
	for _, e := range a {
		for _, g := range b {
			if e.Chunk == g.Chunk && e.Quote != "" && g.Quote != "" && (strings.Contains(e.Quote, g.Quote) || strings.Contains(g.Quote, e.Quote)) {
				return true
			}
		}
	}
	return false
}
