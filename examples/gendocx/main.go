// Command gendocx writes examples/demo/black-tea.docx, the demo corpus's Word
// document, from the text below (authored for vibe; no third-party text).
// Run it from the repository root: go run ./examples/gendocx
package main

import (
	"archive/zip"
	"bytes"
	"encoding/xml"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"
)

// para is one paragraph: a style (Title, Heading1, Heading2, ListNumber or
// "" for body text) and its text. A table row is style "Row" with cells
// separated by " | ".
type para struct{ style, text string }

var body = []para{
	{"Title", "Brewing Black Tea"},
	{"Heading1", "Chapter 1. Choosing the Leaf"},
	{"", "Black tea is fully oxidised. Broken grades brew fast and strong; whole leaves brew slowly and sweetly."},
	{"", "If the tea is a broken grade (fannings or dust), then brew it for no more than three minutes."},
	{"", "If the leaves are whole, then brew them for four to five minutes."},
	{"Heading1", "Chapter 2. Method: the Western Pot"},
	{"ListNumber", "Warm the teapot with hot water and empty it."},
	{"ListNumber", "Add 2.5 grams of leaves for every 250 millilitres of water."},
	{"ListNumber", "Pour water at a full boil, 95 to 100 °C, over the leaves."},
	{"ListNumber", "Cover the pot and steep for three to five minutes."},
	{"ListNumber", "Strain all the tea into a second warmed pot so it does not over-steep."},
	{"Heading1", "Chapter 3. Rules and Patterns"},
	{"Heading2", "3.1 Rules"},
	{"", "Black tea must always be brewed with freshly boiled water; reboiled water makes the cup dull."},
	{"", "If milk is added, then brew the tea one minute longer so its body carries through."},
	{"Heading2", "3.2 Pattern: the cream-down"},
	{"", "When strong black tea cools and turns cloudy, that cloud (cream-down) is a sign of a rich, well-made tea, not of a fault."},
	{"Heading2", "3.3 Steeping table"},
	{"Row", "Grade | Water | Time"},
	{"Row", "Broken leaf | 95 °C | 3 minutes"},
	{"Row", "Whole leaf | 100 °C | 5 minutes"},
}

func main() {
	out := flag.String("o", "examples/demo/black-tea.docx", "output file")
	flag.Parse()
	data, err := build(body)
	if err != nil {
		fmt.Fprintln(os.Stderr, "gendocx:", err)
		os.Exit(1)
	}
	if err := os.WriteFile(*out, data, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "gendocx:", err)
		os.Exit(1)
	}
}

func esc(s string) string {
	var b bytes.Buffer
	xml.EscapeText(&b, []byte(s))
	return b.String()
}

func build(ps []para) ([]byte, error) {
	var doc strings.Builder
	doc.WriteString(`<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>`)
	inTable := false
	for _, p := range ps {
		if p.style == "Row" {
			if !inTable {
				doc.WriteString(`<w:tbl>`)
				inTable = true
			}
			doc.WriteString(`<w:tr>`)
			for _, c := range strings.Split(p.text, " | ") {
				fmt.Fprintf(&doc, `<w:tc><w:p><w:r><w:t xml:space="preserve">%s</w:t></w:r></w:p></w:tc>`, esc(c))
			}
			doc.WriteString(`</w:tr>`)
			continue
		}
		if inTable {
			doc.WriteString(`</w:tbl>`)
			inTable = false
		}
		doc.WriteString(`<w:p>`)
		switch p.style {
		case "":
		case "ListNumber":
			doc.WriteString(`<w:pPr><w:pStyle w:val="ListNumber"/><w:numPr><w:ilvl w:val="0"/><w:numId w:val="1"/></w:numPr></w:pPr>`)
		default:
			fmt.Fprintf(&doc, `<w:pPr><w:pStyle w:val="%s"/></w:pPr>`, p.style)
		}
		fmt.Fprintf(&doc, `<w:r><w:t xml:space="preserve">%s</w:t></w:r></w:p>`, esc(p.text))
	}
	if inTable {
		doc.WriteString(`</w:tbl>`)
	}
	doc.WriteString(`</w:body></w:document>`)

	styles := `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<w:styles xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main">
<w:style w:type="paragraph" w:styleId="Title"><w:name w:val="Title"/></w:style>
<w:style w:type="paragraph" w:styleId="Heading1"><w:name w:val="heading 1"/><w:pPr><w:outlineLvl w:val="0"/></w:pPr></w:style>
<w:style w:type="paragraph" w:styleId="Heading2"><w:name w:val="heading 2"/><w:pPr><w:outlineLvl w:val="1"/></w:pPr></w:style>
<w:style w:type="paragraph" w:styleId="ListNumber"><w:name w:val="List Number"/></w:style>
</w:styles>`
	numbering := `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<w:numbering xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main">
<w:abstractNum w:abstractNumId="0"><w:lvl w:ilvl="0"><w:start w:val="1"/><w:numFmt w:val="decimal"/><w:lvlText w:val="%1."/></w:lvl></w:abstractNum>
<w:num w:numId="1"><w:abstractNumId w:val="0"/></w:num>
</w:numbering>`
	files := []struct{ name, body string }{
		{"[Content_Types].xml", `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">
<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>
<Default Extension="xml" ContentType="application/xml"/>
<Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/>
<Override PartName="/word/styles.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.styles+xml"/>
<Override PartName="/word/numbering.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.numbering+xml"/>
</Types>`},
		{"_rels/.rels", `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">
<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/>
</Relationships>`},
		{"word/_rels/document.xml.rels", `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">
<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/styles" Target="styles.xml"/>
<Relationship Id="rId2" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/numbering" Target="numbering.xml"/>
</Relationships>`},
		{"word/document.xml", doc.String()},
		{"word/styles.xml", styles},
		{"word/numbering.xml", numbering},
	}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	// A fixed timestamp keeps the output byte-identical from run to run.
	stamp := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, f := range files {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: f.name, Method: zip.Deflate, Modified: stamp})
		if err != nil {
			return nil, err
		}
		if _, err := w.Write([]byte(f.body)); err != nil {
			return nil, err
		}
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
