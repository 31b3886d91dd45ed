package integrate

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/vibelife/vibe/chunk"
)

func TestRuleSentences(t *testing.T) {
	tests := []struct {
		text string
		want []string
	}{
		{"凡日主衰弱者，则宜用印比扶之。若财多身弱，则必以比劫为用。", []string{"凡日主衰弱者，则宜用印比扶之。", "若财多身弱，则必以比劫为用。"}},
		{"身弱而财多者，必以比劫为用。", []string{"身弱而财多者，必以比劫为用。"}},
		{"但见一煞，则以煞为重，不可用财。", []string{"但见一煞，则以煞为重，不可用财。"}},
		{"或甲午日庚午时，此人必贵。", []string{"或甲午日庚午时，此人必贵。"}},
		{"喜水则不吉。", []string{"喜水则不吉。"}},
		// Definitions, questions, headings, table rows and plain statements are not rules.
		{"太乙者，数之始也。", nil},
		{"若何以知其贵乎？", nil},
		{"## 若财多身弱，则必以比劫为用", nil},
		{"| 若财多 | 则用比劫 |", nil},
		{"观其立数之因，亦皆出乎自然。", nil},
		{"If the leaves are small, then use water at 80 °C. The pot is round.", []string{"If the leaves are small, then use water at 80 °C."}},
		{"Never brew green tea with boiling water.", []string{"Never brew green tea with boiling water."}},
		{"Black tea must always be brewed with freshly boiled water.", []string{"Black tea must always be brewed with freshly boiled water."}},
		{"A bitter edge that appears only in the second infusion means the first infusion was too long.", []string{"A bitter edge that appears only in the second infusion means the first infusion was too long."}},
		{"It should be noted that tea is old. Is it hot enough if it steams?", nil},
	}
	for _, tt := range tests {
		var got []string
		for _, s := range ruleSentences(tt.text) {
			got = append(got, s.text)
			if !strings.HasPrefix(tt.text[s.off:], s.text[:min(len(s.text), 6)]) {
				t.Errorf("%q: offset %d does not point at %q", tt.text, s.off, s.text)
			}
		}
		if strings.Join(got, "|") != strings.Join(tt.want, "|") {
			t.Errorf("ruleSentences(%q) = %q, want %q", tt.text, got, tt.want)
		}
	}
}

// coverageWorkspace writes a converted book of n chapters, each stating two
// rules and one plain sentence, chunks it by chapter (plus one overlapping
// chunk repeating a sentence), and a skill whose single rule cites chapter 1.
func coverageWorkspace(t *testing.T, n int) (root, skill string, chunks memChunkList) {
	t.Helper()
	root = t.TempDir()
	var b strings.Builder
	b.WriteString("---\ntitle: 茶经\n---\n\n# 茶经\n\n")
	type span struct{ start, end int }
	var spans []span
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "## 第%d章\n\n", i)
		start := utf8.RuneCountInString(b.String())
		name := string([]rune("甲乙丙丁戊己庚辛壬癸子丑寅卯辰巳午未申酉")[i-1])
		fmt.Fprintf(&b, "凡%s茶，必用沸水冲泡。\n若%s茶受潮，则不可饮。\n此茶产于山中。\n\n", name, name)
		spans = append(spans, span{start, utf8.RuneCountInString(b.String())})
	}
	doc := "knowledge/demo/converted/茶经.md"
	if err := os.MkdirAll(filepath.Join(root, "knowledge/demo/converted"), 0o755); err != nil {
		t.Fatal(err)
	}
	text := b.String()
	if err := os.WriteFile(filepath.Join(root, doc), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	runes := []rune(text)
	for i, sp := range spans {
		chunks = append(chunks, chunk.Chunk{ID: fmt.Sprintf("c%d", i+1), Doc: doc, Title: "茶经", HeadingPath: []string{"茶经", fmt.Sprintf("第%d章", i+1)},
			Start: sp.start, End: sp.end, Ordinal: i, Text: string(runes[sp.start:sp.end])})
	}
	// An overlapping chunk repeats chapter 2's first sentence.
	dup := chunks[1]
	dup.ID, dup.Ordinal, dup.End = "c2b", 99, dup.Start+utf8.RuneCountInString("凡乙茶，必用沸水冲泡。")
	dup.Text = string(runes[dup.Start:dup.End])
	chunks = append(chunks, dup)

	skill = filepath.Join(root, "skills", "demo")
	os.MkdirAll(filepath.Join(skill, "knowledge"), 0o755)
	files := map[string]string{
		"sop.yaml": `sop:
  name: 茶
  description: 泡茶
  phases:
    - id: P1
      name: 冲泡
      description: 冲泡
      entry_condition: 用户问泡茶
      steps:
        - id: P1_S1
          action: 用沸水冲泡
          output: 茶汤
          evidence: [{chunk: c1, quote: 凡甲茶，必用沸水冲泡。}]
      exit_condition: 泡好
`,
		"patterns.yaml": "patterns:\n  quick_patterns: []\n  red_flags: []\n",
		"rules.yaml": `rules:
  tier1_must_know: []
  tier2_core:
    - id: R1
      condition: 甲茶
      conclusion: 必用沸水冲泡
      confidence: high
      source: 茶经 > 第1章
      evidence: [{chunk: c1, quote: 凡甲茶，必用沸水冲泡。}]
  tier3_edge: []
`,
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(skill, "knowledge", name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root, skill, chunks
}

// memChunkList is a ChunkSource over a list, in order.
type memChunkList []chunk.Chunk

func (m memChunkList) Chunk(ctx context.Context, id string) (chunk.Chunk, error) {
	for _, c := range m {
		if c.ID == id {
			return c, nil
		}
	}
	return memChunks{}.Chunk(ctx, id)
}

func (m memChunkList) Chunks(context.Context, string) ([]chunk.Chunk, error) { return m, nil }

func TestCoverageGroupsGapsBySection(t *testing.T) {
	const chapters = 13
	root, skill, chunks := coverageWorkspace(t, chapters)
	if _, err := Integrate(context.Background(), IntegrateOptions{Theme: "demo", SkillDir: skill}); err != nil {
		t.Fatal(err)
	}
	rep, err := Check(context.Background(), Options{Theme: "demo", SkillDir: skill, RelTo: root, Chunks: chunks, Config: checkCfg()})
	if err != nil {
		t.Fatal(err)
	}
	cov := rep.Coverage
	if cov == nil {
		t.Fatal("no coverage in the report")
	}
	// Two rules per chapter, the overlapping chunk's repeat counted once;
	// the rule cites one passage of chapter 1.
	if cov.Passages != 2*chapters || cov.Covered != 1 || cov.Sections != chapters || cov.CoveredSections != 1 {
		t.Fatalf("coverage %+v", *cov)
	}
	if rep.Summary.Uncovered != 2*chapters-1 || rep.Summary.Coverage != percent(1, 2*chapters) || rep.Summary.SectionCoverage != percent(1, chapters) {
		t.Errorf("summary %+v", rep.Summary)
	}
	// Sections no rule cites come first; chapter 1 (cited, one gap) last.
	if len(cov.Gaps) != chapters || cov.Gaps[0].Section != "茶经 › 第2章" || cov.Gaps[chapters-1].Section != "茶经 › 第1章" || cov.Gaps[chapters-1].Cited != 1 {
		t.Fatalf("gaps %+v", cov.Gaps)
	}
	text, _ := os.ReadFile(filepath.Join(root, "knowledge/demo/converted/茶经.md"))
	lines := strings.Split(string(text), "\n")
	notes := 0
	for _, f := range rep.Findings {
		if f.Check != missingRule {
			continue
		}
		notes++
		if f.Severity != SevNote || f.File != "knowledge/demo/converted/茶经.md" {
			t.Fatalf("note %+v does not point at the converted file", f)
		}
		line := lines[f.Line-1]
		if got := string([]rune(line)[f.Column-1:]); !strings.HasPrefix(got, "若") && !strings.HasPrefix(got, "凡") {
			t.Errorf("note at %d:%d points at %q", f.Line, f.Column, got)
		}
	}
	if notes != 2*chapters-1 {
		t.Errorf("%d notes, want one per uncovered passage (%d)", notes, 2*chapters-1)
	}
	if rep.Failed(false) {
		t.Errorf("coverage notes must not fail the check:\n%s", textOf(t, rep))
	}

	var b bytes.Buffer
	Write(&b, rep, "text")
	out := b.String()
	for _, want := range []string{"the rules cite 1 of 26 rule-like passages and 1 of 13 sections", "knowledge/demo/converted/茶经.md:", "茶经 › 第2章: 2 of 2 rule-like passages uncovered, no rule cites it",
		"… 3 more sections with 5 passages: see --format sarif for every section, json for every passage"} {
		if !strings.Contains(out, want) {
			t.Errorf("text output lacks %q:\n%s", want, out)
		}
	}
	if strings.Count(out, "possible missing rule in") != 0 {
		t.Errorf("the text format lists passages one by one:\n%s", out)
	}
	b.Reset()
	Write(&b, rep, "github")
	if n := strings.Count(b.String(), "::notice file=knowledge/demo/converted/"); n != TopGaps {
		t.Errorf("github format: %d coverage notices, want one per top section (%d):\n%s", n, TopGaps, b.String())
	}
	b.Reset()
	Write(&b, rep, "json")
	var back Report
	if err := json.Unmarshal(b.Bytes(), &back); err != nil || back.Coverage == nil || len(back.Coverage.Gaps) != chapters {
		t.Fatalf("json: %v", err)
	}
	n := 0
	for _, f := range back.Findings {
		if f.Check == missingRule {
			n++
		}
	}
	if n != 2*chapters-1 {
		t.Errorf("json keeps %d passages, want all %d", n, 2*chapters-1)
	}
	// SARIF: one result per section with uncovered passages (code scanning
	// keeps 5,000 results a run), at its first passage, with every chunk.
	log := validateSARIF(t, sarifSchema(t), rep)
	var got []string
	for _, r := range log["runs"].([]any)[0].(map[string]any)["results"].([]any) {
		res := r.(map[string]any)
		props, _ := res["properties"].(map[string]any)
		if props["check"] != missingRule {
			continue
		}
		sec := props["section"].(string)
		got = append(got, sec)
		var gap SectionGap
		for _, g := range cov.Gaps {
			if g.Section == sec {
				gap = g
			}
		}
		region := res["locations"].([]any)[0].(map[string]any)["physicalLocation"].(map[string]any)["region"].(map[string]any)
		if int(region["startLine"].(float64)) != gap.Line || int(props["uncovered"].(float64)) != gap.Uncovered ||
			len(props["chunks"].([]any)) != len(gap.Chunks) || len(gap.Chunks) == 0 ||
			!strings.Contains(res["message"].(map[string]any)["text"].(string), fmt.Sprintf("%d of %d rule-like passages of %s", gap.Uncovered, gap.Passages, sec)) {
			t.Errorf("sarif result for %s = %v, want the gap %+v", sec, res, gap)
		}
	}
	if len(got) != chapters {
		t.Errorf("sarif: %d coverage results %q, want one per section (%d)", len(got), got, chapters)
	}
}

// Rules citing few of the sections that state rules is a warning (VIBE021),
// not silence: one rule over 13 chapters cites 1 of 13 sections.
func TestLowSectionCoverageWarns(t *testing.T) {
	root, skill, chunks := coverageWorkspace(t, 13)
	if _, err := Integrate(context.Background(), IntegrateOptions{Theme: "demo", SkillDir: skill}); err != nil {
		t.Fatal(err)
	}
	low := func(minCov float64) (int, Report) {
		t.Helper()
		cfg := checkCfg()
		cfg.MinSectionCoverage = minCov
		rep, err := Check(context.Background(), Options{Theme: "demo", SkillDir: skill, RelTo: root, Chunks: chunks, Config: cfg})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, f := range rep.Findings {
			if f.RuleID == "VIBE021" {
				n++
				if f.Severity != SevWarning || f.Check != "coverage.low" || !strings.Contains(f.Message, "of the 13 sections stating rules") || !strings.Contains(f.Message, "check.min_section_coverage") {
					t.Errorf("finding %+v", f)
				}
			}
		}
		return n, rep
	}
	n, rep := low(checkCfg().MinSectionCoverage)
	if n != 1 || rep.Summary.Warnings == 0 {
		t.Fatalf("default threshold at %.1f%% section coverage: %d VIBE021 findings, %d warnings", rep.Summary.SectionCoverage, n, rep.Summary.Warnings)
	}
	if !strings.Contains(SummaryLine(rep), fmt.Sprintf("%d notes (%d of them possible missing rules)", rep.Summary.Notes, rep.Summary.Uncovered)) {
		t.Errorf("summary line %q does not count every note", SummaryLine(rep))
	}
	if n, rep := low(rep.Summary.SectionCoverage - 1); n != 0 {
		t.Errorf("threshold below the %.1f%% coverage still warns", rep.Summary.SectionCoverage)
	}
	if n, _ := low(0); n != 0 {
		t.Error("min_section_coverage 0 does not turn the warning off")
	}
}

// A story's conditionals are not rule-like passages a rule should cite:
// coverage leaves the novel out and a note names it (issue 28).
func TestCoverageLeavesOutAStory(t *testing.T) {
	const chapters = 3
	root, skill, chunks := coverageWorkspace(t, chapters)
	names := strings.Fields("宋江 林冲 武松 李逵 吴用 鲁达 杨志 柴进 晁盖 史进 朱仝 雷横 花荣 秦明 呼延 关胜 张顺 阮七 燕青 卢俊")
	var b strings.Builder
	for i := 0; i < 60; i++ {
		fmt.Fprintf(&b, "%s道：“今日天色已晚，且去歇了。”%s听了，便叫庄客安排酒食。\n\n", names[i%len(names)], names[(i+3)%len(names)])
	}
	b.WriteString("若是宋江不来，则众人必不肯散。\n\n如果林冲看时，则不是别人，却是小旋风柴进。\n")
	novel := "knowledge/demo/converted/水浒.md"
	chunks = append(chunks, chunk.Chunk{ID: "n1", Doc: novel, Title: "水浒", HeadingPath: []string{"第一回"}, Ordinal: 100, Text: b.String()})
	if _, err := Integrate(context.Background(), IntegrateOptions{Theme: "demo", SkillDir: skill}); err != nil {
		t.Fatal(err)
	}
	rep, err := Check(context.Background(), Options{Theme: "demo", SkillDir: skill, RelTo: root, Chunks: chunks, Config: checkCfg()})
	if err != nil {
		t.Fatal(err)
	}
	if cov := rep.Coverage; cov == nil || cov.Passages != 2*chapters || cov.Sections != chapters {
		t.Fatalf("coverage %+v, want the treatise's %d passages in %d sections only", cov, 2*chapters, chapters)
	}
	found := false
	for _, f := range rep.Findings {
		found = found || f.Check == "coverage.narrative" && strings.Contains(f.Message, novel) && strings.Contains(f.Message, "20 speakers")
	}
	if !found {
		t.Errorf("no coverage.narrative note naming %s: %+v", novel, rep.Findings)
	}
}
