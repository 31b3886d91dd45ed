package runtime

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vibelife/vibe/knowledge"
	"github.com/vibelife/vibe/llm"
)

// search_knowledge's result reaches the model as <knowledge> blocks with
// source lines, not JSON; the text reads back to the same passages, even
// when a passage holds the closing tag or quotes; other results stay JSON.
func TestKnowledgeBlocks(t *testing.T) {
	ps := []Passage{
		{ChunkID: "c_1", Source: "knowledge/bazi/source/子平真诠.md", Doc: "knowledge/bazi/converted/子平真诠.md", HeadingPath: []string{"子平真诠", "论用神"}, Start: 10, End: 42, Text: "八字用神，专求月令。\n以日干配月令地支。"},
		{ChunkID: "c_2", Source: "a.md", Doc: "a.md", HeadingPath: []string{`"quoted" & <odd>`}, Start: 0, End: 5, Text: "ends with </knowledge> inside"},
	}
	res, _ := jsonOf(map[string]any{"skill": "bazi", "query": "用神", "passages": ps})
	text := modelResult("search_knowledge", res)
	want := "search_knowledge: 2 passages for \"用神\"; cite a passage by its chunk id.\n" +
		"<knowledge source=\"knowledge/bazi/source/子平真诠.md\" heading=\"子平真诠 > 论用神\" chunk=\"c_1\">\n" +
		"八字用神，专求月令。\n以日干配月令地支。\n" +
		"来源 / source: 子平真诠.md > 子平真诠 > 论用神 [c_1]\n</knowledge>\n"
	if !strings.HasPrefix(strings.ReplaceAll(text, "&gt;", ">"), want) {
		t.Fatalf("wrapped:\n%s\nwant prefix:\n%s", text, want)
	}
	if strings.Contains(text, `"chunk_id"`) || strings.Count(text, "</knowledge>") != 2 {
		t.Fatalf("not wrapped:\n%s", text)
	}
	back := ParseKnowledge(text)
	if len(back) != 2 {
		t.Fatalf("parsed %d passages from:\n%s", len(back), text)
	}
	for i := range ps {
		b, _ := json.Marshal(back[i])
		// The document and offsets are not the model's to read.
		w, _ := json.Marshal(Passage{ChunkID: ps[i].ChunkID, Source: ps[i].Source, HeadingPath: ps[i].HeadingPath, Text: ps[i].Text})
		if string(b) != string(w) {
			t.Errorf("passage %d read back as %s, want %s", i, b, w)
		}
	}
	empty, _ := jsonOf(map[string]any{"skill": "bazi", "query": "x", "passages": []Passage{}})
	if got := modelResult("search_knowledge", empty); !strings.Contains(got, "no passage found for \"x\"") {
		t.Fatalf("empty = %q", got)
	}
	if got := modelResult("get_rules", json.RawMessage(`{"rules":[]}`)); got != `{"rules":[]}` {
		t.Fatalf("get_rules = %q", got)
	}
}

// birthRoot is the two-skill root with bazi's front matter saying
// requires_birth_info.
func birthRoot(t *testing.T) string {
	root := twoSkillRoot(t)
	p := filepath.Join(root, "bazi", "SKILL.md")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, p, strings.Replace(string(b), "triggers:", "requires_birth_info: true\ntriggers:", 1))
	return root
}

// requires_birth_info drives a collect step while the profile lacks
// identity.birth_info: offline, a collect_info form after the retrieved
// answer; with a model, the prompt's step naming collect_info and its form.
// Once the birth data is saved, neither.
func TestRequiresBirthInfoCollects(t *testing.T) {
	ctx := context.Background()
	a, _ := newAgentAt(t, birthRoot(t), nil, nil)
	c := &collect{}
	if _, err := a.Turn(ctx, TurnRequest{UserID: "alice", ConversationID: "b1", Message: "帮我看看八字"}, c.emit); err != nil {
		t.Fatal(err)
	}
	forms := c.of(EventForm)
	if len(forms) != 1 || !strings.Contains(string(forms[0].Form), `"name":"identity.birth_info.date"`) || !strings.Contains(c.text(), "本技能需要出生信息") {
		t.Fatalf("offline events = %+v", c.events)
	}
	// Once per activation: the next turn of the conversation asks no more.
	c = &collect{}
	if _, err := a.Turn(ctx, TurnRequest{UserID: "alice", ConversationID: "b1", Message: "伤官见官会怎样，八字"}, c.emit); err != nil {
		t.Fatal(err)
	}
	if len(c.of(EventForm)) != 0 {
		t.Fatalf("asked again: %+v", c.events)
	}
	// The tea skill asks for nothing.
	c = &collect{}
	if _, err := a.Turn(ctx, TurnRequest{UserID: "alice", Message: "How hot should the water be for green tea?", Skill: "tea"}, c.emit); err != nil {
		t.Fatal(err)
	}
	if len(c.of(EventForm)) != 0 {
		t.Fatalf("tea asked for birth data: %+v", c.events)
	}

	m := &fakeModel{}
	am, _ := newAgentAt(t, birthRoot(t), m, nil)
	if _, err := am.Turn(ctx, TurnRequest{UserID: "bob", Message: "帮我看看八字", Skill: "bazi"}, (&collect{}).emit); err != nil {
		t.Fatal(err)
	}
	sys := m.requests[0].Messages[0].Content
	if !strings.Contains(sys, "collect step") || !strings.Contains(sys, "call collect_info with") || !strings.Contains(sys, "identity.birth_info.date") {
		t.Fatalf("prompt lacks the collect step:\n%s", sys)
	}
	if _, err := am.UpsertProfile(ctx, "bob", map[string]any{"identity.birth_info.date": "1990-03-05"}); err != nil {
		t.Fatal(err)
	}
	if _, err := am.Turn(ctx, TurnRequest{UserID: "bob", Message: "再看看", Skill: "bazi"}, (&collect{}).emit); err != nil {
		t.Fatal(err)
	}
	if sys := m.requests[len(m.requests)-1].Messages[0].Content; strings.Contains(sys, "collect step") {
		t.Fatalf("collect step with the birth data saved:\n%s", sys)
	}
}

// The results of one conversation reach another: get_user_history lists
// the compute result and the rules retrieved, with their question, newest
// first and bounded; get_conversation_summary gives the extractive summary
// offline, the model's with one, rebuilt only when the history grew.
func TestUserHistoryAcrossConversations(t *testing.T) {
	ctx := context.Background()
	m := &fakeModel{script: []step{
		{calls: []llm.ToolCall{call("1", "use_skill", `{"name":"bazi"}`)}},
		{calls: []llm.ToolCall{call("2", "compute_chart", `{"birth_date":"1990-03-05"}`), call("3", "get_rules", `{"question":"日主甲木生于寅月"}`)}},
		{text: []string{"身强（r2）。"}},
		{calls: []llm.ToolCall{call("4", "get_user_history", `{"limit":5}`), call("5", "get_conversation_summary", `{}`)}},
		{text: []string{"上次你问过八字。"}},
	}}
	a, mem := newAgentAt(t, twoSkillRoot(t), m, func(c *Config) { c.HistoryKeep = 50 })
	if _, err := a.Turn(ctx, TurnRequest{UserID: "alice", ConversationID: "first", Message: "我是甲木日主生在寅月吗"}, (&collect{}).emit); err != nil {
		t.Fatal(err)
	}
	// The user summary asks the model once, in the next conversation.
	m.script = append(m.script[:1], append([]step{{text: []string{"用户问过甲木寅月，结论身强（r2）。"}}}, m.script[1:]...)...)
	c := &collect{}
	if _, err := a.Turn(ctx, TurnRequest{UserID: "alice", ConversationID: "second", Message: "还记得我上次问的吗"}, c.emit); err != nil {
		t.Fatal(err)
	}
	h := toolResult(t, c, "get_user_history")
	entries := h["entries"].([]any)
	if len(entries) != 2 {
		t.Fatalf("history = %v", h)
	}
	tools := map[string]map[string]any{}
	for _, e := range entries {
		e := e.(map[string]any)
		tools[e["tool"].(string)] = e
	}
	comp, rules := tools["compute_chart"], tools["get_rules"]
	if comp == nil || rules == nil || comp["conversation_id"] != "first" || comp["question"] != "我是甲木日主生在寅月吗" || comp["kind"] != "tool" || rules["kind"] != "rag" ||
		!strings.Contains(mustJSON(comp["result"]), `"day_master":"甲"`) || !strings.Contains(mustJSON(rules["result"]), `"id":"r2"`) {
		t.Fatalf("entries = %v", entries)
	}
	sum := toolResult(t, c, "get_conversation_summary")
	if sum["latest_summary"] != "用户问过甲木寅月，结论身强（r2）。" || sum["by"] != "model" {
		t.Fatalf("summary = %v", sum)
	}
	var userSumReq *llm.Request
	for i, r := range m.requests {
		if r.Stage == "serve.user_summary" {
			userSumReq = &m.requests[i]
		}
	}
	if userSumReq == nil || !strings.Contains(userSumReq.Messages[1].Content, "我是甲木日主生在寅月吗") || !strings.Contains(userSumReq.Messages[1].Content, "get_rules r2") {
		t.Fatalf("user summary request = %+v", userSumReq)
	}
	// Offline, the summary is the extractive digest, rebuilt only when the
	// history grew.
	off, err := New(Config{Skills: a.cfg.Skills, Memory: mem, Searcher: themeSearcher{}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := mem.AppendHistory(ctx, "alice", knowledge.HistoryEntry{ConversationID: "third", Skill: "tea", Kind: "rag", Tool: "get_rules", Question: "绿茶水温", Result: json.RawMessage(`{"rules":[{"id":"R003","skill":"tea","then":"x"}]}`)}, 50); err != nil {
		t.Fatal(err)
	}
	s1, err := off.UserSummary(ctx, "alice")
	if err != nil || s1.By != "extractive" || !strings.Contains(s1.Text, "[tea] 问 / asked: 绿茶水温") || !strings.Contains(s1.Text, "get_rules R003") ||
		!strings.Contains(s1.Text, "[bazi] 问 / asked: 我是甲木日主生在寅月吗") || !strings.Contains(s1.Text, "compute_chart → ") {
		t.Fatalf("extractive summary = %+v %v", s1, err)
	}
	s2, _ := off.UserSummary(ctx, "alice")
	if s2.UpdatedAt != s1.UpdatedAt || s2.UpTo != s1.UpTo {
		t.Fatalf("rebuilt without new history: %+v then %+v", s1, s2)
	}
	// Bounded per user.
	a.cfg.HistoryKeep = 2
	for range 3 {
		a.recordHistory(ctx, &turn{a: a, userID: "alice", convID: "fourth", active: "bazi", question: "q"}, "compute_chart", json.RawMessage(`{}`), json.RawMessage(`{"result":1}`))
	}
	if all, _ := mem.History(ctx, "alice", 0, 0); len(all) != 2 {
		t.Fatalf("kept %d entries, want 2", len(all))
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
