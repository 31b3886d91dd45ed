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
