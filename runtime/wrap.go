package runtime

import (
	"encoding/json"
	"fmt"
	"html"
	"regexp"
	"strconv"
	"strings"
)

// The model reads retrieved passages in the skill spec's wrapped form
// (skill-spec-v5, "检索结果会以 <knowledge> 标签包装"), not as raw JSON:
//
//	<knowledge source="knowledge/bazi/source/a.pdf" heading="论日主" chunk="…#1" skill="bazi">
//	甲木生于寅月，得令而旺。
//	来源 / source: a.pdf > 论日主 [knowledge/bazi/converted/a.md#1]
//	</knowledge>
//
// The attributes carry the citation (the converted document and offsets
// are left to the event: the model has no use for them), the source line
// repeats it in words
// the model can copy into its answer. The tool_result event keeps the JSON
// (clients build their source panels from it); only the message handed back
// to the model is wrapped.

// sourceLinePrefix starts the source line closing each block.
const sourceLinePrefix = "来源 / source: "

// modelResult is the text a tool's result is handed to the model as: the
// passages of search_knowledge wrapped in <knowledge> blocks, other results
// as their JSON.
func modelResult(tool string, res json.RawMessage) string {
	if tool != "search_knowledge" {
		return string(res)
	}
	var out struct {
		Skill    string    `json:"skill"`
		Skills   []string  `json:"skills"`
		Query    string    `json:"query"`
		Passages []Passage `json:"passages"`
		Notes    []string  `json:"notes"`
	}
	if err := json.Unmarshal(res, &out); err != nil {
		return string(res)
	}
	return WrapKnowledge(out.Query, out.Passages, out.Notes)
}

// WrapKnowledge renders passages as the model reads them: a header line,
// then one <knowledge> block per passage with its source line.
func WrapKnowledge(query string, ps []Passage, notes []string) string {
	var sb strings.Builder
	if len(ps) == 0 {
		fmt.Fprintf(&sb, "search_knowledge: 没有找到相关原文 / no passage found for %q.\n", query)
	} else {
		fmt.Fprintf(&sb, "search_knowledge: %d passages for %q; cite a passage by its chunk id.\n", len(ps), query)
	}
	for _, n := range notes {
		sb.WriteString(n + "\n")
	}
	for _, p := range ps {
		// The converted document and the offsets are for the source
		// panel (the event's JSON), not for the model: left out.
		fmt.Fprintf(&sb, "<knowledge source=\"%s\" heading=\"%s\" chunk=\"%s\"",
			attr(p.Source), attr(strings.Join(p.HeadingPath, " > ")), attr(p.ChunkID))
		if p.Skill != "" {
			fmt.Fprintf(&sb, " skill=\"%s\"", attr(p.Skill))
		}
		sb.WriteString(">\n")
		sb.WriteString(strings.ReplaceAll(p.Text, "</knowledge>", "<\\/knowledge>"))
		sb.WriteString("\n" + sourceLinePrefix + sourceLine(p) + "\n</knowledge>\n")
	}
	return sb.String()
}

// sourceLine names a passage's file, heading path and chunk.
func sourceLine(p Passage) string {
	where := p.Source
	if i := strings.LastIndex(where, "/"); i >= 0 {
		where = where[i+1:]
	}
	if len(p.HeadingPath) > 0 {
		where += " > " + strings.Join(p.HeadingPath, " > ")
	}
	return fmt.Sprintf("%s [%s]", where, p.ChunkID)
}

func attr(s string) string {
	return strings.NewReplacer("&", "&amp;", `"`, "&quot;", "<", "&lt;", ">", "&gt;", "\n", " ").Replace(s)
}

var (
	knowledgeBlock = regexp.MustCompile(`(?s)<knowledge ([^>]*)>\n(.*?)\n</knowledge>`)
	knowledgeAttr  = regexp.MustCompile(`([a-z_]+)="([^"]*)"`)
)

// ParseKnowledge reads the passages back from text in the wrapped form
// (WrapKnowledge), for clients and tests that see what the model saw.
func ParseKnowledge(text string) []Passage {
	var out []Passage
	for _, m := range knowledgeBlock.FindAllStringSubmatch(text, -1) {
		a := map[string]string{}
		for _, kv := range knowledgeAttr.FindAllStringSubmatch(m[1], -1) {
			a[kv[1]] = html.UnescapeString(kv[2])
		}
		body := m[2]
		if i := strings.LastIndex(body, "\n"+sourceLinePrefix); i >= 0 {
			body = body[:i]
		} else if strings.HasPrefix(body, sourceLinePrefix) {
			body = ""
		}
		p := Passage{ChunkID: a["chunk"], Source: a["source"], Doc: a["doc"], Skill: a["skill"],
			Text: strings.ReplaceAll(body, "<\\/knowledge>", "</knowledge>")}
		if h := a["heading"]; h != "" {
			p.HeadingPath = strings.Split(h, " > ")
		}
		p.Start, _ = strconv.Atoi(a["start"])
		p.End, _ = strconv.Atoi(a["end"])
		out = append(out, p)
	}
	return out
}
