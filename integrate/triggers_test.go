package integrate

import (
	"reflect"
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
	got := skillTriggers("demo", ks, 6)
	want := []string{"demo", "green tea", "普洱茶", "ziping", "醒茶", "temperature and time"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("triggers = %q, want %q", got, want)
	}
	all := skillTriggers("demo", ks, 20)
	want = []string{"demo", "green tea", "普洱茶", "ziping", "醒茶", "temperature and time", "temperature rule", "润茶", "sinking leaf"}
	if !reflect.DeepEqual(all, want) {
		t.Fatalf("all triggers = %q, want %q (no single common word such as water, no phase names)", all, want)
	}
	// A term the theme (or an earlier trigger) already matches is left out.
	if got := skillTriggers("tea", ks, 3); !reflect.DeepEqual(got, []string{"tea", "普洱茶", "ziping"}) {
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
	got := skillTriggers("demo", ks, 8)
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
