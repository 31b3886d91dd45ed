package curate

import (
	"bytes"
	"path/filepath"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Media types curate keeps, by the extension of the stored file.
var mediaTypes = map[string]string{
	".pdf":  "application/pdf",
	".epub": "application/epub+zip",
	".docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
	".html": "text/html",
	".txt":  "text/plain",
	".md":   "text/markdown",
}

// convertibleExt maps the extensions looked at in directories and globs to
// their canonical form.
var convertibleExt = map[string]string{
	".pdf": ".pdf", ".epub": ".epub", ".docx": ".docx",
	".html": ".html", ".htm": ".html", ".xhtml": ".html",
	".txt": ".txt", ".text": ".txt", ".md": ".md", ".markdown": ".md",
}

var htmlTagRE = regexp.MustCompile(`</?(div|p|article|section|main|h[1-6]|span|table|ul|ol|li|br|blockquote)[\s>/]`)

// sniff returns the canonical extension for data, judged from the bytes; the
// name only separates Markdown from plain text. It returns "" for data curate
// cannot convert.
func sniff(data []byte, name string) string {
	switch {
	case bytes.HasPrefix(data, []byte("%PDF-")):
		return ".pdf"
	case bytes.HasPrefix(data, []byte("PK\x03\x04")):
		head := data
		if len(head) > 4096 {
			head = head[:4096]
		}
		switch {
		case bytes.Contains(head, []byte("application/epub+zip")):
			return ".epub"
		case bytes.Contains(data, []byte("word/document.xml")):
			return ".docx"
		case bytes.Contains(data, []byte("META-INF/container.xml")) && !bytes.Contains(data, []byte("application/vnd.oasis")):
			// An EPUB whose mimetype entry is not first.
			return ".epub"
		}
		return ""
	case bytes.HasPrefix(data, []byte{0xFF, 0xFE}), bytes.HasPrefix(data, []byte{0xFE, 0xFF}):
		return ".txt"
	}
	head := data
	if len(head) > 2048 {
		head = head[:2048]
	}
	lower := bytes.ToLower(bytes.TrimLeft(head, "\xef\xbb\xbf \t\r\n"))
	if bytes.HasPrefix(lower, []byte("<!doctype html")) || bytes.HasPrefix(lower, []byte("<html")) ||
		(bytes.HasPrefix(lower, []byte("<")) && (bytes.Contains(lower, []byte("<body")) || bytes.Contains(lower, []byte("<head")))) ||
		(bytes.HasPrefix(lower, []byte("<?xml")) && bytes.Contains(lower, []byte("<html"))) ||
		(bytes.HasPrefix(lower, []byte("<")) && len(htmlTagRE.FindAllIndex(lower, 3)) >= 2) {
		// The last case is a saved fragment (<div>, <article>, ...).
		return ".html"
	}
	if !looksText(head) {
		return ""
	}
	if ext := convertibleExt[strings.ToLower(filepath.Ext(name))]; ext == ".md" {
		return ".md"
	}
	return ".txt"
}

// looksText reports whether data has no NUL bytes and few control bytes, so
// that it is text in UTF-8 or a legacy CJK encoding.
func looksText(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	ctl := 0
	for _, c := range b {
		if c == 0 {
			return false
		}
		if c < 0x20 && c != '\n' && c != '\r' && c != '\t' && c != '\f' && c != 0x1b {
			ctl++
		}
	}
	return ctl*20 < len(b)
}

// textStats measures extracted text.
type textStats struct {
	chars   int     // non-space runes
	garbled float64 // share of replacement, control, private-use runes
	script  string  // dominant script: zh, ja, ko, en (Latin), ru, or ""
}

func measure(text string) textStats {
	var s textStats
	var bad, han, kana, hangul, latin, cyr int
	for _, r := range text {
		if unicode.IsSpace(r) {
			continue
		}
		s.chars++
		switch {
		case r == utf8.RuneError, unicode.Is(unicode.Co, r), unicode.IsControl(r):
			bad++
		case unicode.Is(unicode.Han, r):
			han++
		case unicode.In(r, unicode.Hiragana, unicode.Katakana):
			kana++
		case unicode.Is(unicode.Hangul, r):
			hangul++
		case unicode.Is(unicode.Latin, r):
			latin++
		case unicode.Is(unicode.Cyrillic, r):
			cyr++
		}
	}
	if s.chars > 0 {
		s.garbled = float64(bad) / float64(s.chars)
	}
	letters := han + kana + hangul + latin + cyr
	if letters == 0 {
		return s
	}
	// Japanese mixes Han with kana: a tenth of kana says ja.
	switch {
	case kana*10 >= letters:
		s.script = "ja"
	case hangul*5 >= letters:
		s.script = "ko"
	case han*5 >= letters && han >= latin/4:
		// Han characters carry a word each; a fifth of the letters is a
		// Chinese text with Latin terms, not the other way round.
		s.script = "zh"
	case cyr > latin:
		s.script = "ru"
	default:
		s.script = "en"
	}
	return s
}

// languageOK reports whether the detected script fits the wanted language.
// Latin script stands for every language written in it (en, fr, de, ...).
func languageOK(want, got string) bool {
	want = strings.ToLower(strings.TrimSpace(want))
	if want == "" || got == "" {
		return true
	}
	if i := strings.IndexAny(want, "-_"); i > 0 {
		want = want[:i]
	}
	switch want {
	case "zh", "ja", "ko", "ru":
		return want == got
	}
	return got == "en"
}

const minhashSize = 128

// signature is a MinHash sketch of a text's 5-rune shingles after
// normalisation (letters and digits only, lowercased), so the same book
// converted from two formats gets nearly the same sketch whatever its spacing,
// punctuation or markup.
type signature [minhashSize]uint64

// slotMul are the per-slot odd multipliers of sketch's hash family.
var slotMul = func() (m [minhashSize]uint64) {
	for j := range m {
		m[j] = uint64(j+1) * 0x9E3779B97F4A7C15
	}
	return m
}()

func sketch(text string) (signature, bool) {
	var norm []rune
	for _, r := range strings.ToLower(text) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			norm = append(norm, r)
		}
	}
	var sig signature
	for i := range sig {
		sig[i] = ^uint64(0)
	}
	const k = 5
	if len(norm) < k {
		return sig, false
	}
	// A shingle seen before (its FNV-1a hash seen before) cannot lower
	// any slot again: each distinct hash goes through the 128 slots once.
	seen := make(map[uint64]struct{}, len(norm)/2)
	var buf [4 * k]byte
	for i := 0; i+k <= len(norm); i++ {
		b := buf[:0]
		for _, r := range norm[i : i+k] {
			b = utf8.AppendRune(b, r)
		}
		base := uint64(14695981039346656037) // FNV-1a, 64 bits
		for _, c := range b {
			base ^= uint64(c)
			base *= 1099511628211
		}
		if _, dup := seen[base]; dup {
			continue
		}
		seen[base] = struct{}{}
		for j := range sig {
			// Cheap independent hash family: mix the base hash with a
			// per-slot odd multiplier and xorshift.
			x := base ^ slotMul[j]
			x ^= x >> 33
			x *= 0xff51afd7ed558ccd
			x ^= x >> 33
			if x < sig[j] {
				sig[j] = x
			}
		}
	}
	return sig, true
}

// similarity estimates the Jaccard similarity of the two shingle sets.
func similarity(a, b signature) float64 {
	same := 0
	for i := range a {
		if a[i] == b[i] {
			same++
		}
	}
	return float64(same) / minhashSize
}
