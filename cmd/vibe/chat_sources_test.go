package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vibelife/vibe/internal/iostreams"
	"github.com/vibelife/vibe/llm"
	"github.com/vibelife/vibe/llm/llmtest"
	"github.com/vibelife/vibe/runtime"
)

// With a model, `vibe chat` prints the tool calls of one step in the order
// the model made them (they run in parallel) and, after the answer, its
// sources: the rule it cites with its id and text and where it comes from.
func TestChatWithModelPrintsSourcesAndCallsInOrder(t *testing.T) {
	ws := t.TempDir()
	if err := os.CopyFS(filepath.Join(ws, "skills"), os.DirFS(filepath.Join("..", "..", "runtime", "testdata", "skills"))); err != nil {
		t.Fatal(err)
	}
	calls := []llm.ToolCall{
		{ID: "c1", Name: "get_rules", Arguments: `{"question":"日主甲木生于寅月"}`},
		{ID: "c2", Name: "get_user_profile", Arguments: `{"fields":["identity.gender"]}`},
		{ID: "c3", Name: "read_skill_resource", Arguments: `{"path":"rules/reading.md"}`},
	}
	srv := llmtest.New(t,
		llmtest.Reply{ToolCalls: calls},
		llmtest.Text("甲木生于寅月，日主得令，身强 [r2]。"),
	)
	env := map[string]string{"OPENAI_BASE_URL": srv.URL, "OPENAI_API_KEY": "k"}
	for run := 0; run < 3; run++ { // the goroutines' order differs from run to run
		if run > 0 {
			srv.Push(llmtest.Reply{ToolCalls: calls}, llmtest.Text("甲木生于寅月，日主得令，身强 [r2]。"))
		}
		code, out, errOut := runVibe(t, env, "-w", ws, "--quiet", "chat", "--skill", "bazi", "--user", "u", "日主甲木生于寅月怎么看")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		last := -1
		for _, c := range calls {
			i := strings.Index(out, "[tool "+c.Name+" ")
			if i < 0 || i < last {
				t.Fatalf("tool calls not printed in call order (%s at %d after %d):\n%s", c.Name, i, last, out)
			}
			last = i
		}
		ans := strings.Index(out, "身强 [r2]")
		src := strings.Index(out, "Sources / 出处:")
		if ans < 0 || src < ans {
			t.Fatalf("no sources after the answer:\n%s", out)
		}
		for _, want := range []string{"r2  如果日主甲木生于寅月，则日主得令，身强 (渊海子平)"} {
			if !strings.Contains(out[src:], want) {
				t.Errorf("sources lack %q:\n%s", want, out[src:])
			}
		}
		if strings.Contains(out[src:], "r3") {
			t.Errorf("a rule the answer does not cite is listed among its sources:\n%s", out[src:])
		}
	}
}

// The sources list: cited rules with their text, passages with book ›
// heading and the start of the text, each source once; an answer citing
// none lists what it consulted; a retrieval-only answer (which lists its
// sources itself) gets no second list.
func TestChatSourcesText(t *testing.T) {
	cs := []runtime.Citation{
		{Kind: "rule", RuleID: "R012", Text: "如果阳刃无制，则凶", HeadingPath: []string{"子平真诠", "论阳刃"}, ChunkID: "c_1", Cited: true},
		{Kind: "rule", RuleID: "R012", Text: "如果阳刃无制，则凶", HeadingPath: []string{"子平真诠", "论阳刃"}, ChunkID: "c_2", Cited: true},
		{Kind: "passage", ChunkID: "c_9", HeadingPath: []string{"三命通会", "论日刃"}, Quote: "日刃与阳刃同法", Cited: true},
		{Kind: "passage", ChunkID: "c_7", HeadingPath: []string{"三命通会", "论魁罡"}, Quote: "not cited"},
	}
	got := sourcesText(cs)
	for _, want := range []string{"Sources / 出处:", "R012  如果阳刃无制，则凶 (子平真诠 › 论阳刃)", "c_9  三命通会 › 论日刃: 日刃与阳刃同法"} {
		if !strings.Contains(got, want) {
			t.Errorf("sources lack %q:\n%s", want, got)
		}
	}
	if strings.Count(got, "R012") != 1 || strings.Contains(got, "c_7") {
		t.Errorf("each cited source once, and only cited ones:\n%s", got)
	}
	for i := range cs {
		cs[i].Cited = false
	}
	if got := sourcesText(cs); !strings.Contains(got, "Sources consulted") || !strings.Contains(got, "c_7") {
		t.Errorf("an answer citing nothing lists what it consulted:\n%s", got)
	}
	if sourcesText(nil) != "" {
		t.Error("no citations, no list")
	}
	ios, _, out, _ := iostreams.Test()
	p := &chatPrinter{w: ios.Out}
	p.print(runtime.Event{Type: runtime.EventContent, Content: runtime.OfflineLabel + "\n- R012 ..."})
	p.print(runtime.Event{Type: runtime.EventCitations, Citations: cs})
	p.print(runtime.Event{Type: runtime.EventDone})
	if strings.Contains(out.String(), "Sources") {
		t.Errorf("a retrieval-only answer got a second source list:\n%s", out.String())
	}
	p.print(runtime.Event{Type: runtime.EventJudge, Judge: &runtime.Judgement{By: "model", Rewritten: true,
		Claims: []runtime.Claim{{Verdict: "supported"}, {Verdict: "unsafe"}, {Verdict: "unsupported"}, {Verdict: "unsupported"}}}})
	if !strings.Contains(out.String(), "2 unsupported and 1 unsafe claims rewritten") {
		t.Errorf("the judge's rewrite is not said:\n%s", out.String())
	}
	p.print(runtime.Event{Type: runtime.EventContent, Content: "answer"})
	p.print(runtime.Event{Type: runtime.EventCitations, Citations: cs})
	if !strings.Contains(out.String(), "Sources consulted") {
		t.Errorf("the next (model) answer lists its sources:\n%s", out.String())
	}
}
