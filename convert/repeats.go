package convert

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Thresholds of [DropRepeatedPassages].
const (
	// repeatMinKey is how many letters and digits a paragraph needs to
	// count as evidence of a repeated copy: short lines ("Chapter 13",
	// "Related Provisions") repeat in any document.
	repeatMinKey = 20
	// repeatMinRun is how many such paragraphs, each a word-for-word repeat
	// of an earlier one, a repeated passage must hold.
	repeatMinRun = 20
	// repeatMaxGap is how many new long paragraphs in a row a repeated
	// passage may contain (a paragraph edited between the copies) before it
	// ends.
	repeatMaxGap = 3
	// repeatEdge is how many short repeated lines next to a repeated passage
	// (a copy's cover lines) are dropped with it.
	repeatEdge = 10
)

// mdUnit is one line of a Markdown block (a paragraph, heading or list item),
// or a whole table or fenced code block.
type mdUnit struct {
	block   int
	text    string
	key     string   // letters and digits, lower-cased, without Markdown markers
	cells   []string // keys of a table's cells
	heading bool
	opaque  bool // a fenced code block: never compared, never dropped
}

// DropRepeatedPassages removes passages that repeat earlier text of the same
// document word for word: at least repeatMinRun long paragraphs in a row
// (up to repeatMaxGap new ones between them) each equal to an earlier
// paragraph, once letters and digits are compared and Markdown markers,
// punctuation and spacing are not. Documents assembled by pasting the same
// text several times (the DOJ trustee handbook holds its text four times,
// the last two copies without heading styles) would otherwise put every
// passage in the knowledge base several times, the later copies cited under
// the wrong section. Inside such a passage every paragraph, heading and
// table seen before is dropped and anything new is kept; the first
// occurrence always stays. It returns the Markdown and the number of units
// dropped; Markdown without such a passage comes back unchanged.
//
// [ConvertBytes] applies it to every document and says so in a warning. It
// is exported for measurements that compare vibe's text with a reference
// tool's (pandoc keeps every copy), and works on any text whose paragraphs
// are separated by blank lines.
func DropRepeatedPassages(md string) (string, int) {
	blocks := strings.Split(md, "\n\n")
	var units []mdUnit
	for bi := 0; bi < len(blocks); bi++ {
		b := blocks[bi]
		t := strings.TrimSpace(b)
		switch {
		case strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~"):
			// A fence may span blank lines: keep it whole up to its end.
			fence := t[:3]
			for !strings.Contains(strings.TrimPrefix(t, fence), fence) && bi+1 < len(blocks) {
				blocks[bi] += "\n\n" + blocks[bi+1]
				blocks = append(blocks[:bi+1], blocks[bi+2:]...)
				t = strings.TrimSpace(blocks[bi])
			}
			units = append(units, mdUnit{block: bi, text: blocks[bi], opaque: true})
		case strings.HasPrefix(t, "|"):
			u := mdUnit{block: bi, text: b, key: unitKey(t)}
			for _, row := range strings.Split(t, "\n") {
				for _, cell := range strings.Split(row, "|") {
					if k := unitKey(cell); k != "" {
						u.cells = append(u.cells, k)
					}
				}
			}
			units = append(units, u)
		default:
			for _, l := range strings.Split(b, "\n") {
				units = append(units, mdUnit{block: bi, text: l, key: unitKey(l), heading: isMarkdownHeading(l)})
			}
		}
	}

	// seen[i]: unit i equals an earlier paragraph or table cell.
	seen := make([]bool, len(units))
	keys := map[string]bool{}
	for i, u := range units {
		if u.opaque || u.key == "" {
			continue
		}
		seen[i] = keys[u.key]
		keys[u.key] = true
		for _, c := range u.cells {
			keys[c] = true
		}
	}
	long := func(i int) bool {
		return !units[i].opaque && !units[i].heading && utf8.RuneCountInString(units[i].key) >= repeatMinKey
	}

	drop := make([]bool, len(units))
	dropped := 0
	mark := func(first, last int) {
		// Short repeated lines at the edges (a copy's cover, its last
		// footer lines) go with the passage.
		for j := first - 1; j >= 0 && first-j <= repeatEdge && seen[j] && !long(j); j-- {
			first = j
		}
		for j := last + 1; j < len(units) && j-last <= repeatEdge && seen[j] && !long(j); j++ {
			last = j
		}
		for j := first; j <= last; j++ {
			if seen[j] && !drop[j] {
				drop[j] = true
				dropped++
			}
		}
	}
	start, last, run, gap := -1, -1, 0, 0
	flush := func() {
		if run >= repeatMinRun {
			mark(start, last)
		}
		start, last, run, gap = -1, -1, 0, 0
	}
	for i := range units {
		if !long(i) {
			continue
		}
		switch {
		case seen[i]:
			if start < 0 {
				start = i
			}
			last, run, gap = i, run+1, 0
		case start >= 0:
			if gap++; gap > repeatMaxGap {
				flush()
			}
		}
	}
	flush()
	if dropped == 0 {
		return md, 0
	}
	dropped += dropEmptiedHeadings(units, drop)

	var out []string
	var cur []string
	curBlock := -1
	emit := func() {
		if len(cur) > 0 {
			out = append(out, strings.Join(cur, "\n"))
		}
		cur = nil
	}
	for i, u := range units {
		if u.block != curBlock {
			emit()
			curBlock = u.block
		}
		if !drop[i] {
			cur = append(cur, u.text)
		}
	}
	emit()
	res := strings.Join(out, "\n\n")
	if strings.HasSuffix(md, "\n") {
		// One newline, also when the last paragraph went (its block's
		// empty last line would leave a blank line).
		res = strings.TrimRight(res, "\n") + "\n"
	}
	return res, dropped
}

// dropEmptiedHeadings marks for dropping the headings whose whole section
// (everything up to the next heading of the same or a higher level) is
// being dropped, at least one unit of it: a repeated copy's own page titles
// ("# 天干论" over a repeat of 1.2 天干论's text) would otherwise stay as
// empty sections. Headings are decided last to first, so a section holding
// only emptied subsections is empty too; a heading whose section was empty
// to begin with ("# 卷一" right above "## 1 论五行生成") is kept. It returns
// how many it marked.
func dropEmptiedHeadings(units []mdUnit, drop []bool) int {
	n := 0
	for i := len(units) - 1; i >= 0; i-- {
		if !units[i].heading || drop[i] {
			continue
		}
		level := atxLevel(strings.TrimSpace(units[i].text))
		empty, emptied := true, false
		for j := i + 1; j < len(units); j++ {
			if units[j].heading && atxLevel(strings.TrimSpace(units[j].text)) <= level {
				break
			}
			if strings.TrimSpace(units[j].text) == "" {
				continue // the blank line a document ends with
			}
			if !drop[j] {
				empty = false
				break
			}
			emptied = true
		}
		if empty && emptied {
			drop[i] = true
			n++
		}
	}
	return n
}

// unitKey is what two paragraphs are compared by: their letters and digits,
// lower-cased, after any heading, quote or list marker (list numbering
// differs between copies of a text).
func unitKey(line string) string {
	t := strings.TrimSpace(line)
	t = strings.TrimSpace(strings.TrimLeft(t, "#>"))
	t = reUnitMarker.ReplaceAllString(t, "")
	var sb strings.Builder
	for _, r := range t {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			sb.WriteRune(unicode.ToLower(r))
		}
	}
	return sb.String()
}

// reUnitMarker matches a list marker opening a line: a bullet, "1." / "1)" /
// "1、", "(1)" / "(a)", "a." / "a)".
var reUnitMarker = regexp.MustCompile(`^(?:[-*+•·▪◦]\s+|\d{1,3}[.)]\s+|\d{1,3}、\s*|[（(](?:\d{1,3}|[a-z])[)）]\s*|[a-z][.)]\s+)`)
