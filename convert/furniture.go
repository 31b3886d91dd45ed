package convert

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// Furniture is what a plain-text source carries around the work that is not
// the work: a Project Gutenberg header and licence, the org-mode headers,
// page-break markers and line-end marks of a Kanripo (mandoku) file, a
// Markdown file's YAML front matter. stripFurniture removes it before the
// text is structured, names each part with its size ([Aside]) and returns
// the work's title when the furniture gives one.

var (
	// reGutenbergStart matches the line (or the start of the lines) that
	// opens the work in a Project Gutenberg file:
	// "*** START OF THE PROJECT GUTENBERG EBOOK THE ART OF WAR ***",
	// "***START OF THE PROJECT GUTENBERG EBOOK INFANTRY DRILL REGULATIONS, UNITED".
	reGutenbergStart = regexp.MustCompile(`(?mi)^[ \t]*\*{3}[ \t]*START OF (?:THE|THIS) PROJECT GUTENBERG E(?:-?BOOK|TEXT)`)
	// reGutenbergEnd matches the first line of what follows the work:
	// "*** END OF THE PROJECT GUTENBERG EBOOK ...", or the older
	// "End of the Project Gutenberg EBook of ..." / "End of Project
	// Gutenberg's ..." that comes just before it.
	reGutenbergEnd = regexp.MustCompile(`(?mi)^[ \t]*(?:\*{3}[ \t]*END OF (?:THE|THIS) PROJECT GUTENBERG E(?:-?BOOK|TEXT)|End of (?:the )?Project Gutenberg(?:'s)? (?:E-?Book|Etext|Work)?)`)
	// reGutenbergTitle reads "Title: The Art of War" in the header.
	reGutenbergTitle = regexp.MustCompile(`(?m)^Title:[ \t]*(.+)$`)
	// reOrgHeader matches the org-mode header lines of a Kanripo (mandoku)
	// file: "# -*- mode: mandoku-view; -*-", "#+TITLE: 農桑輯要",
	// "#+PROPERTY: JUAN 卷一".
	reOrgHeader = regexp.MustCompile(`(?m)^(?:# -\*- .*-\*-|#\+[A-Za-z_]+:.*)[ \t]*\r?\n?`)
	reOrgTitle  = regexp.MustCompile(`(?m)^#\+TITLE:[ \t]*(.+?)[ \t]*$`)
	// rePageMarker matches a Kanripo page-break marker: <pb:KR3d0003_WYG_001-1a>.
	rePageMarker = regexp.MustCompile(`<pb:[^>\n]{1,80}>`)
	// rePageMarkerLine matches a line holding only such a marker: the
	// line goes with it, so that a page break leaves no blank line in the
	// middle of a paragraph.
	rePageMarkerLine = regexp.MustCompile(`(?m)^[ \t]*<pb:[^>\n]{1,80}>¶?[ \t]*\r?\n`)
	// reFrontMatterYAML matches YAML front matter at the very start of a
	// Markdown file.
	reFrontMatterYAML = regexp.MustCompile(`\A---[ \t]*\r?\n((?s:.*?))\r?\n---[ \t]*\r?\n`)
)

// stripFurniture removes the furniture of a plain-text or Markdown source
// (see above). md says the source is Markdown (YAML front matter is looked
// for only there).
func stripFurniture(text string, md bool) (string, []Aside, string) {
	var asides []Aside
	title := ""
	if md {
		if m := reFrontMatterYAML.FindStringSubmatchIndex(text); m != nil {
			var meta map[string]any
			if err := yaml.Unmarshal([]byte(text[m[2]:m[3]]), &meta); err == nil && len(meta) > 0 {
				title = yamlTitle(meta["title"])
				asides = addAside(asides, "front matter of the source (YAML metadata)", "metadata about the file, not text of the work", text[:m[1]])
				text = text[m[1]:]
			}
		}
	}
	if loc := reGutenbergStart.FindStringIndex(text); loc != nil {
		// The marker may run over two lines; the work starts after the
		// line that closes it with "***".
		start := loc[1]
		if close := strings.Index(text[start:], "***"); close >= 0 && strings.Count(text[start:start+close], "\n") <= 2 {
			start += close + 3
		}
		if nl := strings.IndexByte(text[start:], '\n'); nl >= 0 {
			start += nl + 1
		} else {
			start = len(text)
		}
		head := text[:start]
		if m := reGutenbergTitle.FindStringSubmatch(head); m != nil {
			title = strings.TrimSpace(m[1])
		}
		rest := text[start:]
		tail := ""
		if e := reGutenbergEnd.FindStringIndex(rest); e != nil {
			tail = rest[e[0]:]
			rest = rest[:e[0]]
		}
		asides = addAside(asides, "Project Gutenberg header", "the eBook's licence notice and catalogue entry, not text of the work", head)
		asides = addAside(asides, "Project Gutenberg licence and end notes", "the eBook's licence and the notes after the work, not text of the work", tail)
		text = rest
	}
	if reOrgTitle.MatchString(text) || strings.HasPrefix(text, "# -*- mode: mandoku") {
		if m := reOrgTitle.FindStringSubmatch(text); m != nil && title == "" {
			title = m[1]
		}
		var removed strings.Builder
		text = reOrgHeader.ReplaceAllStringFunc(text, func(s string) string {
			removed.WriteString(s)
			return ""
		})
		asides = addAside(asides, "org-mode file headers (#+TITLE, #+PROPERTY lines)", "metadata of the digital edition, not text of the work", removed.String())
	}
	if markers := rePageMarker.FindAllString(text, -1); len(markers) > 0 {
		text = rePageMarkerLine.ReplaceAllString(text, "")
		text = rePageMarker.ReplaceAllString(text, "")
		asides = addAside(asides, "page-break markers (<pb:…>)", "they mark where the printed pages break, not text of the work", strings.Join(markers, ""))
	}
	if n := lineEndMarks(text); n > 0 {
		text = strings.ReplaceAll(text, "¶", "")
		asides = addAside(asides, "line-end marks (¶)", "they mark where the printed lines break, not text of the work", strings.Repeat("¶", n))
	}
	return text, asides, title
}

// lineEndMarks returns how many ¶ the text holds when ¶ ends most of its
// lines (a Kanripo file marks every line of the printed page), else 0.
func lineEndMarks(text string) int {
	n := strings.Count(text, "¶")
	if n == 0 {
		return 0
	}
	lines, marked := 0, 0
	for _, l := range strings.Split(text, "\n") {
		l = strings.TrimRight(l, " \t\r")
		if l == "" {
			continue
		}
		lines++
		if strings.HasSuffix(l, "¶") {
			marked++
		}
	}
	if marked*2 < lines {
		return 0
	}
	return n
}

// yamlTitle reads a title from front matter: a string, or a mapping of
// language variants (title: {zh-hans: ..., zh-hant: ...}) whose first
// value in key order is taken.
func yamlTitle(v any) string {
	switch t := v.(type) {
	case string:
		return strings.TrimSpace(t)
	case map[string]any:
		best := ""
		bestKey := ""
		for k, x := range t {
			if s, ok := x.(string); ok && (best == "" || k < bestKey) {
				best, bestKey = s, k
			}
		}
		return strings.TrimSpace(best)
	}
	return ""
}

// shortTitle caps a title taken from furniture at a sensible length.
func shortTitle(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) > 120 {
		return string([]rune(s)[:120])
	}
	return s
}

// Page furniture of plain text taken from printed pages (OCR output, a
// djvu.txt file): a page number standing alone between blank lines, and
// next to it a running head repeated page after page ("SYPHILITIC
// DISEASES.", "2 SIMPLE TREATMENT."). PDFs lose theirs page by page
// (stripRunningLines); plain text has no pages, so they are found by the
// page numbers.

var (
	rePageNumberLine = regexp.MustCompile(`^(?:\d{1,4}|[ivxlcdm]{1,7})$`)
	// reRunningEdge matches a page number or roman numeral at either end of
	// a running head ("V1 PREFACE.", "CONTENTS. x i").
	reRunningEdge = regexp.MustCompile(`^(?:[\dIVXLCivxlc]{1,5}\s+)+|(?:\s+[\dIVXLCivxlc]{1,5})+$`)
)

// minPageNumbers is how many page numbers standing alone a text needs to be
// taken for printed pages; minRunningHead how often a head must come back
// next to them.
const (
	minPageNumbers = 10
	minRunningHead = 3
	// minRunningHeadAnywhere: a head seen this often next to page numbers
	// is dropped wherever it stands alone.
	minRunningHeadAnywhere = 5
)

// stripPageFurniture removes page numbers and running heads from plain
// text taken from printed pages, rejoining a paragraph the page break cut
// ("dif-" / "ferent from that"), and names what it removed.
func stripPageFurniture(text string) (string, []Aside) {
	lines := strings.Split(text, "\n")
	trim := func(i int) string { return strings.TrimSpace(lines[i]) }
	alone := func(i int) bool {
		return (i == 0 || trim(i-1) == "") && (i+1 == len(lines) || trim(i+1) == "")
	}
	var pages []int
	for i := range lines {
		if t := trim(i); t != "" && rePageNumberLine.MatchString(t) && alone(i) {
			pages = append(pages, i)
		}
	}
	if len(pages) < minPageNumbers {
		return text, nil
	}
	headKey := func(t string) string {
		if utf8.RuneCountInString(t) > 60 || t == "" {
			return ""
		}
		k := strings.TrimSpace(reRunningEdge.ReplaceAllString(t, ""))
		if k == "" || endsSentence(strings.TrimRight(k, ".")) && !strings.HasSuffix(k, ".") {
			return ""
		}
		return strings.ToUpper(strings.Join(strings.Fields(k), " "))
	}
	// The nearest line before and after each page number, across blank lines.
	near := func(p, step int) int {
		for k := p + step; k >= 0 && k < len(lines); k += step {
			if trim(k) != "" {
				return k
			}
		}
		return -1
	}
	count := map[string]int{}
	for _, p := range pages {
		for _, k := range []int{near(p, -1), near(p, 1)} {
			if k >= 0 && alone(k) {
				if key := headKey(trim(k)); key != "" {
					count[key]++
				}
			}
		}
	}
	drop := map[int]bool{}
	var numbers, heads strings.Builder
	for _, p := range pages {
		drop[p] = true
		numbers.WriteString(trim(p))
		for _, k := range []int{near(p, -1), near(p, 1)} {
			if k >= 0 && alone(k) && count[headKey(trim(k))] >= minRunningHead {
				if !drop[k] {
					heads.WriteString(trim(k))
				}
				drop[k] = true
			}
		}
	}
	// A head that comes back often is a running head wherever it stands
	// alone with its page number on the same line ("20 SYPHILITIC
	// DISEASES."); alone, it may be the chapter's own title.
	for i := range lines {
		if t := trim(i); t != "" && !drop[i] && alone(i) && reRunningEdge.MatchString(t) && count[headKey(t)] >= minRunningHeadAnywhere {
			heads.WriteString(t)
			drop[i] = true
		}
	}
	var out []string
	for i, l := range lines {
		if !drop[i] {
			out = append(out, l)
			continue
		}
		// A page break inside a paragraph: the text goes on after the
		// furniture, so the blank lines around it go too.
		prev := len(out) - 1
		for prev >= 0 && strings.TrimSpace(out[prev]) == "" {
			prev--
		}
		next := i + 1
		for next < len(lines) && (trim(next) == "" || drop[next]) {
			next++
		}
		if prev >= 0 && next < len(lines) {
			p := strings.TrimSpace(out[prev])
			r, _ := utf8.DecodeRuneInString(trim(next))
			if !endsSentence(p) && unicode.IsLower(r) {
				out = out[:prev+1]
				for k := i + 1; k < next; k++ {
					drop[k] = true
				}
			}
		}
	}
	var asides []Aside
	asides = addAside(asides, "page numbers", "they number the printed pages, not text of the work", numbers.String())
	asides = addAside(asides, "running heads", "they repeat the book's or chapter's name at the top of the printed pages, not text of the work", heads.String())
	return strings.Join(out, "\n"), asides
}

// Page-break marker lines of a plain text from a download site or a dump of
// a printed book: "----------- Page 142-----------", "=== 第12页 ===",
// "第 12 页", "[Page 12]", "- 142 -", "<142>", and a line holding only a form
// feed. They are no text of the work and cut a paragraph in two at every
// page; stripPageMarkers drops them, joins the paragraph they cut and names
// them as set aside.

var (
	// rePageMarkerWord matches a marker that says it is a page: a page
	// number with "Page", "p." or 页, between marker punctuation.
	rePageMarkerWord = regexp.MustCompile(`^(?i)[-–—=_*~#·.\s]*[\[【〔(（<〈]?[-–—=_*~#·\s]*` +
		`(?:(?:page|pg\.?|p\.)\s*[0-9０-９]{1,5}(?:\s*(?:of|/)\s*[0-9０-９]{1,5})?` +
		`|第?\s*(?:[0-9０-９]{1,5}|[一二三四五六七八九十百千零〇两]{1,8})\s*[页頁](?:\s*/\s*共?\s*[0-9０-９]{1,5}\s*[页頁]?)?)` +
		`[-–—=_*~#·\s]*[\]】〕)）>〉]?[-–—=_*~#·.\s]*$`)
	// rePageMarkerBare matches a bare page number in marker punctuation:
	// "- 142 -", "=== 12 ===", "<142>". Such lines are taken for markers
	// only when the text holds at least minBareMarkers of them.
	rePageMarkerBare = regexp.MustCompile(`^(?:[-–—=~_*]+\s*[0-9０-９]{1,5}\s*[-–—=~_*]+|[<〈]\s*[0-9０-９]{1,5}\s*[>〉])$`)
)

// minBareMarkers is how many bare page numbers in marker punctuation a text
// needs for them to be taken for page markers.
const minBareMarkers = 3

// stripPageMarkers removes the page-break marker lines of a plain text (see
// above). It reads the text before control characters are cleaned, so that
// a line holding only a form feed is seen. Where the text before a marker
// does not end a sentence or paragraph, and a heading does not follow, the
// blank lines around it go too, so the paragraph it cut is joined again.
func stripPageMarkers(text string) (string, []Aside) {
	if !strings.ContainsAny(text, "0123456789０１２３４５６７８９一二三四五六七八九十\f") {
		return text, nil
	}
	text = strings.ReplaceAll(text, "\r\n", "\n")
	text = strings.ReplaceAll(text, "\r", "\n")
	lines := strings.Split(text, "\n")
	trim := func(i int) string { return strings.TrimFunc(lines[i], unicode.IsSpace) }
	drop := make([]bool, len(lines))
	var bare []int
	n := 0
	for i, l := range lines {
		t := trim(i)
		switch {
		case t == "" && strings.ContainsRune(l, '\f'):
			drop[i] = true
			n++
		case t == "" || utf8.RuneCountInString(t) > 80:
		case rePageMarkerWord.MatchString(t):
			drop[i] = true
			n++
		case rePageMarkerBare.MatchString(t):
			bare = append(bare, i)
		}
	}
	if len(bare) >= minBareMarkers {
		for _, i := range bare {
			drop[i] = true
			n++
		}
	}
	if n == 0 {
		return text, nil
	}
	var markers strings.Builder
	var out []string
	for i, l := range lines {
		if !drop[i] {
			out = append(out, l)
			continue
		}
		markers.WriteString(trim(i))
		prev := len(out) - 1
		for prev >= 0 && strings.TrimSpace(out[prev]) == "" {
			prev--
		}
		next := i + 1
		for next < len(lines) && (trim(next) == "" || drop[next]) {
			next++
		}
		if prev < 0 || next >= len(lines) {
			continue
		}
		if p := strings.TrimFunc(out[prev], unicode.IsSpace); !endsParagraph(p) && classifyHeading(trim(next)) == kindNone {
			// The page broke a paragraph: the blank lines around the
			// marker go with it.
			out = out[:prev+1]
			for k := i + 1; k < next; k++ {
				drop[k] = true
			}
		}
	}
	var asides []Aside
	asides = addAside(asides, "page-break markers (----- Page 12 -----, 第12页)", "a download site or a scan marks where the printed pages break, not text of the work", markers.String())
	return strings.Join(out, "\n"), asides
}
