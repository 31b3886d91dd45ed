package main

import (
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/vibelife/vibe/internal/testcorpus"
)

var (
	baziOnce sync.Once
	baziDir  string
	baziErr  string
)

// baziWorkspace builds, once per test binary and offline, the bazi theme
// from the five classics of ../shared/corpus/bazi with the shipped glossary
// and eval file (examples/bazi): what a user gets from `vibe curate bazi
// --from …` and `vibe build bazi`. Tests must not change it; copy it with
// copyWorkspace to change it.
func baziWorkspace(t *testing.T) string {
	t.Helper()
	corpus := testcorpus.Dir(t, "bazi")
	baziOnce.Do(func() {
		dir, err := os.MkdirTemp("", "vibe-bazi-")
		if err != nil {
			baziErr = err.Error()
			return
		}
		baziDir = dir
		env := map[string]string{"VIBE_LLM_PROVIDER": "offline"}
		if code, _, errOut := runVibe(t, env, "-w", dir, "--quiet", "curate", "bazi", "--from", corpus); code != 0 {
			baziErr = "vibe curate bazi: " + errOut
			return
		}
		for _, f := range []string{"glossary.yaml", "eval.yaml"} {
			b, err := os.ReadFile(filepath.Join("..", "..", "examples", "bazi", f))
			if err == nil {
				err = os.WriteFile(filepath.Join(dir, "knowledge", "bazi", f), b, 0o644)
			}
			if err != nil {
				baziErr = err.Error()
				return
			}
		}
		if code, _, errOut := runVibe(t, env, "-w", dir, "--quiet", "build", "bazi"); code != 0 {
			baziErr = "vibe build bazi: " + errOut
		}
	})
	if baziErr != "" {
		t.Fatalf("build the bazi workspace: %s", baziErr)
	}
	return baziDir
}
