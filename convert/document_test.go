package convert

import (
	"testing"
	"unicode/utf8"
)

func TestRenderParseRoundTrip(t *testing.T) {
	doc := Document{
		Source:    "knowledge/bazi/source/子平真诠.md",
		SHA256:    "abc",
		Format:    "md",
		Title:     "子平真诠",
		Converter: Version,
		Quality:   Quality{Chars: 5, Headings: 1, Encoding: "utf-8"},
		Markdown:  "# 论用神\n\n八字用神，专求月令。\n",
	}
	data, err := Render(doc)
	if err != nil {
		t.Fatal(err)
	}
	got, off, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	if got.Title != doc.Title || got.Quality.Chars != 5 || got.Markdown != doc.Markdown {
		t.Fatalf("round trip changed the document: %+v", got)
	}
	runes := []rune(string(data))
	if string(runes[off:]) != doc.Markdown {
		t.Fatalf("body offset %d does not point at the body: %q", off, string(runes[off:]))
	}
	if off != utf8.RuneCountInString(string(data))-utf8.RuneCountInString(doc.Markdown) {
		t.Fatal("offset is not a rune offset")
	}
}

func TestParseRejectsPlainMarkdown(t *testing.T) {
	if _, _, err := Parse([]byte("# hi\n")); err == nil {
		t.Fatal("want ErrNoFrontMatter")
	}
}
