package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/vibelife/vibe/extract"
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
	if !strings.Contains(out, extract.OfflineExtractor) || !strings.Contains(out, "wrote sop.yaml, patterns.yaml, rules.yaml") {
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

var (
	fakeChunkRe   = regexp.MustCompile(`(?m)^\[#(\d+)\]\n`)
	fakeCandRe    = regexp.MustCompile(`(?m)^([cgm]\d+) (rule|pattern|red_flag)`)
	fakeListRe    = regexp.MustCompile(`(?m)^(m\d+) \| (tier[123]|pattern|critical|warning|notice) `)
	fakeSupportRe = regexp.MustCompile(`(?m)^m\d+`)
)

// fakeExtractModel answers each pass of the LLM extraction: a rule quoting
// the first sentence with a comma of every chunk (cut at it), every candidate kept as it is, every
// reviewed item kept (the tiers are filled from the reduce), a five-phase SOP.
func fakeExtractModel(r llmtest.Request) llmtest.Reply {
	msg := ""
	for _, m := range r.Messages {
		if m.Role == "user" {
			msg = m.Content
			break
		}
	}
	switch r.SchemaName() {
	case "extract_map", "extract_gap":
		rules := []any{}
		locs := fakeChunkRe.FindAllStringSubmatchIndex(msg, -1)
		for i, m := range locs {
			end := len(msg)
			if i+1 < len(locs) {
				end = locs[i+1][0]
			}
			for _, line := range strings.Split(msg[m[1]:end], "\n") {
				quote, _, _ := strings.Cut(line, "。")
				if cond, concl, ok := strings.Cut(quote, "，"); ok {
					rules = append(rules, map[string]string{"tier": "tier2", "condition": cond, "conclusion": concl, "chunk": msg[m[2]:m[3]], "quote": quote})
					break
				}
			}
		}
		return llmtest.JSON(map[string]any{"rules": rules, "patterns": []any{}, "red_flags": []any{}, "steps": []any{}})
	case "extract_reduce":
		items := []any{}
		for _, m := range fakeCandRe.FindAllStringSubmatch(msg, -1) {
			items = append(items, map[string]any{"kind": m[2], "members": []string{m[1]}, "importance": 3})
		}
		return llmtest.JSON(map[string]any{"items": items, "dropped": []any{}})
	case "extract_sop":
		support := fakeSupportRe.FindString(msg)
		phase := func(id, name, tool string) map[string]any {
			return map[string]any{"id": id, "name": name, "description": name, "entry_condition": "开始" + name, "exit_condition": name + "完毕",
				"steps": []any{map[string]any{"action": name, "tool": tool, "output": name + "结果", "supports": []string{support}}}}
		}
		return llmtest.JSON(map[string]any{"name": "八字流程", "description": "五步", "phases": []any{
			phase("P1", "收集", "collect_info"), phase("P2", "排盘", "calculate_bazi"), phase("P3", "扫描", "get_rules"),
			phase("P4", "分析", "search_knowledge"), phase("P5", "输出", "show_report")}})
	}
	return llmtest.Status(400, "fake: unknown schema "+r.SchemaName())
}

func TestExtractLLMCacheAndDryRun(t *testing.T) {
	dir := extractWorkspace(t)
	srv := llmtest.New(t)
	srv.SetFallback(fakeExtractModel)
	env := map[string]string{"OPENAI_BASE_URL": srv.URL, "OPENAI_API_KEY": "k"}
	if err := os.WriteFile(filepath.Join(dir, "vibe.yaml"), []byte("llm:\n  model: gpt-4o-mini\n  prices:\n    gpt-4o-mini: {input_per_mtok: 0.15, output_per_mtok: 0.6}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runVibe(t, env, "--workspace", dir, "extract", "bazi", "--dry-run")
	if code != 0 || srv.Count() != 0 {
		t.Fatalf("dry run exit %d, %d requests sent:\n%s%s", code, srv.Count(), out, errOut)
	}
	for _, want := range []string{"nothing was sent", "tiktoken o200k_base", "extract.map", "extract.reduce", "extract.gap", "extract.sop", "total", "~", "depends on the map answers",
		"reads ", " chunks of ", "-> converted "} {
		if !strings.Contains(out, want) {
			t.Errorf("dry run output lacks %q:\n%s", want, out)
		}
	}
	code, out, errOut = runVibe(t, env, "--workspace", dir, "extract", "bazi")
	if code != 0 || srv.Count() == 0 || !strings.Contains(out, "llm:gpt-4o-mini") {
		t.Fatalf("exit %d, %d requests:\n%s%s", code, srv.Count(), out, errOut)
	}
	for _, want := range []string{"reduce:", "gap:", "tiers:"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	for _, want := range []string{"llm extract.map:", "llm extract.reduce:", "llm extract.sop:", "llm total:"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("usage lacks %q:\n%s", want, errOut)
		}
	}
	// The model names calculate_bazi, which no plugin runs: the step keeps
	// no tool, so the agent is never sent to a tool that cannot answer.
	sop, _ := os.ReadFile(filepath.Join(dir, "skills", "bazi", "knowledge", "sop.yaml"))
	if strings.Contains(string(sop), "calculate_bazi") || !strings.Contains(string(sop), "tool: collect_info") {
		t.Errorf("sop.yaml names a compute tool no plugin runs, or lacks the model's core tools:\n%s", sop)
	}
	sent := srv.Count()
	code, _, errOut = runVibe(t, env, "--workspace", dir, "extract", "bazi")
	if code != 0 || srv.Count() != sent {
		t.Errorf("unchanged rebuild: exit %d, %d new requests: %s", code, srv.Count()-sent, errOut)
	}
	// integrate records the extraction's usage per pass in meta.json: the
	// requests the first extraction sent (the cached rebuild keeps them).
	if code, _, errOut := runVibe(t, map[string]string{"VIBE_LLM_PROVIDER": "offline"}, "--workspace", dir, "integrate", "bazi"); code != 0 {
		t.Fatalf("integrate exit %d: %s", code, errOut)
	}
	var meta struct {
		Extractor string `json:"extractor"`
		Usage     struct {
			Extractor string `json:"extractor"`
			Passes    []struct {
				Pass             string `json:"pass"`
				Requests         int    `json:"requests"`
				Cached           bool   `json:"cached"`
				PromptTokens     int    `json:"prompt_tokens"`
				CompletionTokens int    `json:"completion_tokens"`
			} `json:"passes"`
			Total struct {
				Requests     int     `json:"requests"`
				PromptTokens int     `json:"prompt_tokens"`
				Cost         float64 `json:"cost"`
			} `json:"total"`
			Edited bool `json:"knowledge_edited_after"`
		} `json:"extract_llm_usage"`
	}
	data, err := os.ReadFile(filepath.Join(dir, "skills", "bazi", "meta.json"))
	if err != nil || json.Unmarshal(data, &meta) != nil {
		t.Fatalf("meta.json: %v\n%s", err, data)
	}
	u := meta.Usage
	var passes []string
	for _, p := range u.Passes {
		passes = append(passes, p.Pass)
		if p.Requests == 0 || p.Cached || p.PromptTokens == 0 || p.CompletionTokens == 0 {
			t.Errorf("pass %+v: want the requests the first extraction sent", p)
		}
	}
	if u.Extractor != meta.Extractor || u.Extractor != "llm:gpt-4o-mini" || u.Total.Requests != sent || u.Total.PromptTokens == 0 || u.Total.Cost <= 0 || u.Edited ||
		len(passes) < 3 || passes[0] != "extract.map" || passes[len(passes)-1] != "extract.sop" {
		t.Errorf("extract_llm_usage (%d requests sent) = %+v\n%s", sent, u, data)
	}
	// After the extraction the dry run plans nothing to send but the
	// glossary request of the build's integrate stage, exactly (the
	// knowledge it is built from is there).
	code, out, _ = runVibe(t, env, "--workspace", dir, "extract", "bazi", "--dry-run", "--json")
	type plan struct {
		Pass     string `json:"pass"`
		Requests int    `json:"requests"`
		Cached   int    `json:"cached"`
		Est      bool   `json:"estimated"`
	}
	var rep struct {
		DryRun struct {
			Passes []plan `json:"passes"`
			Total  plan   `json:"total"`
		} `json:"dry_run"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || code != 0 {
		t.Fatalf("dry run --json: exit %d, %v:\n%s", code, err, out)
	}
	glossary := plan{}
	for _, p := range rep.DryRun.Passes {
		if p.Pass == "integrate.glossary" {
			glossary = p
		}
	}
	if glossary.Requests != 1 || glossary.Est || rep.DryRun.Total.Requests != 1 || rep.DryRun.Total.Cached != sent || rep.DryRun.Total.Est {
		t.Errorf("dry run after the extraction: %+v (glossary %+v), want 1 request (the glossary) and %d cached", rep.DryRun.Total, glossary, sent)
	}
	// With a remote embedder the dry run does not call it (the fake server
	// would answer its /embeddings with a 404): the passes needing it are
	// estimates, and say why.
	remote := map[string]string{"OPENAI_BASE_URL": srv.URL, "OPENAI_API_KEY": "k", "VIBE_EMBEDDING_PROVIDER": "openai", "VIBE_EMBEDDING_MODEL": "text-embedding-3-small"}
	code, out, errOut = runVibe(t, remote, "--workspace", dir, "extract", "bazi", "--dry-run")
	if code != 0 || srv.Count() != sent || !strings.Contains(out, "a dry run does not call") {
		t.Errorf("dry run with a remote embedder: exit %d, %d requests:\n%s%s", code, srv.Count()-sent, out, errOut)
	}
}

// TestExtractUsageWithUnderCountingEndpoint runs the LLM extraction against
// an endpoint that estimates its usage like a relay, three characters a
// token (2-3 times low for Chinese): the usage report and meta.json record
// vibe's larger count with the model's tokenizer, say so, and keep the
// endpoint's figures beside it.
func TestExtractUsageWithUnderCountingEndpoint(t *testing.T) {
	dir := extractWorkspace(t)
	srv := llmtest.New(t)
	var mu sync.Mutex
	endpointPrompt := 0
	srv.SetFallback(func(r llmtest.Request) llmtest.Reply {
		rep := fakeExtractModel(r)
		msgs, _ := json.Marshal(r.Messages)
		rep.PromptTokens = utf8.RuneCount(msgs) / 3
		rep.CompletionTokens = utf8.RuneCountInString(rep.Text)/3 + 10
		mu.Lock()
		endpointPrompt += rep.PromptTokens
		mu.Unlock()
		return rep
	})
	env := map[string]string{"OPENAI_BASE_URL": srv.URL, "OPENAI_API_KEY": "k"}
	if err := os.WriteFile(filepath.Join(dir, "vibe.yaml"), []byte("llm:\n  model: qwen2.5-72b-instruct\n  prices:\n    qwen2.5-72b-instruct: {input_per_mtok: 1, output_per_mtok: 2}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runVibe(t, env, "--workspace", dir, "extract", "bazi")
	if code != 0 || srv.Count() == 0 {
		t.Fatalf("exit %d, %d requests:\n%s%s", code, srv.Count(), out, errOut)
	}
	total := regexp.MustCompile(`llm total: +\d+ requests, +\d+ cached, +(\d+) prompt`).FindStringSubmatch(errOut)
	if total == nil {
		t.Fatalf("no usage total:\n%s", errOut)
	}
	reported, _ := strconv.Atoi(total[1])
	mu.Lock()
	defer mu.Unlock()
	if reported <= endpointPrompt {
		t.Errorf("report says %d prompt tokens, the endpoint's estimate was %d: want vibe's larger count", reported, endpointPrompt)
	}
	for _, want := range []string{"llm tokens: vibe's count for every request (above the endpoint's usage)", fmt.Sprintf("the endpoint reported %d prompt", endpointPrompt),
		"tiktoken cl100k_base (the nearest known to qwen2.5-72b-instruct; its own is not bundled)"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("usage report lacks %q:\n%s", want, errOut)
		}
	}
	if code, _, errOut := runVibe(t, map[string]string{"VIBE_LLM_PROVIDER": "offline"}, "--workspace", dir, "integrate", "bazi"); code != 0 {
		t.Fatalf("integrate exit %d: %s", code, errOut)
	}
	var meta struct {
		Usage struct {
			Total struct {
				Requests       int    `json:"requests"`
				PromptTokens   int    `json:"prompt_tokens"`
				EndpointPrompt int    `json:"endpoint_prompt_tokens"`
				CountedLarger  int    `json:"counted_larger"`
				Tokenizer      string `json:"tokenizer"`
			} `json:"total"`
		} `json:"extract_llm_usage"`
	}
	data, err := os.ReadFile(filepath.Join(dir, "skills", "bazi", "meta.json"))
	if err != nil || json.Unmarshal(data, &meta) != nil {
		t.Fatalf("meta.json: %v\n%s", err, data)
	}
	if u := meta.Usage.Total; u.PromptTokens != reported || u.EndpointPrompt != endpointPrompt || u.CountedLarger != u.Requests || !strings.Contains(u.Tokenizer, "cl100k_base") {
		t.Errorf("meta.json extract_llm_usage total %+v, want %d prompt tokens (vibe's), the endpoint's %d beside them, every request counted larger", u, reported, endpointPrompt)
	}
}

func TestBuildWithLLM(t *testing.T) {
	dir := extractWorkspace(t)
	srv := llmtest.New(t)
	srv.SetFallback(fakeExtractModel)
	env := map[string]string{"OPENAI_API_KEY": "k", "VIBE_LLM_BASE_URL": srv.URL, "VIBE_LLM_PROVIDER": "offline"}
	// The endpoint is configured but switched off: --llm openai turns the
	// extract stage to the model.
	code, _, errOut := runVibe(t, env, "--workspace", dir, "build", "bazi", "--from", "extract", "--until", "extract", "--llm", "openai")
	if code != 0 || srv.Count() == 0 || !strings.Contains(errOut, "llm extract.map:") {
		t.Fatalf("build --llm openai: exit %d, %d requests:\n%s", code, srv.Count(), errOut)
	}
	rules, _ := os.ReadFile(filepath.Join(dir, "skills", "bazi", "knowledge", "rules.yaml"))
	if !strings.Contains(string(rules), "extractor: llm:") {
		t.Errorf("rules.yaml not from the model:\n%s", rules)
	}
	if code, _, _ := runVibe(t, env, "--workspace", dir, "build", "bazi", "--llm", "gpt"); code != 2 {
		t.Errorf("--llm gpt: exit %d, want 2", code)
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

// A novel built offline says that it is read as a story and why it gives
// few rules (issue 28), in the text and in --json.
func TestExtractOfflineSaysANovelIsNarrative(t *testing.T) {
	dir := extractWorkspace(t)
	names := strings.Fields("宋江 林冲 武松 李逵 吴用 鲁达 杨志 柴进 晁盖 史进 朱仝 雷横 花荣 秦明 呼延 关胜 张顺 阮七 燕青 卢俊")
	var b strings.Builder
	b.WriteString("---\nsource: knowledge/bazi/source/novel.txt\ntitle: 小说\n---\n# 第一回\n\n")
	for i := 0; i < 60; i++ {
		fmt.Fprintf(&b, "%s道：“今日天色已晚，且去歇了。”%s听了，便叫庄客安排酒食。\n\n", names[i%len(names)], names[(i+3)%len(names)])
	}
	b.WriteString("如果林冲看时，则不是别人，却是小旋风柴进。\n")
	if err := os.WriteFile(filepath.Join(dir, "knowledge", "bazi", "converted", "novel.md"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := runVibe(t, nil, "--workspace", dir, "ingest", "bazi"); code != 0 {
		t.Fatalf("ingest exit %d: %s", code, errOut)
	}
	code, out, errOut := runVibe(t, nil, "--workspace", dir, "extract", "bazi", "--llm", "offline")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, "narrative: knowledge/bazi/converted/novel.md (20 speakers") || strings.Contains(out, "sample.md (") {
		t.Errorf("the novel, and only it, should be named narrative:\n%s", out)
	}
	rules, _ := os.ReadFile(filepath.Join(dir, "skills", "bazi", "knowledge", "rules.yaml"))
	if strings.Contains(string(rules), "林冲看时") || !strings.Contains(string(rules), "凡日主衰弱") {
		t.Errorf("rules.yaml should hold the treatise's rule and not the novel's narration:\n%s", rules)
	}
	code, out, _ = runVibe(t, nil, "--workspace", dir, "extract", "bazi", "--llm", "offline", "--json")
	if code != 0 || !strings.Contains(out, `"narrative": [`) || !strings.Contains(out, `"doc": "knowledge/bazi/converted/novel.md"`) {
		t.Errorf("--json exit %d:\n%s", code, out)
	}
}
