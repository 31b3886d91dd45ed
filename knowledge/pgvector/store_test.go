package pgvector

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/vibelife/vibe/chunk"
	"github.com/vibelife/vibe/internal/testcorpus"
	"github.com/vibelife/vibe/knowledge"
	"github.com/vibelife/vibe/knowledge/lexical"
	"github.com/vibelife/vibe/knowledge/storetest"
)

// testURL returns the test database, skipping loudly when it is not
// configured, and failing under CI=true.
func testURL(t *testing.T) string {
	url := os.Getenv("VIBE_TEST_DATABASE_URL")
	if url == "" {
		msg := "VIBE_TEST_DATABASE_URL is not set: PostgreSQL store tests NOT RUN (run scripts/postgres.sh and source .vibe/test.env)"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip("*** " + msg + " ***")
	}
	return url
}

var schemaSeq atomic.Int64

func getenvURL() string { return os.Getenv("VIBE_TEST_DATABASE_URL") }

// openFresh opens the store in a fresh schema of the test database so
// subtests do not see each other's data.
func openFresh(t *testing.T) knowledge.Store { return openFreshURL(t, testURL(t)) }

func openFreshURL(t testing.TB, url string) *Store {
	t.Helper()
	ctx := context.Background()
	schema := fmt.Sprintf("vibe_test_%d_%d", os.Getpid(), schemaSeq.Add(1))
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatalf("connect %s: %v", url, err)
	}
	if _, err := conn.Exec(ctx, `CREATE SCHEMA `+schema); err != nil {
		t.Fatal(err)
	}
	conn.Close(ctx)
	t.Cleanup(func() {
		conn, err := pgx.Connect(ctx, url)
		if err == nil {
			conn.Exec(ctx, `DROP SCHEMA `+schema+` CASCADE`)
			conn.Close(ctx)
		}
	})
	s, err := Open(ctx, withSearchPath(url, schema))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func withSearchPath(url, schema string) string {
	sep := "?"
	for _, c := range url {
		if c == '?' {
			sep = "&"
		}
	}
	return url + sep + "search_path=" + schema + ",public"
}

func TestContract(t *testing.T) { storetest.Run(t, openFresh) }

// TestTSVectorMatchesServer checks that the tsvector the client builds
// (tsvectorOf) equals what the server's to_tsvector('simple', ...) makes of
// the same index tokens, on real Chinese and English text.
func TestTSVectorMatchesServer(t *testing.T) {
	ctx := context.Background()
	s := openFreshURL(t, testURL(t))
	defer s.Close()
	var texts []string
	for _, f := range []string{
		filepath.Join(testcorpus.Dir(t, "bazi"), "子平真诠.md"),
		filepath.Join(testcorpus.Dir(t, "html-expected"), "readability-wikipedia.expected.html"),
		filepath.Join(testcorpus.Dir(t, "html-expected"), "readability-qq.expected.html"),
	} {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(data), "\n") {
			if strings.TrimSpace(line) != "" && len(texts) < 2000 {
				texts = append(texts, line)
			}
		}
	}
	texts = append(texts, "", "x", strings.Repeat("甲乙", 9000), strings.Repeat("word ", 400), "ÀÉÎ ß Ωμέγα 123abc 007 ＡＢＣ")
	bad := 0
	for i, text := range texts {
		c := chunk.Chunk{Title: "子平真诠", HeadingPath: []string{"卷一", fmt.Sprintf("Section %d", i)}, Text: text}
		var same bool
		var server, client string
		err := s.pool.QueryRow(ctx, `SELECT to_tsvector('simple', $1) = $2, to_tsvector('simple', $1)::text, $2::text`,
			lexical.IndexChunk(c), tsvectorOf(c)).Scan(&same, &server, &client)
		if err != nil {
			t.Fatalf("text %d: %v", i, err)
		}
		if !same {
			if bad++; bad <= 3 {
				t.Errorf("text %d %.60q:\nserver %.300s\nclient %.300s", i, text, server, client)
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d texts differ", bad, len(texts))
	}
}
