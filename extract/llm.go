package extract

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/vibelife/vibe/chunk"
	"github.com/vibelife/vibe/knowledge"
	"github.com/vibelife/vibe/llm"
)

// The prompts of the LLM path, embedded in the binary. The first line of
// each is "version: <pass>/<n>"; that version is part of the cache key of
// every request the prompt makes, so changing a prompt (and bumping its
// version) re-asks exactly the requests it concerns.
var (
	//go:embed prompts/map.md
	mapPrompt string
	//go:embed prompts/gap.md
	gapPrompt string
	//go:embed prompts/reduce.md
	reducePrompt string
	//go:embed prompts/sop.md
	sopPrompt string
)

// promptVersion reads the "version: x/n" first line of a prompt.
func promptVersion(p string) string {
	return strings.TrimSpace(strings.TrimPrefix(strings.SplitN(p, "\n", 2)[0], "version:"))
}

// PromptVersion lists the versions of the embedded prompts, in pass order;
// it is written in meta.prompt_version of LLM-extracted files.
var PromptVersion = strings.Join([]string{promptVersion(mapPrompt), promptVersion(gapPrompt),
	promptVersion(reducePrompt), promptVersion(sopPrompt)}, " ")

// Stages label the requests of each pass in the client's usage and cache.
const (
	StageMap    = "extract.map"
	StageReduce = "extract.reduce"
	StageGap    = "extract.gap"
	StageSOP    = "extract.sop"
)

// Stages lists the passes in the order they run.
func Stages() []string { return []string{StageMap, StageGap, StageReduce, StageSOP} }

// Completer is what extraction needs of an LLM client (*llm.Client).
type Completer interface {
	Chat(ctx context.Context, req llm.Request) (llm.Response, error)
}

// Embedder embeds texts; the reduce groups near-duplicate candidates by the
// cosine similarity of their vectors (knowledge/embedding implements it).
type Embedder interface {
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

const mapSchema = `{
 "type":"object","additionalProperties":false,
 "required":["rules","patterns","red_flags","steps"],
 "properties":{
  "rules":{"type":"array","items":{"type":"object","required":["tier","condition","conclusion","chunk","quote"],"properties":{
    "tier":{"enum":["tier1","tier2","tier3"]},"condition":{"type":"string"},"conclusion":{"type":"string"},"chunk":{"type":["string","integer"]},"quote":{"type":"string"}}}},
  "patterns":{"type":"array","items":{"type":"object","required":["name","signature","indication","chunk","quote"],"properties":{
    "name":{"type":"string"},"signature":{"type":"string"},"indication":{"type":"string"},"chunk":{"type":["string","integer"]},"quote":{"type":"string"}}}},
  "red_flags":{"type":"array","items":{"type":"object","required":["signal","severity","action","chunk","quote"],"properties":{
    "signal":{"type":"string"},"severity":{"enum":["critical","warning","notice"]},"action":{"type":"string"},"chunk":{"type":["string","integer"]},"quote":{"type":"string"}}}},
  "steps":{"type":"array","items":{"type":"object","required":["phase","action","chunk","quote"],"properties":{
    "phase":{"enum":["P1","P2","P3","P4","P5"]},"action":{"type":"string"},"chunk":{"type":["string","integer"]},"quote":{"type":"string"}}}}
 }}`

// MapAnswer is what the model returns for one section, in the map and the
// gap pass.
type MapAnswer struct {
	Rules []struct {
		Tier, Condition, Conclusion, Quote string
		Chunk                              ChunkRef
	} `json:"rules"`
	Patterns []struct {
		Name, Signature, Indication, Quote string
		Chunk                              ChunkRef
	} `json:"patterns"`
	RedFlags []struct {
		Signal, Severity, Action, Quote string
		Chunk                           ChunkRef
	} `json:"red_flags"`
	Steps []struct {
		Phase, Action, Quote string
		Chunk                ChunkRef
	} `json:"steps"`
}

// ChunkRef is the number of a chunk within a request, which models write
// as a string or a number.
type ChunkRef string

// UnmarshalJSON accepts "3" and 3.
func (c *ChunkRef) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*c = ChunkRef(s)
		return nil
	}
	var n json.Number
	if err := json.Unmarshal(b, &n); err != nil {
		return fmt.Errorf("chunk: want a chunk number, got %s", b)
	}
	*c = ChunkRef(n.String())
	return nil
}

// maxSectionRunes bounds the source text sent in one map or gap request.
// Every request repeats the system prompt and the schema (about 1,000
// tokens), so sections are as long as an answer of 30 rules can cover.
const maxSectionRunes = 12000

// group is the chunks of one document under one heading path, in order
// (split when longer than maxSectionRunes).
type group struct {
	chunks []chunk.Chunk
	runes  int
}

// section is the unit of a map or gap request: consecutive groups of one
// document, packed up to maxSectionRunes so that short chapters do not each
// pay for the prompt.
type section struct {
	groups []group
}

func (s section) first() *chunk.Chunk { return &s.groups[0].chunks[0] }

// groups cuts chunks into heading groups.
func groups(chunks []chunk.Chunk) []group {
	var out []group
	var cur group
	key := ""
	for _, c := range chunks {
		k := c.Doc + "\x00" + strings.Join(c.HeadingPath, "\x00")
		n := runeLen(c.Text)
		if len(cur.chunks) > 0 && (k != key || cur.runes+n > maxSectionRunes) {
			out = append(out, cur)
			cur = group{}
		}
		key = k
		cur.chunks = append(cur.chunks, c)
		cur.runes += n
	}
	if len(cur.chunks) > 0 {
		out = append(out, cur)
	}
	return out
}

// pack joins consecutive groups of one document into sections of about
// equal size: the fewest sections of at most maxSectionRunes a document
// needs, each group going to the one its middle falls in, so a document
// of 31,000 characters makes three sections of about 10,400, not two full
// ones and a short third that pays the prompt for little text.
func pack(gs []group) []section {
	total := map[string]int{}
	for _, g := range gs {
		total[g.chunks[0].Doc] += g.runes
	}
	var out []section
	var cur section
	size, cum, idx := 0, 0, 0
	for _, g := range gs {
		doc := g.chunks[0].Doc
		if len(cur.groups) > 0 && doc != cur.first().Doc {
			out = append(out, cur)
			cur, size, cum, idx = section{}, 0, 0, 0
		}
		n := (total[doc] + maxSectionRunes - 1) / maxSectionRunes
		i := (cum + g.runes/2) * n / max(1, total[doc])
		if len(cur.groups) > 0 && (i > idx || size+g.runes > maxSectionRunes) {
			out = append(out, cur)
			cur, size = section{}, 0
		}
		idx = max(idx, i)
		cur.groups = append(cur.groups, g)
		size += g.runes
		cum += g.runes
	}
	if len(cur.groups) > 0 {
		out = append(out, cur)
	}
	return out
}

// sections packs chunks into map sections, leaving out front and back
// matter (序, 目录, 凡例, 跋; preface, contents: frontMatterChunk, as the
// offline extractor does): they hold no doctrine of the book, only praise
// of it and the story of its printing.
func sections(chunks []chunk.Chunk) []section {
	var body []chunk.Chunk
	for i := range chunks {
		if !frontMatterChunk(&chunks[i]) {
			body = append(body, chunks[i])
		}
	}
	return pack(groups(body))
}

// render writes a section for the model: the document, then each heading
// group with its chunks. Chunks are numbered 1, 2, ... within the section
// and open with `[#n]` (short ids cost fewer tokens and are copied back
// without mistakes; `[chunk n]` cost two tokens more a chunk, 200 on a
// book of 100 chunks); alias maps those numbers to the chunk ids.
func (s section) render() (text string, alias map[string]string) {
	alias = map[string]string{}
	var b strings.Builder
	head := s.first()
	title := head.Title
	if title == "" {
		title = head.Doc
	}
	fmt.Fprintf(&b, "Document: %s\n", title)
	for _, g := range s.groups {
		hp := strings.Join(g.chunks[0].HeadingPath, " > ")
		if hp == "" {
			hp = "(no heading)"
		}
		// A chunk that opens with its own one-level heading needs no
		// heading line above it.
		if !opensWithHeading(g.chunks[0]) {
			fmt.Fprintf(&b, "\n## %s\n", hp)
		}
		b.WriteString("\n")
		for _, ch := range g.chunks {
			n := fmt.Sprint(len(alias) + 1)
			alias[n] = ch.ID
			fmt.Fprintf(&b, "[#%s]\n%s\n\n", n, ch.Text)
		}
	}
	return b.String(), alias
}

// opensWithHeading reports whether a chunk's text opens with the Markdown
// heading that is its whole heading path.
func opensWithHeading(c chunk.Chunk) bool {
	if len(c.HeadingPath) != 1 {
		return false
	}
	line, _, _ := strings.Cut(c.Text, "\n")
	t := strings.TrimSpace(line)
	return strings.HasPrefix(t, "#") && strings.TrimSpace(strings.TrimLeft(t, "#")) == strings.TrimSpace(c.HeadingPath[0])
}

// DroppedItem is a candidate the reduce left out, with the model's reason.
type DroppedItem struct {
	Kind   string `json:"kind"`
	Text   string `json:"text"`
	Reason string `json:"reason"`
	Why    string `json:"why,omitempty"`
	Chunk  string `json:"chunk"`
}

// PassPlan is what one pass would send, for a dry run. Completion tokens
// are always an estimate; Estimated says the requests and prompt tokens
// are estimated too, because they depend on answers not received yet.
type PassPlan struct {
	Pass             string `json:"pass"`
	Requests         int    `json:"requests"`
	Cached           int    `json:"cached"`
	PromptTokens     int    `json:"prompt_tokens"`
	CompletionTokens int    `json:"completion_tokens"`
	Estimated        bool   `json:"estimated"`
	Note             string `json:"note,omitempty"`
}

// LLMStats says what the LLM path read, merged, dropped and re-read.
type LLMStats struct {
	// Sections is the number of map requests.
	Sections int `json:"sections"`
	// SourceTokens counts the tokens of every chunk (Options.CountTokens).
	SourceTokens int `json:"source_tokens"`
	// Candidates counts verified items of the map answers; Unverified
	// those whose quote was not in the cited chunk (map and gap).
	Candidates int `json:"candidates"`
	Unverified int `json:"unverified"`
	// Clusters counts the groups of near-duplicates sent to the reduce;
	// Merged the candidates folded into another item (same text, the
	// model's merge, or a merge across batches); MergedAcross those merged
	// across reduce batches by wording or quote (sameKnowledge).
	Clusters     int `json:"clusters"`
	Merged       int `json:"merged"`
	MergedAcross int `json:"merged_across_batches"`
	// Dropped lists what the model judged not worth keeping, and why.
	Dropped []DroppedItem `json:"dropped"`
	// Unjudged counts candidates a reduce answer did not account for; they
	// are kept as the map proposed them.
	Unjudged int `json:"unjudged"`
	// GapSections counts the heading groups the gap pass re-read,
	// GapRequests its requests, GapCandidates the verified items it found.
	GapSections   int `json:"gap_sections"`
	GapRequests   int `json:"gap_requests"`
	GapCandidates int `json:"gap_candidates"`
	// Reviewed counts the items that survived the reduce; NotSelected those
	// the tier pass left out of the design's targets.
	Reviewed    int `json:"reviewed"`
	NotSelected int `json:"not_selected"`
	// NotKept names every reviewed item of importance 4 or 5 the skill
	// does not carry, with the reason (tiers full, not chosen, a red flag
	// restating a tier-1 rule, merged into a near-duplicate).
	NotKept []NotKeptItem `json:"not_kept"`
	// GaveWay lists every rule that did not fit the tier the model gave
	// it, least important of its tier, with where it went (another tier's
	// room, or out) and why.
	GaveWay []GaveWayItem `json:"gave_way"`
	// StepsDropped counts SOP steps the model wrote without citing a
	// supporting candidate.
	StepsDropped int `json:"steps_dropped"`
	// Failed lists requests whose answer broke the schema even after the
	// repair round; the build went on without them (a rebuild asks again).
	Failed []string `json:"failed,omitempty"`
	// Grouping says how near-duplicates were grouped.
	Grouping string `json:"grouping"`
	// DryRun is true when the completer counted requests without sending;
	// Plan then says, per pass, what a build would send.
	DryRun bool       `json:"dry_run"`
	Plan   []PassPlan `json:"plan,omitempty"`
}

// llmRun is one LLM extraction.
type llmRun struct {
	opt    Options
	count  func(string) int
	byID   map[string]*chunk.Chunk
	seq    map[string]int // chunk id -> corpus position
	docIdx map[string]int
	tokens []int // per chunk
	st     LLMStats
	// pending is set in a dry run once a pass lacks answers: the passes
	// after it are estimated.
	pending bool
	// ran records the passes that ran; a dry run estimates the others.
	ran  map[string]bool
	plan map[string]*PassPlan
	// noEmbed is set when the embedder declined to work in a dry run.
	noEmbed bool
	// mapCompletion and mapSource calibrate the dry-run estimate of map
	// answers from the cached ones.
	mapCompletion, mapSource int
}

// LLM extracts with a model: map over sections, a gap pass re-reading
// rule-like sections no map candidate cites, reduce (group near duplicates
// by embedding similarity, let the model merge their wording and drop
// common sense) of the map's and the gap's candidates together, tiers
// filled from the reduce's tiers and importances against the design's
// targets, and an SOP whose steps name their tools. Every quote is verified against its chunk.
// A request error stops the run; every answer received is in the client's
// cache, so a rerun resumes.
func LLM(ctx context.Context, opt Options) (knowledge.Files, LLMStats, error) {
	x := &llmRun{opt: opt, count: opt.CountTokens, byID: map[string]*chunk.Chunk{}, seq: map[string]int{},
		docIdx: map[string]int{}, plan: map[string]*PassPlan{}, ran: map[string]bool{}}
	if x.count == nil {
		x.count = llm.EstimateTokens
	}
	x.tokens = make([]int, len(opt.Chunks))
	for i := range opt.Chunks {
		c := &opt.Chunks[i]
		x.byID[c.ID] = c
		x.seq[c.ID] = i
		if _, ok := x.docIdx[c.Doc]; !ok {
			x.docIdx[c.Doc] = len(x.docIdx)
		}
		x.tokens[i] = x.count(c.Text)
		x.st.SourceTokens += x.tokens[i]
	}
	x.st.Grouping = "identical text only (no embedder)"
	if opt.Embedder != nil {
		x.st.Grouping = fmt.Sprintf("embedding cosine >= %.2f", x.threshold())
	}
	files, err := x.run(ctx)
	if err == nil {
		x.finishPlan()
	}
	return files, x.st, err
}

func (x *llmRun) run(ctx context.Context) (knowledge.Files, error) {
	cands, err := x.mapPass(ctx)
	if err != nil {
		return knowledge.Files{}, err
	}
	// The gap pass re-reads what no map candidate cites before the reduce,
	// so its candidates are reviewed in the same reduce request as the
	// map's: one request's prompt and schema fewer, and the model sees
	// them side by side.
	gapCands, err := x.gapPass(ctx, cands)
	if err != nil {
		return knowledge.Files{}, err
	}
	cands, steps := split(append(cands, gapCands...))
	merged, err := x.reduce(ctx, cands)
	if err != nil {
		return knowledge.Files{}, err
	}
	x.st.Reviewed = len(merged)
	sel := x.tiers(merged)
	sop, err := x.sop(ctx, steps, sel)
	if err != nil {
		return knowledge.Files{}, err
	}
	if x.pending {
		return knowledge.Files{}, nil
	}
	return x.files(sop, sel), nil
}

// split separates SOP step candidates from the rest.
func split(xs []*item) (rest, steps []*item) {
	for _, it := range xs {
		if it.kind == kindStep {
			steps = append(steps, it)
		} else {
			rest = append(rest, it)
		}
	}
	return rest, steps
}

// request builds a structured request of a pass.
func (x *llmRun) request(stage, prompt, schemaName, schema, user string) llm.Request {
	return llm.Request{Stage: stage, Model: x.opt.Model, PromptVersion: promptVersion(prompt),
		Messages: []llm.Message{{Role: llm.RoleSystem, Content: prompt}, {Role: llm.RoleUser, Content: user}},
		Schema:   &llm.Schema{Name: schemaName, JSON: json.RawMessage(schema)}}
}

// send runs reqs of one pass (up to Options.Concurrency in flight) and
// sorts the outcomes: answers, requests a dry run did not send (pending),
// answers that broke the schema after the repair round (recorded in
// Failed, skipped). Any other error stops the run.
func (x *llmRun) send(ctx context.Context, stage string, reqs []llm.Request, names []string) ([]*llm.Response, error) {
	results := mapAll(ctx, x.opt.Completer, reqs, x.opt.Concurrency)
	if err := firstFailure(ctx, results); err != nil {
		for i, r := range results {
			if r.err == err {
				return nil, fmt.Errorf("%s %s: %w", stage, names[i], err)
			}
		}
	}
	out := make([]*llm.Response, len(reqs))
	p := x.planFor(stage)
	for i, r := range results {
		switch {
		case r.err == nil:
			out[i] = &results[i].resp
			if r.resp.Cached {
				p.Cached++
			}
		case errors.Is(r.err, llm.ErrDryRun):
			x.st.DryRun = true
			x.pending = true
			p.Requests++
			p.PromptTokens += llm.PromptTokens(reqs[i], x.count)
		case errors.Is(r.err, llm.ErrInvalidOutput):
			x.st.Failed = append(x.st.Failed, fmt.Sprintf("%s %s: %v", stage, names[i], r.err))
		}
	}
	return out, nil
}

// firstFailure returns the error that stopped a pass: the first, in request
// order, that is not the cancellation it caused in requests still in
// flight; ctx's own error when the caller cancelled.
func firstFailure(ctx context.Context, results []mapResult) error {
	var canceled error
	for _, r := range results {
		switch {
		case r.err == nil, errors.Is(r.err, llm.ErrDryRun), errors.Is(r.err, llm.ErrInvalidOutput):
		case errors.Is(r.err, context.Canceled) && ctx.Err() == nil:
			if canceled == nil {
				canceled = r.err
			}
		default:
			return r.err
		}
	}
	return canceled
}

func (x *llmRun) planFor(stage string) *PassPlan {
	p := x.plan[stage]
	if p == nil {
		p = &PassPlan{Pass: stage}
		x.plan[stage] = p
	}
	return p
}

// mapPass reads every section once.
func (x *llmRun) mapPass(ctx context.Context) ([]*item, error) {
	x.ran[StageMap] = true
	secs := sections(x.opt.Chunks)
	x.st.Sections = len(secs)
	out, err := x.read(ctx, StageMap, mapPrompt, "extract_map", secs, "c")
	if err != nil {
		return nil, err
	}
	out = x.dedupe(out)
	x.st.Candidates = len(out)
	return out, nil
}

// read sends one request per section with prompt (the map or the gap
// prompt, both answering mapSchema) and returns the verified candidates of
// the answers, numbered prefix1, prefix2, ...
func (x *llmRun) read(ctx context.Context, stage, prompt, schemaName string, secs []section, prefix string) ([]*item, error) {
	reqs := make([]llm.Request, len(secs))
	names := make([]string, len(secs))
	aliases := make([]map[string]string, len(secs))
	for i, s := range secs {
		var text string
		text, aliases[i] = s.render()
		reqs[i] = x.request(stage, prompt, schemaName, mapSchema, text)
		names[i] = sourceOf(s.first())
	}
	resps, err := x.send(ctx, stage, reqs, names)
	if err != nil {
		return nil, err
	}
	var out []*item
	n := 0
	for i, r := range resps {
		if r == nil {
			continue
		}
		if r.Cached && stage == StageMap {
			x.mapCompletion += r.Usage.CompletionTokens
			x.mapSource += x.sectionTokens(secs[i])
		}
		items, err := x.parseAnswer(r.Content, aliases[i], prefix, &n)
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", stage, names[i], err)
		}
		out = append(out, items...)
	}
	return out, nil
}

func (x *llmRun) sectionTokens(s section) int {
	n := 0
	for _, g := range s.groups {
		for _, c := range g.chunks {
			n += x.tokens[x.seq[c.ID]]
		}
	}
	return n
}

// parseAnswer turns a map or gap answer into verified items, numbered
// prefix1, prefix2, ... from *n. alias maps the chunk numbers of the
// request to chunk ids.
func (x *llmRun) parseAnswer(content string, alias map[string]string, prefix string, n *int) ([]*item, error) {
	var ans MapAnswer
	if err := json.Unmarshal([]byte(stripFenceJSON(content)), &ans); err != nil {
		return nil, fmt.Errorf("answer is not JSON: %w", err)
	}
	var out []*item
	add := func(it *item, num ChunkRef, quote string) {
		id := alias[strings.TrimPrefix(strings.TrimSpace(string(num)), "#")]
		ch, ok := x.byID[id]
		quote = strings.TrimSpace(quote)
		if !ok || quote == "" || !strings.Contains(ch.Text, quote) {
			x.st.Unverified++
			return
		}
		*n++
		it.id = fmt.Sprintf("%s%d", prefix, *n)
		it.ev = []knowledge.Evidence{{Chunk: id, Quote: quote}}
		it.chunk, it.seq, it.doc = ch, x.seq[id], x.docIdx[ch.Doc]
		out = append(out, it)
	}
	for _, r := range ans.Rules {
		if strings.TrimSpace(r.Condition) == "" || strings.TrimSpace(r.Conclusion) == "" {
			continue
		}
		add(&item{kind: kindRule, tier: r.Tier, condition: r.Condition, conclusion: r.Conclusion}, r.Chunk, r.Quote)
	}
	for _, p := range ans.Patterns {
		if strings.TrimSpace(p.Name) == "" {
			continue
		}
		add(&item{kind: kindPattern, name: p.Name, signature: p.Signature, indication: p.Indication}, p.Chunk, p.Quote)
	}
	for _, f := range ans.RedFlags {
		if strings.TrimSpace(f.Signal) == "" {
			continue
		}
		add(&item{kind: kindFlag, signal: f.Signal, severity: f.Severity, action: f.Action}, f.Chunk, f.Quote)
	}
	for _, s := range ans.Steps {
		if strings.TrimSpace(s.Action) == "" {
			continue
		}
		add(&item{kind: kindStep, phase: s.Phase, action: s.Action}, s.Chunk, s.Quote)
	}
	return out, nil
}

// dedupe folds items of identical normalised text into the first one,
// keeping the union of their evidence.
func (x *llmRun) dedupe(xs []*item) []*item {
	first := map[string]*item{}
	var out []*item
	for _, it := range xs {
		k := it.key()
		if f, ok := first[k]; ok {
			f.addEvidence(it.ev)
			x.st.Merged++
			continue
		}
		first[k] = it
		out = append(out, it)
	}
	return out
}

func stripFenceJSON(s string) string {
	t := strings.TrimSpace(s)
	if strings.HasPrefix(t, "```") {
		t = strings.TrimPrefix(t, "```json")
		t = strings.TrimPrefix(t, "```")
		t = strings.TrimSuffix(strings.TrimSpace(t), "```")
	}
	return t
}

func nonNil[T any](xs []T) []T {
	if xs == nil {
		return []T{}
	}
	return xs
}

type mapResult struct {
	resp llm.Response
	err  error
}

// mapAll sends reqs with up to concurrency in flight and returns the
// results in request order. After a failure (other than a dry run or an
// answer that broke the schema) no new request starts; requests never
// started get context.Canceled.
func mapAll(ctx context.Context, c Completer, reqs []llm.Request, concurrency int) []mapResult {
	if concurrency < 1 {
		concurrency = 1
	}
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	results := make([]mapResult, len(reqs))
	for i := range results {
		results[i].err = context.Canceled
	}
	next := make(chan int)
	go func() {
		defer close(next)
		for i := range reqs {
			select {
			case next <- i:
			case <-cctx.Done():
				return
			}
		}
	}()
	var wg sync.WaitGroup
	for w := 0; w < concurrency; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if cctx.Err() != nil {
					continue
				}
				r, err := c.Chat(cctx, reqs[i])
				results[i] = mapResult{r, err}
				if err != nil && !errors.Is(err, llm.ErrDryRun) && !errors.Is(err, llm.ErrInvalidOutput) {
					cancel()
				}
			}
		}()
	}
	wg.Wait()
	return results
}
