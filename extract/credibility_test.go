package extract

import (
	"testing"

	"github.com/vibelife/vibe/chunk"
	"github.com/vibelife/vibe/knowledge"
)

func TestWeighByCredibility(t *testing.T) {
	chunks := []chunk.Chunk{
		{ID: "c1", Source: "knowledge/bazi/source/good.md", Title: "子平真诠", HeadingPath: []string{"论用神"}, Text: "八字用神，专求月令。以日干配月令地支。"},
		{ID: "c2", Source: "knowledge/bazi/source/ocr.md", Title: "子平真诠-ocr", Text: "八字用神，专求月令。财l官印食。"},
		{ID: "c3", Source: "knowledge/bazi/source/so-so.md", Text: "伤官见官，为祸百端。"},
		{ID: "c4", Source: "knowledge/bazi/source/hand.md", Text: "无根之木。"},
	}
	grades := map[string]string{"knowledge/bazi/source/good.md": "A", "knowledge/bazi/source/ocr.md": "D", "knowledge/bazi/source/so-so.md": "C"}
	grade := func(src string) (string, bool) { g, ok := grades[src]; return g, ok }
	ev := func(pairs ...string) []knowledge.Evidence {
		var out []knowledge.Evidence
		for i := 0; i+1 < len(pairs); i += 2 {
			out = append(out, knowledge.Evidence{Chunk: pairs[i], Quote: pairs[i+1]})
		}
		return out
	}
	var f knowledge.Files
	f.Rules.Rules.Tier1 = []knowledge.Rule{
		{ID: "only-ocr", Source: "子平真诠-ocr", Evidence: ev("c2", "财l官印食")},
		{ID: "ocr-found-in-good", Source: "子平真诠-ocr", Evidence: ev("c2", "八字用神，专求月令")},
	}
	f.Rules.Rules.Tier2 = []knowledge.Rule{
		{ID: "ocr-and-good", Evidence: ev("c2", "财l官印食", "c1", "以日干配月令地支")},
		{ID: "ocr-and-so-so", Evidence: ev("c2", "财l官印食", "c3", "伤官见官")},
		{ID: "was-marked", Evidence: ev("c1", "以日干配月令地支"), SourceGrade: "D"},
	}
	f.Rules.Rules.Tier3 = []knowledge.Rule{{ID: "ungraded", Evidence: ev("c2", "财l官印食", "c4", "无根之木")}}
	w := WeighByCredibility(&f, chunks, grade)
	if w.Marked != 2 || w.Moved != 1 {
		t.Errorf("%+v, want 2 marked, 1 moved", w)
	}
	want := map[string]string{"only-ocr": "D", "ocr-found-in-good": "", "ocr-and-good": "", "ocr-and-so-so": "C", "was-marked": "", "ungraded": ""}
	for _, r := range f.Rules.Rules.All() {
		if r.SourceGrade != want[r.ID] {
			t.Errorf("%s: source_grade %q, want %q", r.ID, r.SourceGrade, want[r.ID])
		}
		if r.ID == "ocr-found-in-good" && (r.Evidence[0].Chunk != "c1" || r.Source != "子平真诠 > 论用神") {
			t.Errorf("the rule found in the good edition was not moved there: %+v", r)
		}
	}
	if n := Verify(&f, chunks); n != 0 {
		t.Errorf("%d rules lost their quotes", n)
	}
}
