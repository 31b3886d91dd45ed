package convert

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"unicode"

	"github.com/ledongthuc/pdf"

	"github.com/vibelife/vibe/internal/textmetric"
)

// convertPDF extracts the text layer page by page from positioned glyphs,
// putting back the spaces between words that the PDF only encodes as gaps,
// then structures it: running headers, footers and page numbers removed,
// paragraphs joined, headings from the outline when the PDF has one and from
// numbering otherwise. Pages without a text layer are listed and the document
// is flagged as needing OCR.
//
// A damaged PDF, typically one cut short, is read again from a rebuilt copy
// (see rebuildPDF): the pages that survive are converted and the document is
// flagged partial with a warning, rather than rejected whole.
func convertPDF(ctx context.Context, data []byte, opts Options) (Document, error) {
	doc, err := convertPDFOnce(ctx, data, opts)
	if err == nil || !errors.Is(err, ErrDamaged) || ctx.Err() != nil {
		return doc, err
	}
	fixed, found, ok := rebuildPDF(data)
	if !ok {
		return doc, err
	}
	part, perr := convertPDFOnce(ctx, fixed, opts)
	if perr != nil {
		return doc, err
	}
	part.Quality.Partial = true
	part.Quality.Warnings = append([]string{fmt.Sprintf(
		"partial: the PDF is damaged or cut short (%v); %d page(s) were recovered from its surviving objects, the rest is lost: get a complete copy",
		err, found)}, part.Quality.Warnings...)
	return part, nil
}

func convertPDFOnce(ctx context.Context, data []byte, opts Options) (doc Document, err error) {
	doc.Format = "pdf"
	// pdfium (WebAssembly) is the measured best engine (docs/convert-measurements.md);
	// the glyph-based ledongthuc reader below is the fallback when pdfium fails.
	switch opts.PDFEngine {
	case "", "auto", "pdfium", "ledongthuc":
	default:
		return doc, fmt.Errorf("unknown PDF engine %q (config convert.pdf_engine): use auto, pdfium or ledongthuc", opts.PDFEngine)
	}
	if opts.PDFEngine != "ledongthuc" {
		d, perr := convertPDFium(ctx, data, opts)
		if perr == nil || opts.PDFEngine == "pdfium" || errors.Is(perr, ErrEncrypted) || errors.Is(perr, errPDFiumClosed) || ctx.Err() != nil {
			return d, perr
		}
	}
	r, err := pdf.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		msg := strings.ToLower(err.Error())
		if strings.Contains(msg, "password") || strings.Contains(msg, "encrypt") {
			return doc, fmt.Errorf("%w: supply a decrypted copy (e.g. qpdf --decrypt --password=... in.pdf out.pdf)", ErrEncrypted)
		}
		return doc, fmt.Errorf("%w: %v", ErrDamaged, err)
	}
	if r.Trailer().Key("Encrypt").Kind() != pdf.Null {
		return doc, fmt.Errorf("%w: supply a decrypted copy (e.g. qpdf --decrypt --password=... in.pdf out.pdf)", ErrEncrypted)
	}
	list, skipped := pdfPages(ctx, r)
	if err := ctx.Err(); err != nil {
		return doc, err
	}
	n := len(list)
	doc.Quality.Pages = n
	if skipped > 0 {
		doc.Quality.Warnings = append(doc.Quality.Warnings, fmt.Sprintf(
			"damaged page tree: %d nodes that loop back or nest too deep were skipped", skipped))
	}
	if info := r.Trailer().Key("Info"); info.Kind() == pdf.Dict {
		doc.Title = strings.TrimSpace(info.Key("Title").Text())
	}
	var pages []string
	var failed []int
	for i, p := range list {
		if err := ctx.Err(); err != nil {
			return doc, err
		}
		text, perr := pageText(p)
		if perr != nil {
			failed = append(failed, i+1)
		}
		if strings.TrimSpace(text) == "" {
			doc.Quality.PagesWithoutText = append(doc.Quality.PagesWithoutText, i+1)
		}
		pages = append(pages, text)
	}
	outline := map[string]int{}
	pdfOutline(ctx, r, outline)
	if err := finishPDF(&doc, pages, failed, "could not be read completely (damaged content stream)", outline); err != nil {
		return doc, err
	}
	return doc, nil
}

// finishPDF records which pages failed or lack a text layer, refuses a
// document with no text at all, and structures the pages into Markdown with
// the outline's headings. Both PDF engines end here.
func finishPDF(doc *Document, pages []string, failed []int, failedWhat string, outline map[string]int) error {
	n := len(pages)
	if len(failed) > 0 {
		doc.Quality.Warnings = append(doc.Quality.Warnings, fmt.Sprintf("pages %s %s", intList(failed), failedWhat))
	}
	if len(doc.Quality.PagesWithoutText) > 0 {
		doc.Quality.NeedsOCR = true
		doc.Quality.Warnings = append(doc.Quality.Warnings,
			fmt.Sprintf("needs OCR: pages %s have no text layer", intList(doc.Quality.PagesWithoutText)))
	}
	if n == 0 || len(doc.Quality.PagesWithoutText) == n {
		if len(failed) > 0 || n == 0 {
			return fmt.Errorf("%w: no page could be read", ErrDamaged)
		}
		return fmt.Errorf("%w: none of the %d pages has text (a scan?): run OCR first (e.g. ocrmypdf in.pdf out.pdf)", ErrNoText, n)
	}
	for _, p := range pages {
		doc.Quality.SourceChars += CountChars(p)
	}
	var asides []Aside
	doc.Markdown, asides = structureTextWith(pages, outline)
	doc.Quality.SetAside = append(doc.Quality.SetAside, asides...)
	return nil
}

func normHeading(s string) string {
	return strings.ToLower(strings.Join(strings.Fields(s), " "))
}

func intList(xs []int) string {
	var parts []string
	for i := 0; i < len(xs); {
		j := i
		for j+1 < len(xs) && xs[j+1] == xs[j]+1 {
			j++
		}
		if j > i {
			parts = append(parts, fmt.Sprintf("%d-%d", xs[i], xs[j]))
		} else {
			parts = append(parts, fmt.Sprint(xs[i]))
		}
		i = j + 1
	}
	return strings.Join(parts, ", ")
}

// pageText rebuilds the lines of a page from its glyphs. Glyphs are grouped
// into lines by baseline, ordered left to right, and a space is inserted
// where the gap between two glyphs is wider than a fraction of the font size.
func pageText(p pdf.Page) (text string, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: %v", ErrDamaged, r)
		}
	}()
	if p.V.IsNull() {
		return "", nil
	}
	glyphs := p.Content().Text
	if len(glyphs) == 0 {
		return "", nil
	}
	type line struct {
		y      float64
		size   float64
		glyphs []pdf.Text
	}
	sort.SliceStable(glyphs, func(i, j int) bool {
		if math.Abs(glyphs[i].Y-glyphs[j].Y) > 0.5 {
			return glyphs[i].Y > glyphs[j].Y
		}
		return glyphs[i].X < glyphs[j].X
	})
	var lines []*line
	for _, g := range glyphs {
		g.S = strings.Map(func(r rune) rune {
			if r == '\n' || r == '\r' {
				return -1
			}
			return r
		}, g.S)
		if g.S == "" {
			continue
		}
		size := g.FontSize
		if size <= 0 {
			size = 10
		}
		var cur *line
		if len(lines) > 0 {
			last := lines[len(lines)-1]
			if math.Abs(last.y-g.Y) < 0.4*math.Max(size, last.size) {
				cur = last
			}
		}
		if cur == nil {
			cur = &line{y: g.Y, size: size}
			lines = append(lines, cur)
		}
		cur.glyphs = append(cur.glyphs, g)
	}
	cols := findGutters(glyphs, len(lines))
	column := func(g pdf.Text) int {
		c := 0
		for _, b := range cols {
			if g.X+g.W/2 > b {
				c++
			}
		}
		return c
	}
	var sb strings.Builder
	for c := 0; c <= len(cols); c++ {
		for _, l := range lines {
			var segment []pdf.Text
			for _, g := range l.glyphs {
				if len(cols) == 0 || column(g) == c {
					segment = append(segment, g)
				}
			}
			if len(segment) == 0 {
				continue
			}
			writeLine(&sb, segment)
		}
		sb.WriteString("\n")
	}
	return sb.String(), nil
}

// writeLine writes the glyphs of one line left to right, with a space where
// the gap between two glyphs is wider than a fraction of the font size.
func writeLine(sb *strings.Builder, glyphs []pdf.Text) {
	sort.SliceStable(glyphs, func(i, j int) bool { return glyphs[i].X < glyphs[j].X })
	var prev *pdf.Text
	wordStart := true
	for i := 0; i < len(glyphs); i++ {
		g := &glyphs[i]
		if prev != nil {
			gap := g.X - (prev.X + prev.W)
			size := math.Max(g.FontSize, 1)
			pr := lastRune(prev.S)
			nr := firstRune(g.S)
			threshold := 0.18 * size
			if textmetric.IsCJK(pr) && textmetric.IsCJK(nr) {
				threshold = 0.6 * size
			}
			wordStart = unicode.IsSpace(pr)
			if gap > threshold && !unicode.IsSpace(pr) && !unicode.IsSpace(nr) {
				sb.WriteString(" ")
				wordStart = true
			}
		}
		if k := footnoteMarkAt(glyphs, i); wordStart && k > 0 {
			for _, d := range glyphs[i : i+k] {
				sb.WriteString(superscriptDigits(d.S))
			}
			sb.WriteString(" ")
			i += k - 1
			prev = nil // the space after the mark is written
			continue
		}
		sb.WriteString(g.S)
		prev = g
	}
	sb.WriteString("\n")
}

// footnoteMarkAt returns how many glyphs from i on are a footnote number
// glued to the footnote's first word: one to three digits raised above the
// baseline of the capital letter after them (the rule separateFootnoteMarks
// applies with pdfium), or 0. writeLine asks only where a word starts, so a
// reference after a word ("double.1") is left alone.
func footnoteMarkAt(glyphs []pdf.Text, i int) int {
	k := 0
	for i+k < len(glyphs) && k < 4 && len(glyphs[i+k].S) == 1 && glyphs[i+k].S[0] >= '0' && glyphs[i+k].S[0] <= '9' {
		k++
	}
	if k == 0 || k > 3 || i+k+1 >= len(glyphs) {
		return 0
	}
	letter, next := glyphs[i+k], glyphs[i+k+1]
	if !unicode.IsUpper(firstRune(letter.S)) || !unicode.IsLower(firstRune(next.S)) {
		return 0
	}
	// A capital's height is about 0.7 of the font size.
	if !isRaised(glyphs[i+k-1].Y, letter.Y, 0.7*letter.FontSize) {
		return 0
	}
	return k
}

// findGutters returns the x positions of the vertical white gaps that
// separate text columns on a page: strips, away from the page edges, that
// almost no line crosses, leaving columns at least a fifth of the text width
// on both sides. Tables, whose columns are narrow, are not split.
func findGutters(glyphs []pdf.Text, nLines int) []float64 {
	if nLines < 8 {
		return nil
	}
	minX, maxX := math.Inf(1), math.Inf(-1)
	for _, g := range glyphs {
		minX = math.Min(minX, g.X)
		maxX = math.Max(maxX, g.X+g.W)
	}
	width := maxX - minX
	if width < 100 {
		return nil
	}
	const bin = 2.0
	n := int(width/bin) + 1
	cover := make([]int, n)
	type key struct{ y int }
	seen := map[key]map[int]bool{}
	for _, g := range glyphs {
		k := key{int(g.Y)}
		if seen[k] == nil {
			seen[k] = map[int]bool{}
		}
		for b := int((g.X - minX) / bin); b <= int((g.X+g.W-minX)/bin) && b < n; b++ {
			if b >= 0 && !seen[k][b] {
				seen[k][b] = true
				cover[b]++
			}
		}
	}
	limit := max(1, nLines/30)
	var gutters []float64
	last := minX
	for b := 0; b < n; {
		if cover[b] > limit {
			b++
			continue
		}
		e := b
		for e < n && cover[e] <= limit {
			e++
		}
		x0, x1 := minX+float64(b)*bin, minX+float64(e)*bin
		mid := (x0 + x1) / 2
		if x1-x0 >= 6 && x0-last >= width/5 && maxX-x1 >= width/5 {
			gutters = append(gutters, mid)
			last = x1
		}
		b = e
	}
	return gutters
}

func lastRune(s string) rune {
	r := []rune(s)
	if len(r) == 0 {
		return 0
	}
	return r[len(r)-1]
}

func firstRune(s string) rune {
	for _, r := range s {
		return r
	}
	return 0
}
