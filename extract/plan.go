package extract

import (
	"fmt"
	"math"

	"github.com/vibelife/vibe/llm"
)

// Dry-run estimates. A dry run knows the map requests exactly: they depend
// on the sources only. The reduce, gap, tier and SOP requests depend on
// answers; when those answers are not in the cache the requests are
// estimated with these ratios (documented in docs/extract.md).
const (
	// defaultAnswerRatio is the answer tokens of a map or gap request per
	// source token, when no cached map answer calibrates it.
	defaultAnswerRatio = 0.2
	// candidateShare is the reduce prompt (candidate lines, without quotes
	// and JSON keys) per map answer token.
	candidateShare = 0.6
	// reduceAnswerRatio is the answer tokens per reduce prompt token.
	reduceAnswerRatio = 0.8
	// avgItemTokens is the tokens of one item line.
	avgItemTokens = 40
	// stepShare is the method steps per map candidate.
	stepShare = 0.05
	// sopAnswerTokens is the expected answer of the SOP request.
	sopAnswerTokens = 2000
)

// mapRatio is the answer tokens per source token of the map: measured on
// the cached map answers when there are any.
func (x *llmRun) mapRatio() (float64, string) {
	if x.mapSource > 0 && x.mapCompletion > 0 {
		return float64(x.mapCompletion) / float64(x.mapSource), "measured on the cached map answers"
	}
	return defaultAnswerRatio, "assumed"
}

// overhead is the prompt tokens of a pass's request without its content.
func (x *llmRun) overhead(stage, prompt, schemaName, schema string) int {
	return llm.PromptTokens(x.request(stage, prompt, schemaName, schema, ""), x.count)
}

// finishPlan completes the dry-run plan: completion tokens of the requests
// a dry run counted, and estimates of the passes that could not be planned
// because they depend on answers not received.
func (x *llmRun) finishPlan() {
	ratio, how := x.mapRatio()
	mp, gp, rp, sp := x.planFor(StageMap), x.planFor(StageGap), x.planFor(StageReduce), x.planFor(StageSOP)
	// Answers of the requests counted exactly.
	mp.CompletionTokens = int(ratio * float64(mp.PromptTokens))
	rp.CompletionTokens = int(reduceAnswerRatio * float64(rp.PromptTokens))
	sp.CompletionTokens = sopAnswerTokens * sp.Requests
	mp.Note = fmt.Sprintf("requests and prompt tokens exact; answers estimated at %.2f tokens per source token (%s)", ratio, how)
	for _, p := range []*PassPlan{gp, rp, sp} {
		if p.Requests > 0 {
			p.Note = "requests and prompt tokens exact; answers estimated"
		}
	}
	estimated := func(p *PassPlan, requests, prompt, completion int, note string) {
		if requests == 0 {
			return
		}
		p.Requests += requests
		p.PromptTokens += prompt
		p.CompletionTokens += completion
		p.Estimated = true
		p.Note = note
	}
	reduceOf := func(candTokens float64) (int, int, int) {
		if candTokens < 1 {
			return 0, 0, 0
		}
		n := int(math.Ceil(candTokens / maxBatchTokens))
		return n, int(candTokens) + n*x.overhead(StageReduce, reducePrompt, "extract_reduce", reduceSchema), int(reduceAnswerRatio * candTokens)
	}
	// The gap pass re-reads what no map candidate cites: estimated, until
	// the map answers are in, at its bound.
	gapCompletion := ratio * float64(gp.PromptTokens)
	if !x.ran[StageGap] {
		tokens := gapShare * float64(x.st.SourceTokens)
		perSection := float64(x.st.SourceTokens) / float64(max(1, x.st.Sections))
		n := int(math.Ceil(tokens / math.Max(1, perSection)))
		p := int(tokens) + n*x.overhead(StageGap, gapPrompt, "extract_gap", mapSchema)
		estimated(gp, n, p, int(ratio*tokens), fmt.Sprintf("at most: re-reads at most %.0f%% of the source tokens; depends on the map answers", gapShare*100))
		gapCompletion += ratio * tokens
	} else {
		gp.CompletionTokens = int(gapCompletion)
	}
	// The reduce reviews the candidates of the map and gap answers
	// (received or estimated) together.
	candTokens := candidateShare * (float64(x.mapCompletion+mp.CompletionTokens) + gapCompletion)
	if !x.ran[StageReduce] {
		r, p, c := reduceOf(candTokens)
		estimated(rp, r, p, c, "estimate: depends on the map and gap answers")
	}
	if !x.ran[StageSOP] {
		items := candTokens / avgItemTokens
		lines := min(int(stepShare*items), maxSOPCandidates) + min(int(items), maxTier1+maxPatterns+maxRedFlags)
		p := x.overhead(StageSOP, sopPrompt, "extract_sop", sopSchema) + lines*avgItemTokens
		estimated(sp, 1, p, sopAnswerTokens, "estimate: depends on the earlier answers")
	}
	if x.noEmbed {
		for _, p := range []*PassPlan{gp, rp, sp} {
			if p.Estimated {
				p.Note += " (grouping candidates needs the embedder, which a dry run does not call)"
			}
		}
	}
	x.st.Plan = nil
	for _, s := range Stages() {
		x.st.Plan = append(x.st.Plan, *x.planFor(s))
	}
}
