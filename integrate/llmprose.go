package integrate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/vibelife/vibe/llm"
)

// ProsePromptVersion changes when the SKILL.md prose prompt changes,
// invalidating the cached answers.
const ProsePromptVersion = "skill-prose-4"

var proseSchema = json.RawMessage(`{"type":"object","additionalProperties":false,
"required":["display_name","description","identity","scope","style","forbidden"],
"properties":{
 "display_name":{"type":"string","minLength":1,"maxLength":60},
 "description":{"type":"string","minLength":1,"maxLength":512},
 "identity":{"type":"string","minLength":1,"maxLength":400},
 "scope":{"type":"array","minItems":1,"maxItems":10,"items":{"type":"string","minLength":1,"maxLength":300}},
 "style":{"type":"array","minItems":1,"maxItems":10,"items":{"type":"string","minLength":1,"maxLength":300}},
 "forbidden":{"type":"array","minItems":1,"maxItems":12,"items":{"type":"string","minLength":1,"maxLength":300}},
 "triggers":{"type":"array","maxItems":8,"items":{"type":"string","minLength":1,"maxLength":40}}}}`)

// proseFacts is what the model is told about the skill: only facts from the
// extracted knowledge, so it has nothing to invent from.
type proseFacts struct {
	Theme             string        `json:"theme"`
	Language          string        `json:"write_in"`
	Works             []proseWork   `json:"works"`
	Topics            []string      `json:"topics_the_rules_cite"`
	Terms             []string      `json:"theme_terms,omitempty"`
	Patterns          []string      `json:"quick_patterns"`
	Procedure         []string      `json:"procedure_phases"`
	MustCheck         []string      `json:"rules_to_check_first"`
	RedFlags          []string      `json:"critical_red_flags"`
	Tools             []string      `json:"tools"`
	Rules             int           `json:"rules"`
	RequiresBirthInfo bool          `json:"requires_birth_info"`
	Limits            proseLimitsIn `json:"limits"`
}

type proseWork struct {
	Name  string `json:"name"`
	Rules int    `json:"rules_citing_it"`
}

type proseLimitsIn struct {
	DescriptionChars  int `json:"description_max_chars"`
	MetadataTokens    int `json:"name_plus_description_max_tokens"`
	BodyTokens        int `json:"skill_body_max_tokens"`
	DisplayNameChars  int `json:"display_name_max_chars"`
	IdentitySentences int `json:"identity_sentences"`
}

func proseFactsOf(f facts, L labels, ks *knowledgeSet, tools ToolsFile, maxMeta, maxBody int) proseFacts {
	pf := proseFacts{Theme: f.theme, Language: map[string]string{"zh": "Chinese (简体中文)", "en": "English"}[L.code],
		Topics: f.topics, Patterns: f.patterns, Rules: f.rules, RequiresBirthInfo: f.birth,
		Limits: proseLimitsIn{DescriptionChars: 512, MetadataTokens: maxMeta, BodyTokens: maxBody, DisplayNameChars: 40, IdentitySentences: 1}}
	if len(pf.Topics) > 20 {
		pf.Topics = pf.Topics[:20]
	}
	if len(pf.Patterns) > 12 {
		pf.Patterns = pf.Patterns[:12]
	}
	text := knowledgeText(ks)
	english := map[string]string{}
	for _, e := range ks.glossary.Terms {
		if len(e.English) > 0 {
			english[e.Term] = e.English[0]
		}
	}
	for _, t := range ks.terms {
		if len(pf.Terms) < 30 && strings.Contains(text, strings.ToLower(t)) {
			if en := english[t]; en != "" && L.code != "en" {
				t += " (" + en + ")"
			}
			pf.Terms = append(pf.Terms, t)
		}
	}
	for _, w := range f.works {
		pf.Works = append(pf.Works, proseWork{w.name, w.cites})
	}
	// The phases' names only: SKILL.md lists every step under its own
	// heading (written from sop.yaml, not by the model), and the scope
	// needs only what the procedure covers. The steps were a third of the
	// request.
	for _, ph := range ks.sop.SOP.Phases {
		pf.Procedure = append(pf.Procedure, nonEmpty(ph.Name, ph.ID))
	}
	for i, r := range ks.rules.Rules.Tier1 {
		if i == 10 {
			break
		}
		pf.MustCheck = append(pf.MustCheck, clip(r.Condition, 60)+" → "+clip(nonEmpty(r.Action, r.Conclusion), 60))
	}
	for _, rf := range f.redFlags {
		pf.RedFlags = append(pf.RedFlags, clip(rf.Signal, 60)+" → "+clip(rf.Action, 60))
	}
	for _, t := range tools.Tools {
		pf.Tools = append(pf.Tools, t.Name+" ("+t.Type+"): "+clip(nonEmpty(t.WhenToCall, t.Description), 80))
	}
	return pf
}

const proseSystem = `You write the prose of a SKILL.md: the instructions an AI agent loads to act as an expert on one theme.
You get facts extracted from the theme's source works. Write, in the language named by "write_in":
- display_name: a short human name for the skill (no more than display_name_max_chars characters);
- description: one or two sentences saying what the skill does, from which works, and when to use it, naming the theme in the language of write_in and, when that is not English, in English too (its usual English name, as users who write English would search for it); name and description together must fit name_plus_description_max_tokens tokens;
- identity: exactly one sentence, "You are ..." (or its equivalent), naming the expertise and its sources;
- scope: 3 to 6 bullet items: what the skill covers (works, topics, the procedure's phases) and what it does not;
- style: 3 to 5 bullet items on how to express answers (conclusion first, cite rule ids and sources, quote verbatim, admit uncertainty);
- forbidden: 3 to 8 bullet items of forbidden behaviours, including describing in words what a tool should compute or show, guessing missing information, inventing rules or quotations, and the critical red flags;
- triggers: 3 to 8 words or short phrases a user would type when this skill is needed, taken from theme_terms, quick_patterns and the works: terms and pattern names, never a chapter title (论……) or a sentence; when write_in is not English, include the theme's English name and one or two English renderings from theme_terms (given in brackets).
Use only the facts given: never invent works, rules, topics or tools. Plain text only: no Markdown headings, no HTML, no line breaks inside an item.`

// writeProse asks the model for the prose, checks the answer with check,
// and gives the model one repair round with the problems found. It returns
// the problems of the last answer when both fail; an error only when the
// model could not be asked.
func writeProse(ctx context.Context, c Chatter, model string, pf proseFacts, check func(Prose) []string) (Prose, []string, error) {
	facts, _ := json.Marshal(pf) // no indentation: it only costs prompt tokens
	temp := 0.0
	req := llm.Request{
		Stage: "integrate.prose", Model: model, Temperature: &temp, PromptVersion: ProsePromptVersion,
		Schema: &llm.Schema{Name: "skill_prose", JSON: proseSchema},
		Messages: []llm.Message{
			{Role: llm.RoleSystem, Content: proseSystem},
			{Role: llm.RoleUser, Content: "FACTS:\n" + string(facts)},
		},
	}
	var problems []string
	for round := 0; round < 2; round++ {
		resp, err := c.Chat(ctx, req)
		if errors.Is(err, llm.ErrInvalidOutput) {
			return Prose{}, []string{err.Error()}, nil
		}
		if err != nil {
			return Prose{}, nil, err
		}
		var p Prose
		if err := json.Unmarshal([]byte(resp.Content), &p); err != nil {
			problems = []string{"the answer is not the requested JSON object: " + err.Error()}
		} else if problems = check(p); len(problems) == 0 {
			return p, nil, nil
		}
		req.Messages = append(req.Messages,
			llm.Message{Role: llm.RoleAssistant, Content: resp.Content},
			llm.Message{Role: llm.RoleUser, Content: "Your answer breaks these SKILL.md checks:\n- " + strings.Join(problems, "\n- ") +
				"\nAnswer again with the whole JSON object, fixed."})
	}
	return Prose{}, problems, nil
}

// proseProblems are the checks a model's prose must pass before it goes
// into SKILL.md: the skill spec's limits (description, metadata and body
// tokens, required sections, via the assembled file) plus what keeps the
// file parseable and in the corpus language.
func proseProblems(p Prose, L labels, theme string, count func(string) int, maxMeta, maxBody int, assemble func(Prose) string) []string {
	var out []string
	fields := map[string]string{"display_name": p.DisplayName, "description": p.Description, "identity": p.Identity}
	for _, list := range []struct {
		name  string
		items []string
	}{{"scope", p.Scope}, {"style", p.Style}, {"forbidden", p.Forbidden}} {
		if len(list.items) == 0 {
			out = append(out, list.name+" is empty")
		}
		for i, it := range list.items {
			fields[fmt.Sprintf("%s[%d]", list.name, i)] = it
		}
	}
	for _, name := range sortedKeys(fields) {
		v := fields[name]
		switch {
		case strings.TrimSpace(v) == "":
			out = append(out, name+" is empty")
		case strings.Contains(v, "<!--") || strings.Contains(v, "-->"):
			out = append(out, name+" contains an HTML comment, which would break the generated-region markers")
		case strings.Contains(v, "\n") && name != "description":
			out = append(out, name+" spans several lines: write one line")
		}
	}
	if n := utf8.RuneCountInString(p.DisplayName); n > 60 {
		out = append(out, fmt.Sprintf("display_name is %d characters; keep it under 40", n))
	}
	if n := utf8.RuneCountInString(p.Description); n > 512 {
		out = append(out, fmt.Sprintf("description is %d characters; at most 512 are allowed", n))
	}
	if maxMeta > 0 {
		if n := count(theme + "\n" + normalizeSpace(p.Description)); n > maxMeta {
			out = append(out, fmt.Sprintf("name and description take %d tokens; at most %d are allowed (skill metadata is about 50 tokens): shorten the description", n, maxMeta))
		}
	}
	if sentences(p.Identity) > 1 {
		out = append(out, "identity must be one sentence")
	}
	for name, v := range map[string]string{"description": p.Description, "identity": p.Identity} {
		han, latin := 0, 0
		for _, r := range v {
			if unicode.Is(unicode.Han, r) {
				han++
			} else if r < 0x80 && unicode.IsLetter(r) {
				latin++
			}
		}
		if L.code == "zh" && han == 0 {
			out = append(out, name+" must be written in Chinese, the language of the sources")
		}
		if L.code == "en" && han*4 > latin {
			out = append(out, name+" must be written in English, the language of the sources")
		}
	}
	if len(out) > 0 {
		return out
	}
	body := skillBody(assemble(p))
	if maxBody > 0 {
		if n := count(body); n > maxBody {
			out = append(out, fmt.Sprintf("the SKILL.md body is %d tokens; at most %d are allowed: shorten scope, style and forbidden", n, maxBody))
		}
	}
	for _, sec := range requiredSections {
		if !hasHeading(body, sec[0]) && !hasHeading(body, sec[1]) {
			out = append(out, "SKILL.md lacks the section "+sec[0]+" / "+sec[1])
		}
	}
	return out
}

// sentences counts the sentences of s by their end marks.
func sentences(s string) int {
	n := 0
	rs := []rune(strings.TrimSpace(s))
	for i, r := range rs {
		if strings.ContainsRune("。！？!?", r) || (r == '.' && (i == len(rs)-1 || unicode.IsSpace(rs[i+1]))) {
			n++
		}
	}
	return max(n, 1)
}
