package convert

import (
	"context"
	"reflect"

	"github.com/ledongthuc/pdf"
)

// Bounds of the hand-walked PDF structures: real page trees are a few
// levels deep, real outlines a few levels and some thousand entries.
const (
	maxPageTreeDepth = 64
	maxOutlineDepth  = 32
	maxOutlineItems  = 100000
)

// objectKey identifies the PDF object a value was read from, for the
// visited sets below. The reader does not export it, so it is read by
// reflection; ok is false if that ever fails (a new reader version), and
// the walks then rely on their depth and size bounds alone.
func objectKey(v pdf.Value) (key uint64, ok bool) {
	f := reflect.ValueOf(v).FieldByName("ptr")
	if !f.IsValid() || f.Kind() != reflect.Struct || f.NumField() != 2 {
		return 0, false
	}
	id, gen := f.Field(0), f.Field(1)
	if !id.CanUint() || !gen.CanUint() {
		return 0, false
	}
	return id.Uint()<<16 | gen.Uint(), true
}

// pdfPages lists the page objects of the document in order by walking the
// page tree itself, with a visited set: the reader's own r.Page(i) follows
// Kids without one and spins forever on a tree whose Kids loop (Pages 2 ->
// Kids [6], 6 -> Kids [2 0 R 3 0 R]). Pages whose Parent chain loops are
// left out too (the reader's resource lookup would spin on them) and
// counted in skipped, like nodes met a second time. The walk stops when ctx
// is done.
func pdfPages(ctx context.Context, r *pdf.Reader) (pages []pdf.Page, skipped int) {
	visited := map[uint64]bool{}
	var walk func(node pdf.Value, depth int)
	walk = func(node pdf.Value, depth int) {
		if ctx.Err() != nil {
			return
		}
		if k, ok := objectKey(node); ok && node.Kind() == pdf.Dict {
			if visited[k] {
				skipped++
				return
			}
			visited[k] = true
		}
		switch node.Key("Type").Name() {
		case "Page":
			if parentLoops(node) {
				skipped++
				return
			}
			pages = append(pages, pdf.Page{V: node})
		case "Pages":
			if depth >= maxPageTreeDepth {
				skipped++
				return
			}
			kids := node.Key("Kids")
			for i := 0; i < kids.Len(); i++ {
				walk(kids.Index(i), depth+1)
			}
		default:
			// A kid without /Type: a page if it has contents (some
			// writers omit the type), otherwise nothing to read.
			if node.Kind() == pdf.Dict && !node.Key("Contents").IsNull() && depth > 0 {
				if parentLoops(node) {
					skipped++
					return
				}
				pages = append(pages, pdf.Page{V: node})
			}
		}
	}
	walk(r.Trailer().Key("Root").Key("Pages"), 0)
	return pages, skipped
}

// parentLoops reports whether following a page's Parent links comes back
// to an object already seen, or goes deeper than any real tree.
func parentLoops(page pdf.Value) bool {
	seen := map[uint64]bool{}
	v := page
	for depth := 0; !v.IsNull(); depth++ {
		if depth > maxPageTreeDepth {
			return true
		}
		if k, ok := objectKey(v); ok {
			if seen[k] {
				return true
			}
			seen[k] = true
		}
		v = v.Key("Parent")
	}
	return false
}

// pdfOutline collects the document outline's titles with their depth, like
// collectOutline on r.Outline() but with a visited set: the reader's own
// walk follows First/Next without one and grows without end on a looping
// outline.
func pdfOutline(ctx context.Context, r *pdf.Reader, out map[string]int) {
	visited := map[uint64]bool{}
	items := 0
	var walk func(entry pdf.Value, depth int)
	walk = func(entry pdf.Value, depth int) {
		if depth > maxOutlineDepth {
			return
		}
		for child := entry.Key("First"); child.Kind() == pdf.Dict; child = child.Key("Next") {
			if ctx.Err() != nil || items >= maxOutlineItems {
				return
			}
			if k, ok := objectKey(child); ok {
				if visited[k] {
					return
				}
				visited[k] = true
			}
			items++
			if t := normHeading(child.Key("Title").Text()); t != "" {
				if _, ok := out[t]; !ok {
					out[t] = depth
				}
			}
			walk(child, depth+1)
		}
	}
	walk(r.Trailer().Key("Root").Key("Outlines"), 1)
}
