package pgvector

import (
	"context"
	"fmt"
	"os"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/vibelife/vibe/knowledge"
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
