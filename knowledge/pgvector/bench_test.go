package pgvector

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	pgv "github.com/pgvector/pgvector-go"

	"github.com/vibelife/vibe/knowledge"
	"github.com/vibelife/vibe/knowledge/lexindex"
	"github.com/vibelife/vibe/knowledge/storetest"
)

const benchDims = 256

func openBench(b *testing.B) *Store { return openFreshURL(b, testURLB(b)) }

func testURLB(b *testing.B) string {
	url := getenvURL()
	if url == "" {
		msg := "VIBE_TEST_DATABASE_URL is not set: PostgreSQL benchmarks NOT RUN (run scripts/postgres.sh and source .vibe/test.env)"
		if os.Getenv("CI") == "true" {
			b.Fatal(msg)
		}
		b.Skip("*** " + msg + " ***")
	}
	return url
}

// ingestChunks is the corpus size of BenchmarkIngestVsCopy:
// VIBE_BENCH_INGEST_CHUNKS or 20000.
func ingestChunks() int {
	if n, err := strconv.Atoi(os.Getenv("VIBE_BENCH_INGEST_CHUNKS")); err == nil && n > 0 {
		return n
	}
	return 20000
}

// bulkLoad writes docs the way knowledge.Ingest does: BeginBulk, one
// ReplaceDocument per document, finish. It returns the time spent writing
// and the time finish spent rebuilding the deferred indexes.
func bulkLoad(ctx context.Context, tb testing.TB, s *Store, docs []storetest.SyntheticDoc) (load, indexes time.Duration) {
	tb.Helper()
	info := knowledge.EmbeddingInfo{Model: "synthetic", Dimensions: benchDims}
	n := 0
	for _, d := range docs {
		n += len(d.Chunks)
	}
	start := time.Now()
	finish, err := s.BeginBulk(ctx, knowledge.BulkOptions{Chunks: n})
	if err != nil {
		tb.Fatal(err)
	}
	for _, d := range docs {
		if err := s.ReplaceDocument(ctx, d.Doc, d.Chunks, d.Vectors, info); err != nil {
			tb.Fatal(err)
		}
	}
	load = time.Since(start)
	start = time.Now()
	if err := finish(ctx); err != nil {
		tb.Fatal(err)
	}
	return load, time.Since(start)
}

// rawCopy is the baseline, PostgreSQL's fastest bulk path: the same rows
// into the same tables (a fresh schema migrated like the store's) by one
// COPY per table in one transaction, into bare tables: every index and
// constraint of the five tables (primary keys, foreign keys, b-tree and
// HNSW indexes) dropped before the COPY and made again after it, the
// index builds with the maintenance_work_mem the store uses. The time of
// making them again is counted in indexes.
func rawCopy(ctx context.Context, tb testing.TB, s *Store, docs []storetest.SyntheticDoc) (cp, indexes time.Duration) {
	tb.Helper()
	for _, q := range []string{
		fmt.Sprintf(`ALTER TABLE kb_embedding ALTER COLUMN embedding TYPE vector(%d)`, benchDims),
		fmt.Sprintf(`INSERT INTO kb_embedding_info(id, model, dimensions) VALUES (1, 'synthetic', %d)`, benchDims),
	} {
		if _, err := s.pool.Exec(ctx, q); err != nil {
			tb.Fatal(err)
		}
	}
	tables := []string{"kb_document", "kb_chunk", "kb_embedding", "kb_lex_posting", "kb_lex_doc"}
	// Constraints, foreign keys first (they are dropped first and made
	// last), then the indexes no constraint owns.
	type ddl struct{ drop, create string }
	var cons, idx []ddl
	rows, err := s.pool.Query(ctx, `SELECT c.conrelid::regclass::text, c.conname, pg_get_constraintdef(c.oid)
		FROM pg_constraint c WHERE c.conrelid = ANY($1::text[]::regclass[]) AND c.contype IN ('p', 'u', 'f')
		ORDER BY c.contype = 'f' DESC, c.conname`, tables)
	if err != nil {
		tb.Fatal(err)
	}
	for rows.Next() {
		var table, name, def string
		if err := rows.Scan(&table, &name, &def); err != nil {
			tb.Fatal(err)
		}
		cons = append(cons, ddl{fmt.Sprintf(`ALTER TABLE %s DROP CONSTRAINT %s`, table, name), fmt.Sprintf(`ALTER TABLE %s ADD CONSTRAINT %s %s`, table, name, def)})
	}
	if err := rows.Err(); err != nil {
		tb.Fatal(err)
	}
	rows, err = s.pool.Query(ctx, `SELECT i.indexrelid::regclass::text, pg_get_indexdef(i.indexrelid)
		FROM pg_index i WHERE i.indrelid = ANY($1::text[]::regclass[])
		AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = i.indexrelid) ORDER BY 1`, tables)
	if err != nil {
		tb.Fatal(err)
	}
	for rows.Next() {
		var name, def string
		if err := rows.Scan(&name, &def); err != nil {
			tb.Fatal(err)
		}
		idx = append(idx, ddl{`DROP INDEX ` + name, def})
	}
	if err := rows.Err(); err != nil {
		tb.Fatal(err)
	}
	if len(cons) < 4 || len(idx) < 3 {
		tb.Fatalf("the schema has %d constraints and %d indexes on %v: the migration changed, check rawCopy", len(cons), len(idx), tables)
	}
	for _, d := range append(append([]ddl(nil), cons...), idx...) {
		if _, err := s.pool.Exec(ctx, d.drop); err != nil {
			tb.Fatal(err)
		}
	}
	start := time.Now()
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		// The lexical index's rows, built in memory: every chunk's tokens,
		// each term's postings cut into full rows.
		var drows, crows, vrows, lrows, prows [][]any
		var all [][]string
		var tokens int64
		for _, d := range docs {
			drows = append(drows, []any{d.Doc.ID, d.Doc.Theme, d.Doc.Source, d.Doc.Title, d.Doc.ContentHash, len(d.Chunks), time.Now().UTC()})
			toks, total := chunkTokens(d.Chunks)
			first := int64(len(all)) + 1
			terms, _ := lexindex.Postings(first, toks)
			lrows = append(lrows, []any{d.Doc.ID, d.Doc.Theme, first, first + int64(len(toks)) - 1, len(toks), total, terms})
			all = append(all, toks...)
			tokens += total
			for j, c := range d.Chunks {
				crows = append(crows, []any{c.ID, d.Doc.ID, d.Doc.Theme, c.Ordinal, c.Source, c.Title, c.HeadingPath, c.Start, c.End, c.Text, c.Tokens, first + int64(j)})
				vrows = append(vrows, []any{c.ID, d.Doc.Theme, pgv.NewVector(d.Vectors[j])})
			}
		}
		terms, lists := lexindex.Postings(1, all)
		for i, term := range terms {
			_, rows := lexindex.Append(lexindex.Row{}, lists[i])
			for _, r := range rows {
				prows = append(prows, []any{term, docs[0].Doc.Theme, r.First, r.Last, r.N, r.MaxTF, r.MinLen, r.Data})
			}
		}
		if _, err := tx.CopyFrom(ctx, pgx.Identifier{"kb_document"}, []string{"id", "theme", "source", "title", "content_hash", "chunks", "updated_at"}, pgx.CopyFromRows(drows)); err != nil {
			return err
		}
		if _, err := tx.CopyFrom(ctx, pgx.Identifier{"kb_chunk"}, chunkCopyCols, pgx.CopyFromRows(crows)); err != nil {
			return err
		}
		if _, err := tx.CopyFrom(ctx, pgx.Identifier{"kb_lex_doc"}, []string{"doc_id", "theme", "lo", "hi", "chunks", "tokens", "terms"}, pgx.CopyFromRows(lrows)); err != nil {
			return err
		}
		if _, err := tx.CopyFrom(ctx, pgx.Identifier{"kb_lex_posting"}, []string{"term", "theme", "first", "last", "n", "maxtf", "minlen", "data"}, pgx.CopyFromRows(prows)); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `INSERT INTO kb_theme_stats(theme, chunks, tokens, next_num) VALUES ($1, $2, $3, $4)`, docs[0].Doc.Theme, len(crows), tokens, len(crows)+1); err != nil {
			return err
		}
		_, err := tx.CopyFrom(ctx, pgx.Identifier{"kb_embedding"}, []string{"chunk_id", "theme", "embedding"}, pgx.CopyFromRows(vrows))
		return err
	})
	if err != nil {
		tb.Fatal(err)
	}
	cp = time.Since(start)
	var vectors int64
	if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM kb_embedding`).Scan(&vectors); err != nil {
		tb.Fatal(err)
	}
	start = time.Now()
	// Primary keys first, then the b-tree indexes, the foreign keys (each
	// checked against the keys it references) and HNSW; the lexical index's
	// rows are built in memory before the COPY (counted in cp).
	var again []string
	for i := len(cons) - 1; i >= 0; i-- {
		if !strings.Contains(cons[i].create, "FOREIGN KEY") {
			again = append(again, cons[i].create)
		}
	}
	for _, d := range idx {
		again = append(again, d.create)
	}
	for _, d := range cons {
		if strings.Contains(d.create, "FOREIGN KEY") {
			again = append(again, d.create)
		}
	}
	again = append(again,
		`CREATE INDEX kb_embedding_hnsw ON kb_embedding USING hnsw `+hnswOn(benchDims)+` `+hnswParams)
	for _, q := range again {
		err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, fmt.Sprintf(`SET LOCAL maintenance_work_mem = '%dMB'`, buildMemoryMB(vectors, benchDims))); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, q)
			return err
		})
		if err != nil {
			tb.Fatal(err)
		}
	}
	return cp, time.Since(start)
}

// BenchmarkIngestVsCopy compares the ingest write path (BeginBulk, one
// transaction per document, finish) with PostgreSQL's fastest bulk path for
// the same rows (rawCopy: COPY into bare tables, then every index and
// constraint made again), each into a fresh schema, and reports the speed
// ratio (target >= 0.5). Corpus: the realistic synthetic
// kind, ingestChunks() chunks in documents of 500.
func BenchmarkIngestVsCopy(b *testing.B) {
	ctx := context.Background()
	url := testURLB(b)
	c := storetest.NewCorpus(storetest.Zipf, "t", ingestChunks(), 500, benchDims, 3)
	var ingest, raw time.Duration
	for i := 0; i < b.N; i++ {
		var load, idx, cp, ridx time.Duration
		sides := []func(){
			func() {
				s := openFreshURL(b, url)
				load, idx = bulkLoad(ctx, b, s, c.Docs)
				s.Close()
			},
			func() {
				r := openFreshURL(b, url)
				cp, ridx = rawCopy(ctx, b, r, c.Docs)
				r.Close()
			},
		}
		// The side that runs second may meet the first one's checkpoint
		// and autovacuum: odd iterations run the anchor first.
		if i%2 == 1 {
			sides[0], sides[1] = sides[1], sides[0]
		}
		for _, run := range sides {
			run()
		}
		ingest += load + idx
		raw += cp + ridx
		b.Logf("run %d (%s first), %d chunks: ingest %v (writes %v + index builds %v); raw COPY %v (COPY %v + index builds %v); without index builds on either side: %.2f",
			i+1, map[bool]string{false: "ingest", true: "raw COPY"}[i%2 == 1], c.Chunks(), (load + idx).Round(time.Millisecond), load.Round(time.Millisecond), idx.Round(time.Millisecond),
			(cp + ridx).Round(time.Millisecond), cp.Round(time.Millisecond), ridx.Round(time.Millisecond), cp.Seconds()/load.Seconds())
	}
	ratio := raw.Seconds() / ingest.Seconds()
	b.ReportMetric(ratio, "speed-vs-copy")
	b.Logf("ingest runs at %.2f of raw COPY speed, index builds counted on both sides (target >= 0.5)", ratio)
}

// BenchmarkIncrementalIngest measures what bulkShare trades against: the
// cost per chunk of a small update (one document of 500 chunks) written
// with the HNSW and lexical indexes live, on top of ingestChunks() chunks, next
// to the cost per chunk of rebuilding the HNSW index over the whole table.
func BenchmarkIncrementalIngest(b *testing.B) {
	ctx := context.Background()
	s := openBench(b)
	defer s.Close()
	c := storetest.NewCorpus(storetest.Zipf, "t", ingestChunks(), 500, benchDims, 3)
	_, idx := bulkLoad(ctx, b, s, c.Docs)
	extra := storetest.NewCorpus(storetest.Zipf, "u", 500, 500, benchDims, 4).Docs[0]
	info := knowledge.EmbeddingInfo{Model: "synthetic", Dimensions: benchDims}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		extra.Doc.ContentHash = fmt.Sprint(i)
		if err := s.ReplaceDocument(ctx, extra.Doc, extra.Chunks, extra.Vectors, info); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	perChunk := b.Elapsed().Seconds() / float64(b.N*len(extra.Chunks))
	rebuild := idx.Seconds() / float64(c.Chunks())
	b.ReportMetric(perChunk*1000, "live-ms/chunk")
	b.ReportMetric(rebuild*1000, "rebuild-ms/chunk")
	b.Logf("a chunk written with live indexes costs %.2f ms, rebuilding the indexes costs %.3f ms per chunk in the table: ratio %.1f (bulkShare is %d)",
		perChunk*1000, rebuild*1000, perChunk/rebuild, bulkShare)
}

// BenchmarkSearch reports p50/p99 of each mode at storetest.BenchChunks()
// chunks (100k by default) for each corpus kind, and the HNSW recall@10
// against exact search over 100 queries of the kind.
func BenchmarkSearch(b *testing.B) {
	ctx := context.Background()
	for _, kind := range storetest.Kinds {
		b.Run(string(kind), func(b *testing.B) {
			s := openBench(b)
			defer s.Close()
			c := storetest.NewCorpus(kind, "t", storetest.BenchChunks(), 1000, benchDims, 1)
			load, idx := bulkLoad(ctx, b, s, c.Docs)
			qs := make([]knowledge.Query, 100)
			for i := range qs {
				qs[i] = c.Query()
			}
			recall := hnswRecall(ctx, b, s, c, qs, 0)
			b.Logf("%s: %d chunks loaded in %v + index builds %v; HNSW recall@10 vs exact: %.3f (target >= 0.97)",
				kind, c.Chunks(), load.Round(time.Millisecond), idx.Round(time.Millisecond), recall)
			var sweep []string
			for _, ef := range []int{40, 100, 200, 300, 400} {
				sweep = append(sweep, fmt.Sprintf("%d: %.3f", ef, hnswRecall(ctx, b, s, c, qs, ef)))
			}
			b.Logf("%s: HNSW recall@10 by hnsw.ef_search: %s", kind, strings.Join(sweep, ", "))
			for _, mode := range []knowledge.SearchMode{knowledge.SearchVector, knowledge.SearchLexical, knowledge.SearchHybrid} {
				b.Run(string(mode), func(b *testing.B) {
					storetest.BenchSearch(b, s, c, mode)
					b.ReportMetric(recall, "hnsw-recall@10") // after BenchSearch: ResetTimer clears metrics
				})
			}
		})
	}
}

// hnswRecall returns the mean share of the exact top 10 that vector search
// returns over queries: through Store.Search when ef is 0, else by the
// bare query with hnsw.ef_search set to ef.
func hnswRecall(ctx context.Context, tb testing.TB, s *Store, c *storetest.Corpus, queries []knowledge.Query, ef int) float64 {
	tb.Helper()
	var found, total int
	for _, q := range queries {
		want := map[string]bool{}
		for _, id := range c.ExactTopK(q.Vector, 10) {
			want[id] = true
		}
		var got []string
		if ef == 0 {
			hits, err := s.Search(ctx, knowledge.Query{Theme: c.Theme, Vector: q.Vector, K: 10, Mode: knowledge.SearchVector})
			if err != nil {
				tb.Fatal(err)
			}
			for _, h := range hits {
				got = append(got, h.Chunk.ID)
			}
		} else {
			err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
				if _, err := tx.Exec(ctx, fmt.Sprintf(`SET LOCAL hnsw.ef_search = %d`, ef)); err != nil {
					return err
				}
				rows, err := tx.Query(ctx, fmt.Sprintf(`SELECT chunk_id FROM kb_embedding WHERE theme = $1 ORDER BY embedding::halfvec(%d) <=> $2::halfvec(%[1]d) LIMIT 10`, len(q.Vector)), c.Theme, pgv.NewVector(q.Vector))
				if err != nil {
					return err
				}
				got, err = pgx.CollectRows(rows, pgx.RowTo[string])
				return err
			})
			if err != nil {
				tb.Fatal(err)
			}
		}
		for _, id := range got {
			if want[id] {
				found++
			}
		}
		total += len(want)
	}
	return float64(found) / float64(total)
}
