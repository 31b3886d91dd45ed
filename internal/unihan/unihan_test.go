package unihan

import (
	"slices"
	"testing"
	"unicode/utf8"
)

func TestCleanDefinition(t *testing.T) {
	for def, want := range map[string][]string{
		"eat; meal; food; Kangxi radical 184":                        {"eat", "meal", "food"},
		"kill, slaughter, murder; hurt":                              {"kill", "slaughter", "murder", "hurt"},
		"tiger; brave, fierce; surname":                              {"tiger", "brave", "fierce"},
		"armor, shell; fingernails; 1st heavenly stem":               {"armor", "shell", "fingernails"},
		"offspring, child; fruit, seed of; 1st terrestrial branch":   {"offspring", "child", "fruit", "seed of"},
		"'male' principle; light; sun":                               {"male principle", "light", "sun"},
		"queen, empress, sovereign; (simp. for 後) behind, rear":      {"queen", "empress", "sovereign", "behind", "rear"},
		"(same as U+4E18 丘) hillock or mound":                        {"hillock or mound"},
		"variant of 厨 U+53A8, a kitchen; a closet":                   {"kitchen", "closet"},
		"to gag or bribe; (Cant.) to guess, reckon mentally; to bud": {"gag or bribe", "bud"},
		"a star, planet; any point of light":                         {"star", "planet", "any point of light"},
		"change, convert, reform; -ize":                              {"change", "convert", "reform"},
		"rank, grade; to wait; equal, “and so forth”":                {"rank", "grade", "wait", "equal", "and so forth"},
		"turtle beak; 20th lunar mansions; λ Orionis (Meissa)":       {"turtle beak", "20th lunar mansions", "λ Orionis"},
		"vehicles and garments (commonly used in feudal times to reward vassals), covering on the crossbar at the ends of carriage poles": {"vehicles and garments"},
	} {
		if got := CleanDefinition(def); !slices.Equal(got, want) {
			t.Errorf("CleanDefinition(%q) = %q, want %q", def, got, want)
		}
	}
}

// The embedded table holds the common characters with their glosses,
// cleaned, and leaves out the supplementary planes.
func TestGlosses(t *testing.T) {
	for c, want := range map[rune][]string{
		'杀': {"kill", "slaughter", "murder", "hurt"},
		'食': {"eat", "meal", "food"},
		'冬': {"winter", "11th lunar month"},
		'官': {"official", "public servant"},
	} {
		if got := Glosses(c); !slices.Equal(got, want) {
			t.Errorf("Glosses(%c) = %q, want %q", c, got, want)
		}
	}
	if n := Len(); n < 19000 || n > 21000 {
		t.Errorf("the table holds %d characters, want the about 19,800 of U+4E00–U+9FFF and U+3400–U+4DBF with a definition", n)
	}
	// Every gloss is valid UTF-8: a gloss starting with a character of
	// several bytes ("“and so forth”" of 等) was once cut in the middle of it.
	for r := rune(0x3400); r <= 0x9FFF; r++ {
		for _, g := range Glosses(r) {
			if !utf8.ValidString(g) {
				t.Errorf("Glosses(%c) holds %q, no valid UTF-8", r, g)
			}
		}
	}
	if Glosses('𠀀') != nil || Glosses('a') != nil {
		t.Errorf("a character of Extension B or a letter has glosses")
	}
}
