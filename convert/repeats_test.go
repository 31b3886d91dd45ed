package convert

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vibelife/vibe/internal/racetest"
	"github.com/vibelife/vibe/internal/textmetric"
)

func TestDropRepeatedCopies(t *testing.T) {
	para := func(i int) string {
		return fmt.Sprintf("Paragraph %d says something of its own about the standing trustee's duties.", i)
	}
	var copy1, copy2 []string
	copy1 = append(copy1, "# Handbook", "Chapter 13")
	for i := 0; i < 30; i++ {
		if i%10 == 0 {
			copy1 = append(copy1, fmt.Sprintf("## Section %d", i/10+1))
		}
		copy1 = append(copy1, para(i))
	}
	copy1 = append(copy1, "- first item of a list that is long enough\n- second item of a list that is long enough")
	// The second copy lost its heading styles and list numbering, one
	// paragraph was edited, and a table cell became a paragraph.
	copy2 = append(copy2, "Handbook", "Chapter 13")
	for i := 0; i < 30; i++ {
		if i%10 == 0 {
			copy2 = append(copy2, fmt.Sprintf("Section %d", i/10+1))
		}
		p := para(i)
		if i == 17 {
			p = "An edited paragraph that the first copy does not have, kept where it stands."
		}
		copy2 = append(copy2, p)
	}
	copy2 = append(copy2, "1. first item of a list that is long enough\n2. second item of a list that is long enough")
	tail := "A closing paragraph after the copies, which is new text."

	md := strings.Join(copy1, "\n\n") + "\n\n" + strings.Join(copy2, "\n\n") + "\n\n" + tail + "\n"
	got, n := DropRepeatedPassages(md)
	want := strings.Join(copy1, "\n\n") + "\n\n" + "An edited paragraph that the first copy does not have, kept where it stands." + "\n\n" + tail + "\n"
	if got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	// Every unit of the second copy goes (its list block holds two) but the
	// edited paragraph.
	if wantN := 2 + 3 + 30 + 2 - 1; n != wantN {
		t.Errorf("dropped %d units, want %d", n, wantN)
	}

	// Fewer than repeatMinRun repeated paragraphs in a row: a quotation or
	// a recap, not a copy; nothing is dropped.
	var short []string
	for i := 0; i < repeatMinRun-1; i++ {
		short = append(short, para(i))
	}
	md = strings.Join(short, "\n\n") + "\n\nIn summary:\n\n" + strings.Join(short, "\n\n") + "\n"
	if got, n := DropRepeatedPassages(md); n != 0 || got != md {
		t.Errorf("a short repeat was dropped (%d units):\n%s", n, got)
	}

	// Paragraphs that differ only in their numbers are not repeats.
	var payments []string
	for i := 0; i < 3*repeatMinRun; i++ {
		payments = append(payments, fmt.Sprintf("Payment number %d of the plan is due on day %d of the month.", i, i%28+1))
	}
	md = strings.Join(payments, "\n\n") + "\n"
	if got, n := DropRepeatedPassages(md); n != 0 || got != md {
		t.Errorf("paragraphs differing in their numbers were dropped (%d units)", n)
	}

	// Fenced code is never compared or dropped.
	code := "```\nfor i := range xs {\n\n\tfmt.Println(xs[i])\n}\n```"
	md = code + "\n\n" + code + "\n"
	if got, n := DropRepeatedPassages(md); n != 0 || got != md {
		t.Errorf("code block changed (%d units):\n%s", n, got)
	}
}

// TestDropRepeatedCopyHeadings: a repeated copy's own titles (page names
// that differ from the first copy's numbered headings) go with the text
// they stood over, a parent whose subsections all went goes too, and a
// section with something new in it stays, as does a heading that was
// empty in the source.
func TestDropRepeatedCopyHeadings(t *testing.T) {
	para := func(i int) string {
		return fmt.Sprintf("第%d段：天有阴阳，故春木夏火秋金冬水季土，得时而旺，此其常也。", i)
	}
	var first, second []string
	first = append(first, "# 滴天髓辑要")
	for i := 0; i < 30; i++ {
		if i%10 == 0 {
			first = append(first, fmt.Sprintf("## 1.%d 第%d论", i/10+1, i/10+1))
		}
		first = append(first, para(i))
	}
	second = append(second, "# 卷一", "# 第二部")
	for i := 0; i < 30; i++ {
		if i%10 == 0 {
			second = append(second, fmt.Sprintf("## 第%d论", i/10+1))
		}
		if i == 25 {
			second = append(second, "- 1 甲木\n- 2 乙木")
		}
		second = append(second, para(i))
	}
	md := strings.Join(first, "\n\n") + "\n\n" + strings.Join(second, "\n\n") + "\n"
	got, n := DropRepeatedPassages(md)
	// 第1论 and 第2论 of the copy held only repeats; 第3论 holds a new list,
	// so it and 第二部 above it stay; 卷一 was empty in the source.
	want := strings.Join(first, "\n\n") + "\n\n# 卷一\n\n# 第二部\n\n## 第3论\n\n- 1 甲木\n- 2 乙木\n"
	if got != want {
		t.Errorf("got:\n%q\nwant:\n%q", got, want)
	}
	if n != 30+2 {
		t.Errorf("dropped %d units, want the 30 paragraphs and 2 emptied headings", n)
	}
	// The last section of a document, emptied: its heading goes too.
	md = strings.Join(first, "\n\n") + "\n\n# 贞元论\n\n" + strings.Join(first[1:], "\n\n") + "\n"
	if got, _ := DropRepeatedPassages(md); got != strings.Join(first, "\n\n")+"\n" {
		t.Errorf("an emptied last section stays:\n%q", got[max(0, len(got)-120):])
	}
}

// TestDOJHandbookTextOnce converts the DOJ handbook, whose document.xml holds
// the whole handbook four times (the third and fourth copies without heading
// styles): each passage must come out once, under its heading, and the text
// must match pandoc's first copy.
func TestDOJHandbookTextOnce(t *testing.T) {
	racetest.SequentialOnly(t) // one document through the parsers, one goroutine
	path := filepath.Join(corpusDir(t), "docx", "doj-chapter13-trustee-handbook-en.docx")
	doc, err := Convert(context.Background(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(doc.Markdown, "Many administrative functions formerly performed by the court"); n != 1 {
		t.Errorf("a body paragraph occurs %d times, want 1", n)
	}
	if n := strings.Count(doc.Markdown, "\n## D. STANDING TRUSTEE PLEDGE OF EXCELLENCE\n"); n != 1 {
		t.Errorf("a section heading occurs %d times, want 1", n)
	}
	counts := map[string]int{}
	for _, p := range strings.Split(doc.Markdown, "\n\n") {
		if len(p) >= 200 {
			counts[p]++
		}
	}
	for p, n := range counts {
		if n > 1 {
			t.Errorf("paragraph occurs %d times: %.80q…", n, p)
		}
	}
	warned := false
	for _, w := range doc.Quality.Warnings {
		warned = warned || strings.Contains(w, "repeated text")
	}
	if !warned {
		t.Errorf("no warning about the repeated text: %q", doc.Quality.Warnings)
	}
	// pandoc keeps all four copies; the second starts with the cover again.
	ref := reListMarker.ReplaceAllString(reference(t, "pandoc", "-t", "plain", "--wrap=none", path), "")
	cover := "U.S. Department of Justice\n\nExecutive Office for United States Trustees\n\nHandbook for"
	first := strings.Index(ref, cover)
	second := strings.Index(ref[first+1:], cover)
	if first < 0 || second < 0 {
		t.Fatalf("pandoc's text does not show the cover twice (first %d, second %d)", first, second)
	}
	f1, p, r := textmetric.F1(stripMarkdown(doc.Markdown), ref[:first+1+second])
	t.Logf("F1 %.4f (precision %.4f, recall %.4f) against pandoc's first copy; %d headings, %d chars", f1, p, r, doc.Quality.Headings, doc.Quality.Chars)
	if f1 < 0.97 {
		t.Errorf("F1 %.4f < 0.97 against pandoc's first copy", f1)
	}
}
