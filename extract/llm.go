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

//go:embed prompts/map.md
var mapPrompt string

// PromptVersion is the version of the embedded prompts, part of the cache
// key of every request.
var PromptVersion = strings.TrimSpace(strings.TrimPrefix(strings.SplitN(mapPrompt, "\n", 2)[0], "version:"))

// Completer is what extraction needs of an LLM client (*llm.Client).
type Completer interface {
	Chat(ctx context.Context, req llm.Request) (llm.Response, error)
}

const mapSchema = `{
 "type":"object","additionalProperties":false,
 "required":["rules","patterns","red_flags","steps"],
 "properties":{
  "rules":{"type":"array","items":{"type":"object","required":["tier","condition","conclusion","chunk","quote"],"properties":{
    "tier":{"enum":["tier1","tier2","tier3"]},"condition":{"type":"string"},"conclusion":{"type":"string"},"chunk":{"type":"string"},"quote":{"type":"string"}}}},
  "patterns":{"type":"array","items":{"type":"object","required":["name","signature","indication","chunk","quote"],"properties":{
    "name":{"type":"string"},"signature":{"type":"string"},"indication":{"type":"string"},"chunk":{"type":"string"},"quote":{"type":"string"}}}},
  "red_flags":{"type":"array","items":{"type":"object","required":["signal","severity","action","chunk","quote"],"properties":{
    "signal":{"type":"string"},"severity":{"enum":["critical","warning","notice"]},"action":{"type":"string"},"chunk":{"type":"string"},"quote":{"type":"string"}}}},
  "steps":{"type":"array","items":{"type":"object","required":["phase","action","chunk","quote"],"properties":{
    "phase":{"enum":["P1","P2","P3","P4","P5"]},"action":{"type":"string"},"chunk":{"type":"string"},"quote":{"type":"string"}}}}
 }}`

// MapAnswer is what the model returns for one section.
type MapAnswer struct {
	Rules []struct {
		Tier, Condition, Conclusion, Chunk, Quote string
	} `json:"rules"`
	Patterns []struct {
		Name, Signature, Indication, Chunk, Quote string
	} `json:"patterns"`
	RedFlags []struct {
		Signal, Severity, Action, Chunk, Quote string
	} `json:"red_flags"`
	Steps []struct {
		Phase, Action, Chunk, Quote string
	} `json:"steps"`
}

// section is the unit of the map step: chunks of one document under one
// heading path, split when too long.
type section struct {
	chunks []chunk.Chunk
}

// maxSectionRunes bounds the text sent in one map request.
const maxSectionRunes = 6000

func sections(chunks []chunk.Chunk) []section {
	var out []section
	var cur section
	key, size := "", 0
	for _, c := range chunks {
		k := c.Doc + "\x00" + strings.Join(c.HeadingPath, "\x00")
		n := runeLen(c.Text)
		if len(cur.chunks) > 0 && (k != key || size+n > maxSectionRunes) {
			out = append(out, cur)
			cur, size = section{}, 0
		}
		key = k
		cur.chunks = append(cur.chunks, c)
		size += n
	}
	if len(cur.chunks) > 0 {
		out = append(out, cur)
	}
	return out
}

// LLMStats counts what the LLM path read.
type LLMStats struct {
	Sections     int
	SourceTokens int
	// DryRun is true when the completer counted requests without sending.
	DryRun bool
}

// LLM extracts with a model: map over sections, verify quotes, reduce by
// merging duplicates and capping tiers to the design's targets. A request
// error stops the run (answers already received are in the client's cache,
// so a rerun resumes).
func LLM(ctx context.Context, theme, model string, c Completer, chunks []chunk.Chunk, concurrency int) (knowledge.Files, LLMStats, error) {
	var st LLMStats
	byID := map[string]*chunk.Chunk{}
	for i := range chunks {
		byID[chunks[i].ID] = &chunks[i]
		st.SourceTokens += llm.EstimateTokens(chunks[i].Text)
	}
	var t1, t2, t3 []cand[knowledge.Rule]
	var pats []cand[knowledge.Pattern]
	var flags []cand[knowledge.RedFlag]
	steps := map[string][]knowledge.Step{}
	seen := map[string]bool{}
	docIdx := map[string]int{}
	verified := func(id, quote string) (*chunk.Chunk, []knowledge.Evidence, bool) {
		ch, ok := byID[id]
		quote = strings.TrimSpace(quote)
		if !ok || quote == "" || !strings.Contains(ch.Text, quote) {
			return nil, nil, false
		}
		return ch, []knowledge.Evidence{{Chunk: id, Quote: quote}}, true
	}
	secs := sections(chunks)
	st.Sections = len(secs)
	reqs := make([]llm.Request, len(secs))
	for i, s := range secs {
		var b strings.Builder
		for _, ch := range s.chunks {
			fmt.Fprintf(&b, "[chunk %s]\n%s\n\n", ch.ID, ch.Text)
		}
		head := s.chunks[0]
		user := fmt.Sprintf("Document: %s\nSection: %s\n\n%s", sourceOf(&head), strings.Join(head.HeadingPath, " > "), b.String())
		reqs[i] = llm.Request{Stage: "extract.map", Model: model, PromptVersion: PromptVersion,
			Messages: []llm.Message{{Role: llm.RoleSystem, Content: mapPrompt}, {Role: llm.RoleUser, Content: user}},
			Schema:   &llm.Schema{Name: "extract_map", JSON: json.RawMessage(mapSchema)}}
	}
	results := mapAll(ctx, c, reqs, concurrency)
	// The first failure, in section order, stops the run; every answer
	// received before it is in the client's cache for the rerun.
	for i, r := range results {
		if r.err != nil && !errors.Is(r.err, llm.ErrDryRun) {
			return knowledge.Files{}, st, fmt.Errorf("map %s: %w", sourceOf(&secs[i].chunks[0]), r.err)
		}
	}
	for i, s := range secs {
		head := s.chunks[0]
		resp, err := results[i].resp, results[i].err
		if errors.Is(err, llm.ErrDryRun) {
			st.DryRun = true
			continue
		}
		var ans MapAnswer
		if err := json.Unmarshal([]byte(stripFenceJSON(resp.Content)), &ans); err != nil {
			return knowledge.Files{}, st, fmt.Errorf("map %s: answer is not JSON: %w", sourceOf(&head), err)
		}
		if _, ok := docIdx[head.Doc]; !ok {
			docIdx[head.Doc] = len(docIdx)
		}
		d := docIdx[head.Doc]
		for _, r := range ans.Rules {
			ch, ev, ok := verified(r.Chunk, r.Quote)
			k := normalise(r.Condition + "|" + r.Conclusion)
			if !ok || seen[k] || r.Condition == "" || r.Conclusion == "" {
				continue
			}
			seen[k] = true
			x := cand[knowledge.Rule]{s: sentence{Chunk: ch, Doc: d}, v: knowledge.Rule{Condition: r.Condition, Source: sourceOf(ch), Evidence: ev}}
			switch r.Tier {
			case "tier1":
				x.v.Action, x.v.Priority = r.Conclusion, "high"
				t1 = append(t1, x)
			case "tier3":
				x.v.Conclusion, x.v.Confidence = r.Conclusion, "medium"
				t3 = append(t3, x)
			default:
				x.v.Conclusion, x.v.Confidence = r.Conclusion, "high"
				t2 = append(t2, x)
			}
		}
		for _, p := range ans.Patterns {
			ch, ev, ok := verified(p.Chunk, p.Quote)
			k := "p" + normalise(p.Name)
			if !ok || seen[k] || p.Name == "" {
				continue
			}
			seen[k] = true
			pats = append(pats, cand[knowledge.Pattern]{s: sentence{Chunk: ch, Doc: d}, v: knowledge.Pattern{Name: p.Name, Signature: p.Signature, Indication: p.Indication, Confidence: "medium", Evidence: ev}})
		}
		for _, f := range ans.RedFlags {
			ch, ev, ok := verified(f.Chunk, f.Quote)
			k := "f" + normalise(f.Signal)
			if !ok || seen[k] || f.Signal == "" {
				continue
			}
			seen[k] = true
			sev := f.Severity
			if sev != "critical" && sev != "warning" {
				sev = "notice"
			}
			flags = append(flags, cand[knowledge.RedFlag]{s: sentence{Chunk: ch, Doc: d}, v: knowledge.RedFlag{Signal: f.Signal, Severity: sev, Action: f.Action, Evidence: ev}})
		}
		for _, sp := range ans.Steps {
			_, ev, ok := verified(sp.Chunk, sp.Quote)
			k := "s" + normalise(sp.Action)
			if !ok || seen[k] || sp.Action == "" || len(steps[sp.Phase]) >= maxMethod {
				continue
			}
			seen[k] = true
			steps[sp.Phase] = append(steps[sp.Phase], knowledge.Step{Action: sp.Action, Output: sp.Action, Evidence: ev})
		}
	}
	zh := false
	if len(chunks) > 0 {
		zh = isHan(chunks[0].Text)
	}
	var sents []sentence
	sop := buildSOP(theme, zh, sents)
	for i := range sop.Phases {
		ph := &sop.Phases[i]
		for j, s := range steps[ph.ID] {
			s.ID = fmt.Sprintf("%s.%d", ph.ID, len(ph.Steps)+1)
			s.Tool = phaseSpecs[i].tool
			_ = j
			ph.Steps = append(ph.Steps, s)
		}
	}
	sortStable(flags, func(a, b cand[knowledge.RedFlag]) bool { return sevRank(a.v.Severity) < sevRank(b.v.Severity) })
	meta := &knowledge.Meta{Theme: theme, Extractor: "llm:" + model, PromptVersion: PromptVersion, Sources: sources(chunks)}
	files := knowledge.Files{
		SOP: knowledge.SOPFile{SOP: sop, Meta: meta},
		Patterns: knowledge.PatternsFile{Patterns: knowledge.Patterns{
			QuickPatterns: nonNil(values(pick(pats, maxPatterns, true))),
			RedFlags:      nonNil(values(pick(flags, maxRedFlags, true))),
		}, Meta: meta},
		Rules: knowledge.RulesFile{Rules: knowledge.Rules{
			Tier1: nonNil(values(pick(t1, maxTier1, true))),
			Tier2: nonNil(values(pick(t2, maxTier2, true))),
			Tier3: nonNil(values(pick(t3, maxTier3, true))),
		}, Meta: meta},
	}
	return files, st, nil
}

func nonNil[T any](xs []T) []T {
	if xs == nil {
		return []T{}
	}
	return xs
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

type mapResult struct {
	resp llm.Response
	err  error
}

// mapAll sends reqs with up to concurrency in flight and returns the
// results in request order. After a failure (other than a dry run) no new
// request starts; requests never started get the context's error.
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
				if err != nil && !errors.Is(err, llm.ErrDryRun) {
					cancel()
				}
			}
		}()
	}
	wg.Wait()
	return results
}
