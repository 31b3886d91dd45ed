package convert

import (
	"bytes"
	"fmt"
	"regexp"
	"strconv"
)

var (
	reObjStart  = regexp.MustCompile(`(?:^|[\r\n\s])(\d{1,7})[ \t\r\n]+(\d{1,5})[ \t\r\n]+obj\b`)
	reEndObj    = regexp.MustCompile(`\bendobj\b`)
	reTypePage  = regexp.MustCompile(`/Type\s*/Page\b`)
	reTypeCat   = regexp.MustCompile(`/Type\s*/Catalog\b`)
	rePagesRef  = regexp.MustCompile(`/Pages\s+(\d+)\s+(\d+)\s+R`)
	reObjStream = regexp.MustCompile(`/Type\s*/ObjStm\b`)
)

// pdfObject is a complete "N G obj … endobj" found by scanning the bytes.
type pdfObject struct {
	id, gen    int
	start, end int // start of "N G obj", end just after "endobj"
}

// rebuildPDF makes a readable PDF of a damaged one, typically a file cut
// short: it scans the bytes for the complete objects (those whose endobj is
// there), and writes a new cross-reference table and trailer after them. The
// document catalog and page tree are kept when they survived; otherwise a
// new page tree lists the surviving pages in file order. It returns the new
// bytes, how many pages it found, and false when nothing can be recovered
// (no complete page object, or objects packed into object streams, which a
// rebuilt table cannot address).
func rebuildPDF(data []byte) (out []byte, pages int, ok bool) {
	if !bytes.HasPrefix(bytes.TrimLeft(data, "\x00\t\r\n "), []byte("%PDF-")) {
		return nil, 0, false
	}
	objs := map[int]pdfObject{}
	var pageIDs []int
	catalog, lastEnd := -1, 0
	locs := reObjStart.FindAllSubmatchIndex(data, -1)
	for i, m := range locs {
		id, err1 := strconv.Atoi(string(data[m[2]:m[3]]))
		gen, err2 := strconv.Atoi(string(data[m[4]:m[5]]))
		if err1 != nil || err2 != nil {
			continue
		}
		limit := len(data)
		if i+1 < len(locs) {
			limit = locs[i+1][0]
		}
		e := reEndObj.FindIndex(data[m[1]:limit])
		if e == nil {
			continue // cut short, or damaged
		}
		o := pdfObject{id: id, gen: gen, start: m[2], end: m[1] + e[1]}
		body := data[m[1] : m[1]+e[0]]
		head := body
		if len(head) > 4096 {
			head = head[:4096]
		}
		if reObjStream.Match(head) {
			return nil, 0, false
		}
		if _, seen := objs[id]; !seen && reTypePage.Match(head) {
			pageIDs = append(pageIDs, id)
		}
		if reTypeCat.Match(head) {
			catalog = id
		}
		objs[id] = o // a later copy (incremental update) wins
		lastEnd = max(lastEnd, o.end)
	}
	// Page objects replaced by a later copy that is no page any more.
	kept := pageIDs[:0]
	for _, id := range pageIDs {
		o := objs[id]
		if reTypePage.Match(data[o.start:min(o.end, o.start+4096)]) {
			kept = append(kept, id)
		}
	}
	pageIDs = kept
	if len(pageIDs) == 0 {
		return nil, 0, false
	}
	var b bytes.Buffer
	b.Write(data[:lastEnd])
	b.WriteString("\n")
	maxID := 0
	for id := range objs {
		maxID = max(maxID, id)
	}
	root := catalog
	treeOK := false
	if catalog >= 0 {
		o := objs[catalog]
		if m := rePagesRef.FindSubmatch(data[o.start:o.end]); m != nil {
			id, _ := strconv.Atoi(string(m[1]))
			_, treeOK = objs[id]
		}
	}
	if !treeOK {
		// A new page tree and catalog after the surviving objects.
		pagesID, catID := maxID+1, maxID+2
		maxID += 2
		objs[pagesID] = pdfObject{id: pagesID, start: b.Len()}
		fmt.Fprintf(&b, "%d 0 obj\n<< /Type /Pages /Count %d /Kids [", pagesID, len(pageIDs))
		for _, id := range pageIDs {
			fmt.Fprintf(&b, " %d %d R", id, objs[id].gen)
		}
		b.WriteString(" ] >>\nendobj\n")
		objs[catID] = pdfObject{id: catID, start: b.Len()}
		fmt.Fprintf(&b, "%d 0 obj\n<< /Type /Catalog /Pages %d 0 R >>\nendobj\n", catID, pagesID)
		root = catID
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n", maxID+1)
	for id := 0; id <= maxID; id++ {
		o, ok := objs[id]
		if !ok || id == 0 {
			b.WriteString("0000000000 65535 f \n")
			continue
		}
		fmt.Fprintf(&b, "%010d %05d n \n", o.start, o.gen)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root %d %d R >>\nstartxref\n%d\n%%%%EOF\n", maxID+1, root, objs[root].gen, xref)
	return b.Bytes(), len(pageIDs), true
}
