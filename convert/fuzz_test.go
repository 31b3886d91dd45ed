package convert

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// The fuzz targets run each parser on arbitrary bytes under the same
// bounds as a real conversion, but tighter: an input that keeps a parser
// busy past fuzzTimeout or grows the heap past fuzzMemory is reported as a
// failure (a hang or a memory bomb found), never waited for. scripts/fuzz.sh
// runs them; their seeds are in testdata/fuzz/<target>/ and in the f.Add
// calls below, all generated, none copied from the corpus.
const (
	fuzzTimeout = 10 * time.Second
	fuzzMemory  = 512 << 20
)

func fuzzOptions() Options {
	return Options{Timeout: fuzzTimeout, MaxMemoryBytes: fuzzMemory, MaxUnpackedBytes: 64 << 20}.withDefaults()
}

// checkParse fails on a hang or memory bomb, and checks what every
// successful conversion must give: valid UTF-8 Markdown that renders with
// its front matter and parses back.
func checkParse(t *testing.T, doc Document, err error) {
	t.Helper()
	if errors.Is(err, ErrTimeout) || errors.Is(err, ErrTooMuchMemory) {
		t.Fatalf("parser not bounded: %v", err)
	}
	if err != nil {
		return
	}
	if !utf8.ValidString(doc.Markdown) {
		t.Fatalf("Markdown is not valid UTF-8: %q", doc.Markdown)
	}
	doc.Converter = Version
	out, rerr := Render(doc)
	if rerr != nil {
		t.Fatalf("render: %v", rerr)
	}
	if _, _, perr := Parse(out); perr != nil {
		t.Fatalf("rendered document does not parse back: %v\n%s", perr, out)
	}
}

func fuzzZip(tb testing.TB, entries ...string) []byte {
	tb.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for i := 0; i+1 < len(entries); i += 2 {
		w, err := zw.Create(entries[i])
		if err != nil {
			tb.Fatal(err)
		}
		if _, err := w.Write([]byte(entries[i+1])); err != nil {
			tb.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

func FuzzConvertPDF(f *testing.F) {
	f.Add(loopingPDF())
	f.Add(buildPDF([]string{
		"<< /Type /Catalog /Pages 2 0 R /Outlines 6 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>",
		contentStream("1. Introduction"),
		"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
		"<< /Type /Outlines /First 7 0 R >>",
		"<< /Title (Introduction) /Parent 6 0 R >>",
	}))
	f.Add([]byte("%PDF-1.4\n1 0 obj\n<< /Type /Page >>\nendobj\n"))
	engine := NewPDFium(PDFiumOptions{Instances: 1, MaxMemoryBytes: fuzzMemory})
	f.Cleanup(func() { engine.Close() })
	// Compiling pdfium is not the input's work: outside the bounds (as in
	// ConvertBytes), or the first seed times out on a fresh or busy machine.
	if err := engine.Start(); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		opts := fuzzOptions()
		opts.PDFium = engine
		doc, err := bounded(context.Background(), opts, FormatPDF, func(ctx context.Context) (Document, error) {
			return convertPDF(ctx, data, opts)
		})
		checkParse(t, doc, err)
	})
}

func FuzzConvertEPUB(f *testing.F) {
	container := `<?xml version="1.0"?><container xmlns="urn:oasis:names:tc:opendocument:xmlns:container" version="1.0"><rootfiles><rootfile full-path="c.opf" media-type="application/oebps-package+xml"/></rootfiles></container>`
	opf := `<package xmlns="http://www.idpf.org/2007/opf" version="3.0"><metadata xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>T</dc:title></metadata><manifest><item id="a" href="a.xhtml" media-type="application/xhtml+xml"/><item id="n" href="n.xhtml" media-type="application/xhtml+xml" properties="nav"/></manifest><spine><itemref idref="a"/><itemref idref="a"/></spine></package>`
	f.Add(fuzzZip(f, "mimetype", "application/epub+zip", "META-INF/container.xml", container, "c.opf", opf,
		"a.xhtml", `<html><body><h1>第一章</h1><p>正文<ruby>漢<rt>かん</rt></ruby></p></body></html>`,
		"n.xhtml", `<html><body><nav><ol><li><a href="a.xhtml">第一章</a></li></ol></nav></body></html>`))
	f.Add(fuzzZip(f, "mimetype", "application/epub+zip", "x.opf", opf))
	f.Fuzz(func(t *testing.T, data []byte) {
		opts := fuzzOptions()
		doc, err := bounded(context.Background(), opts, FormatEPUB, func(context.Context) (Document, error) {
			return convertEPUB(data, opts)
		})
		checkParse(t, doc, err)
	})
}

func FuzzConvertDOCX(f *testing.F) {
	f.Add(fuzzZip(f,
		"word/document.xml", `<w:document `+wNS+`><w:body>`+wPara("Heading1", "第一章 总论")+wPara("", "正文。")+wItem("1", "0", "item")+`</w:body></w:document>`,
		"word/styles.xml", `<w:styles `+wNS+`><w:style w:styleId="Heading1"><w:name w:val="heading 1"/><w:basedOn w:val="Heading1"/></w:style></w:styles>`,
		"word/numbering.xml", `<w:numbering `+wNS+`><w:num w:numId="1"><w:abstractNumId w:val="0"/></w:num></w:numbering>`,
		"docProps/core.xml", `<cp:coreProperties xmlns:cp="x" xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>T</dc:title></cp:coreProperties>`))
	f.Add(fuzzZip(f, "word/document.xml", `<w:document `+wNS+`><w:body><w:tbl><w:tr><w:tc><w:p><w:r><w:t>a</w:t></w:r></w:p></w:tc></w:tr></w:tbl></w:body></w:document>`))
	f.Fuzz(func(t *testing.T, data []byte) {
		opts := fuzzOptions()
		doc, err := bounded(context.Background(), opts, FormatDOCX, func(context.Context) (Document, error) {
			return convertDOCX(data, opts)
		})
		checkParse(t, doc, err)
	})
}

func FuzzConvertHTML(f *testing.F) {
	f.Add([]byte(`<!doctype html><html><head><meta charset="gbk"><title>T</title></head><body><nav>menu</nav><article><h1>标题<span>[edit]</span></h1><p>正文</p><table><tr><td>a</td></tr></table></article></body></html>`))
	f.Add([]byte("<html><body><h2>x</h2><pre>code\n</pre><ul><li>a<li>b</ul>"))
	f.Fuzz(func(t *testing.T, data []byte) {
		opts := fuzzOptions()
		doc, err := bounded(context.Background(), opts, FormatHTML, func(context.Context) (Document, error) {
			return convertHTML(data)
		})
		checkParse(t, doc, err)
	})
}

// FuzzDecodeText checks the text decoder: its output is valid UTF-8, valid
// UTF-8 input comes back unchanged, and converting text either works or
// fails with a known error.
func FuzzDecodeText(f *testing.F) {
	f.Add([]byte("# 子平真诠\n\n论十干十二支\n"), false)
	f.Add([]byte("# 子平真诠\n\n论十干十二支\n\xe4"), true)
	f.Add([]byte("\xef\xbb\xbf第一章\r\n正文"), false)
	f.Add([]byte("\xff\xfe\x2c\x7b\x00"), false)
	f.Add([]byte("\xb5\xda\xd2\xbb\xd5\xc2"), false) // 第一章 in GBK
	f.Fuzz(func(t *testing.T, data []byte, markdown bool) {
		d := decodeText(data)
		if !utf8.ValidString(d.text) {
			t.Fatalf("decoded text is not valid UTF-8 (%s)", d.encoding)
		}
		if utf8.Valid(data) && !bytes.HasPrefix(data, []byte{0xEF, 0xBB, 0xBF}) && !bytes.HasPrefix(data, []byte{0xFF, 0xFE}) && !bytes.HasPrefix(data, []byte{0xFE, 0xFF}) {
			if d.text != string(data) || d.encoding != "utf-8" {
				t.Fatalf("valid UTF-8 changed: %q -> %q (%s)", data, d.text, d.encoding)
			}
		}
		format := FormatText
		if markdown {
			format = FormatMD
		}
		opts := fuzzOptions()
		doc, err := bounded(context.Background(), opts, format, func(context.Context) (Document, error) {
			return convertText(data, format)
		})
		if err != nil && !errors.Is(err, ErrGarbled) && !errors.Is(err, ErrTimeout) && !errors.Is(err, ErrTooMuchMemory) {
			t.Fatalf("unexpected error: %v", err)
		}
		if err == nil && strings.Contains(doc.Markdown, "\x00") {
			t.Fatalf("NUL byte in Markdown")
		}
		checkParse(t, doc, err)
	})
}
