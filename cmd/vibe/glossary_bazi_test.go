package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vibelife/vibe/internal/iostreams"
	"github.com/vibelife/vibe/internal/testcorpus"
	"github.com/vibelife/vibe/runtime"
	"github.com/vibelife/vibe/skills"
)

var (
	bareOnce sync.Once
	bareDir  string
	bareErr  string
)

// bareBaziWorkspace builds, once per test binary and offline, the bazi
// theme from the five classics without examples/bazi/glossary.yaml: what a
// new theme gets with nothing written by hand.
func bareBaziWorkspace(t *testing.T) string {
	t.Helper()
	corpus := testcorpus.Dir(t, "bazi")
	bareOnce.Do(func() {
		dir, err := os.MkdirTemp("", "vibe-bazi-bare-")
		if err != nil {
			bareErr = err.Error()
			return
		}
		bareDir = dir
		if code, _, errOut := runVibeOffline(t, "-w", dir, "--quiet", "curate", "bazi", "--from", corpus); code != 0 {
			bareErr = "vibe curate bazi: " + errOut
			return
		}
		if code, _, errOut := runVibeOffline(t, "-w", dir, "--quiet", "build", "bazi"); code != 0 {
			bareErr = "vibe build bazi: " + errOut
		}
	})
	if bareErr != "" {
		t.Fatalf("build the bare bazi workspace: %s", bareErr)
	}
	return bareDir
}

// Offline and with no glossary written by hand, the build writes the
// skill's glossary: the terms the headings name with their pinyin, so
// "Kui Gang" reaches 论魁罡; SKILL.md names the theme in English too.
// English questions in translation reach the books through the built-in
// table of the characters' English glosses (the Unicode Han Database's:
// "seven killings" is 七杀, "Geng metal" 庚金, "winter" 冬) and the
// bridge's English morphology ("emptiness" empty 空, "falls into" no
// autumn): measured offline, 12 of the 20 English questions reach an
// answering passage in the top 5 (11 before the morphology, 2 before the
// table; 20 with examples/bazi/glossary.yaml; 14 with CC-CEDICT,
// TestDictionaryGlossaryOnTheBareBaziBooks; 1 before the glossary was
// built).
func TestBuiltGlossaryOnTheBareBaziBooks(t *testing.T) {
	ws := bareBaziWorkspace(t)
	b, err := os.ReadFile(filepath.Join(ws, "skills", "bazi", filepath.FromSlash(skills.GlossaryPath)))
	if err != nil {
		t.Fatal(err)
	}
	g, err := skills.ParseGlossary(b, "glossary.yaml")
	if err != nil {
		t.Fatal(err)
	}
	byTerm := map[string]skills.GlossaryTerm{}
	for _, e := range g.Terms {
		byTerm[e.Term] = e
	}
	for term, py := range map[string]string{"魁罡": "kui gang", "滴天髓": "ditiansui", "七杀": "qi sha", "三命通会": "san ming tong hui"} {
		if e, ok := byTerm[term]; !ok || e.From != skills.FromMined || !slices.Contains(e.Pinyin, py) {
			t.Errorf("%s: %+v, want a mined entry with the pinyin %q", term, e, py)
		}
	}
	if got := g.Characters["杀"].English; !slices.Contains(got, "kill") {
		t.Errorf("the glossary's characters give 杀 %q, want the built-in table's kill", got)
	}
	md, _ := os.ReadFile(filepath.Join(ws, "skills", "bazi", "SKILL.md"))
	if !strings.Contains(string(md), "In English: bazi") {
		t.Errorf("SKILL.md's description does not name the theme in English:\n%.600s", md)
	}

	ios, _, _, errOut := iostreams.Test()
	a := &app{io: ios, getenv: func(k string) string { return offlineEnv[k] }, now: time.Now, workspaceDir: ws}
	ag, closer, err := a.newAgentWith(context.Background(), agentOptions{ephemeral: true, quiet: true})
	if err != nil {
		t.Fatalf("%v: %s", err, errOut)
	}
	defer closer()
	hits := 0
	for _, tt := range englishBaziQuestions {
		ps, err := ag.Passages(context.Background(), "bazi", tt.q, 5)
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, p := range ps {
			for _, w := range tt.want {
				found = found || w.matches(p)
			}
		}
		if found {
			hits++
		} else if strings.Contains(tt.q, "Kui Gang") {
			t.Errorf("%q does not reach 论魁罡 through the built glossary's pinyin", tt.q)
		}
	}
	t.Logf("offline, no hand glossary: %d of %d English questions reach an answering passage in the top 5", hits, len(englishBaziQuestions))
	if hits < 12 {
		t.Errorf("%d of %d English questions reach an answering passage, want at least the 12 measured", hits, len(englishBaziQuestions))
	}
}

// get_rules answers or says it cannot, on the bazi books built offline
// with and without the hand-kept glossary: filler is cut, a question about
// a term no rule states gets the rules touching the rest of it apart, as
// partial, with a note, never first among the answers; an English question
// says what it was searched as.
func TestGetRulesSaysWhenNoRuleAnswers(t *testing.T) {
	for name, ws := range map[string]string{"hand glossary": baziWorkspace(t), "built glossary only": bareBaziWorkspace(t)} {
		a := skillsAgent(t, filepath.Join(ws, "skills"))
		ask := func(q string) map[string]any {
			args, _ := json.Marshal(map[string]any{"question": q, "k": 3})
			res, err := a.ExecuteTool(context.Background(), "u", "bazi", "get_rules", args, func(runtime.Event) error { return nil })
			if err != nil {
				t.Fatal(err)
			}
			var out map[string]any
			if err := json.Unmarshal(res, &out); err != nil {
				t.Fatal(err)
			}
			return out
		}
		rules := func(out map[string]any, key string) []string {
			var conds []string
			list, _ := out[key].([]any)
			for _, r := range list {
				conds = append(conds, r.(map[string]any)["condition"].(string))
			}
			return conds
		}
		out := ask("身弱财多怎么办")
		if got := rules(out, "rules"); len(got) > 0 && strings.Contains(got[0], "身弱无制伏") {
			t.Errorf("%s: 身弱财多怎么办 puts 身弱无制伏 first: %v", name, out)
		}
		if note, _ := out["note"].(string); len(rules(out, "rules")) == 0 && !strings.Contains(note, "财多身弱") && !strings.Contains(note, "searched as: 身弱财多怎么办") {
			t.Errorf("%s: 身弱财多怎么办: no rule, and the note says neither what no rule states nor what was searched: %v", name, out)
		}
		// The offline tier 2 keeps one rule a chunk, among them 渊海子平 论金神's
		// 金神：惧水乡 → 非福 and 金神：四柱中更带七杀阳刃 → 真贵人 (extra rules):
		// get_rules may return those for 金神格, and nothing else.
		out = ask("金神格是什么")
		for _, c := range rules(out, "rules") {
			if !strings.HasPrefix(c, "金神") {
				t.Errorf("%s: 金神格是什么: rule %q is not about 金神: %v", name, c, out)
			}
		}
		for _, q := range []string{"十恶大败日是什么", "今天天气怎么样"} {
			out := ask(q)
			if got := rules(out, "rules"); len(got) > 0 {
				t.Errorf("%s: %s: rules %v, want none (no rule of the build is about it)", name, q, got)
			}
			if note, _ := out["note"].(string); !strings.Contains(note, "searched as: "+q) {
				t.Errorf("%s: %s: the note does not say nothing matched and what was searched: %v", name, q, out)
			}
			if _, ok := out["rules"].([]any); !ok {
				t.Errorf("%s: %s: rules is not a list: %v", name, q, out)
			}
		}
		out = ask("What are the Kui Gang days?")
		if out["searched_as"] != "魁罡" || out["bridged_by"] != "glossary" {
			t.Errorf("%s: an English question naming 魁罡 in pinyin: %v, want it searched as 魁罡 by the glossary", name, out)
		}
	}
}
