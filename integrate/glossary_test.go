package integrate

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/vibelife/vibe/knowledge"
	"github.com/vibelife/vibe/skills"
)

// go-pinyin has no phrase table: a polyphonic character gets every reading
// (长生 is read zhang and chang sheng, 调候 diao and tiao hou), with and
// without tones, spaced and joined; one character gets none.
func TestPinyinOf(t *testing.T) {
	for _, tt := range []struct {
		term string
		want []string
	}{
		{"魁罡", []string{"kuí gāng", "kui gang", "kuigang"}},
		{"七杀", []string{"qī shā", "qi sha", "qisha"}},
		{"长生", []string{"chang sheng", "changsheng", "zhang sheng"}},
		{"调候", []string{"tiao hou", "diao hou"}},
		{"重阳", []string{"chong yang", "zhong yang"}},
		{"滴天髓", []string{"di tian sui", "ditiansui"}},
	} {
		got := PinyinOf(tt.term)
		for _, w := range tt.want {
			if !slices.Contains(got, w) {
				t.Errorf("PinyinOf(%s) = %q, want %q among them", tt.term, got, w)
			}
		}
		if len(got) > 1+2*maxPinyinReadings {
			t.Errorf("PinyinOf(%s): %d forms, want at most %d", tt.term, len(got), 1+2*maxPinyinReadings)
		}
	}
	if got := PinyinOf("和"); got != nil {
		t.Errorf("one character: %q, want none", got)
	}
}

func TestTermOfHeading(t *testing.T) {
	for h, want := range map[string]string{
		"25 论魁罡": "魁罡", "1.12 衰旺论": "衰旺", "四十三、论阳刃": "阳刃", "2.3.3 三秋乙木": "三秋乙木",
		"三命通会卷之十": "", "卷九": "", "52 时上偏财（以下所忌月分）": "时上偏财", "1 六甲日甲子时断": "",
		"论用神配气候得失之理": "", "论杂气如何取用": "", "Chapter 2": "", "第三章 论正官": "正官",
	} {
		if got := termOfHeading(h); got != want {
			t.Errorf("termOfHeading(%q) = %q, want %q", h, got, want)
		}
	}
}

// Offline, the glossary holds the terms the headings, titles and pattern
// names name, and phrases that recur in the rules, each with its pinyin,
// so "Kui Gang" reaches 魁罡; the hand-kept glossary wins by term.
func TestMineGlossary(t *testing.T) {
	ks := &knowledgeSet{}
	ks.pats.Patterns.QuickPatterns = []knowledge.Pattern{{Name: "官煞混杂", Signature: "四柱庚辛俱见"}}
	for _, c := range []string{"伤官见官，为祸百端", "身弱而伤官见官", "伤官见官而无财", "七杀无制", "七杀有制则贵", "用七杀而身强"} {
		ks.rules.Rules.Tier2 = append(ks.rules.Rules.Tier2, knowledge.Rule{Condition: c})
	}
	g := MineGlossary(ks, GlossaryInputs{Headings: []string{"25 论魁罡", "四十三、论阳刃", "卷九"}, Titles: []string{"滴天髓"}})
	byTerm := map[string]skills.GlossaryTerm{}
	for _, e := range g.Terms {
		byTerm[e.Term] = e
		if e.From != skills.FromMined {
			t.Errorf("%s: from %q, want mined", e.Term, e.From)
		}
	}
	for _, want := range []string{"魁罡", "阳刃", "滴天髓", "官煞混杂", "伤官见官", "七杀"} {
		if _, ok := byTerm[want]; !ok {
			t.Errorf("no %s in %v", want, g.Terms)
		}
	}
	if _, ok := byTerm["伤官见"]; ok {
		t.Errorf("伤官见, only ever part of 伤官见官, was kept: %v", g.Terms)
	}
	if !slices.Contains(byTerm["魁罡"].Pinyin, "kui gang") {
		t.Errorf("魁罡: pinyin %q", byTerm["魁罡"].Pinyin)
	}

	dir := t.TempDir()
	hand := filepath.Join(dir, "glossary.yaml")
	if err := os.WriteFile(hand, []byte("terms:\n  - term: 七杀\n    aliases: [七煞]\n    english: [seven killings]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	h, ok, err := readGlossaryFile(hand)
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	merged := g.Overlay(markHand(h))
	for _, e := range merged.Terms {
		if e.Term == "七杀" && (e.From != skills.FromHand || !slices.Contains(e.Names(), "seven killings")) {
			t.Errorf("the hand entry did not win: %+v", e)
		}
	}
	if err := os.WriteFile(hand, []byte("terms:\n  - aliases: [x]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := readGlossaryFile(hand); err == nil || !strings.Contains(err.Error(), "glossary.yaml: terms[0]: term is empty") {
		t.Errorf("malformed glossary: %v", err)
	}
	// Deterministic: the same inputs give the same glossary.
	again := MineGlossary(ks, GlossaryInputs{Headings: []string{"25 论魁罡", "四十三、论阳刃", "卷九"}, Titles: []string{"滴天髓"}})
	if !slices.EqualFunc(g.Terms, again.Terms, func(a, b skills.GlossaryTerm) bool { return a.Term == b.Term && slices.Equal(a.Pinyin, b.Pinyin) }) {
		t.Error("two mines of the same inputs differ")
	}
}
