package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vibelife/vibe/internal/iostreams"
	"github.com/vibelife/vibe/llm"
	"github.com/vibelife/vibe/llm/llmtest"
	"github.com/vibelife/vibe/runtime"
)

// judgeSkill is a skill that reads fates (its rules conclude in fortunes:
// knowledge.ReadsFortunes) and whose rules carry a grave verdict (so the
// judge is on by default) and a harmless one.
var judgeSkill = map[string]string{
	"SKILL.md": "---\nname: mingli\ndescription: 依据典籍解答命理问题\ntriggers: [命理, 壬水]\n---\n# 命理\n\n依据 get_rules 的规则作答，注明规则编号。\n",
	"knowledge/rules.yaml": `rules:
  tier1_must_know: []
  tier2_core:
    - id: R001
      condition: 柱中有壬水，运又逢水
      conclusion: 必贫夭死
      confidence: medium
      source: 三命通会 > 论壬水
      evidence: [{chunk: c_1, quote: "柱中有壬水，运又逢水，必贫夭死。"}]
    - id: R003
      condition: 甲木生于寅月
      conclusion: 身强
      confidence: high
      source: 渊海子平 > 论日主
      evidence: [{chunk: c_3, quote: "甲木寅月得令。"}]
  tier3_edge:
    - {id: R004, condition: 财官双美, conclusion: 主富贵, source: 三命通会 > 论财官, evidence: [{chunk: c_4, quote: "财官双美，主富贵。"}]}
    - {id: R005, condition: 印绶得地, conclusion: 主寿, source: 三命通会 > 论印绶, evidence: [{chunk: c_4, quote: "印绶得地，主寿。"}]}
    - {id: R006, condition: 天乙贵人临命, conclusion: 逢凶化吉, source: 三命通会 > 论贵人, evidence: [{chunk: c_4, quote: "天乙贵人临命，逢凶化吉。"}]}
    - {id: R007, condition: 伤官见官, conclusion: 为祸百端, source: 子平真诠 > 论伤官, evidence: [{chunk: c_4, quote: "伤官见官，为祸百端。"}]}
`,
}

// The done-when for the judge: a scripted model (the fake
// OpenAI-compatible server) drafts an answer stating a claim no source
// supports (三十岁后必发大财) and a fatal verdict as certain (你必贫夭死).
// Through vibe serve the user receives neither as stated: the judge
// request's rewrite is what is streamed, the judge event carries the
// verdicts, the stored answer is the rewrite, and /metrics counts the
// verdicts and the rewritten turn.
func TestJudgeRewritesUnsupportedAndFatalClaims(t *testing.T) {
	ws := t.TempDir()
	for name, body := range judgeSkill {
		p := filepath.Join(ws, "skills", "mingli", filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	const question = "我的命局柱中有壬水，运又逢水，会怎样？"
	const draft = "柱中有壬水，运又逢水，你必贫夭死（R001）。三十岁后必发大财。"
	const rewrite = "柱中有壬水，运又逢水：典籍认为此为凶断「必贫夭死」（R001），这是传统的说法，不是确定的预言。典籍没有说到三十岁以后的财运。"
	var judgeReq llmtest.Request
	fake := llmtest.New(t)
	guarded := 0
	fake.SetFallback(func(r llmtest.Request) llmtest.Reply {
		if r.SchemaName() == "input_guard" {
			guarded++
			return llmtest.JSON(map[string]string{"verdict": "allow", "reason": "a question about a chart"})
		}
		if r.SchemaName() == "judge_verdicts" {
			judgeReq = r
			return llmtest.JSON(map[string]any{
				"claims": []map[string]any{
					{"claim": "柱中有壬水，运又逢水", "verdict": "supported", "sources": []string{"R001"}},
					{"claim": "你必贫夭死", "verdict": "unsafe", "sources": []string{"R001"}},
					{"claim": "三十岁后必发大财", "verdict": "unsupported", "sources": []string{}},
				},
				"answer": rewrite,
			})
		}
		if _, ok := toolMessages(r)["get_rules"]; !ok {
			return llmtest.Reply{ToolCalls: []llm.ToolCall{{ID: "g1", Name: "get_rules", Arguments: `{"question":"柱中有壬水，运又逢水"}`}}}
		}
		return llmtest.Text(draft)
	})
	ios, _, _, errOut := iostreams.Test()
	env := map[string]string{"VIBE_API_KEYS": "ka:alice", "OPENAI_BASE_URL": fake.URL, "OPENAI_API_KEY": "test"}
	a := &app{io: ios, now: time.Now, workspaceDir: ws, getenv: func(k string) string { return env[k] }}
	srv, _, closeServer, err := a.newServer(context.Background(), &ServeOptions{IO: ios})
	if err != nil {
		t.Fatalf("%v: %s", err, errOut.String())
	}
	ts := httptest.NewServer(srv)
	t.Cleanup(func() { ts.Close(); closeServer() })
	addr, stop, err := a.serveMetrics("127.0.0.1:0", srv)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()

	q, _ := json.Marshal(question)
	resp := post(t, ts.URL+"/api/chat", "ka", `{"message":`+string(q)+`,"skill":"mingli","conversation_id":"j1"}`)
	evs := sseEvents(t, resp.Body)
	resp.Body.Close()
	var shown string
	var judge *runtime.Judgement
	for _, e := range evs {
		switch e.Type {
		case runtime.EventContent:
			shown += e.Content
		case runtime.EventCorrection:
			shown = e.Content
		case runtime.EventJudge:
			judge = e.Judge
		case runtime.EventError:
			t.Fatalf("error event: %s", e.Error)
		}
	}
	for _, bad := range []string{"你必贫夭死", "三十岁后必发大财"} {
		if strings.Contains(shown, bad) {
			t.Errorf("the user received %q as stated:\n%s", bad, shown)
		}
	}
	if !strings.Contains(shown, rewrite) {
		t.Errorf("the user did not get the judge's rewrite:\n%s", shown)
	}
	if judge == nil || judge.By != "model" || !judge.Rewritten || len(judge.Claims) != 3 {
		t.Fatalf("judge event = %+v", judge)
	}
	if guarded != 1 {
		t.Errorf("the input classifier was asked %d times, want once", guarded)
	}
	// The judge read the draft with the rule it cites.
	if u := judgeReq.LastUserMessage(); !strings.Contains(u, draft) || !strings.Contains(u, "[R001]") || !strings.Contains(u, "必贫夭死") {
		t.Errorf("judge request:\n%s", u)
	}
	// The stored answer is the rewrite, with the verdicts beside it.
	conv := getJSON(t, ts.URL+"/api/conversations/j1", "ka")
	b, _ := json.Marshal(conv)
	msgs, _ := conv["messages"].([]any)
	if len(msgs) != 2 || msgs[1].(map[string]any)["content"] != rewrite || !strings.Contains(string(b), `"unsafe"`) {
		t.Errorf("stored conversation: %s", b)
	}

	mresp, err := http.Get("http://" + addr.String() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(mresp.Body)
	mresp.Body.Close()
	for _, want := range []string{
		`vibe_judge_verdicts_total{by="model",verdict="supported"} 1`,
		`vibe_judge_verdicts_total{by="model",verdict="unsafe"} 1`,
		`vibe_judge_verdicts_total{by="model",verdict="unsupported"} 1`,
		`vibe_judge_turns_total{outcome="rewritten"} 1`,
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}
