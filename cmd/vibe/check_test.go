package main

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/vibelife/vibe/chunk"
	"github.com/vibelife/vibe/knowledge"
	"github.com/vibelife/vibe/knowledge/sqlite"
	"github.com/vibelife/vibe/llm/llmtest"
)

// checkWorkspace builds a workspace holding the integrate clean fixture's
// knowledge and its chunks in the embedded store.
func checkWorkspace(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	kdir := filepath.Join(dir, "skills", "demo", "knowledge")
	if err := os.MkdirAll(kdir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"sop.yaml", "patterns.yaml", "rules.yaml"} {
		data, err := os.ReadFile(filepath.Join("..", "..", "integrate", "testdata", "clean", "knowledge", n))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(kdir, n), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	data, err := os.ReadFile(filepath.Join("..", "..", "integrate", "testdata", "chunks.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var chunks []chunk.Chunk
	if err := yaml.Unmarshal(data, &chunks); err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(dir, ".vibe"), 0o755)
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(dir, ".vibe", "vibe.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.ReplaceDocument(ctx, knowledge.Document{ID: "ziping", Theme: "demo", Source: "ziping.md", Chunks: len(chunks)}, chunks, nil, knowledge.EmbeddingInfo{}); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestCheckExitStatuses(t *testing.T) {
	dir := checkWorkspace(t)
	if code, _, errOut := runVibe(t, nil, "-w", dir, "integrate", "demo"); code != 0 {
		t.Fatalf("integrate exit %d: %s", code, errOut)
	}
	code, out, errOut := runVibe(t, nil, "-w", dir, "check", "demo", "--format", "sarif")
	if code != 0 {
		t.Fatalf("check of a fresh build: exit %d\n%s%s", code, out, errOut)
	}
	if !strings.Contains(out, `"version": "2.1.0"`) {
		t.Errorf("not SARIF: %s", out)
	}

	// Hand-edit a rule's conclusion into something its source does not say.
	p := filepath.Join(dir, "skills", "demo", "knowledge", "rules.yaml")
	data, _ := os.ReadFile(p)
	edited := strings.Replace(string(data), "conclusion: the chart should be drained by output stars", "conclusion: marriage will be happy within a year", 1)
	if edited == string(data) {
		t.Fatal("fixture changed")
	}
	os.WriteFile(p, []byte(edited), 0o644)
	line := 0
	for i, l := range strings.Split(edited, "\n") {
		if strings.Contains(l, "marriage will be happy") {
			line = i + 1
		}
	}
	code, out, _ = runVibe(t, nil, "-w", dir, "check", "demo")
	if code != 1 {
		t.Fatalf("check after a drifted edit: exit %d, want 1\n%s", code, out)
	}
	want := "skills/demo/knowledge/rules.yaml:" + strconv.Itoa(line) + ":"
	if !strings.Contains(out, want) || !strings.Contains(out, "T2_002") {
		t.Errorf("report does not name T2_002 at %s:\n%s", want, out)
	}
	code, out, _ = runVibe(t, nil, "-w", dir, "check", "demo", "--format", "github")
	if code != 1 || !strings.Contains(out, "::error file=skills/demo/knowledge/rules.yaml,line="+strconv.Itoa(line)) {
		t.Errorf("github format: exit %d\n%s", code, out)
	}

	for _, tt := range []struct {
		name string
		args []string
	}{
		{"unknown format", []string{"check", "demo", "--format", "xml"}},
		{"no such skill", []string{"check", "nosuch"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if code, _, errOut := runVibe(t, nil, append([]string{"-w", dir}, tt.args...)...); code != 2 {
				t.Errorf("exit %d, want 2: %s", code, errOut)
			}
		})
	}
}

func TestCheckJudgeAsksTheModelOnceAndCachesTheVerdict(t *testing.T) {
	dir := checkWorkspace(t)
	if code, _, errOut := runVibe(t, nil, "-w", dir, "integrate", "demo"); code != 0 {
		t.Fatalf("integrate exit %d: %s", code, errOut)
	}
	p := filepath.Join(dir, "skills", "demo", "knowledge", "rules.yaml")
	data, _ := os.ReadFile(p)
	os.WriteFile(p, []byte(strings.Replace(string(data), "conclusion: the chart should be drained by output stars", "conclusion: marriage will be happy within a year", 1)), 0o644)

	srv := llmtest.New(t)
	srv.SetFallback(func(llmtest.Request) llmtest.Reply {
		return llmtest.JSON(map[string]any{"supported": false, "reason": "the passage says nothing about marriage"})
	})
	env := map[string]string{"OPENAI_BASE_URL": srv.URL, "OPENAI_API_KEY": "sk-test"}
	code, out, errOut := runVibe(t, env, "-w", dir, "check", "demo", "--judge")
	if code != 1 || !strings.Contains(out, "T2_002") {
		t.Fatalf("--judge with a 'not supported' verdict: exit %d\n%s%s", code, out, errOut)
	}
	asked := srv.Count()
	if asked == 0 {
		t.Fatal("the judge never asked the model")
	}
	if code, _, _ := runVibe(t, env, "-w", dir, "check", "demo", "--judge"); code != 1 || srv.Count() != asked {
		t.Fatalf("a second check should reuse the cached verdict: exit %d, %d new requests", code, srv.Count()-asked)
	}
	if code, _, errOut := runVibe(t, nil, "-w", dir, "check", "demo", "--judge"); code != 2 || !strings.Contains(errOut, "LLM endpoint") {
		t.Fatalf("--judge without an endpoint: exit %d %q", code, errOut)
	}
}
