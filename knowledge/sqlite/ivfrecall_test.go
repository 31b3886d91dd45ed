package sqlite

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/vibelife/vibe/chunk"
	"github.com/vibelife/vibe/knowledge/embedding"
	"github.com/vibelife/vibe/knowledge/storetest"
)

// expVectors returns the vectors and queries of a kind of
// BenchmarkIVFProbeRecall, normalised.
func expVectors(kind string, n int) (vecs, queries [][]float32) {
	switch kind {
	case "local":
		emb := embedding.NewLocal(0)
		c := storetest.NewCorpus(storetest.Zipf, "t", n, 200, 8, 1)
		for _, d := range c.Docs {
			for _, ch := range d.Chunks {
				vecs = append(vecs, emb.Vector(ch.EmbedText()))
			}
		}
		for i := 0; i < 200; i++ {
			queries = append(queries, emb.Vector(c.Query().Text))
		}
	case "zipf":
		c := storetest.NewCorpus(storetest.Zipf, "t", n, 200, 256, 1)
		for _, d := range c.Docs {
			vecs = append(vecs, d.Vectors...)
		}
		for i := 0; i < 200; i++ {
			queries = append(queries, c.Query().Vector)
		}
	case "bazi":
		emb := embedding.NewLocal(0)
		sp, err := chunk.New(chunk.Options{})
		if err != nil {
			panic(err)
		}
		files, _ := filepath.Glob(baziDir() + "/*.md")
		for _, f := range files {
			data, _ := os.ReadFile(f)
			cs, err := sp.SplitFile(context.Background(), filepath.Base(f), append([]byte("---\nsource: "+filepath.Base(f)+"\n---\n"), data...))
			if err != nil {
				panic(err)
			}
			for _, c := range cs {
				vecs = append(vecs, emb.Vector(c.EmbedText()))
			}
		}
		data, _ := os.ReadFile("../../eval/questions_zh.jsonl")
		for _, line := range strings.Split(string(data), "\n") {
			var q struct{ Query string }
			if json.Unmarshal([]byte(line), &q) == nil && q.Query != "" {
				queries = append(queries, emb.Vector(q.Query))
			}
		}
	case "mix":
		vecs, queries = mixVectors(n, 200, 1536, 5)
	case "dense":
		r := rand.New(rand.NewPCG(3, 4))
		var cents [][]float32
		for i := 0; i < n/100; i++ {
			cents = append(cents, storetest.RandomVector(r, 1536))
			normalize(cents[i])
		}
		near := func(c []float32, noise float64) []float32 {
			o := storetest.RandomVector(r, 1536)
			normalize(o)
			v := make([]float32, 1536)
			for j := range v {
				v[j] = c[j] + float32(noise)*o[j]
			}
			return v
		}
		for i := 0; i < n; i++ {
			vecs = append(vecs, near(cents[r.IntN(len(cents))], 1.2))
		}
		for i := 0; i < 200; i++ {
			queries = append(queries, near(cents[r.IntN(len(cents))], 1.2))
		}
	}
	for _, v := range vecs {
		normalize(v)
	}
	for _, v := range queries {
		normalize(v)
	}
	return
}

// BenchmarkIVFProbeRecall measures, without a store, the share of the
// exact top 10 that sits in the lists an IVF reads when it reads a given
// share of sqrt(N) k-means lists (ranked by centroid), for the vectors of
// VIBE_IVF_KINDS (default local,bazi,zipf,mix; N VIBE_IVF_N, default
// 20000): the local embedder's over the zipf corpus and over the bazi
// books (/work/shared/corpus/bazi or VIBE_BAZI_DIR, eval's Chinese
// questions), storetest's zipf vectors and mixtures of topic directions.
// It is why sparse vectors get no index (docs/retrieval.md).
func BenchmarkIVFProbeRecall(b *testing.B) {
	kinds := "local,bazi,zipf,mix"
	if v := os.Getenv("VIBE_IVF_KINDS"); v != "" {
		kinds = v
	}
	n := 20000
	if v, err := strconv.Atoi(os.Getenv("VIBE_IVF_N")); err == nil {
		n = v
	}
	for _, kind := range strings.Split(kinds, ",") {
		vecs, queries := expVectors(kind, n)
		if len(vecs) == 0 {
			b.Fatalf("%s: no vectors", kind)
		}
		k := int(math.Ceil(math.Sqrt(float64(len(vecs)))))
		cents := trainCentroids(vecs, k, ivfIters, 1)
		assign := make([]int, len(vecs))
		for i, v := range vecs {
			assign[i], _ = nearest(cents, v)
		}
		fracs := []float64{0.05, 0.1, 0.2, 0.3, 0.5}
		recall := make([]float64, len(fracs))
		for _, q := range queries {
			idx := make([]int, len(vecs))
			sc := make([]float32, len(vecs))
			for i, v := range vecs {
				sc[i], idx[i] = dot(q, v), i
			}
			sort.Slice(idx, func(a, c int) bool { return sc[idx[a]] > sc[idx[c]] })
			order := make([]int, k)
			cs := make([]float32, k)
			for c := range cents {
				order[c], cs[c] = c, dot(q, cents[c])
			}
			sort.Slice(order, func(a, c int) bool { return cs[order[a]] > cs[order[c]] })
			rank := make([]int, k)
			for i, c := range order {
				rank[c] = i
			}
			for fi, f := range fracs {
				np := int(math.Ceil(f * float64(k)))
				for _, i := range idx[:10] {
					if rank[assign[i]] < np {
						recall[fi]++
					}
				}
			}
		}
		var line []string
		for fi, f := range fracs {
			line = append(line, fmt.Sprintf("%.0f%%: %.3f", 100*f, recall[fi]/float64(10*len(queries))))
		}
		b.Logf("%s: %d vectors, %d lists, %d queries; recall@10 by lists read: %s", kind, len(vecs), k, len(queries), strings.Join(line, ", "))
	}
}

func baziDir() string {
	if d := os.Getenv("VIBE_BAZI_DIR"); d != "" {
		return d
	}
	return "/work/shared/corpus/bazi"
}
