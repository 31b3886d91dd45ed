package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/vibelife/vibe/llm"
	"github.com/vibelife/vibe/websearch"
)

// The web_search tool (off unless Config.WebSearch is set): the agent may
// search the web when the skill's own knowledge has nothing. Its results
// are outside the skill: the tool says so to the model, their citations
// are of kind "web" with OutsideSkill set, and the answer ends with a note
// naming them.

// CitationWeb is the kind of a web_search result's citation.
const CitationWeb = "web"

// webSearchTool is offered only when Config.WebSearch is set.
var webSearchTool = llm.Tool{Name: "web_search",
	Description: "搜索网络，仅当技能知识库（search_knowledge、get_rules）没有相关内容时使用；结果不属于技能知识，回答中须注明来自网络并给出网址 / Search the web, only when the skill's knowledge (search_knowledge, get_rules) has nothing on the question; the results are outside the skill: say so in the answer and give their URLs.",
	Parameters:  json.RawMessage(`{"type":"object","properties":{"query":{"type":"string"},"k":{"type":"integer","minimum":1,"maximum":10}},"required":["query"]}`)}

// webOutsideNote is what the tool tells the model about its results.
const webOutsideNote = "These results come from a web search, not from the skill's knowledge: say in the answer that this part is from the web and is not the skill's knowledge, and give the URLs you use."

// webResult is one result as the tool answers it.
type webResult struct {
	URL       string `json:"url"`
	Title     string `json:"title"`
	Snippet   string `json:"snippet,omitempty"`
	Published string `json:"published,omitempty"`
}

// webSearchRun runs the web_search tool.
func (a *Agent) webSearchRun(ctx context.Context, args map[string]any) (json.RawMessage, error) {
	if a.cfg.WebSearch == nil {
		return nil, fmt.Errorf("web_search: %w (serve.web_search is off)", ErrToolUnavailable)
	}
	q := strings.TrimSpace(str(args, "query"))
	if q == "" {
		return nil, errors.New("web_search: query is empty")
	}
	rs, err := a.cfg.WebSearch.Search(ctx, websearch.Query{Text: q, Max: min(max(intArg(args, "k", 5), 1), 10)})
	if err != nil {
		return nil, fmt.Errorf("web_search: %w", err)
	}
	out := make([]webResult, 0, len(rs))
	for _, r := range rs {
		out = append(out, webResult{URL: r.URL, Title: r.Title, Snippet: quoteOf(r.Snippet), Published: r.Published})
	}
	return jsonOf(map[string]any{"query": q, "outside_skill": true, "note": webOutsideNote, "results": out})
}

// webCitations are the citations of a web_search result.
func webCitations(res json.RawMessage) []Citation {
	var out struct {
		Results []webResult `json:"results"`
	}
	if json.Unmarshal(res, &out) != nil {
		return nil
	}
	cs := make([]Citation, 0, len(out.Results))
	for _, r := range out.Results {
		q := r.Snippet
		if q == "" {
			q = r.Title
		}
		cs = append(cs, Citation{Kind: CitationWeb, OutsideSkill: true, URL: r.URL, Source: r.Title, Quote: q})
	}
	return cs
}

// webNote is the line that ends an answer that used web results: which
// URLs it drew on (those it names, else every one found), outside the
// skill's knowledge. "" when the turn found none.
func webNote(cs []Citation) string {
	var cited, all []string
	for _, c := range cs {
		if c.Kind != CitationWeb {
			continue
		}
		all = append(all, c.URL)
		if c.Cited {
			cited = append(cited, c.URL)
		}
	}
	if len(all) == 0 {
		return ""
	}
	if len(cited) == 0 {
		cited = all
	}
	if len(cited) > 5 {
		cited = cited[:5]
	}
	return "\n（以上部分内容来自网络搜索，不属于本技能的知识库 / Partly from a web search, outside the skill's knowledge: " + strings.Join(cited, " ; ") + "）"
}
