package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vibelife/vibe/internal/iostreams"
)

// runVibe runs the CLI in-process with the given environment and returns the
// exit status, stdout and stderr.
func runVibe(t *testing.T, env map[string]string, args ...string) (int, string, string) {
	t.Helper()
	ios, _, out, errOut := iostreams.Test()
	code := run(context.Background(), ios, args, func(k string) string { return env[k] })
	return code, out.String(), errOut.String()
}

func TestHelpListsStagesAndExamples(t *testing.T) {
	code, out, _ := runVibe(t, nil, "--help")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{"curate", "convert", "Examples:", "--workspace"} {
		if !strings.Contains(out, want) {
			t.Errorf("--help lacks %q", want)
		}
	}
}

func TestEverySubcommandHasExamples(t *testing.T) {
	a := &app{getenv: func(string) string { return "" }}
	ios, _, _, _ := iostreams.Test()
	a.io = ios
	root := newRootCmd(a)
	for _, c := range root.Commands() {
		if c.Name() == "help" || c.Name() == "completion" {
			continue
		}
		if c.Example == "" {
			t.Errorf("vibe %s --help has no examples", c.Name())
		}
		if c.Short == "" {
			t.Errorf("vibe %s has no short description", c.Name())
		}
	}
}

func TestConfigShowsLayersAndRedacts(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "vibe.yaml"), []byte("chunk:\n  max_tokens: 256\n"), 0o644)
	code, out, errOut := runVibe(t, map[string]string{
		"OPENAI_API_KEY": "sk-secret",
		"DATABASE_URL":   "postgres://u:pw@localhost/db",
	}, "--workspace", dir, "config")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if strings.Contains(out, "sk-secret") || strings.Contains(out, ":pw@") {
		t.Fatalf("secret printed:\n%s", out)
	}
	for _, want := range []string{"max_tokens: 256", "driver: postgres", "u:<redacted>@"} {
		if !strings.Contains(out, want) {
			t.Errorf("config output lacks %q:\n%s", want, out)
		}
	}
}

func TestConfigKeysNameEnvVars(t *testing.T) {
	code, out, _ := runVibe(t, nil, "config", "--keys")
	if code != 0 || !strings.Contains(out, "VIBE_LLM_MODEL") || !strings.Contains(out, "VIBE_STORE_DRIVER") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
}

func TestUsageErrorsExitTwo(t *testing.T) {
	code, _, errOut := runVibe(t, nil, "no-such-command")
	if code != exitError || !strings.Contains(errOut, "--help") {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	code, _, errOut = runVibe(t, nil, "--workspace", "/does/not/exist", "config")
	if code != exitFailure || !strings.Contains(errOut, "/does/not/exist") {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
}
