package extract

import (
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
