package embedding

import (
	"hash/fnv"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode"

	"github.com/vibelife/vibe/internal/racetest"
	"github.com/vibelife/vibe/knowledge/lexical"
)

// vectorByStrings is Local.Vector as it was written before its scratch
// was pooled: each feature's string built, counted in a map by string,
// hashed with hash/fnv, into a fresh dims-long float64 sum. The two must
// give the same vector to the bit.
func vectorByStrings(dims int, text string) []float32 {
	type feat struct {
		w float64
		n int
	}
	tf := map[string]*feat{}
	var order []string // first-found order, the order Vector adds them in
	add := func(f string, w float64) {
		if x, ok := tf[f]; ok {
			x.n++
			return
		}
		tf[f] = &feat{w: w, n: 1}
		order = append(order, f)
	}
	var cjk []rune
	var words []string
	var word []rune
	flushWord := func() {
		if len(word) > 0 {
			words = append(words, string(word))
			word = word[:0]
		}
	}
	flushCJK := func() {
		for i, r := range cjk {
			add("u"+string(r), cjkWeight(r))
			if i > 0 {
				add("b"+string(cjk[i-1:i+1]), 1.5*math.Min(cjkWeight(cjk[i-1]), cjkWeight(r)))
			}
		}
		cjk = cjk[:0]
	}
	flushWords := func() {
		flushWord()
		for i, w := range words {
			wt := 1.0
			if lexical.IsStopWord(w) {
				wt = 0.2
			}
			add("w"+w, wt)
			if i > 0 && !lexical.IsStopWord(w) && !lexical.IsStopWord(words[i-1]) {
				add("p"+words[i-1]+" "+w, 1.5)
			}
			p := []rune(" " + w + " ")
			for j := 0; j+3 <= len(p); j++ {
				add("t"+string(p[j:j+3]), 0.3*wt)
			}
		}
		words = words[:0]
	}
	for _, r := range lexical.StripQuestionWords(text) {
		switch {
		case isCJK(r):
			flushWords()
			cjk = append(cjk, r)
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			flushCJK()
			word = append(word, unicode.ToLower(r))
		case unicode.IsSpace(r):
			flushWord()
		default:
			flushCJK()
			flushWords()
		}
	}
	flushCJK()
	flushWords()
	vec := make([]float64, dims)
	for _, f := range order {
		x := tf[f]
		h := fnv.New64a()
		h.Write([]byte(f))
		sum := h.Sum64()
		idx := int(sum % uint64(dims))
		sign := 1.0
		if sum>>63 == 1 {
			sign = -1
		}
		vec[idx] += sign * x.w * (1 + math.Log(float64(x.n)))
	}
	var norm float64
	for _, v := range vec {
		norm += v * v
	}
	out := make([]float32, dims)
	if norm == 0 {
		return out
	}
	norm = math.Sqrt(norm)
	for i, v := range vec {
		out[i] = float32(v / norm)
	}
	return out
}

func sameVector(t *testing.T, what string, got, want []float32) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d dims, want %d", what, len(got), len(want))
	}
	for i := range got {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			t.Fatalf("%s: dimension %d is %v, want %v", what, i, got[i], want[i])
		}
	}
}

// TestVectorIsTheStringFeatures: hashing the features without building
// their strings, and the pooled scratch, give the vectors of the features
// built as strings, on the corpus's chunks, its chapter titles as queries,
// and generated mixes of CJK, Latin words (stop words among them), digits,
// punctuation and question words, at two sizes.
func TestVectorIsTheStringFeatures(t *testing.T) {
	var texts []string
	for _, c := range corpusChunks(t, "子平真诠.md") {
		texts = append(texts, c.Text, strings.Join(c.HeadingPath, " "))
	}
	texts = append(texts, "", " ", "用神", "伤官见官，为祸百端。", "The quick brown fox jumps over the lazy dog.",
		"用神 yong shen 月令", "\x00\x01\xff", "什么是用神？", "ÉCOLE Straße naïve 123abc", strings.Repeat("a", 200))
	r := rand.New(rand.NewPCG(1, 2))
	parts := []string{"用", "神", "之", "也", "伤官", "the", "of", "Fire", "wood", "42", "x9", "，", "。", " ", "  ", "\n", "-", "什么", "如何", "É", "ß", "カ", "한"}
	for i := 0; i < 500; i++ {
		var b strings.Builder
		for j := r.IntN(40); j >= 0; j-- {
			b.WriteString(parts[r.IntN(len(parts))])
		}
		texts = append(texts, b.String())
	}
	for _, dims := range []int{DefaultLocalDimensions, 64} {
		e := NewLocal(dims)
		for _, text := range texts {
			sameVector(t, text, e.Vector(text), vectorByStrings(dims, text))
		}
	}
}

// TestVectorAllocatesItsVectorOnly: a query's vector allocates the vector
// it returns and nothing else (the 8 KB float64 sum, the feature table and
// strings were allocated every call before).
func TestVectorAllocatesItsVectorOnly(t *testing.T) {
	if racetest.Enabled {
		t.Skip("under -race sync.Pool drops a share of what is put back")
	}
	e := NewLocal(0)
	for _, q := range []string{"伤官见官 用神", "the quick brown fox"} {
		e.Vector(q)
		if n := testing.AllocsPerRun(100, func() { e.Vector(q) }); n > 1 {
			t.Errorf("%q: %.1f allocations a vector, want 1", q, n)
		}
	}
}
