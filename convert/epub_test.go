package convert

import (
	"strings"
	"testing"
)

func TestXHTMLToMarkdownRubyAndHeadings(t *testing.T) {
	tests := []struct {
		name, in string
		want     []string
		notWant  []string
	}{
		{"ruby reading kept after base", `<html><body><p><ruby>山路<rp>(</rp><rt>やまみち</rt><rp>)</rp></ruby>を登りながら</p></body></html>`,
			[]string{"山路（やまみち）を登りながら"}, []string{"(", ")"}},
		{"heading levels kept", `<html><body><h1>Book</h1><h2>Chapter</h2><h3>Section</h3><p>Text.</p></body></html>`,
			[]string{"# Book", "## Chapter", "### Section", "Text."}, nil},
		{"scripts dropped", `<html><body><script>var x=1;</script><p>Body</p></body></html>`,
			[]string{"Body"}, []string{"var x"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := xhtmlToMarkdown([]byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("output lacks %q:\n%s", w, got)
				}
			}
			for _, w := range tt.notWant {
				if strings.Contains(got, w) {
					t.Errorf("output has %q:\n%s", w, got)
				}
			}
		})
	}
}

func TestConvertEPUBSpineNavAndRecovery(t *testing.T) {
	opf := `<?xml version="1.0"?><package xmlns="http://www.idpf.org/2007/opf" version="3.0"><metadata xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>测试之书</dc:title></metadata>
<manifest>
<item id="nav" href="nav.xhtml" media-type="application/xhtml+xml" properties="nav"/>
<item id="ncx" href="toc.ncx" media-type="application/x-dtbncx+xml"/>
<item id="c2" href="text/第二章.xhtml" media-type="application/xhtml+xml"/>
<item id="c1" href="text/第一章.xhtml" media-type="application/xhtml+xml"/>
<item id="gone" href="text/missing.xhtml" media-type="application/xhtml+xml"/>
</manifest>
<spine toc="ncx"><itemref idref="c1"/><itemref idref="gone"/><itemref idref="c2"/></spine></package>`
	nav := `<html xmlns="http://www.w3.org/1999/xhtml" xmlns:epub="http://www.idpf.org/2007/ops"><body><nav epub:type="toc"><ol>
<li><a href="text/%E7%AC%AC%E4%B8%80%E7%AB%A0.xhtml">第一章 起</a></li><li><a href="text/第二章.xhtml">第二章 承</a></li></ol></nav></body></html>`
	ch := func(body string) string {
		return `<html xmlns="http://www.w3.org/1999/xhtml"><body>` + body + `</body></html>`
	}
	files := func(prefix string, container bool) []string {
		e := []string{prefix + "mimetype", "application/epub+zip"}
		if container {
			e = append(e, prefix+"META-INF/container.xml", `<?xml version="1.0"?><container xmlns="urn:oasis:names:tc:opendocument:xmlns:container" version="1.0"><rootfiles><rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/></rootfiles></container>`)
		}
		return append(e,
			prefix+"OEBPS/content.opf", opf,
			prefix+"OEBPS/nav.xhtml", nav,
			prefix+"OEBPS/text/第二章.xhtml", ch(`<p>第二章的正文。</p>`),
			prefix+"OEBPS/text/第一章.xhtml", ch(`<p>第一章的正文。</p><h2>小节</h2><p>小节正文。</p>`))
	}
	tests := []struct {
		name  string
		files []string
	}{
		{"well packaged", files("", true)},
		{"everything under a prefix, no container.xml", files("Book Folder/", false)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc, err := convertEPUB(zipBytes(t, tt.files...), Options{}.withDefaults())
			if err != nil {
				t.Fatal(err)
			}
			md := doc.Markdown
			t.Logf("markdown:\n%s", md)
			i1, i2 := strings.Index(md, "第一章的正文"), strings.Index(md, "第二章的正文")
			if i1 < 0 || i2 < 0 || i1 > i2 {
				t.Errorf("spine order lost (第一章 at %d, 第二章 at %d):\n%s", i1, i2, md)
			}
			for _, want := range []string{"## 第一章 起\n", "## 第二章 承\n", "### 小节\n"} {
				if !strings.Contains(md, want) {
					t.Errorf("markdown lacks %q:\n%s", want, md)
				}
			}
			if doc.Title != "测试之书" {
				t.Errorf("title %q", doc.Title)
			}
		})
	}
}
