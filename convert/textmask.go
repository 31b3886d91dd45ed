package convert

import (
	"strings"
	"unicode"
)

// CountText counts the characters of a Markdown text that a reader sees
// once it is rendered: [CountChars] without Markdown's own marks. A link
// `[text](url)` counts its text, an image `![alt](src)` nothing (an image's
// alt text is no text of the page: EPUB and HTML sources do not count it
// either), and heading marks (`#`), list bullets, block-quote marks, emphasis
// and code marks, table bars and rules, backslash escapes, HTML tags and
// link definitions count nothing. The numbers of an ordered list count (the
// reader sees them). It is the unit of the converted, chunked and cited
// figures of vibe's character accounting, and of a Markdown source's.
func CountText(md string) int {
	n := 0
	for _, v := range TextMask([]rune(md)) {
		if v {
			n++
		}
	}
	return n
}

// TextMask marks, rune by rune, the characters of a Markdown text that
// [CountText] counts: not white space, not markup. Lines are read one by
// one; a mark that spans lines (a link whose text wraps) is not recognised
// and counts as text.
func TextMask(rs []rune) []bool {
	mask := make([]bool, len(rs))
	fence := rune(0) // the fence character of an open code block
	fenceLen := 0
	for i := 0; i < len(rs); {
		j := i
		for j < len(rs) && rs[j] != '\n' {
			j++
		}
		line := rs[i:j]
		m := mask[i:j]
		if fence != 0 {
			if c, n := fenceOf(line); c == fence && n >= fenceLen && onlyFence(line) {
				fence = 0
			} else {
				markAllText(line, m)
			}
		} else if c, n := fenceOf(line); c != 0 {
			fence, fenceLen = c, n
		} else {
			markLine(line, m)
		}
		i = j + 1
	}
	return mask
}

// maxMarkSpan bounds how far a link, a tag or an emphasis is looked for
// (runes), so that a long line of brackets costs no more than a line's
// length times it.
const maxMarkSpan = 2000

// markAllText marks every non-space rune of a line as text (code).
func markAllText(line []rune, m []bool) {
	for k, r := range line {
		m[k] = !unicode.IsSpace(r)
	}
}

// fenceOf returns the fence character and length of a code fence line
// (``` or ~~~, at most three spaces in), or 0.
func fenceOf(line []rune) (rune, int) {
	k := 0
	for k < len(line) && k < 4 && line[k] == ' ' {
		k++
	}
	if k > 3 || k >= len(line) || (line[k] != '`' && line[k] != '~') {
		return 0, 0
	}
	c := line[k]
	n := 0
	for k+n < len(line) && line[k+n] == c {
		n++
	}
	if n < 3 {
		return 0, 0
	}
	if c == '`' && strings.ContainsRune(string(line[k+n:]), '`') {
		return 0, 0
	}
	return c, n
}

// onlyFence reports whether a closing fence line holds nothing but the fence.
func onlyFence(line []rune) bool {
	return strings.Trim(strings.TrimSpace(string(line)), "`~") == ""
}

// markLine marks the text of one Markdown line outside code blocks.
func markLine(line []rune, m []bool) {
	k := 0
	skipSpace := func() {
		for k < len(line) && (line[k] == ' ' || line[k] == '\t') {
			k++
		}
	}
	skipSpace()
	rest := strings.TrimSpace(string(line))
	// A thematic break or a setext underline (---, ***, ===): no text.
	if isRuleLine(rest) {
		return
	}
	// A table's delimiter row (|---|:--:|): no text.
	if strings.HasPrefix(rest, "|") && strings.Trim(rest, "|-: \t") == "" {
		return
	}
	// A link reference definition ([id]: url): no text.
	if isLinkDefinition(rest) {
		return
	}
	table := strings.HasPrefix(rest, "|")
	// Block-quote marks, then one list bullet, then heading marks.
	for k < len(line) && line[k] == '>' {
		k++
		skipSpace()
	}
	if k+1 < len(line) && (line[k] == '-' || line[k] == '*' || line[k] == '+') && (line[k+1] == ' ' || line[k+1] == '\t') {
		k += 2
		skipSpace()
	}
	end := len(line)
	if h := 0; k < len(line) && line[k] == '#' {
		for k+h < len(line) && line[k+h] == '#' {
			h++
		}
		if h <= 6 && (k+h == len(line) || line[k+h] == ' ' || line[k+h] == '\t') {
			k += h
			// A closing sequence of #s after a space counts nothing.
			e := end
			for e > k && unicode.IsSpace(line[e-1]) {
				e--
			}
			c := e
			for c > k && line[c-1] == '#' {
				c--
			}
			if c < e && (c == k || line[c-1] == ' ' || line[c-1] == '\t') {
				end = c
			}
		}
	}
	markInline(line, m, k, end, table)
}

// isRuleLine reports a thematic break or setext underline.
func isRuleLine(s string) bool {
	if len(s) < 3 {
		return false
	}
	c := s[0]
	if c != '-' && c != '*' && c != '_' && c != '=' {
		return false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case c:
			n++
		case ' ', '\t':
		default:
			return false
		}
	}
	return n >= 3 || c == '='
}

// isLinkDefinition reports a link reference definition line: [id]: url.
func isLinkDefinition(s string) bool {
	if !strings.HasPrefix(s, "[") || strings.HasPrefix(s, "[^") {
		return false
	}
	close := strings.Index(s, "]:")
	if close < 2 {
		return false
	}
	rest := strings.TrimSpace(s[close+2:])
	return rest != "" && !strings.ContainsAny(strings.Fields(rest)[0], "，。")
}

// markInline marks the text of line[from:to]: links keep their text, images
// nothing, emphasis and code marks, escapes and HTML tags nothing.
func markInline(line []rune, m []bool, from, to int, table bool) {
	opened := map[rune]bool{} // a mark seen earlier in the span, which a later one may close
	for k := from; k < to; {
		r := line[k]
		switch {
		case unicode.IsSpace(r):
			k++
			continue
		case r == '\\' && k+1 < to && isASCIIPunct(line[k+1]):
			m[k+1] = true
			k += 2
			continue
		case r == '|' && table:
			k++
			continue
		case r == '`':
			k++
			continue
		case r == '!' && k+1 < to && line[k+1] == '[':
			if _, end, ok := linkAt(line, k+1, to); ok {
				k = end // an image: nothing of it is text
				continue
			}
		case r == '[':
			if textEnd, end, ok := linkAt(line, k, to); ok {
				markInline(line, m, k+1, textEnd, table)
				k = end
				continue
			}
		case r == '<':
			if end := tagAt(line, k, to); end > k {
				// An autolink's address is text; a tag is not.
				if inner := string(line[k+1 : end-1]); strings.Contains(inner, "://") || strings.HasPrefix(inner, "mailto:") {
					for x := k + 1; x < end-1; x++ {
						m[x] = !unicode.IsSpace(line[x])
					}
				}
				k = end
				continue
			}
		case r == '*' || r == '_' || r == '~':
			n := 0
			for k+n < to && line[k+n] == r {
				n++
			}
			if r == '~' && n != 2 {
				break
			}
			// A mark that opens needs one after it, a mark that closes
			// one before it: a lone * (5*3) is text.
			if left, right := delimiter(line, k, n, r); left && runeIn(line[k+n:min(to, k+n+maxMarkSpan)], r) || right && opened[r] {
				opened[r] = left
				k += n
				continue
			}
			for x := 0; x < n; x++ {
				m[k+x] = true
			}
			k += n
			continue
		}
		m[k] = true
		k++
	}
}

// linkAt reads an inline link [text](dest) starting at the [ at k:
// the index of the closing ], the index after the link, and ok.
func linkAt(line []rune, k, to int) (textEnd, end int, ok bool) {
	to = min(to, k+maxMarkSpan)
	depth := 0
	for x := k; x < to; x++ {
		switch line[x] {
		case '\\':
			x++
		case '[':
			depth++
		case ']':
			depth--
			if depth > 0 {
				continue
			}
			if x+1 < to && line[x+1] == '(' {
				par := 0
				for y := x + 1; y < to; y++ {
					switch line[y] {
					case '\\':
						y++
					case '(':
						par++
					case ')':
						par--
						if par == 0 {
							return x, y + 1, true
						}
					}
				}
				return 0, 0, false
			}
			return 0, 0, false
		}
	}
	return 0, 0, false
}

// tagAt returns the index after an HTML tag, comment or autolink starting
// at the < at k, or k when there is none.
func tagAt(line []rune, k, to int) int {
	if k+1 >= to {
		return k
	}
	c := line[k+1]
	if !(c == '/' || c == '!' || c < 0x80 && unicode.IsLetter(c)) {
		return k
	}
	to = min(to, k+maxMarkSpan)
	for x := k + 1; x < to; x++ {
		switch line[x] {
		case '>':
			return x + 1
		case '<', '\n':
			return k
		}
	}
	return k
}

// delimiter reports whether the run of n marks r at k may open or close
// emphasis (CommonMark's flanking rules, simplified): a run beside text on
// one side; an underscore inside a word is no mark.
func delimiter(line []rune, k, n int, r rune) (opens, closes bool) {
	var prev, next rune = ' ', ' '
	if k > 0 {
		prev = line[k-1]
	}
	if k+n < len(line) {
		next = line[k+n]
	}
	left := !unicode.IsSpace(next) && (!unicode.IsPunct(next) || unicode.IsSpace(prev) || unicode.IsPunct(prev))
	right := !unicode.IsSpace(prev) && (!unicode.IsPunct(prev) || unicode.IsSpace(next) || unicode.IsPunct(next))
	if r == '_' && left && right && isWordRune(prev) && isWordRune(next) {
		return false, false
	}
	return left, right
}

func runeIn(rs []rune, r rune) bool {
	for _, x := range rs {
		if x == r {
			return true
		}
	}
	return false
}

func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

func isASCIIPunct(r rune) bool {
	return r < 0x80 && (unicode.IsPunct(r) || unicode.IsSymbol(r))
}
