package pgvector

import (
	"context"
	"math"
	"sort"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	pgv "github.com/pgvector/pgvector-go"

	"github.com/vibelife/vibe/knowledge"
	"github.com/vibelife/vibe/knowledge/lexical"
	"github.com/vibelife/vibe/knowledge/storetest"
)

func openBench(b *testing.B) *Store {
	return openFreshURL(b, testURLB(b))
}

func testURLB(b *testing.B) string {
	url := getenvURL()
	if url == "" {
		b.Skip("VIBE_TEST_DATABASE_URL is not set: PostgreSQL benchmarks not run")
	}
	return url
}

// BenchmarkIngestVsCopy compares ReplaceDocument with a raw COPY of the same
// rows into plain tables and reports the speed ratio (target >= 0.5).
func BenchmarkIngestVsCopy(b *testing.B) {
	const dims = 256
	ctx := context.Background()
	s := openBench(b)
	defer s.Close()
	docs := storetest.Synthetic("t", 20000, 500, dims, 3)
	info := knowledge.EmbeddingInfo{Model: "synthetic", Dimensions: dims}
	if _, err := s.pool.Exec(ctx, `CREATE TABLE raw_chunk (LIKE kb_chunk INCLUDING DEFAULTS INCLUDING GENERATED); CREATE TABLE raw_embedding (chunk_id text, theme text, embedding vector(256))`); err != nil {
		b.Fatal(err)
	}
	var ingest, raw time.Duration
	for i := 0; i < b.N; i++ {
		start := time.Now()
		for _, d := range docs {
			if err := s.ReplaceDocument(ctx, d.Doc, d.Chunks, d.Vectors, info); err != nil {
				b.Fatal(err)
			}
		}
		ingest += time.Since(start)
		if _, err := s.pool.Exec(ctx, `TRUNCATE raw_chunk, raw_embedding`); err != nil {
			b.Fatal(err)
		}
		start = time.Now()
		for _, d := range docs {
			err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
				rows := make([][]any, len(d.Chunks))
				vrows := make([][]any, len(d.Chunks))
				for j, c := range d.Chunks {
					rows[j] = []any{c.ID, d.Doc.ID, "t", c.Ordinal, c.Source, c.Title, c.HeadingPath, c.Start, c.End, c.Text, c.Tokens, lexical.IndexText(c.Text)}
					vrows[j] = []any{c.ID, "t", pgv.NewVector(d.Vectors[j])}
				}
				if _, err := tx.CopyFrom(ctx, pgx.Identifier{"raw_chunk"}, []string{"id", "doc_id", "theme", "ordinal", "source", "title", "heading_path", "start_off", "end_off", "text", "tokens", "lex"}, pgx.CopyFromRows(rows)); err != nil {
					return err
				}
				_, err := tx.CopyFrom(ctx, pgx.Identifier{"raw_embedding"}, []string{"chunk_id", "theme", "embedding"}, pgx.CopyFromRows(vrows))
				return err
			})
			if err != nil {
				b.Fatal(err)
			}
		}
		raw += time.Since(start)
	}
	ratio := raw.Seconds() / ingest.Seconds()
	b.ReportMetric(ratio, "speed-vs-copy")
	b.Logf("ingest %v, raw COPY %v: ingest runs at %.2f of COPY speed (target >= 0.5)", ingest, raw, ratio)
}

// BenchmarkSearch reports p50/p99 at storetest.BenchChunks() chunks and the
// HNSW recall@10 against exact search.
func BenchmarkSearch(b *testing.B) {
	const dims = 256
	ctx := context.Background()
	s := openBench(b)
	defer s.Close()
	docs := storetest.Synthetic("t", storetest.BenchChunks(), 1000, dims, 1)
	storetest.Load(b, s, docs, dims)
	// Recall@10 of the HNSW index vs exact cosine over the same vectors.
	var ids []string
	var vecs [][]float32
	for _, d := range docs {
		for i, c := range d.Chunks {
			ids = append(ids, c.ID)
			vecs = append(vecs, unit(d.Vectors[i]))
		}
	}
	queries := storetest.Synthetic("q", 50, 50, dims, 77)[0].Vectors
	var found, total int
	for _, q := range queries {
		qu := unit(q)
		type sc struct {
			id string
			s  float64
		}
		all := make([]sc, len(ids))
		for i, v := range vecs {
			var dot float64
			for j := range v {
				dot += float64(v[j]) * float64(qu[j])
			}
			all[i] = sc{ids[i], dot}
		}
		sort.Slice(all, func(i, j int) bool { return all[i].s > all[j].s })
		want := map[string]bool{}
		for _, x := range all[:10] {
			want[x.id] = true
		}
		hits, err := s.Search(ctx, knowledge.Query{Theme: "t", Vector: q, K: 10, Mode: knowledge.SearchVector})
		if err != nil {
			b.Fatal(err)
		}
		for _, h := range hits {
			if want[h.Chunk.ID] {
				found++
			}
		}
		total += 10
	}
	recall := float64(found) / float64(total)
	b.Logf("HNSW recall@10 vs exact at %d chunks: %.3f (target >= 0.95)", len(ids), recall)
	for _, mode := range []knowledge.SearchMode{knowledge.SearchVector, knowledge.SearchLexical, knowledge.SearchHybrid} {
		b.Run(string(mode), func(b *testing.B) {
			storetest.BenchSearch(b, s, "t", dims, mode)
			b.ReportMetric(recall, "hnsw-recall@10") // after BenchSearch: ResetTimer clears metrics
		})
	}
}

func unit(v []float32) []float32 {
	var sum float64
	for _, x := range v {
		sum += float64(x) * float64(x)
	}
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = float32(float64(x) / math.Sqrt(sum))
	}
	return out
}
