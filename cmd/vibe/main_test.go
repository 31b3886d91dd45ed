package main

import (
	"context"
	"encoding/json"
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

// vibe config says where each value came from, validates the values with a
// message naming the key, the file and the allowed values, prints YAML keys
// in --json, and announces a DATABASE_URL that moves vibe to PostgreSQL.
func TestConfigSourcesValidationAndJSON(t *testing.T) {
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "vibe.yaml")
	if err := os.WriteFile(cfgPath, []byte("chunk:\n  max_tokens: 256\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runVibe(t, map[string]string{"VIBE_LLM_MODEL": "m1"}, "--workspace", dir, "config")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{
		"max_tokens: 256 # " + cfgPath + ":2",
		"model: m1 # env VIBE_LLM_MODEL",
		"overlap: 64 # default",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("config output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(errOut, "DATABASE_URL") {
		t.Errorf("DATABASE_URL announced without one: %s", errOut)
	}

	code, out, errOut = runVibe(t, map[string]string{"DATABASE_URL": "postgres://u:pw@db.example/vibe"}, "--workspace", dir, "config", "--json")
	if code != 0 {
		t.Fatalf("--json exit %d: %s", code, errOut)
	}
	var m map[string]map[string]any
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatalf("--json is not JSON: %v\n%s", err, out)
	}
	if m["store"]["database_url"] != "postgres://u:<redacted>@db.example/vibe" || m["chunk"]["max_tokens"] != 256.0 || m["llm"]["timeout"] != "2m0s" {
		t.Errorf("--json lacks the YAML keys or values: %v", m)
	}
	if strings.Contains(out, "DatabaseURL") || strings.Contains(out, "MaxTokens") {
		t.Errorf("--json prints Go field names:\n%s", out)
	}
	for _, want := range []string{"DATABASE_URL is set", "PostgreSQL", "VIBE_STORE_DRIVER=sqlite", "u:<redacted>@db.example"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q: %s", want, errOut)
		}
	}
	// An explicit VIBE_STORE_DRIVER keeps the store: nothing to announce.
	_, _, errOut = runVibe(t, map[string]string{"DATABASE_URL": "postgres://x", "VIBE_STORE_DRIVER": "sqlite"}, "--workspace", dir, "config")
	if strings.Contains(errOut, "DATABASE_URL") {
		t.Errorf("announced although VIBE_STORE_DRIVER chose sqlite: %s", errOut)
	}

	for _, tt := range []struct {
		name, file string
		env        map[string]string
		want       []string
	}{
		{"file", "llm:\n  provider: offlin\n", nil, []string{cfgPath + ":2", `llm.provider "offlin"`, "offline, openai"}},
		{"env", "", map[string]string{"VIBE_STORE_DRIVER": "mysql"}, []string{"env VIBE_STORE_DRIVER", `store.driver "mysql"`, "sqlite, postgres"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if err := os.WriteFile(cfgPath, []byte(tt.file), 0o644); err != nil {
				t.Fatal(err)
			}
			// Every command refuses the bad value, not only config.
			for _, args := range [][]string{{"config"}, {"search", "demo", "tea"}} {
				code, _, errOut := runVibe(t, tt.env, append([]string{"--workspace", dir}, args...)...)
				if code != exitError {
					t.Errorf("%v: exit %d, want %d: %s", args, code, exitError, errOut)
				}
				for _, w := range append(tt.want, "hint:") {
					if !strings.Contains(errOut, w) {
						t.Errorf("%v: stderr lacks %q: %s", args, w, errOut)
					}
				}
			}
		})
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
