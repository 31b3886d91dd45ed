package integrate

import "testing"

// Passages of 子平真诠 and claims a strong model wrote about them, with
// the same claims turned round.
func TestReversal(t *testing.T) {
	src := "七煞喜食神以制伏，忌财印以资扶。阳刃喜官煞以制伏，忌官煞之俱无。是故十干不论月令休囚，只要四柱有根，便能受财官食神而当伤官七煞。" +
		"若金木生旺而克破则不然。论运与看命无二法也。谓之冲开印库可乎？" +
		"更有阳干逢库，如壬逢辰、丙坐戌之类，不以为水火通根身库，甚至求刑冲开之。此种谬论，必宜一切扫除也。"
	tests := []struct {
		claim    string
		reversed bool
	}{
		{"喜食神制伏，忌财、印资扶七煞", false},
		{"不喜食神制伏，忌财、印资扶七煞", true},
		{"喜官煞制伏，最忌官煞俱无", false},
		{"不论月令休囚，四柱有根便能受财官食神", false},
		{"论月令休囚，四柱有根便能受财官食神", true},
		{"金木生旺而克破", false},          // verbatim, the negation is the next clause's
		{"以运之干支配原局喜忌，与看命同法", false}, // 无二法: the same method
		{"冲则反累，不可言冲开库", false},      // a rhetorical question
		{"是水火通根身库，不必求刑冲开库", false},  // 不以为: the refuted view, not a negation
		{"Wealth must not be promised", false},
	}
	for _, tt := range tests {
		if why := reversal(tt.claim, src); (why != "") != tt.reversed {
			t.Errorf("reversal(%q) = %q, want reversed=%v", tt.claim, why, tt.reversed)
		}
	}
}

func TestLetterContainment(t *testing.T) {
	src := "财官印食，此用神之善而顺用之者也；煞伤劫刃，用神之不善而逆用之者也。"
	// 正官格官星透露-like paraphrases keep the characters, not the bigrams.
	if b, l := containment("善神宜顺用之", src), letterContainment("善神宜顺用之", src); b >= l || l < 0.8 {
		t.Errorf("bigram %.2f, letters %.2f: want letters higher and at least 0.8", b, l)
	}
	if l := letterContainment("when the wealth star is weak", "the wealth star is strong"); l < 0.66 || l > 0.67 {
		t.Errorf("Latin words: %.2f, want 4 of 6", l)
	}
}

// 未 as an earthly branch and a theme's names holding 不/非/未/no are not
// negations (issue 28: "羊陀夹化忌（如命在申，羊酉陀未夹忌）" failed as
// grounding.reversed); real negations still are.
func TestReversalKnowsNames(t *testing.T) {
	v := newNameVocab([]string{"天不管", "非时之贵", "No-Asset Case", "招嫁不定"})
	ziwei := "羊陀夹忌：化忌在命，而擎羊、陀罗分居左右夹之，为羊陀夹忌，主一生多灾。如命在申，羊在酉，陀在未，为羊陀夹忌，主孤贫。"
	bazi := "乙未、丁未之类，未中藏己土、乙木、丁火。亥卯未全而又透甲，作曲直论。若命在未而逢冲，则库开。未必尽然，财未见者，作杂气论。"
	tests := []struct {
		claim, src string
		reversed   bool
	}{
		{"羊陀夹化忌（如命在申，羊酉陀未夹忌）", ziwei, false},
		{"羊陀夹忌主一生多灾", ziwei, false},
		{"羊陀夹忌，不主一生多灾", ziwei, true},
		{"丁未之类，未土藏己乙丁", bazi, false},
		{"亥卯未全而透甲，作曲直论", bazi, false},
		{"亥卯未全而透甲，不作曲直论", bazi, true},
		{"命在未逢冲则库开", bazi, false},
		{"财见者，作杂气论", bazi, true}, // 未见 stays a negation
		{"天不管之格，主大贵", "天不管之格，主大贵。", false},
		{"天不管之格，主大贵", "天不管之格，不主大贵。", true},
	}
	for _, tt := range tests {
		if why := reversal(v.mask(tt.claim), v.mask(tt.src)); (why != "") != tt.reversed {
			t.Errorf("reversal(%q) = %q, want reversed=%v", tt.claim, why, tt.reversed)
		}
	}
	for s, want := range map[string]bool{
		"丁未": false, "辰戌丑未": false, "命在未": false, "未月": false, "羊酉陀未夹忌": false, "午未合": false,
		"未必": true, "未见财": true, "尚未": true, "子未能": true, "未有": true, "未有不贵": false, "非时之贵": false, "是非": true,
	} {
		if got := negatedClause(v.mask(s)); got != want {
			t.Errorf("negatedClause(mask(%q)) = %v, want %v", s, got, want)
		}
	}
	// English names with no/not: a no-asset case is no negation; a mined
	// phrase (招嫁不定 is in the list but 不作 is not) never hides one.
	if negated(v.mask("file the report in a No-Asset Case")) || !negated(v.mask("do not file the report")) {
		t.Error("English names: No-Asset Case read as a negation, or not lost")
	}
	if !negated(v.mask("不作财论")) {
		t.Error("不作 masked")
	}
}
