package runtime

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vibelife/vibe/chunk"
	"github.com/vibelife/vibe/knowledge"
	"github.com/vibelife/vibe/llm"
	"github.com/vibelife/vibe/skills"
)

// copyTree copies the directory src to dst.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// twoSkillRoot is a skills root with the bazi fixture and the tea fixture
// (rules extracted from the demo corpus); edit may change its files.
func twoSkillRoot(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	copyTree(t, filepath.Join("testdata", "skills", "bazi"), filepath.Join(root, "bazi"))
	copyTree(t, filepath.Join("testdata", "rank", "tea"), filepath.Join(root, "tea"))
	return root
}

// themeSearcher answers each theme with its own passage.
type themeSearcher struct{}

func (themeSearcher) Search(ctx context.Context, q knowledge.Query) ([]knowledge.Hit, error) {
	switch q.Theme {
	case "bazi":
		return fakeSearcher{}.Search(ctx, q)
	case "tea":
		return []knowledge.Hit{{Score: 0.5, Chunk: chunk.Chunk{ID: "c_6b7125809806262c", Doc: "knowledge/tea/converted/green-tea.md", Source: "knowledge/tea/source/green-tea.md",
			HeadingPath: []string{"Brewing Green Tea", "Chapter 1. Water"}, Start: 10, End: 90, Text: `Never brew green tea with water at a rolling boil: "boiling" water scalds the leaves.`}}}, nil
	}
	return nil, fmt.Errorf("unexpected theme %q", q.Theme)
}

func newAgentAt(t *testing.T, root string, m Model, mutate func(*Config)) (*Agent, *MemStore) {
	t.Helper()
	set, err := skills.Open(root, skills.Options{Interval: -1})
	if err != nil {
		t.Fatal(err)
	}
	mem := NewMemStore()
	cfg := Config{Skills: set, Model: m, Searcher: themeSearcher{}, Memory: mem}
	if m != nil {
		cfg.Model = m
	}
	if mutate != nil {
		mutate(&cfg)
	}
	a, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return a, mem
}

// A two-skill turn: use_skill(skills=[bazi, tea], topic) activates both;
// the prompt stacks both skills' instructions; get_rules and
// search_knowledge answer from both (the model reads the passages as
// <knowledge> blocks); the answer's citations carry both skills' rules, and
// the next turn keeps both skills and the topic.
func TestTwoSkillTurn(t *testing.T) {
	m := &fakeModel{script: []step{
		{calls: []llm.ToolCall{call("1", "use_skill", `{"skills":["bazi","tea"],"topic":"养生"}`)}},
		{calls: []llm.ToolCall{
			call("2", "get_rules", `{"question":"日主甲木生于寅月，喝绿茶 brewing green tea"}`),
			call("3", "search_knowledge", `{"query":"甲木 green tea"}`),
		}},
		{text: []string{"甲木得令（r2），泡绿茶勿用沸水（R003）。"}},
		{text: []string{"好"}},
	}}
	a, _ := newAgentAt(t, twoSkillRoot(t), m, nil)
	ctx := context.Background()
	c := &collect{}
	answer, err := a.Turn(ctx, TurnRequest{UserID: "alice", ConversationID: "two", Message: "甲木日主喝绿茶怎么泡"}, c.emit)
	if err != nil {
		t.Fatal(err)
	}
	use := toolResult(t, c, "use_skill")
	if act, _ := use["active"].([]any); use["_is_error"] == true || use["topic"] != "养生" || len(act) != 2 || use["instructions"] != nil {
		t.Fatalf("use_skill = %v", use)
	}
	sys := m.requests[1].Messages[0].Content
	for _, w := range []string{"active skills: bazi, tea", "话题 / topic: 养生", "## bazi", "先取得出生信息", "## tea", "Brew tea.", "skill tools: compute_chart, show_chart, broken_tool"} {
		if !strings.Contains(sys, w) {
			t.Fatalf("system prompt lacks %q:\n%s", w, sys)
		}
	}
	rules := toolResult(t, c, "get_rules")
	bySkill := map[string]string{}
	for _, r := range rules["rules"].([]any) {
		r := r.(map[string]any)
		bySkill[r["id"].(string)] = r["skill"].(string)
	}
	if bySkill["r2"] != "bazi" || bySkill["R003"] != "tea" {
		t.Fatalf("get_rules = %v", rules)
	}
	// The model read both skills' passages, wrapped.
	var wrapped string
	for _, msg := range m.requests[2].Messages {
		if msg.Role == llm.RoleTool && strings.HasPrefix(msg.Content, "search_knowledge:") {
			wrapped = msg.Content
		}
	}
	ps := ParseKnowledge(wrapped)
	if len(ps) != 2 || ps[0].Skill != "bazi" || ps[1].Skill != "tea" || ps[1].Text != `Never brew green tea with water at a rolling boil: "boiling" water scalds the leaves.` ||
		len(ps[1].HeadingPath) != 2 || !strings.Contains(wrapped, `heading="Brewing Green Tea &gt; Chapter 1. Water"`) ||
		!strings.Contains(wrapped, "来源 / source: green-tea.md > Brewing Green Tea > Chapter 1. Water [c_6b7125809806262c]") {
		t.Fatalf("passages the model read = %+v\n%s", ps, wrapped)
	}
	// Both skills' rules are in the answer's citations, marked cited.
	cited := map[string]bool{}
	for _, e := range c.of(EventCitations) {
		for _, ci := range e.Citations {
			if ci.Kind == "rule" && ci.Cited {
				cited[ci.Skill+":"+ci.RuleID] = true
			}
		}
	}
	if !cited["bazi:r2"] || !cited["tea:R003"] {
		t.Fatalf("cited = %v (answer %q)", cited, answer)
	}
	done := c.of(EventDone)
	if len(done) != 1 || done[0].Skill != "bazi,tea" {
		t.Fatalf("done = %+v", done)
	}
	// The next turn starts with both skills and the topic.
	c2 := &collect{}
	if _, err := a.Turn(ctx, TurnRequest{UserID: "alice", ConversationID: "two", Message: "还有呢"}, c2.emit); err != nil {
		t.Fatal(err)
	}
	sys = m.requests[len(m.requests)-1].Messages[0].Content
	if !strings.Contains(sys, "active skills: bazi, tea") || !strings.Contains(sys, "话题 / topic: 养生") {
		t.Fatalf("second turn's prompt:\n%s", sys)
	}
	var names []string
	for _, tl := range m.requests[len(m.requests)-1].Tools {
		names = append(names, tl.Name)
	}
	if !strings.Contains(strings.Join(names, ","), "compute_chart") {
		t.Fatalf("tools = %v", names)
	}
}

// Over the tier-2 budget, the last skill's sections go first and the
// prompt says what was left out and how to read it.
func TestStackedInstructionsKeepTheBudget(t *testing.T) {
	root := twoSkillRoot(t)
	long := "---\nname: tea\ndescription: brewing tea\n---\n# Tea\n\nBrew tea.\n\n## Water\n\n" + strings.Repeat("Use soft water. ", 40) + "\n\n## Style\n\n" + strings.Repeat("Be brief. ", 40) + "\n"
	if err := os.WriteFile(filepath.Join(root, "tea", "SKILL.md"), []byte(long), 0o644); err != nil {
		t.Fatal(err)
	}
	a, _ := newAgentAt(t, root, &fakeModel{}, func(c *Config) { c.SkillTokens = 250 })
	var sks []*skills.Skill
	for _, n := range []string{"bazi", "tea"} {
		sk, _ := a.cfg.Skills.Get(n)
		sks = append(sks, sk)
	}
	text, cut := a.stackInstructions(sks)
	if len(cut) != 1 || !strings.HasPrefix(cut[0], "tea: ") || !strings.Contains(cut[0], `"## Style"`) || !strings.Contains(cut[0], `"## Water"`) {
		t.Fatalf("cut = %q", cut)
	}
	if n := a.countTokens(text); n > 250+120 { // the note itself is outside the budget
		t.Fatalf("stacked text is %d tokens:\n%s", n, text)
	}
	if !strings.Contains(text, "先取得出生信息") || !strings.Contains(text, "Brew tea.") || strings.Contains(text, "Be brief.") || !strings.Contains(text, "read_skill_resource") {
		t.Fatalf("stacked text:\n%s", text)
	}
	// Within budget nothing is cut.
	a.cfg.SkillTokens = 5000
	if _, cut := a.stackInstructions(sks); len(cut) != 0 {
		t.Fatalf("cut within budget: %q", cut)
	}
}

// use_skill keeps its older one-name form; an unknown name is refused with
// the router's candidates; a skill's requires come along.
func TestUseSkillForms(t *testing.T) {
	root := twoSkillRoot(t)
	writeFile(t, filepath.Join(root, "career", "SKILL.md"), "---\nname: career\ndescription: 事业 career planning\nversion: \"2.1\"\nrequires: [bazi]\n---\n# Career\n\nPlan careers.\n")
	a, _ := newAgentAt(t, root, &fakeModel{}, nil)
	ctx := context.Background()
	res, err := a.ExecuteTool(ctx, "alice", "", "use_skill", json.RawMessage(`{"name":"tea"}`), nil)
	if err != nil || !strings.Contains(string(res), `"skill":"tea"`) || !strings.Contains(string(res), `"instructions":"Brew tea."`) {
		t.Fatalf("use_skill name = %s %v", res, err)
	}
	t1 := &turn{a: a, userID: "alice", question: "帮我看看八字", emit: func(Event) error { return nil }}
	if _, err := a.execTool(ctx, t1, "use_skill", json.RawMessage(`{"skills":["horoscope"]}`)); err == nil ||
		!strings.Contains(err.Error(), `unknown skill "horoscope"`) || !strings.Contains(err.Error(), "candidates for this message, best first: bazi (") {
		t.Fatalf("unknown skill: %v", err)
	}
	res, err = a.execTool(ctx, t1, "use_skill", json.RawMessage(`{"skills":["career"],"topic":"career"}`))
	if err != nil || t1.active != "career,bazi" || !strings.Contains(string(res), `"version":"2.1"`) {
		t.Fatalf("use_skill career = %s %v (active %q)", res, err, t1.active)
	}
}

func writeFile(t *testing.T, p, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// recommend_skills ranks the installed skills with the router; the model's
// use_skill is offered the same candidates, and named only installed skills.
func TestRecommendSkillsSharesTheRouter(t *testing.T) {
	a, _ := newAgentAt(t, twoSkillRoot(t), &fakeModel{}, nil)
	ctx := context.Background()
	res, err := a.ExecuteTool(ctx, "alice", "", "recommend_skills", json.RawMessage(`{"question":"帮我看看八字"}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		Best       *string `json:"best"`
		Candidates []struct {
			Skill string  `json:"skill"`
			Score float64 `json:"score"`
			Fits  bool    `json:"fits"`
		} `json:"candidates"`
	}
	if err := json.Unmarshal(res, &r); err != nil || r.Best == nil || *r.Best != "bazi" || len(r.Candidates) == 0 || r.Candidates[0].Skill != "bazi" || !r.Candidates[0].Fits {
		t.Fatalf("recommend = %s %v", res, err)
	}
	want := a.cfg.Skills.Route("帮我看看八字")
	if round2(want[0].Score) != r.Candidates[0].Score {
		t.Fatalf("score %v, router %v", r.Candidates[0].Score, want[0].Score)
	}
	res, _ = a.ExecuteTool(ctx, "alice", "", "recommend_skills", json.RawMessage(`{"question":"明天的股票会涨吗"}`), nil)
	if !strings.Contains(string(res), `"best":null`) || !strings.Contains(string(res), "the router found no skill sharing words with this message") {
		t.Fatalf("off-topic = %s", res)
	}
	var use llm.Tool
	for _, tl := range a.turnTools(stepState{}, "帮我看看八字") {
		if tl.Name == "use_skill" {
			use = tl
		}
	}
	// The router's candidates are said once, in the system prompt
	// (routeHint), not again in use_skill's description.
	if strings.Contains(use.Description, "bazi (") || !strings.Contains(string(use.Parameters), `"enum":["bazi","tea"]`) ||
		!strings.Contains(routeHint(a.cfg.Skills.Route("帮我看看八字"), nil), "best first: bazi (") {
		t.Fatalf("use_skill = %s %s", use.Description, use.Parameters)
	}
}

// The runtime's core tools are the ones a skill's front matter may list.
func TestBuiltinToolsMatchCoreTools(t *testing.T) {
	var names []string
	for _, tl := range coreTools {
		names = append(names, tl.Name)
	}
	if strings.Join(names, ",") != strings.Join(skills.BuiltinTools, ",") {
		t.Fatalf("core tools %v, skills.BuiltinTools %v", names, skills.BuiltinTools)
	}
}

// GET /api/skills carries the front matter's display name, version,
// author, requires and requires_birth_info.
func TestAPISkillsShowsFrontMatter(t *testing.T) {
	root := birthRoot(t)
	writeFile(t, filepath.Join(root, "career", "SKILL.md"), "---\nname: career\ndisplay_name: 事业 / Career\ndescription: career planning\nversion: 2.1.0\nauthor: Vibe Team\nrequires: [bazi]\n---\n# Career\n")
	a, _ := newAgentAt(t, root, &fakeModel{}, nil)
	keys := &Keys{}
	keys.Add("ka", "alice")
	s, err := NewServer(a, ServerOptions{Keys: keys})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s)
	defer ts.Close()
	code, body := doAuth(t, "GET", ts.URL+"/api/skills", "Bearer ka", "")
	for _, w := range []string{`"name":"career","description":"career planning","theme":"career","display_name":"事业 / Career","version":"2.1.0","author":"Vibe Team","requires":["bazi"]`, `"requires_birth_info":true`} {
		if code != 200 || !strings.Contains(body, w) {
			t.Fatalf("GET /api/skills = %d %s\nlacks %s", code, body, w)
		}
	}
}

// POST /api/chat's skill may name several skills, joined by commas; an
// unknown one among them is 404.
func TestChatRequestWithSeveralSkills(t *testing.T) {
	a, _ := newAgentAt(t, twoSkillRoot(t), nil, nil)
	keys := &Keys{}
	keys.Add("ka", "alice")
	s, err := NewServer(a, ServerOptions{Keys: keys})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s)
	defer ts.Close()
	if code, body := doAuth(t, "POST", ts.URL+"/api/chat", "Bearer ka", `{"message":"绿茶","skill":"tea,horoscope"}`); code != 404 || !strings.Contains(body, `skill \"horoscope\"`) {
		t.Fatalf("unknown among several = %d %s", code, body)
	}
	code, body := doAuth(t, "POST", ts.URL+"/api/chat", "Bearer ka", `{"message":"甲木生于寅月","skill":"bazi,tea"}`)
	if code != 200 || !strings.Contains(body, `"skill":"bazi,tea"`) {
		t.Fatalf("two skills = %d %s", code, body)
	}
}

// Offline, with several skills active and a message the router gives to
// none of them alone, the answer draws on every active skill: the rules of
// each that pass the threshold, tagged with their skill, and passages of
// each skill's sources.
func TestOfflineAnswersFromEveryActiveSkill(t *testing.T) {
	a, _ := newAgentAt(t, twoSkillRoot(t), nil, nil)
	c := &collect{}
	answer, err := a.Turn(context.Background(), TurnRequest{UserID: "alice", Message: "甲木寅月，泡绿茶用什么水", Skill: "bazi,tea"}, c.emit)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(answer, "技能：bazi, tea") ||
		!strings.Contains(answer, "[knowledge/bazi/converted/a.md#1]") || !strings.Contains(answer, "[c_6b7125809806262c]") {
		t.Fatalf("answer:\n%s", answer)
	}
	skillsCited := map[string]bool{}
	for _, e := range c.of(EventCitations) {
		for _, ci := range e.Citations {
			skillsCited[ci.Kind+":"+ci.Skill] = true
		}
	}
	if !skillsCited["passage:bazi"] || !skillsCited["passage:tea"] {
		t.Fatalf("citations by skill = %v", skillsCited)
	}
}
