package runtime

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/vibelife/vibe/llm"
	"github.com/vibelife/vibe/llm/llmtest"
	"github.com/vibelife/vibe/skills"
)

var zhSkill = map[string]string{
	"bazi/SKILL.md":               "---\nname: bazi\ndescription: 八字命理\n---\n# 八字\n",
	"bazi/" + skills.GlossaryPath: "terms:\n  - term: 伤官见官\n    aliases: [hurting officer meets officer]\n  - term: 七杀\n    aliases: [seven killings]\n",
}

// With a model configured, an English question over Chinese sources is
// rewritten into Chinese by the model (through the real client against the
// scripted OpenAI-compatible server), once: the second search of the same
// question reuses the rewrite. The tool result tells the model what was
// searched.
func TestSearchRewritesTheQueryWithTheModel(t *testing.T) {
	const q = "Why is a weak day master afraid of wealth?"
	fake := llmtest.New(t,
		llmtest.ToolCall("use_skill", `{"name":"bazi"}`),
		llmtest.ToolCall("search_knowledge", `{"query":"`+q+`"}`),
		llmtest.Text("身弱 财多 财旺身弱"), // the rewrite
		llmtest.Text("身弱怕财，因为财多身弱。"),
		llmtest.ToolCall("search_knowledge", `{"query":"`+q+`"}`),
		llmtest.Text("同上。"),
	)
	client := llm.New(llm.Options{BaseURL: fake.URL, APIKey: "k", Model: "m", MaxRetries: -1, Timeout: 10 * time.Second})
	rs := &recordingSearcher{}
	a := agentOver(t, writeSkills(t, "", zhSkill), client, func(c *Config) { c.Searcher = rs })
	var results []string
	emit := func(e Event) error {
		if e.Type == EventToolResult && e.Tool == "search_knowledge" {
			results = append(results, string(e.Result))
		}
		return nil
	}
	for range 2 {
		if _, err := a.Turn(context.Background(), TurnRequest{UserID: "u", ConversationID: "c", Message: q}, emit); err != nil {
			t.Fatal(err)
		}
	}
	if fake.Remaining() != 0 {
		t.Fatalf("%d scripted replies left: the rewrite was not asked, or asked twice", fake.Remaining())
	}
	rewrites := 0
	for _, r := range fake.Requests() {
		if strings.Contains(r.SystemMessage(), "search query") {
			rewrites++
			if r.LastUserMessage() != q || !strings.Contains(r.SystemMessage(), "Chinese") {
				t.Errorf("rewrite request: system %q user %q", r.SystemMessage(), r.LastUserMessage())
			}
		}
	}
	if rewrites != 1 {
		t.Errorf("%d rewrite requests for the same question twice, want 1 (cached)", rewrites)
	}
	if len(rs.texts) != 2 || !strings.Contains(rs.texts[0], "财旺身弱") || rs.texts[0] != rs.texts[1] {
		t.Errorf("searched texts = %q", rs.texts)
	}
	if len(results) != 2 {
		t.Fatalf("search results = %q", results)
	}
	var res struct {
		SearchedAs string `json:"searched_as"`
		BridgedBy  string `json:"bridged_by"`
		Unbridged  bool   `json:"unbridged"`
	}
	if err := json.Unmarshal([]byte(results[0]), &res); err != nil || res.SearchedAs != "身弱 财多 财旺身弱" || res.BridgedBy != "llm" || res.Unbridged {
		t.Errorf("tool result %s (%v)", results[0], err)
	}
}

// The cache is keyed by the question and the sources' language; a rewrite
// still in the question's language, or a failed request, is not used (the
// glossary is tried next).
func TestRewriteCacheKeyAndFallback(t *testing.T) {
	fake := llmtest.New(t,
		llmtest.Text("hurting officer"), // not Chinese: refused
		llmtest.Status(500, "down"),
	)
	client := llm.New(llm.Options{BaseURL: fake.URL, APIKey: "k", Model: "m", MaxRetries: -1, Timeout: 10 * time.Second})
	rs := &recordingSearcher{}
	a := agentOver(t, writeSkills(t, "", zhSkill), client, func(c *Config) { c.Searcher = rs })
	for range 2 {
		if _, err := a.Passages(context.Background(), "bazi", "What if the hurting officer meets the officer?", 3); err != nil {
			t.Fatal(err)
		}
	}
	for _, txt := range rs.texts {
		if !strings.HasSuffix(txt, " 伤官见官") {
			t.Errorf("searched %q, want the glossary's term after a refused rewrite", txt)
		}
	}
	a.bridger.rewrites.put(langEN+"\x00q", "english")
	if v, ok := a.bridger.rewrites.get(langZH + "\x00q"); ok {
		t.Errorf("a rewrite into English served for Chinese: %q", v)
	}
}

// Offline, an English question over Chinese sources that names no glossary
// term is searched by its words only: the tool result is flagged for the
// model, and the retrieval-only answer says so.
func TestUnbridgedQueryIsFlagged(t *testing.T) {
	a := agentOver(t, writeSkills(t, "", zhSkill), nil, func(c *Config) { c.Searcher = fakeSearcher{} })
	out, err := a.ExecuteTool(context.Background(), "u", "bazi", "search_knowledge", json.RawMessage(`{"query":"What does my birth chart say about my health?"}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	var res struct {
		Unbridged bool   `json:"unbridged"`
		Note      string `json:"note"`
		Passages  []any  `json:"passages"`
	}
	if err := json.Unmarshal(out, &res); err != nil || !res.Unbridged || !strings.Contains(res.Note, "English") || !strings.Contains(res.Note, "say so") || len(res.Passages) != 1 {
		t.Fatalf("tool result %s (%v)", out, err)
	}
	// A bridged question and a Chinese one carry no flag.
	for _, q := range []string{"What are the seven killings?", "七杀是什么"} {
		out, err := a.ExecuteTool(context.Background(), "u", "bazi", "search_knowledge", json.RawMessage(`{"query":"`+q+`"}`), nil)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(out), "unbridged") {
			t.Errorf("%q flagged: %s", q, out)
		}
	}
	answer, err := a.Turn(context.Background(), TurnRequest{UserID: "u", Skill: "bazi", Message: "What does my birth chart say about my health?"}, func(Event) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(answer, "may not answer it") {
		t.Errorf("offline answer does not say the question could not be carried over:\n%s", answer)
	}
}
