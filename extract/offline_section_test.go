package extract

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/vibelife/vibe/chunk"
	"github.com/vibelife/vibe/knowledge"
)

// A handbook's sentences addressed to the reader, or leaving their subject
// to their heading, are rules whose condition is the heading; the rules
// are extra (get_rules finds them, the skill's vocabulary and tier 1 are
// not made of them), and every one cites the heading it borrows. A
// purpose clause or a quantified subject is the sentence's own condition.
// A sentence a list completes, or a question, makes none.
func TestSectionRules(t *testing.T) {
	sec := func(i int, heading, body string) chunk.Chunk {
		return chunk.Chunk{ID: fmt.Sprintf("leave.md#%d", i), Doc: "leave.md", HeadingPath: []string{"Leave", heading}, Text: "## " + heading + "\n\n" + body}
	}
	chunks := []chunk.Chunk{
		sec(0, "Military leave", "You can receive 15 Military Leave days each year for active duty and training in the National Guard."),
		sec(1, "Voting and poll volunteering", "You can receive up to 4 hours for each election event."),
		sec(2, "Laundry expenses", "May only be reimbursable if travel involves at least 4 consecutive nights."),
		sec(3, "Meals and Incidental Expenses", "On the first and last day of travel you receive a reduced rate. This reduced rate is always 75% of normal M&IE, regardless of the hours spent traveling."),
		sec(4, "Unpaid leave", "To request over 80 hours of LWOP, you must get written approval from your immediate supervisor and Business Unit Director."),
		sec(5, "Sick leave", "All federal employees, no matter how long they have worked in government, accrue four hours of sick leave per pay period.\n\nYou can use Sick Leave for:\n\n- medical appointments"),
		sec(6, "Comp time", "Your supervisor can approve your requests first if you are in danger of losing leave because of “Use or Lose.” Comp time expires one year (26 pay periods) after it is earned."),
		sec(7, "Rebooking", "Should you need to rebook your travel at any point, read the instructions here."),
	}
	f, err := Offline(context.Background(), "travel", chunks, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"You can receive 15 Military Leave days":      "Military leave",
		"You can receive up to 4 hours":               "Voting and poll volunteering",
		"May only be reimbursable":                    "Laundry expenses",
		"This reduced rate is always 75%":             "Meals and Incidental Expenses",
		"To request over 80 hours of LWOP":            "requesting over 80 hours of LWOP",
		"All federal employees, no matter how long":   "all federal employees",
		"Comp time expires one year (26 pay periods)": "comp time",
	}
	fromHeading := map[string]bool{"Military leave": true, "Voting and poll volunteering": true, "Laundry expenses": true, "Meals and Incidental Expenses": true}
	for _, r := range f.Rules.Rules.All() {
		q := r.Evidence[0].Quote
		if strings.Contains(q, "Sick Leave for") || strings.Contains(q, "Should you") {
			t.Errorf("%s: %q made a rule (%s → %s)", r.ID, q, r.Condition, r.Conclusion)
		}
		for k, cond := range want {
			if !strings.HasPrefix(q, k) {
				continue
			}
			delete(want, k)
			if r.Condition != cond {
				t.Errorf("%q: condition %q, want %q", q, r.Condition, cond)
			}
			if fromHeading[cond] && (r.Tier != knowledge.Tier2 || !r.Extra) {
				t.Errorf("%q: a rule from its heading should be an extra tier-2 rule: %+v", q, r)
			}
		}
	}
	for k := range want {
		t.Errorf("no rule from %q", k)
	}
}

// The forms of a rule a classical medical book writes: the clauses of a
// case, then the formula that treats it (……者，桂枝汤主之) or what to add
// (……，加厚朴杏子佳); a verdict before a 则 that only gives its reason
// (若酒客病，不可与桂枝汤，得汤则呕). Without an opening word, a verdict
// before 则 is no rule of its own (喜木生扶: whose, the text before says).
func TestZhPrescriptionRules(t *testing.T) {
	for _, tt := range []struct{ in, cond, concl string }{
		{"太阳病，头痛发热，汗出恶风者，桂枝汤主之。", "太阳病，头痛发热，汗出恶风", "桂枝汤主之"},
		{"喘家作桂枝汤，加厚朴杏子佳。", "喘家作桂枝汤", "加厚朴杏子佳"},
		{"若酒客病，不可与桂枝汤，得汤则呕，以酒客不喜甘故也。", "酒客病", "不可与桂枝汤，得汤则呕，以酒客不喜甘故"},
	} {
		p, ok := parseRule(tt.in, true)
		if !ok || p.Cond != tt.cond || p.Concl != tt.concl {
			t.Errorf("%q -> %+v, %v; want %q -> %q", tt.in, p, ok, tt.cond, tt.concl)
		}
	}
	for _, s := range []string{"喜木生扶，不宜过旺，旺则火炎；", "伤寒，桂枝汤方。"} {
		if p, ok := parseRule(s, true); ok {
			t.Errorf("%q made a rule: %+v", s, p)
		}
	}
}

// An English sentence may end inside its closing quote or bracket, and an
// aside in brackets that holds sentences of its own is read as those.
func TestSplitSentencesQuoteAndAside(t *testing.T) {
	text := "Approve it first because of “Use or Lose.” Comp time expires after a year.\n\n" +
		"Only a good player will prevail. (The rule is that you may demand mate within fifty moves. However, the count begins afresh after a capture.)"
	var got []string
	for _, sp := range splitSentences(text) {
		got = append(got, sp.Text)
		if text[sp.Off:sp.Off+len(sp.Text)] != sp.Text {
			t.Errorf("offset %d does not locate %q", sp.Off, sp.Text)
		}
	}
	want := []string{
		"Approve it first because of “Use or Lose.”",
		"Comp time expires after a year.",
		"Only a good player will prevail.",
		"The rule is that you may demand mate within fifty moves.",
		"However, the count begins afresh after a capture.",
	}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("got\n%q\nwant\n%q", got, want)
	}
}

func TestSectionTopic(t *testing.T) {
	for _, tt := range []struct{ h, want string }{
		{"3. Laundry expenses", "Laundry expenses"},
		{"16. QUEEN AGAINST ROOK", "QUEEN AGAINST ROOK"},
		{"CHAPTER III", ""},
		{"GAME NO. 37", ""},
		{"Kt - B 3 Kt - B 3", ""},
		{"RxKt", ""},
		{"论正官", ""},
	} {
		c := &chunk.Chunk{HeadingPath: []string{tt.h}}
		if got := enSectionTopic(c); got != tt.want {
			t.Errorf("enSectionTopic(%q) = %q, want %q", tt.h, got, tt.want)
		}
	}
}
