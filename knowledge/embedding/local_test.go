package embedding

import (
	"context"
	"github.com/vibelife/vibe/internal/testcorpus"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/vibelife/vibe/chunk"
	"github.com/vibelife/vibe/convert"
)

func dot(a, b []float32) float64 {
	var s float64
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}

func TestLocalDeterministicAndNormalised(t *testing.T) {
	tests := []struct{ name, text string }{
		{"cjk", "伤官见官，为祸百端。"},
		{"latin", "The quick brown fox jumps over the lazy dog."},
		{"mixed", "用神 yong shen 月令"},
		{"junk", "\x00\x01\xff"},
	}
	e := NewLocal(0)
	if e.Dimensions() != DefaultLocalDimensions || e.Model() != LocalModel {
		t.Fatalf("defaults %d %s", e.Dimensions(), e.Model())
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v1 := e.Vector(tt.text)
			v2 := NewLocal(DefaultLocalDimensions).Vector(tt.text)
			if len(v1) != DefaultLocalDimensions {
				t.Fatalf("len %d", len(v1))
			}
			for i := range v1 {
				if v1[i] != v2[i] {
					t.Fatalf("not deterministic at %d", i)
				}
			}
			n := dot(v1, v1)
			if tt.name != "junk" && math.Abs(n-1) > 1e-5 {
				t.Errorf("norm² %f", n)
			}
		})
	}
	// A fixed vector value guards against drift across machines and versions.
	v := e.Vector("用神")
	var nz int
	for _, x := range v {
		if x != 0 {
			nz++
		}
	}
	if nz != 3 { // 用, 神, 用神
		t.Errorf("%d non-zero dims for 用神, want 3", nz)
	}
	a, b, c := e.Vector("伤官见官为祸百端"), e.Vector("伤官见官"), e.Vector("The quick brown fox")
	if dot(a, b) <= dot(a, c) {
		t.Errorf("similar texts %f not closer than unrelated %f", dot(a, b), dot(a, c))
	}
}

func repoCorpus(t testing.TB) string {
	return testcorpus.Dir(t)
}

var chapterLine = regexp.MustCompile(`(?m)^([一二三四五六七八九十百]+[、．.].{1,30})$`)

func corpusChunks(t testing.TB, name string) []chunk.Chunk {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(repoCorpus(t), "bazi", name))
	if err != nil {
		t.Fatal(err)
	}
	title := strings.TrimSuffix(name, ".md")
	body := "# " + title + "\n\n" + chapterLine.ReplaceAllString(string(raw), "## $1")
	data, err := convert.Render(convert.Document{Source: "source/" + name, Title: title, Markdown: body})
	if err != nil {
		t.Fatal(err)
	}
	s, err := chunk.New(chunk.Options{MaxTokens: 400, Overlap: 40})
	if err != nil {
		t.Fatal(err)
	}
	cs, err := s.SplitFile(context.Background(), name, data)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

func TestLocalRetrievalOnCorpus(t *testing.T) {
	cs := corpusChunks(t, "子平真诠.md")
	e := NewLocal(0)
	texts := make([]string, len(cs))
	for i, c := range cs {
		texts[i] = c.Text
	}
	vecs, err := e.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		query   string
		section string // substring of the heading expected in the top 5
	}{
		{"用神", "论用神"},
		{"伤官见官", "伤官"},
		{"论用神成败救应", "论用神成败救应"},
		{"杂气如何取用", "杂气"},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			q := e.Vector(tt.query)
			idx := make([]int, len(cs))
			for i := range idx {
				idx[i] = i
			}
			sort.SliceStable(idx, func(a, b int) bool { return dot(q, vecs[idx[a]]) > dot(q, vecs[idx[b]]) })
			for _, i := range idx[:5] {
				if strings.Contains(strings.Join(cs[i].HeadingPath, ">"), tt.section) {
					return
				}
			}
			for _, i := range idx[:5] {
				t.Logf("%v %.3f", cs[i].HeadingPath, dot(q, vecs[i]))
			}
			t.Errorf("no chunk under %q in the top 5", tt.section)
		})
	}
}

func BenchmarkLocalEmbed(b *testing.B) {
	cs := corpusChunks(b, "子平真诠.md")
	e := NewLocal(0)
	var bytes int64
	for _, c := range cs {
		bytes += int64(len(c.Text))
	}
	b.SetBytes(bytes)
	for b.Loop() {
		for _, c := range cs {
			e.Vector(c.Text)
		}
	}
}

// TestLocalChapterRetrieval uses every chapter title of 子平真诠 (without its
// number) as a query whose relevant chunks are those under that chapter, and
// reports recall@5 and MRR of the local embedder.
func TestLocalChapterRetrieval(t *testing.T) {
	cs := corpusChunks(t, "子平真诠.md")
	e := NewLocal(0)
	vecs := make([][]float32, len(cs))
	for i, c := range cs {
		vecs[i] = e.Vector(c.Text)
	}
	num := regexp.MustCompile(`^[一二三四五六七八九十百]+[、．.]`)
	seen := map[string]bool{}
	var queries, hits int
	var mrr float64
	for _, c := range cs {
		// The "# 子平真诠" heading repeats the title, so a chapter's path is
		// just the chapter.
		if len(c.HeadingPath) != 1 || seen[c.HeadingPath[0]] {
			continue
		}
		chapter := c.HeadingPath[0]
		seen[chapter] = true
		q := e.Vector(num.ReplaceAllString(chapter, ""))
		idx := make([]int, len(cs))
		for i := range idx {
			idx[i] = i
		}
		sort.SliceStable(idx, func(a, b int) bool { return dot(q, vecs[idx[a]]) > dot(q, vecs[idx[b]]) })
		queries++
		for rank, i := range idx {
			if len(cs[i].HeadingPath) == 1 && cs[i].HeadingPath[0] == chapter {
				mrr += 1 / float64(rank+1)
				if rank < 5 {
					hits++
				}
				break
			}
		}
	}
	if queries < 20 {
		t.Fatalf("only %d chapter queries", queries)
	}
	recall := float64(hits) / float64(queries)
	mrr /= float64(queries)
	t.Logf("子平真诠 chapters: %d queries, recall@5 %.3f, MRR %.3f", queries, recall, mrr)
	if recall < 0.8 {
		t.Errorf("recall@5 %.3f below 0.8", recall)
	}
}
