package knowledge

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/vibelife/vibe/chunk"
)

func hit(id string) Hit { return Hit{Chunk: chunk.Chunk{ID: id}} }

func TestFuse(t *testing.T) {
	vec := []Hit{hit("a"), hit("b"), hit("c")}
	lex := []Hit{hit("c"), hit("d"), hit("a")}
	got := Fuse(vec, lex, 3)
	// c: 1/(k+1) lexical + 0.5/(k+3) vector beats a: 0.5/(k+1) + 1/(k+3)
	// (the lexical side weighs more); d, first found by lexical search at
	// rank 2, beats b, found by vector search at rank 2.
	want := []struct {
		id     string
		score  float64
		vr, lr int
	}{
		{"c", LexicalWeight/float64(RRFK+1) + VectorWeight/float64(RRFK+3), 3, 1},
		{"a", VectorWeight/float64(RRFK+1) + LexicalWeight/float64(RRFK+3), 1, 3},
		{"d", LexicalWeight / float64(RRFK+2), 0, 2},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d hits, want %d", len(got), len(want))
	}
	for i, w := range want {
		g := got[i]
		if g.Chunk.ID != w.id || g.VectorRank != w.vr || g.LexicalRank != w.lr || math.Abs(g.Score-w.score) > 1e-12 {
			t.Errorf("hit %d = %s score %.5f ranks %d/%d, want %s %.5f %d/%d", i, g.Chunk.ID, g.Score, g.VectorRank, g.LexicalRank, w.id, w.score, w.vr, w.lr)
		}
	}
	// The lexical side's first hit outranks the vector side's.
	if top := Fuse([]Hit{hit("a")}, []Hit{hit("b")}, 2); top[0].Chunk.ID != "b" {
		t.Errorf("vector-only %s outranks lexical-only b", top[0].Chunk.ID)
	}
	// A single side keeps its order.
	if one := Fuse(nil, []Hit{hit("y"), hit("x")}, 1); one[0].Chunk.ID != "y" {
		t.Errorf("rank order lost: %s", one[0].Chunk.ID)
	}
	same := Fuse([]Hit{hit("y"), hit("x")}, []Hit{hit("x"), hit("y")}, 2)
	if VectorWeight != LexicalWeight && same[0].Chunk.ID != "x" {
		t.Errorf("x (lexical rank 1) should lead, got %s", same[0].Chunk.ID)
	}
}

// lexHits returns lexical hits with the given ids and scores, best first.
func lexHits(ids string, scores ...float64) []Hit {
	var out []Hit
	for i, id := range strings.Fields(ids) {
		h := hit(id)
		h.LexicalScore = scores[i]
		out = append(out, h)
	}
	return out
}

func TestLexicalConfidence(t *testing.T) {
	flat := lexHits("a b c d e f g h i j k", 10, 9.9, 9.8, 9.7, 9.6, 9.5, 9.4, 9.3, 9.2, 8, 1)
	tests := []struct {
		name string
		lex  []Hit
		want float64
	}{
		{"none", nil, 0},
		{"unscored", []Hit{hit("a"), hit("b")}, 0},
		{"single", lexHits("a", 5), 0},
		{"flat, rank 10 counts, not 11", flat, 0.2},
		{"short list: its last", lexHits("a b c", 10, 6, 4), 0.6},
	}
	for _, tt := range tests {
		if got := LexicalConfidence(tt.lex); math.Abs(got-tt.want) > 1e-12 {
			t.Errorf("%s: %g, want %g", tt.name, got, tt.want)
		}
	}
}

func TestFuseConfidentLexicalKeepsItsOrder(t *testing.T) {
	// A clear lexical match (confidence 0.7): the lexical order stands, and
	// hits only the vector side found follow in its order.
	lex := lexHits("c d a", 10, 4, 3)
	vec := []Hit{hit("z"), hit("a"), hit("b"), hit("c")}
	got := Fuse(vec, lex, 10)
	var ids []string
	for _, h := range got {
		ids = append(ids, h.Chunk.ID)
	}
	if s := strings.Join(ids, " "); s != "c d a z b" {
		t.Fatalf("order %q, want %q", s, "c d a z b")
	}
	if got[2].VectorRank != 2 || got[2].LexicalRank != 3 || got[3].Score != 0 || got[3].VectorRank != 1 {
		t.Errorf("ranks or scores lost: %+v", got)
	}
	// The same lists with a flat lexical side are fused: a, second on the
	// vector side and third on the lexical one, passes d.
	flat := lexHits("c d a", 10, 9, 8)
	got = Fuse(vec, flat, 10)
	if got[0].Chunk.ID != "c" || got[1].Chunk.ID != "a" {
		t.Errorf("flat lexical list not fused: %s %s", got[0].Chunk.ID, got[1].Chunk.ID)
	}
}

func TestNormalizeQuery(t *testing.T) {
	tests := []struct {
		q       Query
		mode    SearchMode
		wantErr bool
	}{
		{Query{Theme: "t", Text: "x"}, SearchLexical, false},
		{Query{Theme: "t", Text: "x", Vector: []float32{1}}, SearchHybrid, false},
		{Query{Text: "x"}, "", true},
		{Query{Theme: "t", Mode: SearchVector}, "", true},
		{Query{Theme: "t", Mode: "fuzzy"}, "", true},
	}
	for i, tt := range tests {
		got, err := NormalizeQuery(tt.q)
		if tt.wantErr {
			if !errors.Is(err, ErrBadQuery) {
				t.Errorf("%d: err = %v, want ErrBadQuery", i, err)
			}
			continue
		}
		if err != nil || got.Mode != tt.mode || got.K != 10 {
			t.Errorf("%d: got %+v, %v", i, got, err)
		}
	}
}

func textHit(id, text string) Hit { return Hit{Chunk: chunk.Chunk{ID: id, Text: text}} }

func TestCollapse(t *testing.T) {
	hits := []Hit{
		textHit("a", "看其力势冲起是何支神，二看其力势拱起是何支神，三看其力势刑起是何支神。"),
		// The same passage in another copy: variant characters, an
		// inserted note, no punctuation.
		textHit("b", "〈一看其力势冲起是何支神二看其力势拱起是何支神注三看其力势刑起是何支神〉"),
		textHit("c", "甲木参天，脱胎要火，春不容金，秋不容土。"),
		textHit("d", "The meeting of creditors is held by the standing trustee."),
		textHit("e", "THE MEETING OF CREDITORS IS HELD BY THE STANDING TRUSTEE"),
		textHit("f", "The meeting of creditors is adjourned when the debtor is absent."),
		textHit("g", "甲木"),
	}
	got := Collapse(hits, 10)
	var ids []string
	for _, h := range got {
		ids = append(ids, h.Chunk.ID)
	}
	if want := "a c d f g"; strings.Join(ids, " ") != want {
		t.Errorf("Collapse kept %v, want %s", ids, want)
	}
	if got := Collapse(hits, 2); len(got) != 2 || got[1].Chunk.ID != "c" {
		t.Errorf("Collapse(k=2) = %v", got)
	}
	// Once CollapseDepth hits are kept nothing is compared any more: of
	// CollapseDepth+1 pairs of duplicates, the first CollapseDepth-1 pairs
	// keep one hit each, the last two pairs keep both.
	var many []Hit
	for i := 0; i < 2*(CollapseDepth+1); i++ {
		many = append(many, textHit(fmt.Sprint(i), fmt.Sprintf("passage number %d of the book", i/2)))
	}
	if got := Collapse(many, len(many)); len(got) != CollapseDepth+3 {
		t.Errorf("kept %d of %d, want %d", len(got), len(many), CollapseDepth+3)
	}
	if got := Collapse(nil, 3); got == nil || len(got) != 0 {
		t.Errorf("Collapse(nil) = %#v, want an empty non-nil list", got)
	}
}

func TestSearchFillsAndCollapses(t *testing.T) {
	texts := map[string]string{"a": "one two three four", "b": "one two three four", "c": "five six seven eight"}
	side := func(ids ...string) SideSearch {
		return func(_ context.Context, _ Query, n int) ([]Hit, error) {
			var out []Hit
			for _, id := range ids[:min(n, len(ids))] {
				out = append(out, hit(id))
			}
			return out, nil
		}
	}
	var asked int
	fill := func(_ context.Context, hs []Hit) ([]Hit, error) {
		asked = len(hs)
		out := hs[:0]
		for _, h := range hs {
			if txt, ok := texts[h.Chunk.ID]; ok {
				h.Chunk.Text = txt
				out = append(out, h)
			}
		}
		return out, nil
	}
	got, err := Search(context.Background(), Query{Theme: "t", Text: "x", Vector: []float32{1}, K: 2}, side("a", "b", "gone", "c"), side("b", "a", "c"), fill)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Chunk.ID != "b" || got[1].Chunk.ID != "c" {
		t.Fatalf("got %+v, want b then c (a duplicates b, gone was deleted)", got)
	}
	if asked < 4 {
		t.Errorf("fill was asked for %d hits, want the candidates beyond K that collapsing may need", asked)
	}
}
