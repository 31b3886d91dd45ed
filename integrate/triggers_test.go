package integrate

import (
	"reflect"
	"testing"

	"github.com/vibelife/vibe/knowledge"
)

func TestSkillTriggersAreTopicsNotProcedureNames(t *testing.T) {
	ks := &knowledgeSet{}
	ks.sop.SOP.Phases = []knowledge.Phase{{ID: "P1", Name: "Collect"}, {ID: "P2", Name: "Compute"}}
	ks.rules.Rules.Tier2 = []knowledge.Rule{
		{ID: "R1", Source: "Brewing Green Tea > Chapter 2. Temperature and Time > 2.1 The temperature rule"},
		{ID: "R2", Source: "Brewing Green Tea > Chapter 1. Water"},
		{ID: "R3", Source: "普洱茶 > 第二章 醒茶与润茶 > 第一节 醒茶"},
		{ID: "R4", Source: "ziping.md"},
	}
	ks.pats.Patterns.QuickPatterns = []knowledge.Pattern{{ID: "P1", Name: "Pattern: the sinking leaf"}}
	got := skillTriggers("tea", ks, 6)
	want := []string{"tea", "Brewing Green Tea", "普洱茶", "ziping", "Temperature and Time", "The temperature rule"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("triggers = %q, want %q", got, want)
	}
	all := skillTriggers("tea", ks, 20)
	for _, w := range []string{"醒茶与润茶", "醒茶", "Water", "the sinking leaf"} {
		found := false
		for _, g := range all {
			found = found || g == w
		}
		if !found {
			t.Errorf("%q missing from %q", w, all)
		}
	}
	for _, g := range all {
		if g == "Collect" || g == "Compute" {
			t.Errorf("phase name %q used as a trigger", g)
		}
	}
}
