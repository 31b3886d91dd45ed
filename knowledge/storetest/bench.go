package storetest

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vibelife/vibe/chunk"
	"github.com/vibelife/vibe/internal/zipfcorpus"
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

// Kind names a synthetic corpus shape.
type Kind string

// Corpus kinds.
const (
	// Zipf is the realistic corpus: chunks of about 340 characters (the
	// mean of the bazi corpus at the default chunk budget) drawn from a
	// Zipf-distributed vocabulary of 6000 CJK and Latin words, each document
	// favouring its own topic words; vectors cluster around a centroid per
	// document, and queries are topic words of one document plus one word
	// of the whole distribution, their vectors near that document.
	Zipf Kind = "zipf"
	// Tiny is the worst case for the lexical side: 40 words per chunk from
	// a 32-word vocabulary, so every query token matches most chunks;
	// vectors and query vectors are uniformly random, the hardest input for
	// an approximate vector index.
	Tiny Kind = "tiny32"
)

// Kinds lists the corpus kinds the benchmarks run.
var Kinds = []Kind{Zipf, Tiny}

// Corpus is a synthetic benchmark corpus and its query generator.
type Corpus struct {
	Kind  Kind
	Theme string
	Dims  int
	Docs  []SyntheticDoc

	topics    [][]string  // per document: its topic words (Zipf)
	centroids [][]float32 // per document: its vector centroid (Zipf)
	vocab     []string
	units     [][]float32 // every chunk's unit vector, built on first ExactTopK
	unitIDs   []string
	zipf      *rand.Zipf
	r         *rand.Rand
}

var tinyVocab = []string{"甲", "乙", "丙", "丁", "戊", "己", "庚", "辛", "壬", "癸", "子", "丑", "寅", "卯", "辰", "巳", "午", "未", "申", "酉", "戌", "亥", "用神", "格局", "财官", "印绶", "食神", "伤官", "alpha", "beta", "gamma", "delta"}

const (
	zipfVocabSize = 6000
	zipfTopics    = 24  // topic words per document
	zipfTopicMix  = 0.2 // share of a chunk's words drawn from its topics
	zipfChunkLen  = 340 // characters per chunk, about
	zipfNoise     = 0.9 // norm of a chunk vector's offset from its centroid
)

// zipfVocab returns the fixed vocabulary (the same for every seed).
func zipfVocab() []string { return zipfcorpus.Vocab(zipfVocabSize) }

// NewCorpus returns n chunks of kind in documents of perDoc chunks, with
// vectors of dims, deterministic for a seed.
func NewCorpus(kind Kind, theme string, n, perDoc, dims int, seed uint64) *Corpus {
	r := rand.New(rand.NewPCG(seed, 7))
	c := &Corpus{Kind: kind, Theme: theme, Dims: dims, r: rand.New(rand.NewPCG(seed, 99))}
	if kind == Zipf {
		c.vocab = zipfVocab()
		c.zipf = rand.NewZipf(r, 1.07, 2, uint64(len(c.vocab)-1))
	}
	for d := 0; d*perDoc < n; d++ {
		id := fmt.Sprintf("knowledge/%s/converted/doc%05d.md", theme, d)
		sd := SyntheticDoc{Doc: knowledge.Document{ID: id, Theme: theme, Source: id, Title: id, ContentHash: fmt.Sprint(seed, d)}}
		var topic []string
		var centroid []float32
		if kind == Zipf {
			for i := 0; i < zipfTopics; i++ {
				topic = append(topic, c.vocab[50+r.IntN(2000)]) // mid-frequency words
			}
			centroid = unitVector(RandomVector(r, dims))
			c.topics = append(c.topics, topic)
			c.centroids = append(c.centroids, centroid)
		}
		off := 0
		for i := 0; i < perDoc && d*perDoc+i < n; i++ {
			var text string
			var vec []float32
			if kind == Zipf {
				text = c.zipfText(r, topic, zipfChunkLen)
				vec = near(r, centroid, zipfNoise)
			} else {
				text = tinyText(r)
				vec = RandomVector(r, dims)
			}
			runes := len([]rune(text))
			sd.Chunks = append(sd.Chunks, chunk.Chunk{ID: fmt.Sprintf("%s#%d", id, i), Doc: id, Source: id, HeadingPath: []string{"h"}, Start: off, End: off + runes, Ordinal: i, Text: text, Tokens: runes})
			sd.Vectors = append(sd.Vectors, vec)
			off += runes
		}
		c.Docs = append(c.Docs, sd)
	}
	return c
}

// Synthetic returns the documents of a worst-case (Tiny) corpus.
func Synthetic(theme string, n, perDoc, dims int, seed uint64) []SyntheticDoc {
	return NewCorpus(Tiny, theme, n, perDoc, dims, seed).Docs
}

// Chunks returns the number of chunks of the corpus.
func (c *Corpus) Chunks() int {
	n := 0
	for _, d := range c.Docs {
		n += len(d.Chunks)
	}
	return n
}

func tinyText(r *rand.Rand) string {
	var b strings.Builder
	for w := 0; w < 40; w++ {
		b.WriteString(tinyVocab[r.IntN(len(tinyVocab))])
		if w%5 == 4 {
			b.WriteString("，")
		}
	}
	return b.String()
}

// zipfText writes about size characters of words: CJK words run together,
// Latin words are spaced, a comma every few words and a full stop now and
// then.
func (c *Corpus) zipfText(r *rand.Rand, topic []string, size int) string {
	return zipfcorpus.Text(r, c.zipf, c.vocab, topic, zipfTopicMix, size)
}

// Query returns the next benchmark query: text and vector.
func (c *Corpus) Query() knowledge.Query {
	r := c.r
	if c.Kind != Zipf {
		text := tinyVocab[r.IntN(len(tinyVocab))] + tinyVocab[r.IntN(len(tinyVocab))] + " 用神"
		return knowledge.Query{Theme: c.Theme, Text: text, Vector: RandomVector(r, c.Dims), K: 10}
	}
	d := r.IntN(len(c.topics))
	topic := c.topics[d]
	words := []string{topic[r.IntN(len(topic))], topic[r.IntN(len(topic))], c.vocab[r.IntN(200)]}
	return knowledge.Query{Theme: c.Theme, Text: strings.Join(words, " "), Vector: near(r, c.centroids[d], zipfNoise), K: 10}
}

// ExactTopK returns the ids of the k chunks nearest to q by cosine, by
// brute force: the reference an approximate index is measured against.
func (c *Corpus) ExactTopK(q []float32, k int) []string {
	qu := unitVector(q)
	type scored struct {
		id string
		s  float64
	}
	if c.units == nil {
		for _, d := range c.Docs {
			for i, ch := range d.Chunks {
				c.units = append(c.units, unitVector(d.Vectors[i]))
				c.unitIDs = append(c.unitIDs, ch.ID)
			}
		}
	}
	all := make([]scored, len(c.units))
	for i, v := range c.units {
		var dot float64
		for j := range v {
			dot += float64(v[j]) * float64(qu[j])
		}
		all[i] = scored{c.unitIDs[i], dot}
	}
	sort.Slice(all, func(i, j int) bool { return all[i].s > all[j].s })
	out := make([]string, 0, k)
	for _, x := range all[:min(k, len(all))] {
		out = append(out, x.id)
	}
	return out
}

// RandomVector returns a random vector (not normalised).
func RandomVector(r *rand.Rand, dims int) []float32 {
	v := make([]float32, dims)
	for i := range v {
		v[i] = float32(r.NormFloat64())
	}
	return v
}

// near returns centroid plus a random offset of norm noise.
func near(r *rand.Rand, centroid []float32, noise float64) []float32 {
	off := unitVector(RandomVector(r, len(centroid)))
	v := make([]float32, len(centroid))
	for i := range v {
		v[i] = centroid[i] + float32(noise)*off[i]
	}
	return v
}

func unitVector(v []float32) []float32 {
	var sum float64
	for _, x := range v {
		sum += float64(x) * float64(x)
	}
	out := make([]float32, len(v))
	if sum == 0 {
		return out
	}
	inv := 1 / math.Sqrt(sum)
	for i, x := range v {
		out[i] = float32(float64(x) * inv)
	}
	return out
}

// Load writes docs into s, document by document.
func Load(tb testing.TB, s knowledge.Store, docs []SyntheticDoc, dims int) {
	tb.Helper()
	info := knowledge.EmbeddingInfo{Model: "synthetic", Dimensions: dims}
	for _, d := range docs {
		if err := s.ReplaceDocument(context.Background(), d.Doc, d.Chunks, d.Vectors, info); err != nil {
			tb.Fatal(err)
		}
	}
}

// BenchSearch runs b.N searches of mode over queries of c and reports p50
// and p99 latency in milliseconds.
func BenchSearch(b *testing.B, s knowledge.Store, c *Corpus, mode knowledge.SearchMode) {
	ctx := context.Background()
	queries := make([]knowledge.Query, b.N)
	for i := range queries {
		queries[i] = c.Query()
		queries[i].Mode = mode
	}
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		if _, err := s.Search(ctx, queries[i]); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	p50, p99 := Percentiles(lat)
	b.ReportMetric(ms(p50), "p50-ms")
	b.ReportMetric(ms(p99), "p99-ms")
}

// Percentiles returns the median and the 99th percentile of lat.
func Percentiles(lat []time.Duration) (p50, p99 time.Duration) {
	if len(lat) == 0 {
		return 0, 0
	}
	s := append([]time.Duration(nil), lat...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2], s[len(s)*99/100]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
