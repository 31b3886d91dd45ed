package convert

import (
	"strings"
	"testing"
)

// The class of page-break marker lines: each of these lines is dropped and
// counted; headings, list items and text that merely hold a number stay.
func TestStripPageMarkersClass(t *testing.T) {
	markers := []string{
		"----- Page 142 -----",
		"----------------------- Page 1-----------------------",
		"=== 第12页 ===",
		"第 12 页",
		"第十二页",
		"[Page 12]",
		"Page 12 of 300",
		"【第３页】",
		"p. 17",
	}
	keep := []string{
		"第十二回　林黛玉俏语谑娇音",
		"第12章 总则",
		"1. Scope",
		"- 12 apples were sold",
		"Page after page he read on.",
		"12",
		"[12]",
		"<142>",
		"CHAPTER 12",
	}
	for _, m := range markers {
		src := "The text goes\n\n" + m + "\n\non after the break.\n"
		got, asides := stripPageMarkers(src)
		if strings.Contains(got, strings.TrimSpace(m)) || len(asides) != 1 || asides[0].Chars != CountChars(m) {
			t.Errorf("%q: not dropped and counted: %q %+v", m, got, asides)
		}
		if !strings.Contains(got, "The text goes\non after the break.") {
			t.Errorf("%q: the paragraph it cut is not joined: %q", m, got)
		}
	}
	for _, k := range keep {
		src := "One line.\n\n" + k + "\n\nAnother line.\n"
		if got, asides := stripPageMarkers(src); got != src || asides != nil {
			t.Errorf("%q: changed: %q %+v", k, got, asides)
		}
	}
}

// Bare numbers in marker punctuation ("- 142 -", "<142>") are markers when
// the text holds several of them; a page that ends a sentence keeps its
// paragraph break; a line holding only a form feed goes and joins the
// paragraph it cut; a heading after a marker is not joined to the text.
func TestStripPageMarkersBareAndBreaks(t *testing.T) {
	src := "A sentence ends here.\n\n- 1 -\n\nA new paragraph starts\n\n- 2 -\n\nand goes on.\n\n<3>\n\nCHAPTER II\n\nText.\n- 4 -\n"
	got, asides := stripPageMarkers(src)
	want := "A sentence ends here.\n\n\nA new paragraph starts\nand goes on.\n\n\nCHAPTER II\n\nText.\n"
	if got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if len(asides) != 1 || asides[0].Chars != CountChars("- 1 -- 2 -<3>- 4 -") {
		t.Errorf("asides %+v", asides)
	}
	got, _ = stripPageMarkers("它一头说，\n\f\n一头走了。\n\f\n")
	if got != "它一头说，\n一头走了。\n" {
		t.Errorf("form feed: got %q", got)
	}
}
