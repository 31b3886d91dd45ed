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

	"github.com/vibelife/vibe/internal/racetest"
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
			d := decodeText(tt.data)
			got, name := d.text, d.encoding
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

// TestWikisourceNavigationLines: the navigation line that opens each page of
// a Wikisource work ("◀上一卷	卷二	下一卷▶") becomes the heading of that
// page, above the chapters that follow, and the running title printed above
// it goes; a navigation line naming a page that is no 卷 (通天论) does the
// same. A volume line repeating the open volume (the classical closing line)
// stays text. Prose that merely starts with 全书始 is left alone.
func TestWikisourceNavigationLines(t *testing.T) {
	in := "三命通会卷之十\n\n看命口诀。\n\n三命通会卷之十\n\n三命通会\t\n全书始\t卷一\t下一卷▶\n\n1 论五行生成\n\n天地之初。\n\n三命通会\t\n◀上一卷\t卷二\t下一卷▶\n\n1 论天干阴阳生死\n\n天干。\n\n滴天髓\t\n◀上一论\t贞元论\t全书终\n造化生生不息机。\n\n全书始于此，终于彼。\n"
	md := structureText([]string{in})
	want := "# 三命通会卷之十\n\n看命口诀。\n\n三命通会卷之十\n\n# 卷一\n\n## 1 论五行生成\n\n天地之初。\n\n# 卷二\n\n## 1 论天干阴阳生死\n\n天干。\n\n# 贞元论\n\n造化生生不息机。\n\n全书始于此，终于彼。\n"
	if md != want {
		t.Errorf("structureText:\n got %q\nwant %q", md, want)
	}
}

// TestWikisourceCorpusPages converts 三命通会, whose Wikisource copy opens
// each of its nine volumes with a navigation line after an excerpt that ends
// in 三命通会卷之十: each volume's chapters must sit under that volume, so
// 论天干阴阳生死 is cited as 卷二's and not as the excerpt's 卷之十's. Then
// 滴天髓, whose second, repeated copy is 40 pages each opened by a
// navigation line: no navigation text and no emptied page title may stay.
func TestWikisourceCorpusPages(t *testing.T) {
	// A whole book in one goroutine: 50 s under -race at load 30.
	racetest.SequentialOnly(t)
	path := filepath.Join(testcorpus.Dir(t), "bazi", "三命通会.md")
	doc, err := Convert(context.Background(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var vols []string
	parent := map[string]string{} // chapter -> volume heading above it
	cur := ""
	for _, l := range strings.Split(doc.Markdown, "\n") {
		switch {
		case strings.HasPrefix(l, "# "):
			cur = l[2:]
			vols = append(vols, cur)
		case strings.HasPrefix(l, "## "):
			parent[l[3:]] = cur
		}
	}
	// The excerpt's volumes, the Wikisource copy's nine, then the 四库全书
	// copy's 卷十-十二, each once although each is closed by its title.
	want := "三命通会全十二册卷之一|三命通会卷之一|三命通会卷之十|卷一|卷二|卷三|卷四|卷五|卷六|卷七|卷八|卷九|三命通㑹卷十|三命通㑹卷十一|三命通㑹卷十二"
	if got := strings.Join(vols, "|"); got != want {
		t.Errorf("top-level headings:\n got %s\nwant %s", got, want)
	}
	for _, c := range []struct{ chapter, vol string }{{"1 论五行生成", "卷一"}, {"1 论天干阴阳生死", "卷二"}} {
		if parent[c.chapter] != c.vol {
			t.Errorf("%q sits under %q, want %q", c.chapter, parent[c.chapter], c.vol)
		}
	}
	if strings.Contains(doc.Markdown, "下一卷") || strings.Contains(doc.Markdown, "全书始") {
		t.Errorf("navigation text left in the Markdown")
	}

	doc, err = Convert(context.Background(), filepath.Join(testcorpus.Dir(t), "bazi", "滴天髓.md"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, nav := range []string{"上一论", "下一论", "全书始", "全书终"} {
		if strings.Contains(doc.Markdown, nav) {
			t.Errorf("navigation text %q left in 滴天髓", nav)
		}
	}
	lines := strings.Split(doc.Markdown, "\n")
	for i, l := range lines {
		lv := atxLevel(l)
		if lv == 0 {
			continue
		}
		body := false
		for _, next := range lines[i+1:] {
			if n := atxLevel(next); n > 0 && n <= lv {
				break
			}
			if strings.TrimSpace(next) != "" && atxLevel(next) == 0 {
				body = true
				break
			}
		}
		if !body {
			t.Errorf("滴天髓: %q heads an empty section", l)
		}
	}
}
