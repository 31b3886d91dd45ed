package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
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
//
// Under -race the two commands run in a vibe built without it
// (runVibeOffline).
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
		if code, _, errOut := runVibeOffline(t, "-w", dir, "--quiet", "curate", "bazi", "--from", corpus); code != 0 {
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
		if code, _, errOut := runVibeOffline(t, "-w", dir, "--quiet", "build", "bazi"); code != 0 {
			baziErr = "vibe build bazi: " + errOut
		}
	})
	if baziErr != "" {
		t.Fatalf("build the bazi workspace: %s", baziErr)
	}
	return baziDir
}

// runVibeOffline runs vibe offline (no OPENAI_*, DATABASE_URL or VIBE_*
// from the environment) through runVibeUnraced.
func runVibeOffline(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	return runVibeUnraced(t, offlineEnv, args...)
}

// runVibeUnraced runs vibe with env as its whole environment of settings.
// Under -race it runs a vibe built without it (vibeChild, given env besides
// HOME, PATH and TMPDIR): the bazi build, its check and eval, curating the
// corpus and the replayed LLM build are single-threaded work over whole
// books in the pure-Go SQLite and the WebAssembly PDFium, which the detector
// slows many times and where it has nothing to find; the same code runs
// under it in the other tests (the demo theme, the extract and convert
// packages).
func runVibeUnraced(t *testing.T, env map[string]string, args ...string) (int, string, string) {
	t.Helper()
	if !raceEnabled {
		return runVibe(t, env, args...)
	}
	cmd := vibeChild(t, args...)
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0, stdout.String(), stderr.String()
	case errors.As(err, &exit):
		return exit.ExitCode(), stdout.String(), stderr.String()
	default:
		return -1, stdout.String(), err.Error()
	}
}
