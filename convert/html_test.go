package convert

import (
	"errors"
	"strings"
	"testing"

	"golang.org/x/text/encoding/simplifiedchinese"
)

func TestConvertHTMLCharsetAndMainContent(t *testing.T) {
	body := `<body><nav><ul><li><a href="/">首页</a></li><li><a href="/news">新闻导航链接</a></li></ul></nav>
<article><header><h1>论用神</h1></header><p>八字用神，专求月令，以日干配月令地支，而生克不同，格局分焉。财官印食，此用神之善而顺用之者也。</p>
<h2>用神成败</h2><p>煞伤劫刃，用神之不善而逆用之者也。当顺而顺，当逆而逆，配合得宜，皆为贵格。</p></article>
<footer>版权所有 联系我们</footer></body></html>`
	gbkPage := func(decl string) []byte {
		b, err := simplifiedchinese.GBK.NewEncoder().Bytes([]byte(`<!DOCTYPE html><html><head><meta charset="` + decl + `"><title>论用神</title></head>` + body))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	tests := []struct {
		name string
		data []byte
	}{
		{"gbk declared gbk", gbkPage("gbk")},
		{"utf-8 declared gb2312", []byte(`<!DOCTYPE html><html><head><meta charset="gb2312"><title>论用神</title></head>` + body)},
		{"utf-8 with BOM", append([]byte{0xEF, 0xBB, 0xBF}, `<!DOCTYPE html><html><head><title>论用神</title></head>`+body...)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc, err := convertHTML(tt.data)
			if err != nil {
				t.Fatal(err)
			}
			for _, want := range []string{"# 论用神", "## 用神成败", "财官印食", "配合得宜"} {
				if !strings.Contains(doc.Markdown, want) {
					t.Errorf("markdown lacks %q:\n%s", want, doc.Markdown)
				}
			}
			for _, chrome := range []string{"新闻导航链接", "版权所有"} {
				if strings.Contains(doc.Markdown, chrome) {
					t.Errorf("navigation chrome %q kept:\n%s", chrome, doc.Markdown)
				}
			}
			if strings.Contains(doc.Markdown, "\uFFFD") {
				t.Errorf("replacement characters in output:\n%s", doc.Markdown)
			}
		})
	}
}

func TestHTMLHeadingChromeRemoved(t *testing.T) {
	page := `<!DOCTYPE html><html><head><title>Tea - Wiki</title></head><body><div id="content">
<h1>Tea</h1>
<p>Tea is an aromatic beverage prepared by pouring hot water over cured or fresh leaves of the tea plant, an evergreen shrub native to East Asia.</p>
<h2><span class="mw-headline" id="History">History</span><span class="mw-editsection"><span class="mw-editsection-bracket">[</span><a href="/w/index.php?title=Tea&amp;action=edit&amp;section=1" title="Edit section: History">edit</a><span class="mw-editsection-bracket">]</span></span></h2>
<p>The earliest credible records of tea drinking date to the third century AD, in a medical text written by Hua Tuo in China.</p>
<h2 id="brewing">Brewing<a class="headerlink" href="#brewing" title="Permalink to this heading">¶</a></h2>
<p>Black tea is brewed with water near boiling; green and white tea with cooler water, for a shorter time, to keep them from turning bitter.</p>
<h3><a class="anchor" href="#storage" aria-hidden="true"></a>Storage</h3>
<p>Tea keeps best in an airtight container away from light, heat, moisture and the smell of spices or coffee.</p>
<h3><a class="anchor" href="#cups">Cups and pots</a></h3>
<p>A heading whose own text is a link keeps it: only links without text of their own are chrome.</p>
</div></body></html>`
	doc, err := convertHTML([]byte(page))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"\n## History\n", "\n## Brewing\n", "\n### Storage\n", "\n### [Cups and pots](#cups)\n"} {
		if !strings.Contains(doc.Markdown, want) {
			t.Errorf("markdown lacks heading %q:\n%s", want, doc.Markdown)
		}
	}
	for _, chrome := range []string{"edit", "¶", "Permalink"} {
		if strings.Contains(doc.Markdown, chrome) {
			t.Errorf("heading chrome %q kept:\n%s", chrome, doc.Markdown)
		}
	}
}

// TestHTMLNestedTooDeep is the regression test of issue 26's finding that a
// page nested 100,000 deep was rejected as damaged ("truncated or damaged"
// in vibe convert's hint): it is ErrTooDeep, saying how deep the reader
// goes, and a page nested 500 deep still converts.
func TestHTMLNestedTooDeep(t *testing.T) {
	deep := "<html><body>" + strings.Repeat("<div>", 100000) + "hidden text" + strings.Repeat("</div>", 100000) + "</body></html>"
	_, err := ConvertBytes(t.Context(), []byte(deep), "deep.html", Options{})
	if !errors.Is(err, ErrTooDeep) || errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), "nested more than 512 deep") {
		t.Fatalf("err = %v, want ErrTooDeep naming the depth", err)
	}
	ok := "<html><body>" + strings.Repeat("<div>", 500) + "<p>" + strings.Repeat("readable text ", 20) + "</p>" + strings.Repeat("</div>", 500) + "</body></html>"
	doc, err := ConvertBytes(t.Context(), []byte(ok), "ok.html", Options{})
	if err != nil || !strings.Contains(doc.Markdown, "readable text") {
		t.Fatalf("500 deep: %v, %q", err, doc.Markdown)
	}
}
