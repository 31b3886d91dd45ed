package runtime

import (
	"fmt"
	"testing"

	"github.com/vibelife/vibe/knowledge"
	"github.com/vibelife/vibe/skills"
)

// extraRulesIndex indexes a rules file shaped as an offline build writes
// one: a core of rules on many topics and extra tier-2 rules, one a chunk,
// among them two whose subject is 金神 and one that names 财多身弱 inside
// another topic.
func extraRulesIndex(t *testing.T) *ruleIndex {
	t.Helper()
	var rs knowledge.Rules
	core := []string{"阳刃用之", "身弱无制伏", "伤官见官", "正官：遇财", "七杀：有制", "印绶：逢财", "食神：生财", "偏财：身强", "正财：身旺", "比肩：分财"}
	for i, c := range core {
		rs.Tier2 = append(rs.Tier2, knowledge.Rule{ID: fmt.Sprintf("R%03d", i+1), Condition: c, Conclusion: "为贵", Confidence: "medium"})
	}
	extra := []knowledge.Rule{
		{Condition: "金神：惧水乡", Conclusion: "非福"},
		{Condition: "金神：四柱中更带七杀阳刃", Conclusion: "真贵人"},
		{Condition: "三秋丁火：一派庚金，名财多身弱", Conclusion: "主富屋贫人"},
		{Condition: "正财：身弱", Conclusion: "其祸立至"},
	}
	for i, r := range extra {
		r.ID, r.Confidence, r.Extra = fmt.Sprintf("R%03d", len(core)+i+1), "medium", true
		rs.Tier2 = append(rs.Tier2, r)
	}
	g := NewGlossary(skills.Glossary{Terms: []skills.GlossaryTerm{
		{Term: "金神", Pinyin: []string{"jin shen"}},
		{Term: "财多身弱"},
		{Term: "身弱"},
	}})
	idx := indexRules(rs.All(), g)
	idx.core = indexRules(rs.Core(), g)
	return idx
}

// An extra rule joins get_rules' answer only when its subject is what the
// question names: 金神：… for a question on 金神 the core does not answer;
// not 三秋丁火：…名财多身弱 or 正财：身弱 for 身弱财多怎么办, which stays what
// the core says of it.
func TestExtraRulesJoinOnlyWhenAboutTheQuestion(t *testing.T) {
	idx := extraRulesIndex(t)
	got, missing := idx.answer("金神的命要什么", Bridged{}, 3)
	if len(missing) > 0 || len(got) == 0 {
		t.Fatalf("金神的命要什么: rules %v, missing %v; want the 金神 rules", got, missing)
	}
	for _, r := range got {
		if !r.Extra || ruleSubject(r.Condition) != "金神" {
			t.Errorf("金神的命要什么: rule %q, want only rules whose subject is 金神", r.Condition)
		}
	}
	core, coreMissing := idx.core.answer("身弱财多怎么办", Bridged{}, 3)
	got, missing = idx.answer("身弱财多怎么办", Bridged{}, 3)
	for _, r := range got {
		if r.Extra {
			t.Errorf("身弱财多怎么办: extra rule %q joined, want the core's answer only", r.Condition)
		}
	}
	if len(got) != len(core) || fmt.Sprint(missing) != fmt.Sprint(coreMissing) {
		t.Errorf("身弱财多怎么办: %v (missing %v), want the core's %v (missing %v)", got, missing, core, coreMissing)
	}
}

// The core decides alone when it fills the k places: the extra rules never
// push out a core rule.
func TestExtraRulesNeverDisplaceTheCore(t *testing.T) {
	idx := extraRulesIndex(t)
	q := []weighted{{"金神阳刃用之", 1}}
	core := idx.core.rank(q, 1, minRuleScore)
	if len(core) != 1 {
		t.Fatalf("core ranks %d rules for 金神阳刃用之, want 1", len(core))
	}
	got, _ := idx.withExtras("金神阳刃用之", q, core, nil, 1, minRuleScore)
	if len(got) != 1 || got[0].ID != core[0].ID {
		t.Errorf("withExtras with k=1: %v, want the core's %v", got, core)
	}
	got, _ = idx.withExtras("金神阳刃用之", q, core, nil, 3, minRuleScore)
	if len(got) < 2 || got[0].ID != core[0].ID {
		t.Errorf("withExtras with k=3: %v, want the core's %s first, then the 金神 rules", got, core[0].ID)
	}
}

func TestRuleSubject(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"金神：惧水乡", "金神"},
		{"Annual leave: more than 20 days", "Annual leave"},
		{"魁罡重叠有情，主富高于名", "魁罡重叠有情，主富高于名"},
	} {
		if got := ruleSubject(c.in); got != c.want {
			t.Errorf("ruleSubject(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
