package convert

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"strconv"
	"strings"
)

type docxStyle struct {
	name    string
	basedOn string
	outline int // 0-based outline level, -1 when none
}

// convertDOCX reads word/document.xml with its styles and numbering:
// heading styles (including localised names and outline levels) become
// headings, numbered and bulleted paragraphs become lists, tables become
// Markdown tables. Field instructions and deleted text are dropped.
func convertDOCX(data []byte, opts Options) (Document, error) {
	doc := Document{Format: "docx"}
	z, err := openZip(data, opts.MaxUnpackedBytes)
	if err != nil {
		return doc, err
	}
	body, err := z.read("word/document.xml")
	if err != nil {
		return doc, fmt.Errorf("%w: no word/document.xml: not a Word document", ErrDamaged)
	}
	styles := map[string]docxStyle{}
	if b, err := z.read("word/styles.xml"); err == nil {
		styles = parseDocxStyles(b)
	}
	bullets := map[string]bool{} // numId/ilvl -> bullet
	if b, err := z.read("word/numbering.xml"); err == nil {
		bullets = parseDocxNumbering(b)
	}
	if b, err := z.read("docProps/core.xml"); err == nil {
		var core struct {
			Title string `xml:"title"`
		}
		if xml.Unmarshal(b, &core) == nil {
			doc.Title = strings.TrimSpace(core.Title)
		}
	}
	md, acct, err := docxBodyToMarkdown(body, styles, bullets)
	if err != nil {
		return doc, err
	}
	// Word shows a numbered paragraph's number, which no text run holds.
	doc.Quality.SourceChars = docxTextChars(body) + acct.numbers
	if acct.descriptions > 0 {
		doc.Quality.Added = append(doc.Quality.Added, Aside{Part: "figure descriptions (a drawing's alt text)", Chars: acct.descriptions,
			Why: "a figure's description says what it shows, in brackets where the figure stood; Word does not show it as text"})
	}
	doc.Markdown = md
	return doc, nil
}

func parseDocxStyles(b []byte) map[string]docxStyle {
	var s struct {
		Styles []struct {
			ID   string `xml:"styleId,attr"`
			Name struct {
				Val string `xml:"val,attr"`
			} `xml:"name"`
			BasedOn struct {
				Val string `xml:"val,attr"`
			} `xml:"basedOn"`
			Outline *struct {
				Val string `xml:"val,attr"`
			} `xml:"pPr>outlineLvl"`
		} `xml:"style"`
	}
	out := map[string]docxStyle{}
	if xml.Unmarshal(b, &s) != nil {
		return out
	}
	for _, st := range s.Styles {
		ds := docxStyle{name: strings.ToLower(st.Name.Val), basedOn: st.BasedOn.Val, outline: -1}
		if st.Outline != nil {
			if n, err := strconv.Atoi(st.Outline.Val); err == nil && n < 9 {
				ds.outline = n
			}
		}
		out[st.ID] = ds
	}
	return out
}

func parseDocxNumbering(b []byte) map[string]bool {
	var n struct {
		Abstract []struct {
			ID   string `xml:"abstractNumId,attr"`
			Lvls []struct {
				Ilvl   string `xml:"ilvl,attr"`
				NumFmt struct {
					Val string `xml:"val,attr"`
				} `xml:"numFmt"`
			} `xml:"lvl"`
		} `xml:"abstractNum"`
		Nums []struct {
			ID       string `xml:"numId,attr"`
			Abstract struct {
				Val string `xml:"val,attr"`
			} `xml:"abstractNumId"`
		} `xml:"num"`
	}
	out := map[string]bool{}
	if xml.Unmarshal(b, &n) != nil {
		return out
	}
	abs := map[string]map[string]bool{}
	for _, a := range n.Abstract {
		m := map[string]bool{}
		for _, l := range a.Lvls {
			m[l.Ilvl] = l.NumFmt.Val == "bullet"
		}
		abs[a.ID] = m
	}
	for _, num := range n.Nums {
		for ilvl, bullet := range abs[num.Abstract.Val] {
			out[num.ID+"/"+ilvl] = bullet
		}
	}
	return out
}

// headingLevel returns the heading level (1-6) of a paragraph style, or 0.
func headingLevel(styleID string, styles map[string]docxStyle) int {
	for i := 0; i < 5 && styleID != ""; i++ {
		st, ok := styles[styleID]
		name := strings.ToLower(styleID)
		if ok {
			name = st.name
			if st.outline >= 0 {
				return min(st.outline+1, 6)
			}
		}
		switch {
		case name == "title":
			return 1
		default:
			// Built-in names are English ("heading 1"); WPS and hand-made
			// templates use localized names ("标题 1", "Überschrift 1").
			for _, p := range []string{"heading", "标题", "標題", "überschrift", "titre", "título", "titolo", "заголовок", "見出し"} {
				if rest, ok := strings.CutPrefix(name, p); ok {
					if n, err := strconv.Atoi(strings.TrimSpace(rest)); err == nil && n >= 1 {
						return min(n, 6)
					}
				}
			}
		}
		if !ok {
			return 0
		}
		styleID = st.basedOn
	}
	return 0
}

type docxPara struct {
	text    strings.Builder
	style   string
	numID   string
	ilvl    string
	outline int
}

// docxAccount counts what docxBodyToMarkdown writes that no text run holds.
type docxAccount struct {
	numbers      int // characters of numbered paragraphs' numbers ("1.")
	descriptions int // characters of drawings' descriptions ("[a duck]")
}

func docxBodyToMarkdown(body []byte, styles map[string]docxStyle, bullets map[string]bool) (string, docxAccount, error) {
	var acct docxAccount
	dec := xml.NewDecoder(strings.NewReader(string(body)))
	var out strings.Builder
	var para *docxPara
	type table struct {
		rows    [][]string
		row     []string
		cell    []string
		span    int
		caption string
	}
	// List state: a blank line must end a list before other blocks, and
	// numbered items carry their number per list and level.
	inList := false
	counters := map[string]int{}
	var tables []*table
	emit := func(s string) {
		if inList {
			out.WriteString("\n")
			inList = false
		}
		out.WriteString(s)
		out.WriteString("\n\n")
	}
	for {
		tok, err := dec.Token()
		if err != nil {
			if err.Error() == "EOF" {
				break
			}
			return "", acct, fmt.Errorf("%w: word/document.xml: %v", ErrDamaged, err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			switch t.Name.Local {
			case "p":
				para = &docxPara{outline: -1}
			case "pStyle":
				if para != nil {
					para.style = attrVal(t)
				}
			case "numId":
				if para != nil {
					para.numID = attrVal(t)
				}
			case "ilvl":
				if para != nil {
					para.ilvl = attrVal(t)
				}
			case "outlineLvl":
				if para != nil {
					if n, err := strconv.Atoi(attrVal(t)); err == nil && n < 9 {
						para.outline = n
					}
				}
			case "t":
				var s string
				if err := dec.DecodeElement(&s, &t); err == nil && para != nil {
					para.text.WriteString(s)
				}
			case "tab":
				if para != nil {
					para.text.WriteString(" ")
				}
			case "br", "cr":
				if para != nil {
					para.text.WriteString(" ")
				}
			case "docPr":
				// Drawing alt text: pandoc shows it, and it says what a
				// figure is.
				for _, a := range t.Attr {
					if a.Name.Local == "descr" && para != nil && strings.TrimSpace(a.Value) != "" {
						d := " [" + strings.Join(strings.Fields(a.Value), " ") + "] "
						para.text.WriteString(d)
						acct.descriptions += CountChars(d)
					}
				}
			case "tblCaption":
				if len(tables) > 0 {
					tables[len(tables)-1].caption = strings.TrimSpace(attrVal(t))
				}
			case "instrText", "delText", "fldData":
				_ = dec.Skip()
			case "tbl":
				tables = append(tables, &table{})
			case "tr":
				if len(tables) > 0 {
					tables[len(tables)-1].row = nil
				}
			case "tc":
				if len(tables) > 0 {
					tables[len(tables)-1].cell = nil
					tables[len(tables)-1].span = 1
				}
			case "gridSpan":
				// A merged cell fills the columns it spans, so the
				// row stays aligned with the header.
				if n, err := strconv.Atoi(attrVal(t)); err == nil && n > 1 && n <= 64 && len(tables) > 0 {
					tables[len(tables)-1].span = n
				}
			}
		case xml.EndElement:
			switch t.Name.Local {
			case "p":
				if para == nil {
					continue
				}
				text := strings.TrimSpace(para.text.String())
				if len(tables) > 0 {
					if text != "" {
						tb := tables[len(tables)-1]
						tb.cell = append(tb.cell, text)
					}
					para = nil
					continue
				}
				if text == "" {
					para = nil
					continue
				}
				level := headingLevel(para.style, styles)
				if level == 0 && para.outline >= 0 {
					level = min(para.outline+1, 6)
				}
				switch {
				case level > 0:
					// Headings are written with a placeholder level that
					// resolveHeadingLevels settles once the whole body
					// is known (a Title style pushes the others down).
					if isTitleStyle(para.style, styles) {
						emit(headingMark + "T " + text)
					} else {
						emit(headingMark + strconv.Itoa(level) + " " + text)
					}
				case para.numID != "" && para.numID != "0":
					depth, _ := strconv.Atoi(para.ilvl)
					depth = max(0, min(depth, 8))
					key := para.numID + "/" + strconv.Itoa(depth)
					counters[key]++
					for d := depth + 1; d <= 8; d++ {
						delete(counters, para.numID+"/"+strconv.Itoa(d))
					}
					marker := strconv.Itoa(counters[key]) + "."
					if bullets[para.numID+"/"+para.ilvl] {
						marker = "-"
					} else {
						acct.numbers += CountChars(marker)
					}
					if !inList {
						// A list starts as its own block.
						if o := out.String(); o != "" && !strings.HasSuffix(o, "\n\n") {
							out.WriteString("\n")
						}
					}
					out.WriteString(strings.Repeat("    ", depth) + marker + " " + text + "\n")
					inList = true
				default:
					emit(text)
				}
				para = nil
			case "tc":
				if len(tables) > 0 {
					tb := tables[len(tables)-1]
					tb.row = append(tb.row, strings.Join(tb.cell, " "))
					for i := 1; i < tb.span; i++ {
						tb.row = append(tb.row, "")
					}
				}
			case "tr":
				if len(tables) > 0 {
					tb := tables[len(tables)-1]
					tb.rows = append(tb.rows, tb.row)
				}
			case "tbl":
				if len(tables) == 0 {
					continue
				}
				tb := tables[len(tables)-1]
				tables = tables[:len(tables)-1]
				md := markdownTable(tb.rows)
				if len(tables) > 0 {
					// A nested table is flattened into its enclosing cell.
					outer := tables[len(tables)-1]
					outer.cell = append(outer.cell, strings.Join(flatten(tb.rows), " "))
					continue
				}
				if md != "" {
					emit(md)
				}
				if tb.caption != "" {
					emit("*" + tb.caption + "*")
				}
			}
		}
	}
	s := reBlankRuns.ReplaceAllString(out.String(), "\n\n")
	return resolveHeadingLevels(strings.TrimSpace(s)) + "\n", acct, nil
}

// headingMark starts a heading line of the body before its level is settled.
const headingMark = "\x01H"

// isTitleStyle says whether a paragraph style is Word's Title (or based on it).
func isTitleStyle(styleID string, styles map[string]docxStyle) bool {
	for i := 0; i < 5 && styleID != ""; i++ {
		st, ok := styles[styleID]
		if !ok {
			return strings.EqualFold(styleID, "title")
		}
		if st.name == "title" {
			return true
		}
		styleID = st.basedOn
	}
	return false
}

// resolveHeadingLevels turns the heading placeholders into Markdown. The
// document title is '#'; when a Title paragraph and Heading 1 both occur,
// every heading moves one level down so the title stays above the chapters.
func resolveHeadingLevels(md string) string {
	lines := strings.Split(md, "\n")
	hasTitle, hasH1 := false, false
	for _, l := range lines {
		if rest, ok := strings.CutPrefix(l, headingMark); ok {
			hasTitle = hasTitle || strings.HasPrefix(rest, "T ")
			hasH1 = hasH1 || strings.HasPrefix(rest, "1 ")
		}
	}
	shift := 0
	if hasTitle && hasH1 {
		shift = 1
	}
	for i, l := range lines {
		rest, ok := strings.CutPrefix(l, headingMark)
		if !ok {
			continue
		}
		lv, text, _ := strings.Cut(rest, " ")
		level := 1
		if lv != "T" {
			n, _ := strconv.Atoi(lv)
			level = min(n+shift, 6)
		}
		lines[i] = strings.Repeat("#", level) + " " + text
	}
	return strings.Join(lines, "\n")
}

func attrVal(t xml.StartElement) string {
	for _, a := range t.Attr {
		if a.Name.Local == "val" {
			return a.Value
		}
	}
	return ""
}

func flatten(rows [][]string) []string {
	var out []string
	for _, r := range rows {
		out = append(out, r...)
	}
	return out
}

// markdownTable renders rows as a pipe table, the first row as header.
func markdownTable(rows [][]string) string {
	width := 0
	for _, r := range rows {
		width = max(width, len(r))
	}
	if width == 0 {
		return ""
	}
	cell := func(s string) string {
		return strings.ReplaceAll(strings.Join(strings.Fields(s), " "), "|", `\|`)
	}
	var sb strings.Builder
	for i, r := range rows {
		sb.WriteString("|")
		for j := 0; j < width; j++ {
			v := ""
			if j < len(r) {
				v = cell(r[j])
			}
			sb.WriteString(" " + v + " |")
		}
		sb.WriteString("\n")
		if i == 0 {
			sb.WriteString("|" + strings.Repeat(" --- |", width) + "\n")
		}
	}
	return strings.TrimRight(sb.String(), "\n")
}

// wordML is the namespace of a Word document's body elements.
const wordML = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"

// docxTextChars counts the characters of the document's text runs (w:t),
// the source characters of its accounting: text the body holds whether or
// not the conversion keeps it (a text box's runs, say).
func docxTextChars(body []byte) int {
	d := xml.NewDecoder(bytes.NewReader(body))
	n, depth := 0, 0
	for {
		tok, err := d.Token()
		if err != nil {
			return n
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if depth > 0 || t.Name.Local == "t" && t.Name.Space == wordML {
				depth++
			}
		case xml.EndElement:
			if depth > 0 {
				depth--
			}
		case xml.CharData:
			if depth > 0 {
				n += CountChars(string(t))
			}
		}
	}
}
