package runtime

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vibelife/vibe/skills"
)

// An English question over English rules: a rule stating one word of it
// and nothing else ("days") is filler and left out; the rule stating its
// rare words is returned. Before minMatchedRareWords any rule sharing a
// word with an English question passed the cut-off.
func TestGetRulesEnglishCutOff(t *testing.T) {
	root := t.TempDir()
	var b strings.Builder
	b.WriteString("rules:\n  tier2_core:\n")
	rule := func(id, cond, concl string) {
		fmt.Fprintf(&b, "    - id: %s\n      condition: %s\n      conclusion: %s\n      confidence: medium\n      source: Chess Strategy\n      evidence:\n        - chunk: c_%s\n          quote: %s\n", id, cond, concl, strings.ToLower(id), concl)
	}
	rule("R001", "doubled pawns when ISOLATED", "Doubled pawns are weak, for they cannot support each other")
	pieces := []string{"knight", "bishop", "rook", "queen", "king"}
	files := []string{"queen's file", "king's file", "open file", "centre", "seventh rank"}
	n := 2
	for _, p := range pieces {
		for _, f := range files {
			rule(fmt.Sprintf("R%03d", n), fmt.Sprintf("the %s stands on the %s", p, f), fmt.Sprintf("the %s supports the pawn on the %s", p, f))
			n++
		}
	}
	rule("R027", "the game lasts several days", "the players adjourn after forty moves")
	dir := filepath.Join(root, "chess")
	if err := os.MkdirAll(filepath.Join(dir, "knowledge"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte("---\nname: chess\ndescription: chess strategy\n---\n# chess\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "knowledge", "rules.yaml"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	set, err := skills.Open(root, skills.Options{})
	if err != nil {
		t.Fatal(err)
	}
	a, err := New(Config{Skills: set, Memory: NewMemStore()})
	if err != nil {
		t.Fatal(err)
	}
	// "few" is in no rule, "days" in one, "pawns" in most: the rule
	// holding "days" alone states one word of the question.
	ids := getRules(t, a, "chess", "Are doubled pawns weak for a few days?", 5)
	if len(ids) == 0 || ids[0] != "R001" {
		t.Errorf("get_rules = %v, want R001 first", ids)
	}
	if rankOf(ids, "R027") > 0 {
		t.Errorf("get_rules = %v: R027 shares only \"days\" with the question: filler", ids)
	}
	if ids := getRules(t, a, "chess", "Where should the rook stand, on the open file?", 5); rankOf(ids, "R014") != 1 {
		t.Errorf("get_rules(rook, open file) = %v, want R014 (the rook on the open file) first", ids)
	}
}
