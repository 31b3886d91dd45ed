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
	words := []string{"The", "the", "THE", "meeting", "créditors", "Éte", "甲", "木", "参天", "한국어", "かな", "42", "x7", "ß", "İstanbul", "  ", "，", "."}
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
		// Collapse's hash sets: the same members and containment.
		sa2, sb2 := newShingleSet(shingleHashes(a)), newShingleSet(shingleHashes(b))
		if len(sa2.keys) != len(sa) || len(sb2.keys) != len(sb) {
			t.Fatalf("%q, %q: sets of %d and %d shingles, strings %d and %d", a, b, len(sa2.keys), len(sb2.keys), len(sa), len(sb))
		}
		if got := sa2.containment(sb2); got != want {
			t.Fatalf("%q in %q: set containment %v, strings %v", a, b, got, want)
		}
	}
	// A shingle hashing to 0, and repeats of it.
	z := newShingleSet([]uint64{0, 5, 0, 5, 1 << 40})
	if len(z.keys) != 3 || !z.has(0) || !z.has(5) || z.has(6) {
		t.Fatalf("set of 0, 5, 0, 5, 2^40: keys %v, has 0/5/6 %v %v %v", z.keys, z.has(0), z.has(5), z.has(6))
	}
}
