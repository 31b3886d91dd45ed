package runtime

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/vibelife/vibe/knowledge"
	"github.com/vibelife/vibe/skills"
)

// recordingSearcher keeps the query texts it was asked.
type recordingSearcher struct {
	mu    sync.Mutex
	texts []string
}

func (r *recordingSearcher) Search(ctx context.Context, q knowledge.Query) ([]knowledge.Hit, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.texts = append(r.texts, q.Text)
	return nil, nil
}

// An English question over Chinese books is searched with the Chinese terms
// of the glossary entries it names; a Chinese question is searched as is.
func TestSearchBridgesEnglishThroughTheGlossary(t *testing.T) {
	root := writeSkills(t, "", map[string]string{
		"bazi/SKILL.md":               "---\nname: bazi\ndescription: 八字命理\n---\n# bazi\n",
		"bazi/" + skills.GlossaryPath: "terms:\n  - term: 伤官见官\n    aliases: [hurting officer meets officer]\n  - term: 七杀\n    aliases: [seven killings, 七煞]\n  - term: 正月\n    aliases: [寅月, first month]\n",
	})
	rs := &recordingSearcher{}
	a := agentOver(t, root, nil, func(c *Config) { c.Searcher = rs })
	for _, q := range []string{"What happens when the hurting officer meets the officer?", "How are the seven killings controlled?", "伤官见官会怎样", "What is the weather?"} {
		if _, err := a.Passages(context.Background(), "bazi", q, 5); err != nil {
			t.Fatal(err)
		}
	}
	want := []struct{ has, not string }{
		{"伤官见官", "hurting officer meets officer"}, // the term, not the English alias again
		{"七杀 七煞", ""},
		{"", "七杀"},
		{"", "伤官"},
	}
	for i, w := range want {
		got := rs.texts[i]
		if w.has != "" && !strings.Contains(got, w.has) || w.not != "" && strings.Contains(strings.TrimPrefix(got, strings.SplitN(got, "?", 2)[0]), w.not) {
			t.Errorf("query %d searched as %q", i, got)
		}
	}
	if rs.texts[2] != "伤官见官会怎样" || rs.texts[3] != "What is the weather?" {
		t.Errorf("unbridged queries changed: %q, %q", rs.texts[2], rs.texts[3])
	}
}

// Where glossary phrases overlap, the longest names the term ("four
// pillars of destiny" is 四柱, not also 命格), and a Chinese term made of
// the named ones (食神 + 制 + 杀) is named too.
func TestBridgeTermsLongestPhraseAndCompounds(t *testing.T) {
	root := writeSkills(t, "", map[string]string{
		"bazi/SKILL.md": "---\nname: bazi\ndescription: 八字命理\n---\n# bazi\n",
		"bazi/" + skills.GlossaryPath: "terms:\n  - term: 四柱\n    aliases: [four pillars of destiny]\n  - term: 命格\n    aliases: [destiny, 命运]\n" +
			"  - term: 食神\n    aliases: [eating god]\n  - term: 七杀\n    aliases: [seven killings, 七煞, 杀]\n  - term: 制伏\n    aliases: [control, 制]\n" +
			"  - term: 食神制杀\n    aliases: [食神制煞]\n  - term: 伤官\n    aliases: [hurting officer]\n  - term: 伤官见官\n    aliases: [hurting officer meets officer]\n",
	})
	a := agentOver(t, root, nil, nil)
	sk, err := a.cfg.Skills.Get("bazi")
	if err != nil {
		t.Fatal(err)
	}
	idx, err := a.rules.get(sk)
	if err != nil {
		t.Fatal(err)
	}
	for q, want := range map[string]string{
		"Tell me about the four pillars of destiny":                 "四柱",
		"Can the eating god keep the seven killings under control?": "食神 七杀 七煞 杀 制伏 制 食神制杀 食神制煞",
		"What if the hurting officer meets the officer?":            "伤官见官",
		"What is my destiny?":                                       "命格 命运",
	} {
		if got := strings.Join(idx.glossary.Terms(q, langZH), " "); got != want {
			t.Errorf("bridge(%q) = %q, want %q", q, got, want)
		}
	}
}

// The glossary entry naming the theme itself ("in bazi") is not carried
// over into a search of that theme: every passage is about it, and its
// aliases (看命, 命盘 …) pulled passages about reading charts in general
// above the one asked about. Routing still reads the entry.
func TestBridgeLeavesOutTheThemesOwnName(t *testing.T) {
	g := NewGlossary(skills.Glossary{Terms: []skills.GlossaryTerm{
		{Term: "八字", Aliases: []string{"bazi", "birth chart", "看命", "命盘"}},
		{Term: "杀印相生", Aliases: []string{"seven killings and resource support each other"}},
	}})
	q := `What does "seven killings and resource support each other" mean in bazi?`
	if got := strings.Join(g.Terms(q, "zh"), " "); got != "杀印相生 八字 看命 命盘" {
		t.Errorf("without a theme: %q", got)
	}
	for _, theme := range []string{"bazi", "BaZi", "八字"} {
		if got := strings.Join(g.Terms(q, "zh", theme), " "); got != "杀印相生" {
			t.Errorf("theme %s: %q, want 杀印相生 alone", theme, got)
		}
	}
	var b Bridger
	br := b.Bridge(context.Background(), q, "zh", g, "", "bazi")
	if br.SearchedAs != "杀印相生" || br.BridgedBy != "glossary" {
		t.Errorf("Bridge: %+v", br)
	}
	// A question naming only the theme is not bridged, and says so.
	if br := b.Bridge(context.Background(), "Tell me about bazi", "zh", g, "bazi"); !br.Unbridged || br.SearchedAs != "" {
		t.Errorf("theme only: %+v", br)
	}
}

// A question names a glossary term in its own inflection: plural or
// singular, -ing or not, British or American doubling ("hurt officers" is
// Hurting Officer, "travelling" Traveling, "killings" Killing, "noblemen"
// Nobleman, "children" child); and a relation between two terms worded
// with another verb ("a hurting officer chart runs into the direct
// officer" is Hurting Officer meets Direct Officer), less surely than by
// its own words, and only when both parts name a term of two words ("my
// day master is weak but there is a lot of wealth" is not Day Master
// sitting on Wealth).
func TestBridgeTermsInTheQuestionsWording(t *testing.T) {
	g := NewGlossary(skills.Glossary{Terms: []skills.GlossaryTerm{
		{Term: "伤官", English: []string{"Hurting Officer"}, From: skills.FromModel},
		{Term: "正官", English: []string{"Direct Officer"}, From: skills.FromModel},
		{Term: "伤官见官", English: []string{"Hurting Officer meets Direct Officer"}, From: skills.FromModel},
		{Term: "日坐天财", English: []string{"Day Master sitting on Wealth"}, From: skills.FromModel},
		{Term: "日主", English: []string{"Day Master"}, From: skills.FromModel},
		{Term: "驿马", English: []string{"Traveling Horse"}, From: skills.FromModel},
		{Term: "七杀", English: []string{"Seven Killing"}, From: skills.FromModel},
		{Term: "天乙贵人", English: []string{"Nobleman"}, From: skills.FromModel},
		{Term: "弃命从杀", English: []string{"Following Seven Killings"}, From: skills.FromModel},
		{Term: "大运", English: []string{"Ten-Year Luck Period"}, From: skills.FromModel},
		{Term: "子息", English: []string{"child"}, From: skills.FromModel},
		{Term: "合化", English: []string{"combine"}, From: skills.FromModel},
		{Term: "格局", English: []string{"chart structure", "structure"}, From: skills.FromModel},
	}})
	for q, want := range map[string]string{
		"Are hurt officers bad?":                                                      "伤官",
		"What does the travelling horse bring?":                                       "驿马",
		"Where are the seven killings?":                                               "七杀",
		"Who are the noblemen of a chart?":                                            "天乙贵人",
		"When does a chart give up and follow the seven killings?":                    "弃命从杀",
		"How are the ten-year luck periods counted?":                                  "大运",
		"What happens when a hurting officer chart runs into the direct officer?":     "伤官见官",
		"What if the hurting officer meets the direct officer?":                       "伤官见官",
		"The hurting officer and the direct officer":                                  "伤官见官",
		"The hurting officer, then the direct officer":                                "伤官见官",
		"The hurting officer of my chart and, much later in life, the direct officer": "伤官 正官",
		"My day master is weak but there is a lot of wealth in my chart. Is it bad?":  "日主",
		"Will I have children?":                                                       "子息",
		"Which stems are combining?":                                                  "合化",
		"What is the weather?":                                                        "",
	} {
		if got := strings.Join(g.Terms(q, langZH), " "); got != want {
			t.Errorf("Terms(%q) = %q, want %q", q, got, want)
		}
	}
}

func TestMatchForm(t *testing.T) {
	for _, group := range [][]string{
		{"killings", "killing", "kill", "kills", "killed"},
		{"hurting", "hurt", "hurts"},
		{"travelling", "traveling", "travel", "travelled", "travels"},
		{"periods", "period"},
		{"combining", "combine", "combines", "combined"},
		{"noblemen", "nobleman"},
		{"children", "child"},
		{"stars", "star"},
	} {
		want := matchForm(skills.Stem(group[0]))
		for _, w := range group[1:] {
			if got := matchForm(skills.Stem(w)); got != want {
				t.Errorf("matchForm(%q) = %q, want %q as for %q", w, got, want, group[0])
			}
		}
	}
	for _, w := range []string{"七杀", "qi", "sha", "guan"} {
		if got := matchForm(w); got != w {
			t.Errorf("matchForm(%q) = %q, want it kept", w, got)
		}
	}
}

// A rendering the field gives several terms names each of them, the
// shorter terms first, at most maxSharedRendering: the words do not tell
// which is meant. A term holding one named is a heading about it (论食神,
// 五行总 beside 食神, 五行) and is left out: its names would outweigh the
// question's other terms.
func TestBridgeSharedRendering(t *testing.T) {
	g := NewGlossary(skills.Glossary{Terms: []skills.GlossaryTerm{
		{Term: "论食神", Aliases: []string{"食神"}, English: []string{"Eating God"}, From: skills.FromModel},
		{Term: "食神", Aliases: []string{"食"}, English: []string{"Eating God"}, From: skills.FromModel},
		{Term: "女命", English: []string{"woman's chart"}, From: skills.FromModel},
		{Term: "妇人总诀", English: []string{"woman's chart", "General Formula for Women"}, From: skills.FromModel},
		{Term: "五行", English: []string{"Five Elements"}, From: skills.FromModel},
		{Term: "五行总", English: []string{"Five Elements"}, From: skills.FromModel},
		{Term: "论五行", English: []string{"Five Elements"}, From: skills.FromModel},
		{Term: "天乙贵人", English: []string{"Nobleman"}, From: skills.FromModel},
		{Term: "天福贵人", English: []string{"Nobleman"}, From: skills.FromModel},
		{Term: "福星贵人", English: []string{"Nobleman"}, From: skills.FromModel},
		{Term: "太极贵", English: []string{"Nobleman"}, From: skills.FromModel},
		{Term: "地支", English: []string{"branches"}, From: skills.FromModel},
		{Term: "支", English: []string{"branch"}, From: skills.FromMined},
	}})
	for q, want := range map[string]string{
		"Can the eating god control it?":         "食神 食",
		"How do you read a woman's chart?":       "女命 妇人总诀",
		"What are the five elements?":            "五行",
		"Who is my nobleman?":                    "太极贵 天乙贵人 天福贵人",
		"Which branch is it?":                    "地支",
		"What is the weather in the five towns?": "",
	} {
		if got := strings.Join(g.Terms(q, langZH), " "); got != want {
			t.Errorf("Terms(%q) = %q, want %q", q, got, want)
		}
	}
}
