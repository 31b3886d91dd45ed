package convert

import (
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/vibelife/vibe/internal/textmetric"
)

// headingKind ranks the kinds of heading lines found in plain text, outermost
// first. The Markdown level of a kind is its rank among the kinds a document
// actually uses, so a book with 回 but no 卷 gets 回 at level 1.
type headingKind int

const (
	kindNone      headingKind = iota
	kindVolume                // 卷二, 第一部, 上篇, 第一编, Part I, Book 2
	kindSubVolume             // 第一分编
	kindChapter               // 第一章, 第三回, Chapter 4
	kindTitle                 // a title line of plain text (太微赋), ranked by its indentation
	kindSection               // 第一节, 1.1
	kindSub                   // 1.1.1, (一)
	kindSubSub                // 1.1.1.1
	kindFront                 // 序, 目录, 附录: at the level of the outermost kind used
)

// lineHint is what the plain-text analysis (plain.go) knows of a line before
// the heading patterns are tried: that it is a heading of a kind, ranked
// among the headings of that kind, or that it is text.
type lineHint struct {
	heading headingKind
	rank    int  // among headings of the same kind: deeper indentation ranks higher
	text    bool // never a heading, whatever the patterns say
	cont    bool // an indented line that continues the paragraph before it
}

var (
	cjkNum   = `[一二三四五六七八九十百千零〇两\d]+`
	reVolume = regexp.MustCompile(`^(第` + cjkNum + `[卷部篇集编編]|卷` + cjkNum + `|卷之` + cjkNum + `|[上中下]篇|(?i:part|book|volume)\s+[\dIVXLC]+\b)` +
		// A volume line that repeats the book's title: 三命通会卷之一,
		// 新锓希夷陈先生紫微斗数全书 卷之三.
		`|^\p{Han}{1,16}[ \x{3000}]?卷之?` + cjkNum + `[上下]?$` +
		// The First Book (Meditations).
		`|^(?i:the\s+(?:first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|eleventh|twelfth)\s+book)\.?$`)
	reSubVolume = regexp.MustCompile(`^第` + cjkNum + `分[编編]`)
	reChapter   = regexp.MustCompile(`^(第` + cjkNum + `[章回]|(?i:chapter|chap\.)\s*[\dIVXLC]+\b)` +
		// A Roman-numbered title in capitals: "I.  LAYING PLANS".
		`|^[IVXLC]{1,6}\.\s+[^a-z]*[A-Z]{2}[^a-z]*$`)
	// reLatinDivision matches the division lines that may end with a full
	// stop: "CHAPTER I.", "PART I.--DRILL.", "CHAP. II.".
	reLatinDivision = regexp.MustCompile(`(?i)^(?:part|book|volume|chapter|chap\.)\s*[\dIVXLC]+\b|^the\s+\w+\s+book\.$`)
	reSection       = regexp.MustCompile(`^第` + cjkNum + `[节條条]`)
	reCNList        = regexp.MustCompile(`^[一二三四五六七八九十百]+[、．.]\s*\S`)
	reCNParen       = regexp.MustCompile(`^[（(][一二三四五六七八九十]+[)）]`)
	reNumbered      = regexp.MustCompile(`^(\d{1,2}(?:\.\d{1,2}){0,3})\.?\s+\S`)
	// Front and back matter named by a line of its own: 目录, 附录; a
	// paper's Abstract, Acknowledgments and References.
	reFrontPart = regexp.MustCompile(`^(序|自序|序言|前言|引言|目录|目錄|跋|后记|後記|凡例|附录|附錄|` +
		`Abstract|Acknowledg(?:e)?ments?|References|Bibliography|Preface|Foreword|Glossary|(?:Table of )?Contents|Appendix(?: [A-Z\d])?)$`)
	// A list item line: bullets, "1." / "1)" / "1、" numbers, "(1)", "a)".
	// "1.5 grams" is not one: a number must be followed by space or Han.
	// Groups: 1 bullet, 2 number, 3/4 its punctuation, 5 parenthesised.
	reListItem = regexp.MustCompile(`^(?:([-*•·▪◦])\s+\S|(\d{1,3})(?:([.)])\s+\S|([.)、])\s*\p{Han})|([（(])(?:\d{1,3}|[a-z])[)）]\s*\S|[a-z]\)\s+\S)`)
	// A Wikisource navigation line that opens a page of a work: "◀上一卷	卷二	下一卷▶",
	// "全书始	通天论", "◀上一论	贞元论	全书终". Group 1 is the page's name.
	reNavLine = regexp.MustCompile(`^(?:◀\s*上一\p{Han}|全书始)[\t \x{3000}]+([^\t]{1,20}?)[\t \x{3000}]*(?:(?:下一\p{Han}\s*▶|全书终)[\t \x{3000}]*)?$`)
	rePageNum = regexp.MustCompile(`^[-–—\s]*(\d{1,4}|[ivxlcdm]{1,6}|第\s*\d+\s*页|page\s+\d+(\s+of\s+\d+)?)[-–—\s]*$`)
)

// classifyHeading says whether a trimmed line is a heading line and of what
// kind. Headings are short lines; sentences ending in punctuation are not.
func classifyHeading(line string) headingKind {
	n := utf8.RuneCountInString(line)
	if n == 0 || n > 40 {
		return kindNone
	}
	last, _ := utf8.DecodeLastRuneInString(line)
	if strings.ContainsRune("。！？；，,;:：", last) || last == '.' && !reNumbered.MatchString(line) && !reLatinDivision.MatchString(line) {
		return kindNone
	}
	if m := reLatinDivision.FindString(line); m != "" && sentenceLike(strings.TrimLeft(line[len(m):], ". ")) {
		// "Chapter V. ss. 19, note." is a note pointing at a chapter.
		return kindNone
	}
	switch {
	case reSubVolume.MatchString(line):
		return kindSubVolume
	case reVolume.MatchString(line):
		return kindVolume
	case reChapter.MatchString(line):
		return kindChapter
	case reSection.MatchString(line), reCNList.MatchString(line) && n <= 20:
		return kindSection
	case reCNParen.MatchString(line) && n <= 20:
		return kindSub
	case reFrontPart.MatchString(line):
		return kindFront
	}
	if m := reNumbered.FindStringSubmatch(line); m != nil && n <= 80 {
		// A numbered line is a heading only when it reads like a title: it
		// starts with an upper-case letter or CJK and has no sentence end.
		rest := strings.TrimSpace(line[len(m[1]):])
		rest = strings.TrimPrefix(rest, ".")
		rest = strings.TrimSpace(rest)
		r, _ := utf8.DecodeRuneInString(rest)
		if (unicode.IsUpper(r) || textmetric.IsCJK(r)) && !sentenceLike(rest) {
			switch strings.Count(m[1], ".") {
			case 0:
				return kindChapter
			case 1:
				return kindSection
			case 2:
				return kindSub
			default:
				return kindSubSub
			}
		}
	}
	if isAllCapsTitle(line) {
		return kindChapter
	}
	return kindNone
}

// reHashStart matches text that Markdown would read as a heading: one to
// six "#" then a space or the end.
var reHashStart = regexp.MustCompile(`^#{1,6}(?:[ \t]|$)`)

// sentenceLike says whether the text after a number reads as the start of a
// numbered paragraph or a note rather than a title: it holds a semicolon or
// two full stops ("To the rear: 1. _About_, 2. _FACE_.", "See chap. XI."),
// many words in lower case, or ends with a full stop after a comma or
// lower-case words ("SHI CHI, ch. 65.").
func sentenceLike(rest string) bool {
	if strings.ContainsRune(rest, ';') || strings.Count(rest, ".") >= 2 {
		// "See chap. XI.", "About 480 B.C.", "R. Pulv. catechu."
		return true
	}
	lower := 0
	for _, w := range strings.Fields(rest) {
		if r, _ := utf8.DecodeRuneInString(strings.TrimLeft(w, "_*\"'(")); unicode.IsLower(r) {
			lower++
		}
	}
	if lower >= 5 {
		return true
	}
	return strings.HasSuffix(rest, ".") && (strings.Contains(rest, ", ") || lower >= 2)
}

func isAllCapsTitle(line string) bool {
	if strings.ContainsRune(line, '|') || strings.HasSuffix(line, "]") || strings.HasPrefix(line, "[") {
		// A table row, the end or start of a bracketed note.
		return false
	}
	if strings.ContainsRune(line, '\\') || strings.Contains(line, "://") {
		// A path or an address: D:\DISTS\SLINK\MAIN\DISKS-I386\.
		return false
	}
	for _, f := range strings.Fields(line) {
		if strings.Count(f, "/") >= 2 {
			// A path: /USR/LOCAL/BIN.
			return false
		}
	}
	letters, nonSpace := 0, 0
	for _, r := range line {
		if !unicode.IsSpace(r) {
			nonSpace++
		}
		if unicode.IsLetter(r) {
			if !unicode.IsUpper(r) || r > unicode.MaxLatin1 {
				return false
			}
			letters++
		}
	}
	// Mostly letters: figure labels in symbol fonts ("<//2??.B<AAC0/;#3%4%56#")
	// and markup codes ("EP06AU20.010</GPH>") are not titles.
	return letters >= 4 && letters*10 >= nonSpace*6 && len(strings.Fields(line)) <= 10
}

// structureText turns plain text pages into Markdown. With more than one page
// it removes repeated page headers and footers and page numbers. It rejoins
// hyphenated line breaks, joins the lines of a paragraph (no space between CJK
// characters), drops control characters, and turns chapter lines (第一章,
// 卷二, 第三回, numbered and all-caps headings) into Markdown headings whose
// levels keep the hierarchy of the kinds found.
func structureText(pages []string) string {
	md, _ := structureTextWith(pages, nil)
	return md
}

// structureTextWith is structureText with known headings (normalised text ->
// level, e.g. from a PDF outline) that take precedence over the patterns;
// it also says what it set aside (page numbers, running heads and feet).
func structureTextWith(pages []string, known map[string]int) (string, []Aside) {
	return structureTextHinted(pages, known, nil)
}

// structureTextHinted is structureTextWith with hints for the lines of a
// single page (see lineHint); nil for none.
func structureTextHinted(pages []string, known map[string]int, hints []lineHint) (string, []Aside) {
	for i := range pages {
		pages[i] = cleanControl(pages[i])
	}
	var asides []Aside
	if len(pages) > 1 {
		pages, asides = stripRunningLinesAside(pages)
	}
	var lines []string
	for _, p := range pages {
		lines = append(lines, strings.Split(p, "\n")...)
		lines = append(lines, "")
	}
	return linesToMarkdownWith(lines, known, hints), asides
}

// linesToMarkdown is the core of structureText over already-cleaned lines.
func linesToMarkdown(lines []string) string { return linesToMarkdownWith(lines, nil, nil) }

// linesToMarkdownWith is linesToMarkdown with known headings (normalised
// text -> level, e.g. from a PDF outline) that take precedence over the
// heading patterns.
func linesToMarkdownWith(lines []string, known map[string]int, hints []lineHint) string {
	type block struct {
		kind  headingKind
		rank  int
		level int
		text  string
		item  bool // a list item: no blank line before the next item
	}
	var blocks []block
	var para []string
	inItem := false // para holds a list item and its continuation lines
	// openVolume is the last volume line: classical books close a volume
	// by repeating its title (三命通㑹卷十 … 三命通㑹卷十), which is text,
	// not a second volume of the same name.
	openVolume := ""
	flush := func() {
		if len(para) > 0 {
			blocks = append(blocks, block{kind: kindNone, text: joinParagraph(para), item: inItem})
			para = nil
		}
		inItem = false
	}
	items := listItemLines(lines)
	for i, raw := range lines {
		indented := strings.HasPrefix(raw, "　") || strings.HasPrefix(raw, "  ") || strings.HasPrefix(raw, "\t")
		line := strings.TrimSpace(strings.Trim(raw, "　"))
		if line == "" {
			flush()
			continue
		}
		if inItem && !items[i] && (strings.HasPrefix(raw, " ") || strings.HasPrefix(raw, "\t") || !endsSentence(para[len(para)-1])) {
			// An indented line, or one after an item cut mid-sentence
			// (a hard-wrapped item), continues the item.
			para = append(para, line)
			continue
		}
		if inItem {
			flush()
		}
		if m := reNavLine.FindStringSubmatch(line); m != nil {
			// The page a navigation line opens is the outermost division
			// of the work (卷二, or a page such as 通天论): without it every
			// chapter after the line is cited under the heading before it.
			// The bare work title the site prints above the line is
			// dropped with it, as a running header.
			if len(para) == 1 && !inItem && utf8.RuneCountInString(para[0]) <= 20 && looksLikeTitle(para[0]) {
				para = nil
			}
			flush()
			openVolume = strings.TrimSpace(m[1])
			blocks = append(blocks, block{kind: kindVolume, text: openVolume})
			continue
		}
		if lv := known[normHeading(line)]; lv > 0 {
			flush()
			blocks = append(blocks, block{kind: kindNone, level: lv, text: strings.Join(strings.Fields(line), " ")})
			continue
		}
		var hint lineHint
		if i < len(hints) {
			hint = hints[i]
		}
		if hint.heading != kindNone {
			flush()
			if hint.heading == kindVolume {
				openVolume = line
			}
			blocks = append(blocks, block{kind: hint.heading, rank: hint.rank, text: strings.Join(strings.Fields(line), " ")})
			continue
		}
		if items[i] {
			flush()
			inItem = true
			para = append(para, line)
			continue
		}
		if len(known) == 0 && !hint.text {
			if k := classifyHeading(line); k != kindNone && !(k == kindVolume && line == openVolume) && !continuedBy(lines, i) {
				if k == kindVolume {
					openVolume = line
				}
				flush()
				blocks = append(blocks, block{kind: k, text: strings.Join(strings.Fields(line), " ")})
				continue
			}
		}
		if indented && !hint.cont {
			flush()
		}
		para = append(para, line)
	}
	flush()

	// A heading's level is the rank of its kind (and, within a kind, of its
	// rank) among those the document uses.
	key := func(b block) int { return int(b.kind)*64 + min(b.rank, 63) }
	used := map[int]bool{}
	for _, b := range blocks {
		if b.kind != kindNone && b.kind != kindFront {
			used[key(b)] = true
		}
	}
	var kinds []int
	for k := range used {
		kinds = append(kinds, k)
	}
	sort.Ints(kinds)
	level := map[int]int{}
	for i, k := range kinds {
		level[k] = min(i+1, 6)
	}
	level[key(block{kind: kindFront})] = 1
	var sb strings.Builder
	for i, b := range blocks {
		if i > 0 {
			if b.item && blocks[i-1].item {
				sb.WriteString("\n")
			} else {
				sb.WriteString("\n\n")
			}
		}
		switch {
		case b.level > 0:
			sb.WriteString(strings.Repeat("#", min(b.level, 6)) + " ")
		case b.kind != kindNone:
			sb.WriteString(strings.Repeat("#", level[key(b)]) + " ")
		case reHashStart.MatchString(b.text):
			// Text that starts like a Markdown heading (a shell prompt
			// "# dselect", a comment "# /etc/fstab: …") is escaped: it
			// is text, and chunking must not file what follows under it.
			sb.WriteString(`\`)
		}
		sb.WriteString(b.text)
	}
	return strings.TrimRight(sb.String(), "\n") + "\n"
}

// continuedBy reports whether the line after lines[i] continues it: it is
// not blank and starts with a lower-case letter. A line so continued is the
// first line of a hard-wrapped paragraph ("3. Simple movements and elastic
// formations are essential to correct" / "training for battle."), not a
// heading.
func continuedBy(lines []string, i int) bool {
	if i+1 >= len(lines) {
		return false
	}
	next := strings.TrimSpace(lines[i+1])
	r, _ := utf8.DecodeRuneInString(next)
	return unicode.IsLower(r)
}

// endsSentence says whether a line ends a sentence or introduces what follows.
func endsSentence(line string) bool {
	r, _ := utf8.DecodeLastRuneInString(line)
	return strings.ContainsRune(".!?:;。！？：；」』”\")", r)
}

// listItemLines marks the lines that open a list item. A line with a list
// marker counts only beside another one of the same kind in the same run of
// non-blank lines (continuation lines may sit between them): bullets beside
// bullets, and a numbered line beside the number before or after it, with
// the same punctuation, at most maxItemGap lines away. So a lone
// "1. Introduction" between blank lines stays a heading candidate, a
// wrapped line that happens to start with "2. " inside prose stays prose,
// and a numbered section title on a PDF page whose text runs without blank
// lines ("2. Overview", bullets further down; "9. Conclusions" a column
// before "10. Future Work") is not taken for an item.
func listItemLines(lines []string) []bool {
	items := make([]bool, len(lines))
	for start := 0; start < len(lines); {
		end := start
		for end < len(lines) && strings.TrimSpace(lines[end]) != "" {
			end++
		}
		type marked struct {
			line int
			m    listMarker
		}
		var ms []marked
		for i := start; i < end; i++ {
			if m, ok := listMarkerOf(strings.TrimSpace(strings.Trim(lines[i], "　"))); ok {
				ms = append(ms, marked{i, m})
			}
		}
		for a, x := range ms {
			for b, y := range ms {
				if a != b && x.m.pairsWith(y.m, y.line-x.line) {
					items[x.line] = true
					break
				}
			}
		}
		start = end + 1
	}
	return items
}

// maxItemGap is how many lines apart two consecutive numbered items may
// start: a numbered item wrapped over more lines than that is rare, and
// numbered section titles are further apart.
const maxItemGap = 10

// listMarker is the marker opening a list item line: its kind ("•" for any
// bullet, "1." / "1)" / "1、" for numbers by their punctuation, "(1)" for
// parenthesised numbers or letters, "a)") and, for numbers, the number.
type listMarker struct {
	kind string
	num  int // 0 when not numbered
}

func (m listMarker) pairsWith(o listMarker, gap int) bool {
	if m.kind != o.kind {
		return false
	}
	if m.num == 0 || o.num == 0 {
		return true
	}
	return (o.num == m.num+1 || o.num == m.num-1) && gap <= maxItemGap && gap >= -maxItemGap
}

// listMarkerOf returns the list marker a trimmed line starts with.
// "1.5 grams" has none: a number must be followed by space or Han.
func listMarkerOf(line string) (listMarker, bool) {
	m := reListItem.FindStringSubmatch(line)
	if m == nil {
		return listMarker{}, false
	}
	switch {
	case m[1] != "":
		return listMarker{kind: "•"}, true
	case m[2] != "":
		n, _ := strconv.Atoi(m[2])
		return listMarker{kind: "1" + m[3] + m[4], num: n}, true
	case m[5] != "":
		return listMarker{kind: "(1)"}, true
	default:
		return listMarker{kind: "a)"}, true
	}
}

// joinParagraph joins hard-wrapped lines: a hyphen at a line end before a
// lower-case letter is removed, CJK characters are joined without a space,
// everything else with one space.
func joinParagraph(lines []string) string {
	var sb strings.Builder
	for i, l := range lines {
		if i == 0 {
			sb.WriteString(l)
			continue
		}
		prev := sb.String()
		pl, _ := utf8.DecodeLastRuneInString(prev)
		nf, _ := utf8.DecodeRuneInString(l)
		switch {
		case (pl == '-' || pl == '\u2010') && len(prev) > 1 && unicode.IsLetter(lastBefore(prev)) && unicode.IsLower(nf):
			_, size := utf8.DecodeLastRuneInString(prev)
			sb.Reset()
			sb.WriteString(prev[:len(prev)-size])
			sb.WriteString(l)
		case textmetric.IsCJK(pl) || textmetric.IsCJK(nf) || isCJKPunct(pl) || isCJKPunct(nf):
			sb.WriteString(l)
		default:
			sb.WriteString(" ")
			sb.WriteString(l)
		}
	}
	return sb.String()
}

func lastBefore(s string) rune {
	_, size := utf8.DecodeLastRuneInString(s)
	s = s[:len(s)-size]
	r, _ := utf8.DecodeLastRuneInString(s)
	return r
}

func isCJKPunct(r rune) bool {
	return r >= 0x3000 && r <= 0x303F || r >= 0xFF00 && r <= 0xFFEF
}

// cleanControl drops control characters other than newline and tab, and
// normalises line ends.
func cleanControl(s string) string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = strings.ReplaceAll(s, "\r", "\n")
	// A soft hyphen at a line end marks a word broken across lines.
	s = strings.ReplaceAll(s, "\u00AD\n", "-\n")
	s = ligatures.Replace(s)
	return strings.Map(func(r rune) rune {
		if r == '\n' || r == '\t' {
			return r
		}
		if unicode.IsControl(r) || r == '\uFEFF' || r == '\u00AD' {
			return -1
		}
		return r
	}, s)
}

// ligatures expands the typographic ligatures of PDF fonts into letters.
var ligatures = strings.NewReplacer("\uFB00", "ff", "\uFB01", "fi", "\uFB02", "fl", "\uFB03", "ffi", "\uFB04", "ffl", "\uFB05", "st", "\uFB06", "st")

// stripRunningLines removes page numbers and lines that repeat at the top or
// bottom of many pages (running headers and footers).
func stripRunningLines(pages []string) []string {
	out, _ := stripRunningLinesAside(pages)
	return out
}

// stripRunningLinesAside is stripRunningLines that also says what it took
// out: the page numbers, and the running heads and feet (a printer's slug
// "VerDate Sep<11>2014 … Jkt 250001 PO 00000 Frm 00001" on every page of a
// Federal Register issue).
func stripRunningLinesAside(pages []string) ([]string, []Aside) {
	var numbers, running strings.Builder
	const edge = 3
	norm := func(s string) string {
		s = strings.TrimSpace(s)
		return strings.Map(func(r rune) rune {
			if unicode.IsDigit(r) {
				return '#'
			}
			return r
		}, s)
	}
	counts := map[string]int{}
	split := make([][]string, len(pages))
	for i, p := range pages {
		lines := strings.Split(p, "\n")
		split[i] = lines
		seen := map[string]bool{}
		for _, idx := range edgeIndexes(lines, edge) {
			k := norm(lines[idx])
			if k != "" && !seen[k] {
				seen[k] = true
				counts[k]++
			}
		}
	}
	minRepeat := max(3, len(pages)/2)
	out := make([]string, len(pages))
	for i, lines := range split {
		drop := map[int]bool{}
		for _, idx := range edgeIndexes(lines, edge) {
			t := strings.TrimSpace(lines[idx])
			if rePageNum.MatchString(strings.ToLower(t)) || counts[norm(t)] >= minRepeat {
				drop[idx] = true
			}
		}
		var kept []string
		for j, l := range lines {
			switch {
			case !drop[j]:
				kept = append(kept, l)
			case rePageNum.MatchString(strings.ToLower(strings.TrimSpace(l))):
				numbers.WriteString(l + "\n")
			default:
				running.WriteString(l + "\n")
			}
		}
		out[i] = strings.Join(kept, "\n")
	}
	var asides []Aside
	asides = addAside(asides, "page numbers", "they number the printed pages, not text of the work", numbers.String())
	asides = addAside(asides, "running heads and feet", "they repeat on the top or bottom lines of many pages (a title, a date, a printer's line), not text of the work", running.String())
	return out, asides
}

// edgeIndexes returns the indexes of the first and last n non-empty lines.
func edgeIndexes(lines []string, n int) []int {
	var idx []int
	for i, c := 0, 0; i < len(lines) && c < n; i++ {
		if strings.TrimSpace(lines[i]) != "" {
			idx = append(idx, i)
			c++
		}
	}
	for i, c := len(lines)-1, 0; i >= 0 && c < n; i-- {
		if strings.TrimSpace(lines[i]) != "" {
			idx = append(idx, i)
			c++
		}
	}
	return idx
}
