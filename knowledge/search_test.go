package knowledge

import (
	"errors"
	"testing"

	"github.com/vibelife/vibe/chunk"
)

func hit(id string) Hit { return Hit{Chunk: chunk.Chunk{ID: id}} }

func TestFuse(t *testing.T) {
	vec := []Hit{hit("a"), hit("b"), hit("c")}
	lex := []Hit{hit("c"), hit("d"), hit("a")}
	got := Fuse(vec, lex, 3)
	ids := []string{got[0].Chunk.ID, got[1].Chunk.ID, got[2].Chunk.ID}
	// a: 1/61+1/63, c: 1/63+1/61 tie -> by id: a, c; then b (1/62) > d (1/62) tie -> b.
	want := []string{"a", "c", "b"}
	for i := range want {
		if ids[i] != want[i] {
			t.Fatalf("order = %v, want %v", ids, want)
		}
	}
	if got[0].VectorRank != 1 || got[0].LexicalRank != 3 {
		t.Errorf("a ranks = %d/%d, want 1/3", got[0].VectorRank, got[0].LexicalRank)
	}
	if got[2].LexicalRank != 0 || got[2].VectorRank != 2 {
		t.Errorf("b ranks = %d/%d, want 2/0", got[2].VectorRank, got[2].LexicalRank)
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
