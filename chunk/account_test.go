package chunk

import (
	"context"
	"strings"
	"testing"
)

// TestAccount counts where a document's characters went: kept chunks, a
// heading over no text of its own, a contents list set apart, and what no
// chunk holds. Characters are those a reader sees: Markdown's marks (#, -)
// are not counted.
func TestAccount(t *testing.T) {
	body := "# 书\n\n## 目录\n\n- 第一章 总论\n- 第二章 分论\n\n# 第一章 总论\n\n## 一节\n\n总论之文，凡十字也。\n\n# 第二章 分论\n\n分论之文，亦有十字。\n"
	data := render(t, body)
	s := newSplitter(t, Options{MaxTokens: 64})
	chunks, err := s.SplitFile(context.Background(), "d.md", data)
	if err != nil {
		t.Fatal(err)
	}
	a, err := Account(data, chunks)
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, l := range strings.Split(body, "\n") {
		total += countNonSpace(strings.TrimLeft(l, "#-"))
	}
	if a.Converted != total {
		t.Errorf("converted %d, want %d", a.Converted, total)
	}
	// "# 书" heads only the contents heading and "# 第一章 总论" only "## 一节":
	// their characters are in the heading paths, not in a chunk.
	if want := countNonSpace("书第一章 总论"); a.InHeadings != want {
		t.Errorf("in headings %d, want %d (# 书, # 第一章 总论)", a.InHeadings, want)
	}
	if len(a.Aside) != 1 || a.Aside[0].Part != "contents list (目录)" || a.Aside[0].Chars != countNonSpace("目录第一章 总论第二章 分论") {
		t.Errorf("aside %+v, want the contents list with its heading", a.Aside)
	}
	if a.Lost != 0 || a.Held()+a.SetAside() != a.Converted {
		t.Errorf("lost %d, held %d + aside %d != converted %d", a.Lost, a.Held(), a.SetAside(), a.Converted)
	}

	// Chunks that leave text out: it is lost, and where is said.
	kept := chunks[:0:0]
	for _, c := range chunks {
		if !strings.Contains(c.Text, "分论之文") {
			kept = append(kept, c)
		}
	}
	a, err = Account(data, kept)
	if err != nil {
		t.Fatal(err)
	}
	if a.Lost != countNonSpace("分论之文，亦有十字。") || len(a.LostParts) != 1 || a.LostParts[0].Where != "第二章 分论" || !strings.HasPrefix(a.LostParts[0].Sample, "分论之文") {
		t.Errorf("lost %d %+v, want the second chapter's text under 第二章 分论", a.Lost, a.LostParts)
	}
	if a.Share() >= 1 {
		t.Errorf("share %v with text lost", a.Share())
	}
}

// TestTOCHeadingWithoutList: a contents heading followed by text and no list
// ends at once; the text is not navigation (the book lost everything
// after its 目录 heading this way).
func TestTOCHeadingWithoutList(t *testing.T) {
	body := "# 书名\n\n# 目录\n\n卷一总论星性论格局论卷二行限论流年论，诸篇皆在此书之中，读者可按次序读之，不必跳跃。\n\n星者，天之精也。观星之法，先察其位，次审其光。\n"
	data := render(t, body)
	chunks, err := newSplitter(t, Options{}).SplitFile(context.Background(), "d.md", data)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range chunks {
		if c.Navigation {
			t.Errorf("navigation chunk %q: text after a contents heading with no list is text", c.Text)
		}
	}
	a, err := Account(data, chunks)
	if err != nil {
		t.Fatal(err)
	}
	if a.Share() < 0.9 {
		t.Errorf("chunks hold %.0f%%", 100*a.Share())
	}
}

func countNonSpace(s string) int {
	n := 0
	for _, r := range s {
		if r != ' ' && r != '\n' && r != '\t' && r != '\u3000' {
			n++
		}
	}
	return n
}
