package runtime

import (
	"slices"
	"testing"

	"github.com/vibelife/vibe/skills"
)

// A term is named in parts through the longest named term it holds: 春天出生的
// 乙木日主 names 三春乙木 (乙木 named, 春 held, 三 not), but 诸葛亮草船借箭是怎么回事
// does not name 诸葛亮智: it names 诸葛亮, and 智 is not in it (through the
// shorter 诸葛, whose rest 亮智 it held but one, it did, and get_rules then
// said no rule states 诸葛亮智).
func TestLooselyNamedTakesTheLongestPart(t *testing.T) {
	g := NewGlossary(skills.Glossary{Terms: []skills.GlossaryTerm{
		{Term: "乙木"}, {Term: "三春乙木"}, {Term: "诸葛"}, {Term: "诸葛亮"}, {Term: "诸葛亮智"}, {Term: "日主"},
	}})
	for _, c := range []struct {
		text string
		want []string
	}{
		{"春天出生的乙木日主，用神取什么", []string{"三春乙木"}},
		{"诸葛亮草船借箭是怎么回事", nil},
		{"诸葛用智谋", []string{"诸葛亮智"}}, // 诸葛 named, 亮 not held, 智 held
	} {
		var got []string
		for _, e := range g.looselyNamed(c.text, g.namedEntries(c.text)) {
			got = append(got, e.Term)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("looselyNamed(%s) = %v, want %v", c.text, got, c.want)
		}
	}
}
