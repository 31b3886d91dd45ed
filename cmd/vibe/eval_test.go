package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	junit "github.com/joshdk/go-junit"

	"github.com/vibelife/vibe/llm"
	"github.com/vibelife/vibe/llm/llmtest"
)

// evalWorkspace copies the demo workspace (built once per test binary) so a
// test may break its skill or fill its caches.
//
// The offline evals run in the vibe built without -race under it
// (runVibeUnraced): one goroutine's searches over SQLite, which the detector
// slows many times with nothing to find (265 s of the package under -race
// at load 30); the judged run with a model stays in-process.
func evalWorkspace(t *testing.T) string {
	t.Helper()
	return copyWorkspace(t, demoWorkspace(t))
}

var offlineEnv = map[string]string{"VIBE_LLM_PROVIDER": "offline"}

// The demo eval passes offline in the workspace `make demo` builds, prints
// its table, says what it skipped, and two runs give the same JSON bytes.
func TestEvalDemoOffline(t *testing.T) {
	ws := demoWorkspace(t)
	code, out, errOut := runVibeUnraced(t, offlineEnv, "-w", ws, "eval", "demo")
	if code != 0 {
		t.Fatalf("vibe eval demo: exit %d\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{"routing", "rule hit@3", "passage recall@5", "tools (offered, args valid)", "skipped: faithfulness", "eval demo: pass"} {
		if !strings.Contains(out, want) {
			t.Errorf("the report lacks %q:\n%s", want, out)
		}
	}
	_, j1, _ := runVibeUnraced(t, offlineEnv, "-w", ws, "eval", "demo", "--format", "json")
	_, j2, _ := runVibeUnraced(t, offlineEnv, "-w", ws, "eval", "demo", "--format", "json")
	if j1 != j2 || j1 == "" {
		t.Fatalf("two runs differ:\n%s\n---\n%s", j1, j2)
	}
	var rep struct {
		Mode     string `json:"mode"`
		Pass     bool   `json:"pass"`
		Measures []struct {
			Name  string  `json:"name"`
			Value float64 `json:"value"`
			N     int     `json:"n"`
		} `json:"measures"`
		Cases []struct {
			ID string `json:"id"`
		} `json:"cases"`
	}
	if err := json.Unmarshal([]byte(j1), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Mode != "offline" || !rep.Pass || len(rep.Cases) < 15 {
		t.Fatalf("mode %s pass %v cases %d", rep.Mode, rep.Pass, len(rep.Cases))
	}
	got := map[string]int{}
	for _, m := range rep.Measures {
		got[m.Name] = m.N
	}
	for _, m := range []string{"routing", "rule_hit", "passage_recall", "tools"} {
		if got[m] == 0 {
			t.Errorf("measure %s counted nothing: %v", m, got)
		}
	}
}

// A deliberately broken skill fails the eval, naming the failed cases: a
// rule deleted, a trigger removed, a tool renamed.
func TestEvalCatchesABrokenSkill(t *testing.T) {
	breaks := []struct {
		name, file, from, to, failedCase string
	}{
		{"rule deleted", "skills/demo/knowledge/rules.yaml", "    - id: R015\n", "    - id: R915\n", "green-bud-temperature"},
		{"trigger removed", "skills/demo/SKILL.md", "    - genmaicha\n", "", "genmaicha"},
		{"tool renamed", "skills/demo/tools/tools.yaml", "    - name: calc_brew\n", "    - name: brew_calculator\n", "brew-calc-green"},
	}
	for _, b := range breaks {
		t.Run(b.name, func(t *testing.T) {
			ws := evalWorkspace(t)
			// A trigger a knowledge engineer added by hand, for a word the
			// sources never use, and the case that covers it: the router
			// knows the word only from the trigger.
			skillMD := filepath.Join(ws, "skills/demo/SKILL.md")
			md, _ := os.ReadFile(skillMD)
			os.WriteFile(skillMD, []byte(strings.Replace(string(md), "triggers:\n", "triggers:\n    - genmaicha\n", 1)), 0o644)
			evalFile := filepath.Join(ws, "knowledge/demo/eval.yaml")
			ev, _ := os.ReadFile(evalFile)
			os.WriteFile(evalFile, append(ev, []byte("  - id: genmaicha\n    question: Do you know genmaicha?\n    skill: demo\n")...), 0o644)
			if code, out, errOut := runVibeUnraced(t, offlineEnv, "-w", ws, "eval", "demo"); code != 0 {
				t.Fatalf("before the break: exit %d\n%s\n%s", code, out, errOut)
			}
			p := filepath.Join(ws, b.file)
			data, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(data), b.from) {
				t.Fatalf("%s has no %q to break", b.file, b.from)
			}
			if err := os.WriteFile(p, []byte(strings.Replace(string(data), b.from, b.to, 1)), 0o644); err != nil {
				t.Fatal(err)
			}
			code, out, errOut := runVibeUnraced(t, offlineEnv, "-w", ws, "eval", "demo")
			if code != 1 {
				t.Fatalf("exit %d, want 1\n%s\n%s", code, out, errOut)
			}
			if !strings.Contains(out, "FAIL "+b.failedCase+" (") {
				t.Errorf("the report does not name %s:\n%s", b.failedCase, out)
			}
		})
	}
}

// JUnit output is read by a real JUnit consumer (go-junit, the parser
// behind several CI reporters) with the right totals and failure names.
func TestEvalJUnitIsReadByAJUnitConsumer(t *testing.T) {
	ws := evalWorkspace(t)
	p := filepath.Join(ws, "skills/demo/knowledge/rules.yaml")
	data, _ := os.ReadFile(p)
	os.WriteFile(p, []byte(strings.Replace(string(data), "    - id: R003\n", "    - id: R903\n", 1)), 0o644)
	out := filepath.Join(t.TempDir(), "eval.xml")
	code, _, errOut := runVibeUnraced(t, offlineEnv, "-w", ws, "eval", "demo", "--format", "junit", "--output", out)
	if code != 1 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	suites, err := junit.IngestFile(out)
	if err != nil {
		t.Fatalf("go-junit rejects the report: %v", err)
	}
	if len(suites) != 1 {
		t.Fatalf("%d suites", len(suites))
	}
	s := suites[0]
	if s.Totals.Tests < 15 || s.Totals.Failed < 2 {
		t.Fatalf("totals %+v", s.Totals)
	}
	failed := map[string]string{}
	for _, tc := range s.Tests {
		if tc.Status == junit.StatusFailed {
			failed[tc.Name] = tc.Error.Error()
		}
	}
	if _, ok := failed["green-boiling-water"]; !ok {
		t.Errorf("the consumer does not see green-boiling-water failed: %v", failed)
	}
	if msg, ok := failed["measure rule_hit"]; !ok || !strings.Contains(msg, "below") {
		t.Errorf("the consumer does not see the rule_hit measure failed: %v", failed)
	}
	if s.Properties["mode"] != "offline" {
		t.Errorf("properties %v", s.Properties)
	}
}

// A baseline stored from a good run fails a later run that regressed.
func TestEvalBaselineRegression(t *testing.T) {
	ws := evalWorkspace(t)
	base := filepath.Join(t.TempDir(), "base.json")
	if code, _, errOut := runVibeUnraced(t, offlineEnv, "-w", ws, "eval", "demo", "--format", "json", "--output", base); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	os.WriteFile(filepath.Join(ws, "vibe.yaml"), []byte("eval:\n  thresholds:\n    rule_hit: 0.5\n"), 0o644)
	p := filepath.Join(ws, "skills/demo/knowledge/rules.yaml")
	data, _ := os.ReadFile(p)
	os.WriteFile(p, []byte(strings.Replace(string(data), "    - id: R022\n", "    - id: R922\n", 1)), 0o644)
	// Above the lowered threshold: passes without the baseline...
	if code, out, errOut := runVibeUnraced(t, offlineEnv, "-w", ws, "eval", "demo"); code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	// ...and fails against it, naming the case that regressed.
	code, out, _ := runVibeUnraced(t, offlineEnv, "-w", ws, "eval", "demo", "--baseline", base)
	if code != 1 || !strings.Contains(out, "REGRESSION case oolong-sour passed in the baseline and fails now") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
}

func TestEvalFileErrorsNameTheField(t *testing.T) {
	ws := evalWorkspace(t)
	bad := filepath.Join(t.TempDir(), "eval.yaml")
	os.WriteFile(bad, []byte("version: 1\ncases:\n  - id: a\n    question: hi\n    rulez: [R1]\n"), 0o644)
	code, _, errOut := runVibe(t, offlineEnv, "-w", ws, "eval", "demo", "--file", bad)
	if code != 2 || !strings.Contains(errOut, bad+":3:") || !strings.Contains(errOut, "rulez") {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	os.WriteFile(bad, []byte("version: 1\ncases:\n  - id: a\n    question: hi\n  - id: a\n    question: again\n"), 0o644)
	code, _, errOut = runVibe(t, offlineEnv, "-w", ws, "eval", "demo", "--file", bad)
	if code != 2 || !strings.Contains(errOut, "id already used on line 3") {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	code, _, errOut = runVibe(t, offlineEnv, "-w", ws, "eval", "nosuchtheme")
	if code != 2 || !strings.Contains(errOut, "vibe build nosuchtheme") {
		t.Fatalf("exit %d: %s", code, errOut)
	}
}

// --generate drafts cases from the built rules into eval.draft.yaml, which
// is itself a valid eval file, and never touches eval.yaml.
func TestEvalGenerateDrafts(t *testing.T) {
	ws := evalWorkspace(t)
	before, _ := os.ReadFile(filepath.Join(ws, "knowledge/demo/eval.yaml"))
	code, _, errOut := runVibe(t, offlineEnv, "-w", ws, "eval", "demo", "--generate", "--max", "10")
	if code != 0 || !strings.Contains(errOut, "drafted 10 cases") {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	after, _ := os.ReadFile(filepath.Join(ws, "knowledge/demo/eval.yaml"))
	if string(before) != string(after) {
		t.Fatal("--generate changed eval.yaml")
	}
	draft := filepath.Join(ws, "knowledge/demo/eval.draft.yaml")
	b, _ := os.ReadFile(draft)
	if !strings.Contains(string(b), "rule-R001") || !strings.Contains(string(b), "review each case") {
		t.Fatalf("draft:\n%s", b)
	}
	// The draft runs as an eval file: questions made from a rule's own
	// condition find that rule.
	code, out, errOut := runVibe(t, offlineEnv, "-w", ws, "eval", "demo", "--file", draft, "--format", "json")
	if code == 2 {
		t.Fatalf("the draft does not run: %s", errOut)
	}
	var rep struct {
		Measures []struct {
			Name  string  `json:"name"`
			Value float64 `json:"value"`
		} `json:"measures"`
	}
	json.Unmarshal([]byte(out), &rep)
	for _, m := range rep.Measures {
		if m.Name == "rule_hit" && m.Value < 0.8 {
			t.Errorf("drafted questions find their own rule in %.0f%% of cases", 100*m.Value)
		}
	}
}

// evalModel is the scripted model of the judged run: it activates the
// skill, calls calc_brew for a quantity question, answers, and grades every
// answer as faithful, stating the facts asked about.
func evalModel(req llmtest.Request) llmtest.Reply {
	if req.SchemaName() == "eval_verdict" {
		var facts []map[string]any
		user := req.LastUserMessage()
		if _, list, ok := strings.Cut(user, "EXPECTED FACTS:\n"); ok {
			for _, line := range strings.Split(strings.TrimSpace(list), "\n") {
				if _, fact, ok := strings.Cut(line, ". "); ok {
					facts = append(facts, map[string]any{"fact": fact, "stated": true})
				}
			}
		}
		return llmtest.JSON(map[string]any{"faithfulness": 1, "unsupported": []string{}, "facts": facts})
	}
	tools := toolMessages(req)
	q := req.LastUserMessage()
	switch {
	case tools["use_skill"] == "" && !strings.Contains(req.SystemMessage(), "active skill: demo") && !strings.Contains(q, "weather") && !strings.Contains(q, "Python"):
		return llmtest.Reply{ToolCalls: []llm.ToolCall{{ID: "u1", Name: "use_skill", Arguments: `{"name":"demo"}`}}}
	case strings.Contains(q, "grams") && tools["calc_brew"] == "":
		return llmtest.Reply{ToolCalls: []llm.ToolCall{{ID: "b1", Name: "calc_brew", Arguments: `{"tea":"green","vessel_ml":300}`}}}
	}
	return llmtest.Text(fmt.Sprintf("Answer to %q from the demo sources.", q))
}

// With the project's fake model the judged part runs, and a second run
// replays every chat answer and verdict: zero model calls, the same bytes.
func TestEvalJudgedRunIsCached(t *testing.T) {
	ws := evalWorkspace(t)
	srv := llmtest.New(t)
	srv.SetFallback(evalModel)
	env := map[string]string{"OPENAI_BASE_URL": srv.URL, "OPENAI_API_KEY": "k"}
	file := filepath.Join(t.TempDir(), "eval.yaml")
	os.WriteFile(file, []byte(`version: 1
skill: demo
cases:
  - id: calc
    question: How many grams of green tea for a 300 ml glass?
    tools:
      - name: calc_brew
        args: {tea: green, vessel_ml: 300}
    not_tools: [collect_info]
    facts: [use about 6 g of leaves]
  - id: boil
    question: Can I brew green tea at a rolling boil?
    rules: [R003]
    facts: [never at a rolling boil]
  - id: weather
    question: What is the weather tomorrow?
    skill: none
`), 0o644)
	code, j1, errOut := runVibe(t, env, "-w", ws, "eval", "demo", "--file", file, "--format", "json")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, j1, errOut)
	}
	first := srv.Count()
	var judged int
	for _, r := range srv.Requests() {
		if r.SchemaName() == "eval_verdict" {
			judged++
		}
	}
	if judged != 2 || first <= judged {
		t.Fatalf("%d requests, %d of them verdicts", first, judged)
	}
	var rep struct {
		Mode     string   `json:"mode"`
		Skipped  []string `json:"skipped"`
		Measures []struct {
			Name  string  `json:"name"`
			Value float64 `json:"value"`
		} `json:"measures"`
	}
	json.Unmarshal([]byte(j1), &rep)
	ms := map[string]float64{}
	for _, m := range rep.Measures {
		ms[m.Name] = m.Value
	}
	if rep.Mode != "model" || len(rep.Skipped) != 0 || ms["fact_coverage"] != 1 || ms["faithfulness"] != 1 || ms["tools"] != 1 || ms["routing"] != 1 {
		t.Fatalf("report: %s", j1)
	}
	code, j2, errOut := runVibe(t, env, "-w", ws, "eval", "demo", "--file", file, "--format", "json")
	if code != 0 || srv.Count() != first {
		t.Fatalf("second run: exit %d, %d new model requests\n%s", code, srv.Count()-first, errOut)
	}
	if j1 != j2 {
		t.Fatalf("the reruns differ:\n%s\n---\n%s", j1, j2)
	}
	if !strings.Contains(errOut, "0 chat requests sent to the model") {
		t.Errorf("stderr: %s", errOut)
	}
}

// The bazi eval (examples/bazi/eval.yaml: 40 cases written from the five
// classics, Chinese and English, off-topic ones and three dialogues) runs on
// the theme built offline and meets the thresholds it records; docs/ci.md
// gives its figures.
func TestEvalBazi(t *testing.T) {
	ws := baziWorkspace(t)
	out := filepath.Join(t.TempDir(), "bazi-eval.json")
	code, text, errOut := runVibeOffline(t, "-w", ws, "eval", "bazi", "--format", "json", "--output", out)
	b, _ := os.ReadFile(out)
	if code != 0 {
		t.Fatalf("vibe eval bazi: exit %d\n%s\n%s\n%s", code, text, errOut, b)
	}
	var rep struct {
		Cases []struct {
			ID    string `json:"id"`
			Turns []any  `json:"turns"`
		} `json:"cases"`
		Measures []struct {
			Name      string   `json:"name"`
			Value     float64  `json:"value"`
			N         int      `json:"n"`
			Threshold *float64 `json:"threshold"`
		} `json:"measures"`
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	dialogues := 0
	for _, c := range rep.Cases {
		if len(c.Turns) > 1 {
			dialogues++
		}
	}
	if len(rep.Cases) < 40 || dialogues < 3 {
		t.Fatalf("%d cases, %d dialogues", len(rep.Cases), dialogues)
	}
	ruleGate := 0.0
	for _, m := range rep.Measures {
		t.Logf("bazi eval: %s = %.4f over %d", m.Name, m.Value, m.N)
		if m.Name == "rule_hit" && m.Threshold != nil {
			ruleGate = *m.Threshold
		}
	}
	// Rules are gated (issue 27: the threshold was 0, so nothing was).
	if ruleGate <= 0 {
		t.Errorf("the bazi eval does not gate rule_hit (threshold %v)", ruleGate)
	}
	// A gated measure below its threshold: exit 1, and the last line says
	// which (the environment over the eval file's passage_recall 0.7).
	env := map[string]string{"VIBE_LLM_PROVIDER": "offline", "VIBE_EVAL_THRESHOLDS_PASSAGE_RECALL": "0.99"}
	code, text, errOut = runVibeUnraced(t, env, "-w", ws, "eval", "bazi")
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	last := lines[len(lines)-1]
	if code != 1 || !strings.HasPrefix(last, "eval bazi: FAIL (exit 1): passage recall@5 ") || !strings.Contains(last, "is below its threshold 99.0%") {
		t.Errorf("eval bazi with passage_recall gated at 0.99: exit %d, last line %q\n%s", code, last, errOut)
	}
}

// The verdict line is the last line and matches the exit status; a case
// that falls short in a measure still meeting its threshold is BELOW (not
// gated), one in a measure below it FAIL; thresholds come from the flag,
// then the environment, then the eval file, then vibe.yaml.
func TestEvalVerdictAndThresholdPrecedence(t *testing.T) {
	ws := evalWorkspace(t)
	p := filepath.Join(ws, "skills/demo/knowledge/rules.yaml")
	data, _ := os.ReadFile(p)
	os.WriteFile(p, []byte(strings.Replace(string(data), "    - id: R015\n", "    - id: R915\n", 1)), 0o644)
	evalFile := filepath.Join(ws, "knowledge/demo/eval.yaml")
	ev, _ := os.ReadFile(evalFile)
	os.WriteFile(evalFile, []byte(strings.Replace(string(ev), "skill: demo\ncases:\n", "skill: demo\nthresholds:\n  rule_hit: 0.8\ncases:\n", 1)), 0o644)
	os.WriteFile(filepath.Join(ws, "vibe.yaml"), []byte("eval:\n  thresholds:\n    rule_hit: 1\n"), 0o644)
	env := func(kv ...string) map[string]string {
		m := map[string]string{"VIBE_LLM_PROVIDER": "offline"}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	lastLine := func(out string) string {
		lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
		return lines[len(lines)-1]
	}
	for _, c := range []struct {
		name  string
		env   map[string]string
		flags []string
		code  int
		last  string
		mark  string
	}{
		// The file's 0.8 over vibe.yaml's 1: one rule case of 18 missed
		// (94.4%) passes, the case marked BELOW.
		{"file over vibe.yaml", env(), nil, 0,
			"eval demo: pass (exit 0): every gated measure meets its threshold; 20 of 21 cases met every expectation, 1 below expectation but not gated (BELOW above) (offline mode)",
			"BELOW green-bud-temperature (knowledge/demo/eval.yaml:"},
		{"environment over the file", env("VIBE_EVAL_THRESHOLDS_RULE_HIT", "1"), nil, 1,
			"eval demo: FAIL (exit 1): rule hit@3 94.4% is below its threshold 100.0%; 20 of 21 cases met every expectation (offline mode)",
			"FAIL green-bud-temperature (knowledge/demo/eval.yaml:"},
		{"flag over the environment", env("VIBE_EVAL_THRESHOLDS_RULE_HIT", "1"), []string{"--threshold", "rule_hit=0.9"}, 0,
			"eval demo: pass (exit 0)", "BELOW green-bud-temperature"},
	} {
		code, out, errOut := runVibeUnraced(t, c.env, append([]string{"-w", ws, "eval", "demo"}, c.flags...)...)
		if code != c.code || !strings.HasPrefix(lastLine(out), c.last) || !strings.Contains(out, c.mark) {
			t.Errorf("%s: exit %d, want %d; last line %q, want %q and %q in\n%s\n%s", c.name, code, c.code, lastLine(out), c.last, c.mark, out, errOut)
		}
	}
	if code, _, errOut := runVibeUnraced(t, env(), "-w", ws, "eval", "demo", "--threshold", "rule_hit=high"); code != 2 || !strings.Contains(errOut, "give MEASURE=FRACTION, e.g. --threshold passage_recall=0.9") {
		t.Errorf("a bad --threshold: exit %d\n%s", code, errOut)
	}
}
