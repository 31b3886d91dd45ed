package convert

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/simplifiedchinese"
	"golang.org/x/text/encoding/traditionalchinese"
	"golang.org/x/text/encoding/unicode"

	"github.com/vibelife/vibe/internal/testcorpus"
)

func TestUnprefixChapterLines(t *testing.T) {
	tests := []struct{ in, want string }{
		{"《》目录 第一回　灵根育孕源流出\n正文", "第一回　灵根育孕源流出\n正文"},
		{"《西游记》目录第二回 悟彻菩提", "第二回 悟彻菩提"},
		{"目录 第十二章 总结", "第十二章 总结"},
		{"他翻到目录，第一回写的是", "他翻到目录，第一回写的是"},
		{"目录\n第一章", "目录\n第一章"},
	}
	for _, tt := range tests {
		if got := unprefixChapterLines(tt.in); got != tt.want {
			t.Errorf("unprefixChapterLines(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestDecodeTextEncodings(t *testing.T) {
	const zhs = "第一回 宴桃园豪杰三结义，斩黄巾英雄首立功。话说天下大势，分久必合，合久必分。"
	const zht = "第一回 宴桃園豪傑三結義，斬黃巾英雄首立功。話說天下大勢，分久必合，合久必分。"
	enc := func(e encoding.Encoding, s string) []byte {
		b, err := e.NewEncoder().Bytes([]byte(s))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	tests := []struct {
		name, want, text string
		data             []byte
	}{
		{"utf-8", "utf-8", zhs, []byte(zhs)},
		{"utf-8 bom", "utf-8-bom", zhs, append([]byte{0xEF, 0xBB, 0xBF}, zhs...)},
		{"utf-16le bom", "utf-16le", zhs, enc(unicode.UTF16(unicode.LittleEndian, unicode.UseBOM), zhs)},
		{"utf-16be bom", "utf-16be", zhs, enc(unicode.UTF16(unicode.BigEndian, unicode.UseBOM), zhs)},
		{"gbk", "gb18030", zhs, enc(simplifiedchinese.GBK, zhs)},
		{"gb18030", "gb18030", zhs, enc(simplifiedchinese.GB18030, zhs)},
		{"big5", "big5", zht, enc(traditionalchinese.Big5, zht)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, name := decodeText(tt.data)
			if name != tt.want {
				t.Errorf("encoding %s, want %s", name, tt.want)
			}
			if strings.TrimPrefix(got, "\ufeff") != tt.text {
				t.Errorf("decoded %q, want %q", got, tt.text)
			}
		})
	}
}

func TestNumberTOCSections(t *testing.T) {
	in := "滴天髓\n目录\n1\t滴天髓辑要\n1.1\t通天论\n1.2\t天干论\n1.2.1\t甲木\n滴天髓辑要\n通天论\n欲识三元万物宗。\n天干论\n甲木\n甲木参天。\n正文里单独一行的甲木不再编号：\n甲木\n"
	want := "滴天髓\n目录：\n- 1 滴天髓辑要\n- 1.1 通天论\n- 1.2 天干论\n- 1.2.1 甲木\n\n1 滴天髓辑要\n1.1 通天论\n欲识三元万物宗。\n1.2 天干论\n1.2.1 甲木\n甲木参天。\n正文里单独一行的甲木不再编号：\n甲木\n"
	if got := numberTOCSections(in); got != want {
		t.Errorf("numberTOCSections:\n got %q\nwant %q", got, want)
	}
	md := structureText([]string{numberTOCSections(in)})
	for _, h := range []string{"\n# 1 滴天髓辑要\n", "\n## 1.1 通天论\n", "\n### 1.2.1 甲木\n"} {
		if !strings.Contains(md, h) {
			t.Errorf("structured text lacks heading %q:\n%s", strings.TrimSpace(h), md)
		}
	}
	if strings.Contains(md, "#### ") || strings.Count(md, "# 1.2.1 甲木") != 1 || strings.Contains(md, "# 目录") {
		t.Errorf("the table of contents must not become headings:\n%s", md)
	}
	// Two numbered lines are not a table of contents.
	short := "目录\n1\t甲\n2\t乙\n甲\n"
	if got := numberTOCSections(short); got != short {
		t.Errorf("numberTOCSections(%q) = %q, want it unchanged", short, got)
	}
}

func TestSeparateTitleAndAuthor(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"周公解梦\n作者：周公旦　周\t\t\n诗曰\n\n夜有纷纷梦\n", "周公解梦\n\n作者：周公旦　周\n\n诗曰\n\n夜有纷纷梦\n"},
		{"滴天髓\n作者:刘基\n正文。\n", "滴天髓\n\n作者:刘基\n\n正文。\n"},
		// Not the layout: no author line, or a sentence where the title would be.
		{"序\n予自束发就传。\n", "序\n予自束发就传。\n"},
		{"这一行是一句很长的话，不是标题。\n作者：某人\n正文。\n", "这一行是一句很长的话，不是标题。\n作者：某人\n正文。\n"},
	} {
		if got := separateTitleAndAuthor(tt.in); got != tt.want {
			t.Errorf("separateTitleAndAuthor(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestZhougongSections converts 周公解梦: its 27 sections, listed in a
// numbered 目录 and given in the body as bare title lines, must each be a
// heading over its own text, and the title and author lines must stay apart.
func TestZhougongSections(t *testing.T) {
	path := filepath.Join(testcorpus.Dir(t), "txt", "zhougong-jiemeng.utf8.md")
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var want []string // "1 天地日月星辰", … from the source's 目录
	for _, l := range strings.Split(string(src), "\n") {
		if m := reTOCEntry.FindStringSubmatch(l); m != nil {
			want = append(want, m[1]+" "+m[2])
		}
	}
	if len(want) != 27 {
		t.Fatalf("%d entries in the source's 目录, want 27", len(want))
	}
	doc, err := Convert(context.Background(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	body := map[string]int{} // heading -> characters of text under it
	cur := ""
	for _, l := range strings.Split(doc.Markdown, "\n") {
		if isMarkdownHeading(l) {
			cur = strings.TrimSpace(strings.TrimLeft(l, "#"))
			got = append(got, cur)
			continue
		}
		body[cur] += len([]rune(strings.TrimSpace(l)))
	}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("headings:\n%q\nwant the 目录's entries:\n%q", got, want)
	}
	for _, h := range want {
		if body[h] < 20 {
			t.Errorf("section %q has %d characters of text", h, body[h])
		}
	}
	if !strings.HasPrefix(doc.Markdown, "周公解梦\n\n作者：周公旦　周\n\n诗曰") {
		t.Errorf("title and author lines joined: %.40q", doc.Markdown)
	}
}
