package main

import (
	"reflect"
	"testing"

	"github.com/vibelife/vibe/chunk"
	"github.com/vibelife/vibe/skills"
)

// The table of contents lists each document once, in the chunks' order,
// with its distinct headings in the order they first appear; the
// document's title and a table of contents (a navigation chunk) are no
// sections of it.
func TestContentsOfTheChunks(t *testing.T) {
	doc := "knowledge/x/converted/金匮.md"
	chunks := []chunk.Chunk{
		{Doc: doc, Source: "knowledge/x/source/金匮.txt", Title: "金匮要略", HeadingPath: []string{"目录"}, Navigation: true},
		{Doc: doc, Source: "knowledge/x/source/金匮.txt", Title: "金匮要略", HeadingPath: []string{"金匮要略", "奔豚气病脉证治第八"}},
		{Doc: doc, Source: "knowledge/x/source/金匮.txt", Title: "金匮要略", HeadingPath: []string{"金匮要略", "奔豚气病脉证治第八"}},
		{Doc: "knowledge/x/converted/b.md", Title: "B", HeadingPath: []string{"Part One", " Chapter 1 "}},
		{Doc: doc, Source: "knowledge/x/source/金匮.txt", Title: "金匮要略", HeadingPath: []string{"金匮要略", "疮痈肠痈浸淫病脉证并治第十八"}},
	}
	want := skills.Contents{Documents: []skills.ContentsDocument{
		{Source: "knowledge/x/source/金匮.txt", Title: "金匮要略", Headings: []string{"奔豚气病脉证治第八", "疮痈肠痈浸淫病脉证并治第十八"}},
		{Source: "knowledge/x/converted/b.md", Title: "B", Headings: []string{"Part One", "Chapter 1"}},
	}}
	if got := contentsOf(chunks); !reflect.DeepEqual(got, want) {
		t.Fatalf("contentsOf = %+v\nwant %+v", got, want)
	}
}
