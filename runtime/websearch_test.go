package runtime

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/vibelife/vibe/llm"
	"github.com/vibelife/vibe/websearch"
	"github.com/vibelife/vibe/websearch/websearchtest"
)

// TestWebSearchToolIsOffByDefault: without Config.WebSearch the tool is
// neither offered nor callable.
func TestWebSearchToolIsOffByDefault(t *testing.T) {
	m := &fakeModel{script: []step{{calls: []llm.ToolCall{call("c1", "web_search", `{"query":"x"}`)}}, {text: []string{"done"}}}}
	a, _ := newTestAgent(t, m, nil)
	for _, tl := range a.toolsFor("") {
		if tl.Name == "web_search" {
			t.Fatal("web_search offered although Config.WebSearch is nil")
		}
	}
	c := &collect{}
	if _, err := a.Turn(context.Background(), TurnRequest{UserID: "u", Message: "今年的新研究？"}, c.emit); err != nil {
		t.Fatal(err)
	}
	res := toolResult(t, c, "web_search")
	if e, _ := res["error"].(string); !strings.Contains(e, "tool unavailable") {
		t.Errorf("web_search with the tool off answered %v, want tool unavailable", res)
	}
	if strings.Contains(c.text(), "网络搜索") {
		t.Errorf("an answer without web results carries the web note: %q", c.text())
	}
}

// TestWebSearchResultsAreMarkedOutsideTheSkill: the tool's results tell
// the model they are outside the skill, their citations are of kind web
// with outside_skill, and the answer ends with a note naming the URL.
func TestWebSearchResultsAreMarkedOutsideTheSkill(t *testing.T) {
	srv := websearchtest.NewSearXNG(t, map[string][]websearchtest.Hit{
		"2026 子平 研究": {{URL: "https://journal.example/ziping-2026", Title: "子平法新研究", Content: "近年学界对子平法的研究", PublishedDate: "2026-03-01"}},
	})
	p, err := websearch.New(websearch.Config{Provider: "searxng", URL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	m := &fakeModel{script: []step{
		{calls: []llm.ToolCall{call("c1", "web_search", `{"query":"2026 子平 研究","k":3}`)}},
		{text: []string{"技能知识库中没有相关内容。据网络上的一篇文章（https://journal.example/ziping-2026），近年研究多从文献学入手。"}},
	}}
	a, _ := newTestAgent(t, m, func(c *Config) { c.WebSearch = p })
	offered := false
	for _, tl := range a.toolsFor("") {
		offered = offered || tl.Name == "web_search"
	}
	if !offered {
		t.Fatal("web_search not offered with Config.WebSearch set")
	}
	c := &collect{}
	answer, err := a.Turn(context.Background(), TurnRequest{UserID: "u", Message: "2026年有什么子平法新研究？"}, c.emit)
	if err != nil {
		t.Fatal(err)
	}
	res := toolResult(t, c, "web_search")
	if res["outside_skill"] != true || !strings.Contains(res["note"].(string), "not from the skill's knowledge") {
		t.Errorf("tool result %v: want outside_skill and the note", res)
	}
	rs, _ := res["results"].([]any)
	if len(rs) != 1 || rs[0].(map[string]any)["published"] != "2026-03-01" {
		t.Errorf("results %v", rs)
	}
	if !strings.Contains(answer, "不属于本技能的知识库") || !strings.Contains(answer, "https://journal.example/ziping-2026）") {
		t.Errorf("answer %q: want the note saying the web part is outside the skill, with the URL", answer)
	}
	cs := c.of(EventCitations)
	if len(cs) != 1 || len(cs[0].Citations) != 1 {
		t.Fatalf("citations %+v", cs)
	}
	got := cs[0].Citations[0]
	if got.Kind != CitationWeb || !got.OutsideSkill || got.URL != "https://journal.example/ziping-2026" || !got.Cited || got.Source != "子平法新研究" {
		t.Errorf("citation %+v", got)
	}
	b, _ := json.Marshal(got)
	if !strings.Contains(string(b), `"outside_skill":true`) {
		t.Errorf("citation JSON %s lacks outside_skill", b)
	}
}
