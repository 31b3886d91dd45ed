package integrate

import (
	"strings"
	"testing"

	"github.com/vibelife/vibe/knowledge"
	"github.com/vibelife/vibe/workspace"
)

// Two offline "rules" whose conditions name only the reader share no
// situation: opposite wording in their conclusions is no contradiction
// (the chess build of the blind test failed on R038/R040). A real
// contradiction under a condition with content is still found.
func TestContradictionNeedsASituation(t *testing.T) {
	rule := func(id, cond, concl string) knowledge.TieredRule {
		return knowledge.TieredRule{Tier: knowledge.Tier2, Rule: knowledge.Rule{ID: id, Condition: cond, Conclusion: concl}}
	}
	cases := []struct {
		a, b knowledge.TieredRule
		want bool
	}{
		{rule("R038", "(The student", "(The student should work this out.) He cannot win by 1 P"), rule("R040", "the student", "The student should work this out for himself"), false},
		{rule("R005", "you will", "You will need to request the 1 hour in HR Links"), rule("R006", "You will", "You will not need to request the 1 hour in HR Links"), false},
		{rule("R001", "the doubled pawns are isolated", "the doubled pawns are weak in every ending of the game"), rule("R002", "the doubled pawns are isolated", "the doubled pawns are not weak in the ending"), true},
		{rule("R003", "身弱财多", "宜用印绶生身"), rule("R004", "身弱财多", "忌用印绶生身"), true},
	}
	for _, c := range cases {
		ch := &checker{opt: Options{Config: workspace.DefaultConfig().Check, Theme: "t"}, rel: func(p string) string { return p }}
		ch.checkDuplicates([]knowledge.TieredRule{c.a, c.b}, nil, &loaded{path: "rules.yaml"}, nil)
		got := false
		for _, f := range ch.out {
			got = got || strings.HasPrefix(f.Check, "contradiction")
		}
		if got != c.want {
			t.Errorf("%s %q vs %s %q: contradiction %v, want %v (%v)", c.a.ID, c.a.Condition, c.b.ID, c.b.Condition, got, c.want, ch.out)
		}
	}
}
