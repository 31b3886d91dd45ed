package runtime

import (
	"context"
	"strings"
	"sync"
	"unicode"

	"github.com/vibelife/vibe/llm"
	"github.com/vibelife/vibe/skills"
)

// Languages of a question and of a skill's sources, as far as the search
// needs to know: Chinese (Han script) or not.
const (
	langZH = "zh"
	langEN = "en"
)

func languageName(l string) string {
	if l == langZH {
		return "Chinese"
	}
	return "English"
}

// queryLanguage is langZH unless the query is written mostly in another
// script than Han (foreignQuery).
func queryLanguage(q string) string {
	if foreignQuery(q) {
		return langEN
	}
	return langZH
}

// themeLanguage is the language of a skill's sources, read from what the
// build wrote in their language: the glossary's terms, else SKILL.md.
// Cached with the skill's rule index.
func (a *Agent) themeLanguage(sk *skills.Skill) string {
	if idx, err := a.rules.get(sk); err == nil && len(idx.glossary) > 0 {
		han := 0
		for _, e := range idx.glossary {
			if hasHan(e.Term) {
				han++
			}
		}
		if 2*han >= len(idx.glossary) {
			return langZH
		}
		return langEN
	}
	han, letters := 0, 0
	for _, r := range sk.Description + sk.Body {
		switch {
		case unicode.Is(unicode.Han, r):
			han++
		case unicode.IsLetter(r):
			letters++
		}
	}
	if han*3 >= letters/5 && han > 0 {
		return langZH
	}
	return langEN
}

// rewriteCache keeps the model's rewrites of questions into a theme's
// language, keyed by the language and the question, so a question asked
// again costs no request. Bounded: it is emptied when full.
type rewriteCache struct {
	mu sync.Mutex
	m  map[string]string
}

const rewriteCacheSize = 4096

func (c *rewriteCache) get(key string) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.m[key]
	return v, ok
}

func (c *rewriteCache) put(key, v string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= rewriteCacheSize {
		c.m = map[string]string{}
	}
	c.m[key] = v
}

// rewritePrompt asks for a search query, not an answer.
const rewritePrompt = "You turn a user's question into a search query for a full-text index of books written in %s. " +
	"Reply with the query only, in %s, on one line: the technical terms of the field as those books write them " +
	"(for Chinese metaphysics, the classical terms such as 伤官见官, 七杀, 用神), no explanation, no quotes."

// rewriteQuery asks the model to rewrite query into lang (the sources'
// language), once per query and language; "" without a model or when the
// request fails (the caller falls back to the glossary).
func (a *Agent) rewriteQuery(ctx context.Context, query, lang string) string {
	if a.cfg.Model == nil {
		return ""
	}
	key := lang + "\x00" + query
	if v, ok := a.rewrites.get(key); ok {
		return v
	}
	name := languageName(lang)
	if lang == langZH {
		name = "Chinese (简体中文)"
	}
	temp := 0.0
	resp, err := a.cfg.Model.Stream(ctx, llm.Request{
		Stage: "serve.rewrite", Model: a.cfg.ModelName, Temperature: &temp, MaxTokens: 200,
		Messages: []llm.Message{
			{Role: llm.RoleSystem, Content: strings.ReplaceAll(rewritePrompt, "%s", name)},
			{Role: llm.RoleUser, Content: query},
		},
	}, func(llm.Delta) error { return nil })
	if err != nil {
		return ""
	}
	rw := strings.TrimSpace(strings.Trim(strings.TrimSpace(resp.Content), "\"“”'`"))
	if i := strings.IndexByte(rw, '\n'); i >= 0 {
		rw = strings.TrimSpace(rw[:i])
	}
	if r := []rune(rw); len(r) > 200 {
		rw = string(r[:200])
	}
	// A rewrite still in the question's language is no rewrite.
	if rw == "" || queryLanguage(rw) != lang {
		return ""
	}
	a.rewrites.put(key, rw)
	return rw
}
