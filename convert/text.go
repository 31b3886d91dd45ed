package convert

import "regexp"

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
