package convert_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"golang.org/x/text/encoding/simplifiedchinese"

	"github.com/vibelife/vibe/chunk"
	"github.com/vibelife/vibe/convert"
)

// Structure from plain text, one test per layout. Every fixture is a small
// text written for the test in the layout of a real collection (see
// docs/structure.md for the books behind them); each test asserts the
// heading tree the conversion gives, that the chunks hold at least 90% of
// the converted characters with nothing lost, and what was set aside.

// built is a fixture converted and cut into chunks.
type built struct {
	doc      convert.Document
	md       string
	headings []string // "## 总论": level and text
	chunks   []chunk.Chunk
	acc      chunk.Accounting
}

func buildFixture(t *testing.T, name string, data []byte) built {
	t.Helper()
	doc, err := convert.ConvertBytes(context.Background(), data, name, convert.Options{})
	if err != nil {
		t.Fatalf("convert %s: %v", name, err)
	}
	file, err := convert.Render(doc)
	if err != nil {
		t.Fatal(err)
	}
	sp, err := chunk.New(chunk.Options{MaxTokens: 256})
	if err != nil {
		t.Fatal(err)
	}
	chunks, err := sp.SplitFile(context.Background(), "knowledge/t/converted/"+name+".md", file)
	if err != nil {
		t.Fatal(err)
	}
	acc, err := chunk.Account(file, chunks)
	if err != nil {
		t.Fatal(err)
	}
	b := built{doc: doc, md: doc.Markdown, chunks: chunks, acc: acc}
	for _, l := range strings.Split(doc.Markdown, "\n") {
		if strings.HasPrefix(l, "#") && strings.Contains(l, "# ") {
			b.headings = append(b.headings, l)
		}
	}
	if acc.Share() < 0.9 || acc.Lost > 0 {
		t.Errorf("%s: chunks hold %d of %d characters (%.1f%%), lost %d %+v; want at least 90%% and nothing lost",
			name, acc.Held(), acc.Converted, 100*acc.Share(), acc.Lost, acc.LostParts)
	}
	if doc.Quality.TextChars != acc.Converted {
		t.Errorf("%s: front matter text_chars %d, accounting converted %d", name, doc.Quality.TextChars, acc.Converted)
	}
	return b
}

func wantHeadings(t *testing.T, b built, want ...string) {
	t.Helper()
	if strings.Join(b.headings, "\n") != strings.Join(want, "\n") {
		t.Errorf("headings:\n%s\nwant:\n%s\n--- markdown:\n%s", strings.Join(b.headings, "\n"), strings.Join(want, "\n"), b.md)
	}
}

// asideParts lists the parts set aside by conversion and by chunking.
func asideParts(b built) []string {
	var out []string
	for _, a := range b.doc.Quality.SetAside {
		out = append(out, a.Part)
	}
	for _, a := range b.acc.Aside {
		out = append(out, a.Part)
	}
	return out
}

func wantAside(t *testing.T, b built, parts ...string) {
	t.Helper()
	if got := asideParts(b); strings.Join(got, "|") != strings.Join(parts, "|") {
		t.Errorf("set aside %q, want %q", got, parts)
	}
}

// para repeats a sentence into a paragraph of about n characters.
func para(sentence string, n int) string {
	var sb strings.Builder
	for sb.Len() < n*3 {
		sb.WriteString(sentence)
	}
	return sb.String()
}

// The layout: a classical book kept as plain Markdown, one line per
// paragraph and no blank lines, a bare 目录 line and its entries (some on one
// line, space-separated), then the text, which the old converter took for a
// contents list that never ended (1 chunk of 24 characters out of 108,000).
// With and without the end marker 目录终, and with the contents run together
// on one line.
func TestPlainContentsLayout(t *testing.T) {
	body := strings.Join([]string{
		"星图要诀卷之一",
		"总论",
		para("星者，天之精也。观星之法，先察其位，次审其光。", 120),
		"星性论",
		para("诸星各有其性，吉星主福，凶星主祸，不可一概而论。", 150),
		"格局论",
		para("格局既成，则富贵可期；格局破败，则贫贱难免。", 140),
		"星图要诀卷之二",
		"行限论",
		para("行限之法，十年一换，先看大限，后看小限。", 160),
		"流年论",
		para("流年太岁，吉凶所系，遇吉则喜，逢凶则忧。", 130),
	}, "\n")
	want := []string{"# 星图要诀卷之一", "## 总论", "## 星性论", "## 格局论", "# 星图要诀卷之二", "## 行限论", "## 流年论"}
	for _, tt := range []struct {
		name, contents string
	}{
		{"with-end-marker", "目录\n卷一\n总论 星性论 格局论\n卷二\n行限论 流年论\n目录终\n"},
		{"without-end-marker", "目录\n卷一\n总论 星性论 格局论\n卷二\n行限论 流年论\n"},
		{"run-together", "目录\n总论 星性论 格局论 行限论 流年论\n"},
		{"spaced-label", "目　　录\n卷一　总论　星性论　格局论\n卷二　行限论　流年论\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			src := "星图要诀\n某某先生著\n" + tt.contents + body + "\n"
			b := buildFixture(t, "星图要诀.md", []byte(src))
			wantHeadings(t, b, want...)
			if len(b.acc.Aside) != 1 || !strings.HasPrefix(b.acc.Aside[0].Part, "contents list") {
				t.Fatalf("set aside %+v, want the contents list alone", b.acc.Aside)
			}
			// The list's own characters, its label's colon and a "-" per item.
			max := convert.CountChars(tt.contents) + strings.Count(tt.contents, "\n")
			if n := b.acc.Aside[0].Chars; n > max {
				t.Errorf("contents list set aside with %d characters, but it has %d: text was taken for contents", n, max)
			}
		})
	}
}

// A contents block whose entries never recur is not a heading source, and a
// label with entries that run into prose is no contents list: nothing of
// the text goes aside.
func TestPlainContentsEntriesThatNeverRecur(t *testing.T) {
	src := "小书\n目录\n甲篇\n乙篇\n丙篇\n" + para("此书无篇名，一气写成，读者自知其意。", 200) + "\n" + para("又一段文字，亦无标题。", 100) + "\n"
	b := buildFixture(t, "小书.md", []byte(src))
	for _, h := range b.headings {
		if strings.Contains(h, "篇") {
			t.Errorf("entry that never recurs became a heading: %q", h)
		}
	}
	if len(b.acc.Aside) != 1 || b.acc.Aside[0].Chars > 12 {
		t.Errorf("set aside %+v, want the label and the three entries (12 characters with the colon and the list markers)", b.acc.Aside)
	}
}

// Project Gutenberg English: the header and licence are set aside with their
// size, the title comes from the header, the CONTENTS list is navigation,
// BOOK and CHAPTER lines (Roman numerals, a full stop) are the tree, and a
// numbered note list is text. The file is Latin-1, as the "-8.txt" files
// are.
func TestPlainGutenbergLayout(t *testing.T) {
	wrap := func(s string) string { // hard-wrap at 64 columns
		var lines []string
		line := ""
		for _, w := range strings.Fields(s) {
			if len(line)+len(w)+1 > 64 {
				lines = append(lines, line)
				line = w
			} else if line == "" {
				line = w
			} else {
				line += " " + w
			}
		}
		return strings.Join(append(lines, line), "\n")
	}
	p := func(s string) string { return wrap(para(s, 260)) }
	src := strings.Join([]string{
		"The Project Gutenberg eBook of A Small Treatise on Bread, by A. Baker",
		"",
		"This eBook is for the use of anyone anywhere at no cost and with",
		"almost no restrictions whatsoever.",
		"",
		"Title: A Small Treatise on Bread",
		"",
		"Author: A. Baker",
		"",
		"*** START OF THE PROJECT GUTENBERG EBOOK A SMALL TREATISE ON BREAD ***",
		"",
		"",
		"A SMALL TREATISE ON BREAD",
		"",
		"CONTENTS",
		"",
		"     BOOK I. MATERIALS",
		"     CHAPTER I. OF FLOUR                                   1",
		"     CHAPTER II. OF WATER                                  9",
		"     BOOK II. METHOD",
		"     CHAPTER III. OF KNEADING                             17",
		"",
		"",
		"BOOK I. MATERIALS",
		"",
		"",
		"CHAPTER I.",
		"",
		"OF FLOUR",
		"",
		p("Good bread begins with good flour, and the baker caf\xe9 owner knows it. "),
		"",
		p("Flour that is old smells of the sack and rises poorly in the bowl. "),
		"",
		"CHAPTER II.",
		"",
		p("Water should be warm to the wrist and never hot enough to hurt. "),
		"",
		"1. A. Baker, Letters, ch. 3.",
		"",
		"2. See chap. I.",
		"",
		"3. Supra.",
		"",
		"BOOK II. METHOD",
		"",
		"CHAPTER III.",
		"",
		p("Knead until the dough springs back when pressed with a finger. "),
		"",
		"*** END OF THE PROJECT GUTENBERG EBOOK A SMALL TREATISE ON BREAD ***",
		"",
		"Updated editions will replace the previous one--the old editions will",
		"be renamed. Creating the works from print editions not protected by",
		"U.S. copyright law means that no one owns a United States copyright.",
		"",
	}, "\r\n")
	b := buildFixture(t, "bread-8.txt", []byte(src))
	if b.doc.Title != "A Small Treatise on Bread" {
		t.Errorf("title %q, want the header's", b.doc.Title)
	}
	if b.doc.Quality.Encoding != "windows-1252" || !strings.Contains(b.md, "café") {
		t.Errorf("encoding %q: the Latin-1 é must survive", b.doc.Quality.Encoding)
	}
	wantHeadings(t, b, "## A SMALL TREATISE ON BREAD", "# BOOK I. MATERIALS", "## CHAPTER I.", "## OF FLOUR", "## CHAPTER II.", "# BOOK II. METHOD", "## CHAPTER III.")
	wantAside(t, b, "Project Gutenberg header", "Project Gutenberg licence and end notes", "contents list (CONTENTS)")
	for _, a := range b.doc.Quality.SetAside {
		if a.Chars < 40 {
			t.Errorf("%s set aside with %d characters", a.Part, a.Chars)
		}
	}
	if strings.Contains(b.md, "Updated editions") || strings.Contains(b.md, "no restrictions") {
		t.Error("licence text left in the converted text")
	}
}

// A Kanripo (mandoku) file: org-mode headers, <pb:> page markers and ¶ line
// marks are set aside; lines are hard-wrapped at 20 characters with no blank
// lines; titles are told by their indentation, one level per step; the 目録
// page lists its entries in columns and ends where the text begins.
func TestPlainKanripoLayout(t *testing.T) {
	var lines []string
	add := func(ls ...string) { lines = append(lines, ls...) }
	body := func(s string, n int) {
		r := []rune(para(s, n))
		for len(r) > 20 {
			add(string(r[:20]) + "¶")
			r = r[20:]
		}
		add(string(r[:min(len(r), 8)]) + "¶")
	}
	add("# -*- mode: mandoku-view; -*-", "#+TITLE: 種樹要法", "#+PROPERTY: JUAN 目録", "<pb:KR0000_WYG_000-1a>¶")
	add("欽定四庫全書¶", "　種樹要法目録　　　　農家類¶", "　　卷一¶", "　　　總論¶", "　　　　擇地　　　　擇時¶", "　　　栽法¶", "　　　　移栽　　　　接枝¶")
	add("#+PROPERTY: JUAN 卷一", "<pb:KR0000_WYG_001-1a>¶", "欽定四庫全書¶", "　種樹要法卷一¶", "　　　　　　　　元　某某　撰¶")
	add("　　總論¶", "　　　擇地¶")
	body("凡種樹先擇其地高燥者為上下濕者次之土肥則易活", 90)
	add("　　　擇時¶")
	body("春分前後十日為上時清明為中時穀雨為下時", 80)
	add("<pb:KR0000_WYG_001-1b>¶", "　　栽法¶", "　　　移栽¶")
	body("移栽之法掘坑須深根土勿散栽畢以水沃之", 90)
	add("　　　接枝¶")
	body("接枝以春為宜擇其壯枝削而合之以泥封之", 80)
	add("種樹要法卷一¶")
	b := buildFixture(t, "種樹要法.txt", []byte(strings.Join(lines, "\n")+"\n"))
	if b.doc.Title != "種樹要法" {
		t.Errorf("title %q, want #+TITLE's", b.doc.Title)
	}
	wantHeadings(t, b, "# 種樹要法卷一", "## 總論", "### 擇地", "### 擇時", "## 栽法", "### 移栽", "### 接枝")
	wantAside(t, b, "org-mode file headers (#+TITLE, #+PROPERTY lines)", "page-break markers (<pb:…>)", "line-end marks (¶)", "contents list (種樹要法目録　　　　農家類)")
	if strings.ContainsAny(b.md, "¶<") {
		t.Error("markers left in the text")
	}
	// Hard-wrapped lines are joined into paragraphs: a paragraph holds the
	// body of its section, not one printed line.
	if !strings.Contains(b.md, "凡種樹先擇其地高燥者為上下濕者次之土肥則易活凡種樹") {
		t.Errorf("wrapped lines not joined:\n%s", b.md)
	}
}

// A GBK novel from a download site: hard-wrapped at 36 characters, four
// spaces open a paragraph, 第…回 lines are the chapters.
func TestPlainGBKNovelLayout(t *testing.T) {
	var lines []string
	chapter := func(head, s string) {
		lines = append(lines, head, "")
		for p := 0; p < 3; p++ {
			r := []rune(para(s, 100))
			first := true
			for len(r) > 0 {
				n := min(len(r), 36)
				if first {
					n = min(len(r), 34)
					lines = append(lines, "    "+string(r[:n]))
				} else {
					lines = append(lines, string(r[:n]))
				}
				first = false
				r = r[n:]
			}
		}
	}
	lines = append(lines, "《山河记》作者：无名氏", "------------------------------------", "更多TXT电子书下载,请访问某某书屋", "------------------------------------")
	chapter("第一回  甲入山寻师  乙下海求宝", "话说那甲自幼好学，一日辞了父母，独自往山中去了。")
	chapter("第二回  师父传艺三年  宝物重见天日", "却说乙在海边住了三年，每日下水，终于寻着那件宝物。")
	chapter("第三回  两人相会  同归故里", "二人在路上相遇，说起各自的经历，不觉天色已晚。")
	enc, err := simplifiedchinese.GBK.NewEncoder().String(strings.Join(lines, "\n") + "\n")
	if err != nil {
		t.Fatal(err)
	}
	b := buildFixture(t, "山河记.txt", []byte(enc))
	if b.doc.Quality.Encoding != "gb18030" {
		t.Errorf("encoding %q", b.doc.Quality.Encoding)
	}
	wantHeadings(t, b, "# 第一回 甲入山寻师 乙下海求宝", "# 第二回 师父传艺三年 宝物重见天日", "# 第三回 两人相会 同归故里")
	if !strings.Contains(b.md, "独自往山中去了。话说那甲") {
		t.Error("wrapped lines of a paragraph not joined")
	}
}

// OCR output of a printed book (a djvu.txt file): page numbers and running
// heads stand between blank lines at the page breaks; they are set aside, a
// word hyphenated across a page break is joined, CHAPTER lines are the tree
// and numbered paragraphs are text.
func TestPlainOCRLayout(t *testing.T) {
	var sb strings.Builder
	page := 1
	pageBreak := func(head string) {
		fmt.Fprintf(&sb, "\n\n\n%d\n\n\n\n%s\n\n\n\n", page, head)
		page++
	}
	sb.WriteString("CHAPTER I.\n\nOF THE WOUND.\n\n")
	for i := 1; i <= 12; i++ {
		fmt.Fprintf(&sb, "%d. The wound is washed with warm water and covered with a\nclean linen, which is changed each morning until the edges\nclose; the patient keeps to his bed while it heals.\n\n", i)
		if i%3 == 0 {
			sb.WriteString("The surgeon watches for redness, which calls for a change of treat-")
			pageBreak("OF THE WOUND.")
			sb.WriteString("ment and a lighter dressing.\n\n")
		}
		if i == 6 {
			sb.WriteString("CHAPTER II.\n\nOF THE FEVER.\n\n")
		}
	}
	for i := 0; i < 8; i++ {
		sb.WriteString("Rest and plain food are given, and the room is kept cool.\n")
		pageBreak("OF THE FEVER.")
	}
	b := buildFixture(t, "wounds_djvu.txt", []byte(sb.String()))
	wantHeadings(t, b, "# CHAPTER I.", "# OF THE WOUND.", "# CHAPTER II.", "# OF THE FEVER.")
	wantAside(t, b, "page numbers", "running heads")
	if !strings.Contains(b.md, "a change of treatment and a lighter dressing") {
		t.Errorf("the word cut by the page break is not joined:\n%s", b.md)
	}
}

// A numbered manual: 第…章 / 第…节 / 第…条 with （一） items in Chinese, and
// decimal numbering (1., 1.1) in English.
func TestPlainNumberedManualLayout(t *testing.T) {
	zh := strings.Join([]string{
		"设备保养规程",
		"",
		"第一章　总则",
		"",
		"第一条　为了保证设备安全运行，延长设备寿命，制定本规程。",
		"第二条　本规程适用于车间全部机械设备的日常保养和定期检修。",
		"",
		"第二章　日常保养",
		"",
		"第一节　开机前检查",
		"",
		"第三条　开机前，操作人员应当检查下列事项：",
		"（一）润滑油是否充足；",
		"（二）防护罩是否完好；",
		"（三）电源线是否破损。",
		"",
		"第二节　停机后清理",
		"",
		"第四条　停机后应当清除切屑和油污，并填写保养记录。",
		"",
	}, "\n")
	b := buildFixture(t, "设备保养规程.txt", []byte(zh))
	wantHeadings(t, b, "# 第一章 总则", "# 第二章 日常保养", "## 第一节 开机前检查", "## 第二节 停机后清理")

	en := strings.Join([]string{
		"PUMP STATION MANUAL",
		"",
		"1. Scope",
		"",
		para("This manual covers the daily operation of the station pumps. ", 120),
		"",
		"1.1 Purpose",
		"",
		para("It tells the operator what to check before starting a pump. ", 120),
		"",
		"1.2 Who uses it",
		"",
		para("Every operator on shift reads it once a year and signs the log. ", 120),
		"",
		"2. Starting a pump",
		"",
		para("Open the suction valve fully before the motor is switched on. ", 120),
		"",
	}, "\n")
	b = buildFixture(t, "pump.txt", []byte(en))
	wantHeadings(t, b, "# PUMP STATION MANUAL", "# 1. Scope", "## 1.1 Purpose", "## 1.2 Who uses it", "# 2. Starting a pump")
}

// A classical text whose lines are paragraphs and which has no contents
// list: its short title lines standing alone between paragraphs are the
// tree. A run of short lines (a verse), an attribution and a closing line
// are not titles.
func TestPlainTitleLinesLayout(t *testing.T) {
	src := strings.Join([]string{
		"园圃杂记",
		"某某撰",
		"种菜",
		para("种菜之法，先治其畦，畦宜高，沟宜深，雨多则水易去。", 200),
		"浇灌",
		para("浇灌宜在早晚，日中浇之，则根受热而菜萎。", 180),
		"春来雨足",
		"秋后霜多",
		"冬藏根实",
		para("此三句乃老农口诀，言四时之事各有其宜也。", 120),
		"收藏",
		para("收藏之法，择干燥之处，以草覆之，勿令受湿。", 190),
		"园圃杂记卷一终",
	}, "\n")
	b := buildFixture(t, "园圃杂记.md", []byte(src))
	wantHeadings(t, b, "# 园圃杂记", "# 种菜", "# 浇灌", "# 收藏")
}

// A document that already has Markdown headings keeps them: no inference.
func TestPlainMarkdownKeepsItsHeadings(t *testing.T) {
	src := "# 书名\n\n## 第一篇\n\n短句\n\n" + para("正文一段，说明道理。", 100) + "\n\n## 第二篇\n\n" + para("又一段正文。", 100) + "\n"
	b := buildFixture(t, "book.md", []byte(src))
	wantHeadings(t, b, "# 书名", "## 第一篇", "## 第二篇")
}

// A volume label run into its paragraph (the line break lost, as in a
// plain-Markdown collection's 梦林玄解: "梦林玄解卷之二梦占天象部二风云…")
// gets a line of its own when the book names three volumes so.
func TestPlainRunOnVolumes(t *testing.T) {
	var lines []string
	for i, n := range []string{"一", "二", "三"} {
		lines = append(lines, "梦书卷之"+n+"天部"+n+"风云雷雨。"+para(fmt.Sprintf("梦见第%d种景象者，主吉，宜出行，不宜争讼。", i+1), 80))
		lines = append(lines, para("又一段解说，言其吉凶之理。", 60))
	}
	b := buildFixture(t, "梦书.md", []byte(strings.Join(lines, "\n")+"\n"))
	wantHeadings(t, b, "# 梦书卷之一", "# 梦书卷之二", "# 梦书卷之三")
	if !strings.Contains(b.md, "\n\n天部一风云雷雨。") {
		t.Errorf("the text after the label is not its own paragraph:\n%s", b.md)
	}
}

// gbkCRLF encodes a fixture as the 殆知阁-style collections keep their
// classics: GBK, CRLF, every line indented with two ideographic spaces.
func gbkCRLF(t *testing.T, lines []string) []byte {
	t.Helper()
	for i, l := range lines {
		lines[i] = "\u3000\u3000" + l
	}
	data, err := simplifiedchinese.GBK.NewEncoder().Bytes([]byte(strings.Join(lines, "\r\n") + "\r\n"))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// A short classic whose chapter titles are short lines of their own
// directly above their text, chapters set apart by blank lines (an indented
// blank line) and each chapter's text one long line (孙子兵法 in a plain-text
// collection: "计篇第一计篇" over "孙子曰：兵者…"). The lines are
// paragraphs although the text has blank lines: the titles are headings.
func TestPlainTitlesAboveTheirTextBetweenBlankLines(t *testing.T) {
	src := gbkCRLF(t, []string{
		"园圃要术",
		"",
		"治畦篇第一治畦篇",
		para("老圃曰：种菜之法，先治其畦，畦宜高，沟宜深，雨多则水易去。", 300),
		"",
		"浇灌篇第二浇灌篇",
		para("老圃曰：浇灌宜在早晚，日中浇之，则根受热而菜萎。", 280),
		"",
		"收藏篇第三收藏篇",
		para("老圃曰：收藏之法，择干燥之处，以草覆之，勿令受湿。", 290),
		"",
		"择种篇第四择种篇",
		para("老圃曰：择种必取其实满者，浮者弃之。", 260),
	})
	b := buildFixture(t, "园圃要术.txt", src)
	wantHeadings(t, b, "# 园圃要术", "# 治畦篇第一治畦篇", "# 浇灌篇第二浇灌篇", "# 收藏篇第三收藏篇", "# 择种篇第四择种篇")
}

// A short classic in parts named by the heading patterns (第一篇文韬) and
// chapters named by title lines (文师第一), a paragraph per line and no
// blank lines (六韬 in a plain-text collection). The parts alone do not
// make the book's tree however often they come: the chapter titles under
// them are headings too.
func TestPlainTitlesUnderPatternVolumes(t *testing.T) {
	var lines []string
	for v, vol := range []string{"第一篇春圃", "第二篇夏圃", "第三篇秋圃"} {
		lines = append(lines, vol)
		for c, ch := range []string{"治畦", "浇灌", "收藏"} {
			lines = append(lines, fmt.Sprintf("%s第%s", ch, []string{"一", "二", "三", "四", "五", "六", "七", "八", "九"}[v*3+c]))
			lines = append(lines, para("文王问老圃曰：“"+ch+"奈何？”", 120), para("老圃曰：“"+ch+"之法，先察其地，后用其力。”", 150))
		}
	}
	// The book's title line above the first part (六韬 西周 姜尚, not
	// indented) heads the document at the outermost level.
	head, err := simplifiedchinese.GBK.NewEncoder().Bytes([]byte("园圃六韬 某朝 某人\r\n"))
	if err != nil {
		t.Fatal(err)
	}
	b := buildFixture(t, "园圃六韬.txt", append(head, gbkCRLF(t, lines)...))
	want := []string{"# 园圃六韬 某朝 某人"}
	n := 0
	for _, vol := range []string{"第一篇春圃", "第二篇夏圃", "第三篇秋圃"} {
		want = append(want, "# "+vol)
		for _, ch := range []string{"治畦", "浇灌", "收藏"} {
			want = append(want, fmt.Sprintf("## %s第%s", ch, []string{"一", "二", "三", "四", "五", "六", "七", "八", "九"}[n]))
			n++
		}
	}
	wantHeadings(t, b, want...)
}

// Lines of a plain-text manual that start with "#" are text, not Markdown
// headings: shell prompts and configuration comments in its indented
// examples ("# dselect", "# /etc/fstab: static file system information."),
// as the Project Gutenberg Debian guide (#6527) prints them. Nor is a
// DOS path in capitals ("D:\DISTS\SLINK\MAIN\DISKS-I386\") a title.
func TestPlainHashLinesAreText(t *testing.T) {
	src := strings.Join([]string{
		"INSTALLING PACKAGES",
		"",
		"   If you have a proxy server, set the http_proxy variable from your",
		"   shell before starting dselect by using the following command:",
		"",
		"           # export http_proxy=http://gateway:3128/",
		"",
		"           # dselect",
		"",
		"   The floppy images are in this directory of the CD-ROM, which you can",
		"   list with DIR:",
		"",
		"           D:\\DISTS\\SLINK\\MAIN\\DISKS-I386\\",
		"",
		"   " + para("Debian reads the package lists from the mirror and shows them. ", 300),
		"",
		"MOUNTING FILESYSTEMS",
		"",
		"   Look at this file now by typing more /etc/fstab. It probably looks",
		"   something like this:",
		"",
		"           # /etc/fstab: static file system information.",
		"",
		"           #",
		"",
		"           /dev/hda1 / ext2 defaults 0 1",
		"",
		"   " + para("Each line names a device, a mount point and a type. ", 300),
		"",
		"           chmod u+x myfile",
		"   This command means to add (+) execute (x) permissions for the user (u) who",
		"   owns the file.",
	}, "\n")
	b := buildFixture(t, "guide.txt", []byte(src))
	wantHeadings(t, b, "# INSTALLING PACKAGES", "# MOUNTING FILESYSTEMS")
	// The body is indented as a whole: its wrapped lines are one paragraph.
	for _, s := range []string{"# export http_proxy", "# dselect", "# /etc/fstab: static", "DISKS-I386",
		"set the http_proxy variable from your shell before starting dselect", "It probably looks something like this:",
		"chmod u+x myfile\n\nThis command means to add (+) execute (x) permissions for the user (u) who owns the file."} {
		if !strings.Contains(b.md, s) {
			t.Errorf("markdown lost %q:\n%s", s, b.md)
		}
	}
}

// A manual dumped from HTML by a text browser (Project Gutenberg's Debian
// guide #6527): a "Contents" list of bullets nested by indentation, no page
// numbers and no blank lines, then the text, its headings as lines of their
// own, some centred and some flush left whatever their depth. The list's
// nesting gives the heading tree; the list itself is navigation.
func TestPlainBulletContentsGiveTheTree(t *testing.T) {
	body := func(s string) string { return "   " + para(s, 260) }
	src := strings.Join([]string{
		"Contents",
		"",
		"     * Preface",
		"     * Guide",
		"          * Introduction",
		"               * What Is Debian?",
		"                    * Who Creates Debian?",
		"               * What Is Free Software?",
		"          * Getting Started",
		"               * Supported Hardware and Memory",
		"                 Requirements",
		"               * dselect",
		"          * The Basics",
		"",
		"Preface",
		"",
		body("This manual is for readers who are new to Debian. "),
		"",
		"Introduction",
		"",
		body("We are glad to have this opportunity to introduce you to Debian. "),
		"",
		"                                What Is Debian?",
		"",
		body("Debian is a free operating system for your computer. "),
		"",
		"Who Creates Debian?",
		"",
		body("Debian is an all-volunteer Internet-based development project. "),
		"",
		"                             What Is Free Software?",
		"",
		body("Free software refers to freedom rather than price. "),
		"",
		"Getting Started",
		"",
		body("Read this chapter before you install anything. "),
		"",
		"                   Supported Hardware and Memory Requirements",
		"",
		body("Debian runs on most personal computers. "),
		"",
		"           # dselect",
		"",
		body("The prompt above starts the package tool as root. "),
		"",
		"                                    dselect",
		"",
		body("dselect is the package tool of the installation. "),
		"",
		"The Basics",
		"",
		body("Read this chapter to learn the command line. "),
	}, "\n")
	b := buildFixture(t, "debian-guide.txt", []byte(src))
	wantHeadings(t, b,
		"# Preface",
		"## Introduction", "### What Is Debian?", "#### Who Creates Debian?", "### What Is Free Software?",
		"## Getting Started", "### Supported Hardware and Memory Requirements", "### dselect", "## The Basics")
	if !strings.Contains(b.md, "- Guide") || !strings.Contains(b.md, "- Who Creates Debian?") {
		t.Errorf("the contents list is not kept as a list:\n%s", b.md)
	}
}

// A text of one clause a line whose long clauses are hard-wrapped (金匮要略
// as a public collection keeps it: a clause a line, a long one wrapped at
// 47 characters, a recipe cut "生姜（三" | "两） 大枣（十二枚）"): a line running
// to the wrap width without ending a sentence goes on in the next, so the
// cut-off end is no paragraph, nor a title; lines that end a sentence stay
// paragraphs of their own.
func TestPlainLineParagraphsWithWrappedLines(t *testing.T) {
	var lines []string
	recipe := "桂枝（三两，去皮） 芍药（三两） 甘草（二两，炙） 葛根（四两） 麻黄（三两，去节） 生姜（三两） 大枣（十二枚）"
	for i := 0; i < 30; i++ {
		lines = append(lines, fmt.Sprintf("%d．太阳病，发热汗出，恶风，脉缓者，名为中风。", i+1),
			fmt.Sprintf("太阳病%d日，头痛发热，身疼腰痛，骨节疼痛，恶风无汗而喘者，麻黄汤主之。", i+2),
			fmt.Sprintf("伤寒%d日，少阳受之，脉弦细，头痛发热者，属少阳，不可发汗。", i+3))
		// A long clause, then a recipe, wrapped at 47 characters.
		long := []rune("太阳病，或已发热，或未发热，必恶寒，体痛，呕逆，脉阴阳俱紧者，名曰伤寒，宜先解其表，后攻其里，不可颠倒其序也。")
		lines = append(lines, string(long[:47])+" ", string(long[47:])+" ")
		r := []rune(recipe)
		lines = append(lines, string(r[:47])+" ", string(r[47:])+" ")
		lines = append(lines, "上七味，以水一斗，煮取三升，去滓，温服一升。")
	}
	b := buildFixture(t, "金匮.txt", []byte(strings.Join(lines, "\n")+"\n"))
	if len(b.headings) != 0 {
		t.Errorf("headings %q, want none: a wrapped line's end is no title", b.headings)
	}
	for _, want := range []string{recipe, "太阳病，或已发热，或未发热，必恶寒，体痛，呕逆，脉阴阳俱紧者，名曰伤寒，宜先解其表，后攻其里，不可颠倒其序也。"} {
		if !strings.Contains(b.md, want) {
			t.Errorf("the wrapped paragraph %q is not whole in:\n%s", want, b.md[:min(len(b.md), 1500)])
		}
	}
	if !strings.Contains(b.md, "名为中风。\n\n") {
		t.Errorf("a line ending a sentence no longer ends its paragraph:\n%s", b.md[:min(len(b.md), 1500)])
	}
}

// A contents list that names the larger sections only, over a text that
// titles many more under them (紫微斗数全书: 34 entries in its 目录 over 300
// titles in the text, 诸星问答论, 子安命, 七迁移…): the title lines standing
// alone are inferred too, not only the entries (the book fell to 40
// headings once the entries stopped title inference whatever their number).
func TestPlainContentsNamingTheLargerSectionsOnly(t *testing.T) {
	var body []string
	// The book's title line, the entries and the titles under them, each
	// a heading (the text does not say how they nest).
	want := []string{"# 星图要诀"}
	subs := []string{"子安命", "丑安身", "寅定局", "卯论财", "辰论官", "巳论福", "午论寿", "未论妻", "申论子", "酉论病"}
	for _, sec := range []string{"星性论", "格局论"} {
		body = append(body, sec, para(sec+"者，诸星之大要也。", 40))
		want = append(want, "# "+sec)
		for _, sub := range subs {
			title := string([]rune(sec)[:1]) + sub
			body = append(body, title, para("凡"+sub+"，先看命宫，次看身宫，吉凶自见。", 60))
			want = append(want, "# "+title)
		}
	}
	src := "星图要诀\n目录\n星性论 格局论\n目录终\n" + strings.Join(body, "\n") + "\n"
	b := buildFixture(t, "星图要诀.md", []byte(src))
	wantHeadings(t, b, want...)
}

// A recipe's ingredients are a list, not titles (金匮要略 as the blind
// shanghan collection keeps it: 129 headings, 60 of them ingredient lines,
// # 瓜蒂（二七个）, # 雄黄, # 人参 甘草 干姜 白术（各三两）). Between a line naming
// a formula and its method, a short line is an item: it gives a quantity in
// parentheses, or the method after it counts the items (上一味…), or it
// comes after the formula's name and before more items or the method
// (煮汁，服之即解。). The sections' titles stay headings.
func TestPlainRecipeItemsAreNoTitles(t *testing.T) {
	items := []string{"瓜蒂（二七个）", "雄黄", "人参 甘草 干姜 白术（各三两）", "川芎 阿胶 甘草（各二两） 艾叶 当", "甘草", "半夏 麻黄等分"}
	var lines []string
	for s, sec := range []string{"脏腑经络先后病", "痉湿暍病", "百合狐惑阴阳毒病"} {
		lines = append(lines, "", sec, "")
		for c := 0; c < 6; c++ {
			n := 6*s + c
			lines = append(lines, fmt.Sprintf("%d．太阳病，发热无汗，反恶寒者，名曰刚痉。身热足寒，颈项强急，恶寒，时头热，面赤目赤，独头动摇者，痉病也，第%d方主之。", c+1, n+1), "")
			switch it := items[n%len(items)]; n % len(items) {
			case 3: // wrapped over the next line of items
				lines = append(lines, "\\x芎归胶艾汤方\\x（一方加干姜一两。）", "", it, "", "归（各三两） 芍药（四两） 干地黄（六两）", "", "上七味，以水五升，清酒三升，合煮取三升，去滓，温服一升，日三服。", "")
			case 4: // a method that does not count the items
				lines = append(lines, "误食之，令人狂乱，状如中风，或吐血。治之方∶", "", it, "", "煮汁，服之即解。", "")
			case 5:
				lines = append(lines, "\\x半夏麻黄丸方\\x", "", it, "", "末之，炼蜜和丸小豆大，饮服三丸，日三服。", "")
			default:
				lines = append(lines, fmt.Sprintf("\\x第%d方\\x", n+1), "", it, "", "上一味，以水一升，煮取五合，去滓，顿服。", "")
			}
		}
	}
	b := buildFixture(t, "金匮.txt", []byte(strings.Join(lines, "\n")+"\n"))
	titles := map[string]bool{}
	for _, h := range b.headings {
		titles[strings.TrimSpace(strings.TrimLeft(h, "#"))] = true
	}
	for _, it := range items {
		if titles[it] {
			t.Errorf("the ingredient line %q is a heading: %q", it, b.headings)
		}
	}
	for _, sec := range []string{"脏腑经络先后病", "痉湿暍病", "百合狐惑阴阳毒病"} {
		if !titles[sec] {
			t.Errorf("the section title %q is no heading: %q", sec, b.headings)
		}
	}
}

// A novel from a download site keeps the site's page-break markers
// ("----------- Page 142-----------" between blank lines) in a hard-wrapped
// text: they are set aside by name and counted, and the paragraph a marker
// cut in the middle of a speech is one paragraph again; a page break after
// a sentence's end keeps its paragraph break, and chapter headings stay.
func TestPlainPageMarkersSetAside(t *testing.T) {
	var sb strings.Builder
	page := 1
	marker := func() {
		fmt.Fprintf(&sb, "\n----------------------- Page %d-----------------------\n\n", page)
		page++
	}
	for ch, name := range []string{"第一回　甄士隐梦幻识通灵", "第二回　贾夫人仙逝扬州城"} {
		sb.WriteString("　　" + name + "\n\n")
		for i := 0; i < 6; i++ {
			sb.WriteString("    宝玉听了，自是纳闷。只见宝钗、探春等也来了，和贾母说了一回话，宝钗也进\n")
			sb.WriteString("来问：“妹妹做什么呢？”因见林黛玉裁剪，笑道：“越发能干了，连裁铰都会了。”\n")
			if i%2 == 0 {
				sb.WriteString("宝玉向宝钗道：“老太太要抹骨牌，正没人，你抹骨牌去罢。”宝钗听说，便\n")
				marker()
				sb.WriteString(fmt.Sprintf("笑道：“我是为抹骨牌才来么？”说着便走了%d%d。\n", ch, i))
			}
		}
		marker()
	}
	b := buildFixture(t, "红楼梦.txt", []byte(sb.String()))
	wantHeadings(t, b, "# 第一回 甄士隐梦幻识通灵", "# 第二回 贾夫人仙逝扬州城")
	if strings.Contains(b.md, "Page") || strings.Contains(b.md, "-----") {
		t.Errorf("page markers left in the text:\n%s", b.md)
	}
	if !strings.Contains(b.md, "便笑道：“我是为抹骨牌才来么？”说着便走了00。") {
		t.Errorf("the paragraph cut by a page marker is not joined:\n%s", b.md)
	}
	wantAside(t, b, "page-break markers (----- Page 12 -----, 第12页)")
	want := 0
	for p := 1; p < page; p++ {
		want += convert.CountChars(fmt.Sprintf("----------------------- Page %d-----------------------", p))
	}
	if as := b.doc.Quality.SetAside; len(as) == 0 || as[0].Chars != want {
		t.Errorf("page markers set aside %+v, want %d characters", as, want)
	}
}
