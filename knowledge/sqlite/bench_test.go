package sqlite

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/vibelife/vibe/knowledge"
	"github.com/vibelife/vibe/knowledge/storetest"
)

// BenchmarkSearch reports search p50/p99 at storetest.BenchChunks() chunks
// (100k by default; VIBE_BENCH_CHUNKS to change) for each synthetic corpus
// kind: zipf (realistic) and tiny32 (the lexical worst case).
func BenchmarkSearch(b *testing.B) {
	const dims = 256
	for _, kind := range storetest.Kinds {
		b.Run(string(kind), func(b *testing.B) {
			s, err := Open(context.Background(), filepath.Join(b.TempDir(), "bench.db"))
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			c := storetest.NewCorpus(kind, "t", storetest.BenchChunks(), 1000, dims, 1)
			start := time.Now()
			storetest.Load(b, s, c.Docs, dims)
			b.Logf("%s: loaded %d chunks in %v", kind, c.Chunks(), time.Since(start).Round(time.Millisecond))
			for _, mode := range []knowledge.SearchMode{knowledge.SearchVector, knowledge.SearchLexical, knowledge.SearchHybrid} {
				b.Run(string(mode), func(b *testing.B) { storetest.BenchSearch(b, s, c, mode) })
			}
		})
	}
}
