package runtime

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/vibelife/vibe/knowledge"
	"github.com/vibelife/vibe/skills"
)

// extraRulesIndex indexes a rules file shaped as an offline build writes
// one: a core of rules on many topics and extra tier-2 rules, one a chunk,
// among them two whose subject is 金神 and one that names 财多身弱 inside
// another topic.
func extraRulesIndex(t *testing.T) *ruleIndex {
	t.Helper()
	rs, gl := extraRulesFixture()
	g := NewGlossary(gl)
	idx := indexRules(rs.All(), g)
	idx.core = indexRules(rs.Core(), g)
	return idx
}

// extraRulesFixture returns the rules and glossary extraRulesIndex indexes.
func extraRulesFixture() (knowledge.Rules, skills.Glossary) {
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
	return rs, skills.Glossary{Terms: []skills.GlossaryTerm{
		{Term: "金神", Pinyin: []string{"jin shen"}},
		{Term: "财多身弱"},
		{Term: "身弱"},
		{Term: "魁罡"},
	}}
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

// An extra rule whose condition states the term the question names takes
// the place of a weaker core rule that does not, and a core rule scoring
// below half the best stating rule is filler the answer leaves out: the
// five bazi books built offline answered "伤官见官会怎样" with 格局：伤官见官果难辨,
// 伤官若伤尽 and 恒不喜见官星 → 忌倒食 before the two rules 伤官见官 → 为祸百端.
func TestExtraRuleStatingTheTermComesFirst(t *testing.T) {
	var rs knowledge.Rules
	core := []knowledge.Rule{
		{Condition: "格局：伤官见官果难辨", Conclusion: "可见不可见"},
		{Condition: "恒不喜见官星", Conclusion: "忌倒食，恐伤其食神"},
		{Condition: "正官：遇财", Conclusion: "为贵"},
		{Condition: "七杀：有制", Conclusion: "为权"},
		{Condition: "印绶：逢财", Conclusion: "为忌"},
		{Condition: "食神：生财", Conclusion: "为富"},
	}
	for i, r := range core {
		r.ID, r.Confidence = fmt.Sprintf("R%03d", i+1), "medium"
		rs.Tier2 = append(rs.Tier2, r)
	}
	extra := []knowledge.Rule{
		{Condition: "伤官见官", Conclusion: "为祸百端"},
		{Condition: "偏财：身强", Conclusion: "为福"},
	}
	for i, r := range extra {
		r.ID, r.Confidence, r.Extra = fmt.Sprintf("R%03d", len(core)+i+1), "medium", true
		rs.Tier2 = append(rs.Tier2, r)
	}
	g := NewGlossary(skills.Glossary{Terms: []skills.GlossaryTerm{{Term: "伤官见官"}, {Term: "官星"}}})
	idx := indexRules(rs.All(), g)
	idx.core = indexRules(rs.Core(), g)
	q := "伤官见官会怎样"
	// What the core ranks (before heldOfBest) is what withExtras is given.
	coreAns, _ := idx.core.answerRanked(q, Bridged{}, answerParts(q, Bridged{}), 5)
	if len(coreAns) < 2 || coreAns[1].Condition != "恒不喜见官星" {
		t.Fatalf("the core alone answers %q with %v, want 恒不喜见官星 second (the case this test is about)", q, coreAns)
	}
	got, missing := idx.answer(q, Bridged{}, 5)
	if len(missing) > 0 || len(got) < 2 || got[1].Condition != "伤官见官" {
		t.Fatalf("%s: %v (missing %v), want 伤官见官 → 为祸百端 second, after 格局：伤官见官果难辨", q, got, missing)
	}
	for _, r := range got[2:] {
		if r.Score < minExtraShare*got[1].Score {
			t.Errorf("%s: %q (%.3f) kept beside 伤官见官 (%.3f): filler", q, r.Condition, r.Score, got[1].Score)
		}
	}
}

// The offline answer says which term no rule states before it lists the
// rules that match the rest of the question (身弱无制伏 → 为贵 for
// 魁罡日身弱怎么办, which asks about 魁罡), as get_rules' note says it to a
// model; before, the rules were listed as the answer.
func TestOfflineAnswerSaysNoRuleStatesTheTerm(t *testing.T) {
	idx := extraRulesIndex(t)
	if _, missing := idx.answer("魁罡日身弱怎么办", Bridged{}, 5); len(missing) == 0 {
		t.Fatalf("the fixture answers 魁罡日身弱怎么办 in full; the test needs a term no rule states")
	}
	rs, g := extraRulesFixture()
	rulesYAML, err := yaml.Marshal(knowledge.RulesFile{Rules: rs})
	if err != nil {
		t.Fatal(err)
	}
	glossYAML, err := yaml.Marshal(g)
	if err != nil {
		t.Fatal(err)
	}
	root := writeSkills(t, "", map[string]string{
		"bazi/SKILL.md":                "---\nname: bazi\ndescription: 八字命理（测试）\n---\n看八字。\n",
		"bazi/knowledge/rules.yaml":    string(rulesYAML),
		"bazi/knowledge/glossary.yaml": string(glossYAML),
	})
	a := agentOver(t, root, nil, nil)
	rules, missing, err := a.rulesFor("bazi", "魁罡日身弱怎么办", 5, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(rules) == 0 || fmt.Sprint(missing) != "[魁罡]" {
		t.Fatalf("rulesFor(魁罡日身弱怎么办) = %v, missing %v; want the partial rules and 魁罡", rules, missing)
	}
	answer, err := a.Turn(context.Background(), TurnRequest{UserID: "u", Message: "魁罡日身弱怎么办", Skill: "bazi"}, func(Event) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	note := strings.Index(answer, "没有规则论及 魁罡")
	if note < 0 {
		t.Fatalf("offline answer to 魁罡日身弱怎么办:\n%s\nwant the note that no rule states 魁罡", answer)
	}
	if i := strings.Index(answer, "身弱无制伏"); i >= 0 && i < note {
		t.Errorf("offline answer to 魁罡日身弱怎么办:\n%s\nlists a partial rule before the note", answer)
	}
}

// An extra rule that clearly outscores every core rule on the whole file
// (minExtraLead) joins the answer in its place by score even when the core
// fills the k places with rules sharing a word or two with the question:
// the travel policies built offline answered "As a supervisor, can I get
// reimbursed for professional liability insurance?" with three core rules
// on other reimbursements and left out the extra rule that answers it.
func TestExtraRuleFarAboveTheCoreJoins(t *testing.T) {
	var rs knowledge.Rules
	core := [][2]string{
		{"you were reimbursed to your bank account for a charge made on your travel card", "you will have to pay the bill for it"},
		{"that is the case", "proceed as normal and return to this step when creating your voucher after you get back"},
		{"you spent less than the allowance", "you get to keep the difference, and if you spend more, you must pay the difference"},
		{"you need to use advanced leave", "talk to your supervisor"},
		{"you take parental leave intermittently", "the 12 week period still begins after your final day"},
		{"your flight is cancelled", "call the travel agency"},
	}
	for i, c := range core {
		rs.Tier2 = append(rs.Tier2, knowledge.Rule{ID: fmt.Sprintf("R%03d", i+1), Condition: c[0], Conclusion: c[1], Confidence: "medium"})
	}
	extra := [][2]string{
		{"reimbursing supervisors", "Supervisors may be reimbursed for up to half the cost of professional liability insurance, up to $150"},
		{"baggage fees for one bag", "Baggage fees for one bag may be reimbursed per leg without further justification"},
		{"laundry on long trips", "Laundry may be reimbursed after four nights"},
		{"the hotel charges a resort fee", "The resort fee is not reimbursed"},
	}
	for i, c := range extra {
		rs.Tier2 = append(rs.Tier2, knowledge.Rule{ID: fmt.Sprintf("R%03d", len(core)+i+1), Condition: c[0], Conclusion: c[1], Confidence: "medium", Extra: true})
	}
	idx := indexRules(rs.All(), nil)
	idx.core = indexRules(rs.Core(), nil)
	q := "As a supervisor, can I get reimbursed for professional liability insurance?"
	got, _ := idx.answer(q, Bridged{}, 3)
	if len(got) == 0 || !strings.Contains(got[0].Conclusion, "liability insurance") {
		t.Errorf("%s: %v, want Supervisors may be reimbursed… first", q, got)
	}
	if len(got) > 3 {
		t.Errorf("%s: %d rules, want at most 3", q, len(got))
	}
}

// A core rule whose condition states nothing of the question (it matches
// by its conclusion's words: "after you get back") does not keep out an
// extra rule whose condition states the question's subject and that
// scores above it on the whole file: the travel policies built offline
// answered "How much meal per diem do I get on the day I fly out and the
// day I fly back?" with three such core rules and left out Meals and
// Incidental Expenses (M&IE) → This reduced rate is always 75%…, and "Can I
// get time off work to vote…?" without the rule under "Voting and poll
// volunteering" (voting is vote).
func TestExtraRuleAboutTheQuestionOutranksCoreFiller(t *testing.T) {
	rs := fillerRulesFixture()
	idx := indexRules(rs.All(), nil)
	idx.core = indexRules(rs.Core(), nil)
	for q, want := range fillerQuestions {
		for _, k := range []int{3, 10} {
			got, _ := idx.answer(q, Bridged{}, k)
			if len(got) == 0 || !strings.Contains(got[0].Conclusion, want) {
				t.Errorf("%s (k=%d): %v, want the rule saying %s first", q, k, got, want)
			}
			if len(got) > k {
				t.Errorf("%s: %d rules, want at most %d", q, len(got), k)
			}
		}
	}
}

// fillerQuestions are travel questions the extra rules of
// fillerRulesFixture answer, with what the answering rule says.
var fillerQuestions = map[string]string{
	"How much meal per diem do I get on the day I fly out and the day I fly back?": "75%",
	"Can I get time off work to vote in a local election?":                         "4 hours",
}

// fillerRulesFixture is a travel handbook's offline rules: a core whose
// rules match the questions of fillerQuestions only by words of their
// conclusions, and extra rules that answer them.
func fillerRulesFixture() knowledge.Rules {
	var rs knowledge.Rules
	core := [][2]string{
		{"that is the case", "proceed as normal and return to this step when creating your voucher after you get back"},
		{"you are requesting leave for multiple days", "return to the top and enter the last full day you are traveling"},
		{"you spent less than the allowance", "you get to keep the difference, and if you spend more, you must pay the difference"},
		{"you are required to work additional hours", "you will receive overtime or comp time"},
		{"you expect not to be available", "mark that time on your calendar"},
		{"your flight is cancelled", "call the travel agency"},
	}
	for i, c := range core {
		rs.Tier2 = append(rs.Tier2, knowledge.Rule{ID: fmt.Sprintf("R%03d", i+1), Condition: c[0], Conclusion: c[1], Confidence: "medium"})
	}
	extra := [][2]string{
		{"Meals and Incidental Expenses (M&IE)", "This reduced rate is always 75% of normal M&IE, regardless of how much of the day was spent traveling"},
		{"selecting your location", "it will auto-populate the per diem location"},
		{"Voting and poll volunteering", "You can receive up to 4 hours for each election event"},
		{"Paid Parental Leave", "You are entitled to 12 weeks of paid time off for the birth of a child"},
		{"laundry on long trips", "Laundry may be reimbursed after four nights"},
	}
	for i, c := range extra {
		rs.Tier2 = append(rs.Tier2, knowledge.Rule{ID: fmt.Sprintf("R%03d", len(core)+i+1), Condition: c[0], Conclusion: c[1], Confidence: "medium", Extra: true})
	}
	return rs
}

// An extra rule far above the core (minExtraLead) takes its place by score
// even when its subject names the glossary term the question does and so
// do the core's rules: "Doubled pawns are weak" came fourth, after three
// core rules on a pawn, for "Are doubled pawns always a weakness?".
func TestExtraRuleFarAboveTheCoreJoinsWhenAboutTheTerm(t *testing.T) {
	var rs knowledge.Rules
	core := [][2]string{
		{"Black recaptures with the pawn", "he must lose a move with the Bishop to avoid an isolated doubled pawn"},
		{"the King is more than one rank ahead of his pawn", "the end-game can always be won"},
		{"a passed Pawn", "a passed Pawn increases in strength as the pieces diminish"},
		{"the Queen recaptures", "White obtains too great an advantage in development"},
		{"a King is unable to move", "the King is said to be stale-mated"},
	}
	for i, c := range core {
		rs.Tier2 = append(rs.Tier2, knowledge.Rule{ID: fmt.Sprintf("R%03d", i+1), Condition: c[0], Conclusion: c[1], Confidence: "medium"})
	}
	extra := [][2]string{
		{"doubled pawns when isolated", "Doubled pawns are weak"},
		{"a pawn", "a pawn can only capture pieces on squares of the same colour"},
		{"the rooks reach the seventh rank", "the game is usually won"},
	}
	for i, c := range extra {
		rs.Tier2 = append(rs.Tier2, knowledge.Rule{ID: fmt.Sprintf("R%03d", len(core)+i+1), Condition: c[0], Conclusion: c[1], Confidence: "medium", Extra: true})
	}
	g := NewGlossary(skills.Glossary{Terms: []skills.GlossaryTerm{{Term: "pawns"}}})
	idx := indexRules(rs.All(), g)
	idx.core = indexRules(rs.Core(), g)
	q := "Are doubled pawns always a weakness?"
	for _, k := range []int{3, 10} {
		got, _ := idx.answer(q, Bridged{}, k)
		if !slices.ContainsFunc(got[:min(3, len(got))], func(r scoredRule) bool { return r.Conclusion == "Doubled pawns are weak" }) {
			t.Errorf("%s (k=%d): %v, want Doubled pawns are weak among the first 3", q, k, got)
		}
	}
}

// The get_rules tool ranks a skill's rules as its answer does (and as
// Agent.Rules, which the evals score): the extra rule placed before the
// core's filler stays first, not re-sorted below core rules whose scores
// come from the core alone.
func TestGetRulesToolKeepsTheAnswersOrder(t *testing.T) {
	rs := fillerRulesFixture()
	body, err := yaml.Marshal(knowledge.RulesFile{Rules: rs})
	if err != nil {
		t.Fatal(err)
	}
	root := writeSkills(t, "", map[string]string{
		"trav/SKILL.md":             "---\nname: trav\ndescription: Travel and leave rules of a federal agency's handbook\n---\n# trav\n",
		"trav/knowledge/rules.yaml": string(body),
	})
	a := agentOver(t, root, nil, nil)
	for q, want := range fillerQuestions {
		for _, k := range []int{3, 10} {
			ids := getRules(t, a, "trav", q, k)
			rules, err := a.Rules("trav", q, k)
			if err != nil {
				t.Fatal(err)
			}
			var evalIDs []string
			for _, r := range rules {
				evalIDs = append(evalIDs, r.ID)
			}
			if !slices.Equal(ids, evalIDs) {
				t.Errorf("%s (k=%d): get_rules gives %v, Agent.Rules %v", q, k, ids, evalIDs)
			}
			if len(ids) == 0 || !strings.Contains(ruleByID(rs, ids[0]).Conclusion, want) {
				t.Errorf("%s (k=%d): get_rules gives %v first, want the rule saying %s", q, k, ids, want)
			}
		}
	}
}

func ruleByID(rs knowledge.Rules, id string) knowledge.Rule {
	for _, r := range rs.All() {
		if r.ID == id {
			return r.Rule
		}
	}
	return knowledge.Rule{}
}

// A request for ten rules returns fewer when fewer answer: the rules that
// share one common word with the question ("leave") pass every absolute
// floor of rank, and with k = 3 only the rank kept them out of sight; with
// k = 10 they filled the places after the answer. A rule stating less than
// half of what the best rule states of the question is left out, whatever
// k (heldOfBest), and the answer's order is kept.
func TestGetRulesAtTenReturnsOnlyWhatAnswers(t *testing.T) {
	var rs knowledge.Rules
	core := []knowledge.Rule{
		{Condition: "getting a COVID vaccine or recovering from vaccine side effects", Conclusion: "you can use Administrative Leave"},
		{Condition: "you leave TTS", Conclusion: "award leave is not paid out"},
		{Condition: "you leave GSA", Conclusion: "your comp time will be paid out"},
		{Condition: "you leave GSA", Conclusion: "any unused travel comp time will be forfeited"},
		{Condition: "you are running out of leave hours", Conclusion: "you can request advanced leave"},
		{Condition: "recovering expired award leave", Conclusion: "Expired award leave cannot be recovered"},
		{Condition: "you use your travel card", Conclusion: "pay the bill on time"},
		{Condition: "you book a hotel outside of Concur", Conclusion: "check for nonrefundable fees"},
		{Condition: "you need a rental car", Conclusion: "reserve it in Concur"},
		{Condition: "you travel by train", Conclusion: "choose the Rail icon"},
		{Condition: "your flight is cancelled", Conclusion: "call the travel agent"},
		{Condition: "you work additional hours", Conclusion: "you will receive overtime or comp time"},
		{Condition: "comp time", Conclusion: "Comp time expires one year after it is earned"},
		{Condition: "you make the maximum salary", Conclusion: "you cannot receive comp time"},
		{Condition: "you are a new federal employee", Conclusion: "check out the recommendations"},
		{Condition: "you document all expenses correctly", Conclusion: "your card bill is paid off exactly"},
		{Condition: "receipts", Conclusion: "Receipts are required for lodging"},
		{Condition: "laundry expenses", Conclusion: "reimbursable after four consecutive nights"},
		{Condition: "supervisors", Conclusion: "may be reimbursed for liability insurance"},
		{Condition: "you are on jury duty", Conclusion: "you receive court leave"},
		{Condition: "you vote in an election", Conclusion: "you can receive up to four hours"},
		{Condition: "you are in the National Guard", Conclusion: "you receive military leave"},
	}
	for i, r := range core {
		r.ID, r.Confidence = fmt.Sprintf("R%03d", i+1), "medium"
		rs.Tier2 = append(rs.Tier2, r)
	}
	g := NewGlossary(skills.Glossary{Terms: []skills.GlossaryTerm{{Term: "leave", Aliases: []string{"time off"}}, {Term: "award leave"}, {Term: "comp time"}}})
	idx := indexRules(rs.All(), g)
	q := "Is there leave for getting a COVID booster or recovering from side effects?"
	ranked, _ := idx.answerRanked(q, Bridged{}, answerParts(q, Bridged{}), 10)
	if len(ranked) < 4 || !strings.HasPrefix(ranked[0].Condition, "getting a COVID") {
		t.Fatalf("the rank gives %v; the test needs the COVID rule first and filler after it", ranked)
	}
	for _, k := range []int{3, 10} {
		got, _ := idx.answer(q, Bridged{}, k)
		if len(got) == 0 || got[0].ID != ranked[0].ID {
			t.Fatalf("k=%d: %v, want the COVID rule first", k, got)
		}
		for _, r := range got[1:] {
			t.Errorf("k=%d: %q → %q (%.3f) follows the answer: filler beside it", k, r.Condition, r.Conclusion, r.Score)
		}
	}
	// A rule stating as much of the question as the best stays, in its
	// place: both rules on comp time answer "When does comp time expire?".
	got, _ := idx.answer("When does comp time expire?", Bridged{}, 10)
	var ids []string
	for _, r := range got {
		ids = append(ids, r.ID)
	}
	if len(got) < 2 || got[0].ID != "R013" {
		t.Errorf("When does comp time expire?: %v, want R013 first and the other comp time rules after it", ids)
	}
	for _, r := range got {
		if !strings.Contains(strings.ToLower(r.Condition+" "+r.Conclusion), "comp time") {
			t.Errorf("When does comp time expire?: %q → %q kept: it says nothing of comp time", r.Condition, r.Conclusion)
		}
	}
}
