package runtime

import (
	"slices"
	"testing"

	"github.com/vibelife/vibe/skills"
)

// With the characters' words a dictionary gives (glossary.yaml's
// characters), an English question names a term word by word, in
// translation or half in pinyin, the best glosses first; a word no term
// takes is carried over as the character it glosses first, and a term made
// of the named one and those characters but one is named too.
func TestGlossaryNamesTermsWordByWord(t *testing.T) {
	g := NewGlossary(skills.Glossary{
		Terms: []skills.GlossaryTerm{{Term: "七杀"}, {Term: "食神"}, {Term: "用神"}, {Term: "阳刃"}, {Term: "丙火"}, {Term: "三冬丙火"}},
		Characters: map[string]skills.GlossaryChar{
			"七": {English: []string{"seven", "7"}, Pinyin: []string{"qi"}},
			"杀": {English: []string{"kill", "murder"}, Pinyin: []string{"sha"}},
			"食": {English: []string{"eat", "food"}, Pinyin: []string{"shi"}},
			"神": {English: []string{"God", "deity", "spirit"}, Pinyin: []string{"shen"}},
			"用": {English: []string{"use", "employ", "eat or drink"}, Pinyin: []string{"yong"}},
			"阳": {English: []string{"positive", "sun"}, Pinyin: []string{"yang"}},
			"刃": {English: []string{"edge of blade"}, Pinyin: []string{"ren"}},
			"冬": {English: []string{"winter"}, Pinyin: []string{"dong"}},
			"三": {English: []string{"three", "3"}, Pinyin: []string{"san"}},
			"丙": {English: []string{"third of the ten heavenly stems"}, Pinyin: []string{"bing"}},
			"火": {English: []string{"fire"}, Pinyin: []string{"huo"}},
		},
	})
	for q, want := range map[string][]string{
		"Can the eating god keep the seven killings under control?": {"食神", "七杀"},
		"When is the yang blade structure a good one?":              {"阳刃"},
		"What does fire born in winter need?":                       {"火", "冬"},
		"Bing fire born in winter needs what to keep warm?":         {"丙火", "冬", "三冬丙火"},
		"What is the weather like?":                                 nil,
	} {
		if got := g.Terms(q, langZH); !slices.Equal(got, want) {
			t.Errorf("Terms(%q) = %q, want %q", q, got, want)
		}
	}
	// Without characters nothing is composed.
	bare := NewGlossary(skills.Glossary{Terms: []skills.GlossaryTerm{{Term: "七杀"}}})
	if got := bare.Terms("the seven killings", langZH); got != nil {
		t.Errorf("no characters: Terms = %q, want none", got)
	}
}

// Words of a question's frame ("what does X mean", "what is X like",
// "what kind of") gloss characters in senses no question asks about (贱
// "mean, low", 喜 "like, love", 种 "kind"): they are never carried over,
// with the built-in table's glosses (the Unicode Han Database's) as with
// a dictionary's.
func TestGlossaryFrameWordsAreNoCharacters(t *testing.T) {
	g := NewGlossary(skills.Glossary{
		Terms: []skills.GlossaryTerm{{Term: "驿马"}, {Term: "贱命"}, {Term: "喜神"}, {Term: "种类"}},
		Characters: map[string]skills.GlossaryChar{
			"驿": {English: []string{"relay station"}},
			"马": {English: []string{"horse"}},
			"贱": {English: []string{"mean", "low"}},
			"命": {English: []string{"life", "destiny", "fate"}},
			"喜": {English: []string{"like", "love", "enjoy"}},
			"神": {English: []string{"spirit", "god"}},
			"种": {English: []string{"kind", "seed"}},
			"类": {English: []string{"category", "class"}},
		},
	})
	for q, want := range map[string][]string{
		"What does the horse mean in a chart?":  {"马"},
		"What is the weather like?":             nil,
		"What kind of person is born that day?": nil,
		"Does it mean a low fate?":              {"贱命"},
	} {
		if got := g.Terms(q, langZH); !slices.Equal(got, want) {
			t.Errorf("Terms(%q) = %q, want %q", q, got, want)
		}
	}
}
