package skills

import (
	"os"
	"path/filepath"
	"testing"
)

func TestMatchTrigger(t *testing.T) {
	for _, tt := range []struct {
		text, trigger string
		want          bool
	}{
		{"How hot should the water be for green tea?", "green tea", true},
		{"How hot should the water be for GREEN TEA?", "Green Tea", true},
		{"which green teas keep longest", "green tea", true},
		{"tea that is green", "green tea", true}, // key words in any order
		{"How hot should the water be for green tea?", "Brewing Green Tea", false},
		{"brewed green tea tastes bitter", "Brewing Green Tea", true},
		{"what time and temperature for oolong", "Temperature and Time", true},
		{"what temperature should my oven be", "Temperature and Time", false},
		{"is the steam too hot", "tea", false}, // whole words, not substrings
		{"green vegetables", "green tea", false},
		{"普洱怎么泡", "普洱", true},
		{"普洱茶第一泡要倒掉吗", "普洱", true},
		{"白茶可以煮吗", "普洱", false},
		{"Pu-erh 普洱 brewing", "pu-erh 普洱", true},
		{"普洱 brewing", "pu-erh 普洱", false},
		{"anything", "", false},
		{"the and of", "the", true}, // a trigger of small words only is matched by them
	} {
		if got := MatchTrigger(tt.text, tt.trigger); got != tt.want {
			t.Errorf("MatchTrigger(%q, %q) = %v, want %v", tt.text, tt.trigger, got, tt.want)
		}
	}
}

// Match picks the skill a plain question is about, and none for an
// unrelated one.
func TestMatchPicksTheSkillAQuestionIsAbout(t *testing.T) {
	root := t.TempDir()
	for name, front := range map[string]string{
		"tea":  "name: tea\ndescription: tea brewing\ntriggers: [tea, green tea, black tea, oolong, 普洱, 白茶, 醒茶]\n",
		"bazi": "name: bazi\ndescription: 八字\ntriggers: [bazi, 八字, 用神, 子平真诠, 滴天髓]\n",
		"wine": "name: wine\ndescription: wine\ntriggers: [wine, red wine, black grapes]\n",
	} {
		dir := filepath.Join(root, name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte("---\n"+front+"---\n# "+name+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s, err := Open(root, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ text, want string }{
		{"How hot should the water be for green tea?", "tea"},
		{"How long do I steep oolong?", "tea"},
		{"普洱怎么醒茶", "tea"},
		{"我的八字用神是什么", "bazi"},
		{"What does bazi say about 2025?", "bazi"},
		{"Is black tea better with milk?", "tea"},
		{"Which red wine is made from black grapes?", "wine"}, // not tea: "black" alone is no trigger
		{"How do I fix a flat bicycle tyre?", ""},
		{"What is the capital of France?", ""},
		{"明天天气怎么样", ""},
		{"Is the steam iron hot enough?", ""},
	} {
		if got := s.Match(tt.text); got != tt.want {
			t.Errorf("Match(%q) = %q, want %q", tt.text, got, tt.want)
		}
	}
}

// An -ing or -ed form meets its base form, a silent e included: "giving"
// and "give", "ruled" and "rule"; other endings are stripped as before.
func TestStemMeetsTheBaseForm(t *testing.T) {
	for _, pair := range [][2]string{
		{"giving", "give"}, {"taking", "take"}, {"ruled", "rule"}, {"ruling", "rules"}, {"coded", "code"},
		{"hoping", "hope"}, {"writing", "write"}, {"dated", "date"},
		{"brewing", "brew"}, {"steeped", "steep"}, {"cooking", "cook"}, {"eating", "eat"},
		{"visiting", "visit"}, {"opened", "open"}, {"teas", "tea"}, {"leaves", "leave"}, {"playing", "plays"},
	} {
		if a, b := Stem(pair[0]), Stem(pair[1]); a != b {
			t.Errorf("Stem(%q) = %q, Stem(%q) = %q: they should meet", pair[0], a, pair[1], b)
		}
	}
	if !MatchTrigger("What are you giving for the festival?", "give") {
		t.Errorf(`MatchTrigger("…giving…", "give") = false`)
	}
}
