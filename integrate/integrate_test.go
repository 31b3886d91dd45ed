package integrate

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/vibelife/vibe/knowledge"
	"github.com/vibelife/vibe/skills"
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
	sopOf := func(ph knowledge.Phase) knowledgeSet {
		return knowledgeSet{sop: knowledge.SOPFile{SOP: knowledge.SOP{Phases: []knowledge.Phase{ph}}}}
	}
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
		// A text that mentions birth is no request for birth data.
		{"parental leave: prior to birth/placement", sopOf(knowledge.Phase{ID: "P1", Name: "identify the situation", EntryCondition: "Prior to birth/placement or after",
			Steps: []knowledge.Step{{Action: "Ask whether the leave starts prior to birth/placement", Tool: "collect_info", Output: "leave start relative to the birth"},
				{Action: "Collect the expected date of birth and the employee's start date", Output: "eligibility"}}}), false},
		{"prenatal rules are no chart", knowledgeSet{rules: knowledge.RulesFile{Rules: knowledge.Rules{Tier2: []knowledge.Rule{rule("prenatal appointments are paid"), rule("antenatal classes"), rule("postnatal leave")}}}}, false},
		{"子女出生后的假期", sopOf(knowledge.Phase{ID: "P1", Steps: []knowledge.Step{{Action: "确认子女出生后的产假天数", Output: "假期"}}}), false},
		{"八字方针 is a motto", sopOf(knowledge.Phase{ID: "P1", Steps: []knowledge.Step{{Action: "贯彻八字方针", Output: "方案"}}}), false},
		// Birth data asked as an input, in either language.
		{"an English natal-chart SOP", sopOf(knowledge.Phase{ID: "P1", Steps: []knowledge.Step{{Action: "Ask for the date, time and place of birth", Output: "the chart"}}}), true},
		{"a step that collects the 八字", sopOf(knowledge.Phase{ID: "P1", Steps: []knowledge.Step{{Action: "收集八字", Tool: "collect_info"}}}), true},
		{"a phase named for the birth data", sopOf(knowledge.Phase{ID: "P1", Name: "收集出生信息"}), true},
	}
	for _, tt := range tests {
		if got := needsBirth(&tt.ks); got != tt.want {
			t.Errorf("%s: needsBirth = %v, want %v", tt.name, got, tt.want)
		}
	}
	// The fixtures keep their value: the demo SOP collects 出生年月日时.
	ks, err := loadKnowledge("testdata/clean")
	if err != nil {
		t.Fatal(err)
	}
	if !needsBirth(ks) {
		t.Error("testdata/clean (the demo bazi SOP) no longer requires birth info")
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
		"- Work out the water temperature\n"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("SKILL.md lacks %q:\n%s", want, md)
		}
	}
	// calc_water has no plugin: not offered, not named, and working the
	// result out is not forbidden.
	for _, not := range []string{"calc_water", "work the result out yourself"} {
		if strings.Contains(string(md), not) {
			t.Errorf("SKILL.md has %q:\n%s", not, md)
		}
	}
	if len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], "calc_water is a compute tool, which needs a plugin") {
		t.Errorf("warnings %q", res.Warnings)
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

// meta.json records the extraction's usage per pass when it is the usage
// of the knowledge's extractor, keeps it on rebuilds without a fresh
// record, and says when the knowledge was edited since.
func TestMetaRecordsExtractUsage(t *testing.T) {
	dir := copyDir(t, "testdata/clean")
	ctx := context.Background()
	hashes, err := KnowledgeHashes(dir)
	if err != nil || len(hashes) != 3 {
		t.Fatalf("hashes %v, %v", hashes, err)
	}
	rec := ExtractUsage{Extractor: "heuristic", KnowledgeHashes: hashes, Total: PassUsage{Pass: "total"}}
	for _, p := range []PassUsage{{Pass: "extract.map", Requests: 3, PromptTokens: 900, CompletionTokens: 120, Cost: 0.01}, {Pass: "extract.sop", CachedHits: 1}} {
		q := PassUsage{Pass: p.Pass}
		q.Add(p)
		rec.Passes = append(rec.Passes, q)
		rec.Total.Add(q)
	}
	path := filepath.Join(t.TempDir(), "usage", "extract.json")
	if err := WriteExtractUsage(path, rec); err != nil {
		t.Fatal(err)
	}
	read, err := ReadExtractUsage(path)
	if err != nil || read == nil {
		t.Fatalf("read back: %v %v", read, err)
	}
	meta := func() Meta {
		t.Helper()
		var m Meta
		data, err := os.ReadFile(filepath.Join(dir, "meta.json"))
		if err != nil || json.Unmarshal(data, &m) != nil {
			t.Fatalf("meta.json: %v\n%s", err, data)
		}
		return m
	}
	if _, err := Integrate(ctx, IntegrateOptions{Theme: "demo", SkillDir: dir, ExtractUsage: read}); err != nil {
		t.Fatal(err)
	}
	u := meta().ExtractUsage
	if u == nil || len(u.Passes) != 2 || u.Passes[0].Requests != 3 || u.Passes[0].PromptTokens != 900 || u.Passes[0].Cached ||
		!u.Passes[1].Cached || u.Total.Requests != 3 || u.Total.CachedHits != 1 || u.Total.CompletionTokens != 120 || u.EditedAfter {
		t.Fatalf("extract_llm_usage = %+v", u)
	}
	// A rebuild without a fresh record (a fresh clone: no .vibe) keeps it.
	if _, err := Integrate(ctx, IntegrateOptions{Theme: "demo", SkillDir: dir}); err != nil {
		t.Fatal(err)
	}
	if u := meta().ExtractUsage; u == nil || u.Total.Requests != 3 || u.EditedAfter {
		t.Fatalf("kept usage = %+v", u)
	}
	// A hand edit of the knowledge: still the usage of the extraction, marked.
	rules := filepath.Join(dir, "knowledge", "rules.yaml")
	data, _ := os.ReadFile(rules)
	os.WriteFile(rules, []byte(strings.Replace(string(data), "extractor: heuristic", "extractor: heuristic\n  # edited", 1)), 0o644)
	if _, err := Integrate(ctx, IntegrateOptions{Theme: "demo", SkillDir: dir}); err != nil {
		t.Fatal(err)
	}
	if u := meta().ExtractUsage; u == nil || !u.EditedAfter {
		t.Fatalf("after a hand edit: %+v", u)
	}
	// Another extractor's record (the knowledge was re-extracted offline
	// since) is not this knowledge's usage.
	other := *read
	other.Extractor = "llm:gpt-4o-mini"
	if _, err := Integrate(ctx, IntegrateOptions{Theme: "demo", SkillDir: dir, ExtractUsage: &other}); err != nil {
		t.Fatal(err)
	}
	if u := meta().ExtractUsage; u != nil {
		t.Fatalf("another extractor's usage recorded: %+v", u)
	}
	if u, err := ReadExtractUsage(filepath.Join(t.TempDir(), "none.json")); u != nil || err != nil {
		t.Errorf("missing record: %v %v", u, err)
	}
}

// A version and author written into the SKILL.md front matter are kept on
// rebuild and recorded in meta.json.
func TestMetaRecordsTheSkillVersion(t *testing.T) {
	dir := copyDir(t, "testdata/clean")
	ctx := context.Background()
	res, err := Integrate(ctx, IntegrateOptions{Theme: "demo", SkillDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	var m Meta
	data, _ := os.ReadFile(res.MetaJSON)
	if err := json.Unmarshal(data, &m); err != nil || m.Version != "" || strings.Contains(string(data), `"version"`) {
		t.Fatalf("meta.json without a version: %v\n%s", err, data)
	}
	md, _ := os.ReadFile(res.SkillMD)
	edited := strings.Replace(string(md), "---\nname: demo\n", "---\nname: demo\nversion: 1.2.0\nauthor: Vibe Team\n", 1)
	if edited == string(md) {
		t.Fatalf("no front matter to edit:\n%s", md)
	}
	if err := os.WriteFile(res.SkillMD, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Integrate(ctx, IntegrateOptions{Theme: "demo", SkillDir: dir}); err != nil {
		t.Fatal(err)
	}
	data, _ = os.ReadFile(res.MetaJSON)
	if err := json.Unmarshal(data, &m); err != nil || m.Version != "1.2.0" || m.Author != "Vibe Team" {
		t.Fatalf("meta.json = %+v %v", m, err)
	}
	if md, _ := os.ReadFile(res.SkillMD); !strings.Contains(string(md), "version: 1.2.0") {
		t.Fatalf("the version was not kept:\n%s", md)
	}
}

// The sources' table of contents is written to the skill for the router,
// rewritten only when it changes, and left as it is when the store gave no
// chunks (a skill extracted elsewhere).
func TestIntegrateWritesTheSourcesContents(t *testing.T) {
	dir := copyDir(t, "testdata/clean")
	ctx := context.Background()
	contents := skills.Contents{Documents: []skills.ContentsDocument{{
		Source: "knowledge/demo/source/金匮.txt", Title: "金匮要略",
		Headings: []string{"奔豚气病脉证治第八", "疮痈肠痈浸淫病脉证并治第十八"},
	}}}
	opt := IntegrateOptions{Theme: "demo", SkillDir: dir, Contents: contents}
	if _, err := Integrate(ctx, opt); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, filepath.FromSlash(skills.ContentsPath))
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	got, err := skills.ParseContents(b, path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, contents) {
		t.Fatalf("contents.yaml = %+v, want %+v", got, contents)
	}
	opt.Contents = skills.Contents{}
	if _, err := Integrate(ctx, opt); err != nil {
		t.Fatal(err)
	}
	if again, _ := os.ReadFile(path); string(again) != string(b) {
		t.Fatalf("integrate without chunks changed contents.yaml:\n%s", again)
	}
}
