package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/vibelife/vibe/chunk"
	"github.com/vibelife/vibe/integrate"
	"github.com/vibelife/vibe/knowledge"
	"github.com/vibelife/vibe/knowledge/sqlite"
	"github.com/vibelife/vibe/llm/llmtest"
	"github.com/vibelife/vibe/skills"
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

// Exit status 2: the check could not run, and says why.
func TestCheckCannotRunExitsTwo(t *testing.T) {
	dir := checkWorkspace(t)
	if code, _, errOut := runVibe(t, nil, "-w", dir, "integrate", "demo"); code != 0 {
		t.Fatalf("integrate exit %d: %s", code, errOut)
	}
	db := filepath.Join(dir, ".vibe", "vibe.db")
	tests := []struct {
		name  string
		setup func()
		args  []string
		want  string
	}{
		{"output cannot be written", func() {}, []string{"--format", "sarif", "--output", filepath.Join(dir, "no", "such", "dir", "x.sarif")}, "--output"},
		{"store without the theme's sources", func() { os.Remove(db) }, nil, "vibe ingest demo"},
		{"corrupt store", func() { os.WriteFile(db, []byte("not a database"), 0o644) }, nil, "store"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.setup()
			code, out, errOut := runVibe(t, nil, append([]string{"-w", dir, "check", "demo"}, tt.args...)...)
			if code != 2 || !strings.Contains(errOut, tt.want) {
				t.Errorf("exit %d, want 2 with %q:\n%s%s", code, tt.want, out, errOut)
			}
		})
	}
}

// The thresholds come from vibe.yaml (and the environment).
func TestCheckThresholdsFromVibeYAML(t *testing.T) {
	dir := checkWorkspace(t)
	if code, _, errOut := runVibe(t, nil, "-w", dir, "integrate", "demo"); code != 0 {
		t.Fatalf("integrate exit %d: %s", code, errOut)
	}
	if code, out, _ := runVibe(t, nil, "-w", dir, "check", "demo"); code != 0 {
		t.Fatalf("default thresholds: exit %d\n%s", code, out)
	}
	os.WriteFile(filepath.Join(dir, "vibe.yaml"), []byte("check:\n  min_lexical_support: 1.01\n  min_embedding_support: 1.1\n  max_skill_tokens: 50\n"), 0o644)
	code, out, _ := runVibe(t, nil, "-w", dir, "check", "demo")
	if code != 1 || !strings.Contains(out, "grounding.weak-support") || !strings.Contains(out, "< 1.01") || !strings.Contains(out, "size.skill-tokens") {
		t.Errorf("strict thresholds from vibe.yaml: exit %d\n%s", code, out)
	}
	// The environment overrides the file.
	env := map[string]string{"VIBE_CHECK_MIN_LEXICAL_SUPPORT": "0.1", "VIBE_CHECK_MIN_EMBEDDING_SUPPORT": "0.1", "VIBE_CHECK_MAX_SKILL_TOKENS": "3000"}
	if code, out, _ := runVibe(t, env, "-w", dir, "check", "demo"); code != 0 {
		t.Errorf("thresholds from the environment: exit %d\n%s", code, out)
	}
}

// Without a store (a fresh clone, CI) check ingests the converted sources
// itself and then checks, with the same verdict as after a build; the
// summary counts every note, the possible missing rules among them.
func TestCheckWithoutStoreIngestsFirst(t *testing.T) {
	dir := t.TempDir()
	books := filepath.Join(dir, "books")
	if err := os.MkdirAll(books, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"green-tea.md", "oolong.html"} {
		data, err := os.ReadFile(filepath.Join("..", "..", "examples", "demo", n))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(books, n), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	env := map[string]string{"VIBE_LLM_PROVIDER": "offline"}
	if code, _, errOut := runVibe(t, env, "-w", dir, "--quiet", "curate", "demo", "--from", books); code != 0 {
		t.Fatalf("curate exit %d: %s", code, errOut)
	}
	if code, _, errOut := runVibe(t, env, "-w", dir, "--quiet", "build", "demo"); code != 0 {
		t.Fatalf("build exit %d: %s", code, errOut)
	}
	wantCode, _, errOut := runVibe(t, env, "-w", dir, "check", "demo", "--format", "json")
	if wantCode == exitError {
		t.Fatalf("check after build could not run: %s", errOut)
	}
	if err := os.Remove(filepath.Join(dir, ".vibe", "vibe.db")); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runVibe(t, env, "-w", dir, "check", "demo", "--format", "json")
	if code != wantCode {
		t.Fatalf("check without a store: exit %d, want %d as after the build:\n%s", code, wantCode, errOut)
	}
	if !strings.Contains(errOut, "ingesting knowledge/demo/converted first") {
		t.Errorf("the ingest is not announced:\n%s", errOut)
	}
	var rep integrate.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("stdout is not the JSON report (ingest progress leaked into it?): %v\n%.500s", err, out)
	}
	if rep.Summary.Notes < rep.Summary.Uncovered {
		t.Errorf("summary: %d notes but %d uncovered passages", rep.Summary.Notes, rep.Summary.Uncovered)
	}
	line := integrate.SummaryLine(rep)
	if !strings.Contains(line, strconv.Itoa(rep.Summary.Notes)+" notes") {
		t.Errorf("summary line %q does not count the %d notes", line, rep.Summary.Notes)
	}

	// No converted sources either: the exact command to run.
	if err := os.RemoveAll(filepath.Join(dir, "knowledge", "demo", "converted")); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(dir, ".vibe", "vibe.db"))
	code, _, errOut = runVibe(t, env, "-w", dir, "check", "demo")
	if code != exitError || !strings.Contains(errOut, "run `vibe ingest demo` (or vibe build demo) first") {
		t.Errorf("exit %d, want %d naming the command:\n%s", code, exitError, errOut)
	}
}

// TestCheckFailsOnAToolThatCannotRun: a declared tool the runtime could not
// run fails vibe check with the fix: a generated compute tool without a
// plugin (issue 13's calculate_bazi) and a flow tool without steps.
func TestCheckFailsOnAToolThatCannotRun(t *testing.T) {
	dir := checkWorkspace(t)
	if code, _, errOut := runVibe(t, nil, "-w", dir, "integrate", "demo"); code != 0 {
		t.Fatalf("integrate exit %d: %s", code, errOut)
	}
	tf := filepath.Join(dir, "skills", "demo", "tools", "tools.yaml")
	data, _ := os.ReadFile(tf)
	var tools integrate.ToolsFile
	if err := yaml.Unmarshal(data, &tools); err != nil {
		t.Fatal(err)
	}
	tools.Tools = append(tools.Tools,
		skills.Tool{Name: "calculate_bazi", Type: "compute", Description: "排盘", Parameters: []skills.Field{{Name: "input", Type: "object"}}},
		skills.Tool{Name: "questionnaire", Type: "flow", Description: "问卷"})
	data, _ = yaml.Marshal(tools)
	if err := os.WriteFile(tf, data, 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runVibe(t, nil, "-w", dir, "check", "demo")
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s%s", code, out, errOut)
	}
	for _, want := range []string{
		"error VIBE007 tools.no-plugin [calculate_bazi]: plugin: compute tool calculate_bazi has no plugin, so the agent cannot run it: give it plugin:",
		"error VIBE007 tools.unrunnable [questionnaire]: steps: flow tool questionnaire has no steps",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("check output lacks %q:\n%s", want, out)
		}
	}
}
