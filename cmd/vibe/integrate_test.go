package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

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
	if code, out, _ := runVibe(t, nil, "-w", dir, "check", "demo", "--strict"); code != 0 {
		t.Fatalf("check --strict after merging: exit %d\n%s", code, out)
	}

	// Changed by hand but not merged: the check warns at the declaration.
	os.WriteFile(decl, []byte(strings.Replace(string(data), "timeout: 5s", "timeout: 9s", 1)), 0o644)
	code, out, _ := runVibe(t, nil, "-w", dir, "check", "demo", "--strict")
	if code != 1 || !strings.Contains(out, "knowledge/demo/tools.yaml:3:") || !strings.Contains(out, "tools.stale") {
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
