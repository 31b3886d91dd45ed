package convert

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Thresholds past which a text is judged unreadable.
const (
	garbledThreshold     = 0.15
	replacementThreshold = 0.05
)

// assessQuality reports the character count, headings, and the share of
// garbled and replacement characters of a Markdown body, and sets Garbled when
// either share is past its threshold.
func assessQuality(markdown string) Quality {
	var q Quality
	var letters, garbled, repl int
	for _, line := range strings.Split(markdown, "\n") {
		if isMarkdownHeading(line) {
			q.Headings++
		}
	}
	prevLatin1 := false
	for _, r := range markdown {
		q.Chars++
		if unicode.IsSpace(r) || unicode.IsPunct(r) && r < 0x80 {
			prevLatin1 = false
			continue
		}
		letters++
		switch {
		case r == utf8.RuneError:
			repl++
		case r >= 0xE000 && r <= 0xF8FF, r >= 0xF0000: // private use
			garbled++
		case r >= 0x80 && r <= 0x9F: // C1 controls
			garbled++
		case r >= 0xA0 && r <= 0xFF:
			// Latin-1 supplement letters next to each other are the mark of
			// CJK bytes decoded as Latin-1 ("Ä¿Â¼"); a lone é is not.
			if prevLatin1 {
				garbled += 2
			}
			prevLatin1 = true
			continue
		case r >= 0x2500 && r <= 0x259F: // box drawing and blocks
			garbled++
		}
		prevLatin1 = false
	}
	if letters > 0 {
		q.GarbledRatio = round4(min(1, float64(garbled)/float64(letters)))
		q.ReplacementRatio = round4(float64(repl) / float64(letters))
	}
	q.Garbled = q.GarbledRatio > garbledThreshold || q.ReplacementRatio > replacementThreshold
	return q
}

func round4(x float64) float64 { return float64(int(x*10000+0.5)) / 10000 }

func isMarkdownHeading(line string) bool {
	i := 0
	for i < len(line) && i < 7 && line[i] == '#' {
		i++
	}
	return i >= 1 && i <= 6 && i < len(line) && line[i] == ' '
}
