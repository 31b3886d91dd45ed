package skills

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// writeSkillFiles writes files (relative path -> content) under root/name.
func writeSkillFiles(t testing.TB, root, name string, files map[string]string) {
	t.Helper()
	for rel, body := range files {
		p := filepath.Join(root, name, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// A skill is routed by its rules' wording and its glossary, not only by its
// triggers: questions that name none of the triggers still reach it, in
// either language, and a question about something else reaches none.
func TestRouteByRulesAndGlossary(t *testing.T) {
	root := t.TempDir()
	writeSkillFiles(t, root, "bazi", map[string]string{
		"SKILL.md": "---\nname: bazi\ndescription: 依据典籍的规则解答问题\ntriggers: [bazi, 三命通会]\n---\n# bazi\n",
		"knowledge/rules.yaml": `rules:
  tier1_must_know:
    - id: R001
      condition: 伤官格见官星
      conclusion: 为祸百端
      source: 渊海子平 > 论伤官
      evidence: [{chunk: c_1, quote: 不相干的引文甜点}]
`,
		"knowledge/patterns.yaml": "patterns:\n  quick_patterns:\n    - id: PAT001\n      name: 去煞留官\n      signature: 官重煞轻\n",
		GlossaryPath:              "terms:\n  - term: 日主\n    aliases: [day master]\n  - term: 八字\n    aliases: [four pillars]\n",
	})
	writeSkillFiles(t, root, "tea", map[string]string{
		"SKILL.md": "---\nname: tea\ndescription: Brewing green, black and oolong tea.\ntriggers: [green tea]\n---\n# tea\n",
		"knowledge/rules.yaml": "rules:\n  tier1_must_know:\n    - id: R001\n      condition: the leaves are small and tender\n      conclusion: use water at 75 to 80 °C\n" +
			// An offline build's extra rule (one a chunk beyond the core):
			// looked up by get_rules, but not what the skill is about.
			"  tier2_core:\n    - id: R002\n      condition: the kettle descaler foams\n      conclusion: rinse twice\n      extra: true\n",
		GlossaryPath: "terms:\n  - term: green tea\n    aliases: [绿茶]\n",
	})
	s, err := Open(root, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ text, want string }{
		{"伤官见官星会怎样", "bazi"},  // the rule's wording
		{"去煞留官是什么意思", "bazi"}, // a pattern's name
		{"帮我看看八字", "bazi"},    // a glossary term
		{"My day master is weak", "bazi"},
		{"绿茶用多少度的水", "tea"},
		{"how tender should the leaves be", "tea"},
		{"what's the weather like tomorrow?", ""},
		{"帮我写一首关于猫的诗", ""},
		{"甜点", ""},             // only in an evidence quote, which is not the skill's topic
		{"descaler foams", ""}, // only in an extra rule
	} {
		if got := s.Match(tt.text); got != tt.want {
			t.Errorf("Match(%q) = %q, want %q (candidates %+v)", tt.text, got, tt.want, s.Route(tt.text))
		}
	}
	cs := s.Route("伤官见官")
	if len(cs) == 0 || cs[0].Name != "bazi" || !cs[0].Fits() || cs[0].Score <= 0 {
		t.Fatalf("Route(伤官见官) = %+v, want bazi first and fitting", cs)
	}
}

// A malformed glossary is reported naming the file and the entry; the skill
// still routes by its front matter.
func TestRouteReportsABadGlossary(t *testing.T) {
	root := t.TempDir()
	writeSkillFiles(t, root, "tea", map[string]string{
		"SKILL.md":   "---\nname: tea\ndescription: Brewing tea.\ntriggers: [green tea]\n---\n# tea\n",
		GlossaryPath: "terms:\n  - aliases: [绿茶]\n",
	})
	var reported []string
	s, err := Open(root, Options{OnError: func(dir string, err error) { reported = append(reported, err.Error()) }})
	if err != nil {
		t.Fatal(err)
	}
	if len(reported) != 1 || !strings.Contains(reported[0], "knowledge/glossary.yaml: terms[0]: term is empty") {
		t.Fatalf("reported %q, want the glossary's empty term named", reported)
	}
	if got := s.Match("how hot for green tea"); got != "tea" {
		t.Fatalf("Match = %q, want tea from its triggers", got)
	}
}

// BenchmarkRoute routes a long question among skills with a few hundred
// terms each (the prompt routes every message before a skill is active).
func BenchmarkRoute(b *testing.B) {
	root := b.TempDir()
	for _, name := range []string{"one", "two", "three"} {
		var g, r strings.Builder
		g.WriteString("terms:\n")
		r.WriteString("rules:\n  tier2_core:\n")
		for i := 0; i < 300; i++ {
			fmt.Fprintf(&g, "  - term: %s术语%d\n    aliases: [%s term %d, 别名%d]\n", name, i, name, i, i)
			fmt.Fprintf(&r, "    - id: R%03d\n      condition: %s的条件%d见官星\n      conclusion: 结论%d\n", i, name, i, i)
		}
		writeSkillFiles(b, root, name, map[string]string{
			"SKILL.md":             "---\nname: " + name + "\ndescription: " + name + " skill\n---\n# " + name + "\n",
			GlossaryPath:           g.String(),
			"knowledge/rules.yaml": r.String(),
		})
	}
	s, err := Open(root, Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s.Route("甲木日主生于酉月，辛金正官透月干，时上丙火与辛相合，正官格成败 what is the useful god of two term 7")
	}
}

// A question naming a section of one skill's books (a Han word of its
// sources' headings, knowledge/contents.yaml) reaches that skill though no
// rule, pattern or glossary term names it; a word both skills' headings
// hold, or a heading's frame (如何), names no section.
func TestRouteBySectionsOfTheSources(t *testing.T) {
	root := t.TempDir()
	writeSkillFiles(t, root, "shanghan", map[string]string{
		"SKILL.md":             "---\nname: shanghan\ndescription: 伤寒杂病的条文与方剂\n---\n# shanghan\n",
		"knowledge/rules.yaml": "rules:\n  tier1_must_know:\n    - id: R001\n      condition: 太阳病，发热汗出\n      conclusion: 桂枝汤主之\n",
		ContentsPath: `documents:
  - source: knowledge/shanghan/source/金匮.txt
    title: 金匮要略
    headings: [奔豚气病脉证治第八, 疮痈肠痈浸淫病脉证并治第十八, 论调养如何, 杂疗方, 第一卷上, 十枣汤方, 葵子（一斤） 茯苓（三两）, 半夏厚朴汤方]
`,
	})
	writeSkillFiles(t, root, "bazi", map[string]string{
		"SKILL.md":             "---\nname: bazi\ndescription: 依据典籍的规则解答问题\n---\n# bazi\n",
		"knowledge/rules.yaml": "rules:\n  tier1_must_know:\n    - id: R001\n      condition: 伤官格见官星\n      conclusion: 为祸百端\n",
		ContentsPath:           "documents:\n  - source: knowledge/bazi/source/渊海子平.txt\n    headings: [论杂疗, 论妻子]\n",
	})
	s, err := Open(root, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ text, want string }{
		{"奔豚病发作起来是什么样子？", "shanghan"},
		{"肠痈有什么表现？", "shanghan"},
		{"杂疗是什么", ""},           // both skills' headings hold 杂疗
		{"如何面对失业", ""},          // 如何 is a heading's frame
		{"我第一次养猫要注意什么", ""},     // 第一 numbers a heading
		{"十枣汤怎么服用", "shanghan"}, // 十枣 is no numbering
		{"一斤猪肉多少钱", ""},         // 一斤 measures: a formula's line, no section
		{"半夏有什么作用", "shanghan"}, // 半夏 is no measure
		{"帮我写一首关于猫的诗", ""},
	} {
		if got := s.Match(tt.text); got != tt.want {
			t.Errorf("Match(%q) = %q, want %q (candidates %+v)", tt.text, got, tt.want, s.Route(tt.text))
		}
	}
	cs := s.Route("肠痈有什么表现？")
	if len(cs) == 0 || strings.Join(cs[0].Sections, ",") != "肠痈" {
		t.Fatalf("Route(肠痈有什么表现？) = %+v, want shanghan naming the section word 肠痈", cs)
	}
	writeSkillFiles(t, root, "broken", map[string]string{
		"SKILL.md":   "---\nname: broken\ndescription: x\n---\n# broken\n",
		ContentsPath: "documents: [{title: no source}]\n",
	})
	var errs []string
	if _, err := Open(root, Options{OnError: func(dir string, err error) { errs = append(errs, err.Error()) }}); err != nil {
		t.Fatal(err)
	}
	if len(errs) != 1 || !strings.Contains(errs[0], ContentsPath) || !strings.Contains(errs[0], "documents[0]: source is empty") {
		t.Fatalf("a contents file without a source: errors %q, want one naming %s and documents[0]", errs, ContentsPath)
	}
}

// A best candidate that shares only prose with the message gives way to the
// fitting candidate whose glossary names a term of it.
func TestMatchPrefersANamedTermOverProse(t *testing.T) {
	root := t.TempDir()
	writeSkillFiles(t, root, "fate", map[string]string{
		"SKILL.md": "---\nname: fate\ndescription: Reading a chart's fortunes.\n---\n# fate\n\nAll causes of disease fall into three categories of the chart; according to the books each category has its own signs.\n",
	})
	writeSkillFiles(t, root, "medicine", map[string]string{
		"SKILL.md":   "---\nname: medicine\ndescription: 经方\n---\n# medicine\n",
		GlossaryPath: "terms:\n  - term: 金匮\n    aliases: [jin gui]\n",
	})
	s, err := Open(root, Options{})
	if err != nil {
		t.Fatal(err)
	}
	q := "According to the Jin Gui Yao Lue, into which three categories do all causes of disease fall?"
	cs := s.Route(q)
	if len(cs) < 2 || cs[0].Name != "fate" || !cs[0].ProseOnly() || !cs[0].Fits() {
		t.Fatalf("the fixture should make fate the best candidate on prose alone: %+v", cs)
	}
	if got := s.Match(q); got != "medicine" {
		t.Errorf("Match = %q, want medicine (candidates %+v)", got, cs)
	}
	// Prose alone still routes when no skill names a term of the message.
	if got := s.Match("Into which three categories do all causes of disease fall?"); got != "fate" {
		t.Errorf("Match of the question without the book's name = %q, want fate", got)
	}
}

// A glossary's pinyin written as one word without tone marks that is an
// English word too ("fare" 发热, "ride" 日德, "men" 门), or such a syllable
// of spaced pinyin ("she" of "she gan", "hang" of "wu hang"), names no term
// by itself: an everyday English question holds it by chance. Spaced
// pinyin whole, joined pinyin no English word and tone-marked pinyin still
// do.
func TestPinyinThatIsAnEnglishWordNamesNoTermAlone(t *testing.T) {
	root := t.TempDir()
	writeSkillFiles(t, root, "shanghan", map[string]string{
		"SKILL.md": "---\nname: shanghan\ndescription: 伤寒论的条文\n---\n# shanghan\n",
		GlossaryPath: "terms:\n" +
			"  - term: 发热\n    pinyin: [fā rè, fa re, fare]\n    from: mined\n" +
			"  - term: 日德\n    pinyin: [rì dé, ri de, ride]\n    from: mined\n" +
			"  - term: 门\n    pinyin: [mén, men]\n    from: mined\n" +
			"  - term: 少阴\n    pinyin: [shào yīn, shao yin, shaoyin]\n    from: mined\n" +
			"  - term: 魁罡\n    pinyin: [kuí gāng, kui gang, kuigang]\n    from: mined\n" +
			"  - term: 五行\n    pinyin: [wǔ xíng, wu xing, wu hang]\n    from: mined\n" +
			"  - term: 射干\n    pinyin: [shè gān, she gan]\n    from: mined\n",
	})
	s, err := Open(root, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ text, want string }{
		{"What is the bus fare to the airport?", ""},
		{"Are train fares cheaper at night?", ""},
		{"Can I ride my bike to work?", ""},
		{"Where do men buy shoes?", ""},
		{"Why did she hang the picture?", ""},
		{"What do the wu hang say?", "shanghan"},
		{"What is done in a Shaoyin pattern?", "shanghan"},
		{"What is a Kui Gang day?", "shanghan"},
		{"Is fārè serious?", "shanghan"},
		{"Where is the mén?", "shanghan"},
	} {
		if got := s.Match(tt.text); got != tt.want {
			t.Errorf("Match(%q) = %q, want %q (candidates %+v)", tt.text, got, tt.want, s.Route(tt.text))
		}
	}
	// Next to a term of the skill, the word still counts.
	score := func(q string) float64 {
		for _, c := range s.Route(q) {
			if c.Name == "shanghan" {
				return c.Score
			}
		}
		return 0
	}
	if with, without := score("Is fare a sign of Shaoyin?"), score("Is it a sign of Shaoyin?"); with <= without {
		t.Errorf("Route: 'fare' next to Shaoyin scores %.2f, without it %.2f", with, without)
	}
	for _, w := range []string{"fare", "Fares", "ride", "men"} {
		if !EnglishWord(w) {
			t.Errorf("EnglishWord(%q) = false", w)
		}
	}
	for _, w := range []string{"shaoyin", "kuigang", "jueyin"} {
		if EnglishWord(w) {
			t.Errorf("EnglishWord(%q) = true", w)
		}
	}
}

// A glossary's spaced pinyin names its term only when its syllables stand
// side by side, in order: "Jin Gui Yao Lue" (金匮要略) holds jin and yao,
// but does not name 紧要 "jin yao" (a mined term sent such a question to
// the wrong skill). English renderings keep matching in any order.
func TestSpacedPinyinNamesATermOnlyWhole(t *testing.T) {
	root := t.TempDir()
	writeSkillFiles(t, root, "bazi", map[string]string{
		"SKILL.md": "---\nname: bazi\ndescription: 八字命理\n---\n# bazi\n",
		GlossaryPath: "terms:\n" +
			"  - term: 紧要\n    pinyin: [jǐn yào, jin yao, jinyao]\n    from: mined\n" +
			"  - term: 七杀\n    english: [Seven Killings]\n    pinyin: [qī shā, qi sha, qisha]\n    from: mined\n",
	})
	s, err := Open(root, Options{})
	if err != nil {
		t.Fatal(err)
	}
	named := func(q, term string) bool {
		for _, c := range s.Route(q) {
			if c.Name == "bazi" && slices.Contains(c.Matched, term) {
				return true
			}
		}
		return false
	}
	for _, tt := range []struct {
		q, term string
		want    bool
	}{
		{"According to the Jin Gui Yao Lue, what treats cough?", "jin yao", false},
		{"Yao and Jin are two names in the story", "jin yao", false},
		{"Why is jin yao stressed in the books?", "jin yao", true},
		{"Is Jin-Yao the key point?", "jin yao", true},
		{"What do the killings of the seven mean?", "Seven Killings", true},
		{"Is qi sha strong here?", "qi sha", true},
	} {
		if got := named(tt.q, tt.term); got != tt.want {
			t.Errorf("%q names %q: %v, want %v (candidates %+v)", tt.q, tt.term, got, tt.want, s.Route(tt.q))
		}
	}
}
