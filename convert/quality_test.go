package convert

import (
	"strings"
	"testing"
)

func TestAssessQuality(t *testing.T) {
	tests := []struct {
		name        string
		md          string
		chars       int
		headings    int
		garbled     bool
		replacement bool // ReplacementRatio > 0
	}{
		{name: "clean Chinese", md: "# 第一章\n\n天地玄黄，宇宙洪荒。\n", chars: 18, headings: 1},
		{name: "clean English with accents", md: "## Café\n\nA résumé of the naïve façade.\n", chars: 39, headings: 1},
		{name: "GBK read as Latin-1 (mojibake)", md: "Ä¿Â¼\n\n¹ØÓÚºì¾ü×÷Õ½µÄÔ-Ôò £¨Ò»¾ÅÈýÆßÄê°ËÔÂÒ»ÈÕ£©\n", garbled: true},
		{name: "replacement characters", md: "Some text \uFFFD\uFFFD\uFFFD\uFFFD here \uFFFD\uFFFD\uFFFD\n", garbled: true, replacement: true},
		{name: "private use glyph codes", md: "\uE001\uE002\uE003\uE004\uE005 abc\n", garbled: true},
		{name: "a few box-drawing chars in a table stay readable", md: strings.Repeat("plain readable words ", 20) + "│\n", headings: 0},
		{name: "headings need a space after the hashes", md: "#hashtag\n####### seven\n# One\n", headings: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := assessQuality(tt.md)
			if tt.chars > 0 && q.Chars != tt.chars {
				t.Errorf("Chars = %d, want %d", q.Chars, tt.chars)
			}
			if q.Chars != len([]rune(tt.md)) {
				t.Errorf("Chars = %d, want the rune count %d", q.Chars, len([]rune(tt.md)))
			}
			if q.Headings != tt.headings {
				t.Errorf("Headings = %d, want %d", q.Headings, tt.headings)
			}
			if q.Garbled != tt.garbled {
				t.Errorf("Garbled = %v, want %v (%+v)", q.Garbled, tt.garbled, q)
			}
			if (q.ReplacementRatio > 0) != tt.replacement {
				t.Errorf("ReplacementRatio = %v, want > 0: %v", q.ReplacementRatio, tt.replacement)
			}
			if q.GarbledRatio < 0 || q.GarbledRatio > 1 {
				t.Errorf("GarbledRatio %v out of [0,1]", q.GarbledRatio)
			}
		})
	}
}
