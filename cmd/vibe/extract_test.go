package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vibelife/vibe/knowledge/schema"
	"github.com/vibelife/vibe/llm/llmtest"
)

const extractSample = `---
source: knowledge/bazi/source/sample.txt
title: 样书
---
# 论用神

凡日主衰弱，则宜印比扶身。若财多身弱，必忌再行财运。然身旺财衰，反喜财运。

正官格者，月令正官，不见伤官也。

## 看命之法

1. 先排四柱八字。
2. 次看月令司权。

若见枭神夺食，大凶，须防灾祸。
`

func extractWorkspace(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	conv := filepath.Join(dir, "knowledge", "bazi", "converted")
	if err := os.MkdirAll(conv, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(conv, "sample.md"), []byte(extractSample), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := runVibe(t, nil, "--workspace", dir, "ingest", "bazi"); code != 0 {
		t.Fatalf("ingest exit %d: %s", code, errOut)
	}
	return dir
}

func TestExtractOffline(t *testing.T) {
	dir := extractWorkspace(t)
	code, out, errOut := runVibe(t, nil, "--workspace", dir, "extract", "bazi", "--llm", "offline")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, "offline-heuristic/1") || !strings.Contains(out, "wrote sop.yaml, patterns.yaml, rules.yaml") {
		t.Errorf("output:\n%s", out)
	}
	for _, kind := range []string{schema.SOP, schema.Patterns, schema.Rules} {
		data, err := os.ReadFile(filepath.Join(dir, "skills", "bazi", "knowledge", kind+".yaml"))
		if err != nil {
			t.Fatal(err)
		}
		probs, err := schema.ValidateYAML(kind, data)
		if err != nil || len(probs) > 0 {
			t.Errorf("%s.yaml: %v %v", kind, err, probs)
		}
	}
	rules, _ := os.ReadFile(filepath.Join(dir, "skills", "bazi", "knowledge", "rules.yaml"))
	if !strings.Contains(string(rules), "凡日主衰弱") {
		t.Errorf("rules.yaml lacks the sample's rule:\n%s", rules)
	}
	code, out, _ = runVibe(t, nil, "--workspace", dir, "extract", "bazi")
	if code != 0 || !strings.Contains(out, "unchanged") {
		t.Errorf("rebuild exit %d:\n%s", code, out)
	}
}

func TestExtractLLMCacheAndDryRun(t *testing.T) {
	dir := extractWorkspace(t)
	srv := llmtest.New(t)
	srv.SetFallback(func(llmtest.Request) llmtest.Reply {
		return llmtest.Text(`{"rules":[],"patterns":[],"red_flags":[],"steps":[]}`)
	})
	env := map[string]string{"OPENAI_BASE_URL": srv.URL, "OPENAI_API_KEY": "k"}
	code, out, errOut := runVibe(t, env, "--workspace", dir, "extract", "bazi", "--dry-run")
	if code != 0 || srv.Count() != 0 || !strings.Contains(out, "dry run") {
		t.Fatalf("dry run exit %d, %d requests sent:\n%s%s", code, srv.Count(), out, errOut)
	}
	code, out, errOut = runVibe(t, env, "--workspace", dir, "extract", "bazi")
	if code != 0 || srv.Count() == 0 || !strings.Contains(out, "llm:") {
		t.Fatalf("exit %d, %d requests:\n%s%s", code, srv.Count(), out, errOut)
	}
	sent := srv.Count()
	code, _, errOut = runVibe(t, env, "--workspace", dir, "extract", "bazi")
	if code != 0 || srv.Count() != sent {
		t.Errorf("unchanged rebuild: exit %d, %d new requests: %s", code, srv.Count()-sent, errOut)
	}
}

func TestSchemaCmd(t *testing.T) {
	tests := []struct {
		args     []string
		wantCode int
		want     string
	}{
		{[]string{"schema", "rules"}, 0, "tier1_must_know"},
		{[]string{"schema", "tools"}, 0, "retrieve"},
		{[]string{"schema", "nope"}, 2, ""},
	}
	for _, tt := range tests {
		code, out, _ := runVibe(t, nil, tt.args...)
		if code != tt.wantCode || !strings.Contains(out, tt.want) {
			t.Errorf("%v: exit %d, out %.80q", tt.args, code, out)
		}
	}
}
