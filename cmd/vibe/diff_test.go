package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vibelife/vibe/integrate"
)

func TestDiffAgainstDirAndGit(t *testing.T) {
	dir := checkWorkspace(t)
	tools := filepath.Join(dir, "skills", "demo", "tools", "tools.yaml")
	os.MkdirAll(filepath.Dir(tools), 0o755)
	toolsDoc := "tools:\n  - name: calc_strength\n    type: compute\n    description: 计算日主旺衰\n    parameters:\n      - {name: pillars, type: array, required: true}\n    plugin: {command: [bazi-strength], timeout: 5s}\n  - name: show_chart\n    type: display\n    description: 展示命盘\n    card_type: chart_card\n"
	os.WriteFile(tools, []byte(toolsDoc), 0o644)
	// The other build: a copy of the knowledge and the tools before an edit.
	other := filepath.Join(t.TempDir(), "demo")
	for _, n := range integrate.SnapshotFiles {
		data, _ := os.ReadFile(filepath.Join(dir, "skills", "demo", n))
		os.MkdirAll(filepath.Dir(filepath.Join(other, n)), 0o755)
		os.WriteFile(filepath.Join(other, n), data, 0o644)
	}
	kdir := filepath.Join(dir, "skills", "demo", "knowledge")
	git := func(args ...string) {
		c := exec.Command("git", args...)
		c.Dir = dir
		c.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.org", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.org")
		if out, err := c.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q")
	git("add", "skills")
	git("commit", "-qm", "build 1")

	p := filepath.Join(kdir, "rules.yaml")
	data, _ := os.ReadFile(p)
	edited := strings.Replace(string(data), "  tier2_core:\n", "  tier2_core:\n    - id: T2_009\n      condition: 新规则\n      conclusion: 新结论\n      confidence: low\n      source: ziping.md\n      evidence:\n        - chunk: demo-c1\n          quote: 出生时辰须先定准\n", 1)
	edited = strings.Replace(edited, "conclusion: 必以比劫为用", "conclusion: 必以比肩为用", 1)
	os.WriteFile(p, []byte(edited), 0o644)
	toolsDoc = strings.Replace(toolsDoc, "timeout: 5s", "timeout: 9s", 1)
	toolsDoc = strings.Replace(toolsDoc, "type: array, required: true}", "type: array, required: true}\n      - {name: gender, type: string}", 1)
	os.WriteFile(tools, []byte(toolsDoc+"  - name: ask_birth\n    type: collect\n    description: 询问出生时间\n"), 0o644)

	// Against a skill directory, its knowledge/ (tools read beside it) and a revision.
	for _, against := range []string{other, filepath.Join(other, "knowledge"), "HEAD"} {
		code, out, errOut := runVibe(t, nil, "-w", dir, "diff", "demo", "--against", against)
		if code != 0 {
			t.Fatalf("--against %s: exit %d: %s", against, code, errOut)
		}
		for _, want := range []string{"added        rule T2_009", "reworded     rule T2_001", "added        tool ask_birth (collect): 询问出生时间",
			"tool-changed tool calc_strength: parameters +gender string; plugin command [bazi-strength], timeout 5s -> command [bazi-strength], timeout 9s"} {
			if !strings.Contains(out, want) {
				t.Errorf("--against %s: lacks %q:\n%s", against, want, out)
			}
		}
	}
	code, out, _ := runVibe(t, nil, "-w", dir, "diff", "demo", "--json")
	var changes []integrate.Change
	if code != 0 || json.Unmarshal([]byte(out), &changes) != nil || len(changes) != 4 {
		t.Fatalf("--json: exit %d, %s", code, out)
	}
	if c := changes[3]; c.Kind != "tool-changed" || c.Area != "tool" || c.Item != "calc_strength" || strings.Join(c.Fields, ",") != "parameters,plugin" {
		t.Errorf("--json tool change: %+v", c)
	}
	if code, _, _ := runVibe(t, nil, "-w", dir, "diff", "demo", "--against", "no-such-rev"); code != 2 {
		t.Errorf("unknown revision: exit %d, want 2", code)
	}
}
