package runtime

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/vibelife/vibe/knowledge"
	"github.com/vibelife/vibe/skills"
)

// TestRuleRanking measures get_rules on the demo's 32 rules (frozen in
// testdata/rank) with 18 questions in English and Chinese, each with the
// rules that answer it: a right rule must be in the top 3 for at least 16
// (the misses: an English question about rules written in Chinese, and
// "how long to steep black tea" whose rules say "brew … minutes"), with a
// mean reciprocal rank of at least 0.8.
func TestRuleRanking(t *testing.T) {
	// The demo's rules with the demo theme's glossary, which carries
	// English questions over to the rules written in Chinese.
	root := t.TempDir()
	for rel, src := range map[string]string{
		"SKILL.md":                filepath.Join("testdata", "rank", "tea", "SKILL.md"),
		"knowledge/rules.yaml":    filepath.Join("testdata", "rank", "tea", "knowledge", "rules.yaml"),
		"knowledge/glossary.yaml": filepath.Join("..", "examples", "demo", "theme", "glossary.yaml"),
	} {
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(root, "tea", filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	set, err := skills.Open(root, skills.Options{})
	if err != nil {
		t.Fatal(err)
	}
	a, err := New(Config{Skills: set, Memory: NewMemStore()})
	if err != nil {
		t.Fatal(err)
	}
	questions := []struct {
		q    string
		want []string
	}{
		{"How hot should the water be for green tea?", []string{"R003", "R015", "R016"}},
		{"water temperature for green tea", []string{"R003", "R015", "R016"}},
		{"How long should I steep black tea?", []string{"R010", "R011", "R012"}},
		{"普洱茶每100毫升投多少克？", []string{"R008", "R027"}},
		{"白茶怎么存放", []string{"R030", "R031"}},
		{"my oolong tastes sour", []string{"R022"}},
		{"can I add milk?", []string{"R012"}},
		{"银针用多少度的水", []string{"R009"}},
		{"my green tea is bitter", []string{"R017", "R019"}},
		{"how much oolong do I put in the pot", []string{"R020"}},
		{"新饼有仓味怎么办", []string{"R024", "R023"}},
		{"the pu'er tastes sour and cloudy", []string{"R026"}},
		{"熟普汤色浑浊有酸味", []string{"R026"}},
		{"is the cloudy black tea spoiled?", []string{"R013"}},
		{"tap water smells of chlorine", []string{"R014"}},
		{"white frost on my tea", []string{"R001"}},
		{"茶叶上有白霜还能喝吗", []string{"R001"}},
		{"老白茶能用开水吗", []string{"R029"}},
	}
	hits, mrr := 0, 0.0
	for _, tt := range questions {
		rs, _, err := a.rulesFor("tea", tt.q, 20, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(rs) > 20 {
			t.Fatalf("%q: %d rules for k=20", tt.q, len(rs))
		}
		rank := 0
		for i, r := range rs {
			for _, w := range tt.want {
				if r.ID == w && rank == 0 {
					rank = i + 1
				}
			}
		}
		if rank > 0 {
			mrr += 1 / float64(rank)
		}
		if rank > 0 && rank <= 3 {
			hits++
		} else {
			t.Logf("%q: first right rule at rank %d", tt.q, rank)
		}
	}
	mrr /= float64(len(questions))
	t.Logf("hit@3 %d/%d, MRR %.3f", hits, len(questions), mrr)
	if hits < 16 || mrr < 0.8 {
		t.Errorf("hit@3 %d/%d, MRR %.3f: want at least 16 and 0.8", hits, len(questions), mrr)
	}
}

// TestRuleLine renders a rule for the prompt and the offline answer: English
// parts keep the source's wording whatever letter it starts with, joined by
// an arrow rather than pasted inside "if …, then …"; Chinese uses 如果…则….
// A rule with a conclusion and an action shows both.
func TestRuleLine(t *testing.T) {
	ev := []knowledge.Evidence{{Chunk: "c_1", Quote: "q"}}
	cases := []struct {
		r    knowledge.TieredRule
		want string
	}{
		{knowledge.TieredRule{Tier: "tier1_must_know", Rule: knowledge.Rule{ID: "R003", Condition: "brewing green tea", Action: "Never brew green tea with water at a rolling boil", Source: "Green > Water", Evidence: ev}},
			"R003 (tier1_must_know): Brewing green tea → Never brew green tea with water at a rolling boil (Green > Water) [c_1]"},
		{knowledge.TieredRule{Tier: "tier2_core", Rule: knowledge.Rule{ID: "R019", Condition: "A bitter edge appears", Conclusion: "the first infusion was too long", Source: "Green"}},
			"R019 (tier2_core): A bitter edge appears → The first infusion was too long (Green)"},
		{knowledge.TieredRule{Tier: "tier1_must_know", Rule: knowledge.Rule{ID: "R006", Condition: "冲泡普洱", Action: "必用厚壁之器", Source: "普洱", Evidence: ev}},
			"R006 (tier1_must_know): 如果冲泡普洱，则必用厚壁之器（普洱） [c_1]"},
		// A tier-1 rule with both: what follows, then the instruction.
		{knowledge.TieredRule{Tier: "tier1_must_know", Rule: knowledge.Rule{ID: "R001", Condition: "sealing the starter jar airtight", Conclusion: "the gas it makes can crack the glass", Action: "Never seal the starter jar airtight", Source: "Starter", Evidence: ev}},
			"R001 (tier1_must_know): Sealing the starter jar airtight → The gas it makes can crack the glass; action: Never seal the starter jar airtight (Starter) [c_1]"},
		{knowledge.TieredRule{Tier: "tier1_must_know", Rule: knowledge.Rule{ID: "R002", Condition: "伤官见官", Conclusion: "为祸百端", Action: "避免官星透出", Source: "子平真诠"}},
			"R002 (tier1_must_know): 如果伤官见官，则为祸百端；应当：避免官星透出（子平真诠）"},
		// A condition that is only the subject the statement opens with (an
		// offline "S must V" rule) is not said twice.
		{knowledge.TieredRule{Tier: "tier1_must_know", Rule: knowledge.Rule{ID: "R001", Condition: "The standing trustee", Conclusion: "The standing trustee must deposit funds only in an authorized depository", Source: "Handbook", Evidence: ev}},
			"R001 (tier1_must_know): The standing trustee must deposit funds only in an authorized depository (Handbook) [c_1]"},
		{knowledge.TieredRule{Tier: "tier2_core", Rule: knowledge.Rule{ID: "R004", Condition: "the standing trustee", Conclusion: "The standing trustee must not accept cash", Source: "Handbook"}},
			"R004 (tier2_core): The standing trustee must not accept cash (Handbook)"},
	}
	for _, c := range cases {
		if got := ruleLine(c.r); got != c.want {
			t.Errorf("ruleLine(%s)\n got %q\nwant %q", c.r.ID, got, c.want)
		}
		if got := ruleText(c.r); c.r.Condition == "The standing trustee" && got != c.r.Conclusion {
			t.Errorf("ruleText(%s) = %q, want the statement alone", c.r.ID, got)
		}
	}
}
