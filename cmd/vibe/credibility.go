package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/vibelife/vibe/curate"
	"github.com/vibelife/vibe/llm"
	"github.com/vibelife/vibe/workspace"
)

// credibilityPromptVersion versions the judge's prompt and schema; it keys
// the cached judgements (in .vibe/cache/curate and the LLM cache).
const credibilityPromptVersion = "curate-credibility/1"

const credibilitySystem = `You judge the credibility of one source gathered for an expert knowledge base.
You see where it came from (repository and commit, URL, publisher, edition, as far as known),
what was measured of its text (OCR-like noise, truncation, disagreement with other editions of
the same work, the converter's notes) and three excerpts: its beginning, middle and end.

Grade it:
  A  a sound text of a recognised work or edition, complete and faithful;
  B  usable: minor flaws (some typos, a missing preface, thin provenance);
  C  use with care: noticeable corruption, cuts, or a doubtful or anonymous origin;
  D  do not rely on it: badly corrupted, truncated, spam, machine-generated filler,
     or not what it claims to be.
Weigh the measured findings: they were counted over the whole text, the excerpts are samples.
Do not grade a work down for its doctrine or for being old; grade the copy and its origin.
Answer JSON only: {"grade": "A"|"B"|"C"|"D", "reason": "one or two sentences naming the evidence"}.`

var credibilitySchema = json.RawMessage(`{
  "type": "object",
  "required": ["grade", "reason"],
  "additionalProperties": false,
  "properties": {
    "grade": {"enum": ["A", "B", "C", "D"]},
    "reason": {"type": "string", "minLength": 1}
  }
}`)

// credibilityJudge returns the judge curate grades sources with, its
// version (prompt and model, for the cache) and, when there is none, why.
func (a *app) credibilityJudge(ws *workspace.Workspace, cfg *workspace.Config, offline bool) (curate.JudgeFunc, string, string) {
	if offline || !cfg.LLMEnabled() {
		return nil, "", "offline: no model configured, so the grade rests on the measured findings alone"
	}
	if !cfg.Curate.Judge {
		return nil, "", "not judged by a model: curate.judge is off, so the grade rests on the measured findings alone"
	}
	client := a.trackLLM(newLLMClient(ws, cfg, cfg.LLM.Model, cfg.LLM.Budget, false))
	model := cfg.LLM.Model
	judge := func(ctx context.Context, in curate.JudgeInput) (curate.Judgement, error) {
		resp, err := client.Chat(ctx, credibilityRequest(in))
		if err != nil {
			return curate.Judgement{}, err
		}
		var j curate.Judgement
		if err := json.Unmarshal([]byte(resp.Content), &j); err != nil {
			return curate.Judgement{}, fmt.Errorf("the model's answer is not the JSON asked for: %w", err)
		}
		j.Model, j.PromptVersion = model, credibilityPromptVersion
		return j, nil
	}
	return judge, credibilityPromptVersion + "|" + model, ""
}

// credibilityRequest is the request that asks a model to grade a source.
func credibilityRequest(in curate.JudgeInput) llm.Request {
	var b strings.Builder
	fmt.Fprintf(&b, "Source: %s\n", in.Origin)
	p := in.Provenance
	for _, kv := range [][2]string{{"repository", p.Repository}, {"path", p.Path}, {"url", p.URL}, {"title", p.Title},
		{"author", p.Author}, {"publisher", p.Publisher}, {"edition", p.Edition}, {"published", p.Published}, {"found by the query", p.Query}} {
		if kv[1] != "" {
			fmt.Fprintf(&b, "%s: %s\n", kv[0], kv[1])
		}
	}
	b.WriteString("\nMeasured findings:\n")
	for _, f := range in.Findings {
		fmt.Fprintf(&b, "- %s\n", f)
	}
	for i, ex := range in.Excerpts {
		name := []string{"Beginning", "Middle", "End"}[min(i, 2)]
		if len(in.Excerpts) == 1 {
			name = "Whole text"
		}
		fmt.Fprintf(&b, "\n%s:\n<<<\n%s\n>>>\n", name, ex)
	}
	zero := 0.0
	return llm.Request{Stage: "curate.credibility", PromptVersion: credibilityPromptVersion, Temperature: &zero, MaxTokens: 300,
		Schema:   &llm.Schema{Name: "credibility", JSON: credibilitySchema},
		Messages: []llm.Message{{Role: llm.RoleSystem, Content: credibilitySystem}, {Role: llm.RoleUser, Content: b.String()}}}
}

// reportCredibility prints, after curate's list, how the kept sources are
// graded: a count per grade, and the sources graded C or D with their
// reasons (vibe sources list shows every grade).
func reportCredibility(w io.Writer, theme string, lock curate.Lock) {
	count := map[string]int{}
	var low []curate.Entry
	unjudged := ""
	for _, e := range lock.Sources {
		c := e.Credibility
		if c == nil || e.Status != curate.StatusKept {
			continue
		}
		count[c.Grade]++
		if curate.GradeBelow(c.Grade, "B") {
			low = append(low, e)
		}
		if c.Unjudged != "" {
			unjudged = c.Unjudged
		}
	}
	if len(count) == 0 {
		return
	}
	var parts []string
	for _, g := range []string{"A", "B", "C", "D"} {
		if count[g] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", count[g], g))
		}
	}
	fmt.Fprintf(w, "credibility: %s (reasons: vibe sources list %s)\n", strings.Join(parts, ", "), theme)
	sort.SliceStable(low, func(i, j int) bool { return low[i].Credibility.Score < low[j].Credibility.Score })
	for _, e := range low {
		fmt.Fprintf(w, "  %s %.2f  %s: %s\n", e.Credibility.Grade, e.Credibility.Score, e.Origin, strings.Join(e.Credibility.Reasons, "; "))
	}
	if unjudged != "" {
		fmt.Fprintf(w, "  (%s)\n", unjudged)
	}
}

// reportGit prints what each git source gathered: the commit and, when the
// ref moved, what changed.
func reportGit(w io.Writer, res curate.Result) {
	for _, s := range res.Sources {
		g := s.Git
		if g == nil {
			continue
		}
		switch {
		case g.Previous == "" || g.Previous == g.Commit && len(g.Added)+len(g.Changed)+len(g.Removed) == 0:
			fmt.Fprintf(w, "git      %s: %s at %s\n", s.Source, g.Ref, short(g.Commit))
		default:
			fmt.Fprintf(w, "git      %s: %s moved %s -> %s: %d added, %d changed, %d removed (unchanged files not touched)\n",
				s.Source, g.Ref, short(g.Previous), short(g.Commit), len(g.Added), len(g.Changed), len(g.Removed))
		}
	}
}

func short(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}
