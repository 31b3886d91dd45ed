package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vibelife/vibe/llm/llmtest"
	"github.com/vibelife/vibe/skills"
)

// A knowledge engineer declares the theme's own tools in
// knowledge/<theme>/tools.yaml; integrate merges them into the skill's
// tools/tools.yaml the runtime reads, and check holds the two in step.
func TestIntegrateMergesDeclaredTools(t *testing.T) {
	dir := checkWorkspace(t)
	decl := filepath.Join(dir, "knowledge", "demo", "tools.yaml")
	if err := os.MkdirAll(filepath.Dir(decl), 0o755); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join("..", "..", "integrate", "testdata", "declared", "tools.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(decl, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := runVibe(t, nil, "-w", dir, "integrate", "demo"); code != 0 {
		t.Fatalf("integrate exit %d: %s", code, errOut)
	}
	sk, err := skills.LoadFS(os.DirFS(filepath.Join(dir, "skills", "demo")), "demo", "demo")
	if err != nil {
		t.Fatal(err)
	}
	calc, ok := sk.Tool("calc_strength")
	if !ok || calc.Plugin == nil || calc.Plugin.Command[0] != "bazi-strength" {
		t.Fatalf("the declared plugin did not reach tools/tools.yaml: %+v", calc)
	}
	if _, ok := sk.Tool("show_strength"); !ok {
		t.Fatal("a declared tool no SOP step calls is missing from tools/tools.yaml")
	}
	// In step; the plugin's program (a bare name) is not installed here,
	// which is only a warning: the server may have it.
	code, out, _ := runVibe(t, nil, "-w", dir, "check", "demo")
	if code != 0 || strings.Contains(out, "tools.stale") || strings.Contains(out, "tools.no-plugin") || strings.Contains(out, "tool-missing") ||
		!strings.Contains(out, "knowledge/demo/tools.yaml:11:16: warning VIBE007 tools.plugin-missing [calc_strength]: tool calc_strength: plugin command bazi-strength is not in PATH here") {
		t.Fatalf("check after merging: exit %d\n%s", code, out)
	}
	// A relative command is looked for under the workspace root, as vibe serve runs it.
	rel := strings.Replace(string(data), "command: [bazi-strength, --json]", "command: [plugins/strength, --json]", 1)
	os.WriteFile(decl, []byte(rel), 0o644)
	if code, _, errOut := runVibe(t, nil, "-w", dir, "integrate", "demo"); code != 1 || !strings.Contains(errOut, "knowledge/demo/tools.yaml:11:16: error VIBE007 tools.plugin-missing: tool calc_strength: plugin command plugins/strength is not in the workspace (plugins/strength)") {
		t.Fatalf("integrate with a missing relative plugin: exit %d\n%s", code, errOut)
	}
	os.MkdirAll(filepath.Join(dir, "plugins"), 0o755)
	os.WriteFile(filepath.Join(dir, "plugins", "strength"), []byte("#!/bin/sh\n"), 0o755)
	if code, out, _ := runVibe(t, nil, "-w", dir, "check", "demo"); code != 0 || strings.Contains(out, "tools.") {
		t.Fatalf("check with the plugin in place: exit %d\n%s", code, out)
	}
	os.WriteFile(decl, data, 0o644)
	if code, _, errOut := runVibe(t, nil, "-w", dir, "integrate", "demo"); code != 0 {
		t.Fatalf("integrate exit %d: %s", code, errOut)
	}

	// Changed by hand but not merged: the check warns at the declaration.
	os.WriteFile(decl, []byte(strings.Replace(string(data), "timeout: 5s", "timeout: 9s", 1)), 0o644)
	code, out, _ = runVibe(t, nil, "-w", dir, "check", "demo", "--strict")
	if code != 1 || !strings.Contains(out, "knowledge/demo/tools.yaml:3:") || !strings.Contains(out, "warning VIBE008 tools.stale") {
		t.Fatalf("stale declaration: exit %d\n%s", code, out)
	}

	// A broken declaration stops integrate with the file, line and column.
	os.WriteFile(decl, []byte("tools:\n  - name: calc_strength\n    type: calculator\n    description: x\n"), 0o644)
	code, _, errOut := runVibe(t, nil, "-w", dir, "integrate", "demo")
	if code == 0 || !strings.Contains(errOut, "knowledge/demo/tools.yaml:3:11:") {
		t.Fatalf("broken declaration: exit %d\n%s", code, errOut)
	}
	code, out, _ = runVibe(t, nil, "-w", dir, "check", "demo")
	if code != 1 || !strings.Contains(out, "knowledge/demo/tools.yaml:3:11: error VIBE001") {
		t.Fatalf("check of a broken declaration: exit %d\n%s", code, out)
	}
}

// With an LLM configured the model writes the SKILL.md prose; the answer is
// cached, so a rebuild of unchanged knowledge asks nothing.
func TestIntegrateProseFromTheModel(t *testing.T) {
	dir := checkWorkspace(t)
	srv := llmtest.New(t)
	srv.SetFallback(func(r llmtest.Request) llmtest.Reply {
		if r.SchemaName() == "glossary" {
			return llmtest.JSON(map[string]any{"terms": []any{}})
		}
		if r.SchemaName() != "skill_prose" {
			return llmtest.Status(400, "unexpected request")
		}
		return llmtest.JSON(map[string]any{
			"display_name": "子平八字", "description": "依子平法判断日主旺衰；用户问八字时使用。",
			"identity": "你是精通子平法的命理师。", "scope": []string{"日主旺衰"}, "style": []string{"先结论后依据"},
			"forbidden": []string{"不编造引文"},
		})
	})
	env := map[string]string{"OPENAI_BASE_URL": srv.URL, "OPENAI_API_KEY": "sk-test"}
	code, _, errOut := runVibe(t, env, "-w", dir, "integrate", "demo")
	if code != 0 || !strings.Contains(errOut, "prose written by") {
		t.Fatalf("integrate exit %d:\n%s", code, errOut)
	}
	md, _ := os.ReadFile(filepath.Join(dir, "skills", "demo", "SKILL.md"))
	if !strings.Contains(string(md), "你是精通子平法的命理师。") || !strings.Contains(string(md), "display_name: 子平八字") {
		t.Fatalf("SKILL.md does not carry the model's prose:\n%s", md)
	}
	asked := srv.Count()
	if code, _, errOut := runVibe(t, env, "-w", dir, "integrate", "demo"); code != 0 || srv.Count() != asked {
		t.Fatalf("rebuild: exit %d, %d new requests\n%s", code, srv.Count()-asked, errOut)
	}
	// Offline the same workspace gets the template, and says so.
	code, _, errOut = runVibe(t, nil, "-w", dir, "integrate", "demo", "--regenerate")
	if code != 0 || !strings.Contains(errOut, "offline template") {
		t.Fatalf("offline integrate: exit %d\n%s", code, errOut)
	}
}
