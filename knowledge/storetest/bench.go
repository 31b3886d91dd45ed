package storetest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vibelife/vibe/chunk"
	"github.com/vibelife/vibe/knowledge"
)

// BenchChunks is the synthetic corpus size of the search benchmarks:
// VIBE_BENCH_CHUNKS or 100000.
func BenchChunks() int {
	if n, err := strconv.Atoi(os.Getenv("VIBE_BENCH_CHUNKS")); err == nil && n > 0 {
		return n
	}
	return 100000
}

// SyntheticDoc is one synthetic document of a benchmark corpus.
type SyntheticDoc struct {
	Doc     knowledge.Document
	Chunks  []chunk.Chunk
	Vectors [][]float32
}

var syllables = []string{"甲", "乙", "丙", "丁", "戊", "己", "庚", "辛", "壬", "癸", "子", "丑", "寅", "卯", "辰", "巳", "午", "未", "申", "酉", "戌", "亥", "用神", "格局", "财官", "印绶", "食神", "伤官", "alpha", "beta", "gamma", "delta"}

// Synthetic returns n chunks in documents of perDoc chunks, with random
// texts drawn from a small vocabulary and random unit vectors of dims.
func Synthetic(theme string, n, perDoc, dims int, seed uint64) []SyntheticDoc {
	r := rand.New(rand.NewPCG(seed, 7))
	var docs []SyntheticDoc
	for d := 0; d*perDoc < n; d++ {
		id := fmt.Sprintf("knowledge/%s/converted/doc%05d.md", theme, d)
		sd := SyntheticDoc{Doc: knowledge.Document{ID: id, Theme: theme, Source: id, Title: id, ContentHash: fmt.Sprint(seed, d)}}
		for i := 0; i < perDoc && d*perDoc+i < n; i++ {
			var b strings.Builder
			for w := 0; w < 40; w++ {
				b.WriteString(syllables[r.IntN(len(syllables))])
				if w%5 == 4 {
					b.WriteString("，")
				}
			}
			text := b.String()
			sd.Chunks = append(sd.Chunks, chunk.Chunk{ID: fmt.Sprintf("%s#%d", id, i), Doc: id, Source: id, HeadingPath: []string{"h"}, Start: i * 100, End: i*100 + len([]rune(text)), Ordinal: i, Text: text, Tokens: 60})
			sd.Vectors = append(sd.Vectors, RandomVector(r, dims))
		}
		docs = append(docs, sd)
	}
	return docs
}

// RandomVector returns a random vector (not normalised).
func RandomVector(r *rand.Rand, dims int) []float32 {
	v := make([]float32, dims)
	for i := range v {
		v[i] = float32(r.NormFloat64())
	}
	return v
}

// Load writes docs into s.
func Load(tb testing.TB, s knowledge.Store, docs []SyntheticDoc, dims int) {
	tb.Helper()
	info := knowledge.EmbeddingInfo{Model: "synthetic", Dimensions: dims}
	for _, d := range docs {
		if err := s.ReplaceDocument(context.Background(), d.Doc, d.Chunks, d.Vectors, info); err != nil {
			tb.Fatal(err)
		}
	}
}

// BenchSearch runs b.N searches of mode and reports p50 and p99 latency.
func BenchSearch(b *testing.B, s knowledge.Store, theme string, dims int, mode knowledge.SearchMode) {
	r := rand.New(rand.NewPCG(99, 1))
	ctx := context.Background()
	var lat []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		q := knowledge.Query{Theme: theme, Text: syllables[r.IntN(len(syllables))] + syllables[r.IntN(len(syllables))] + " 用神", Vector: RandomVector(r, dims), K: 10, Mode: mode}
		start := time.Now()
		if _, err := s.Search(ctx, q); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
}
