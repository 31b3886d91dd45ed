package runtime

import (
	"slices"
	"testing"

	"github.com/vibelife/vibe/skills"
)

// English morphology in the bridge: a question's word that no gloss holds
// is looked up by the word it derives from ("emptiness" is empty, a gloss
// of 空), whether to carry it over as a character or to name a term word
// by word; a gloss's word counts by the word it derives from too.
func TestGlossaryDerivedWords(t *testing.T) {
	g := NewGlossary(skills.Glossary{
		Terms: []skills.GlossaryTerm{{Term: "空亡"}, {Term: "四柱"}, {Term: "身弱"}, {Term: "官杀"}, {Term: "真神"}},
		Characters: map[string]skills.GlossaryChar{
			"空": {English: []string{"empty", "hollow", "bare"}},
			"亡": {English: []string{"death", "destroyed", "lose"}},
			"柱": {English: []string{"pillar", "post", "support"}},
			"四": {English: []string{"four"}},
			"身": {English: []string{"body", "trunk"}},
			"弱": {English: []string{"weak", "fragile"}},
			"官": {English: []string{"official", "public servant"}},
			"杀": {English: []string{"kill", "slaughter", "murder"}},
			"真": {English: []string{"real", "genuine", "true"}},
		},
	})
	for q, want := range map[string][]string{
		// emptiness -> empty (-ness, -i/-y).
		"What does emptiness do to a pillar?": {"空", "柱"},
		// weakness -> weak, carried over as its first gloss's character.
		"Is weakness of the body bad?": {"弱", "身"},
		// officer and official both derive from office: a term word by word.
		"Are officer killers good?": {"官杀"},
		// A word that glosses a character as it stands is not derived
		// further: "four pillars" is 四柱 as before.
		"What are the four pillars?": {"四柱"},
		// An adverb of the question's frame is no character: "really"
		// is not 真.
		"Is the pillar really empty?": {"柱", "空"},
		// No derivation reaches a word the glosses do not hold.
		"Is happiness a sign of anything?": nil,
	} {
		if got := g.Terms(q, langZH); !slices.Equal(got, want) {
			t.Errorf("Terms(%q) = %q, want %q", q, got, want)
		}
	}
}

// A closed compound names a term of two characters by its two halves when
// each is a gloss of the term's characters in order ("nobleman" is noble +
// man, 贵人), and nothing when the halves are not both glosses of adjacent
// characters of one term.
func TestGlossaryClosedCompoundNamesATerm(t *testing.T) {
	chars := map[string]skills.GlossaryChar{
		"贵": {English: []string{"expensive", "noble", "precious"}},
		"人": {English: []string{"man", "people"}},
		"星": {English: []string{"star", "planet"}},
		"女": {English: []string{"woman", "girl"}},
	}
	g := NewGlossary(skills.Glossary{Terms: []skills.GlossaryTerm{{Term: "贵人"}, {Term: "女命"}}, Characters: chars})
	for q, want := range map[string][]string{
		"How do I find the nobleman star from my day stem?": {"贵人", "星"},
		"Where are the noblemen in my chart?":               {"贵人"},
		// "chairman" splits into no two glosses of one term's characters.
		"Who is the chairman?": nil,
		// "woman" is a gloss as it stands, never wo + man.
		"Read a woman's chart": {"女"},
	} {
		if got := g.Terms(q, langZH); !slices.Equal(got, want) {
			t.Errorf("Terms(%q) = %q, want %q", q, got, want)
		}
	}
	// Joined pinyin is no compound of glosses: "Shaoyin disease" is 少阴
	// by its pinyin, not 少阴病 by shao + yin; nor does a term composed
	// loosely take the words of a name.
	sy := NewGlossary(skills.Glossary{
		Terms: []skills.GlossaryTerm{{Term: "少阴", Pinyin: []string{"shao yin", "shaoyin"}}, {Term: "少阴病"}},
		Characters: map[string]skills.GlossaryChar{
			"少": {English: []string{"few", "less", "young"}, Pinyin: []string{"shao"}},
			"阴": {English: []string{"shade", "female principle"}, Pinyin: []string{"yin"}},
			"病": {English: []string{"illness", "disease"}, Pinyin: []string{"bing"}},
			"味": {English: []string{"taste", "smell"}},
		},
	})
	if got, want := sy.Terms("In lesser yin (Shaoyin) disease with no taste in the mouth, what is done?", langZH), []string{"少阴"}; !slices.Equal(got, want) {
		t.Errorf("Shaoyin: Terms = %q, want %q", got, want)
	}
	// Without "noble" among 贵's glosses (the built-in table's: expensive,
	// costly, valuable) the compound names nothing.
	unihan := NewGlossary(skills.Glossary{Terms: []skills.GlossaryTerm{{Term: "贵人"}}, Characters: map[string]skills.GlossaryChar{
		"贵": {English: []string{"expensive", "costly", "valuable"}},
		"人": {English: []string{"man", "people"}},
	}})
	if got := unihan.Terms("How do I find the nobleman?", langZH); got != nil {
		t.Errorf("no noble gloss: Terms = %q, want none", got)
	}
}

// A phrasal verb is read whole: its verb and particle name a character
// whose gloss is the phrasal verb ("giving up" is give up), and the verb
// alone is not carried over in another sense ("falls into" is not 秋,
// autumn or fall).
func TestGlossaryPhrasalVerbs(t *testing.T) {
	g := NewGlossary(skills.Glossary{
		Terms: []skills.GlossaryTerm{{Term: "弃命从杀"}, {Term: "空亡"}, {Term: "三秋"}, {Term: "四柱"}},
		Characters: map[string]skills.GlossaryChar{
			"弃": {English: []string{"give up", "abandon"}},
			"命": {English: []string{"life", "fate"}},
			"从": {English: []string{"follow", "obey"}},
			"杀": {English: []string{"kill", "murder"}},
			"空": {English: []string{"empty", "hollow"}},
			"亡": {English: []string{"death", "lose"}},
			"秋": {English: []string{"autumn", "fall", "year"}},
			"柱": {English: []string{"pillar", "post"}},
			"四": {English: []string{"four"}},
			"三": {English: []string{"three"}},
			"寒": {English: []string{"cold", "wintry"}},
			"背": {English: []string{"back", "spine"}},
		},
	})
	for q, want := range map[string][]string{
		"When does a weak chart giving up life follow the killings?": {"弃命从杀"},
		"What does it mean when a pillar falls into emptiness?":      {"柱", "空"},
		"What grows in the fall?":                                    {"秋"},
		"Should I give up?":                                          {"弃"},
		// "back" is a noun here, no particle: "cold back" is 寒 背.
		"What is done for a cold back?": {"寒", "背"},
	} {
		if got := g.Terms(q, langZH); !slices.Equal(got, want) {
			t.Errorf("Terms(%q) = %q, want %q", q, got, want)
		}
	}
}
