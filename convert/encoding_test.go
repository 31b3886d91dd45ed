package convert

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"golang.org/x/text/encoding/simplifiedchinese"
)

// TestStrayByteKeepsUTF8 is issue #20: 子平真诠.md with one stray byte
// (\xe4) appended was read as GB18030 and became mojibake. It must convert as
// UTF-8, the same as the intact file, with a warning naming the offset.
func TestStrayByteKeepsUTF8(t *testing.T) {
	orig, err := os.ReadFile(filepath.Join(corpusDir(t), "bazi", "子平真诠.md"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "子平真诠.md")
	if err := os.WriteFile(path, append(append([]byte(nil), orig...), 0xe4), 0o644); err != nil {
		t.Fatal(err)
	}
	want, err := ConvertBytes(context.Background(), orig, "子平真诠.md", Options{})
	if err != nil {
		t.Fatal(err)
	}
	doc, err := Convert(context.Background(), path, Options{})
	if err != nil {
		t.Fatalf("stray byte: %v", err)
	}
	if doc.Quality.Encoding != "utf-8" {
		t.Errorf("encoding %q, want utf-8", doc.Quality.Encoding)
	}
	if doc.Markdown != want.Markdown {
		t.Errorf("the stray byte changed the text (%d headings, want %d)", doc.Quality.Headings, want.Quality.Headings)
	}
	if doc.Quality.Headings == 0 || doc.Quality.Garbled {
		t.Errorf("quality %+v: want headings and no garbling", doc.Quality)
	}
	offset := len(orig)
	if !hasWarning(doc, "byte offset "+itoa(offset)) {
		t.Errorf("no warning naming byte offset %d: %q", offset, doc.Quality.Warnings)
	}
}

// TestCutMidCharacterConverts: a 4 KB file cut in the middle of a character
// converts, its damaged tail dropped with a warning, instead of being lost.
func TestCutMidCharacterConverts(t *testing.T) {
	line := []byte("# 论用神\n\n八字用神，专求月令，以日干配月令地支，而生克不同，格局分焉。\n\n")
	var data []byte
	for len(data) < 4096 {
		data = append(data, line...)
	}
	cut := 4096
	for utf8.RuneStart(data[cut]) {
		cut-- // stop inside a multi-byte character
	}
	data = data[:cut]
	if utf8.Valid(data) {
		t.Fatal("test data should end mid-character")
	}
	doc, err := ConvertBytes(context.Background(), data, "cut.md", Options{})
	if err != nil {
		t.Fatalf("cut file: %v", err)
	}
	if doc.Quality.Encoding != "utf-8" || strings.Contains(doc.Markdown, "\uFFFD") || !strings.Contains(doc.Markdown, "八字用神") {
		t.Errorf("encoding %q, text not repaired: %q", doc.Quality.Encoding, doc.Markdown[len(doc.Markdown)-80:])
	}
	if !hasWarning(doc, "edge of the file") {
		t.Errorf("no warning for the damaged tail: %q", doc.Quality.Warnings)
	}
}

// TestGarbledTextFailsNamingFile: bytes that are neither UTF-8 nor clean
// GB18030/Big5 fail the conversion with ErrGarbled and the file's name.
func TestGarbledTextFailsNamingFile(t *testing.T) {
	// GBK text with a UTF-8 passage spliced every few lines: each decoder
	// leaves a large share undecodable.
	gbk, err := simplifiedchinese.GBK.NewEncoder().Bytes([]byte("八字用神，专求月令，以日干配月令地支。\n"))
	if err != nil {
		t.Fatal(err)
	}
	var data []byte
	for i := 0; i < 200; i++ {
		data = append(data, gbk...)
		data = append(data, 0xff, 0x80, 0xfe, '\n')
		data = append(data, []byte("财官印食，此用神之善而顺用之者也。\n")...)
	}
	path := filepath.Join(t.TempDir(), "bad\nname.txt")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = Convert(context.Background(), path, Options{})
	if !errors.Is(err, ErrGarbled) {
		t.Fatalf("err = %v, want ErrGarbled", err)
	}
	if !strings.Contains(err.Error(), "name.txt") || !strings.Contains(err.Error(), "UTF-8") {
		t.Errorf("error %q does not name the file and what to do", err)
	}
}

// TestRareStrayBytesInsideStayUTF8: a few bad bytes inside long UTF-8 text
// are replaced, not taken as a sign of another encoding.
func TestRareStrayBytesInsideStayUTF8(t *testing.T) {
	text := bytes.Repeat([]byte("正官佩印，不如乘马。"), 200)
	data := append(append(append([]byte(nil), text[:900]...), 0xe4), text[900:]...)
	d := decodeText(data)
	if d.encoding != "utf-8" || d.replaced != 1 || !strings.Contains(d.warnings[0], "byte offset 900") {
		t.Fatalf("decoded as %q, %d replaced, warnings %q", d.encoding, d.replaced, d.warnings)
	}
}

func hasWarning(doc Document, s string) bool {
	for _, w := range doc.Quality.Warnings {
		if strings.Contains(w, s) {
			return true
		}
	}
	return false
}

func itoa(n int) string { return strconv.Itoa(n) }

// TestDecodeLatin1 reads a Latin-1 English text (a Project Gutenberg
// "-8.txt" file) as Windows-1252, not as GB18030, which turned "à propos"
// into a replacement character and "és" into one ideograph.
func TestDecodeLatin1(t *testing.T) {
	src := []byte("sonnets \xe0 propos of the bi-centenary; Quibbling over the minuti\xe6 of form; caf\xe9s and na\xefve readers.\n")
	d := decodeText(src)
	if d.encoding != "windows-1252" {
		t.Fatalf("encoding = %q, want windows-1252", d.encoding)
	}
	want := "sonnets à propos of the bi-centenary; Quibbling over the minutiæ of form; cafés and naïve readers.\n"
	if d.text != want {
		t.Errorf("text = %q, want %q", d.text, want)
	}
	// GBK Chinese stays GB18030: its bytes come in high pairs.
	gbk := []byte("\xb5\xda\xd2\xbb\xbb\xd8 \xcd\xf5\xbd\xcc\xcd\xb7\n") // 第一回 王教头
	if d := decodeText(gbk); d.encoding != "gb18030" || d.text != "第一回 王教头\n" {
		t.Errorf("GBK: %q %q", d.encoding, d.text)
	}
}
