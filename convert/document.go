package convert

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// Version identifies the converter's output. Bump it when a change to any
// converter alters its Markdown, so that unchanged sources are converted again.
const Version = "vibe-convert/17"

// Document is one source converted to Markdown.
type Document struct {
	// Source is the path of the original, relative to the workspace when it is
	// inside one, with forward slashes.
	Source string `yaml:"source"`
	// SHA256 is the hex digest of the original bytes.
	SHA256 string `yaml:"sha256"`
	// Format is one of pdf, epub, docx, html, txt, md.
	Format string `yaml:"format"`
	// Title is the document title from its metadata, first heading or name.
	Title string `yaml:"title"`
	// Work is what the file's own metadata says of the work besides its
	// title (an EPUB's dc:creator, dc:publisher, dc:date), for curate's
	// provenance; not written to the converted file.
	Work WorkMeta `yaml:"-"`
	// Converter is the [Version] that produced the file.
	Converter string `yaml:"converter"`
	// Quality says how much to trust the text.
	Quality Quality `yaml:"quality"`
	// Markdown is the body, without front matter.
	Markdown string `yaml:"-"`
}

// WorkMeta is what a file's metadata says of the work it holds.
type WorkMeta struct {
	Author, Publisher, Published string
}

// Quality is the report written into every converted file's front matter.
type Quality struct {
	// Chars counts the characters (runes) of the body.
	Chars int `yaml:"chars"`
	// Headings counts Markdown headings in the body.
	Headings int `yaml:"headings"`
	// GarbledRatio is the share of characters that look like mojibake
	// (Latin-1 or private-use characters standing in for CJK, stray symbols).
	GarbledRatio float64 `yaml:"garbled_ratio"`
	// ReplacementRatio is the share of U+FFFD replacement characters.
	ReplacementRatio float64 `yaml:"replacement_ratio"`
	// Encoding is the detected text encoding (utf-8, utf-16le, gb18030, big5,
	// ...), for text formats.
	Encoding string `yaml:"encoding,omitempty"`
	// Pages is the page count, for paged formats.
	Pages int `yaml:"pages,omitempty"`
	// PagesWithoutText lists 1-based pages that have no text layer.
	PagesWithoutText []int `yaml:"pages_without_text,omitempty"`
	// NeedsOCR is set when pages have no text layer: the text is incomplete
	// until the document is OCRed.
	NeedsOCR bool `yaml:"needs_ocr,omitempty"`
	// Garbled is set when the text is judged unreadable (GarbledRatio or
	// ReplacementRatio too high): downstream stages should not trust it.
	Garbled bool `yaml:"garbled,omitempty"`
	// Partial is set when only part of a damaged file (a PDF cut short)
	// could be recovered; the warnings say what was lost.
	Partial bool `yaml:"partial,omitempty"`
	// Warnings are human-readable notes about the conversion.
	Warnings []string `yaml:"warnings,omitempty"`
	// SourceChars counts the characters of the source's text as read,
	// before conversion: [CountChars] of a plain text, [CountText] of a
	// Markdown source (its marks are no text); EPUB's spine bodies; DOCX's
	// text runs; a PDF's text layer; an HTML page's body as a browser shows
	// it. Chars, by contrast, counts the runes of the converted body, white
	// space and marks included.
	SourceChars int `yaml:"source_chars,omitempty"`
	// TextChars counts the characters a reader sees of the converted body
	// ([CountText]: no white space, no Markdown marks such as a link's
	// address): the figure the chunks of the document are measured against.
	TextChars int `yaml:"text_chars,omitempty"`
	// SetAside lists what the conversion left out of the text on purpose,
	// with its size: SourceChars is about TextChars plus these.
	SetAside []Aside `yaml:"set_aside,omitempty"`
	// Added lists what the conversion wrote that the source's text does
	// not hold, with its size (an EPUB chapter's title taken from the
	// book's navigation): TextChars is about SourceChars less SetAside
	// plus these.
	Added []Aside `yaml:"added,omitempty"`
}

// Render returns the converted file: front matter, a blank line, the body.
func Render(doc Document) ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteString("---\n")
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(doc); err != nil {
		return nil, fmt.Errorf("encode front matter of %q: %w", doc.Source, err)
	}
	enc.Close()
	buf.WriteString("---\n\n")
	body := strings.TrimRight(doc.Markdown, "\n")
	buf.WriteString(body)
	buf.WriteString("\n")
	return buf.Bytes(), nil
}

// ErrNoFrontMatter is returned by [Parse] for files that do not start with
// vibe's front matter.
var ErrNoFrontMatter = errors.New("no front matter")

// Parse splits a converted file into its Document (with Markdown set to the
// body) and the character (rune) offset at which the body starts in data.
func Parse(data []byte) (Document, int, error) {
	var doc Document
	s := string(data)
	if !strings.HasPrefix(s, "---\n") {
		return doc, 0, ErrNoFrontMatter
	}
	end := strings.Index(s[4:], "\n---\n")
	if end < 0 {
		return doc, 0, fmt.Errorf("%w: unterminated", ErrNoFrontMatter)
	}
	fm := s[4 : 4+end+1]
	if err := yaml.Unmarshal([]byte(fm), &doc); err != nil {
		return doc, 0, fmt.Errorf("front matter: %w", err)
	}
	bodyStart := 4 + end + len("\n---\n")
	// Render puts one blank line after the closing marker.
	if strings.HasPrefix(s[bodyStart:], "\n") {
		bodyStart++
	}
	doc.Markdown = s[bodyStart:]
	return doc, utf8.RuneCountInString(s[:bodyStart]), nil
}

// ReadFile reads and parses a converted file. See [Parse].
func ReadFile(path string) (Document, int, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Document{}, 0, err
	}
	doc, off, err := Parse(data)
	if err != nil {
		return doc, 0, fmt.Errorf("%q: %w", path, err)
	}
	return doc, off, nil
}
