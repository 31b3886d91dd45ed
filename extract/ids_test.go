package extract

import (
	"strings"
	"testing"

	"github.com/vibelife/vibe/knowledge"
)

func rule(cond, concl, chunk, quote string) knowledge.Rule {
	return knowledge.Rule{Condition: cond, Conclusion: concl, Evidence: []knowledge.Evidence{{Chunk: chunk, Quote: quote}}}
}

func TestStableIDs(t *testing.T) {
	prev := knowledge.Files{Rules: knowledge.RulesFile{Rules: knowledge.Rules{
		Tier2: []knowledge.Rule{
			withID(rule("身弱", "用印", "c1", "身弱用印"), "R001"),
			withID(rule("财多", "忌财", "c2", "财多忌财"), "R002"),
			withID(rule("官杀混杂", "取清", "c3", "官杀混杂"), "R007"),
		},
	}}}
	var next knowledge.Files
	next.Rules.Rules.Tier1 = []knowledge.Rule{rule("新规则", "新结论", "c9", "新")} // new
	next.Rules.Rules.Tier2 = []knowledge.Rule{
		rule("财 多", "忌财。", "c2", "财多忌财"), // same text modulo spaces/punctuation
		rule("身弱者", "用印绶", "c1", "身弱用印"), // reworded, same evidence
	}
	kept := StableIDs(&next, &prev)
	tests := []struct {
		name string
		got  string
		want string
	}{
		{"new item gets a fresh id above every old one", next.Rules.Rules.Tier1[0].ID, "R008"},
		{"same text keeps its id", next.Rules.Rules.Tier2[0].ID, "R002"},
		{"same evidence keeps its id", next.Rules.Rules.Tier2[1].ID, "R001"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s: got %s, want %s", tt.name, tt.got, tt.want)
		}
	}
	if kept != 2 {
		t.Errorf("kept = %d, want 2", kept)
	}
}

func withID(r knowledge.Rule, id string) knowledge.Rule { r.ID = id; return r }

// A red flag restating a rule links to it (issue 13): by the wording of
// its signal, or by quoting the same span of the same chunk; one that
// restates no rule has no link.
func TestLinkRedFlags(t *testing.T) {
	ev := func(q string) []knowledge.Evidence { return []knowledge.Evidence{{Chunk: "k1", Quote: q}} }
	var f knowledge.Files
	f.Rules.Rules.Tier1 = []knowledge.Rule{{ID: "R1", Condition: "七煞逢财无制", Conclusion: "七煞格败也", Evidence: ev("七煞逢财无制，七煞格败也")}}
	f.Rules.Rules.Tier2 = []knowledge.Rule{{ID: "R7", Condition: "从旺格（气势偏于火土）见水运", Conclusion: "立见其灾", Evidence: ev("若见水运，如以一杯水救车薪之火。立见其灾")}}
	f.Patterns.Patterns.RedFlags = []knowledge.RedFlag{
		{ID: "RF1", Signal: "七煞逢财而无制", Evidence: ev("七煞逢财无制")},
		{ID: "RF2", Signal: "火土从旺之格行北方运", Evidence: ev("立见其灾")},
		{ID: "RF3", Signal: "食神逢枭", Evidence: ev("食神逢枭"), Rule: "R9"},
	}
	LinkRedFlags(&f)
	got := []string{}
	for _, rf := range f.Patterns.Patterns.RedFlags {
		got = append(got, rf.Rule)
	}
	if strings.Join(got, ",") != "R1,R7," {
		t.Errorf("links %q, want R1 (wording), R7 (same quote), none", got)
	}
}
