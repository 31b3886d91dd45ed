package sqlite

import (
	"context"
	"database/sql"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/vibelife/vibe/chunk"
	"github.com/vibelife/vibe/internal/racetest"
	"github.com/vibelife/vibe/knowledge"
	"github.com/vibelife/vibe/knowledge/storetest"
)

// ivfCorpus is a theme of vectors written a document of perDoc chunks at
// a time, with the exact nearest neighbours of a query by brute force.
type ivfCorpus struct {
	theme string
	ids   []string
	units [][]float32
}

func (c *ivfCorpus) write(t testing.TB, s *Store, doc int, vecs [][]float32) {
	t.Helper()
	info := knowledge.EmbeddingInfo{Model: "m", Dimensions: len(vecs[0])}
	id := fmt.Sprintf("doc%04d", doc)
	var chunks []chunk.Chunk
	for i := range vecs {
		chunks = append(chunks, chunk.Chunk{ID: fmt.Sprintf("%s-%s-%d", c.theme, id, i), Doc: id, Source: id, Ordinal: i, Text: fmt.Sprintf("chunk %d of %s", i, id), Tokens: 4})
	}
	if err := s.ReplaceDocument(context.Background(), knowledge.Document{ID: id, Theme: c.theme, Source: id, Title: id, ContentHash: "h"}, chunks, vecs, info); err != nil {
		t.Fatal(err)
	}
	// Drop what the document held before, then add its vectors.
	prefix := fmt.Sprintf("%s-%s-", c.theme, id)
	var ids []string
	var units [][]float32
	for i, cid := range c.ids {
		if !strings.HasPrefix(cid, prefix) {
			ids = append(ids, cid)
			units = append(units, c.units[i])
		}
	}
	for i, v := range vecs {
		u := append([]float32(nil), v...)
		normalize(u)
		ids = append(ids, chunks[i].ID)
		units = append(units, u)
	}
	c.ids, c.units = ids, units
}

func (c *ivfCorpus) delete(t testing.TB, s *Store, doc int) {
	t.Helper()
	id := fmt.Sprintf("doc%04d", doc)
	if err := s.DeleteDocument(context.Background(), c.theme, id); err != nil {
		t.Fatal(err)
	}
	prefix := fmt.Sprintf("%s-%s-", c.theme, id)
	var ids []string
	var units [][]float32
	for i, cid := range c.ids {
		if !strings.HasPrefix(cid, prefix) {
			ids = append(ids, cid)
			units = append(units, c.units[i])
		}
	}
	c.ids, c.units = ids, units
}

func (c *ivfCorpus) exact(q []float32, k int) []string {
	qu := append([]float32(nil), q...)
	normalize(qu)
	type scored struct {
		id string
		s  float32
	}
	all := make([]scored, len(c.ids))
	for i, u := range c.units {
		var d float32
		for j, x := range u {
			d += x * qu[j]
		}
		all[i] = scored{c.ids[i], d}
	}
	sort.Slice(all, func(i, j int) bool { return all[i].s > all[j].s || all[i].s == all[j].s && all[i].id < all[j].id })
	out := make([]string, 0, k)
	for _, a := range all[:min(k, len(all))] {
		out = append(out, a.id)
	}
	return out
}

// recall is the share of the exact top 10 of the queries the store's
// vector search returns in its top 10.
func (c *ivfCorpus) recall(t testing.TB, s *Store, queries [][]float32) float64 {
	t.Helper()
	found, all := 0, 0
	for _, q := range queries {
		got, err := s.vectorSearch(context.Background(), c.theme, q, 10)
		if err != nil {
			t.Fatal(err)
		}
		in := map[string]bool{}
		for _, h := range got {
			in[h.Chunk.ID] = true
		}
		for _, id := range c.exact(q, 10) {
			all++
			if in[id] {
				found++
			}
		}
	}
	return float64(found) / float64(all)
}

func openIVF(t testing.TB, path string, min int) *Store {
	t.Helper()
	s, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	s.ivfMin = min
	return s
}

// checkLists checks that the theme's lists hold each of its vectors exactly
// once, with the int8 code of its normalised vector.
func checkLists(t *testing.T, s *Store, theme string) {
	t.Helper()
	ctx := context.Background()
	want := map[int64]bool{}
	rows, err := s.db.QueryContext(ctx, `SELECT rowid FROM embeddings WHERE theme = ?`, theme)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id int64
		rows.Scan(&id)
		want[id] = true
	}
	rows.Close()
	rows, err = s.db.QueryContext(ctx, `SELECT l.rowids, l.doc_id FROM vec_ivf_lists l WHERE l.theme = ?`, theme)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	seen := map[int64]bool{}
	for rows.Next() {
		var b []byte
		var doc string
		rows.Scan(&b, &doc)
		for i := 0; i+8 <= len(b); i += 8 {
			id := int64(binary.LittleEndian.Uint64(b[i:]))
			if seen[id] || !want[id] {
				t.Fatalf("rowid %d of %s listed twice or not in the theme", id, doc)
			}
			seen[id] = true
		}
	}
	if len(seen) != len(want) {
		t.Fatalf("the lists hold %d of the theme's %d vectors", len(seen), len(want))
	}
}

func indexVersion(t *testing.T, s *Store, theme string) int64 {
	t.Helper()
	var v int64
	err := s.db.QueryRow(`SELECT version FROM vec_ivf WHERE theme = ?`, theme).Scan(&v)
	if err == sql.ErrNoRows {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestIVFRecall measures recall@10 of vector search through the index
// against exact search on two dense corpora large enough to be indexed:
// storetest's zipf vectors (256 dims, clustered by document) and random
// clusters of 1536 dims (the size of a model embedding).
// The exact scan must not be loaded.
func TestIVFRecall(t *testing.T) {
	racetest.SequentialOnly(t)
	for _, tc := range []struct {
		name    string
		n       int
		vectors func(n int) (vecs, queries [][]float32)
	}{
		{"zipf-256", 20000, func(n int) (vecs, queries [][]float32) {
			c := storetest.NewCorpus(storetest.Zipf, "t", n, 200, 256, 1)
			for _, d := range c.Docs {
				vecs = append(vecs, d.Vectors...)
			}
			for i := 0; i < 100; i++ {
				queries = append(queries, c.Query().Vector)
			}
			return vecs, queries
		}},
		{"clustered-1536", 12000, func(n int) (vecs, queries [][]float32) { return clusteredVectors(n, 100, 1536, 5) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := openIVF(t, filepath.Join(t.TempDir(), "v.db"), ivfMinVectors)
			defer s.Close()
			vecs, queries := tc.vectors(tc.n)
			c := &ivfCorpus{theme: "t"}
			for d := 0; d*200 < len(vecs); d++ {
				c.write(t, s, d, vecs[d*200:min(len(vecs), (d+1)*200)])
			}
			if err := s.IndexVectors(context.Background(), "t"); err != nil {
				t.Fatal(err)
			}
			if indexVersion(t, s, "t") == 0 {
				t.Fatal("no index built")
			}
			r := c.recall(t, s, queries)
			t.Logf("%s: recall@10 %.3f over %d vectors", tc.name, r, len(vecs))
			if r < 0.97 {
				t.Errorf("recall@10 %.3f, want >= 0.97", r)
			}
			if s.cache["t"] != nil {
				t.Errorf("the exact scan's codes were loaded")
			}
		})
	}
}

// TestIVFIncremental builds an index, then adds, replaces and deletes
// documents: the lists keep holding each vector of the theme once, every
// chunk is found by its own vector, deleted ones never, and the index is
// kept on reopening and retrained only once the theme has grown ivfGrowth
// times.
func TestIVFIncremental(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "v.db")
	s := openIVF(t, path, 300)
	const dims = 64
	r := rand.New(rand.NewPCG(1, 2))
	vecs, _ := mixVectors(2450, 0, dims, 7)
	c := &ivfCorpus{theme: "t"}
	for d := 0; d < 4; d++ {
		c.write(t, s, d, vecs[d*100:(d+1)*100])
	}
	if err := s.IndexVectors(ctx, "t"); err != nil {
		t.Fatal(err)
	}
	v1 := indexVersion(t, s, "t")
	if v1 == 0 {
		t.Fatal("no index over 400 vectors with ivfMin 300")
	}
	checkLists(t, s, "t")
	// Add after training, replace one document by other vectors, delete
	// another.
	for d := 4; d < 10; d++ {
		c.write(t, s, d, vecs[d*100:(d+1)*100])
	}
	c.write(t, s, 1, vecs[1000:1050])
	c.delete(t, s, 2)
	checkLists(t, s, "t")
	if indexVersion(t, s, "t") != v1 {
		t.Fatal("a write retrained the index")
	}
	selfFound := func(s *Store) {
		t.Helper()
		for i := 0; i < 200; i++ {
			k := r.IntN(len(c.ids))
			got, err := s.vectorSearch(ctx, "t", c.units[k], 1)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 1 || got[0].Chunk.ID != c.ids[k] {
				t.Fatalf("chunk %s not found by its own vector: %v", c.ids[k], got)
			}
		}
		for i := 0; i < 100; i++ {
			got, err := s.vectorSearch(ctx, "t", vecs[200+i], 5) // doc0002's, deleted
			if err != nil {
				t.Fatal(err)
			}
			for _, h := range got {
				if strings.Contains(h.Chunk.ID, "doc0002") {
					t.Fatalf("deleted chunk %s found", h.Chunk.ID)
				}
			}
		}
	}
	selfFound(s)
	if s.cache["t"] != nil {
		t.Fatal("dense queries loaded the exact scan's codes")
	}
	s.Close()

	s = openIVF(t, path, 300)
	defer s.Close()
	if indexVersion(t, s, "t") != v1 {
		t.Fatal("index changed on reopening")
	}
	selfFound(s)
	// 850 vectors, trained at 400: not yet 4 times.
	if err := s.IndexVectors(ctx, "t"); err != nil {
		t.Fatal(err)
	}
	if indexVersion(t, s, "t") != v1 {
		t.Fatal("retrained before growing 4 times")
	}
	for d := 10; d < 24; d++ {
		c.write(t, s, d, vecs[1050+(d-10)*100:1050+(d-9)*100])
	}
	if err := s.IndexVectors(ctx, "t"); err != nil {
		t.Fatal(err)
	}
	if v := indexVersion(t, s, "t"); v == v1 {
		t.Fatal("not retrained after growing 4 times")
	}
	checkLists(t, s, "t")
	selfFound(s)
	// Emptying the theme drops its index; vectors of another size then
	// start without one.
	for d := 0; d < 24; d++ {
		c.delete(t, s, d)
	}
	if v := indexVersion(t, s, "t"); v != 0 {
		t.Fatal("index kept on an empty theme")
	}
	other, _ := mixVectors(10, 0, dims*2, 8)
	c.write(t, s, 0, other)
	got, err := s.vectorSearch(ctx, "t", other[3], 1)
	if err != nil || len(got) != 1 || got[0].Chunk.ID != c.ids[3] {
		t.Fatalf("search after the model changed = %v, %v", got, err)
	}
}

// TestIVFNotForSparseVectors: a theme of sparse vectors (most dimensions
// zero, as the local embedder's) gets no index, and a sparse query on an
// indexed theme is answered by the exact scan.
func TestIVFNotForSparseVectors(t *testing.T) {
	ctx := context.Background()
	s := openIVF(t, filepath.Join(t.TempDir(), "v.db"), 100)
	defer s.Close()
	r := rand.New(rand.NewPCG(3, 4))
	sparse := make([][]float32, 200)
	for i := range sparse {
		sparse[i] = make([]float32, 64)
		for k := 0; k < 10; k++ {
			sparse[i][r.IntN(64)] = float32(r.NormFloat64())
		}
	}
	c := &ivfCorpus{theme: "sparse"}
	c.write(t, s, 0, sparse[:100])
	c.write(t, s, 1, sparse[100:])
	if err := s.IndexVectors(ctx, "sparse"); err != nil {
		t.Fatal(err)
	}
	if indexVersion(t, s, "sparse") != 0 {
		t.Fatal("sparse vectors indexed")
	}
	dense, _ := mixVectors(200, 0, 64, 9)
	d := &ivfCorpus{theme: "dense"}
	d.write(t, s, 0, dense[:100])
	d.write(t, s, 1, dense[100:])
	if err := s.IndexVectors(ctx, "dense"); err != nil {
		t.Fatal(err)
	}
	if indexVersion(t, s, "dense") == 0 {
		t.Fatal("dense vectors not indexed")
	}
	q := make([]float32, 64)
	q[5], q[9] = 1, -0.5
	if r := d.recall(t, s, [][]float32{q}); r != 1 {
		t.Fatalf("sparse query on an indexed theme: recall %.2f, want the exact scan's 1", r)
	}
	if s.cache["dense"] == nil {
		t.Fatal("sparse query did not take the exact scan")
	}
}

// TestIVFMigratesOldStore opens a store written before the vector index
// (migration 9): its searches scan exactly until IndexVectors builds the
// index, and give the exact neighbours both ways.
func TestIVFMigratesOldStore(t *testing.T) {
	ctx := context.Background()
	vecs, queries := mixVectors(400, 20, 32, 11)
	stmts := []string{`INSERT INTO embedding_info(id, model, dimensions) VALUES (1, 'm', 32)`,
		`INSERT INTO documents(id, theme, source, title, content_hash, chunks, updated_at) VALUES ('d', 't', 's', 'd', 'h', 400, '2026-01-01T00:00:00Z')`}
	c := &ivfCorpus{theme: "t"}
	for i, v := range vecs {
		id := fmt.Sprintf("t-d-%d", i)
		stmts = append(stmts,
			fmt.Sprintf(`INSERT INTO chunks(id, doc_id, theme, ordinal, source, title, heading_path, start_off, end_off, text, tokens) VALUES ('%s', 'd', 't', %d, 's', 'd', '[]', 0, 1, 'x', 1)`, id, i),
			fmt.Sprintf(`INSERT INTO embeddings(chunk_id, theme, vector) VALUES ('%s', 't', X'%x')`, id, EncodeVector(v)))
		u := append([]float32(nil), v...)
		normalize(u)
		c.ids = append(c.ids, id)
		c.units = append(c.units, u)
	}
	path := dbAt(t, 9, stmts...)
	s := openIVF(t, path, 100)
	defer s.Close()
	if r := c.recall(t, s, queries); r != 1 {
		t.Fatalf("before indexing: recall %.3f, want 1", r)
	}
	if indexVersion(t, s, "t") != 0 {
		t.Fatal("index before IndexVectors")
	}
	if err := s.IndexVectors(ctx, "t"); err != nil {
		t.Fatal(err)
	}
	if indexVersion(t, s, "t") == 0 {
		t.Fatal("no index after IndexVectors")
	}
	checkLists(t, s, "t")
	delete(s.cache, "t")
	if r := c.recall(t, s, queries); r < 0.9 {
		t.Fatalf("after indexing: recall %.3f", r)
	}
	if s.cache["t"] != nil {
		t.Fatal("the indexed theme was scanned exactly")
	}
}

// TestIVFSearchDuringWrites searches an indexed theme while documents are
// replaced and deleted and the index retrained: every search succeeds and
// returns only chunks of the theme, each once, best first.
func TestIVFSearchDuringWrites(t *testing.T) {
	ctx := context.Background()
	s := openIVF(t, filepath.Join(t.TempDir(), "v.db"), 100)
	defer s.Close()
	vecs, queries := mixVectors(1200, 20, 32, 13)
	c := &ivfCorpus{theme: "t"}
	for d := 0; d < 4; d++ {
		c.write(t, s, d, vecs[d*50:(d+1)*50])
	}
	o := &ivfCorpus{theme: "other"}
	o.write(t, s, 0, vecs[1100:1200])
	if err := s.IndexVectors(ctx, "t"); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 100)
	stop := make(chan struct{})
	for g := 0; g < 2; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				hits, err := s.vectorSearch(ctx, "t", queries[(i+g)%len(queries)], 10)
				if err != nil {
					errs <- err
					return
				}
				seen := map[string]bool{}
				for k, h := range hits {
					if !strings.HasPrefix(h.Chunk.ID, "t-") || seen[h.Chunk.ID] || k > 0 && h.VectorScore > hits[k-1].VectorScore {
						errs <- fmt.Errorf("bad hits %v", hits)
						return
					}
					seen[h.Chunk.ID] = true
				}
			}
		}(g)
	}
	for d := 4; d < 20; d++ {
		c.write(t, s, d, vecs[d*50:(d+1)*50])
		if d%5 == 0 {
			c.delete(t, s, d-3)
		}
		if err := s.IndexVectors(ctx, "t"); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	checkLists(t, s, "t")
}

// mixVectors returns n vectors and nq queries of dims dimensions, each a
// random mixture of three of n/20 random topic directions plus noise: dense
// vectors whose neighbourhoods overlap across clusters.
func mixVectors(n, nq, dims int, seed uint64) (vecs, queries [][]float32) {
	r := rand.New(rand.NewPCG(seed, 11))
	topics := make([][]float32, max(8, n/20))
	for i := range topics {
		topics[i] = storetest.RandomVector(r, dims)
		normalize(topics[i])
	}
	z := rand.NewZipf(r, 1.1, 4, uint64(len(topics)-1))
	gen := func() []float32 {
		v := storetest.RandomVector(r, dims)
		normalize(v)
		for j := range v {
			v[j] *= 0.6
		}
		for k := 0; k < 3; k++ {
			t := topics[z.Uint64()]
			w := float32(0.3 + r.Float64())
			for j := range v {
				v[j] += w * t[j]
			}
		}
		normalize(v)
		return v
	}
	for i := 0; i < n; i++ {
		vecs = append(vecs, gen())
	}
	for i := 0; i < nq; i++ {
		queries = append(queries, gen())
	}
	return vecs, queries
}

// clusteredVectors returns n vectors and nq queries of dims dimensions,
// each a random one of n/100 random unit centres plus a random offset of
// norm 1.2.
func clusteredVectors(n, nq, dims int, seed uint64) (vecs, queries [][]float32) {
	r := rand.New(rand.NewPCG(seed, 4))
	cents := make([][]float32, max(1, n/100))
	for i := range cents {
		cents[i] = storetest.RandomVector(r, dims)
		normalize(cents[i])
	}
	near := func() []float32 {
		c := cents[r.IntN(len(cents))]
		o := storetest.RandomVector(r, dims)
		normalize(o)
		v := make([]float32, dims)
		for j := range v {
			v[j] = c[j] + 1.2*o[j]
		}
		return v
	}
	for i := 0; i < n; i++ {
		vecs = append(vecs, near())
	}
	for i := 0; i < nq; i++ {
		queries = append(queries, near())
	}
	return vecs, queries
}

// BenchmarkIVFSearch measures vector search over 1536-dim clustered
// vectors at the sizes of VIBE_IVF_SIZES (default 5000,20000): CPU a
// query of the exact scan (before the index is built) and through the
// index, recall@10 of the index against the exact scan over 100 queries,
// the heap held after each (the exact scan keeps the theme's codes), and
// the time to train and assign.
func BenchmarkIVFSearch(b *testing.B) {
	sizes := "5000,20000"
	if v := os.Getenv("VIBE_IVF_SIZES"); v != "" {
		sizes = v
	}
	ctx := context.Background()
	for _, f := range strings.Split(sizes, ",") {
		n, err := strconv.Atoi(f)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(f, func(b *testing.B) {
			s := openIVF(b, filepath.Join(b.TempDir(), "v.db"), ivfMinVectors)
			defer s.Close()
			vecs, queries := clusteredVectors(n, 100, 1536, 5)
			c := &ivfCorpus{theme: "t"}
			for d := 0; d*500 < len(vecs); d++ {
				c.write(b, s, d, vecs[d*500:min(len(vecs), (d+1)*500)])
			}
			perQuery := func() (cpuMS float64, got [][]string) {
				start := cpuTime()
				for _, q := range queries {
					hits, err := s.vectorSearch(ctx, "t", q, 10)
					if err != nil {
						b.Fatal(err)
					}
					var ids []string
					for _, h := range hits {
						ids = append(ids, h.Chunk.ID)
					}
					got = append(got, ids)
				}
				return 1000 * (cpuTime() - start).Seconds() / float64(len(queries)), got
			}
			heap := func() float64 {
				runtime.GC()
				var m runtime.MemStats
				runtime.ReadMemStats(&m)
				return float64(m.HeapAlloc) / (1 << 20)
			}
			s.vectorSearch(ctx, "t", queries[0], 10) // load the codes
			exactCPU, exact := perQuery()
			exactHeap := heap()
			s.mu.Lock()
			s.cache = map[string]*themeVectors{}
			s.mu.Unlock()
			start, wall := cpuTime(), time.Now()
			if err := s.IndexVectors(ctx, "t"); err != nil {
				b.Fatal(err)
			}
			buildCPU, buildWall := cpuTime()-start, time.Since(wall)
			s.vectorSearch(ctx, "t", queries[0], 10)
			ivfCPU, got := perQuery()
			ivfHeap := heap()
			found := 0
			for i := range got {
				in := map[string]bool{}
				for _, id := range got[i] {
					in[id] = true
				}
				for _, id := range exact[i] {
					if in[id] {
						found++
					}
				}
			}
			var nlist int
			s.db.QueryRow(`SELECT length(centroids) / 4 / dims FROM vec_ivf WHERE theme = 't'`).Scan(&nlist)
			b.Logf("%d vectors, 1536 dims: exact scan %.2f ms CPU a query, heap %.0f MB; index (%d lists, %d read) %.2f ms, heap %.0f MB, recall@10 %.3f; train + assign %.1f s CPU, %.1f s wall",
				n, exactCPU, exactHeap, nlist, ivfProbes(nlist), ivfCPU, ivfHeap, float64(found)/float64(10*len(got)), buildCPU.Seconds(), buildWall.Seconds())
			for i := 0; i < b.N; i++ {
				s.vectorSearch(ctx, "t", queries[i%len(queries)], 10)
			}
		})
	}
}

// cpuTime is the process's user + system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
