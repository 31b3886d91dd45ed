package runtime

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
)

// leaveSkill is an English skill whose rules name their subject with a
// capital ("Award leave …", "Credit hours balance …") or by an
// abbreviation the glossary lists (LWOP for leave without pay).
var leaveSkill = map[string]string{
	"leave/SKILL.md": "---\nname: leave\ndescription: Answers leave and travel questions\ntriggers: [leave, travel]\n---\n# Leave\n",
	"leave/knowledge/rules.yaml": `rules:
  tier1_must_know: []
  tier2_core:
    - id: R021
      condition: Award leave in a single fiscal year
      conclusion: maximum 80 hours
      confidence: high
      source: Leave types > Award leave
    - id: R027
      condition: To request 80 hours or less of LWOP
      conclusion: you must get written approval from your immediate supervisor
      confidence: high
      source: Leave types > Unpaid leave
    - id: R030
      condition: Credit hours balance above 24 hours
      conclusion: the excess hours are forfeited at the end of the pay period
      confidence: high
      source: Work schedules > Credit hours
    - id: R031
      condition: Any nonrefundable fare (e.g. Lowest published fare)
      conclusion: must be approved by the authorizing official before booking
      confidence: high
      source: Travel > Airfare
  tier3_reference: []
`,
	"leave/knowledge/glossary.yaml": `terms:
  - term: award leave
    aliases: [time-off award]
  - term: leave without pay
    aliases: [LWOP, unpaid leave]
  - term: credit hours
    aliases: [credit time]
  - term: lowest published fare
    aliases: [lowest published]
  - term: jury duty
`,
}

// TestGetRulesStatesLatinTermsAnyCase: a rule stating the question's term
// in another case, or by one of the glossary entry's other names, answers
// it: no "no rule states" note, the rule among the rules, not partial.
// A term no rule states still gets the note.
func TestGetRulesStatesLatinTermsAnyCase(t *testing.T) {
	ctx := context.Background()
	a := agentOver(t, writeSkills(t, "", leaveSkill), nil, nil)
	for _, c := range []struct{ q, want string }{
		{"How much award leave can I get in a year?", "R021"},
		{"Who approves leave without pay?", "R027"},
		{"What happens to my credit hours above the limit?", "R030"},
		{"Can I book the lowest published fare?", "R031"},
	} {
		raw, err := a.getRules(ctx, []string{"leave"}, c.q, 5)
		if err != nil {
			t.Fatal(err)
		}
		var res struct {
			Rules   []struct{ ID string }
			Partial []struct{ ID string }
			Note    string
		}
		if err := json.Unmarshal(raw, &res); err != nil {
			t.Fatal(err)
		}
		if len(res.Partial) > 0 || res.Note != "" || !slices.ContainsFunc(res.Rules, func(r struct{ ID string }) bool { return r.ID == c.want }) {
			t.Errorf("%q: want %s among the rules, no note; got %s", c.q, c.want, raw)
		}
	}
	sk, err := a.cfg.Skills.Get("leave")
	if err != nil {
		t.Fatal(err)
	}
	idx, err := a.rules.get(sk)
	if err != nil {
		t.Fatal(err)
	}
	if !idx.statesAny([]string{"AWARD LEAVE"}) || !idx.statesAny([]string{"leave without pay", "LWOP"}) {
		t.Error("statesAny misses a Latin name in another case or an alias")
	}
	if idx.statesAny([]string{"jury duty"}) {
		t.Error("statesAny: no rule states jury duty")
	}
	if gap := idx.subjectGap("jury duty leave", false); !slices.Equal(gap, []string{"jury duty"}) {
		t.Errorf("subjectGap(jury duty leave) = %v, want [jury duty]", gap)
	}
}
