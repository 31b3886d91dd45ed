package convert

import (
	"regexp"
	"strings"
)

// reTOCPrefixedChapter matches chapter lines that a text site prefixed with
// its table-of-contents label, e.g. "《》目录 第一回　灵根育孕源流出"
// (the xiyouji download): the prefix hides the chapter line from heading
// detection.
var reTOCPrefixedChapter = regexp.MustCompile(`(?m)^[ \t\x{3000}]*(?:《[^》\n]{0,20}》)?[ \t\x{3000}]*目录[ \t\x{3000}]*(第[一二三四五六七八九十百千零〇两0-9０-９]+[回章节卷部篇])`)

// unprefixChapterLines strips such table-of-contents prefixes so that the
// chapter line starts the line.
func unprefixChapterLines(text string) string {
	return reTOCPrefixedChapter.ReplaceAllString(text, "$1")
}

// reTOCEntry matches a numbered entry of a table of contents in Wikisource
// layout: "1.2.1<TAB>甲木".
var reTOCEntry = regexp.MustCompile(`^(\d{1,2}(?:\.\d{1,2}){0,3})[\t ]+(\S.*?)[\t ]*$`)

// numberTOCSections handles the Wikisource text layout of the classical
// texts (滴天髓, 穷通宝鉴, 三命通会...): a 目录 line followed by numbered
// entries, then the body, whose section titles are bare lines ("甲木"). The
// entries become a list, and the first body line after them equal to an
// entry's title gets the entry's number ("1.2.1 甲木"), so that heading
// detection finds the sections in the body instead of in the table of
// contents; the 目录 label becomes "目录：", text rather than a heading. A
// run of fewer than three entries is left alone.
func numberTOCSections(text string) string {
	lines := strings.Split(text, "\n")
	pending := map[string][]string{} // title -> numbers not yet found in the body
	for i := 0; i < len(lines); i++ {
		t := strings.TrimSpace(strings.Trim(lines[i], "\u3000"))
		if t == "目录" || t == "目錄" {
			j := i + 1
			var entries [][]string
			for ; j < len(lines); j++ {
				m := reTOCEntry.FindStringSubmatch(strings.TrimRight(lines[j], "\r"))
				if m == nil {
					break
				}
				entries = append(entries, m[1:])
			}
			if len(entries) < 3 {
				continue
			}
			// The label stays text: as a heading it would become the parent
			// of every section after it ("目录 > 63 论伤官").
			lines[i] = t + "："
			for k, e := range entries {
				lines[i+1+k] = "- " + e[0] + " " + e[1]
				pending[e[1]] = append(pending[e[1]], e[0])
			}
			// A blank line ends the list, so the body's first line is not
			// read as the last entry's continuation.
			lines[j-1] += "\n"
			i = j - 1
			continue
		}
		if nums := pending[t]; len(nums) > 0 {
			lines[i] = nums[0] + " " + t
			pending[t] = nums[1:]
		}
	}
	return strings.Join(lines, "\n")
}

// reAuthorLine matches the author line of the Wikisource text layout, the
// line after the title: "作者：周公旦　周".
var reAuthorLine = regexp.MustCompile(`^[ \t\x{3000}]*作者[：:]`)

// separateTitleAndAuthor puts blank lines around the author line of the
// Wikisource layout ("周公解梦\n作者：周公旦　周\n诗曰\n…"), so that the
// title, the author and the text after them are not joined into one
// paragraph ("周公解梦作者：周公旦　周诗曰"). Only the first two lines are
// looked at, and only a short first line counts as a title.
func separateTitleAndAuthor(text string) string {
	lines := strings.SplitN(text, "\n", 3)
	if len(lines) < 3 || !reAuthorLine.MatchString(lines[1]) || !looksLikeTitle(strings.TrimSpace(lines[0])) {
		return text
	}
	return strings.TrimSpace(lines[0]) + "\n\n" + strings.TrimSpace(lines[1]) + "\n\n" + lines[2]
}
