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
