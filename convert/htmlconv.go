package convert

import (
	"bytes"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/JohannesKaufmann/html-to-markdown/v2/converter"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/base"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/commonmark"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/table"
	readability "github.com/go-shiori/go-readability"
	"golang.org/x/net/html"
	"golang.org/x/net/html/charset"
)

// newMarkdownConverter returns an HTML to Markdown converter with tables.
func newMarkdownConverter() *converter.Converter {
	return converter.NewConverter(converter.WithPlugins(
		base.NewBasePlugin(),
		commonmark.NewCommonmarkPlugin(),
		table.NewTablePlugin(),
	))
}

var (
	reBlankRuns = regexp.MustCompile(`\n{3,}`)
	reImgTag    = regexp.MustCompile(`(?is)<img\b[^>]*>`)
)

// htmlFragmentToMarkdown converts an HTML fragment, keeping headings,
// lists and tables.
func htmlFragmentToMarkdown(fragment string) (string, error) {
	md, err := newMarkdownConverter().ConvertString(fragment)
	if err != nil {
		return "", err
	}
	md = cleanControl(md)
	md = reBlankRuns.ReplaceAllString(md, "\n\n")
	return strings.TrimSpace(md) + "\n", nil
}

// decodeHTML returns the page as UTF-8. Bytes that are valid UTF-8 are taken
// as UTF-8 even when the page declares another charset: saved pages are often
// re-encoded without fixing their <meta>.
func decodeHTML(data []byte) string {
	data = bytes.TrimPrefix(data, []byte{0xEF, 0xBB, 0xBF})
	if utf8.Valid(data) {
		return string(data)
	}
	enc, _, _ := charset.DetermineEncoding(data, "text/html")
	return decodeWith(enc, data)
}

// maxHTMLDepth is how deep x/net/html lets elements nest before it gives
// up.
const maxHTMLDepth = 512

// parseHTML parses a page; a page nested deeper than the parser goes is
// ErrTooDeep, not ErrDamaged: it may be whole, only too deep to read.
func parseHTML(text string) (*html.Node, error) {
	root, err := html.Parse(strings.NewReader(text))
	if err != nil {
		// x/net/html's own words for the open-element stack bound.
		if strings.Contains(err.Error(), "open stack of elements exceeds") {
			return nil, fmt.Errorf("%w: html: elements nested more than %d deep; vibe's HTML reader stops there", ErrTooDeep, maxHTMLDepth)
		}
		return nil, fmt.Errorf("%w: html: %v", ErrDamaged, err)
	}
	return root, nil
}

// convertHTML extracts the main content of a page (not its navigation
// chrome) and converts it to Markdown.
func convertHTML(data []byte) (Document, error) {
	text := decodeHTML(data)
	var doc Document
	doc.Format = "html"
	root, err := parseHTML(text)
	if err != nil {
		return doc, err
	}
	// The page's text as a browser shows it is its source; what the
	// conversion leaves out of it is set aside by name below.
	doc.Quality.SourceChars = pageTextChars(root)
	RemoveHeadingChrome(root)
	headingControls := doc.Quality.SourceChars - pageTextChars(root)
	chrome := chromeTextChars(root)
	article, err := readability.FromDocument(root, nil)
	content := ""
	if err == nil && article.Node != nil && utf8.RuneCountInString(article.TextContent) > 100 {
		content = article.Content
		doc.Title = strings.TrimSpace(article.Title)
	} else {
		// Too little for readability to judge (a short page): keep the
		// page minus its obvious chrome.
		content = stripChrome(root)
	}
	// Images of a saved page point at remote URLs that are useless offline,
	// and their alt text (rendered-math LaTeX, icon names) is not prose.
	content = reImgTag.ReplaceAllString(content, "")
	md, err := htmlFragmentToMarkdown(content)
	if err != nil {
		return doc, fmt.Errorf("html to markdown: %w", err)
	}
	if doc.Title != "" && !strings.HasPrefix(md, "# ") {
		md = "# " + doc.Title + "\n\n" + md
	}
	doc.Markdown = md
	doc.Quality.SetAside = htmlAsides(doc.Quality.SourceChars, CountText(md), headingControls, chrome)
	return doc, nil
}

// htmlAsides names what the conversion of a page left out of its text:
// the controls beside its headings, its navigation, header, footer and
// forms, and what else the article's reader judged no part of the article.
// What the text lost is shared out in that order, so that the parts add up
// to the source less the converted text, and no more.
func htmlAsides(source, converted, headingControls, chrome int) []Aside {
	left := source - converted
	var out []Aside
	add := func(part, why string, n int) {
		n = min(n, left)
		if n > 0 {
			out = append(out, Aside{Part: part, Chars: n, Why: why})
			left -= n
		}
	}
	add("heading controls ([edit], ¶)", "they are a site's buttons beside its headings, not text of the page", headingControls)
	add("navigation, header, footer and forms", "they are the site's menus and page furniture (nav, header, footer, aside, form), not the page's text", chrome)
	add("text outside the article (sidebars, comments, related links)", "the page's reader (readability) judged it no part of the article", left)
	return out
}

// pageTextChars counts the characters of a page's text as a browser shows
// it: its title, the text of its body and the numbers of its ordered
// lists, without scripts, styles and templates (code, not text), nor
// elements marked hidden.
func pageTextChars(root *html.Node) int {
	n := listNumberChars(root)
	var walk func(*html.Node)
	walk = func(x *html.Node) {
		switch x.Type {
		case html.TextNode:
			n += CountChars(x.Data)
			return
		case html.ElementNode:
			switch x.Data {
			case "script", "style", "noscript", "template", "meta", "link":
				return
			}
			for _, a := range x.Attr {
				if a.Key == "hidden" || a.Key == "aria-hidden" && a.Val == "true" {
					return
				}
			}
		case html.CommentNode:
			return
		}
		for c := x.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(root)
	return n
}

// chromeTextChars counts the text characters of a page's navigation,
// header, footer, asides and forms outside its article (what stripChrome
// removes).
func chromeTextChars(root *html.Node) int {
	n := 0
	var walk func(x *html.Node, inArticle bool)
	walk = func(x *html.Node, inArticle bool) {
		for c := x.FirstChild; c != nil; c = c.NextSibling {
			if c.Type != html.ElementNode {
				continue
			}
			switch c.Data {
			case "nav", "aside", "form":
				n += pageTextChars(c)
				continue
			case "header", "footer":
				if !inArticle {
					n += pageTextChars(c)
					continue
				}
			}
			walk(c, inArticle || c.Data == "article" || c.Data == "main")
		}
	}
	walk(root, false)
	return n
}

// stripChrome removes navigation, headers, footers, asides, forms and
// scripts from a parsed page and returns its body's HTML.
func stripChrome(root *html.Node) string {
	var body *html.Node
	var walk func(n *html.Node, inArticle bool)
	walk = func(n *html.Node, inArticle bool) {
		for c := n.FirstChild; c != nil; {
			next := c.NextSibling
			if c.Type == html.ElementNode {
				drop := false
				switch c.Data {
				case "nav", "aside", "form", "script", "style", "noscript", "template":
					drop = true
				case "header", "footer":
					// An article's own header holds its title.
					drop = !inArticle
				case "body":
					body = c
				}
				if drop {
					n.RemoveChild(c)
					c = next
					continue
				}
			}
			walk(c, inArticle || c.Type == html.ElementNode && (c.Data == "article" || c.Data == "main"))
			c = next
		}
	}
	walk(root, false)
	if body == nil {
		body = root
	}
	var sb strings.Builder
	for c := body.FirstChild; c != nil; c = c.NextSibling {
		if err := html.Render(&sb, c); err != nil {
			return textOf(body)
		}
	}
	return sb.String()
}

// RemoveHeadingChrome drops the controls that wikis and documentation sites
// put inside or beside their headings, which would otherwise end up in the
// Markdown headings ("History[edit](…)", "Install¶"): MediaWiki's
// edit-section links (class mw-editsection, with their brackets) anywhere in
// the page, and inside h1-h6 the permalink anchors (class headerlink,
// anchor, mw-headline-anchor… without text of their own, or a link whose
// text is only ¶, #, §, 🔗 or "edit", or that points at action=edit).
// The HTML converter applies it to every page; it is exported for
// measurements against a reference extraction that keeps such links.
func RemoveHeadingChrome(root *html.Node) {
	var walk func(n *html.Node, inHeading bool)
	walk = func(n *html.Node, inHeading bool) {
		for c := n.FirstChild; c != nil; {
			next := c.NextSibling
			if c.Type == html.ElementNode {
				if isEditSection(c) || inHeading && isHeadingAnchor(c) {
					n.RemoveChild(c)
					c = next
					continue
				}
				walk(c, inHeading || isHeadingTag(c.Data))
			}
			c = next
		}
	}
	walk(root, false)
}

func isHeadingTag(tag string) bool {
	return len(tag) == 2 && tag[0] == 'h' && tag[1] >= '1' && tag[1] <= '6'
}

// isEditSection reports MediaWiki's "[edit]" control around a heading.
func isEditSection(n *html.Node) bool {
	for _, c := range classes(n) {
		if c == "mw-editsection" || c == "editsection" {
			return true
		}
	}
	return false
}

// isHeadingAnchor reports a permalink or edit link inside a heading.
func isHeadingAnchor(n *html.Node) bool {
	if n.Data != "a" {
		return false
	}
	for _, a := range n.Attr {
		if a.Key == "href" && strings.Contains(a.Val, "action=edit") {
			return true
		}
	}
	text := strings.ToLower(strings.Trim(strings.TrimSpace(textOf(n)), "[]"))
	switch text {
	case "¶", "#", "§", "🔗", "edit", "編輯", "编辑":
		return true
	}
	if strings.IndexFunc(text, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }) >= 0 {
		return false // a link carrying the heading's own text stays
	}
	for _, c := range classes(n) {
		switch c {
		case "headerlink", "anchor", "anchorjs-link", "heading-anchor", "header-anchor", "hash-link", "mw-headline-anchor", "permalink":
			return true
		}
	}
	return false
}

func classes(n *html.Node) []string {
	for _, a := range n.Attr {
		if a.Key == "class" {
			return strings.Fields(a.Val)
		}
	}
	return nil
}

// listNumberChars counts the characters of the numbers a page shows before
// the items of its ordered lists ("1." … "12."), which no text node holds:
// a reader sees them, and the converted Markdown writes them as the list's
// markers, padded to the width of the list's last number ("01." … "12.").
func listNumberChars(root *html.Node) int {
	n := 0
	var walk func(*html.Node)
	walk = func(x *html.Node) {
		if x.Type == html.ElementNode {
			switch x.Data {
			case "script", "style", "noscript", "template":
				return
			case "ol":
				start := 1
				for _, a := range x.Attr {
					if a.Key == "start" {
						if v, err := strconv.Atoi(strings.TrimSpace(a.Val)); err == nil {
							start = v
						}
					}
				}
				items := 0
				for c := x.FirstChild; c != nil; c = c.NextSibling {
					if c.Type == html.ElementNode && c.Data == "li" && strings.TrimSpace(textOf(c)) != "" {
						items++
					}
				}
				if items > 0 {
					width := len(strconv.Itoa(start + items - 1))
					n += items * (width + 1)
				}
			}
		}
		for c := x.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(root)
	return n
}
