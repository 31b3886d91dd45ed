package knowledge

import (
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/vibelife/vibe/chunk"
	"github.com/vibelife/vibe/internal/racetest"
	"github.com/vibelife/vibe/knowledge/lexical"
)

func TestSentences(t *testing.T) {
	got := sentences("甲木参天，脱胎要火。春不容金！ Mr. Smith left. Did he?\nyes 3.5 kg;end")
	want := []string{"甲木参天，脱胎要火。", "春不容金！", "Mr.", "Smith left.", "Did he?", "yes 3.5 kg;", "end"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("sentences = %q, want %q", got, want)
	}
	if got := sentences("  \n "); len(got) != 0 {
		t.Errorf("blank text: %q", got)
	}
}

func TestProximity(t *testing.T) {
	idf := map[string]float64{"normandy": 2, "located": 1, "country": 1}
	q := []string{"country", "normandy", "located"}
	c := func(text string, heading ...string) chunk.Chunk {
		return chunk.Chunk{Title: "Book", HeadingPath: heading, Text: text}
	}
	tests := []struct {
		name string
		c    chunk.Chunk
		want float64
	}{
		{"one sentence holds all", c("The Normans. Normandy is a region located in the country of France."), 1},
		{"two adjacent sentences hold all", c("Normandy is old. It is located in a country."), 1},
		{"spread over three sentences: the best pair", c("Normandy is old. The sea is cold. It is located in a country."), 0.5},
		{"the heading counts in every sentence", c("It is a region. The sea is cold. It is located in a country.", "Normandy"), 1},
		{"none", c("Nothing here."), 0},
		{"empty text, heading only", c("", "Normandy"), 0.5},
	}
	for _, tt := range tests {
		if got := Proximity(tt.c, q, idf); math.Abs(got-tt.want) > 1e-12 {
			t.Errorf("%s: %g, want %g", tt.name, got, tt.want)
		}
	}
	if got := Proximity(c("Normandy"), q, map[string]float64{}); got != 0 {
		t.Errorf("query without weight: %g", got)
	}
	// Chinese: bigram tokens, folded like the index (煞 and 杀 are one).
	zh := lexical.QueryTokens("食神制杀")
	zidf := map[string]float64{}
	for _, t := range zh {
		zidf[t] = 1
	}
	if got := Proximity(c("凡格局，食神制煞，为贵。"), zh, zidf); got != 1 {
		t.Errorf("食神制杀 in 食神制煞: %g, want 1", got)
	}
}

func textHits(ids string, score func(i int) float64, vector bool) []Hit {
	var out []Hit
	for i, id := range strings.Fields(ids) {
		h := hit(id)
		if vector {
			h.VectorScore = score(i)
		} else {
			h.LexicalScore = score(i)
		}
		out = append(out, h)
	}
	return out
}

func TestRerank(t *testing.T) {
	idf := map[string]float64{"normandy": 2, "located": 1}
	q := []string{"normandy", "located"}
	chunks := map[string]chunk.Chunk{
		// a: the words scattered over a long passage; the better BM25.
		"a": {ID: "a", Text: "Normandy has cheese. Cows graze. Rain falls. Apples grow. It is located north."},
		// b: the words in one sentence, a little lower BM25.
		"b": {ID: "b", Text: "Normandy is located in France."},
		// c: lexically weak; v: found by the vector side alone.
		"c": {ID: "c", Text: "A located thing."},
		"v": {ID: "v", Text: "The duchy by the sea."},
	}
	confident := textHits("a b c", func(i int) float64 { return []float64{10, 9, 2}[i] }, false)
	vec := textHits("v c", func(i int) float64 { return 0.9 - float64(i)*0.1 }, true)
	got := Rerank(vec, confident, chunks, q, idf, 10)
	var ids []string
	for _, h := range got {
		ids = append(ids, h.Chunk.ID)
	}
	// An English query, so the Latin weights: b: 0.9*(1+1.6*1) = 2.34 beats
	// a: 1*(1+1.6*2/3) = 2.07; c: 0.2*(1+1.6/3) + 0.15*11/12; v: 0.15 alone.
	if s := strings.Join(ids, " "); s != "b a c v" {
		t.Fatalf("order %q, want %q", s, "b a c v")
	}
	b, a, c, v := got[0], got[1], got[2], got[3]
	if math.Abs(b.Score-0.9*(1+LatinProximityWeight)) > 1e-12 || b.Proximity != 1 || b.LexicalRank != 2 || b.VectorRank != 0 {
		t.Errorf("b = %+v", b)
	}
	if math.Abs(a.Proximity-2.0/3) > 1e-12 || a.LexicalRank != 1 {
		t.Errorf("a = %+v", a)
	}
	wantC := 0.2*(1+LatinProximityWeight/3) + LatinVectorWeight*float64(RRFK+1)/float64(RRFK+2)
	if math.Abs(c.Score-wantC) > 1e-12 || c.VectorRank != 2 || c.LexicalRank != 3 || c.VectorScore != 0.8 || c.LexicalScore != 2 {
		t.Errorf("c = %+v, want score %g", c, wantC)
	}
	if math.Abs(v.Score-LatinVectorWeight) > 1e-12 || v.Proximity != 0 || v.Chunk.Text == "" {
		t.Errorf("v = %+v", v)
	}
	// A flat lexical list gives the vector side its larger vote.
	flat := textHits("a b c", func(i int) float64 { return []float64{10, 9, 8}[i] }, false)
	for _, h := range Rerank(vec, flat, chunks, q, idf, 10) {
		if h.Chunk.ID == "v" && math.Abs(h.Score-FlatVectorWeight) > 1e-12 {
			t.Errorf("v behind a flat lexical list scored %g, want %g", h.Score, FlatVectorWeight)
		}
	}
	if got := Rerank(vec, confident, chunks, q, idf, 0); got == nil || len(got) != 0 {
		t.Errorf("k 0: %+v", got)
	}
	// k cuts the list, and a candidate whose chunk is gone is left out.
	delete(chunks, "b")
	got = Rerank(vec, confident, chunks, q, idf, 2)
	if len(got) != 2 || got[0].Chunk.ID != "a" || got[1].Chunk.ID != "c" {
		t.Errorf("k 2 without b: %+v", got)
	}
}

// The bound on proximity skips only candidates that cannot reach the top
// k: the list is the same as scoring every candidate.
func TestRerankPruningKeepsTheOrder(t *testing.T) {
	idf := map[string]float64{"x": 1, "y": 1}
	chunks := map[string]chunk.Chunk{}
	var lex []Hit
	words := []string{"x y.", "x. a. y.", "y q x.", "x.", "z."}
	for i := 0; i < 40; i++ {
		id := string(rune('A' + i))
		chunks[id] = chunk.Chunk{ID: id, Text: words[i%len(words)]}
		h := hit(id)
		h.LexicalScore = 40 - float64(i)*0.7
		lex = append(lex, h)
	}
	all := Rerank(nil, lex, chunks, []string{"x", "y"}, idf, len(lex))
	for _, k := range []int{1, 3, 10} {
		got := Rerank(nil, lex, chunks, []string{"x", "y"}, idf, k)
		for i := range got {
			if got[i].Chunk.ID != all[i].Chunk.ID || got[i].Score != all[i].Score {
				t.Fatalf("k %d: hit %d = %s %g, want %s %g", k, i, got[i].Chunk.ID, got[i].Score, all[i].Chunk.ID, all[i].Score)
			}
		}
	}
}

// TestProximityMatchesTokens checks the one-pass Proximity against the
// plain computation by sentences and lexical.Tokens (proximityBySets) on
// generated texts: CJK runs with traditional and variant characters,
// Latin words of both cases, digits, sentence ends of every kind, blank
// lines, a word longer than 64 runes.
func TestProximityMatchesTokens(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	pieces := []string{"甲木", "參天", "食神制煞", "伤官", "見官", "用神", "。", "！", "？", "；", "，", "\n", "\n\n", " ", ". ", ".", "!", "?", ";",
		"Normandy", "normandy", "LOCATED", "in", "3.5", "kg", "Mr", "x" + strings.Repeat("y", 70), "  ", "、", "“", "”", "abc123", "İstanbul", "\t", "\r\n", "A.", "a.b", "Zz9", "\u00a0", "\u0085",
		"\xff", "\xe4\xbd", "\xed\xa0\x80", "\xe0\x80\x80", "𠀀", "カタ", "한국"} // invalid UTF-8, 4-byte Han, kana, hangul
	for i := 0; i < 3000; i++ {
		var b strings.Builder
		for n := r.IntN(30); n >= 0; n-- {
			b.WriteString(pieces[r.IntN(len(pieces))])
		}
		text := b.String()
		var q []string
		for _, tok := range lexical.QueryTokens(pieces[r.IntN(len(pieces))] + " " + pieces[r.IntN(len(pieces))] + " 天 食神 located " + pieces[r.IntN(len(pieces))]) {
			q = append(q, tok)
		}
		idf := map[string]float64{}
		for _, tok := range q {
			idf[tok] = 0.5 + r.Float64()
		}
		c := chunk.Chunk{Title: "Book", HeadingPath: []string{pieces[r.IntN(len(pieces))]}, Text: text}
		total := 0.0
		for _, tok := range q {
			total += idf[tok]
		}
		if got, want := Proximity(c, q, idf), proximityBySets(c, q, idf, total); got != want && total > 0 {
			t.Fatalf("Proximity(%q, heading %q, %q) = %v, by sentences and tokens %v", text, c.HeadingPath, q, got, want)
		}
	}
}

// A query with a CJK token is ranked with ProximityWeight and VectorWeight,
// one without any with the Latin weights; a flat lexical list gives the
// vector side FlatVectorWeight in both.
func TestRerankWeightsByScript(t *testing.T) {
	chunks := map[string]chunk.Chunk{
		"zh": {ID: "zh", Text: "伤官见官，为祸百端。"},
		"en": {ID: "en", Text: "Normandy is located in France."},
		"v":  {ID: "v", Text: "其他。"},
	}
	vec := textHits("v", func(int) float64 { return 0.9 }, true)
	for _, c := range []struct {
		name         string
		q            []string
		chunk        string
		prox, vector float64
	}{
		{"chinese", []string{"伤官", "见官"}, "zh", ProximityWeight, VectorWeight},
		{"english", []string{"normandy", "located"}, "en", LatinProximityWeight, LatinVectorWeight},
		{"mixed", []string{"normandy", "伤官"}, "zh", ProximityWeight, VectorWeight},
	} {
		idf := map[string]float64{}
		for _, tok := range c.q {
			idf[tok] = 1
		}
		// A confident lexical list: the hit, then nine far below it whose
		// chunks are gone (left out of the result).
		lex := textHits(c.chunk+" f1 f2 f3 f4 f5 f6 f7 f8 f9", func(i int) float64 { return []float64{10, 1}[min(i, 1)] }, false)
		got := Rerank(vec, lex, chunks, c.q, idf, 10)
		if len(got) != 2 || got[0].Chunk.ID != c.chunk || got[1].Chunk.ID != "v" {
			t.Fatalf("%s: %+v", c.name, got)
		}
		// The lexical hit holds the share P of the query in one sentence.
		wantL := 1 + c.prox*got[0].Proximity
		if got[0].Proximity <= 0 || math.Abs(got[0].Score-wantL) > 1e-12 {
			t.Errorf("%s: lexical hit scored %g (proximity %g), want %g", c.name, got[0].Score, got[0].Proximity, wantL)
		}
		if math.Abs(got[1].Score-c.vector) > 1e-12 {
			t.Errorf("%s: vector-only hit scored %g, want %g", c.name, got[1].Score, c.vector)
		}
	}
}

// The lexical side's LexicalTerms bound a candidate's proximity by the
// query tokens it holds: on generated chunks, that bound is never below
// the chunk's proximity, and reranking with it gives the hits, scores and
// proximities of reranking without it, loading fewer chunks.
func TestRerankTokenBoundKeepsHits(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	pieces := []string{"甲木", "參天", "食神制煞", "伤官", "見官", "用神", "天干", "。", "！", "，", "\n", " ", ". ",
		"Normandy", "located", "in", "kg", "France", "x" + strings.Repeat("y", 70)}
	loaded := func(f func([]string) (map[string]chunk.Chunk, error)) (func([]string) (map[string]chunk.Chunk, error), *int) {
		n := 0
		return func(ids []string) (map[string]chunk.Chunk, error) { n += len(ids); return f(ids) }, &n
	}
	var pruned, all int
	for round := 0; round < 300; round++ {
		chunks := map[string]chunk.Chunk{}
		var ids []string
		for i := 0; i < 60; i++ {
			var b strings.Builder
			for n := r.IntN(40); n >= 0; n-- {
				b.WriteString(pieces[r.IntN(len(pieces))])
			}
			id := fmt.Sprintf("c%02d", i)
			chunks[id] = chunk.Chunk{ID: id, Title: "Book", HeadingPath: []string{pieces[r.IntN(len(pieces))]}, Text: b.String()}
			ids = append(ids, id)
		}
		q := lexical.QueryTokens(pieces[r.IntN(7)] + " " + pieces[r.IntN(7)] + " " + pieces[13+r.IntN(4)])
		idf := map[string]float64{}
		for _, tok := range q {
			idf[tok] = 0.2 + 3*r.Float64()
		}
		p := newProximity(q, idf)
		var lex, lexBare, vec []Hit
		r.Shuffle(len(ids), func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
		for i, id := range ids[:40] {
			c := chunks[id]
			var held uint64
			toks := map[string]bool{}
			for _, tok := range lexical.ChunkTokens(c) {
				toks[tok] = true
			}
			for k, tok := range q {
				if toks[tok] {
					held |= 1 << k
				}
			}
			if held == 0 {
				continue
			}
			if mp, px := p.maxProximity(held), p.of(c); mp < px {
				t.Fatalf("%q in %q: bound %v below proximity %v", q, c.Text, mp, px)
			}
			h := hit(id)
			h.LexicalScore = 30 - float64(i)*0.5 + r.Float64()*0.1
			lexBare = append(lexBare, h)
			h.LexicalTerms = held
			lex = append(lex, h)
		}
		for i, id := range ids[20:] {
			h := hit(id)
			h.VectorScore = 0.9 - float64(i)*0.01
			vec = append(vec, h)
		}
		for _, k := range []int{1, 5, 20} {
			get := func(ids []string) (map[string]chunk.Chunk, error) {
				out := map[string]chunk.Chunk{}
				for _, id := range ids {
					out[id] = chunks[id]
				}
				return out, nil
			}
			lb, nb := loaded(get)
			lt, nt := loaded(get)
			want, err := RerankLoading(vec, lexBare, lb, q, idf, k)
			if err != nil {
				t.Fatal(err)
			}
			got, err := RerankLoading(vec, lex, lt, q, idf, k)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("%q k %d:\n got %+v\nwant %+v", q, k, got, want)
			}
			pruned += *nt
			all += *nb
		}
	}
	if pruned >= all {
		t.Errorf("the token bound loaded %d chunks, as many as without it (%d)", pruned, all)
	}
}

// TestProximityOfReusedAllocatesNothing: one query's proximity scores its
// candidates one after another with the same buffers (the title and each
// heading scanned on their own, not joined), as the plain computation
// does, and allocates nothing a chunk.
func TestProximityOfReusedAllocatesNothing(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	pieces := []string{"甲木", "參天", "食神制煞", "伤官", "見官", "用神", "。", "！", "；", "，", "\n", " ", ". ", ".", "!", "Normandy", "LOCATED", "in", "3.5", "x" + strings.Repeat("y", 70), "、", "abc123", "\t", "A.", "\u0085", ""}
	gen := func(n int) string {
		var b strings.Builder
		for ; n >= 0; n-- {
			b.WriteString(pieces[r.IntN(len(pieces))])
		}
		return b.String()
	}
	for i := 0; i < 300; i++ {
		q := lexical.QueryTokens(pieces[r.IntN(len(pieces))] + " " + pieces[r.IntN(len(pieces))] + " 天 食神 located")
		idf := map[string]float64{}
		total := 0.0
		for _, tok := range q {
			idf[tok] = 0.5 + r.Float64()
			total += idf[tok]
		}
		p := newProximity(q, idf)
		for j := 0; j < 20; j++ {
			c := chunk.Chunk{Title: gen(r.IntN(2)), Text: gen(r.IntN(40))}
			for n := r.IntN(4); n > 0; n-- {
				c.HeadingPath = append(c.HeadingPath, gen(r.IntN(3)))
			}
			if got, want := p.of(c), proximityBySets(c, q, idf, total); got != want {
				t.Fatalf("proximity of %q (title %q, headings %q) for %q = %v, by sentences and tokens %v", c.Text, c.Title, c.HeadingPath, q, got, want)
			}
		}
	}
	q := lexical.QueryTokens("伤官 見官 located")
	p := newProximity(q, map[string]float64{"伤官": 1, "見官": 2, "located": 0.5})
	c := chunk.Chunk{Title: "Book", HeadingPath: []string{"伤官", "Normandy"}, Text: "伤官见官，为祸百端。Normandy is located in France. 見官！"}
	if a := testing.AllocsPerRun(100, func() { p.of(c) }); a != 0 {
		t.Fatalf("proximity of a chunk allocates %v times, want 0", a)
	}
}

// TestRerankLoadingAllocationsDoNotGrowWithCandidates: the candidates are
// made in one slab, not one allocation each.
func TestRerankLoadingAllocationsDoNotGrowWithCandidates(t *testing.T) {
	chunks := map[string]chunk.Chunk{}
	var vec, lex []Hit
	for i := 0; i < 200; i++ {
		id := fmt.Sprintf("c%03d", i)
		chunks[id] = chunk.Chunk{ID: id, Text: "伤官见官。"}
		h := hit(id)
		h.VectorScore = 0.9 - float64(i)*0.001
		vec = append(vec, h)
		h = hit(fmt.Sprintf("c%03d", 199-i))
		h.LexicalScore = 20 - float64(i)*0.01
		lex = append(lex, h)
	}
	got := map[string]chunk.Chunk{}
	load := func(ids []string) (map[string]chunk.Chunk, error) {
		clear(got)
		for _, id := range ids {
			got[id] = chunks[id]
		}
		return got, nil
	}
	q := lexical.QueryTokens("伤官")
	idf := map[string]float64{"伤": 1, "官": 1, "伤官": 1}
	allocs := func(n int) float64 {
		return testing.AllocsPerRun(20, func() {
			if _, err := RerankLoading(vec[:n], lex[:n], load, q, idf, 1); err != nil {
				t.Fatal(err)
			}
		})
	}
	if few, many := allocs(20), allocs(200); many-few > 20 {
		t.Fatalf("RerankLoading allocates %v times for 20 candidates a side, %v for 200: more than 20 more", few, many)
	}
}

// TestRerankLoadingSetUpIsPooled: a search's reranking, its candidates'
// slab, table and lists and its query's token matcher made in a pooled
// scratch, allocates the hits it returns and what its closures capture:
// a handful of allocations, where it made its maps and slab every call
// before (27 for 50 candidates a side).
func TestRerankLoadingSetUpIsPooled(t *testing.T) {
	chunks := map[string]chunk.Chunk{}
	var vec, lex []Hit
	for i := 0; i < 50; i++ {
		id := fmt.Sprintf("c%03d", i)
		chunks[id] = chunk.Chunk{ID: id, Text: "伤官见官。用神 located."}
		h := hit(id)
		h.VectorScore = 0.9 - float64(i)*0.001
		vec = append(vec, h)
		h = hit(fmt.Sprintf("c%03d", 49-i))
		h.LexicalScore = 20 - float64(i)*0.01
		lex = append(lex, h)
	}
	// The loader returns every chunk each time (a map's chunk is stored
	// out of line, so filling one would count an allocation a chunk).
	load := func(ids []string) (map[string]chunk.Chunk, error) { return chunks, nil }
	q := lexical.QueryTokens("伤官 located")
	idf := map[string]float64{"伤": 1, "官": 1, "伤官": 1, "located": 2}
	want, err := RerankLoading(vec, lex, load, q, idf, 20)
	if err != nil {
		t.Fatal(err)
	}
	n := testing.AllocsPerRun(50, func() {
		hits, err := RerankLoading(vec, lex, load, q, idf, 20)
		if err != nil || !slices.EqualFunc(hits, want, func(a, b Hit) bool { return a.Chunk.ID == b.Chunk.ID && a.Score == b.Score }) {
			t.Fatalf("a reranking in a reused scratch: %v (%v), want %v", hits, err, want)
		}
	})
	// Under -race sync.Pool drops a share of what is put back on purpose.
	if n > 6 && !racetest.Enabled {
		t.Errorf("RerankLoading allocates %v times for 50 candidates a side, want at most 6", n)
	}
}
