package convert

import (
	"bytes"
	stdunicode "unicode"
	"unicode/utf8"

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/simplifiedchinese"
	"golang.org/x/text/encoding/traditionalchinese"
	"golang.org/x/text/encoding/unicode"
	"golang.org/x/text/transform"
)

// decodeText detects the encoding of text bytes and returns them as UTF-8
// with the encoding's name. It recognises UTF-8 (with or without BOM),
// UTF-16 with a BOM, and, for other bytes, GB18030 (a superset of GBK and
// GB2312) or Big5, whichever decodes more plausibly.
func decodeText(data []byte) (string, string) {
	switch {
	case bytes.HasPrefix(data, []byte{0xEF, 0xBB, 0xBF}):
		return string(data[3:]), "utf-8-bom"
	case bytes.HasPrefix(data, []byte{0xFF, 0xFE}):
		return decodeWith(unicode.UTF16(unicode.LittleEndian, unicode.ExpectBOM), data), "utf-16le"
	case bytes.HasPrefix(data, []byte{0xFE, 0xFF}):
		return decodeWith(unicode.UTF16(unicode.BigEndian, unicode.ExpectBOM), data), "utf-16be"
	case utf8.Valid(data):
		return string(data), "utf-8"
	}
	gb := decodeWith(simplifiedchinese.GB18030, data)
	b5 := decodeWith(traditionalchinese.Big5, data)
	if plausibility(b5) > plausibility(gb) {
		return b5, "big5"
	}
	return gb, "gb18030"
}

func decodeWith(enc encoding.Encoding, data []byte) string {
	out, _, err := transform.Bytes(enc.NewDecoder(), data)
	if err != nil {
		return string(bytes.ToValidUTF8(data, []byte("\uFFFD")))
	}
	return string(out)
}

// plausibility scores decoded text: common CJK ideographs, ASCII and CJK
// punctuation count for it; replacement, private-use and rare characters
// count against it.
func plausibility(s string) float64 {
	var good, bad, n float64
	for _, r := range s {
		n++
		switch {
		case r == utf8.RuneError, r >= 0xE000 && r <= 0xF8FF:
			bad += 3
		case r < 0x80, r >= 0x3000 && r <= 0x303F, r >= 0xFF00 && r <= 0xFFEF:
			good++
		case r >= 0x4E00 && r <= 0x9FFF:
			good++
		case stdunicode.Is(stdunicode.Han, r):
			// Extension blocks: real but rare.
		default:
			bad++
		}
	}
	if n == 0 {
		return 0
	}
	return (good - bad) / n
}
