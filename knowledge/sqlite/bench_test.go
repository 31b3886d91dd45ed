package sqlite

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/vibelife/vibe/knowledge"
	"github.com/vibelife/vibe/knowledge/storetest"
)

// BenchmarkSearch reports search p50/p99 at storetest.BenchChunks() chunks
// (100k by default; VIBE_BENCH_CHUNKS to change).
func BenchmarkSearch(b *testing.B) {
	const dims = 256
	s, err := Open(context.Background(), filepath.Join(b.TempDir(), "bench.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	storetest.Load(b, s, storetest.Synthetic("t", storetest.BenchChunks(), 1000, dims, 1), dims)
	for _, mode := range []knowledge.SearchMode{knowledge.SearchVector, knowledge.SearchLexical, knowledge.SearchHybrid} {
		b.Run(string(mode), func(b *testing.B) { storetest.BenchSearch(b, s, "t", dims, mode) })
	}
}
