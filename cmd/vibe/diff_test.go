package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestDiffAgainstDirAndGit(t *testing.T) {
	dir := checkWorkspace(t)
	// The other build: a copy of the knowledge before an edit.
	other := filepath.Join(t.TempDir(), "demo")
	os.MkdirAll(filepath.Join(other, "knowledge"), 0o755)
	kdir := filepath.Join(dir, "skills", "demo", "knowledge")
	for _, n := range []string{"sop.yaml", "patterns.yaml", "rules.yaml"} {
		data, _ := os.ReadFile(filepath.Join(kdir, n))
		os.WriteFile(filepath.Join(other, "knowledge", n), data, 0o644)
	}
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

	for _, against := range []string{other, "HEAD"} {
		code, out, errOut := runVibe(t, nil, "-w", dir, "diff", "demo", "--against", against)
		if code != 0 {
			t.Fatalf("--against %s: exit %d: %s", against, code, errOut)
		}
		for _, want := range []string{"added        rule T2_009", "reworded     rule T2_001"} {
			if !strings.Contains(out, want) {
				t.Errorf("--against %s: lacks %q:\n%s", against, want, out)
			}
		}
	}
	code, out, _ := runVibe(t, nil, "-w", dir, "diff", "demo", "--json")
	var changes []map[string]string
	if code != 0 || json.Unmarshal([]byte(out), &changes) != nil || len(changes) != 2 {
		t.Errorf("--json: exit %d, %s", code, out)
	}
	if code, _, _ := runVibe(t, nil, "-w", dir, "diff", "demo", "--against", "no-such-rev"); code != 2 {
		t.Errorf("unknown revision: exit %d, want 2", code)
	}
}
