package integrate

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vibelife/vibe/knowledge"
)

func TestRebuildOfUnchangedKnowledgeWritesNothing(t *testing.T) {
	dir := copyDir(t, "testdata/clean")
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	opt := IntegrateOptions{Theme: "demo", SkillDir: dir, Now: func() time.Time { return clock }}
	res, err := Integrate(context.Background(), opt)
	if err != nil {
		t.Fatal(err)
	}
	var before [3][]byte
	for i, p := range []string{res.SkillMD, res.ToolsYAML, res.MetaJSON} {
		before[i], _ = os.ReadFile(p)
	}
	clock = clock.Add(time.Hour)
	if _, err := Integrate(context.Background(), opt); err != nil {
		t.Fatal(err)
	}
	for i, p := range []string{res.SkillMD, res.ToolsYAML, res.MetaJSON} {
		after, _ := os.ReadFile(p)
		if string(after) != string(before[i]) {
			t.Errorf("%s changed on an unchanged rebuild", p)
		}
	}
}

func TestIntegrateWithoutKnowledge(t *testing.T) {
	_, err := Integrate(context.Background(), IntegrateOptions{Theme: "demo", SkillDir: t.TempDir()})
	if err == nil || !errors.Is(err, ErrNoKnowledge) {
		t.Fatalf("err = %v, want ErrNoKnowledge", err)
	}
}

func TestTitleFollowsTheDisplayNameUnlessEdited(t *testing.T) {
	dir := copyDir(t, "testdata/clean")
	ctx := context.Background()
	opt := IntegrateOptions{Theme: "demo", SkillDir: dir}
	res, err := Integrate(ctx, opt)
	if err != nil {
		t.Fatal(err)
	}
	md, _ := os.ReadFile(res.SkillMD)
	if !strings.Contains(string(md), "\n# demo：《ziping》\n") {
		t.Fatalf("title:\n%s", md)
	}
	// The works change, so the display name and the title change.
	rules := filepath.Join(dir, "knowledge", "rules.yaml")
	data, _ := os.ReadFile(rules)
	os.WriteFile(rules, []byte(strings.Replace(string(data), "source: ziping.md", "source: 子平真诠 > 论用神", 2)), 0o644)
	if res, err = Integrate(ctx, opt); err != nil {
		t.Fatal(err)
	}
	md, _ = os.ReadFile(res.SkillMD)
	if !strings.Contains(string(md), "\n# demo：《子平真诠》《ziping》\n") || len(res.Kept) != 0 {
		t.Fatalf("title not regenerated (kept %v):\n%s", res.Kept, md)
	}
	// A title edited by hand stays.
	os.WriteFile(res.SkillMD, []byte(strings.Replace(string(md), "# demo：《子平真诠》《ziping》", "# 子平八字", 1)), 0o644)
	os.WriteFile(rules, data, 0o644)
	if res, err = Integrate(ctx, opt); err != nil {
		t.Fatal(err)
	}
	md, _ = os.ReadFile(res.SkillMD)
	if !strings.Contains(string(md), "\n# 子平八字\n") || len(res.Kept) != 1 || res.Kept[0] != "title" {
		t.Fatalf("hand-edited title lost (kept %v):\n%s", res.Kept, md)
	}
	if !strings.Contains(string(md), "display_name: demo：《ziping》") {
		t.Errorf("the front matter was not regenerated:\n%s", md)
	}
}

func TestNeedsBirth(t *testing.T) {
	rule := func(cond string) knowledge.Rule { return knowledge.Rule{Condition: cond, Conclusion: "x"} }
	tests := []struct {
		name string
		ks   knowledgeSet
		want bool
	}{
		{"the SOP collects birth data", knowledgeSet{sop: knowledge.SOPFile{SOP: knowledge.SOP{Phases: []knowledge.Phase{{ID: "P1", Steps: []knowledge.Step{{Action: "收集出生年月日时"}}}}}}}, true},
		{"rules read a chart", knowledgeSet{rules: knowledge.RulesFile{Rules: knowledge.Rules{Tier2: []knowledge.Rule{rule("日主衰弱"), rule("四柱火多"), rule("八字纯阳")}}}}, true},
		{"one chart word is not enough", knowledgeSet{rules: knowledge.RulesFile{Rules: knowledge.Rules{Tier2: []knowledge.Rule{rule("日主衰弱"), rule("水沸"), rule("茶凉")}}}}, false},
		{"tea", knowledgeSet{rules: knowledge.RulesFile{Rules: knowledge.Rules{Tier2: []knowledge.Rule{rule("the leaves are small"), rule("the water boils")}}}}, false},
	}
	for _, tt := range tests {
		if got := needsBirth(&tt.ks); got != tt.want {
			t.Errorf("%s: needsBirth = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// An English corpus gets an English SKILL.md: headings, template sentences
// and tool table, passing the same section checks.
func TestEnglishCorpusGetsAnEnglishSkill(t *testing.T) {
	dir := copyDir(t, "testdata/clean")
	files := map[string]string{
		"sop.yaml": `sop:
  name: tea
  description: brewing
  phases:
    - id: P1
      name: Choose the water
      description: pick the temperature
      entry_condition: the user asks how to brew
      steps:
        - {id: P1_S1, action: Work out the water temperature, tool: calc_water, output: degrees, evidence: [{chunk: demo-c2, quote: "If the day master is strong"}]}
      exit_condition: the water is chosen
`,
		"rules.yaml": `rules:
  tier1_must_know: []
  tier2_core:
    - {id: R1, condition: the leaves are small, conclusion: use water at 80 °C, confidence: high, source: Brewing Green Tea > Temperature and Time, evidence: [{chunk: demo-c2, quote: "If the day master is strong"}]}
    - {id: R2, condition: the leaves are large, conclusion: use water at 90 °C, confidence: high, source: Brewing Green Tea > Temperature and Time, evidence: [{chunk: demo-c2, quote: "If the day master is strong"}]}
    - {id: R3, condition: 茶叶受潮, conclusion: 不可饮, confidence: high, source: 普洱茶 > 存茶, evidence: [{chunk: demo-c1, quote: "凡日主衰弱者"}]}
  tier3_edge: []
`,
		"patterns.yaml": "patterns:\n  quick_patterns: []\n  red_flags: []\n",
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, "knowledge", name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	res, err := Integrate(context.Background(), IntegrateOptions{Theme: "tea", SkillDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if res.Language != "en" || res.Prose != "template" {
		t.Fatalf("language %q prose %q", res.Language, res.Prose)
	}
	md, _ := os.ReadFile(res.SkillMD)
	for _, want := range []string{"## Scope", "## Principles", "## Style", "## Tools", "### Core procedure", "### Never",
		"You are an expert in tea who answers from 3 rules drawn from Brewing Green Tea and 普洱茶",
		"- Sources: Brewing Green Tea (2 rules), 普洱茶 (1 rule)", "Topics the rules cover: Temperature and Time",
		"| Choose the water phase: Work out the water temperature | `calc_water` | work the result out yourself |"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("SKILL.md lacks %q:\n%s", want, md)
		}
	}
	for _, zh := range []string{"能力范围", "禁止事项", "可用工具"} {
		if strings.Contains(string(md), zh) {
			t.Errorf("an English skill has the Chinese heading %q", zh)
		}
	}
	rep, err := Check(context.Background(), Options{Theme: "tea", SkillDir: dir, Chunks: loadChunks(t), Config: checkCfg()})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range rep.Findings {
		if strings.HasPrefix(f.Check, "skill.") {
			t.Errorf("the English SKILL.md fails %+v", f)
		}
	}
}
