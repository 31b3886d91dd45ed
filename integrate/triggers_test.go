package integrate

import (
	"reflect"
	"strings"
	"testing"

	"github.com/vibelife/vibe/knowledge"
	"github.com/vibelife/vibe/skills"
)

func TestSkillTriggersAreKeyTermsNotTitlesOrProcedureNames(t *testing.T) {
	ks := &knowledgeSet{}
	ks.sop.SOP.Phases = []knowledge.Phase{{ID: "P1", Name: "Collect"}, {ID: "P2", Name: "Compute"}}
	ks.rules.Rules.Tier2 = []knowledge.Rule{
		{ID: "R1", Source: "Brewing Green Tea > Chapter 2. Temperature and Time > 2.1 The temperature rule"},
		{ID: "R2", Source: "Brewing Green Tea > Chapter 1. Water"},
		{ID: "R3", Source: "普洱茶 > 第二章 醒茶与润茶 > 第一节 醒茶"},
		{ID: "R4", Source: "ziping.md"},
	}
	ks.pats.Patterns.QuickPatterns = []knowledge.Pattern{{ID: "P1", Name: "Pattern: the sinking leaf"}}
	got := skillTriggers("demo", ks, nil, 6)
	want := []string{"demo", "green tea", "普洱茶", "ziping", "醒茶", "temperature and time"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("triggers = %q, want %q", got, want)
	}
	all := skillTriggers("demo", ks, nil, 20)
	want = []string{"demo", "green tea", "普洱茶", "ziping", "醒茶", "temperature and time", "temperature rule", "润茶", "sinking leaf"}
	if !reflect.DeepEqual(all, want) {
		t.Fatalf("all triggers = %q, want %q (no single common word such as water, no phase names)", all, want)
	}
	// A term the theme (or an earlier trigger) already matches is left out.
	if got := skillTriggers("tea", ks, nil, 3); !reflect.DeepEqual(got, []string{"tea", "普洱茶", "ziping"}) {
		t.Errorf("theme tea: %q, want green tea left out", got)
	}
}

// The works of the demo theme (examples/demo) as its rules cite them: the
// triggers are the terms of each work, and a plain question about one of
// them activates the skill while an unrelated one does not.
func TestDemoTriggersMatchPlainQuestions(t *testing.T) {
	ks := &knowledgeSet{}
	for i, src := range []string{
		"Brewing Green Tea > Chapter 2. Temperature and Time > 2.1 The temperature rule",
		"Brewing Green Tea > Chapter 1. Water",
		"Brewing Green Tea > Chapter 3. Patterns > Pattern: the bitter edge",
		"普洱茶冲泡要略 > 第一章 择器",
		"普洱茶冲泡要略 > 第二章 醒茶与润茶 > 第一节 醒茶",
		"普洱茶冲泡要略 > 第四章 常见之象",
		"白茶冲泡简要 > 一、白茶之性",
		"白茶冲泡简要 > 四、常见之象",
		"Brewing Black Tea > Chapter 1. Choosing the Leaf",
		"Brewing Black Tea > Chapter 3. Rules and Patterns > 3.1 Rules",
		"Brewing Oolong > Chapter 3. Rules of Thumb",
	} {
		ks.rules.Rules.Tier2 = append(ks.rules.Rules.Tier2, knowledge.Rule{ID: "R" + string(rune('A'+i)), Source: src})
	}
	got := skillTriggers("demo", ks, nil, 8)
	for _, w := range []string{"green tea", "普洱", "白茶", "black tea", "oolong"} {
		found := false
		for _, g := range got {
			found = found || g == w
		}
		if !found {
			t.Errorf("%q missing from %q", w, got)
		}
	}
	matches := func(q string) bool {
		for _, tr := range got {
			if skills.MatchTrigger(q, tr) {
				return true
			}
		}
		return false
	}
	for _, q := range []string{
		"How hot should the water be for green tea?",
		"How long do I steep oolong?",
		"Can I add milk to black tea?",
		"普洱怎么泡？",
		"白茶可以煮吗",
	} {
		if !matches(q) {
			t.Errorf("%q activates nothing with triggers %q", q, got)
		}
	}
	for _, q := range []string{
		"How do I fix a flat bicycle tyre?",
		"How much water should I drink a day?",
		"What is the capital of France?",
		"明天会下雨吗",
	} {
		if matches(q) {
			t.Errorf("unrelated %q activates the skill (triggers %q)", q, got)
		}
	}
}

func TestWorkTerm(t *testing.T) {
	titles := []string{"Brewing Green Tea", "Brewing Oolong", "普洱茶冲泡要略", "白茶冲泡简要", "滴天髓"}
	for _, tt := range []struct{ title, want string }{
		{"Brewing Green Tea", "green tea"},
		{"Brewing Oolong", "oolong"},
		{"普洱茶冲泡要略", "普洱"},
		{"白茶冲泡简要", "白茶"},
		{"滴天髓", "滴天髓"},
	} {
		if got := workTerm(tt.title, titles); got != tt.want {
			t.Errorf("workTerm(%q) = %q, want %q", tt.title, got, tt.want)
		}
	}
	// Alone, a title keeps its subject: a gerund, title words and a genre
	// ending go, a name stays whole.
	for _, tt := range []struct{ title, want string }{
		{"Brewing Green Tea", "green tea"},
		{"The Art of Tea", "tea"},
		{"A Guide to Oolong Tea", "oolong tea"},
		{"Oolong", "oolong"},
		{"普洱茶冲泡要略", "普洱茶冲泡"},
		{"子平真诠", "子平真诠"},
	} {
		if got := workTerm(tt.title, []string{tt.title}); got != tt.want {
			t.Errorf("workTerm(%q) alone = %q, want %q", tt.title, got, tt.want)
		}
	}
}

// Issue 13: the triggers of a classical-Chinese skill are the theme's terms
// (its glossary's, most used by the knowledge) and short topic or pattern
// names, never a chapter title such as 论十干合而不合; the triggers the
// model wrote come first, when they are terms.
func TestSkillTriggersThemeTermsNotChapterTitles(t *testing.T) {
	ks := &knowledgeSet{terms: []string{"八字", "四柱", "用神", "格局", "正官", "七煞"}}
	ks.rules.Rules.Tier2 = []knowledge.Rule{
		{ID: "R1", Source: "子平真诠 > 五、论十干合而不合", Condition: "甲与己合，而中间以庚间隔之", Conclusion: "合而不敢合也"},
		{ID: "R2", Source: "子平真诠 > 八、论用神", Condition: "八字用神", Conclusion: "专求月令，以日干配月令地支，而生克不同，格局分焉"},
		{ID: "R3", Source: "子平真诠 > 九、论用神成败救应", Condition: "用神配四柱", Conclusion: "必有成败"},
		{ID: "R4", Source: "子平真诠 > 三十一、论正官", Condition: "正官格", Conclusion: "切忌刑冲破害，用神喜财印"},
	}
	ks.pats.Patterns.QuickPatterns = []knowledge.Pattern{{ID: "P1", Name: "伤官见官"}}
	got := skillTriggers("zp", ks, nil, 8)
	if got[0] != "zp" || got[1] != "用神" {
		t.Errorf("triggers %q: want zp, then 用神 (the glossary term the rules use most)", got)
	}
	has := map[string]bool{}
	for _, g := range got {
		has[g] = true
		if strings.HasPrefix(g, "论") || strings.Contains(g, "十干合而不合") || strings.Contains(g, "成败救应") {
			t.Errorf("chapter title %q among the triggers %q", g, got)
		}
	}
	for _, w := range []string{"八字", "格局", "子平真诠", "正官", "伤官见官"} {
		if !has[w] {
			t.Errorf("%q missing from %q", w, got)
		}
	}
	if has["七煞"] {
		t.Errorf("七煞, which no rule uses, is among %q", got)
	}
	// The model's triggers first, its chapter titles and sentences left out.
	got = skillTriggers("zp", ks, []string{"八字格局", "论十干合而不合", "用神怎么取？我想知道我的八字", "伤官见官"}, 4)
	if want := []string{"zp", "八字格局", "伤官见官", "子平真诠"}; !reflect.DeepEqual(got, want) {
		t.Errorf("with the model's triggers: %q, want %q", got, want)
	}
}
