package integrate

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/vibelife/vibe/skills"
)

func TestDictionaryRenderingsAndCharacters(t *testing.T) {
	d, err := LoadDictionary(filepath.Join("testdata", "cedict-sample.u8"))
	if err != nil {
		t.Fatal(err)
	}
	if got := d.English("桃花"); !slices.Equal(got, []string{"peach blossom", "love affair"}) {
		t.Errorf("English(桃花) = %q, want the glosses with the remark in parentheses dropped", got)
	}
	if got := d.English("七杀"); got != nil {
		t.Errorf("English(七杀) = %q, want none: no headword", got)
	}
	chars := d.Characters([]string{"七杀", "食神", "冬", "官"})
	for c, want := range map[string][]string{"七": {"seven", "7"}, "杀": {"kill", "murder", "attack"}, "神": {"God", "deity", "soul", "spirit"}, "冬": {"winter"}, "官": {"government official", "official"}} {
		if got := chars[c].English; !slices.Equal(got, want) {
			t.Errorf("Characters[%s].English = %q, want %q (no surname, abbreviation, classifier or onomatopoeia)", c, got, want)
		}
	}
	if got := chars["杀"].Pinyin; !slices.Contains(got, "sha") {
		t.Errorf("Characters[杀].Pinyin = %q, want sha", got)
	}
	if _, ok := chars["阳"]; ok {
		t.Errorf("阳 is in no term but got characters")
	}

	g := withDictionary(skills.Glossary{Terms: []skills.GlossaryTerm{
		{Term: "桃花", From: skills.FromMined},
		{Term: "七杀", English: []string{"Seven Killings"}, From: skills.FromHand},
	}}, d)
	if got := g.Terms[0].English; !slices.Contains(got, "peach blossom") {
		t.Errorf("mined 桃花: english %q, want the dictionary's", got)
	}
	if got := g.Terms[1].English; !slices.Equal(got, []string{"Seven Killings"}) {
		t.Errorf("hand 七杀: english %q, want the hand-kept renderings alone", got)
	}
	if g.Characters["杀"].English == nil {
		t.Errorf("the glossary has no words for 杀: %v", g.Characters)
	}
}

func TestDictionaryRefusesAnotherFormat(t *testing.T) {
	_, err := ParseDictionary(strings.NewReader("# header\n七 七 [qi1] /seven/\nseven,七\n"), "dict.txt")
	if err == nil || !strings.Contains(err.Error(), "dict.txt:3: not a CC-CEDICT entry") {
		t.Errorf("err = %v, want the file and line named", err)
	}
	_, err = ParseDictionary(strings.NewReader("# only comments\n"), "empty.u8")
	if err == nil || !strings.Contains(err.Error(), "empty.u8: no CC-CEDICT entry") {
		t.Errorf("err = %v, want an empty dictionary refused", err)
	}
}

// With no dictionary of the user's, the built-in table of the Unicode Han
// Database gives the characters their English words (and renders no
// term); with the user's, a character it has keeps its glosses alone and
// the table fills the characters it lacks.
func TestBuiltinDictionaryCharacters(t *testing.T) {
	d := BuiltinDictionary()
	chars := d.Characters([]string{"七杀", "食神", "阳刃"})
	for c, want := range map[string][]string{"杀": {"kill", "slaughter", "murder", "hurt"}, "食": {"eat", "meal", "food"}, "刃": {"edged tool", "cutlery", "knife edge"}} {
		if got := chars[c].English; !slices.Equal(got, want) {
			t.Errorf("built-in Characters[%s].English = %q, want %q", c, got, want)
		}
	}
	if got := chars["杀"].Pinyin; !slices.Contains(got, "sha") {
		t.Errorf("built-in Characters[杀].Pinyin = %q, want sha", got)
	}
	if got := d.English("桃花"); got != nil {
		t.Errorf("built-in English(桃花) = %q, want none: the table renders no term", got)
	}
	// 庚 is only "7th heavenly stem" in Unihan, no gloss: it keeps its
	// pinyin, so "Geng metal" is 庚金.
	if got := d.Characters([]string{"庚金"})["庚"]; got.English != nil || !slices.Equal(got.Pinyin, []string{"geng"}) {
		t.Errorf("built-in Characters[庚] = %+v, want the pinyin geng and no gloss", got)
	}

	user, err := LoadDictionary(filepath.Join("testdata", "cedict-sample.u8"))
	if err != nil {
		t.Fatal(err)
	}
	chars = user.WithBuiltin().Characters([]string{"七杀", "驿马"})
	if got := chars["杀"].English; !slices.Equal(got, []string{"kill", "murder", "attack"}) {
		t.Errorf("杀 with the user's dictionary: %q, want the user's glosses alone", got)
	}
	if got := chars["驿"].English; !slices.Contains(got, "relay station") {
		t.Errorf("驿, which the user's dictionary lacks: %q, want the built-in glosses", got)
	}
	if _, ok := user.Characters([]string{"驿马"})["驿"]; ok {
		t.Errorf("the user's dictionary alone gave 驿 glosses it lacks")
	}
}
