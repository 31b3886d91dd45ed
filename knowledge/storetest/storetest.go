package storetest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/vibelife/vibe/chunk"
	"github.com/vibelife/vibe/knowledge"
)

// Dims is the vector size the suite writes.
const Dims = 8

var info = knowledge.EmbeddingInfo{Model: "test-model", Dimensions: Dims}

// fixture builds a document of theme with n chunks; chunk i's text mentions
// word i and its vector points mostly along axis i%Dims.
func fixture(theme, name string, texts []string) (knowledge.Document, []chunk.Chunk, [][]float32) {
	id := "knowledge/" + theme + "/converted/" + name + ".md"
	doc := knowledge.Document{ID: id, Theme: theme, Source: "knowledge/" + theme + "/source/" + name + ".pdf", Title: name, ContentHash: "h-" + strings.Join(texts, "|")}
	var chunks []chunk.Chunk
	var vecs [][]float32
	off := 0
	for i, t := range texts {
		n := len([]rune(t))
		chunks = append(chunks, chunk.Chunk{
			ID: fmt.Sprintf("%s-%s-%d", theme, name, i), Doc: id, Source: doc.Source, Title: name,
			HeadingPath: []string{name, fmt.Sprintf("section %d", i)}, Start: off, End: off + n, Ordinal: i, Text: t, Tokens: n,
		})
		off += n
		v := make([]float32, Dims)
		v[(i+len(name))%Dims] = 1
		v[(i+len(name)+1)%Dims] = 0.1
		vecs = append(vecs, v)
	}
	return doc, chunks, vecs
}

// Run runs the contract suite; open returns a fresh, empty store for each
// subtest (closed by the suite).
func Run(t *testing.T, open func(t *testing.T) knowledge.Store) {
	ctx := context.Background()
	mustReplace := func(t *testing.T, s knowledge.Store, theme, name string, texts []string) ([]chunk.Chunk, [][]float32) {
		t.Helper()
		d, c, v := fixture(theme, name, texts)
		if err := s.ReplaceDocument(ctx, d, c, v, info); err != nil {
			t.Fatalf("ReplaceDocument(%s): %v", d.ID, err)
		}
		return c, v
	}
	withStore := func(name string, f func(t *testing.T, s knowledge.Store)) {
		t.Run(name, func(t *testing.T) {
			s := open(t)
			defer s.Close()
			f(t, s)
		})
	}

	withStore("EmptyStore", func(t *testing.T, s knowledge.Store) {
		if _, ok, err := s.EmbeddingInfo(ctx); err != nil || ok {
			t.Fatalf("EmbeddingInfo = ok %v, err %v; want no info", ok, err)
		}
		docs, err := s.Documents(ctx, "none")
		if err != nil || len(docs) != 0 {
			t.Fatalf("Documents = %v, %v", docs, err)
		}
		hits, err := s.Search(ctx, knowledge.Query{Theme: "none", Text: "anything", Vector: make([]float32, Dims)})
		if err != nil || len(hits) != 0 {
			t.Fatalf("Search on empty theme = %v, %v", hits, err)
		}
		if _, err := s.Chunk(ctx, "missing"); !errors.Is(err, knowledge.ErrNotFound) {
			t.Fatalf("Chunk(missing) err = %v, want ErrNotFound", err)
		}
		if err := s.DeleteDocument(ctx, "none", "missing"); err != nil {
			t.Fatalf("DeleteDocument(missing) = %v", err)
		}
	})

	// Variant and traditional spellings reach the same passages, both ways:
	// the index and the query are folded alike (lexical.Folder).
	withStore("VariantCharacters", func(t *testing.T, s knowledge.Store) {
		mustReplace(t, s, "bazi", "v", []string{"财官印绶 俱全", "食神制煞 格成", "傷官見官 為禍百端", "日主 强弱 无关"})
		for _, c := range []struct{ q, want string }{
			{"食神制杀", "bazi-v-1"},
			{"食神製殺", "bazi-v-1"},
			{"伤官见官", "bazi-v-2"},
			{"財官印綬", "bazi-v-0"},
		} {
			hits, err := s.Search(ctx, knowledge.Query{Theme: "bazi", Text: c.q, Mode: knowledge.SearchLexical, K: 4})
			if err != nil {
				t.Fatal(err)
			}
			if len(hits) == 0 || hits[0].Chunk.ID != c.want {
				t.Errorf("Search(%q) = %v, want %s first", c.q, ids(hits), c.want)
			}
		}
	})

	// A store that counts terms (knowledge.TermCounter) counts a theme's
	// own chunks and those of it holding each token, whatever the other
	// themes hold; unknown tokens and themes count 0.
	withStore("TermCounts", func(t *testing.T, s knowledge.Store) {
		tc, ok := s.(knowledge.TermCounter)
		if !ok {
			t.Skip("the store does not count terms")
		}
		mustReplace(t, s, "whale", "w", []string{"blubber and oil", "the try works boil blubber", "a quiet sea"})
		mustReplace(t, s, "tea", "t", []string{"oil of bergamot", "oil lamps", "green tea", "black tea"})
		toks := []string{"blubber", "oil", "tea", "nowhere"}
		for theme, want := range map[string]knowledge.TermCounts{
			"whale": {Chunks: 3, DF: []int64{2, 1, 0, 0}},
			"tea":   {Chunks: 4, DF: []int64{0, 2, 2, 0}},
			"none":  {Chunks: 0, DF: []int64{0, 0, 0, 0}},
		} {
			got, err := tc.TermCounts(ctx, theme, toks)
			if err != nil || got.Chunks != want.Chunks || fmt.Sprint(got.DF) != fmt.Sprint(want.DF) {
				t.Errorf("TermCounts(%s) = %+v, %v; want %+v", theme, got, err, want)
			}
		}
	})

	withStore("ReplaceListChunks", func(t *testing.T, s knowledge.Store) {
		want, _ := mustReplace(t, s, "bazi", "a", []string{"论用神 八字", "日主 强弱", "财官 印绶"})
		mustReplace(t, s, "bazi", "b", []string{"格局 成败"})
		got, ok, err := s.EmbeddingInfo(ctx)
		if err != nil || !ok || got != info {
			t.Fatalf("EmbeddingInfo = %+v %v %v", got, ok, err)
		}
		docs, err := s.Documents(ctx, "bazi")
		if err != nil || len(docs) != 2 || docs[0].ID >= docs[1].ID {
			t.Fatalf("Documents = %+v, %v", docs, err)
		}
		if docs[0].Chunks != 3 || docs[0].ContentHash == "" || docs[0].Source == "" || docs[0].UpdatedAt.IsZero() {
			t.Errorf("document a = %+v", docs[0])
		}
		c, err := s.Chunk(ctx, want[1].ID)
		if err != nil {
			t.Fatal(err)
		}
		if c.Text != want[1].Text || c.Start != want[1].Start || c.End != want[1].End || c.Doc != want[1].Doc ||
			c.Source != want[1].Source || strings.Join(c.HeadingPath, ">") != strings.Join(want[1].HeadingPath, ">") || c.Ordinal != 1 || c.Tokens != want[1].Tokens {
			t.Errorf("Chunk = %+v, want %+v", c, want[1])
		}
		all, err := s.Chunks(ctx, "bazi")
		if err != nil || len(all) != 4 {
			t.Fatalf("Chunks = %d, %v", len(all), err)
		}
		for i := 1; i < 3; i++ {
			if all[i].Ordinal != i || all[i].Doc != want[0].Doc {
				t.Errorf("Chunks[%d] = %s ordinal %d", i, all[i].Doc, all[i].Ordinal)
			}
		}
		// Replace with fewer chunks: old ones go.
		mustReplace(t, s, "bazi", "a", []string{"论用神 新版"})
		if _, err := s.Chunk(ctx, want[2].ID); !errors.Is(err, knowledge.ErrNotFound) {
			t.Errorf("stale chunk still there: %v", err)
		}
		hits, err := s.Search(ctx, knowledge.Query{Theme: "bazi", Text: "财官", Mode: knowledge.SearchLexical})
		if err != nil || len(hits) != 0 {
			t.Errorf("stale text still searchable: %v %v", hits, err)
		}
		// Delete.
		if err := s.DeleteDocument(ctx, "bazi", want[0].Doc); err != nil {
			t.Fatal(err)
		}
		all, _ = s.Chunks(ctx, "bazi")
		if len(all) != 1 || all[0].Text != "格局 成败" {
			t.Errorf("after delete: %+v", all)
		}
		if err := s.DeleteDocument(ctx, "bazi", "knowledge/bazi/converted/b.md"); err != nil {
			t.Fatal(err)
		}
		if _, ok, _ := s.EmbeddingInfo(ctx); ok {
			t.Errorf("embedding info kept after the last vector went")
		}
	})

	withStore("SearchModes", func(t *testing.T, s knowledge.Store) {
		texts := []string{"the cat sat on the mat", "论用神 以月令为主", "dogs chase cats", "财官印绶 分别用之", "weather report rain"}
		chunks, vecs := mustReplace(t, s, "t", "doc", texts)
		mustReplace(t, s, "other", "doc", texts) // theme isolation
		for _, tc := range []struct {
			mode knowledge.SearchMode
			text string
			vec  []float32
			want string
		}{
			{knowledge.SearchLexical, "论用神", nil, chunks[1].ID},
			{knowledge.SearchLexical, "Weather", nil, chunks[4].ID},
			{knowledge.SearchVector, "", vecs[3], chunks[3].ID},
			{knowledge.SearchHybrid, "印绶", vecs[3], chunks[3].ID},
		} {
			hits, err := s.Search(ctx, knowledge.Query{Theme: "t", Text: tc.text, Vector: tc.vec, Mode: tc.mode, K: 3})
			if err != nil {
				t.Fatalf("%s %q: %v", tc.mode, tc.text, err)
			}
			if len(hits) == 0 || hits[0].Chunk.ID != tc.want {
				t.Fatalf("%s %q: hits %v, want first %s", tc.mode, tc.text, ids(hits), tc.want)
			}
			if len(hits) > 3 {
				t.Errorf("%s: %d hits for K=3", tc.mode, len(hits))
			}
			h := hits[0]
			if h.Chunk.Text == "" || h.Chunk.Source == "" || len(h.Chunk.HeadingPath) == 0 || h.Score <= 0 {
				t.Errorf("%s: hit not filled: %+v", tc.mode, h)
			}
			switch tc.mode {
			case knowledge.SearchVector:
				if h.VectorRank != 1 || h.LexicalRank != 0 || h.VectorScore < 0.99 {
					t.Errorf("vector hit ranks/scores: %+v", h)
				}
			case knowledge.SearchLexical:
				if h.LexicalRank != 1 || h.VectorRank != 0 || h.LexicalScore <= 0 {
					t.Errorf("lexical hit ranks/scores: %+v", h)
				}
			case knowledge.SearchHybrid:
				if h.LexicalRank != 1 || h.VectorRank != 1 {
					t.Errorf("hybrid hit ranks: %+v", h)
				}
			}
			for _, h := range hits {
				if !strings.HasPrefix(h.Chunk.ID, "t-") {
					t.Errorf("hit from another theme: %s", h.Chunk.ID)
				}
			}
		}
		if _, err := s.Search(ctx, knowledge.Query{Theme: "t", Vector: make([]float32, Dims+1), Mode: knowledge.SearchVector}); !errors.Is(err, knowledge.ErrDimensionMismatch) {
			t.Errorf("query of wrong dims: err = %v, want ErrDimensionMismatch", err)
		}
		if _, err := s.Search(ctx, knowledge.Query{Text: "x"}); err == nil {
			t.Errorf("query without theme accepted")
		}
	})

	withStore("HugeQuery", func(t *testing.T, s knowledge.Store) {
		chunks, _ := mustReplace(t, s, "t", "doc", []string{"alpha beta", "论用神"})
		q := strings.Repeat("论用神 gamma \"quote\" OR * NEAR(", 100*1024/30)
		hits, err := s.Search(ctx, knowledge.Query{Theme: "t", Text: q, Vector: make([]float32, Dims)})
		if err != nil {
			t.Fatalf("100 KB query: %v", err)
		}
		if len(hits) == 0 || hits[0].Chunk.ID != chunks[1].ID {
			t.Fatalf("100 KB query hits = %v", ids(hits))
		}
	})

	withStore("DimensionMismatch", func(t *testing.T, s knowledge.Store) {
		mustReplace(t, s, "t", "a", []string{"one"})
		d, c, _ := fixture("t", "b", []string{"two"})
		other := knowledge.EmbeddingInfo{Model: "other", Dimensions: 4}
		err := s.ReplaceDocument(ctx, d, c, [][]float32{{1, 2, 3, 4}}, other)
		if !errors.Is(err, knowledge.ErrDimensionMismatch) {
			t.Fatalf("err = %v, want ErrDimensionMismatch", err)
		}
		if !strings.Contains(err.Error(), "test-model") || !strings.Contains(err.Error(), "other") {
			t.Errorf("error does not name both models: %v", err)
		}
		if docs, _ := s.Documents(ctx, "t"); len(docs) != 1 {
			t.Errorf("refused document was written: %+v", docs)
		}
		// Same dims, other model: refused too.
		err = s.ReplaceDocument(ctx, d, c, [][]float32{make([]float32, Dims)}, knowledge.EmbeddingInfo{Model: "other", Dimensions: Dims})
		if !errors.Is(err, knowledge.ErrDimensionMismatch) {
			t.Errorf("other model err = %v", err)
		}
	})

	withStore("AtomicReplace", func(t *testing.T, s knowledge.Store) {
		old, _ := mustReplace(t, s, "t", "a", []string{"first version", "kept text"})
		// A vector of the wrong length in the middle.
		d, c, v := fixture("t", "a", []string{"second version", "bad", "third"})
		v[1] = v[1][:3]
		if err := s.ReplaceDocument(ctx, d, c, v, info); err == nil {
			t.Fatal("bad vector accepted")
		}
		// Duplicate chunk ids make the insert fail mid-way.
		d, c, v = fixture("t", "a", []string{"second version", "dup"})
		c[1].ID = c[0].ID
		if err := s.ReplaceDocument(ctx, d, c, v, info); err == nil {
			t.Fatal("duplicate chunk ids accepted")
		}
		// A cancelled context.
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		d, c, v = fixture("t", "a", []string{"second version"})
		if err := s.ReplaceDocument(cctx, d, c, v, info); err == nil {
			t.Fatal("cancelled replace succeeded")
		}
		all, err := s.Chunks(ctx, "t")
		if err != nil || len(all) != 2 || all[0].ID != old[0].ID || all[0].Text != "first version" {
			t.Fatalf("previous version not intact: %+v %v", all, err)
		}
		hits, _ := s.Search(ctx, knowledge.Query{Theme: "t", Text: "second", Mode: knowledge.SearchLexical})
		if len(hits) != 0 {
			t.Errorf("failed write is searchable: %v", ids(hits))
		}
		// Idempotent retry: the same replace twice gives one copy.
		mustReplace(t, s, "t", "a", []string{"second version"})
		mustReplace(t, s, "t", "a", []string{"second version"})
		all, _ = s.Chunks(ctx, "t")
		docs, _ := s.Documents(ctx, "t")
		if len(all) != 1 || len(docs) != 1 {
			t.Errorf("retry duplicated: %d chunks, %d docs", len(all), len(docs))
		}
		hits, _ = s.Search(ctx, knowledge.Query{Theme: "t", Text: "second", Vector: make([]float32, Dims), K: 10})
		if len(hits) != 1 {
			t.Errorf("retry duplicated hits: %v", ids(hits))
		}
	})

	withStore("BinaryJunk", func(t *testing.T, s knowledge.Store) {
		mustReplace(t, s, "t", "a", []string{"good text"})
		for _, junk := range []string{"text\x00with a NUL", "bad \xff\xfe bytes"} {
			d, c, v := fixture("t", "a", []string{"fine", junk})
			err := s.ReplaceDocument(ctx, d, c, v, info)
			if err == nil || !strings.Contains(err.Error(), c[1].ID) {
				t.Fatalf("junk %q: err = %v, want a refusal naming chunk %s", junk, err, c[1].ID)
			}
		}
		all, _ := s.Chunks(ctx, "t")
		if len(all) != 1 || all[0].Text != "good text" {
			t.Errorf("previous version not intact: %+v", all)
		}
	})

	withStore("EmptyDocument", func(t *testing.T, s knowledge.Store) {
		d, _, _ := fixture("t", "empty", nil)
		if err := s.ReplaceDocument(ctx, d, nil, nil, knowledge.EmbeddingInfo{}); err != nil {
			t.Fatalf("empty document: %v", err)
		}
		docs, _ := s.Documents(ctx, "t")
		if len(docs) != 1 || docs[0].Chunks != 0 {
			t.Errorf("docs = %+v", docs)
		}
	})

	withStore("ConcurrentReaders", func(t *testing.T, s knowledge.Store) {
		mustReplace(t, s, "t", "a", []string{"alpha one", "alpha two", "alpha three"})
		var wg sync.WaitGroup
		errs := make(chan error, 64)
		for r := 0; r < 4; r++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < 20; i++ {
					hits, err := s.Search(ctx, knowledge.Query{Theme: "t", Text: "alpha", Vector: make([]float32, Dims)})
					if err != nil {
						errs <- err
						return
					}
					// Every read sees one whole version: 3 or 2 chunks.
					if n := len(hits); n != 3 && n != 2 {
						errs <- fmt.Errorf("reader saw %d hits", n)
						return
					}
				}
			}()
		}
		for i := 0; i < 10; i++ {
			texts := []string{"alpha one", "alpha two", "alpha three"}
			if i%2 == 0 {
				texts = texts[:2]
			}
			mustReplace(t, s, "t", "a", texts)
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
	})
}

func ids(hits []knowledge.Hit) []string {
	var out []string
	for _, h := range hits {
		out = append(out, h.Chunk.ID)
	}
	return out
}
