package integrate

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/vibelife/vibe/llm"
	"github.com/vibelife/vibe/llm/llmtest"
)

// goodProse is what a well-behaved model answers for the clean fixture
// (a Chinese corpus).
func goodProse() Prose {
	return Prose{
		DisplayName: "子平八字",
		Description: "依《子平真诠》判断日主旺衰、取用神；用户问八字格局时使用。",
		Identity:    "你是精通子平法的命理师，只依据知识库中的规则与原文作答。",
		Scope:       []string{"日主旺衰的判断", "用神的取法", "典籍未载之事不在范围内"},
		Style:       []string{"先结论后依据", "引用规则编号与原文"},
		Forbidden:   []string{"不编造规则与引文", "不用文字代替命盘卡片"},
	}
}

// noTerms is the glossary answer of a model that finds no term among the
// candidates; Integrate asks for the glossary before the prose.
var noTerms = llmtest.JSON(map[string]any{"terms": []any{}})

func proseClient(t *testing.T, srv *llmtest.Server, cache string) *llm.Client {
	t.Helper()
	return llm.New(llm.Options{BaseURL: srv.URL, APIKey: "sk-test", Model: "test-model", CacheDir: cache, MaxRetries: 1,
		Sleep: func(context.Context, time.Duration) error { return nil }})
}

func TestLLMWritesTheProseAndAnUnchangedRebuildAsksNothing(t *testing.T) {
	dir := copyDir(t, "testdata/clean")
	srv := llmtest.New(t, noTerms, llmtest.JSON(goodProse()))
	cache := t.TempDir()
	opt := IntegrateOptions{Theme: "demo", SkillDir: dir, LLM: proseClient(t, srv, cache), Model: "test-model"}
	res, err := Integrate(context.Background(), opt)
	if err != nil {
		t.Fatal(err)
	}
	if res.Prose != "llm:test-model" || len(res.Warnings) != 0 {
		t.Fatalf("prose %q, warnings %v", res.Prose, res.Warnings)
	}
	md, _ := os.ReadFile(res.SkillMD)
	for _, want := range []string{"display_name: 子平八字", "你是精通子平法的命理师", "- 用神的取法", "- 不用文字代替命盘卡片",
		"## 能力范围", "### 核心流程", "`show_chart`"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("SKILL.md lacks %q:\n%s", want, md)
		}
	}
	reqs := srv.Requests()
	if len(reqs) != 2 || reqs[0].SchemaName() != "glossary" || reqs[1].SchemaName() != "skill_prose" {
		t.Fatalf("%d requests, want a glossary and a skill_prose request", len(reqs))
	}
	prompt := reqs[1].LastUserMessage()
	for _, want := range []string{`"write_in":"Chinese`, `"name":"ziping"`, `"procedure_phases":["收集出生信息","判断旺衰"]`, "show_chart"} {
		if !strings.Contains(prompt, want) {
			t.Errorf("the prompt lacks the fact %q:\n%s", want, prompt)
		}
	}
	// The steps are SKILL.md's own (from sop.yaml), not sent to the model.
	if strings.Contains(prompt, "计算日主旺衰") || !strings.Contains(string(md), "计算日主旺衰") {
		t.Errorf("want the step 计算日主旺衰 in SKILL.md and not in the prompt:\n%s", prompt)
	}
	var m Meta
	data, _ := os.ReadFile(res.MetaJSON)
	json.Unmarshal(data, &m)
	if m.Prose != "llm:test-model" || !strings.Contains(string(data), `"integrate.prose"`) || !strings.Contains(string(data), `"requests": 1`) {
		t.Errorf("meta.json does not record the prose and its LLM usage:\n%s", data)
	}
	// A rebuild of unchanged knowledge is answered from the cache.
	opt.LLM = proseClient(t, srv, cache)
	if _, err := Integrate(context.Background(), opt); err != nil {
		t.Fatal(err)
	}
	if n := srv.Count(); n != 2 {
		t.Errorf("an unchanged rebuild made %d requests in all, want 2", n)
	}
	if again, _ := os.ReadFile(res.MetaJSON); string(again) != string(data) {
		t.Errorf("an unchanged rebuild rewrote meta.json:\n%s", again)
	}
	// The skill passes the same checks a hand-written one must.
	rep, err := Check(context.Background(), Options{Theme: "demo", SkillDir: dir, Chunks: loadChunks(t), Config: checkCfg()})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range rep.Findings {
		if strings.HasPrefix(f.Check, "skill.") || strings.HasPrefix(f.Check, "size.skill") || strings.HasPrefix(f.Check, "size.metadata") {
			t.Errorf("the model's SKILL.md fails a check: %+v", f)
		}
	}
}

func TestLLMProseRepairedOnce(t *testing.T) {
	bad := goodProse()
	bad.Description = "A Chinese fate-reading skill. " + strings.Repeat("It covers many things. ", 20)
	bad.Identity = "你是命理师。你也是老师。"
	bad.Scope = append(bad.Scope, "<!-- hidden -->")
	srv := llmtest.New(t, noTerms, llmtest.JSON(bad), llmtest.JSON(goodProse()))
	dir := copyDir(t, "testdata/clean")
	res, err := Integrate(context.Background(), IntegrateOptions{Theme: "demo", SkillDir: dir, LLM: proseClient(t, srv, ""), Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Prose != "llm:m" || len(res.Warnings) != 0 {
		t.Fatalf("prose %q warnings %v: the repaired answer should be used", res.Prose, res.Warnings)
	}
	reqs := srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 3 (glossary, answer, repair)", len(reqs))
	}
	repair := reqs[2].LastUserMessage()
	for _, want := range []string{"tokens; at most 80", "identity must be one sentence", "description must be written in Chinese", "HTML comment"} {
		if !strings.Contains(repair, want) {
			t.Errorf("the repair request does not name the problem %q:\n%s", want, repair)
		}
	}
	md, _ := os.ReadFile(res.SkillMD)
	if strings.Contains(string(md), "hidden") || !strings.Contains(string(md), "你是精通子平法的命理师") {
		t.Errorf("SKILL.md:\n%s", md)
	}
}

func TestLLMProseFallsBackToTheTemplate(t *testing.T) {
	bad := goodProse()
	bad.Description = strings.Repeat("很长的描述。", 30)
	tests := []struct {
		name   string
		script []llmtest.Reply
		want   string
	}{
		{"fails the checks twice", []llmtest.Reply{llmtest.JSON(bad), llmtest.JSON(bad)}, "tokens; at most 80"},
		{"breaks the schema twice", []llmtest.Reply{llmtest.Text(`{"display_name": 1}`), llmtest.Text(`not json`)}, "schema"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.New(t, append([]llmtest.Reply{noTerms}, tt.script...)...)
			dir := copyDir(t, "testdata/clean")
			res, err := Integrate(context.Background(), IntegrateOptions{Theme: "demo", SkillDir: dir, LLM: proseClient(t, srv, ""), Model: "m"})
			if err != nil {
				t.Fatal(err)
			}
			if res.Prose != "template" || len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], tt.want) || !strings.Contains(res.Warnings[0], "template") {
				t.Fatalf("prose %q warnings %q", res.Prose, res.Warnings)
			}
			if srv.Count() != 3 {
				t.Errorf("%d requests, want 3 (the glossary, then one repair round, no more)", srv.Count())
			}
			md, _ := os.ReadFile(res.SkillMD)
			if !strings.Contains(string(md), "你是 demo 领域的专家") {
				t.Errorf("the template was not used:\n%s", md)
			}
		})
	}
}

func TestLLMProseTransportFailureFailsIntegrate(t *testing.T) {
	for _, tt := range []struct {
		script []llmtest.Reply
		want   string
	}{
		{[]llmtest.Reply{noTerms, llmtest.Status(500, "down")}, "SKILL.md prose"},
		{[]llmtest.Reply{llmtest.Status(500, "down")}, "ask the model for the glossary"},
	} {
		srv := llmtest.New(t, tt.script...)
		dir := copyDir(t, "testdata/clean")
		_, err := Integrate(context.Background(), IntegrateOptions{Theme: "demo", SkillDir: dir, LLM: proseClient(t, srv, ""), Model: "m"})
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Fatalf("err = %v, want the failed request reported (%s)", err, tt.want)
		}
		if _, err := os.Stat(dir + "/SKILL.md"); err == nil {
			t.Error("SKILL.md written although the prose could not be written")
		}
	}
}
