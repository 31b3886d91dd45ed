package convert

import "testing"

// The converted, chunked and cited figures count the text a reader sees:
// a link's address, an image, heading marks, bullets, emphasis, table bars
// and escapes are Markdown's marks, not text. An EPUB of 2,634 characters
// read "converted 5,393" while its notes' links ([![](note.png)](#note1))
// were counted.
func TestCountTextLeavesMarksOut(t *testing.T) {
	for _, tt := range []struct {
		md   string
		want string // the characters a reader sees
	}{
		{"### 停云[![](../../Images/note.png)](#tingyun_note1)", "停云"},
		{"樽湛新醪[![](../../Images/note.png)](#tingyun_note2)，园列初荣", "樽湛新醪，园列初荣"},
		{"see [the rules](https://example.com/a_(b)) here", "seetheruleshere"},
		{"![a cover](cover.jpg)", ""},
		{"# Title #", "Title"},
		{"- item one\n* item two\n+ three", "itemoneitemtwothree"},
		{"1. first\n10) tenth", "1.first10)tenth"},
		{"> quoted **bold** and _em_ and ~~gone~~", "quotedboldandemandgone"},
		{"snake_case_name and 5*3", "snake_case_nameand5*3"},
		{"| a | b |\n| --- | :-: |\n| c | d |", "abcd"},
		{"---\n\n***\n\ntext\n===", "text"},
		{`\# dselect \[x\]`, "#dselect[x]"},
		{"a<br>b <span class=\"x\">c</span> <https://go.dev>", "abchttps://go.dev"},
		{"[id]: https://example.com/x\n\nword", "word"},
		{"```go\nfunc `x` *p\n```\n`code`", "func`x`*pcode"},
		{"[1] a note, [2][3] more", "[1]anote,[2][3]more"},
		{"天地玄黄，宇宙洪荒。", "天地玄黄，宇宙洪荒。"},
	} {
		if got, want := CountText(tt.md), CountChars(tt.want); got != want {
			t.Errorf("CountText(%q) = %d, want %d (%q)", tt.md, got, want, tt.want)
		}
	}
}
