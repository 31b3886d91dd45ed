package extract

import (
	"fmt"
	"strings"
	"testing"

	"github.com/vibelife/vibe/chunk"
	"github.com/vibelife/vibe/knowledge"
)

// Tiers by content (issue 28): a rule stays in the tier the model gave it;
// a full tier's least important rules give way, listed with where they went
// (room left in tier 2 for a must-know rule, never tier 3); tier 3 holds
// only the model's tier-3 rules, and a rule carries only the note the model
// wrote.
func TestTiersByContent(t *testing.T) {
	ch := &chunk.Chunk{ID: "c1", HeadingPath: []string{"论用神"}}
	var merged []*item
	add := func(tier string, n, importance int, note string) {
		for i := 0; i < n; i++ {
			merged = append(merged, &item{kind: kindRule, tier: tier, condition: fmt.Sprintf("%s 条件 %d-%d", tier, importance, i), conclusion: "结论",
				note: note, importance: importance, ev: []knowledge.Evidence{{Chunk: "c1", Quote: "q"}}, chunk: ch, seq: len(merged)})
		}
	}
	add("tier1", 13, 5, "") // 13 essential must-know rules
	add("tier1", 3, 3, "")  // and 3 lesser ones: 16 graded tier 1
	add("tier2", 46, 4, "")
	add("tier2", 2, 2, "")
	add("tier3", 4, 3, "")
	add("tier3", 1, 3, "惟身旺者不论")
	x := &llmRun{ran: map[string]bool{}}
	sel := x.tiers(merged)
	for _, c := range []struct {
		name  string
		xs    []*item
		allow []string
	}{{"tier1", sel.t1, []string{"tier1"}}, {"tier2", sel.t2, []string{"tier1", "tier2"}}, {"tier3", sel.t3, []string{"tier3"}}} {
		for _, it := range c.xs {
			if !strings.Contains(strings.Join(c.allow, " "), it.tier) {
				t.Errorf("%s holds %q, which the model put in %s", c.name, it.condition, it.tier)
			}
		}
	}
	if len(sel.t1) != maxTier1 || len(sel.t2) != maxTier2 || len(sel.t3) != 5 {
		t.Fatalf("tiers %d / %d / %d, want 10 / 50 / 5", len(sel.t1), len(sel.t2), len(sel.t3))
	}
	for _, it := range sel.t1 {
		if it.importance != 5 {
			t.Errorf("tier 1 keeps %q of importance %d while essential ones gave way", it.condition, it.importance)
		}
	}
	// 6 tier-1 rules gave way and competed in tier 2: the 3 essential ones
	// and one lesser one are kept there, taking the places of tier 2's two
	// importance-2 rules, which gave way in turn; 2 lesser ones are left
	// out. Each is listed with where it went.
	to := map[string]int{}
	for _, g := range x.st.GaveWay {
		to[g.Tier+">"+g.To]++
		if g.Reason == "" || g.Text == "" {
			t.Errorf("gave way without a reason or text: %+v", g)
		}
	}
	if to["tier1_must_know>tier2_core"] != 4 || to["tier1_must_know>"] != 2 || to["tier2_core>"] != 2 || len(x.st.GaveWay) != 8 {
		t.Errorf("gave way: %v (%+v), want 4 tier-1 rules to tier 2, 2 left out, and tier 2's 2 least important out", to, x.st.GaveWay)
	}
	f := x.files(knowledge.SOP{}, sel)
	notes := 0
	for _, r := range f.Rules.Rules.Tier3 {
		if r.Note != "" {
			notes++
			if r.Note != "惟身旺者不论" {
				t.Errorf("tier-3 rule %q has a note the model did not write: %q", r.Condition, r.Note)
			}
		}
	}
	if notes != 1 {
		t.Errorf("%d tier-3 rules with a note, want the one the model wrote", notes)
	}
}
