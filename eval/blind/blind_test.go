package blind_test

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"unicode"

	"github.com/vibelife/vibe/eval/agenteval"
	"github.com/vibelife/vibe/eval/blind"
)

// themes are the blind themes and what the issue asks of each: the least number of cases, and
// the least number of cases per language.
var themes = map[string]struct {
	min   int
	langs map[string]int
}{
	"shanghan":     {25, map[string]int{"zh": 13, "en": 8}},
	"chess":        {25, map[string]int{"en": 13, "zh": 5}},
	"travel-leave": {25, map[string]int{"en": 20}},
	"bazi":         {26, map[string]int{"zh": 8, "en": 12}},
}

// TestThemes loads every theme's dev.yaml and test.yaml with agenteval (the sources are not
// needed) and checks the material itself: unique ids across both halves, tags that say what
// each case is, a passage with text for every on-topic question and dialogue, off-topic
// questions and dialogues present, and the language mix the issue asks for.
func TestThemes(t *testing.T) {
	dirs, err := filepath.Glob("*/dev.yaml")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, d := range dirs {
		seen[filepath.Dir(d)] = true
	}
	for name := range themes {
		if !seen[name] {
			t.Errorf("eval/blind/%s/dev.yaml is missing", name)
		}
	}
	for name := range seen {
		want, ok := themes[name]
		if !ok {
			t.Errorf("eval/blind/%s: a theme this test does not know; add it to themes", name)
			continue
		}
		t.Run(name, func(t *testing.T) {
			cases := loadTheme(t, name)
			if len(cases) < want.min {
				t.Errorf("%d cases, want at least %d", len(cases), want.min)
			}
			count := map[string]int{}
			for _, c := range cases {
				s, err := blind.Stratum(c)
				if err != nil {
					t.Error(err)
					continue
				}
				lang, kind, _ := strings.Cut(s, "/")
				count[lang]++
				count[kind]++
				checkLanguage(t, c, lang)
				switch kind {
				case "off-topic":
					if len(c.Passages) > 0 || len(c.RuleText) > 0 {
						t.Errorf("%s: off-topic but names passages or rules", c.ID)
					}
				case "dialogue":
					passages := 0
					for _, tu := range c.Turns {
						passages += checkPassages(t, c.ID, tu.Passages)
					}
					if passages == 0 || c.Turns[0].Skill == "" {
						t.Errorf("%s: a dialogue needs its first turn's skill and at least one passage", c.ID)
					}
				default:
					if checkPassages(t, c.ID, c.Passages) == 0 {
						t.Errorf("%s: an on-topic question must name the passage its answer rests on", c.ID)
					}
					if kind == "rule" {
						for _, r := range c.RuleText {
							if strings.TrimSpace(r) == "" {
								t.Errorf("%s: empty rule_text", c.ID)
							}
						}
					}
				}
			}
			if count["off-topic"] < 3 {
				t.Errorf("%d off-topic questions, want at least 3", count["off-topic"])
			}
			if count["dialogue"] < 2 {
				t.Errorf("%d dialogues, want at least 2", count["dialogue"])
			}
			for lang, n := range want.langs {
				if count[lang] < n {
					t.Errorf("%d %s cases, want at least %d", count[lang], lang, n)
				}
			}
		})
	}
}

// TestSplitReproduces checks that each theme's halves are exactly what blind.Split makes of
// their union, so the split is the documented seeded, stratified one and nobody moved a case.
func TestSplitReproduces(t *testing.T) {
	for name := range themes {
		t.Run(name, func(t *testing.T) {
			dev := load(t, filepath.Join(name, "dev.yaml"))
			test := load(t, filepath.Join(name, "test.yaml"))
			wantDev, wantTest, err := blind.Split(append(append([]agenteval.Case{}, dev...), test...), blind.Seed)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := ids(dev), sorted(wantDev); strings.Join(got, " ") != strings.Join(want, " ") {
				t.Errorf("dev.yaml holds %v\nthe split gives %v", got, want)
			}
			if got, want := ids(test), sorted(wantTest); strings.Join(got, " ") != strings.Join(want, " ") {
				t.Errorf("test.yaml holds %v\nthe split gives %v", got, want)
			}
			if d, s := len(dev), len(test); d-s > 1 || s-d > 1 {
				t.Errorf("halves of %d and %d cases, want sizes within one", d, s)
			}
		})
	}
}

func TestSplitIgnoresOrder(t *testing.T) {
	cases := []agenteval.Case{
		{ID: "a", Tags: []string{"en", "passage"}, Question: "q", Expect: agenteval.Expect{Passages: []agenteval.PassageRef{{Text: "x"}}}},
		{ID: "b", Tags: []string{"en", "passage"}, Question: "q", Expect: agenteval.Expect{Passages: []agenteval.PassageRef{{Text: "x"}}}},
		{ID: "c", Tags: []string{"zh", "off-topic"}, Question: "问", Expect: agenteval.Expect{Skill: agenteval.None}},
		{ID: "d", Tags: []string{"en", "rule"}, Question: "q", Expect: agenteval.Expect{RuleText: []string{"r"}, Passages: []agenteval.PassageRef{{Text: "x"}}}},
	}
	d1, t1, err := blind.Split(cases, blind.Seed)
	if err != nil {
		t.Fatal(err)
	}
	rev := []agenteval.Case{cases[3], cases[2], cases[1], cases[0]}
	d2, t2, err := blind.Split(rev, blind.Seed)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(sorted(d1), " ") != strings.Join(sorted(d2), " ") || strings.Join(sorted(t1), " ") != strings.Join(sorted(t2), " ") {
		t.Errorf("order changed the split: %v/%v vs %v/%v", d1, t1, d2, t2)
	}
	if len(d1) != 2 || len(t1) != 2 {
		t.Errorf("split %v / %v, want two and two", d1, t1)
	}
	// the two en/passage cases land in different halves
	inDev := map[string]bool{}
	for _, id := range d1 {
		inDev[id] = true
	}
	if inDev["a"] == inDev["b"] {
		t.Errorf("one stratum's two cases went to the same half: dev %v", d1)
	}
}

func TestStratumRejectsWrongTags(t *testing.T) {
	for _, c := range []agenteval.Case{
		{ID: "no-lang", Tags: []string{"passage"}, Question: "q"},
		{ID: "two-langs", Tags: []string{"en", "zh", "passage"}, Question: "q"},
		{ID: "rule-tagged-passage", Tags: []string{"en", "passage"}, Question: "q", Expect: agenteval.Expect{RuleText: []string{"r"}}},
		{ID: "off-topic-tagged-passage", Tags: []string{"en", "passage"}, Question: "q", Expect: agenteval.Expect{Skill: agenteval.None}},
		{ID: "dialogue-tagged-rule", Tags: []string{"en", "rule"}, Turns: []agenteval.Turn{{User: "hi"}}},
	} {
		if s, err := blind.Stratum(c); err == nil {
			t.Errorf("%s: stratum %q, want an error", c.ID, s)
		}
	}
}

func loadTheme(t *testing.T, name string) []agenteval.Case {
	t.Helper()
	dev := load(t, filepath.Join(name, "dev.yaml"))
	test := load(t, filepath.Join(name, "test.yaml"))
	all := append(append([]agenteval.Case{}, dev...), test...)
	byID := map[string]string{}
	for _, c := range dev {
		byID[c.ID] = "dev.yaml"
	}
	for _, c := range test {
		if f, ok := byID[c.ID]; ok {
			t.Errorf("id %s is in both %s and test.yaml", c.ID, f)
		}
	}
	return all
}

func load(t *testing.T, path string) []agenteval.Case {
	t.Helper()
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	f, err := agenteval.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if f.Skill == "" {
		t.Errorf("%s: the file names no default skill", path)
	}
	if f.Thresholds != nil {
		t.Errorf("%s: blind files carry no thresholds (they would assume results)", path)
	}
	return f.Cases
}

func checkPassages(t *testing.T, id string, ps []agenteval.PassageRef) int {
	t.Helper()
	for _, p := range ps {
		if strings.TrimSpace(p.Text) == "" {
			t.Errorf("%s: passage %s names no text", id, p)
		}
	}
	return len(ps)
}

// checkLanguage checks the language tag against the user's words: zh has Han characters, the
// others none (English questions name Chinese terms in pinyin or translation only).
func checkLanguage(t *testing.T, c agenteval.Case, lang string) {
	t.Helper()
	var texts []string
	if c.Question != "" {
		texts = append(texts, c.Question)
	}
	for _, tu := range c.Turns {
		texts = append(texts, tu.User)
	}
	for _, s := range texts {
		han := strings.IndexFunc(s, func(r rune) bool { return unicode.Is(unicode.Han, r) }) >= 0
		if han != (lang == "zh") {
			t.Errorf("%s: tagged %s but %q", c.ID, lang, s)
		}
	}
}

func ids(cs []agenteval.Case) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.ID)
	}
	return sorted(out)
}

func sorted(s []string) []string {
	out := append([]string(nil), s...)
	sort.Strings(out)
	return out
}
