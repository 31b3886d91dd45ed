package integrate

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/vibelife/vibe/skills"
)

// stepCalls makes step P2_S1 of the copied clean fixture call a compute tool.
func stepCalls(t *testing.T, dir, tool string) {
	t.Helper()
	sop := filepath.Join(dir, "knowledge", "sop.yaml")
	s, _ := os.ReadFile(sop)
	out := strings.Replace(string(s), "action: 计算日主旺衰\n", "action: 计算日主旺衰\n          tool: "+tool+"\n", 1)
	if out == string(s) {
		t.Fatal("step P2_S1 not found in the clean fixture")
	}
	if err := os.WriteFile(sop, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestDeclaredToolsMergedIntoToolsYAML(t *testing.T) {
	dir := copyDir(t, "testdata/clean")
	stepCalls(t, dir, "calc_strength")
	res, err := Integrate(context.Background(), IntegrateOptions{Theme: "demo", SkillDir: dir, DeclaredTools: "testdata/declared/tools.yaml"})
	if err != nil {
		t.Fatal(err)
	}
	// The runtime's own loader reads what integrate wrote.
	sk, err := skills.LoadFS(os.DirFS(dir), "demo", dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range sk.Tools {
		names = append(names, tl.Name)
	}
	if got, want := strings.Join(names, ","), "calc_strength,show_chart,show_strength"; got != want {
		t.Fatalf("tools %s, want %s (SOP order, then hand-only tools)", got, want)
	}
	calc, _ := sk.Tool("calc_strength")
	if calc.Plugin == nil || strings.Join(calc.Plugin.Command, " ") != "bazi-strength --json" || calc.Plugin.Timeout != "5s" {
		t.Errorf("the hand-declared plugin was lost: %+v", calc.Plugin)
	}
	if calc.Description != "按月令与通根计算日主旺衰" || len(calc.Parameters) != 1 || calc.Parameters[0].Name != "pillars" {
		t.Errorf("the hand declaration did not win: %+v", calc)
	}
	if calc.WhenToCall != "判断旺衰阶段：计算日主旺衰" {
		t.Errorf("an empty when_to_call should come from the SOP step: %q", calc.WhenToCall)
	}
	show, _ := sk.Tool("show_strength")
	if show.Type != "display" || show.CardType != "strength_card" || len(show.CardProps) != 2 || show.WhenToCall != "用户想看日主旺衰时" {
		t.Errorf("hand-only display tool changed: %+v", show)
	}
	gen, _ := sk.Tool("show_chart")
	if gen.CardType != "chart_card" {
		t.Errorf("generated tool show_chart: %+v", gen)
	}
	if res.Tools != 3 {
		t.Errorf("Result.Tools = %d, want 3", res.Tools)
	}
	md, _ := os.ReadFile(res.SkillMD)
	for _, want := range []string{"`show_strength`", "用户想看日主旺衰时", "`calc_strength`"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("the SKILL.md tool table lacks %q", want)
		}
	}

	// The check resolves the SOP's tools against the merged set and finds
	// nothing stale.
	rep, err := Check(context.Background(), Options{Theme: "demo", SkillDir: dir, Chunks: loadChunks(t), Config: checkCfg(), DeclaredTools: "testdata/declared/tools.yaml"})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range rep.Findings {
		if strings.HasPrefix(f.Check, "tools.") || f.Check == "ref.tool-missing" {
			t.Errorf("unexpected finding: %+v", f)
		}
	}
}

func TestDeclaredToolsStaleAndMissing(t *testing.T) {
	dir := copyDir(t, "testdata/clean")
	stepCalls(t, dir, "calc_strength")
	ctx := context.Background()
	res, err := Integrate(ctx, IntegrateOptions{Theme: "demo", SkillDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	// Undeclared, the compute tool has no plugin: not offered, and said so.
	if len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], "calc_strength is a compute tool, which needs a plugin") {
		t.Errorf("warnings %q", res.Warnings)
	}
	if tf, _ := os.ReadFile(res.ToolsYAML); strings.Contains(string(tf), "calc_strength") {
		t.Errorf("a compute tool without a plugin was generated:\n%s", tf)
	}
	if md, _ := os.ReadFile(res.SkillMD); strings.Contains(string(md), "calc_strength") || strings.Contains(string(md), "自行推算结果") {
		t.Errorf("SKILL.md names the tool it does not offer, or forbids working the result out:\n%s", md)
	}
	// Declared after the last integrate: the check says so, at the tool's line.
	decl := filepath.Join(t.TempDir(), "tools.yaml")
	data, _ := os.ReadFile("testdata/declared/tools.yaml")
	if err := os.WriteFile(decl, data, 0o644); err != nil {
		t.Fatal(err)
	}
	rep, err := Check(ctx, Options{Theme: "demo", SkillDir: dir, Chunks: loadChunks(t), Config: checkCfg(), DeclaredTools: decl})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"calc_strength": 3, "show_strength": 13}
	for _, f := range rep.Findings {
		if f.Check == "tools.stale" {
			if f.Line != want[f.Item] || f.Severity != SevWarning {
				t.Errorf("stale finding %+v, want line %d", f, want[f.Item])
			}
			delete(want, f.Item)
		}
	}
	if len(want) > 0 {
		t.Errorf("no tools.stale finding for %v:\n%s", want, textOf(t, rep))
	}
	// The step names a compute tool that is not offered: an error with the fix.
	found := false
	for _, f := range rep.Findings {
		if f.Check == "ref.tool-missing" && f.Item == "P2_S1" && f.Severity == SevError {
			found = true
		}
	}
	if !found {
		t.Errorf("no ref.tool-missing error for calc_strength:\n%s", textOf(t, rep))
	}

	// A tool the SOP calls that is missing from tools.yaml but declared by hand.
	sop := filepath.Join(dir, "knowledge", "sop.yaml")
	s, _ := os.ReadFile(sop)
	if err := os.WriteFile(sop, []byte(strings.Replace(string(s), "tool: show_chart", "tool: show_strength", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	rep, err = Check(ctx, Options{Theme: "demo", SkillDir: dir, Chunks: loadChunks(t), Config: checkCfg(), DeclaredTools: decl})
	if err != nil {
		t.Fatal(err)
	}
	found = false
	for _, f := range rep.Findings {
		if f.Check == "ref.tool-missing" && f.Item == "P2_S2" && f.Severity == SevError && strings.Contains(f.Message, "run `vibe integrate demo` to merge it") {
			found = true
		}
	}
	if !found {
		t.Errorf("no ref.tool-missing error pointing at the hand declaration:\n%s", textOf(t, rep))
	}
	// After integrate the same check is clean of tool problems.
	if _, err := Integrate(ctx, IntegrateOptions{Theme: "demo", SkillDir: dir, DeclaredTools: decl}); err != nil {
		t.Fatal(err)
	}
	rep, _ = Check(ctx, Options{Theme: "demo", SkillDir: dir, Chunks: loadChunks(t), Config: checkCfg(), DeclaredTools: decl})
	for _, f := range rep.Findings {
		if strings.HasPrefix(f.Check, "tools.") || f.Check == "ref.tool-missing" {
			t.Errorf("after integrate: %+v", f)
		}
	}
}

func TestDeclaredToolsErrorsNameFileAndLine(t *testing.T) {
	tests := []struct {
		name string
		doc  string
		want []string // "line:check" of every error, in order
	}{
		{"unknown type", "tools:\n  - name: show_x\n    type: chart\n    description: d\n", []string{"3:schema.invalid"}},
		{"misspelt key", "tools:\n  - name: show_x\n    type: display\n    description: d\n    when_to_cal: now\n", []string{"2:schema.invalid"}},
		{"bad timeout", "tools:\n  - name: calc_x\n    type: compute\n    description: d\n    plugin: {command: [x], timeout: soon}\n", []string{"5:schema.invalid"}},
		{"parameter constraints that cannot hold", `tools:
  - name: calc_x
    type: compute
    description: d
    parameters:
      - {name: n, type: integer, minimum: 9, maximum: 1}
    plugin: {command: [x]}
  - name: calc_y
    type: compute
    description: d
    parameters:
      - {name: s, type: string, pattern: "("}
    plugin: {command: [y]}
`, []string{"6:tools.parameter", "12:tools.parameter"}},
		{"unknown format", "tools:\n  - name: calc_x\n    type: compute\n    description: d\n    parameters:\n      - {name: d, type: string, format: colour}\n    plugin: {command: [x]}\n", []string{"6:schema.invalid"}},
		{"plugin url and duplicate and core name", `tools:
  - name: calc_x
    type: compute
    description: d
    plugin:
      url: ftp://example.org/x
  - name: calc_x
    type: compute
    description: again
    plugin: {command: [x]}
  - name: get_rules
    type: retrieve
    description: shadows the core tool
  - name: calc_y
    type: compute
    description: both
    plugin: {url: "http://127.0.0.1:9/y", command: [y]}
`, []string{"6:tools.plugin", "7:tools.duplicate", "11:tools.core-name", "17:tools.plugin"}},
		{"plugin urls without a host, with a bad port, with a fragment, with a space", `tools:
  - name: calc_a
    type: compute
    description: d
    plugin: {url: "http://:9000/a"}
  - name: calc_b
    type: compute
    description: d
    plugin: {url: "http://127.0.0.1:99999/b"}
  - name: calc_c
    type: compute
    description: d
    plugin: {url: "http://127.0.0.1:9000/c#x"}
  - name: calc_d
    type: compute
    description: d
    plugin:
      timeout: 5s
      url: "http://exa mple.org/d"
`, []string{"5:tools.plugin", "9:tools.plugin", "13:tools.plugin", "19:tools.plugin"}},
		{"not YAML", "tools: [\n", []string{"1:schema.invalid"}},
		{"tools the runtime cannot run", `tools:
  - name: calc_x
    type: compute
    description: no plugin
  - name: draw_x
    type: random
    description: nothing to draw
  - name: roll_x
    type: random
    description: more than there is
    draw: {items: [1, 2], count: 3}
  - name: ask_x
    type: collect
    description: no form
  - name: quiz_x
    type: flow
    description: a step leading nowhere
    steps:
      - {id: a, prompt: Ask A, field: {type: string}, next: b}
  - name: loop_x
    type: flow
    description: never ends
    steps:
      - {id: a, prompt: Ask A, field: {type: string}, next: a}
  - name: search_x
    type: retrieve
    description: no query
    parameters:
      - {name: text, type: string}
`, []string{"2:tools.unrunnable", "5:tools.unrunnable", "11:tools.unrunnable", "12:tools.unrunnable", "19:tools.unrunnable", "24:tools.unrunnable", "29:tools.unrunnable"}},
		{"random with flow steps", `tools:
  - name: draw_y
    type: random
    description: d
    draw: {items: [a, b]}
    steps:
      - {id: a, prompt: Ask A, field: {type: string}}
`, []string{"7:tools.unrunnable"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "tools.yaml")
			if err := os.WriteFile(p, []byte(tt.doc), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := LoadDeclaredTools(p, "knowledge/demo/tools.yaml")
			var te *ToolsFileError
			if !errors.As(err, &te) {
				t.Fatalf("err = %v, want a *ToolsFileError", err)
			}
			var got []string
			for _, pr := range te.Problems {
				got = append(got, strconv.Itoa(pr.Line)+":"+pr.Check)
			}
			if strings.Join(got, " ") != strings.Join(tt.want, " ") {
				t.Errorf("problems %v, want %v\n%v", got, tt.want, err)
			}
			if !strings.Contains(err.Error(), "knowledge/demo/tools.yaml:") {
				t.Errorf("the error does not name the file: %v", err)
			}
			// Integrate refuses to merge a broken declaration file.
			dir := copyDir(t, "testdata/clean")
			if _, err := Integrate(context.Background(), IntegrateOptions{Theme: "demo", SkillDir: dir, DeclaredTools: p}); !errors.As(err, &te) {
				t.Errorf("Integrate err = %v, want the declaration errors", err)
			}
		})
	}
	// A missing file declares nothing.
	tf, err := LoadDeclaredTools(filepath.Join(t.TempDir(), "none.yaml"), "none.yaml")
	if err != nil || len(tf.Tools) != 0 {
		t.Errorf("missing file: %+v, %v", tf, err)
	}
}

func TestPluginOnNonComputeToolIsAWarning(t *testing.T) {
	doc := "tools:\n  - name: show_x\n    type: display\n    description: d\n    plugin: {command: [x]}\n"
	d, probs := parseTools([]byte(doc))
	if d == nil || len(probs) != 1 || probs[0].Severity != SevWarning || probs[0].Line != 5 {
		t.Fatalf("problems %+v", probs)
	}
	p := filepath.Join(t.TempDir(), "tools.yaml")
	os.WriteFile(p, []byte(doc), 0o644)
	tf, err := LoadDeclaredTools(p, p)
	if err != nil || len(tf.Tools) != 1 {
		t.Errorf("a warning must not stop the merge: %v", err)
	}
	var back ToolsFile
	out, _ := yaml.Marshal(tf)
	if err := yaml.Unmarshal(out, &back); err != nil || back.Tools[0].Plugin == nil {
		t.Errorf("round trip lost the plugin: %s", out)
	}
}

// TestPluginCommandsExist: vibe check resolves each command plugin's program
// as the runtime does (a relative path with a slash under the workspace
// root, a bare name in PATH) and reports one that is not there at the line
// of its declaration, with what to do.
func TestPluginCommandsExist(t *testing.T) {
	ws := t.TempDir()
	if err := os.MkdirAll(filepath.Join(ws, "plugins", "dir"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, mode := range map[string]os.FileMode{"ok": 0o755, "plain": 0o644} {
		if err := os.WriteFile(filepath.Join(ws, "plugins", name), []byte("#!/bin/sh\n"), mode); err != nil {
			t.Fatal(err)
		}
	}
	decl := filepath.Join(ws, "tools.yaml")
	doc := "tools:\n"
	for _, c := range []struct{ name, command string }{
		{"calc_ok", "plugins/ok"},           // line 5
		{"calc_missing", "plugins/missing"}, // 9
		{"calc_dir", "plugins/dir"},         // 13
		{"calc_plain", "plugins/plain"},     // 17
		{"calc_abs", filepath.Join(ws, "nowhere", "calc")},
		{"calc_path", "vibe-test-no-such-program"},
		{"calc_sh", "sh"},
	} {
		doc += "  - name: " + c.name + "\n    type: compute\n    description: d\n    plugin: {command: [" + c.command + "]}\n"
	}
	if err := os.WriteFile(decl, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := copyDir(t, "testdata/clean")
	ctx := context.Background()
	if _, err := Integrate(ctx, IntegrateOptions{Theme: "demo", SkillDir: dir, DeclaredTools: decl}); err != nil {
		t.Fatal(err)
	}
	rep, err := Check(ctx, Options{Theme: "demo", SkillDir: dir, RelTo: ws, Chunks: loadChunks(t), Config: checkCfg(), DeclaredTools: decl, PluginDir: ws})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]struct {
		line int
		sev  Severity
		says string
	}{
		"calc_missing": {9, SevError, "is not in the workspace (plugins/missing): build or copy the program there"},
		"calc_dir":     {13, SevError, "is a directory"},
		"calc_plain":   {17, SevError, "is not executable: chmod +x plugins/plain"},
		"calc_abs":     {21, SevWarning, "does not exist on this machine"},
		"calc_path":    {25, SevWarning, "is not in PATH here"},
	}
	for _, f := range rep.Findings {
		if f.Check != "tools.plugin-missing" {
			continue
		}
		w, ok := want[f.Item]
		if !ok || f.File != "tools.yaml" || f.Line != w.line || f.Column != 23 || f.Severity != w.sev || !strings.Contains(f.Message, w.says) {
			t.Errorf("finding %+v, want %+v at tools.yaml:%d:23 (the command)", f, w, w.line)
		}
		delete(want, f.Item)
	}
	for item, w := range want {
		t.Errorf("no tools.plugin-missing for %s (%s):\n%s", item, w.says, textOf(t, rep))
	}
	// Without a plugin directory (a check outside a workspace) nothing is resolved.
	rep, _ = Check(ctx, Options{Theme: "demo", SkillDir: dir, Chunks: loadChunks(t), Config: checkCfg(), DeclaredTools: decl})
	for _, f := range rep.Findings {
		if f.Check == "tools.plugin-missing" {
			t.Errorf("without PluginDir: %+v", f)
		}
	}
}

func TestRandomItemsFileCopiedAndChecked(t *testing.T) {
	dir := copyDir(t, "testdata/clean")
	kdir := t.TempDir()
	decl := filepath.Join(kdir, "tools.yaml")
	doc := "tools:\n  - name: draw_hexagram\n    type: random\n    description: 起一卦\n    draw:\n      items_file: data/hexagrams.yaml\n"
	if err := os.WriteFile(decl, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(kdir, "data"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(kdir, "data", "hexagrams.yaml"), []byte("- 乾\n- 坤\n- 屯\n- 蒙\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := Integrate(ctx, IntegrateOptions{Theme: "demo", SkillDir: dir, DeclaredTools: decl}); err != nil {
		t.Fatal(err)
	}
	sk, err := skills.LoadFS(skills.DirFS(dir), "demo", dir)
	if err != nil {
		t.Fatal(err)
	}
	tool, _ := sk.Tool("draw_hexagram")
	if items, err := tool.Draw.Load(sk.FS()); err != nil || len(items) != 4 {
		t.Fatalf("items %v, %v", items, err)
	}
	unrunnable := func(rep Report) []Finding {
		var out []Finding
		for _, f := range rep.Findings {
			if strings.HasPrefix(f.Check, "tools.") && f.Severity == SevError {
				out = append(out, f)
			}
		}
		return out
	}
	rep, err := Check(ctx, Options{Theme: "demo", SkillDir: dir, Chunks: loadChunks(t), Config: checkCfg(), DeclaredTools: decl})
	if err != nil {
		t.Fatal(err)
	}
	if fs := unrunnable(rep); len(fs) != 0 {
		t.Fatalf("unexpected: %+v", fs)
	}
	// The list gone from the skill: check fails at the declaration's draw.
	if err := os.Remove(filepath.Join(dir, "data", "hexagrams.yaml")); err != nil {
		t.Fatal(err)
	}
	rep, _ = Check(ctx, Options{Theme: "demo", SkillDir: dir, Chunks: loadChunks(t), Config: checkCfg(), DeclaredTools: decl})
	fs := unrunnable(rep)
	if len(fs) != 1 || fs[0].Check != "tools.unrunnable" || fs[0].Line != 6 || !strings.Contains(fs[0].Message, "data/hexagrams.yaml is not in the skill") {
		t.Fatalf("findings %+v", fs)
	}
	// A flow in tools/tools.yaml alone that cannot end: reported there.
	tf := filepath.Join(dir, "tools", "tools.yaml")
	b, _ := os.ReadFile(tf)
	b = append(b, []byte("    - name: quiz\n      type: flow\n      description: loops\n      steps:\n        - {id: a, prompt: Ask A, field: {type: string}, next: a}\n")...)
	if err := os.WriteFile(tf, b, 0o644); err != nil {
		t.Fatal(err)
	}
	rep, _ = Check(ctx, Options{Theme: "demo", SkillDir: dir, Chunks: loadChunks(t), Config: checkCfg()})
	found := false
	for _, f := range unrunnable(rep) {
		found = found || (f.Item == "quiz" && f.File == "tools/tools.yaml" && strings.Contains(f.Message, "can never end"))
	}
	if !found {
		t.Fatalf("no unrunnable finding for the flow:\n%s", textOf(t, rep))
	}
}

func TestNoComputeToolNothingForbidsWorkingItOut(t *testing.T) {
	p := Prose{Forbidden: []string{"不得自行排盘，须调用排盘工具。", zhLabels.say.forbidden[1], "不编造知识库中没有的规则。"}}
	got := dropUnofferedTools(p, ToolsFile{Tools: []skills.Tool{{Name: "show_chart", Type: "display"}}}, zhLabels)
	want := []string{zhLabels.say.noComputeTool, "不编造知识库中没有的规则。"}
	if strings.Join(got.Forbidden, "|") != strings.Join(want, "|") {
		t.Errorf("forbidden %q, want %q", got.Forbidden, want)
	}
	en := Prose{Forbidden: []string{"Never chart by hand.", "Never work the result out yourself.", "Never invent quotations."}}
	if got := dropUnofferedTools(en, ToolsFile{}, enLabels); strings.Join(got.Forbidden, "|") != "Never invent quotations." {
		t.Errorf("forbidden %q", got.Forbidden)
	}
	// With a compute tool offered, the bullets stand.
	tf := ToolsFile{Tools: []skills.Tool{{Name: "calc_x", Type: "compute", Plugin: &skills.Plugin{Command: []string{"x"}}}}}
	if got := dropUnofferedTools(p, tf, zhLabels); len(got.Forbidden) != 3 {
		t.Errorf("forbidden %q", got.Forbidden)
	}
}
