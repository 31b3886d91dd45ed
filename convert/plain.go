package convert

import (
	"regexp"
	"slices"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/vibelife/vibe/internal/textmetric"
)

// Structure from plain text. A book without Markdown headings (a classical
// text kept as plain Markdown, a Project Gutenberg file, OCR output, a GBK
// novel) gets its heading tree from the text itself:
//
//   - its layout: lines that are whole paragraphs (most end a sentence,
//     few blank lines), or hard-wrapped lines without blank lines, whose
//     short last line ends the paragraph;
//   - a contents list under 目录 / Contents, which ends where the text
//     begins (an end marker such as 目录终, the book's first line or an
//     entry coming round again, or a line that is prose) and is set apart
//     as a list; its entries that recur as lines of the text are headings
//     of the text, the others are not headings;
//   - the heading patterns of classifyHeading (卷/篇/章/节/回, 第…章,
//     numbered headings, CHAPTER/BOOK/PART lines);
//   - short title lines standing alone between paragraphs (太微赋), when the
//     patterns leave the book without a usable tree; their indentation
//     ranks them.
//
// The result is Markdown with real headings: chunking reads the tree from
// them and never guesses again (convert -> chunk stays one-way).

// structurePlain structures a plain-text body (see above) into Markdown.
// title is the document's title when known, used to tell where a contents
// list ends.
func structurePlain(text, title string) string {
	text = cleanControl(text)
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " \t\r")
	}
	lines = dedentBody(lines)
	lay := analyseLayout(lines)
	lines, cont := applyLayout(lines, lay)
	lines, cont = splitRunOnVolumes(lines, cont)
	lines, hints := setContentsApart(lines, cont, title)
	markLatinText(lines, hints)
	inferTitles(lines, hints, lay)
	return linesToMarkdownWith(lines, nil, hints)
}

// Body indentation: when at least bodyIndentShare of the long lines are
// indented by the same number of ASCII spaces, that indentation is the
// body's and not a paragraph's first line.
const bodyIndentShare = 0.6

// dedentBody removes the indentation a text gives all its body lines (a
// page dumped from HTML by a text browser, as Project Gutenberg's Debian
// guide #6527: every line of every paragraph three spaces in, headings
// flush left or centred, examples further in). Left there, each indented
// line would start a paragraph of its own: a hard-wrapped paragraph cut
// into its lines, and every sentence spanning two lines cut in two. Lines
// indented further keep the rest of their indentation, and a body line
// right under one of them (an example "chmod u+x myfile" over the text
// explaining it) starts a paragraph, as its indentation said.
func dedentBody(lines []string) []string {
	count := map[int]int{}
	long := 0
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if displayWidth(t) < longLineWidth {
			continue
		}
		long++
		count[len(l)-len(strings.TrimLeft(l, " "))]++
	}
	best, n := 0, 0
	for ind, c := range count {
		if c > n || c == n && ind < best {
			best, n = ind, c
		}
	}
	if best == 0 || long < 3 || float64(n) < bodyIndentShare*float64(long) {
		return lines
	}
	out := make([]string, 0, len(lines))
	prevDeeper := false
	for _, l := range lines {
		ind := len(l) - len(strings.TrimLeft(l, " "))
		if strings.TrimSpace(l) == "" {
			out = append(out, "")
			prevDeeper = false
			continue
		}
		if ind == best && prevDeeper {
			out = append(out, "")
		}
		out = append(out, l[min(best, ind):])
		prevDeeper = ind > best
	}
	return out
}

// textLayout is how a plain text breaks its lines.
type textLayout struct {
	// lineParas: every line is a paragraph of its own.
	lineParas bool
	// shortEnds: lines are hard-wrapped at about width display columns and
	// paragraphs are not separated by blank lines; a line well short of the
	// width ends its paragraph.
	shortEnds bool
	width     int
	// indentedTitles: title lines are told by their indentation (the body
	// is flush left), as in a Kanripo page.
	indentedTitles bool
	// wrapped (with lineParas): most lines are paragraphs, but the long
	// ones are hard-wrapped at width columns, and a line that runs to the
	// width without ending a sentence goes on in the next (金匮要略 as a
	// collection keeps it: one clause a line, a long clause wrapped at 47
	// characters, "生姜（三" then "两） 大枣（十二枚）").
	wrapped bool
}

// Layout thresholds. A text has few blank lines when fewer than one line
// in blankShare is blank; its lines are paragraphs when at least
// paraShare of its long lines end a sentence (hard-wrapped prose ends
// about one line in six there).
const (
	blankShare    = 4
	paraShare     = 0.6
	longLineWidth = 24   // display columns: 12 CJK characters
	shortLine     = 0.7  // of the wrap width: a shorter line ends its paragraph
	fullLine      = 0.85 // of the wrap width: a line this long runs on into the next
)

func analyseLayout(lines []string) textLayout {
	nonBlank, blank, long, ends, cjkLong := 0, 0, 0, 0, 0
	var widths, openWidths []int // long lines', and those of them not ending a sentence
	flush, indented := 0, 0
	for _, l := range lines {
		t := strings.TrimSpace(strings.Trim(l, "\u3000"))
		if t == "" {
			blank++
			continue
		}
		nonBlank++
		w := displayWidth(t)
		if w < longLineWidth {
			continue
		}
		long++
		widths = append(widths, w)
		if endsParagraph(t) {
			ends++
		} else {
			openWidths = append(openWidths, w)
		}
		if cjkShare(t) >= 0.5 {
			cjkLong++
		}
		if indentOf(l) > 0 {
			indented++
		} else {
			flush++
		}
	}
	var lay textLayout
	if nonBlank < 5 || long < 3 {
		return lay
	}
	if blank*blankShare >= nonBlank {
		// Blank lines part the paragraphs, except in a Chinese text whose
		// long lines are whole paragraphs and whose blank lines part larger
		// units: 孙子兵法 kept as one line per chapter under its title line
		// ("计篇第一计篇" right above "孙子曰：兵者…"), chapters set apart by a
		// blank line. There every line is a paragraph, so that a title line
		// stands alone. (A Latin text keeps its blank lines: a Markdown table
		// or list there is lines that belong together.)
		if cjkLong*2 >= long && float64(ends) >= paraShare*float64(long) {
			lay.lineParas = true
			lay.width, lay.wrapped = wrapWidth(widths, openWidths)
		}
		return lay
	}
	if float64(ends) >= paraShare*float64(long) {
		lay.lineParas = true
		lay.width, lay.wrapped = wrapWidth(widths, openWidths)
		return lay
	}
	if blank*10 < nonBlank && long >= 8 {
		sort.Ints(widths)
		lay.shortEnds = true
		lay.width = widths[len(widths)/2]
		lay.indentedTitles = indented*20 < long
	}
	return lay
}

// minWrapped is how many long lines must run to the wrap width without
// ending a sentence for a text of line paragraphs to be hard-wrapped too.
const minWrapped = 20

// wrapWidth tells whether a text whose lines are paragraphs also wraps its
// long ones, and at what width: the width is the 90th percentile of the
// long lines' widths, and at least minWrapped of the lines not ending a
// sentence, and half of them, run to it (fullLine). A text of one paragraph
// a line, unwrapped, has its open lines spread over every width.
func wrapWidth(widths, open []int) (int, bool) {
	if len(open) < minWrapped || len(widths) == 0 {
		return 0, false
	}
	ws := slices.Clone(widths)
	slices.Sort(ws)
	width := ws[len(ws)*9/10]
	full := 0
	for _, w := range open {
		if float64(w) >= fullLine*float64(width) {
			full++
		}
	}
	if full < minWrapped || full*2 < len(open) {
		return 0, false
	}
	return width, true
}

// applyLayout makes every paragraph end explicit: a blank line after each
// line of a text whose lines are paragraphs, after each short line of a
// hard-wrapped text and before each indented line there that starts a
// paragraph. cont marks the indented lines that continue one (a block
// indented as a whole, a page of notes).
func applyLayout(lines []string, lay textLayout) (out []string, cont []bool) {
	if !lay.lineParas && !lay.shortEnds {
		return lines, make([]bool, len(lines))
	}
	out = make([]string, 0, len(lines)+len(lines)/2)
	cont = make([]bool, 0, cap(out))
	blank := func() {
		if len(out) > 0 && out[len(out)-1] != "" {
			out = append(out, "")
			cont = append(cont, false)
		}
	}
	// The previous line's indentation, and whether it ran to the wrap
	// width (its paragraph goes on).
	prevIndent, prevFull := 0, false
	for _, l := range lines {
		t := strings.TrimSpace(strings.Trim(l, "\u3000"))
		if t == "" {
			blank()
			prevFull = false
			continue
		}
		w := float64(displayWidth(t))
		c := false
		if lay.shortEnds {
			ind := indentOf(l)
			switch {
			case ind > 0 && prevFull && ind == prevIndent:
				c = true
			case ind > 0:
				blank()
			}
			prevIndent = ind
		}
		out = append(out, l)
		cont = append(cont, c)
		prevFull = w >= fullLine*float64(lay.width)
		switch {
		case lay.lineParas && lay.wrapped && prevFull && !endsParagraph(t):
			// A wrapped line: its paragraph goes on in the next.
		case lay.lineParas || w < shortLine*float64(lay.width):
			blank()
		}
	}
	return out, cont
}

// reRunOnVolume matches a paragraph that opens with a volume label run into
// its text (梦林玄解卷之二梦占天象部二风云…, the line break lost): the
// title, 卷之 and the numeral, then more text.
var reRunOnVolume = regexp.MustCompile(`^(\p{Han}{2,16}?卷之?[一二三四五六七八九十百]+)(\p{Han})`)

// splitRunOnVolumes gives a volume label run into its paragraph a line of
// its own, when the book names at least three volumes so with the same
// title: a volume heading the text keeps.
func splitRunOnVolumes(lines []string, cont []bool) ([]string, []bool) {
	prefixes := map[string]int{}
	for _, l := range lines {
		if m := reRunOnVolume.FindStringSubmatch(strings.TrimSpace(l)); m != nil {
			prefixes[m[1][:strings.Index(m[1], "卷")]]++
		}
	}
	var out []string
	var outCont []bool
	for i, l := range lines {
		t := strings.TrimSpace(strings.Trim(l, "\u3000"))
		m := reRunOnVolume.FindStringSubmatch(t)
		if m == nil || utf8.RuneCountInString(t) <= 40 || prefixes[m[1][:strings.Index(m[1], "卷")]] < 3 || !standsAlone(lines, i) {
			out = append(out, l)
			outCont = append(outCont, cont[i])
			continue
		}
		out = append(out, m[1], "", strings.TrimPrefix(t, m[1]))
		outCont = append(outCont, false, false, false)
	}
	return out, outCont
}

// endsParagraph says whether a line ends with the punctuation that ends a
// sentence or a quotation.
func endsParagraph(t string) bool {
	r, _ := utf8.DecodeLastRuneInString(t)
	return strings.ContainsRune("。！？；：」』”’.!?:;)）\"'…", r)
}

// displayWidth counts CJK characters as two columns, others as one.
func displayWidth(s string) int {
	w := 0
	for _, r := range s {
		if textmetric.IsCJK(r) || r >= 0x3000 && r <= 0x303F || r >= 0xFF00 && r <= 0xFF60 {
			w += 2
		} else {
			w++
		}
	}
	return w
}

// indentOf measures a line's indentation in half-width columns: a
// full-width space counts two, a tab four.
func indentOf(l string) int {
	n := 0
	for _, r := range l {
		switch r {
		case ' ':
			n++
		case '\u3000':
			n += 2
		case '\t':
			n += 4
		default:
			return n
		}
	}
	return n
}

// cjkShare is the share of a line's letters that are CJK.
func cjkShare(t string) float64 {
	cjk, letters := 0, 0
	for _, r := range t {
		switch {
		case textmetric.IsCJK(r):
			cjk++
			letters++
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			letters++
		}
	}
	if letters == 0 {
		return 0
	}
	return float64(cjk) / float64(letters)
}

// --- Contents lists ---

var (
	// reContentsLabel matches the label of a contents list once its spaces
	// are removed: 目录, 目　　录, 总目录, 農桑輯要目録 (a title before it).
	reContentsLabel = regexp.MustCompile(`^\p{Han}{0,16}?(?:总|總|分集)?目[录錄録次][上中下]?$`)
	// reContentsRunTogether matches a paragraph that starts with such a
	// label and runs the contents on (梦林玄解总目录卷之首。梦占占繇：…).
	reContentsRunTogether = regexp.MustCompile(`^(\p{Han}{2,16}?(?:总|總|分集)?目[录錄録])\p{Han}`)
	reContentsLatin       = regexp.MustCompile(`(?i)^(?:table\s+of\s+)?contents$`)
	// reContentsEnd matches the line that closes a contents list: 目录终.
	reContentsEnd = regexp.MustCompile(`^(?:\p{Han}{0,16}?)目[录錄録次](?:终|終|完|毕|畢)$`)
	// rePageRef matches what ends a contents line after its title: a page
	// number or paragraph range, a column header, dot leaders.
	rePageRef    = regexp.MustCompile(`(?i)(?:[ \t]*(?:\.[ \t]*){2,}|[ \t]{3,}|[ \t]+)(?:\d{1,4}(?:[ \t]*[-–][ \t]*\d{1,4})?|[ivxlc]{1,6}|page|paragraphs?\.?|pages?\.?)[ \t]*\.?$`)
	reColumnGap  = regexp.MustCompile(`[ \t]{3,}|(?:[ \t]*\.){3,}`)
	reCJKEntries = regexp.MustCompile(`[ \t\x{3000}]+`)
	// reEntryNumber matches the numbering before a Latin contents entry:
	// "1. ", "IV. ", "(a) ", "(_a_) ".
	reEntryNumber = regexp.MustCompile(`^(?:\d{1,3}|[IVXLC]{1,6})\.\s+|^\(_?[a-z]_?\)\s+`)
)

// contentsLabel reports whether a trimmed line is the label of a contents
// list: 目录 (with any spacing), a title followed by 目録, with a category
// after it (農桑輯要目録　　農家類), or Contents / Table of Contents.
func contentsLabel(t string) bool {
	t = strings.TrimRight(t, ":：.。 ")
	t = strings.Trim(t, "*_ ")
	if reContentsLatin.MatchString(strings.Join(strings.Fields(t), " ")) {
		return true
	}
	compact := strings.Join(strings.Fields(t), "")
	if reContentsLabel.MatchString(compact) {
		return true
	}
	fields := splitWide(t)
	return len(fields) > 1 && reContentsLabel.MatchString(fields[0])
}

// splitWide splits a line at runs of two or more spaces or at full-width
// spaces: the columns of a contents line (農功起本　　　　蠶事起本).
func splitWide(t string) []string {
	var out []string
	for _, f := range regexp.MustCompile(`[ \t]{2,}|\x{3000}+`).Split(t, -1) {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// contentsBlock is a contents list found in the lines.
type contentsBlock struct {
	label, end int // the label line and the last line of the list
	// runOn: the label starts a paragraph that runs the contents on.
	runOn   bool
	entries []string // the entries, for matching against the text
	// depth: for a list of bullets nested by indentation (a text
	// browser's dump of an HTML contents), each entry's depth in the
	// list, by its normalised text; nil for other lists.
	depth map[string]int
}

// maxContentsShare is the largest share of a document's characters a
// contents list may hold: a "list" longer than that is the text, taken for
// a contents list that never ends (a whole book dropped as front matter).
const maxContentsShare = 0.2

// findContents returns the contents lists of the lines.
func findContents(lines []string, title string) []contentsBlock {
	total := 0
	firstText := ""
	for _, l := range lines {
		t := strings.TrimSpace(strings.Trim(l, "\u3000"))
		total += CountChars(t)
		if firstText == "" && t != "" {
			firstText = t
		}
	}
	var out []contentsBlock
	for i := 0; i < len(lines); i++ {
		t := strings.TrimSpace(strings.Trim(lines[i], "\u3000"))
		if t == "" {
			continue
		}
		if m := reContentsRunTogether.FindStringSubmatch(t); m != nil && utf8.RuneCountInString(t) > 40 && !contentsLabel(t) {
			out = append(out, contentsBlock{label: i, end: i, runOn: true})
			continue
		}
		if !contentsLabel(t) {
			continue
		}
		b, ok := contentsList(lines, i, firstText, title)
		if !ok {
			continue
		}
		chars := 0
		for k := b.label; k <= b.end; k++ {
			chars += CountChars(lines[k])
		}
		if chars > 2000 && float64(chars) > maxContentsShare*float64(total) {
			continue
		}
		out = append(out, b)
		i = b.end
	}
	return out
}

// contentsList reads the list under the label at lines[label]: it ends at
// an end marker (目录终, kept in the list), or before the line where the
// text begins: the book's first line or title coming round again, an entry
// coming round again (the text's first heading), or prose.
func contentsList(lines []string, label int, firstText, title string) (contentsBlock, bool) {
	b := contentsBlock{label: label, end: label}
	// A list of "*" or "•" bullets, nested by indentation: each entry's
	// depth is the rank of its indentation among the list's.
	if k := nextNonBlank(lines, label+1); k < len(lines) && bulletEntry(lines[k]) != "" {
		var ind []int
		var names []string
		for ; k < len(lines); k++ {
			e := bulletEntry(lines[k])
			if e == "" {
				// A line indented past the bullet before it continues
				// its entry ("* Command History and Editing the" /
				// "  Command Line").
				t := strings.TrimSpace(lines[k])
				if t == "" || len(names) == 0 || indentOf(lines[k]) <= ind[len(ind)-1] {
					break
				}
				names[len(names)-1] += " " + t
				b.end = k
				continue
			}
			names = append(names, e)
			ind = append(ind, indentOf(lines[k]))
			b.end = k
		}
		levels := append([]int(nil), ind...)
		sort.Ints(levels)
		levels = slices.Compact(levels)
		b.depth = map[string]int{}
		for i, e := range names {
			b.entries = append(b.entries, e)
			if n := normEntry(e); n != "" {
				if _, seen := b.depth[n]; !seen {
					b.depth[n] = sort.SearchInts(levels, ind[i])
				}
			}
		}
		return b, len(b.entries) >= 2
	}
	// A list already marked as one (numberTOCSections: "- 1.2 甲木").
	if k := nextNonBlank(lines, label+1); k < len(lines) && strings.HasPrefix(strings.TrimSpace(lines[k]), "- ") {
		for ; k < len(lines) && strings.HasPrefix(strings.TrimSpace(lines[k]), "- "); k++ {
			e := strings.TrimSpace(strings.TrimSpace(lines[k])[2:])
			if f := strings.Fields(e); len(f) > 1 && strings.Trim(f[0], "0123456789.") == "" {
				e = strings.Join(f[1:], " ")
			}
			b.entries = append(b.entries, e)
			b.end = k
		}
		return b, len(b.entries) >= 2
	}
	// The text begins where one of the first entries comes round again (its
	// first heading), or the book's first line or title does.
	var first []string
	stopAt := func(t string) bool {
		if len(b.entries) < 2 {
			return false
		}
		n := normEntry(t)
		if n == "" {
			return false
		}
		if n == normEntry(firstText) || title != "" && (n == normEntry(title) || len(n) >= 8 && strings.HasPrefix(normEntry(title), n)) {
			return true
		}
		// A volume line of the text names its volume after the title and
		// maybe with 之: 星图要诀卷之一 comes round for the entry 卷一.
		vol := classifyHeading(t) == kindVolume
		if vol && len(normEntry(firstText)) >= 2 && strings.HasPrefix(n, normEntry(firstText)) {
			// The book's title line and a volume: 星图要诀卷之一.
			return true
		}
		for _, e := range first {
			if n == e || vol && strings.HasSuffix(strings.ReplaceAll(n, "之", ""), strings.ReplaceAll(e, "之", "")) {
				return true
			}
		}
		return false
	}
	indented := true // every entry so far is indented
	for i := label + 1; i < len(lines); {
		t := strings.TrimSpace(strings.Trim(lines[i], "\u3000"))
		if t == "" {
			i++
			continue
		}
		if reContentsEnd.MatchString(strings.Join(strings.Fields(t), "")) {
			b.end = i
			break
		}
		if stopAt(t) || indented && len(b.entries) >= 2 && indentOf(lines[i]) == 0 {
			// The text begins: with a line named above, or flush left
			// after entries that were all indented.
			break
		}
		indented = indented && indentOf(lines[i]) > 0
		// A group: the line and the lines that continue it (a Latin entry
		// wrapped over lines before its page number).
		j, ok := entryGroup(lines, i)
		if !ok {
			break
		}
		for k := i; k < j; k++ {
			if strings.TrimSpace(lines[k]) == "" {
				continue
			}
			for _, e := range entriesOf(strings.TrimSpace(strings.Trim(lines[k], "\u3000"))) {
				n := normEntry(e)
				if n == "" {
					continue
				}
				b.entries = append(b.entries, e)
				if len(first) < 3 {
					first = append(first, n)
				}
			}
		}
		b.end = j - 1
		i = j
	}
	return b, len(b.entries) >= 2
}

// bulletEntry returns the text of a contents line that is a "*" or "•"
// bullet ("     * What Is Debian?"), or "".
func bulletEntry(line string) string {
	t := strings.TrimSpace(line)
	for _, b := range []string{"* ", "• "} {
		if strings.HasPrefix(t, b) {
			return strings.TrimSpace(t[len(b):])
		}
	}
	return ""
}

// entryGroup returns the end (exclusive) of the contents entry starting at
// lines[i], and whether the lines read as an entry. A CJK line is an entry
// when it is short (at most 40 characters). Latin lines group up to the
// next blank line or page number; the group is an entry when each line's
// title part is short and, when it spans lines, it ends with a page number.
func entryGroup(lines []string, i int) (int, bool) {
	t := strings.TrimSpace(strings.Trim(lines[i], "\u3000"))
	if cjkShare(t) >= 0.5 {
		return i + 1, utf8.RuneCountInString(t) <= 40
	}
	j := i
	var group []string
	for j < len(lines) && len(group) < 4 {
		l := strings.TrimSpace(lines[j])
		if l == "" {
			// OCR puts blank lines inside entries too: a line in lower
			// case after the blank continues the entry.
			k := nextNonBlank(lines, j)
			if len(group) == 0 || k >= len(lines) {
				break
			}
			r, _ := utf8.DecodeRuneInString(strings.TrimSpace(lines[k]))
			if !unicode.IsLower(r) {
				break
			}
			j = k
			continue
		}
		group = append(group, l)
		j++
		if rePageRef.MatchString(l) {
			break
		}
	}
	last := group[len(group)-1]
	ref := rePageRef.MatchString(last)
	for k, l := range group {
		title := l
		if loc := reColumnGap.FindStringIndex(l); loc != nil {
			title = l[:loc[0]]
		}
		if utf8.RuneCountInString(title) > 72 {
			return j, false
		}
		if !ref && (utf8.RuneCountInString(title) > 60 || len(group) > 1 && k == len(group)-1 && endsSentence(l)) {
			return j, false
		}
	}
	if len(group) > 1 && !ref {
		// Lines of prose that happen to be short: a contents entry spans
		// lines only to reach its page number.
		return j, false
	}
	return j, true
}

// entriesOf splits a contents line into its entries: the columns of a
// CJK line (農功起本　　　　蠶事起本, 太微赋 形性赋 星垣论), the title part of
// a Latin line ("Introduction", without "1-30").
func entriesOf(t string) []string {
	if cjkShare(t) >= 0.5 {
		var out []string
		for _, f := range reCJKEntries.Split(t, -1) {
			if f = strings.TrimSpace(f); f != "" {
				out = append(out, f)
			}
		}
		return out
	}
	if loc := reColumnGap.FindStringIndex(t); loc != nil {
		t = t[:loc[0]]
	}
	t = rePageRef.ReplaceAllString(t, "")
	t = reEntryNumber.ReplaceAllString(t, "")
	if t = strings.TrimSpace(t); t == "" {
		return nil
	}
	return []string{t}
}

// normEntry reduces a title to its letters and digits, lower-cased, so that
// a contents entry and the heading it names compare equal ("PART I--_Drill._"
// and "PART I.--DRILL.", "目　　录" and "目录").
func normEntry(s string) string {
	var sb strings.Builder
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			sb.WriteRune(unicode.ToLower(r))
		}
	}
	return sb.String()
}

// setContentsApart finds the contents lists and rewrites each as a label
// line ending with a colon followed by its lines as list items, so that
// chunking files it as navigation and it ends exactly where the list does.
// A label that also carries a volume heading (梦林玄解卷之二十四目录…)
// gives that heading its own line. It returns the lines and their hints:
// entries that recur as lines of the text are headings there.
func setContentsApart(lines []string, cont []bool, title string) ([]string, []lineHint) {
	blocks := findContents(lines, title)
	if len(blocks) == 0 {
		hints := make([]lineHint, len(lines))
		for i, c := range cont {
			hints[i].cont = c
		}
		return lines, hints
	}
	out := make([]string, 0, len(lines)+8*len(blocks))
	hints := make([]lineHint, 0, cap(out))
	confirmed := map[string]bool{}
	depth := map[string]int{} // the nesting of a bulleted list's entries
	emit := func(l string, h lineHint) {
		out = append(out, l)
		hints = append(hints, h)
	}
	next := 0
	for _, b := range blocks {
		for ; next < b.label; next++ {
			emit(lines[next], lineHint{cont: cont[next]})
		}
		if len(out) > 0 && out[len(out)-1] != "" {
			emit("", lineHint{})
		}
		label := strings.TrimSpace(strings.Trim(lines[b.label], "\u3000"))
		first := b.label + 1
		if b.runOn {
			m := reContentsRunTogether.FindStringSubmatch(label)
			head, rest := m[1], strings.TrimSpace(label[len(m[1]):])
			if v, ok := splitVolumeLabel(head); ok {
				emit(v, lineHint{heading: kindVolume})
				emit("", lineHint{})
				head = head[len(v):]
			}
			emit(head+"：", lineHint{text: true})
			emit("", lineHint{})
			emit("- "+rest, lineHint{text: true})
		} else {
			if v, ok := splitVolumeLabel(strings.Join(strings.Fields(label), "")); ok && !strings.HasPrefix(label, "目") {
				emit(v, lineHint{heading: kindVolume})
				emit("", lineHint{})
			}
			emit(strings.TrimRight(label, ":：.")+labelColon(label), lineHint{text: true})
			emit("", lineHint{})
			for k := first; k <= b.end; k++ {
				t := strings.TrimSpace(strings.Trim(lines[k], "\u3000"))
				if t == "" {
					continue
				}
				if e := bulletEntry(t); e != "" {
					t = "- " + e
				} else if !strings.HasPrefix(t, "- ") {
					t = "- " + t
				}
				emit(t, lineHint{text: true})
			}
			for _, e := range b.entries {
				confirmed[normEntry(e)] = true
			}
			for n, d := range b.depth {
				if _, seen := depth[n]; !seen {
					depth[n] = d
				}
			}
		}
		emit("", lineHint{})
		next = b.end + 1
	}
	for ; next < len(lines); next++ {
		emit(lines[next], lineHint{cont: cont[next]})
	}
	// Entries that recur as lines standing alone in the text are headings
	// there; the others were contents only.
	for i, l := range out {
		if hints[i].text || hints[i].cont || hints[i].heading != kindNone || !standsAlone(out, i) {
			continue
		}
		t := strings.TrimSpace(strings.Trim(l, "\u3000"))
		if !confirmed[normEntry(t)] || utf8.RuneCountInString(t) > 80 || reHashStart.MatchString(t) {
			// A shell prompt naming an entry ("# dselect") is not it.
			continue
		}
		k := classifyHeading(t)
		if k == kindNone || k == kindFront {
			k = kindTitle
		}
		rank := indentOf(l) / 2
		if d, ok := depth[normEntry(t)]; ok && k == kindTitle {
			// The list's nesting, not the line's indentation: a text
			// browser centres some headings and not others.
			rank = d
		}
		hints[i] = lineHint{heading: k, rank: rank}
	}
	return out, hints
}

// nextNonBlank returns the index of the first non-blank line from i on.
func nextNonBlank(lines []string, i int) int {
	for i < len(lines) && strings.TrimSpace(lines[i]) == "" {
		i++
	}
	return i
}

// splitVolumeLabel returns the volume heading that starts a contents label
// (梦林玄解卷之二十四 of 梦林玄解卷之二十四目录).
func splitVolumeLabel(label string) (string, bool) {
	i := strings.LastIndex(label, "目")
	if i <= 0 {
		return "", false
	}
	v := label[:i]
	if classifyHeading(v) == kindVolume {
		return v, true
	}
	return "", false
}

// labelColon is the colon that marks a label line as a label: full-width
// after CJK, ASCII after Latin.
func labelColon(label string) string {
	if cjkShare(label) >= 0.5 {
		return "："
	}
	return ":"
}

// standsAlone reports whether lines[i] is a paragraph of its own: blank
// lines (or the edges) around it.
func standsAlone(lines []string, i int) bool {
	if strings.TrimSpace(lines[i]) == "" {
		return false
	}
	before := i == 0 || strings.TrimSpace(strings.Trim(lines[i-1], "\u3000")) == ""
	after := i+1 == len(lines) || strings.TrimSpace(strings.Trim(lines[i+1], "\u3000")) == ""
	return before && after
}

// reNoteNumber matches the number that opens a note or a numbered
// paragraph: "15. See chap. XI.", "1 Ad M. Caes iii. 17".
var reNoteNumber = regexp.MustCompile(`^(\d{1,3})\.?\s+\S`)

// markLatinText marks as text the Latin lines the heading patterns would
// take for headings in plain text, where the layout says otherwise:
//   - a line right under a line of text (no blank line before it) is the end
//     of a hard-wrapped paragraph ("CHENG."]", "TORN AWAY."]"), not a
//     heading standing alone;
//   - numbered lines standing alone one after the other, each numbered one
//     more than the last with nothing between them, are notes or a list
//     ("1. SHI CHI, ch. 65." / "2. He reigned from 514 to 496 B.C."), not
//     numbered sections, which have their text between them.
func markLatinText(lines []string, hints []lineHint) {
	prevNum, prevAt := -1, -1 // the last numbered line standing alone, and its index
	for i, l := range lines {
		t := strings.TrimSpace(l)
		if t == "" || hints[i].heading != kindNone || hints[i].text || cjkShare(t) >= 0.5 {
			continue
		}
		if i > 0 && strings.TrimSpace(lines[i-1]) != "" && classifyHeading(t) != kindNone {
			hints[i].text = true
		}
		if (i == 0 || strings.TrimSpace(lines[i-1]) == "") && strings.HasSuffix(t, ".") && !strings.HasSuffix(t, "..") &&
			classifyHeading(t) == kindNone && isAllCapsTitle(strings.TrimRight(t, ".")) {
			// "OF THE WOUND.": a title in capitals may end with a full
			// stop in plain text.
			hints[i] = lineHint{heading: kindChapter}
			continue
		}
		m := reNoteNumber.FindStringSubmatch(t)
		if m == nil || !standsAlone(lines, i) {
			prevNum = -1
			continue
		}
		n := 0
		for _, d := range m[1] {
			n = n*10 + int(d-'0')
		}
		if prevNum >= 0 && n == prevNum+1 && onlyBlankBetween(lines, prevAt, i) {
			hints[prevAt].text = true
			hints[i].text = true
		}
		prevNum, prevAt = n, i
	}
}

// onlyBlankBetween reports whether the lines strictly between a and b are
// blank.
func onlyBlankBetween(lines []string, a, b int) bool {
	for k := a + 1; k < b; k++ {
		if strings.TrimSpace(lines[k]) != "" {
			return false
		}
	}
	return true
}

// --- Title lines ---

// Title lines (太微赋, 七迁移, 典訓) are inferred only from CJK lines of at most
// maxTitleRunes characters; a run of more than maxTitleRun such lines with
// no paragraph between them is a list or a verse, not headings; a line
// repeated more than maxTitleRepeats times is a running label (欽定四庫全書).
const (
	maxTitleRunes   = 20
	maxTitleRun     = 2
	maxTitleRepeats = 3
	// patternSection: when the heading patterns alone already give the
	// book a heading for every patternSection characters or fewer, title
	// lines are not inferred (the book has its headings).
	patternSection = 6000
	// foundShare: a contents list's headings stop title lines from being
	// inferred unless the candidates outnumber them this many times.
	foundShare = 3
	// chapterSection: the same for chapter headings (a novel's 回 run to
	// about 7000 characters each).
	chapterSection = 20000
)

var (
	// reNotTitle matches the endings of short lines that are not titles:
	// a list or a volume closing (目录终, 卷六终), an attribution
	// (元司農司撰, 陈希夷先生著, 王弼注, 某某谨识).
	reNotTitle = regexp.MustCompile(`(?:终|終|完|毕|畢|撰|著|识|識|注|述|訂|订|校)$`)
	// titlePunct is punctuation a title line does not hold.
	titlePunct = "，。；：！？、,;:!?“”「」『』\""
)

// titleCandidate reports whether a trimmed line may be a title line.
func titleCandidate(t string) bool {
	n := utf8.RuneCountInString(t)
	if n == 0 || n > maxTitleRunes || strings.ContainsAny(t, titlePunct) || strings.HasPrefix(t, "#") || strings.HasPrefix(t, "- ") {
		return false
	}
	if cjkShare(t) < 0.8 {
		return false
	}
	compact := strings.Join(strings.Fields(t), "")
	return !reNotTitle.MatchString(compact)
}

// inferTitles marks title lines: CJK lines standing alone between
// paragraphs, short and without punctuation, when the heading patterns
// leave the book without a usable tree. Lines already hinted are left
// alone.
func inferTitles(lines []string, hints []lineHint, lay textLayout) {
	chars, patterns, chapters, found := 0, 0, 0, 0
	count := map[string]int{}
	var cands []int
	for i, l := range lines {
		t := strings.TrimSpace(strings.Trim(l, "\u3000"))
		chars += CountChars(t)
		if h := hints[i].heading; h > kindSubVolume && h != kindFront {
			found++
		}
		if t == "" || hints[i].text || hints[i].heading != kindNone {
			continue
		}
		if k := classifyHeading(t); k != kindNone && k != kindFront {
			// Volumes (第一篇文韬, 卷之一) alone leave the tree coarse
			// however often they come: the headings that count are those
			// under them.
			if k > kindSubVolume {
				patterns++
			}
			if k >= kindChapter {
				chapters++
			}
			continue
		}
		if !standsAlone(lines, i) {
			continue
		}
		if titleCandidate(t) && !IsContentsLabel(t) && (!lay.indentedTitles || indentOf(l) > 0) {
			cands = append(cands, i)
			count[strings.Join(strings.Fields(t), "")]++
		}
	}
	// A heading already found (a contents list's entry) counts as the
	// patterns' do, unless the title lines standing alone outnumber the
	// found ones foundShare times: then the contents list names the larger
	// sections only, and the text titles more under them (紫微斗数全书: 34
	// entries in its 目录, 太微赋, 形性赋…, over 300 titles in the text,
	// 诸星问答论, 子安命…).
	if len(cands) <= foundShare*found {
		patterns += found
	}
	// A book whose chapters (回, 章, CHAPTER, numbered sections) the
	// patterns find has its tree; volumes alone (卷之一) leave it coarse.
	if len(cands) == 0 || chapters >= 3 && chars/chapters <= chapterSection || patterns > 0 && chars/patterns <= patternSection {
		return
	}
	// A title line above the first volume the patterns find (六韬 西周 姜尚
	// over 第一篇文韬) names the book, not a part of a volume: it heads the
	// document at the outermost level, as front matter does.
	firstVolume := len(lines)
	for i, l := range lines {
		t := strings.TrimSpace(strings.Trim(l, "\u3000"))
		if hints[i].heading == kindVolume || t != "" && !hints[i].text && hints[i].heading == kindNone && classifyHeading(t) == kindVolume {
			firstVolume = i
			break
		}
	}
	// Runs of candidates with no paragraph between them.
	isCand := map[int]bool{}
	for _, i := range cands {
		isCand[i] = true
	}
	for _, i := range cands {
		run := 1
		for k := i - 1; k >= 0; k-- {
			if strings.TrimSpace(lines[k]) == "" {
				continue
			}
			if !isCand[k] {
				break
			}
			run++
		}
		for k := i + 1; k < len(lines); k++ {
			if strings.TrimSpace(lines[k]) == "" {
				continue
			}
			if !isCand[k] {
				break
			}
			run++
		}
		t := strings.TrimSpace(strings.Trim(lines[i], "\u3000"))
		if run > maxTitleRun || count[strings.Join(strings.Fields(t), "")] > maxTitleRepeats || !headsText(lines, hints, isCand, i) || listItem(lines, i) {
			continue
		}
		if i < firstVolume && firstVolume < len(lines) {
			hints[i] = lineHint{heading: kindFront}
			continue
		}
		hints[i] = lineHint{heading: kindTitle, rank: indentOf(lines[i]) / 2}
	}
}

var (
	// reItemsCounted matches the line after a list that counts its items:
	// a recipe's method, 上六味，以水九升… or 右二味….
	reItemsCounted = regexp.MustCompile(`^[上右][\s\x{3000}]*[一二三四五六七八九十百]+[\s\x{3000}]*[味物]`)
	// reQuantityNote matches an item's quantity in parentheses at the end
	// of a line: 瓜蒂（二七个）, 白术（各三两）, 乱发（如鸡子大三枚）, 半夏（半升）.
	reQuantityNote = regexp.MustCompile(`[（(][^（）()]*(?:[一二三四五六七八九十百千半两\d]+[\s]*[两钱分铢枚个升斗合斤尺寸把片粒条具钱匕g克]|各|等分)[^（）()]*[）)]$`)
	// reNamesAList matches the end of a line that names what a list under
	// it makes or does: a formula (栝蒌桂枝汤方, 治之方∶, \x一物瓜蒂汤方\x),
	// with a note in parentheses after it or not.
	reNamesAList = regexp.MustCompile(`方[\\x\s∶：:]*(?:[（(][^（）()]*[）)])?[\s∶：:]*$`)
	// reMethod matches a line that says how a list's items are taken or
	// used: 浓煮汁饮之。煮汁，服之即解。
	reMethod = regexp.MustCompile(`[服饮煮洗熏敷涂捣]`)
)

// listItem reports whether the short line lines[i] is an item of a list
// (a recipe's ingredients: 瓜蒂（二七个）, 雄黄, 人参 甘草 干姜 白术（各三两）)
// rather than a title: the line after it counts the items (上一味…), or it
// gives an item's quantity in parentheses, or it follows a line naming what
// the list makes (…方) and comes before more items (川芎 阿胶 … 当 wrapped
// over 归（各三两）…) or a line saying how the list is used (煮汁，服之).
// A title heads text; a list item is text between a name and its method.
func listItem(lines []string, i int) bool {
	t := strings.TrimSpace(strings.Trim(lines[i], "\u3000"))
	if reQuantityNote.MatchString(t) {
		return true
	}
	k := nextNonBlank(lines, i+1)
	if k >= len(lines) {
		return false
	}
	next := strings.TrimSpace(strings.Trim(lines[k], "\u3000"))
	if reItemsCounted.MatchString(next) {
		return true
	}
	p := i - 1
	for p >= 0 && strings.TrimSpace(lines[p]) == "" {
		p--
	}
	if p < 0 {
		return false
	}
	prev := strings.TrimSpace(strings.Trim(lines[p], "\u3000"))
	if !reNamesAList.MatchString(prev) {
		return false
	}
	return reQuantityNote.MatchString(next) || !titleCandidate(next) && reMethod.MatchString(next)
}

// headsText reports whether lines[i] heads some text. A volume label (卷)
// followed by a heading at its own level or above, with no text of its
// own, closes a volume (周易卷第一 before 周易上经泰传第二) rather than
// opening one; other titles may head the titles after them (十二宫诸星得地合格诀
// over 子安命, 丑安命).
func headsText(lines []string, hints []lineHint, isCand map[int]bool, i int) bool {
	k := nextNonBlank(lines, i+1)
	if k >= len(lines) {
		return false
	}
	if !strings.Contains(lines[i], "卷") {
		return true
	}
	t := strings.TrimSpace(strings.Trim(lines[k], "\u3000"))
	if isCand[k] {
		return indentOf(lines[k]) > indentOf(lines[i])
	}
	if hints[k].heading != kindNone {
		return false
	}
	if c := classifyHeading(t); c != kindNone && c != kindFront && !hints[k].text {
		return false
	}
	return true
}

// IsContentsLabel reports whether a line of text labels a contents list:
// 目录 with any spacing, a title before 目录 / 目録 / 目錄 (with a category
// after it, as 四库全书 pages have: 農桑輯要目録　　農家類), or Contents /
// Table of Contents, with or without a colon. Chunking files the list under
// such a line as navigation.
func IsContentsLabel(line string) bool {
	t := strings.TrimSpace(strings.Trim(line, "\u3000"))
	return t != "" && utf8.RuneCountInString(t) <= 40 && contentsLabel(t)
}
