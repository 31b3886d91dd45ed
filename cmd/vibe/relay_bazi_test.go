package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vibelife/vibe/knowledge"
	"github.com/vibelife/vibe/llm"
	"github.com/vibelife/vibe/llm/llmtest"
)

// relayChat is testdata/relay-bazi-chat.json: a relay recording of a model
// driving the agent over the bazi books built without the hand glossary.
type relayChat struct {
	Rewrites  map[string]string `json:"rewrites"`
	Questions []struct {
		Question string `json:"question"`
		Replies  []struct {
			Content   *string `json:"content"`
			ToolCalls []struct {
				Name      string         `json:"name"`
				Arguments map[string]any `json:"arguments"`
			} `json:"tool_calls"`
		} `json:"replies"`
	} `json:"questions"`
}

// answeringRule names, for the recorded questions a rule of this build
// answers, a stretch of its condition; every other question has no rule
// that answers it in this build (read from the build's rules), and
// get_rules must say so with a note rather than return filler.
var answeringRule = map[string]string{
	"What is the Yang Blade, and what should restrain it?": "阳刃用之",
	"When is the yang blade structure a good one?":         "阳刃用之",
	// Since the offline rules carry their section's topic (issue 28), the
	// rule of 渊海子平 论日刃 "如或无情、或财旺，则主其凶" reads 日刃：无情、或财旺
	// → 主其凶: a taboo of the day blade (wealth strong), which the
	// question asks for.
	"日刃是哪几个日子？有什么忌讳？": "日刃：",
	// Since an offline tier 2 keeps one rule a chunk (docs/offline-rules.md),
	// the build holds extra rules whose subject is the term asked about:
	// 三命通会 论金神 "金神：惧水乡 → 非福" and "金神：四柱中更带七杀阳刃 → 真贵人"
	// say what a chart with 金神 needs, and 论魁罡 "魁罡重叠有情，主富高于名"
	// what kind of person a Kui Gang day makes.
	"Which hours are the Jin Shen (golden spirit), and what does a chart with it need?": "金神：",
	"What kind of person is born on a Kui Gang day?":                                    "魁罡重叠有情",
	// 渊海子平 论阳刃's "甲禄在寅 → 卯为阳刃" says where one stem's Lu is (one of ten).
	"Where is each day stem's Lu (prosperity) branch?": "甲禄在寅",
}

// The done-when for routing and get_rules with a model, replayed
// from a relay recording of 21 questions (English ones naming terms of the
// theme in pinyin or translation, and Chinese ones) asked with no skill
// active over the five bazi books built offline without
// examples/bazi/glossary.yaml: the router never tells the model that no
// skill fits, in the system prompt or use_skill's description, and
// get_rules, bridged by the model's rewrite, returns a rule that answers or
// none with a note saying what was searched.
func TestReplayRelayBaziChat(t *testing.T) {
	rec := readRelayChat(t)
	if len(rec.Questions) < 20 {
		t.Fatalf("%d questions recorded, want at least 20", len(rec.Questions))
	}
	srv := llmtest.New(t)
	srv.SetFallback(rec.reply)
	ws := copyWorkspace(t, bareBaziWorkspace(t))
	files, _, err := knowledge.ReadFiles(filepath.Join(ws, "skills", "bazi", "knowledge"))
	if err != nil {
		t.Fatal(err)
	}
	conditions := map[string]string{}
	for _, r := range files.Rules.Rules.All() {
		conditions[r.ID] = r.Condition
	}
	env := map[string]string{"OPENAI_BASE_URL": srv.URL, "OPENAI_API_KEY": "k"}
	good := 0
	for n, q := range rec.Questions {
		before := srv.Count()
		// In the vibe built without -race under it: 21 chats over the five
		// books' SQLite took 331 s in-process under the detector at load 30.
		code, out, errOut := runVibeUnraced(t, env, "-w", ws, "--quiet", "chat", "--user", fmt.Sprintf("q%02d", n+1), q.Question)
		if code != 0 {
			t.Fatalf("%q: exit %d\n%s\n%s", q.Question, code, out, errOut)
		}
		reqs := srv.Requests()[before:]
		var getRules map[string]any
		for _, r := range reqs {
			if strings.Contains(r.SystemMessage(), "search query") {
				continue
			}
			for _, text := range []string{r.SystemMessage(), useSkillDescription(r)} {
				if strings.Contains(text, "no skill fits") || strings.Contains(text, "finds no skill") {
					t.Errorf("%q: the model is told no skill fits:\n%.2000s", q.Question, text)
				}
			}
			for _, m := range r.Messages {
				if m.Role == llm.RoleTool && strings.Contains(m.Content, `"rules":`) {
					getRules = nil
					_ = json.Unmarshal([]byte(m.Content), &getRules)
				}
			}
		}
		if getRules == nil {
			t.Errorf("%q: no get_rules result in the replayed turn", q.Question)
			continue
		}
		rules, _ := getRules["rules"].([]any)
		// Rules the model already had (SKILL.md lists some) are named in
		// in_context rather than repeated: they count as returned.
		inCtx, _ := getRules["in_context"].([]any)
		for _, id := range inCtx {
			rules = append(rules, map[string]any{"id": id, "condition": conditions[id.(string)]})
		}
		note, _ := getRules["note"].(string)
		want := answeringRule[q.Question]
		ok := false
		switch {
		case want != "":
			for _, r := range rules {
				ok = ok || strings.Contains(r.(map[string]any)["condition"].(string), want)
			}
		default:
			ok = len(rules) == 0 && strings.Contains(note, "searched as")
		}
		if _, bridged := rec.Rewrites[q.Question]; bridged && getRules["bridged_by"] != "llm" {
			t.Errorf("%q: get_rules was not bridged by the model's rewrite: %v", q.Question, getRules)
		}
		if ok {
			good++
		} else {
			var conds []string
			for _, r := range rules {
				conds = append(conds, r.(map[string]any)["condition"].(string))
			}
			t.Logf("get_rules answers with filler: %q -> %q (note %q)", q.Question, conds, note)
		}
	}
	t.Logf("get_rules: a rule that answers, or none with a note, for %d of %d recorded questions", good, len(rec.Questions))
	// Measured: 21 of 21 (16 before get_rules took the subject the model's
	// rewrite confirms, the rewrite's own compound terms, the glossary's
	// terms a question names in parts (三春乙木 in 春天出生的乙木日主), and
	// left out weak rules that hold little of a question naming a term no
	// rule states).
	if good < len(rec.Questions) {
		t.Errorf("get_rules answered or said it could not for %d of %d questions, want all", good, len(rec.Questions))
	}
}

// readRelayChat reads testdata/relay-bazi-chat.json.
func readRelayChat(t *testing.T) relayChat {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "relay-bazi-chat.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rec relayChat
	if err := json.Unmarshal(b, &rec); err != nil {
		t.Fatal(err)
	}
	return rec
}

// reply answers a request of the replayed chat as the recording does: the
// recorded rewrite of a bridging request, else the recorded reply of the
// question's step (the assistant messages the request holds).
func (rec relayChat) reply(r llmtest.Request) llmtest.Reply {
	q := r.LastUserMessage()
	if r.SchemaName() == "judge_verdicts" {
		// The recording holds no judge's answers: the runtime's
		// deterministic check stands in.
		return llmtest.Status(400, "the recording has no judge answers")
	}
	if strings.Contains(r.SystemMessage(), "search query") {
		if rw, ok := rec.Rewrites[q]; ok {
			return llmtest.Text(rw)
		}
		return llmtest.Text(q) // no rewrite recorded: the question stays as it is
	}
	i := -1
	for j, x := range rec.Questions {
		if x.Question == q {
			i = j
		}
	}
	if i < 0 {
		return llmtest.Status(400, "the recording has no question "+q)
	}
	step := 0
	for _, m := range r.Messages {
		if m.Role == llm.RoleAssistant {
			step++
		}
	}
	rs := rec.Questions[i].Replies
	if step >= len(rs) {
		return llmtest.Status(400, fmt.Sprintf("the recording of %q has no step %d", q, step))
	}
	var out llmtest.Reply
	if c := rs[step].Content; c != nil {
		out.Text = *c
	}
	for j, tc := range rs[step].ToolCalls {
		args, _ := json.Marshal(tc.Arguments)
		out.ToolCalls = append(out.ToolCalls, llm.ToolCall{ID: fmt.Sprintf("call_%d_%d", step, j), Name: tc.Name, Arguments: string(args)})
	}
	return out
}

// useSkillDescription is the description of use_skill among the request's
// tools.
func useSkillDescription(r llmtest.Request) string {
	var tools []struct {
		Function struct {
			Name        string `json:"name"`
			Description string `json:"description"`
		} `json:"function"`
	}
	_ = json.Unmarshal(r.Tools, &tools)
	for _, tl := range tools {
		if tl.Function.Name == "use_skill" {
			return tl.Function.Description
		}
	}
	return ""
}
