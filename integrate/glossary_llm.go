package integrate

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"sort"
	"strings"
	"unicode"

	"github.com/vibelife/vibe/llm"
	"github.com/vibelife/vibe/skills"
)

// The glossary with a model: the mined candidates are sent, in batches,
// with the heading or sentence each was found in; the model keeps the
// terms of the field and gives their synonyms, renderings in the users' other
// languages (userLanguages) and
// pinyin (prompts/glossary.md, glossarySchema). Each request is cached by
// the client like every other: an unchanged batch asks nothing. A
// candidate's batch is chosen by a hash of the term among a number of
// batches that only changes when the candidates double or halve, so a
// rebuild after the knowledge changed re-asks only the batches whose terms
// changed.

//go:embed prompts/glossary.md
var glossaryPrompt string

// GlossaryPromptVersion is the version line of the glossary prompt, part
// of its requests' cache key.
var GlossaryPromptVersion = strings.TrimSpace(strings.TrimPrefix(strings.SplitN(glossaryPrompt, "\n", 2)[0], "version:"))

// StageGlossary labels the glossary requests in usage reports and the
// cache.
const StageGlossary = "integrate.glossary"

// Model glossary sizes: at most maxModelTerms candidates are sent, about
// glossaryBatch to a request. The cap is eight full batches: all the
// candidates of five books (about 600: the named terms, then at most
// maxMinedTerms recurring phrases), in the eight requests the 400 of an
// earlier cap took, which left out the most common phrases of the field
// (五行, 四柱, 日主, 官星) since they come after the named terms.
const (
	maxModelTerms = 8 * glossaryBatch
	glossaryBatch = 80
)

var glossarySchema = json.RawMessage(`{"type":"object","additionalProperties":false,"required":["terms"],
"properties":{"terms":{"type":"array","items":{"type":"object","additionalProperties":false,
"required":["term","synonyms","english","pinyin"],
"properties":{"term":{"type":"string","minLength":1,"maxLength":40},
"synonyms":{"type":"array","maxItems":8,"items":{"type":"string","minLength":1,"maxLength":60}},
"english":{"type":"array","maxItems":10,"items":{"type":"string","minLength":1,"maxLength":80}},
"pinyin":{"type":"array","maxItems":4,"items":{"type":"string","minLength":1,"maxLength":80}}}}}}}`)

// glossaryCandidate is one candidate as the model is shown it.
type glossaryCandidate struct {
	Term    string `json:"term"`
	Context string `json:"found_in,omitempty"`
}

// glossaryFacts is the user message of a glossary request.
type glossaryFacts struct {
	Theme      string              `json:"theme"`
	Language   string              `json:"sources_language"`
	UserLangs  []string            `json:"user_languages"`
	Candidates []glossaryCandidate `json:"candidates"`
}

// glossaryAnswer is the model's answer.
type glossaryAnswer struct {
	Terms []struct {
		Term     string   `json:"term"`
		Synonyms []string `json:"synonyms"`
		English  []string `json:"english"`
		Pinyin   []string `json:"pinyin"`
	} `json:"terms"`
}

// glossaryBatches splits the candidates (at most maxModelTerms, in the
// mined order) into batches by a hash of each term: the number of batches
// is a power of two, about one per glossaryBatch candidates, so adding or
// removing a few candidates changes only their own batches.
func glossaryBatches(cands []glossaryCandidate) [][]glossaryCandidate {
	if len(cands) > maxModelTerms {
		cands = cands[:maxModelTerms]
	}
	if len(cands) == 0 {
		return nil
	}
	n := 1
	for n*glossaryBatch < len(cands) {
		n *= 2
	}
	out := make([][]glossaryCandidate, n)
	for _, c := range cands {
		h := fnv.New32a()
		h.Write([]byte(c.Term))
		i := int(h.Sum32() % uint32(n))
		out[i] = append(out[i], c)
	}
	var kept [][]glossaryCandidate
	for _, b := range out {
		if len(b) > 0 {
			sort.Slice(b, func(i, j int) bool { return b[i].Term < b[j].Term })
			kept = append(kept, b)
		}
	}
	return kept
}

// glossaryRequests are the requests the model glossary sends for the
// candidates.
func glossaryRequests(model, theme string, L labels, examples []string, cands []glossaryCandidate) []llm.Request {
	lang := "Chinese"
	if L.code != "zh" {
		lang = "English"
	}
	users := userLanguages(L, examples)
	temp := 0.0
	var out []llm.Request
	for _, b := range glossaryBatches(cands) {
		facts, _ := json.Marshal(glossaryFacts{Theme: theme, Language: lang, UserLangs: users, Candidates: b})
		out = append(out, llm.Request{
			Stage: StageGlossary, Model: model, Temperature: &temp, PromptVersion: GlossaryPromptVersion,
			Schema: &llm.Schema{Name: "glossary", JSON: glossarySchema},
			Messages: []llm.Message{
				{Role: llm.RoleSystem, Content: strings.TrimSpace(strings.SplitN(glossaryPrompt, "\n", 2)[1])},
				{Role: llm.RoleUser, Content: string(facts)},
			},
		})
	}
	return out
}

// userLanguages are the languages, other than the sources', the theme's
// users write in, which the model renders the terms in: English for
// Chinese sources (pinyin is asked apart); for English sources Chinese
// when the theme's eval questions (examples) are written in it, else none:
// nothing says the users write another language.
func userLanguages(L labels, examples []string) []string {
	if L.code == "zh" {
		return []string{"English"}
	}
	for _, q := range examples {
		if strings.IndexFunc(q, func(r rune) bool { return unicode.Is(unicode.Han, r) }) >= 0 {
			return []string{"Chinese"}
		}
	}
	return []string{}
}

// modelCandidates lists the mined terms with their contexts for the
// model, in the mined order (the named terms, then the recurring phrases
// by frequency).
func modelCandidates(mined []candidate) []glossaryCandidate {
	out := make([]glossaryCandidate, 0, len(mined))
	for _, c := range mined {
		ctx := c.context
		if ctx == c.term || ctx == "title" {
			ctx = ""
		}
		out = append(out, glossaryCandidate{Term: c.term, Context: clipRunes(ctx, 40)})
	}
	return out
}

// modelGlossary asks the model for the glossary's synonyms, renderings and
// pinyin of the mined candidates, and which candidates it was asked about
// in the batches it answered (those it left out are no terms). A batch
// whose answer is not the
// requested JSON is skipped with a warning (its terms keep their mined
// entries); an error only when the model could not be asked (the budget is
// spent, the endpoint fails).
func modelGlossary(ctx context.Context, c Chatter, model, theme string, L labels, examples []string, mined []candidate) (skills.Glossary, map[string]bool, []string, error) {
	var g skills.Glossary
	var warnings []string
	asked := map[string]bool{}
	batches := glossaryBatches(modelCandidates(mined))
	for i, req := range glossaryRequests(model, theme, L, examples, modelCandidates(mined)) {
		resp, err := c.Chat(ctx, req)
		if errors.Is(err, llm.ErrInvalidOutput) {
			warnings = append(warnings, fmt.Sprintf("glossary batch %d: the model's answer was not the requested JSON, so its terms keep their mined entries: %v", i+1, err))
			continue
		}
		if err != nil {
			return g, nil, warnings, fmt.Errorf("ask the model for the glossary: %w", err)
		}
		var ans glossaryAnswer
		if err := json.Unmarshal([]byte(stripFence(resp.Content)), &ans); err != nil {
			warnings = append(warnings, fmt.Sprintf("glossary batch %d: the model's answer is not the requested JSON (%v), so its terms keep their mined entries", i+1, err))
			continue
		}
		for _, c := range batches[i] {
			asked[c.Term] = true
		}
		for _, t := range ans.Terms {
			term := strings.TrimSpace(t.Term)
			if term == "" {
				continue
			}
			e := skills.GlossaryTerm{Term: term, Aliases: cleanList(t.Synonyms, term), English: cleanList(t.English, term), From: skills.FromModel}
			// The model's pinyin first (the field's reading), then the
			// dictionary's forms without tones, spaced and joined.
			e.Pinyin = cleanList(append(append([]string(nil), t.Pinyin...), PinyinOf(term)...), term)
			if len(t.Pinyin) > 0 {
				for _, p := range t.Pinyin {
					plain := strings.ToLower(skills.FoldMarks(p))
					e.Pinyin = append(e.Pinyin, plain, strings.ReplaceAll(plain, " ", ""))
				}
				e.Pinyin = cleanList(e.Pinyin, term)
			}
			g.Terms = append(g.Terms, e)
		}
	}
	g = shareRenderings(g)
	sort.SliceStable(g.Terms, func(i, j int) bool { return g.Terms[i].Term < g.Terms[j].Term })
	return g, asked, warnings, nil
}

// shareRenderings merges the model's entries of one term: entries of the
// same term (from two batches) become one, their lists joined; and an
// entry the model gave no renderings is given those of the entry that
// names its term, or its variant form (煞 for 杀), as a synonym (弃命从煞
// gets 弃命从杀's Follow the Seven Killings), so the renderings reach the
// term by any of its forms.
func shareRenderings(g skills.Glossary) skills.Glossary {
	var out skills.Glossary
	at := map[string]int{}
	for _, e := range g.Terms {
		if i, ok := at[e.Term]; ok {
			o := &out.Terms[i]
			o.Aliases = cleanList(append(o.Aliases, e.Aliases...), o.Term)
			o.English = cleanList(append(o.English, e.English...), o.Term)
			o.Pinyin = cleanList(append(o.Pinyin, e.Pinyin...), o.Term)
			continue
		}
		at[e.Term] = len(out.Terms)
		out.Terms = append(out.Terms, e)
	}
	fold := func(s string) string { return strings.ReplaceAll(s, "煞", "杀") }
	named := map[string]int{}
	for i, e := range out.Terms {
		if len(e.English) == 0 {
			continue
		}
		for _, n := range append([]string{e.Term}, e.Aliases...) {
			if _, ok := named[fold(n)]; !ok {
				named[fold(n)] = i
			}
		}
	}
	for i := range out.Terms {
		e := &out.Terms[i]
		if len(e.English) > 0 {
			continue
		}
		if j, ok := named[fold(e.Term)]; ok && j != i {
			e.English = append([]string(nil), out.Terms[j].English...)
		}
	}
	return out
}

// cleanList trims xs, drops empty entries, the term itself and repeats
// (case-insensitive).
func cleanList(xs []string, term string) []string {
	seen := map[string]bool{strings.ToLower(term): true}
	var out []string
	for _, x := range xs {
		x = strings.TrimSpace(x)
		if k := strings.ToLower(x); x != "" && !seen[k] {
			seen[k] = true
			out = append(out, x)
		}
	}
	return out
}

// stripFence removes a ```json fence some models put around JSON.
func stripFence(s string) string {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "```") {
		s = strings.TrimPrefix(s, "```json")
		s = strings.TrimPrefix(s, "```")
		s = strings.TrimSuffix(strings.TrimSpace(s), "```")
	}
	return strings.TrimSpace(s)
}

// GlossaryPlan plans, for a dry run, the glossary requests a build with a
// model sends in its integrate stage. With the skill's knowledge already
// extracted (skillDir holds it) the requests are exact, and those the
// response cache answers (cached) are counted apart; without it the
// candidates are the chunks' titles' plus the knowledge's recurring
// phrases at their cap, and the plan is an estimate. count measures
// tokens. It returns the requests to send, the cached ones, their prompt
// and estimated completion tokens, and whether it is an estimate.
func GlossaryPlan(model, theme, skillDir, evalCases string, zh bool, in GlossaryInputs, count func(string) int, cached func(llm.Request) bool) (requests, inCache, prompt, completion int, estimated bool) {
	ks, err := loadKnowledge(skillDir)
	if err != nil {
		ks, estimated = &knowledgeSet{}, true
	}
	cands, _ := mineCandidates(ks, in)
	gc := modelCandidates(cands)
	if estimated {
		for i := 0; i < maxMinedTerms && len(gc) < maxModelTerms; i++ {
			gc = append(gc, glossaryCandidate{Term: fmt.Sprintf("术语%03d", i), Context: strings.Repeat("字", 20)})
		}
	}
	L := labels{code: "en"}
	if zh {
		L.code = "zh"
	}
	examples, _ := exampleQuestions(evalCases, evalCases) // a broken eval set is reported by the build
	for _, r := range glossaryRequests(model, theme, L, examples, gc) {
		if !estimated && cached != nil && cached(r) {
			inCache++
			continue
		}
		requests++
		prompt += llm.PromptTokens(r, count)
	}
	// The answer: about 30 tokens a term (its synonyms, renderings and
	// pinyin).
	if requests > 0 {
		completion = 30 * min(len(gc), maxModelTerms) * requests / (requests + inCache)
	}
	return requests, inCache, prompt, completion, estimated
}
