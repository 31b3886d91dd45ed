package convert

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/vibelife/vibe/internal/textmetric"
)

// Formats vibe converts.
const (
	FormatPDF  = "pdf"
	FormatEPUB = "epub"
	FormatDOCX = "docx"
	FormatHTML = "html"
	FormatText = "txt"
	FormatMD   = "md"
)

// Convert reads the file at path and converts it. The format is sniffed from
// the bytes, not trusted from the extension. A panic inside a parser becomes
// an error naming the file. Errors wrap the sentinels of this package
// (ErrUnsupportedFormat, ErrEmpty, ErrTooLarge, ErrZipBomb, ErrDamaged,
// ErrEncrypted, ErrNoText).
func Convert(ctx context.Context, path string, opts Options) (Document, error) {
	opts = opts.withDefaults()
	st, err := os.Stat(path)
	if err != nil {
		return Document{}, quotePathError(err)
	}
	if st.Size() > opts.MaxFileBytes {
		return Document{}, fmt.Errorf("%q: %w: %d bytes (limit %d; raise convert.max_file_bytes in vibe.yaml)", path, ErrTooLarge, st.Size(), opts.MaxFileBytes)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return Document{}, quotePathError(err)
	}
	if opts.SourceName == "" {
		opts.SourceName = filepath.ToSlash(path)
	}
	doc, err := ConvertBytes(ctx, data, filepath.Base(path), opts)
	if err != nil {
		return doc, fmt.Errorf("%q: %w", path, err)
	}
	return doc, nil
}

// ConvertBytes converts data; name (the file name) is only a hint for text
// files (.md keeps its Markdown) and the fallback title.
func ConvertBytes(ctx context.Context, data []byte, name string, opts Options) (doc Document, err error) {
	opts = opts.withDefaults()
	if int64(len(data)) > opts.MaxFileBytes {
		return doc, fmt.Errorf("%w: %d bytes (limit %d)", ErrTooLarge, len(data), opts.MaxFileBytes)
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return doc, ErrEmpty
	}
	format, err := Sniff(data, name)
	if err != nil {
		return doc, err
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: the %s parser failed (%v); the file is probably damaged", ErrDamaged, format, r)
		}
	}()
	if format == FormatPDF && opts.PDFium != nil && opts.PDFEngine != "ledongthuc" {
		// Outside the bounds: starting the engine is not this PDF's work. A
		// start-up error is returned by the conversion itself (and the
		// auto engine falls back to the other reader).
		_ = opts.PDFium.Start()
	}
	doc, err = bounded(ctx, opts, format, func(ctx context.Context) (Document, error) {
		switch format {
		case FormatPDF:
			return convertPDF(ctx, data, opts)
		case FormatEPUB:
			return convertEPUB(data, opts)
		case FormatDOCX:
			return convertDOCX(data, opts)
		case FormatHTML:
			return convertHTML(data)
		default:
			return convertText(data, format)
		}
	})
	if err != nil {
		return doc, err
	}
	if md, n := DropRepeatedPassages(doc.Markdown); n > 0 {
		doc.Quality.SetAside = append(doc.Quality.SetAside, Aside{Part: fmt.Sprintf("%d repeated paragraphs, headings or tables", n),
			Chars: CountText(doc.Markdown) - CountText(md), Why: "they repeat an earlier passage of the document word for word"})
		doc.Markdown = md
		doc.Quality.Warnings = append(doc.Quality.Warnings, fmt.Sprintf(
			"repeated text: %d paragraphs, headings or tables that repeat an earlier passage word for word were left out (the document holds the same text more than once)", n))
	}
	sum := sha256.Sum256(data)
	doc.SHA256 = hex.EncodeToString(sum[:])
	doc.Source = opts.SourceName
	if doc.Source == "" {
		doc.Source = name
	}
	doc.Converter = Version
	doc.Title = cleanMetaTitle(doc.Title)
	if doc.Title == "" {
		doc.Title = titleFromText(doc.Markdown)
	}
	if doc.Title == "" {
		doc.Title = strings.TrimSuffix(name, filepath.Ext(name))
	}
	doc.Title = stripVolumeLabel(doc.Title)
	q := assessQuality(doc.Markdown)
	q.Encoding = doc.Quality.Encoding
	q.Pages = doc.Quality.Pages
	q.PagesWithoutText = doc.Quality.PagesWithoutText
	q.NeedsOCR = doc.Quality.NeedsOCR
	q.Partial = doc.Quality.Partial
	q.Warnings = doc.Quality.Warnings
	q.SourceChars = doc.Quality.SourceChars
	q.SetAside = doc.Quality.SetAside
	q.Added = doc.Quality.Added
	q.TextChars = CountText(doc.Markdown)
	if q.Garbled {
		q.Warnings = append(q.Warnings, fmt.Sprintf("garbled text: %.0f%% of the characters look like mojibake, %.0f%% are replacement characters; the text layer or encoding is broken", q.GarbledRatio*100, q.ReplacementRatio*100))
	}
	doc.Quality = q
	if strings.TrimSpace(doc.Markdown) == "" {
		return doc, fmt.Errorf("%w: conversion produced no text", ErrNoText)
	}
	return doc, nil
}

// Sniff returns the format of data: pdf, epub, docx, html, md or txt.
func Sniff(data []byte, name string) (string, error) {
	head := data
	if len(head) > 4096 {
		head = head[:4096]
	}
	switch {
	case bytes.HasPrefix(bytes.TrimLeft(head, "\x00\t\r\n "), []byte("%PDF-")):
		return FormatPDF, nil
	case bytes.HasPrefix(data, []byte("PK\x03\x04")):
		return sniffZip(data)
	}
	if looksBinary(head) {
		return "", fmt.Errorf("%w: binary data that is not PDF, EPUB or DOCX (convert it to one of PDF, EPUB, DOCX, HTML, TXT or Markdown)", ErrUnsupportedFormat)
	}
	lower := strings.ToLower(string(bytes.TrimPrefix(head, []byte{0xEF, 0xBB, 0xBF})))
	trimmed := strings.TrimSpace(lower)
	if strings.HasPrefix(trimmed, "<!doctype html") || strings.HasPrefix(trimmed, "<html") ||
		strings.HasPrefix(trimmed, "<?xml") && strings.Contains(lower, "<html") ||
		strings.Contains(lower, "<body") && strings.Contains(lower, "</") {
		return FormatHTML, nil
	}
	switch strings.ToLower(filepath.Ext(name)) {
	case ".md", ".markdown":
		return FormatMD, nil
	}
	return FormatText, nil
}

func sniffZip(data []byte) (string, error) {
	z, err := openZip(data, 1<<40)
	if err != nil {
		return "", err
	}
	if b, err := z.read("mimetype"); err == nil && strings.TrimSpace(string(b)) == "application/epub+zip" {
		return FormatEPUB, nil
	}
	if z.has("word/document.xml") {
		return FormatDOCX, nil
	}
	if len(z.find(func(n string) bool { return strings.EqualFold(filepath.Ext(n), ".opf") })) > 0 {
		return FormatEPUB, nil
	}
	return "", fmt.Errorf("%w: a zip archive that is neither EPUB nor DOCX", ErrUnsupportedFormat)
}

// looksBinary reports NUL bytes or many control bytes, except for UTF-16
// text with a BOM.
func looksBinary(head []byte) bool {
	if bytes.HasPrefix(head, []byte{0xFF, 0xFE}) || bytes.HasPrefix(head, []byte{0xFE, 0xFF}) {
		return false
	}
	ctl := 0
	for _, b := range head {
		if b == 0 {
			return true
		}
		if b < 0x09 || b > 0x0D && b < 0x20 {
			ctl++
		}
	}
	return len(head) > 0 && ctl*10 > len(head)
}

// convertText decodes text in any common encoding; plain text is
// structured, Markdown keeps its headings (and gets chapter detection when it
// has none).
func convertText(data []byte, format string) (Document, error) {
	dec := decodeText(data)
	text := dec.text
	doc := Document{Format: format}
	doc.Quality.Encoding = dec.encoding
	doc.Quality.Warnings = append(doc.Quality.Warnings, dec.warnings...)
	if err := checkDecoded(data, dec, format); err != nil {
		return doc, err
	}
	if !utf8.ValidString(text) {
		text = strings.ToValidUTF8(text, "\uFFFD")
	}
	doc.Quality.SourceChars = CountChars(text)
	clean := cleanControl(text)
	// A .txt file written in Markdown (a collection that keeps "## 原道第一"
	// headings in text files) is Markdown.
	md := format == FormatMD || markdownHeadingCount(clean) >= 3
	if md {
		// A reader of Markdown sees its text, not its marks: counted as
		// the converted text is.
		doc.Quality.SourceChars = CountText(text)
	}
	var markerAsides []Aside
	if !md {
		// Page-break marker lines are read before the control characters
		// go, so that a line holding only a form feed is one of them.
		var unmarked string
		unmarked, markerAsides = stripPageMarkers(text)
		clean = cleanControl(unmarked)
	}
	body, asides, title := stripFurniture(clean, md)
	asides = append(asides, markerAsides...)
	if !md {
		var pageAsides []Aside
		body, pageAsides = stripPageFurniture(body)
		asides = append(asides, pageAsides...)
		// The converted text is Markdown: a plain text's underscores and
		// asterisks around words (Project Gutenberg's _italics_) and its
		// bullets are marks there, which a reader of it does not see.
		if n := CountChars(body) - CountText(body); n > 0 {
			asides = append(asides, Aside{Part: "marks Markdown reads in the text (_italics_, *emphasis*, bullets)", Chars: n,
				Why: "the converted text is Markdown, where they mark emphasis or a list item and are no characters a reader sees"})
		}
	}
	doc.Quality.SetAside = asides
	doc.Title = shortTitle(title)
	if md && hasMarkdownHeadings(body) {
		doc.Markdown = strings.TrimSpace(reBlankRuns.ReplaceAllString(body, "\n\n")) + "\n"
		return doc, nil
	}
	if format != FormatMD {
		body = unprefixChapterLines(body)
	}
	body = separateTitleAndAuthor(body)
	numbered := numberTOCSections(body)
	if n := CountText(numbered) - CountText(body); n > 0 {
		doc.Quality.Added = append(doc.Quality.Added, Aside{Part: "section numbers from the contents list", Chars: n,
			Why: "the contents list numbers the sections (1 天地日月星辰) and the text titles them without: the number heads the section as the list gives it"})
	}
	doc.Markdown = structurePlain(numbered, doc.Title)
	return doc, nil
}

// markdownHeadingCount counts the lines of s that are Markdown headings
// ("## 原道第一") after a blank line or at the start.
func markdownHeadingCount(s string) int {
	n := 0
	prevBlank := true
	for _, l := range strings.Split(s, "\n") {
		if prevBlank && isMarkdownHeading(l) {
			n++
		}
		prevBlank = strings.TrimSpace(l) == ""
	}
	return n
}

// Past these, decoded text is mojibake and its conversion fails: the share
// of characters a legacy decoder could not decode (clean GB18030 or Big5
// text has none), and the share of a Markdown file's heading lines lost in
// decoding.
const (
	maxLegacyReplacement = 0.005
	maxHeadingsLost      = 0.5
)

// checkDecoded refuses text whose decoding looks garbled, with ErrGarbled
// saying what was seen and what to do: conversion must never pass mojibake
// on as text.
func checkDecoded(data []byte, dec decoded, format string) error {
	runes := max(1, utf8.RuneCountInString(dec.text))
	share := float64(dec.replaced) / float64(runes)
	if dec.encoding == "gb18030" || dec.encoding == "big5" {
		if share > maxLegacyReplacement {
			return fmt.Errorf("%w: the bytes are not UTF-8, and read as %s %.1f%% of the characters cannot be decoded (mojibake): re-save the file as UTF-8 (e.g. iconv -f GB18030 -t UTF-8), or replace it with an undamaged copy",
				ErrGarbled, strings.ToUpper(dec.encoding), 100*share)
		}
	}
	if format == FormatMD {
		raw := len(reATXHeading.FindAll(data, -1))
		got := len(reATXHeading.FindAllString(dec.text, -1))
		if raw >= 3 && float64(raw-got) > maxHeadingsLost*float64(raw) {
			return fmt.Errorf("%w: %d of the file's %d Markdown headings are lost when it is read as %s (mojibake): re-save the file as UTF-8, or replace it with an undamaged copy",
				ErrGarbled, raw-got, raw, dec.encoding)
		}
	}
	return nil
}

// reATXHeading matches a Markdown heading line whose text starts with a
// letter or ideograph (not a "# 1" that mojibake can leave standing).
var reATXHeading = regexp.MustCompile(`(?m)^#{1,6}[ \t]+[\p{L}\p{N}]`)

func hasMarkdownHeadings(s string) bool {
	for _, l := range strings.Split(s, "\n") {
		if isMarkdownHeading(l) {
			return true
		}
	}
	return false
}

// titleFromText guesses a document's title from its Markdown when the file
// carries none: a 《book title》 named before the first heading, else the
// first heading that is not a numbered or chapter heading ("1. Introduction",
// 第一回 … and 目录 name a part, not the work), else a short first line that
// reads like a title. It returns "" when nothing qualifies, and the caller
// falls back to the file name.
func titleFromText(md string) string {
	var lead []string // non-empty lines before the first heading
	for _, l := range strings.Split(md, "\n") {
		l = strings.TrimSpace(l)
		if l == "" {
			continue
		}
		if isMarkdownHeading(l) {
			h := strings.TrimSpace(strings.TrimLeft(l, "#"))
			if m := reBookTitle.FindStringSubmatch(strings.Join(lead, "\n")); m != nil {
				return m[1]
			}
			if !isPartHeading(h) {
				return h
			}
			break
		}
		lead = append(lead, l)
	}
	if m := reBookTitle.FindStringSubmatch(strings.Join(lead, "\n")); m != nil {
		return m[1]
	}
	if len(lead) > 0 {
		// "周公解梦作者：周公旦": the title is what comes before the author.
		first, _, _ := strings.Cut(lead[0], "作者")
		first = strings.TrimSpace(first)
		if looksLikeTitle(first) {
			return first
		}
	}
	return ""
}

// cleanMetaTitle drops what authoring tools put in the title field instead of
// a title: "Microsoft Word - report.docx" keeps "report", "Untitled" goes.
func cleanMetaTitle(t string) string {
	t = strings.TrimSpace(t)
	t = strings.TrimSpace(reToolPrefix.ReplaceAllString(t, ""))
	t = strings.TrimSpace(reDocExt.ReplaceAllString(t, ""))
	if reNoTitle.MatchString(t) {
		return ""
	}
	return t
}

var (
	reToolPrefix = regexp.MustCompile(`(?i)^(microsoft (word|powerpoint|excel) - |writer - )`)
	reDocExt     = regexp.MustCompile(`(?i)\.(docx?|pdf|odt|rtf|txt|tex|dvi|pptx?|xlsx?|indd)$`)
	reNoTitle    = regexp.MustCompile(`(?i)^(untitled(\s*\d+)?|document\d*|无标题|新建\s*microsoft.*|slide \d+)?$`)
)

var reBookTitle = regexp.MustCompile(`《([^《》\n]{1,30})》`)

// reVolumeLabel matches a CJK title that names one volume or the front
// matter of a work rather than the work: 三命通会卷前, 三命通会卷之一,
// 三命通会全十二册卷之一, 某书第二册, 某书卷上.
var reVolumeLabel = regexp.MustCompile(`^(.*?\p{Han})[\s\x{3000}]*(?:全` + cjkNum + `[册冊卷])?[\s\x{3000}]*(?:卷之?` + cjkNum + `[上中下]?|第` + cjkNum + `[卷册冊]|卷[前首末上中下])$`)

// stripVolumeLabel returns the work's title from a title naming one of its
// volumes (三命通会卷前 -> 三命通会); other titles are returned as they are.
func stripVolumeLabel(title string) string {
	if m := reVolumeLabel.FindStringSubmatch(title); m != nil {
		return m[1]
	}
	return title
}

// isPartHeading says whether a heading names a part of a work (chapter,
// numbered section, table of contents) rather than the work itself.
func isPartHeading(h string) bool {
	for _, re := range []*regexp.Regexp{reVolume, reChapter, reSection, reCNList, reCNParen, reNumbered, reFrontPart} {
		if re.MatchString(h) {
			return true
		}
	}
	return false
}

// looksLikeTitle accepts a short line without sentence punctuation or links.
func looksLikeTitle(line string) bool {
	n := utf8.RuneCountInString(line)
	if n < 2 || n > 80 || strings.Contains(line, "://") || endsSentence(line) || strings.ContainsAny(line, "，,。；;：") {
		return false
	}
	cjk := 0
	for _, r := range line {
		if textmetric.IsCJK(r) {
			cjk++
		}
	}
	return cjk == 0 || n <= 30
}
