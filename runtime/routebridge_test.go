package runtime

import (
	"context"
	"strings"
	"testing"
)

// A Chinese fate-reading skill whose glossary gives 阳刃 and 七杀 no English
// name, only the characters' English words and pinyin (as an offline build
// writes it from the built-in Unihan table or the user's dictionary),
// beside an English travel skill and a tea skill.
var bridgeRouteSkills = map[string]string{
	"mingli/SKILL.md": "---\nname: mingli\ndescription: 依据典籍解答命理问题\n---\n# 命理\n",
	"mingli/knowledge/glossary.yaml": "terms:\n  - term: 阳刃\n    from: mined\n  - term: 七杀\n    from: mined\n  - term: 父母\n    from: mined\n" +
		"  - term: 吉神\n    from: mined\n  - term: 日主\n    from: mined\n  - term: 太阳\n    from: mined\n" +
		"  - term: 大枣\n    from: mined\n  - term: 时断\n    from: mined\n" +
		"  - term: 少阴\n    pinyin: [shào yīn, shao yin, shaoyin]\n    from: mined\n" +
		"  - term: 发热\n    pinyin: [fā rè, fa re, fare]\n    from: mined\n" +
		"characters:\n" +
		"  阳: {english: [male principle, light, sun], pinyin: [yang]}\n" +
		"  刃: {english: [edge of blade, blade, knife edge], pinyin: [ren]}\n" +
		"  七: {english: [seven], pinyin: [qi]}\n" +
		"  杀: {english: [kill, slaughter, murder, hurt], pinyin: [sha]}\n" +
		"  父: {english: [father], pinyin: [fu]}\n" +
		"  母: {english: [mother], pinyin: [mu]}\n" +
		"  吉: {english: [lucky, good, auspicious], pinyin: [ji]}\n" +
		"  神: {english: [spirit, god], pinyin: [shen]}\n" +
		"  日: {english: [sun, day, daytime], pinyin: [ri]}\n" +
		"  主: {english: [master, chief, owner], pinyin: [zhu]}\n" +
		"  太: {english: [very, too, much, big, extreme], pinyin: [tai]}\n" +
		"  大: {english: [big, great, vast], pinyin: [da]}\n" +
		"  枣: {english: [date tree, dates, jujubes], pinyin: [zao]}\n" +
		"  时: {english: [time, season, era], pinyin: [shi]}\n" +
		"  断: {english: [sever, cut off, interrupt], pinyin: [duan]}\n",
	"travel/SKILL.md": "---\nname: travel\ndescription: Travel and leave policy of the agency, per diem, lodging, weather and safety leave\n" +
		"triggers: [per diem, annual leave]\n---\n# Travel\nWhat an employee may claim when travelling, and how leave is taken. Check the weather before a trip.\n",
	"tea/SKILL.md": "---\nname: tea\ndescription: Brewing green, white and oolong tea\ntriggers: [green tea, oolong]\n---\n# Tea\n",
}

// Offline, a question naming a term of the Chinese skill in translation,
// composed from its characters' English words and pinyin as the search
// bridge composes it ("Yang Blade" is 阳刃, "seven killings" 七杀), goes
// to that skill, with the terms in its reason; with a model, the prompt
// names the skill and the term. Everyday English, whose single words
// gloss characters of the terms ("father", "good", "day"), reaches none.
func TestRouteByTermsInTranslation(t *testing.T) {
	root := writeSkills(t, "", bridgeRouteSkills)
	a := agentOver(t, root, nil, nil)
	for _, tt := range []struct{ msg, skill, term string }{
		{"What is the Yang Blade, and what should restrain it?", "mingli", "阳刃"},
		{"How do the seven killings act in a chart?", "mingli", "七杀"},
		{"Is a Ren Jia day master strong?", "mingli", "日主"},
		{"What is done when a Shaoyin pattern comes with a cold back?", "mingli", "少阴"},
		{"How big is the sun?", "", ""},
		{"How do I grow a big tree?", "", ""},
		{"Can I get time off to vote?", "", ""},
		{"What is a good gift for my father's birthday?", "", ""},
		{"What's the weather going to be like on my father's day?", "", ""},
		{"What is the best day to fly home?", "", ""},
		{"Which day is lucky for a wedding?", "", ""},
		{"My mother and father argue every day, what should we do?", "", ""},
		{"How do I brew green tea?", "tea", ""},
	} {
		got, why := a.RouteReason(context.Background(), tt.msg)
		if got != tt.skill && (tt.skill != "" || got == "mingli") {
			t.Errorf("%q -> %q (%s), want %q", tt.msg, got, why, tt.skill)
		}
		if tt.term != "" && !strings.Contains(why, tt.term) {
			t.Errorf("%q: reason %q does not name %s", tt.msg, why, tt.term)
		}
	}
	// A short pinyin written as one word is an English word too often:
	// "fare" (发热's) names no term in translation.
	for _, c := range a.routeCandidates("What is the bus fare to the airport?") {
		if len(c.Bridged) > 0 {
			t.Errorf("bus fare: %s named in translation %v", c.Name, c.Bridged)
		}
	}
	m := &fakeModel{}
	am := agentOver(t, root, m, nil)
	if _, err := am.Turn(context.Background(), TurnRequest{UserID: "u", Message: "What is the Yang Blade, and what should restrain it?"}, func(Event) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if len(m.requests) == 0 {
		t.Fatal("no request")
	}
	if sys := m.requests[0].Messages[0].Content; !strings.Contains(sys, "mingli") || !strings.Contains(sys, "阳刃") {
		t.Errorf("system prompt does not name mingli and 阳刃:\n%s", sys)
	}
}
