package convert

import (
	"encoding/xml"
	"fmt"
	"path"
	"strings"

	"golang.org/x/net/html"
)

type opfPackage struct {
	Title     []string `xml:"metadata>title"`
	Creator   []string `xml:"metadata>creator"`
	Publisher []string `xml:"metadata>publisher"`
	Date      []string `xml:"metadata>date"`
	Manifest  []struct {
		ID         string `xml:"id,attr"`
		Href       string `xml:"href,attr"`
		MediaType  string `xml:"media-type,attr"`
		Properties string `xml:"properties,attr"`
	} `xml:"manifest>item"`
	Spine struct {
		Toc   string `xml:"toc,attr"`
		Items []struct {
			IDRef  string `xml:"idref,attr"`
			Linear string `xml:"linear,attr"`
		} `xml:"itemref"`
	} `xml:"spine"`
}

// navEntry is a table-of-contents entry: the label of a document (or a
// fragment of it) and its depth.
type navEntry struct {
	label string
	depth int
}

// convertEPUB reads the spine in order and converts each content document;
// chapter titles come from the navigation document (EPUB 3) or the NCX
// (EPUB 2) when a chapter has no heading of its own.
func convertEPUB(data []byte, opts Options) (Document, error) {
	doc := Document{Format: "epub"}
	z, err := openZip(data, opts.MaxUnpackedBytes)
	if err != nil {
		return doc, err
	}
	opfPath, err := findOPF(z)
	if err != nil {
		return doc, err
	}
	raw, err := z.read(opfPath)
	if err != nil {
		return doc, err
	}
	var pkg opfPackage
	if err := xml.Unmarshal(raw, &pkg); err != nil {
		return doc, fmt.Errorf("%w: package document %q: %v", ErrDamaged, opfPath, err)
	}
	if len(pkg.Title) > 0 {
		doc.Title = strings.TrimSpace(pkg.Title[0])
	}
	first := func(xs []string) string {
		for _, x := range xs {
			if x = strings.TrimSpace(x); x != "" {
				return x
			}
		}
		return ""
	}
	doc.Work = WorkMeta{Author: first(pkg.Creator), Publisher: first(pkg.Publisher), Published: first(pkg.Date)}
	byID := map[string]int{}
	for i, it := range pkg.Manifest {
		byID[it.ID] = i
	}
	nav := map[string]navEntry{}
	for _, it := range pkg.Manifest {
		if strings.Contains(it.Properties, "nav") {
			p := resolveHref(opfPath, it.Href)
			if b, err := z.read(p); err == nil {
				parseNavXHTML(b, p, nav)
			}
		}
	}
	if len(nav) == 0 && pkg.Spine.Toc != "" {
		if i, ok := byID[pkg.Spine.Toc]; ok {
			p := resolveHref(opfPath, pkg.Manifest[i].Href)
			if b, err := z.read(p); err == nil {
				parseNCX(b, p, nav)
			}
		}
	}
	var parts []string
	var warnings []string
	for _, ref := range pkg.Spine.Items {
		i, ok := byID[ref.IDRef]
		if !ok {
			warnings = append(warnings, fmt.Sprintf("spine item %q is not in the manifest", ref.IDRef))
			continue
		}
		it := pkg.Manifest[i]
		if !strings.Contains(it.MediaType, "html") {
			continue
		}
		p := resolveHref(opfPath, it.Href)
		b, err := z.read(p)
		if err != nil {
			warnings = append(warnings, fmt.Sprintf("%q: %v", p, err))
			continue
		}
		md, chars, err := xhtmlConvert(b)
		if err != nil {
			warnings = append(warnings, fmt.Sprintf("%q: %v", p, err))
			continue
		}
		doc.Quality.SourceChars += chars
		if strings.TrimSpace(md) == "" {
			continue
		}
		if e, ok := nav[p]; ok && !strings.HasPrefix(strings.TrimSpace(md), "#") {
			level := min(e.depth+1, 6)
			doc.Quality.Added = addAside(doc.Quality.Added, "chapter titles from the navigation",
				"the book's contents names the chapter, whose text starts without a heading: its name heads it", e.label)
			// The chapter's own headings go below its navigation title.
			md = strings.Repeat("#", level) + " " + e.label + "\n\n" + demoteHeadings(md, level+1)
		}
		parts = append(parts, strings.TrimSpace(md))
	}
	if len(parts) == 0 {
		return doc, fmt.Errorf("%w: the EPUB spine has no readable content documents", ErrNoText)
	}
	doc.Markdown = strings.Join(parts, "\n\n") + "\n"
	doc.Quality.Warnings = warnings
	return doc, nil
}

// findOPF locates the package document: from META-INF/container.xml, or, in
// mis-packaged books without one, the only .opf file anywhere in the zip.
func findOPF(z *safeZip) (string, error) {
	if b, err := z.read("META-INF/container.xml"); err == nil {
		var c struct {
			Rootfiles []struct {
				FullPath string `xml:"full-path,attr"`
			} `xml:"rootfiles>rootfile"`
		}
		if xml.Unmarshal(b, &c) == nil && len(c.Rootfiles) > 0 && z.has(c.Rootfiles[0].FullPath) {
			return c.Rootfiles[0].FullPath, nil
		}
	}
	opfs := z.find(func(n string) bool { return strings.EqualFold(path.Ext(n), ".opf") })
	if len(opfs) == 0 {
		return "", fmt.Errorf("%w: no META-INF/container.xml and no .opf package document: not an EPUB", ErrDamaged)
	}
	return opfs[0], nil
}

func parseNCX(b []byte, base string, out map[string]navEntry) {
	type navPoint struct {
		Label  string `xml:"navLabel>text"`
		Src    string `xml:"content>src,attr"`
		Points []any  `xml:"-"`
	}
	dec := xml.NewDecoder(strings.NewReader(string(b)))
	depth := 0
	var label string
	for {
		tok, err := dec.Token()
		if err != nil {
			return
		}
		switch t := tok.(type) {
		case xml.StartElement:
			switch t.Name.Local {
			case "navPoint":
				depth++
			case "text":
				var s string
				if dec.DecodeElement(&s, &t) == nil {
					label = strings.TrimSpace(s)
				}
			case "content":
				for _, a := range t.Attr {
					if a.Name.Local == "src" && label != "" {
						p := resolveHref(base, a.Value)
						if _, ok := out[p]; !ok {
							out[p] = navEntry{label, depth}
						}
					}
				}
			}
		case xml.EndElement:
			if t.Name.Local == "navPoint" {
				depth--
			}
		}
	}
}

func parseNavXHTML(b []byte, base string, out map[string]navEntry) {
	root, err := parseHTML(string(b))
	if err != nil {
		return
	}
	var walk func(n *html.Node, depth int, inTOC bool)
	walk = func(n *html.Node, depth int, inTOC bool) {
		if n.Type == html.ElementNode {
			switch n.Data {
			case "nav":
				typ := attr(n, "epub:type") + attr(n, "type") + attr(n, "role")
				inTOC = strings.Contains(typ, "toc") || typ == ""
			case "ol", "ul":
				depth++
			case "a":
				if inTOC {
					if href := attr(n, "href"); href != "" {
						p := resolveHref(base, href)
						label := strings.Join(strings.Fields(textOf(n)), " ")
						if _, ok := out[p]; !ok && label != "" {
							out[p] = navEntry{label, max(depth, 1)}
						}
					}
				}
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c, depth, inTOC)
		}
	}
	walk(root, 0, false)
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key || a.Namespace != "" && a.Namespace+":"+a.Key == key {
			return a.Val
		}
	}
	return ""
}

func textOf(n *html.Node) string {
	var sb strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			sb.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return sb.String()
}

// xhtmlToMarkdown converts a content document's body; ruby annotations
// (furigana) follow their base text in fullwidth parentheses, 山路（やまみち）.
func xhtmlToMarkdown(b []byte) (string, error) {
	md, _, err := xhtmlConvert(b)
	return md, err
}

// xhtmlConvert is xhtmlToMarkdown that also counts the characters of the
// body's text as read (scripts, styles and ruby parentheses left out): the
// source characters of the document's accounting.
func xhtmlConvert(b []byte) (md string, chars int, err error) {
	root, err := parseHTML(decodeHTML(b))
	if err != nil {
		return "", 0, err
	}
	var body *html.Node
	var find func(*html.Node)
	find = func(n *html.Node) {
		if body != nil {
			return
		}
		if n.Type == html.ElementNode && n.Data == "body" {
			body = n
			return
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			find(c)
		}
	}
	find(root)
	if body == nil {
		body = root
	}
	var strip func(*html.Node)
	strip = func(n *html.Node) {
		for c := n.FirstChild; c != nil; {
			next := c.NextSibling
			if c.Type == html.ElementNode && c.Data == "rt" {
				// Keep the reading after its base text, in parentheses, so
				// the base reads continuously and the reading is not lost.
				if r := strings.TrimSpace(textOf(c)); r != "" {
					n.InsertBefore(&html.Node{Type: html.TextNode, Data: "（" + r + "）"}, c)
				}
				n.RemoveChild(c)
			} else if c.Type == html.ElementNode && (c.Data == "rp" || c.Data == "script" || c.Data == "style") {
				n.RemoveChild(c)
			} else {
				strip(c)
			}
			c = next
		}
	}
	strip(body)
	chars = CountChars(textOf(body)) + listNumberChars(body)
	var sb strings.Builder
	for c := body.FirstChild; c != nil; c = c.NextSibling {
		if err := html.Render(&sb, c); err != nil {
			return "", 0, err
		}
	}
	md, err = htmlFragmentToMarkdown(sb.String())
	return md, chars, err
}

// demoteHeadings shifts the Markdown headings of md so that the highest is
// at level top (at most 6), keeping their relative hierarchy.
func demoteHeadings(md string, top int) string {
	lines := strings.Split(md, "\n")
	minLevel := 7
	for _, l := range lines {
		if n := atxLevel(l); n > 0 && n < minLevel {
			minLevel = n
		}
	}
	if minLevel == 7 || minLevel >= top {
		return md
	}
	shift := top - minLevel
	for i, l := range lines {
		if n := atxLevel(l); n > 0 {
			lines[i] = strings.Repeat("#", min(n+shift, 6)) + l[n:]
		}
	}
	return strings.Join(lines, "\n")
}

// atxLevel returns the level of an ATX heading line ("## x" is 2), or 0.
func atxLevel(l string) int {
	n := 0
	for n < len(l) && n < 7 && l[n] == '#' {
		n++
	}
	if n == 0 || n > 6 || n >= len(l) || l[n] != ' ' {
		return 0
	}
	return n
}
