package main

import (
	"fmt"
	"math/rand"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/vibelife/vibe/knowledge"
	"github.com/vibelife/vibe/knowledge/storetest"
)

// TestIngestPostgresSaysItBuildsTheVectorIndex: a bulk load into
// PostgreSQL builds the HNSW index after the last document (minutes at
// 100k chunks), and `vibe ingest` says so when the build starts and when
// it ends, naming the chunks it covers.
func TestIngestPostgresSaysItBuildsTheVectorIndex(t *testing.T) {
	url := testPostgresURL(t)
	ws := t.TempDir()
	// 1.2 MB of text announces about 1,200 chunks: a bulk load that defers
	// the index.
	r := rand.New(rand.NewSource(1))
	words := strings.Fields("day master month branch stem element wood fire earth metal water strong weak season pillar chart luck cycle clash harmony")
	for d := range 12 {
		var b strings.Builder
		for s := 0; b.Len() < 100_000; s++ {
			fmt.Fprintf(&b, "## Section %d\n\n", s)
			for range 3 {
				for w := range 60 {
					if w > 0 {
						b.WriteByte(' ')
					}
					b.WriteString(words[r.Intn(len(words))])
				}
				b.WriteString(".\n\n")
			}
		}
		storetest.WriteConverted(t, ws, "gen", fmt.Sprintf("doc%02d", d), b.String(), false)
	}
	code, out, errOut := runVibe(t, map[string]string{"DATABASE_URL": url}, "--workspace", ws, "ingest", "gen")
	if code != 0 {
		t.Fatalf("vibe ingest: exit %d\n%s\n%s", code, out, errOut)
	}
	m := regexp.MustCompile(`(\d+) chunks written`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no chunk count in %q", out)
	}
	n := m[1]
	if len(n) > 3 {
		n = n[:len(n)-3] + "," + n[len(n)-3:]
	}
	start := strings.Index(errOut, "building the vector index over "+n+" chunks…\n")
	end := regexp.MustCompile(`built the vector index over ` + n + ` chunks in [0-9.]+m?s\n`).FindStringIndex(errOut)
	if start < 0 || end == nil || end[0] < start || strings.LastIndex(errOut, "ingest: [") > start {
		t.Errorf("stderr does not say, after the documents, when the index build starts and ends over %s chunks:\n%s", n, errOut)
	}
	// --quiet says nothing of it.
	storetest.WriteConverted(t, ws, "gen", "doc00", "changed", false)
	if _, _, errOut := runVibe(t, map[string]string{"DATABASE_URL": url}, "--workspace", ws, "--quiet", "ingest", "gen", "--rebuild"); strings.Contains(errOut, "vector index") {
		t.Errorf("--quiet printed the build:\n%s", errOut)
	}
}

func TestIndexBuildLine(t *testing.T) {
	for _, c := range []struct {
		b    knowledge.IndexBuild
		want string
	}{
		{knowledge.IndexBuild{Index: "vector", Chunks: 83832}, "building the vector index over 83,832 chunks…"},
		{knowledge.IndexBuild{Index: "vector", Chunks: 999, Done: true, Took: 2345 * time.Millisecond}, "built the vector index over 999 chunks in 2.3s"},
		{knowledge.IndexBuild{Index: "vector", Chunks: 1234567, Done: true, Took: 200 * time.Second, Err: fmt.Errorf("x")}, "building the vector index over 1,234,567 chunks failed after 3m20s"},
	} {
		if got := indexBuildLine(c.b); got != c.want {
			t.Errorf("indexBuildLine(%+v) = %q, want %q", c.b, got, c.want)
		}
	}
}
