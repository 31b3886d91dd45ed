package knowledge

import (
	"regexp"
	"strings"
)

// Grave verdicts: a rule, red flag or passage predicting death, disaster,
// divorce or ruin ("必贫夭死", "淫乱破家、伤夫克子") states what a tradition
// says, never a certainty. Extraction marks such rules (Rule.Grave,
// RedFlag.Grave); the runtime relays them as the tradition's verdict with a
// plain caveat, in every mode (docs/agent.md).

// graveHan are Chinese phrases of grave verdicts. Terms of the art that
// share their characters are not among them: 死 and 绝 as stages of the
// twelve (死绝之地, 金死子地), 亡神 the star, 孤辰 the star.
var graveHan = []string{
	"夭", "短命", "早亡", "凶亡", "夭亡", "身亡", "人亡", "夫亡", "妻亡", "家亡", "丧命", "殒命",
	"必死", "凶死", "横死", "暴死", "早死", "死亡", "夭死", "恶死", "丧身", "亡身",
	"破家", "败家", "家破", "倾家", "破败", "破产",
	"必贫", "贫夭", "贫贱", "贫穷", "贫寒", "贫苦", "贫薄", "孤贫", "乞丐", "乞食",
	"克夫", "克妻", "伤夫", "克子", "刑妻", "刑夫", "妨夫", "妨妻", "丧夫", "丧妻", "寡居", "守寡", "孤寡",
	"离婚", "离异", "再嫁", "淫乱", "淫滥", "淫奔",
	"残疾", "瞽", "牢狱", "刑狱", "徒流", "囹圄",
	"灾祸", "大凶", "祸不旋踵", "血光", "凶灾", "横祸", "身殃",
}

// graveLatin are English words of grave verdicts, matched whole.
var graveLatin = regexp.MustCompile(`(?i)\b(death|deaths|die|dies|dying|early death|killed|fatal|disaster|disasters|calamity|calamities|catastrophe|divorce|divorced|widow|widowed|widowhood|ruin|ruined|ruins|poverty|destitute|beggar|crippled|prison|imprisonment)\b`)

// GraveTerms returns the phrases of grave verdicts text holds, in order of
// the lists (none: nil).
func GraveTerms(text string) []string {
	var out []string
	for _, p := range graveHan {
		if strings.Contains(text, p) && !technical(text, p) {
			out = append(out, p)
		}
	}
	for _, m := range graveLatin.FindAllString(text, -1) {
		out = append(out, strings.ToLower(m))
	}
	return out
}

// technical reports whether every occurrence of p in text is part of a
// term of the art rather than a verdict: 寿夭 in "寿夭不可妄断" is a
// warning not to judge, not a verdict.
func technical(text, p string) bool {
	switch p {
	case "夭":
		return !strings.Contains(strings.ReplaceAll(text, "寿夭不可", ""), "夭")
	}
	return false
}

// IsGrave reports whether a rule predicts death, disaster, divorce or ruin:
// marked so by extraction, or stating such a verdict in its conclusion or
// action (a skill built before rules were marked).
func (r Rule) IsGrave() bool {
	if r.Grave {
		return true
	}
	return len(GraveTerms(r.Conclusion+"\n"+r.Action)) > 0
}

// MarkGrave sets Grave on every rule and red flag whose verdict is grave
// (GraveTerms of its conclusion and action, a red flag's signal and
// action), and clears it on the others.
func MarkGrave(f *Files) {
	for _, tier := range []*[]Rule{&f.Rules.Rules.Tier1, &f.Rules.Rules.Tier2, &f.Rules.Rules.Tier3} {
		for i := range *tier {
			r := &(*tier)[i]
			r.Grave = len(GraveTerms(r.Conclusion+"\n"+r.Action)) > 0
		}
	}
	for i := range f.Patterns.Patterns.RedFlags {
		rf := &f.Patterns.Patterns.RedFlags[i]
		rf.Grave = len(GraveTerms(rf.Action)) > 0
	}
}

// fortuneHan are the characters of a fortune read for a person: good or
// ill luck, rank, wealth, length of life, blessing and calamity.
const fortuneHan = "吉凶贵贱富贫寿夭福祸"

// fortuneLatin are English words of a fortune read for a person.
var fortuneLatin = regexp.MustCompile(`(?i)\b(fortunes?|luck|lucky|unlucky|misfortunes?|auspicious|inauspicious|prosperity|prosperous|fate|destiny)\b`)

// ReadsFortunes reports whether rules read a person's fortune, as the rules
// of a divination text do: at least 5 of them, and a tenth, conclude in a
// fortune (吉凶, 贵贱, 富贫, 寿夭, 福祸; luck, fortune, auspicious). Such a
// theme's grave verdicts are predictions relayed as the tradition's; in
// any other theme (a travel policy's "disasters", a philosopher's "better
// were it to die", a novel's 身亡) the same words are no prediction, and
// nothing is said of verdicts (the runtime's readsFate). On the five bazi
// books built offline, 146 of 630 rules conclude in a fortune; on a travel
// policy, Meditations and The Art of War, none.
func ReadsFortunes(rules []TieredRule) bool {
	n := 0
	for _, r := range rules {
		then := r.Conclusion + "\n" + r.Action
		if strings.ContainsAny(then, fortuneHan) || fortuneLatin.MatchString(then) {
			n++
		}
	}
	return n >= 5 && n*10 >= len(rules)
}

// GraveCaveat is the plain caveat a grave verdict is relayed with.
const GraveCaveat = "这是古籍的断语，反映传统的说法，不是确定的预言；人的境遇取决于许多因素。/ This is what the classical texts say, not a certain prediction; a life depends on many things."

// TraditionSays renders a grave verdict as the tradition's: "典籍认为：…"
// (or "The tradition holds that …" for text without Han).
func TraditionSays(verdict string) string {
	for _, r := range verdict {
		if r >= 0x4e00 && r <= 0x9fff {
			return "典籍认为：" + verdict + "（传统说法，非确定预言）"
		}
	}
	return "the tradition holds that " + verdict + " (a traditional verdict, not a certain prediction)"
}
