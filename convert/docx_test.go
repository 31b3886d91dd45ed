package convert

import (
	"strings"
	"testing"
)

const wNS = `xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main" xmlns:wp="http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing"`

func wPara(style, text string) string {
	ppr := ""
	if style != "" {
		ppr = `<w:pPr><w:pStyle w:val="` + style + `"/></w:pPr>`
	}
	return `<w:p>` + ppr + `<w:r><w:t xml:space="preserve">` + text + `</w:t></w:r></w:p>`
}

func wItem(numID, ilvl, text string) string {
	return `<w:p><w:pPr><w:numPr><w:ilvl w:val="` + ilvl + `"/><w:numId w:val="` + numID + `"/></w:numPr></w:pPr><w:r><w:t>` + text + `</w:t></w:r></w:p>`
}

func TestConvertDOCXStructure(t *testing.T) {
	styles := `<w:styles ` + wNS + `>
<w:style w:styleId="1"><w:name w:val="heading 1"/></w:style>
<w:style w:styleId="a5"><w:name w:val="标题 2"/></w:style>
<w:style w:styleId="MyChapter"><w:name w:val="My Chapter"/><w:basedOn w:val="1"/></w:style>
<w:style w:styleId="Deep"><w:name w:val="Deep"/><w:pPr><w:outlineLvl w:val="2"/></w:pPr></w:style>
</w:styles>`
	numbering := `<w:numbering ` + wNS + `>
<w:abstractNum w:abstractNumId="0"><w:lvl w:ilvl="0"><w:numFmt w:val="bullet"/></w:lvl><w:lvl w:ilvl="1"><w:numFmt w:val="bullet"/></w:lvl></w:abstractNum>
<w:abstractNum w:abstractNumId="1"><w:lvl w:ilvl="0"><w:numFmt w:val="decimal"/></w:lvl></w:abstractNum>
<w:num w:numId="1"><w:abstractNumId w:val="0"/></w:num>
<w:num w:numId="2"><w:abstractNumId w:val="1"/></w:num>
</w:numbering>`
	body := `<w:document ` + wNS + `><w:body>` +
		wPara("1", "第一章 总论") +
		wPara("a5", "第一节 阴阳") +
		wPara("Deep", "一、细目") +
		wPara("", "正文段落。") +
		`<w:p><w:r><w:fldChar w:fldCharType="begin"/></w:r><w:r><w:instrText> TOC \o "1-3" \h </w:instrText></w:r><w:r><w:t>Field result</w:t></w:r></w:p>` +
		wItem("1", "0", "Bullet one") + wItem("1", "1", "Nested bullet") + wItem("1", "0", "Bullet two") +
		wPara("", "Between lists.") +
		wItem("2", "0", "First") + wItem("2", "0", "Second") + wItem("2", "0", "Third") +
		wPara("MyChapter", "Based-on heading") +
		`<w:tbl><w:tr><w:tc><w:p><w:r><w:t>A</w:t></w:r></w:p></w:tc><w:tc><w:p><w:r><w:t>B</w:t></w:r></w:p></w:tc><w:tc><w:p><w:r><w:t>C</w:t></w:r></w:p></w:tc></w:tr>` +
		`<w:tr><w:tc><w:tcPr><w:gridSpan w:val="2"/></w:tcPr><w:p><w:r><w:t>merged</w:t></w:r></w:p></w:tc><w:tc><w:p><w:r><w:t>x|y</w:t></w:r></w:p></w:tc></w:tr></w:tbl>` +
		`</w:body></w:document>`
	data := zipBytes(t, "[Content_Types].xml", "<Types/>", "word/document.xml", body, "word/styles.xml", styles, "word/numbering.xml", numbering)
	doc, err := convertDOCX(data, Options{}.withDefaults())
	if err != nil {
		t.Fatal(err)
	}
	md := doc.Markdown
	for _, want := range []string{
		"# 第一章 总论\n",
		"## 第一节 阴阳\n",
		"### 一、细目\n",
		"正文段落。",
		"Field result",
		"- Bullet one\n    - Nested bullet\n- Bullet two\n\nBetween lists.",
		"1. First\n2. Second\n3. Third\n",
		"# Based-on heading\n",
		"| A | B | C |\n| --- | --- | --- |\n| merged |  | x\\|y |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(md, "TOC") {
		t.Errorf("field instruction text leaked:\n%s", md)
	}
}

func TestConvertDOCXTitleAboveHeadings(t *testing.T) {
	styles := `<w:styles ` + wNS + `>
<w:style w:styleId="Title"><w:name w:val="Title"/></w:style>
<w:style w:styleId="Heading1"><w:name w:val="heading 1"/></w:style>
<w:style w:styleId="Heading2"><w:name w:val="heading 2"/></w:style>
</w:styles>`
	convertBody := func(paras ...string) string {
		t.Helper()
		body := `<w:document ` + wNS + `><w:body>` + strings.Join(paras, "") + `</w:body></w:document>`
		doc, err := convertDOCX(zipBytes(t, "[Content_Types].xml", "<Types/>", "word/document.xml", body, "word/styles.xml", styles), Options{}.withDefaults())
		if err != nil {
			t.Fatal(err)
		}
		return doc.Markdown
	}
	md := convertBody(wPara("Title", "Black Tea"), wPara("Heading1", "Withering"), wPara("", "Text."), wPara("Heading2", "Timing"))
	for _, want := range []string{"# Black Tea\n", "\n## Withering\n", "\n### Timing\n"} {
		if !strings.Contains(md, want) {
			t.Errorf("title + heading 1: markdown lacks %q:\n%s", want, md)
		}
	}
	// Without Heading 1 under it the title needs no room: levels stay.
	md = convertBody(wPara("Title", "Black Tea"), wPara("Heading2", "Timing"))
	if !strings.Contains(md, "# Black Tea\n") || !strings.Contains(md, "\n## Timing\n") {
		t.Errorf("title + heading 2 only:\n%s", md)
	}
}
