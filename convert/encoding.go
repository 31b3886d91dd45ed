package convert

import (
	"bytes"
	"fmt"
	"strings"
	stdunicode "unicode"
	"unicode/utf8"

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/simplifiedchinese"
	"golang.org/x/text/encoding/traditionalchinese"
	"golang.org/x/text/encoding/unicode"
	"golang.org/x/text/transform"
)

// decoded is text bytes decoded to UTF-8.
type decoded struct {
	text     string
	encoding string
	// warnings name repairs: bytes dropped or replaced, with their offsets.
	warnings []string
	// replaced counts the characters that could not be decoded.
	replaced int
}

// edgeBytes is how far from the start or the end of a file invalid bytes
// count as a damaged edge (a cut multi-byte character is at most 3 bytes,
// plus a stray byte).
const edgeBytes = 4

// utf8DamageRatio: UTF-8 text with at most one invalid byte per this many
// valid multi-byte characters is taken as damaged UTF-8, not as another
// encoding. Text in GB18030 or Big5 read as UTF-8 is almost all invalid.
const utf8DamageRatio = 50

// decodeText detects the encoding of text bytes and returns them as UTF-8.
// It recognises UTF-8 (with or without BOM), UTF-16 with a BOM, and, for
// other bytes, GB18030 (a superset of GBK and GB2312) or Big5, whichever
// decodes more plausibly. Text that is valid UTF-8 except at its edges (a
// file cut mid-character, a stray byte appended) or but for rare stray bytes
// is UTF-8: the bad bytes are dropped at the edges and replaced inside, and a
// warning names their byte offsets; reading it as GB18030 would turn the
// whole text into mojibake.
func decodeText(data []byte) decoded {
	switch {
	case bytes.HasPrefix(data, []byte{0xFF, 0xFE}):
		return decodeLegacy(unicode.UTF16(unicode.LittleEndian, unicode.ExpectBOM), data, "utf-16le")
	case bytes.HasPrefix(data, []byte{0xFE, 0xFF}):
		return decodeLegacy(unicode.UTF16(unicode.BigEndian, unicode.ExpectBOM), data, "utf-16be")
	}
	name, body, offset := "utf-8", data, 0
	if bytes.HasPrefix(data, []byte{0xEF, 0xBB, 0xBF}) {
		name, body, offset = "utf-8-bom", data[3:], 3
	}
	if utf8.Valid(body) {
		return decoded{text: string(body), encoding: name}
	}
	if d, ok := repairUTF8(body, offset, name); ok {
		return d
	}
	if singleByteWestern(data) {
		return decodeLegacy(charmap.Windows1252, data, "windows-1252")
	}
	gb := decodeLegacy(simplifiedchinese.GB18030, data, "gb18030")
	b5 := decodeLegacy(traditionalchinese.Big5, data, "big5")
	if plausibility(b5.text) > plausibility(gb.text) {
		return b5
	}
	return gb
}

// singleByteWestern reports bytes that read as a Western single-byte
// encoding (ISO-8859-1 or Windows-1252, as older Project Gutenberg files
// are): mostly ASCII, with the other bytes standing alone between ASCII
// ("caf\xe9 au lait"). GB18030 and Big5 text is mostly two-byte characters
// whose bytes are all high; read as GB18030, a Latin-1 letter before an
// ASCII letter would silently become one ideograph ("\xe9s" -> one CJK
// character), eating the letter.
func singleByteWestern(data []byte) bool {
	high, alone := 0, 0
	for i, b := range data {
		if b < 0x80 {
			continue
		}
		high++
		if (i == 0 || data[i-1] < 0x80) && (i+1 == len(data) || data[i+1] < 0x80) {
			alone++
		}
	}
	return high > 0 && high*20 < len(data) && alone*2 >= high
}

// repairUTF8 decodes body as UTF-8 when its invalid bytes are only at the
// edges or rare among valid multi-byte characters; ok is false when the
// text is not UTF-8. offset is body's position in the file, for warnings.
func repairUTF8(body []byte, offset int, name string) (decoded, bool) {
	var bad []int
	multi := 0
	for i := 0; i < len(body); {
		r, size := utf8.DecodeRune(body[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
			bad = append(bad, i)
		case size > 1:
			multi++
		}
		i += max(size, 1)
	}
	atEdge := func(i int) bool { return i < edgeBytes || i >= len(body)-edgeBytes }
	edgesOnly := true
	for _, i := range bad {
		if !atEdge(i) {
			edgesOnly = false
			break
		}
	}
	if !edgesOnly && multi < utf8DamageRatio*len(bad) {
		return decoded{}, false
	}
	var sb strings.Builder
	sb.Grow(len(body))
	var dropped, replaced []int
	for i := 0; i < len(body); {
		r, size := utf8.DecodeRune(body[i:])
		if r == utf8.RuneError && size <= 1 {
			if atEdge(i) {
				dropped = append(dropped, offset+i)
			} else {
				replaced = append(replaced, offset+i)
				sb.WriteRune(utf8.RuneError)
			}
			i++
			continue
		}
		sb.Write(body[i : i+size])
		i += size
	}
	d := decoded{text: sb.String(), encoding: name, replaced: len(replaced)}
	if len(dropped) > 0 {
		d.warnings = append(d.warnings, fmt.Sprintf("damaged UTF-8 at the edge of the file: %d invalid bytes at byte offset %s dropped (a cut or a stray byte); check the file is complete",
			len(dropped), offsetList(dropped)))
	}
	if len(replaced) > 0 {
		d.warnings = append(d.warnings, fmt.Sprintf("damaged UTF-8: %d invalid bytes at byte offset %s replaced with U+FFFD",
			len(replaced), offsetList(replaced)))
	}
	return d, true
}

// offsetList writes up to five offsets, then how many more.
func offsetList(offs []int) string {
	var parts []string
	for i, o := range offs {
		if i == 5 {
			parts = append(parts, fmt.Sprintf("and %d more", len(offs)-5))
			break
		}
		parts = append(parts, fmt.Sprint(o))
	}
	return strings.Join(parts, ", ")
}

func decodeLegacy(enc encoding.Encoding, data []byte, name string) decoded {
	text := decodeWith(enc, data)
	return decoded{text: text, encoding: name, replaced: strings.Count(text, "\uFFFD")}
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
