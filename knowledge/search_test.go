package knowledge

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode"

	"github.com/vibelife/vibe/chunk"
)

func hit(id string) Hit { return Hit{Chunk: chunk.Chunk{ID: id}} }

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
	lexSide := func(ids ...string) LexicalSearch {
		return func(_ context.Context, _ Query, n int) ([]Hit, map[string]float64, error) {
			var out []Hit
			for i, id := range ids[:min(n, len(ids))] {
				h := hit(id)
				h.LexicalScore = float64(10 - i)
				out = append(out, h)
			}
			return out, map[string]float64{"x": 1}, nil
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
	got, err := Search(context.Background(), Query{Theme: "t", Text: "x", Vector: []float32{1}, K: 2}, side("a", "b", "gone", "c"), lexSide("b", "a", "c"), fill)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Chunk.ID != "b" || got[1].Chunk.ID != "c" {
		t.Fatalf("got %+v, want b then c (a duplicates b, gone was deleted)", got)
	}
	if asked != 4 {
		t.Errorf("fill was asked for %d hits, want all 4 candidates of both sides (proximity reads their text)", asked)
	}
}

// stringShingles is the set of three-unit shingles as strings, the way
// Collapse compared texts before it hashed them.
func stringShingles(text string) map[string]bool {
	var units []string
	var word []rune
	flush := func() {
		if len(word) > 0 {
			units = append(units, string(word))
			word = word[:0]
		}
	}
	for _, r := range text {
		switch {
		case unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul):
			flush()
			units = append(units, string(r))
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			word = append(word, unicode.ToLower(r))
		default:
			flush()
		}
	}
	flush()
	out := map[string]bool{}
	if len(units) < 3 {
		out[strings.Join(units, "\x00")] = true
		return out
	}
	for i := 0; i+3 <= len(units); i++ {
		out[units[i]+"\x00"+units[i+1]+"\x00"+units[i+2]] = true
	}
	return out
}

// TestHashedShinglesMatchStrings checks the hashed shingle sets against
// string ones: the same number of shingles and the same containment for
// pairs of texts sharing some (Latin with case and accents, CJK, Hangul,
// digits, texts of fewer than three units).
func TestHashedShinglesMatchStrings(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	words := []string{"The", "the", "THE", "meeting", "créditors", "Éte", "甲", "木", "参天", "한국어", "かな", "42", "x7", "ß", "İstanbul", "  ", "，", ".",
		"。", "、", "\xff", "\xe4\xbd", "\xed\xa0\x80", "𠀀"} // invalid UTF-8, 4-byte Han
	var texts []string
	for i := 0; i < 300; i++ {
		var b strings.Builder
		for n := r.IntN(40); n >= 0; n-- {
			b.WriteString(words[r.IntN(len(words))])
			if r.IntN(3) == 0 {
				b.WriteByte(' ')
			}
		}
		texts = append(texts, b.String())
	}
	texts = append(texts, "", "甲", "a b", "a b c")
	for i, a := range texts {
		ha, sa := shingles(a), stringShingles(a)
		if len(ha) != len(sa) {
			t.Fatalf("%q: %d hashed shingles, %d strings", a, len(ha), len(sa))
		}
		b := texts[(i*7+3)%len(texts)]
		hb, sb := shingles(b), stringShingles(b)
		small, big := sa, sb
		if len(sb) < len(sa) {
			small, big = sb, sa
		}
		n := 0
		for k := range small {
			if big[k] {
				n++
			}
		}
		want := 0.0
		if len(small) > 0 {
			want = float64(n) / float64(len(small))
		}
		if got := containment(ha, hb); got != want {
			t.Fatalf("%q in %q: containment %v, strings %v", a, b, got, want)
		}
		// Collapse's table: the same members and containment, with b
		// kept after other texts (so that it is not the first kept).
		var c collapser
		for k := 0; k < 3; k++ {
			c.keep(texts[(i*13+k)%len(texts)] + "\n" + strings.Repeat("无关", k+1))
		}
		c.look(b)
		if len(c.touched) != len(sb) {
			t.Fatalf("%q: %d distinct shingles in the table, strings %d", b, len(c.touched), len(sb))
		}
		kept := len(c.sizes)
		c.sizes = append(c.sizes, len(c.touched))
		for _, sl := range c.touched {
			sl.mask[kept/64] |= 1 << (kept % 64)
		}
		c.look(a)
		if len(c.touched) != len(sa) {
			t.Fatalf("%q: %d distinct shingles in the table, strings %d", a, len(c.touched), len(sa))
		}
		if got := c.containment(kept); got != want {
			t.Fatalf("%q in %q: table containment %v, strings %v", a, b, got, want)
		}
	}
}

// Collapse's table keeps the shingle hashing to 0 aside, counts repeats
// once, and holds the sets of up to CollapseDepth kept hits.
func TestCollapserTable(t *testing.T) {
	var c collapser
	for i := 0; i < CollapseDepth; i++ {
		c.keep(fmt.Sprintf("passage %d of the book, %d", i, i*i))
	}
	if len(c.sizes) != CollapseDepth {
		t.Fatalf("kept %d of %d distinct passages", len(c.sizes), CollapseDepth)
	}
	c.look(fmt.Sprintf("passage %d of the book, %d", CollapseDepth-1, (CollapseDepth-1)*(CollapseDepth-1)))
	if got := c.containment(CollapseDepth - 1); got != 1 {
		t.Fatalf("containment in the last kept: %v, want 1", got)
	}
	sl := c.slot(0)
	sl.mask[0] |= 1
	if c.slot(0) != &c.zero || c.slot(0).mask[0] != 1 {
		t.Fatal("the shingle 0 is not kept aside")
	}
}
