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
