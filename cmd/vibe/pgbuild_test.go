package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/vibelife/vibe/knowledge/pgvector"
)

// testPostgresURL makes a fresh schema of the test database
// (VIBE_TEST_DATABASE_URL) and returns the URL whose search_path is it;
// it skips loudly when no database is configured and fails under CI=true.
func testPostgresURL(t *testing.T) string {
	t.Helper()
	url := os.Getenv("VIBE_TEST_DATABASE_URL")
	if url == "" {
		msg := "VIBE_TEST_DATABASE_URL is not set: vibe tests on PostgreSQL NOT RUN (run scripts/postgres.sh and source .vibe/test.env)"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip("*** " + msg + " ***")
	}
	ctx := context.Background()
	schema := fmt.Sprintf("vibe_cmd_test_%d_%s", os.Getpid(), strings.ToLower(strings.NewReplacer("/", "_", "-", "_").Replace(t.Name())))
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatalf("connect %s: %v", url, err)
	}
	if _, err := conn.Exec(ctx, `DROP SCHEMA IF EXISTS `+schema+` CASCADE; CREATE SCHEMA `+schema); err != nil {
		t.Fatal(err)
	}
	conn.Close(ctx)
	t.Cleanup(func() {
		if conn, err := pgx.Connect(ctx, url); err == nil {
			conn.Exec(ctx, `DROP SCHEMA `+schema+` CASCADE`)
			conn.Close(ctx)
		}
	})
	sep := "?"
	if strings.Contains(url, "?") {
		sep = "&"
	}
	return url + sep + "search_path=" + schema + ",public"
}

// TestConcurrentBuildsOnPostgres: two workspaces (two machines) build the
// demo theme into one PostgreSQL. While the first build holds the store's
// build lock (stopped mid-build), the second is refused at once naming the
// holder, and writes nothing; afterwards the second is refused because the
// theme belongs to the first workspace (document ids are workspace paths),
// until it takes the theme over with --take-over. No build deadlocks
// (SQLSTATE 40P01) and the store ends with one workspace's documents.
func TestConcurrentBuildsOnPostgres(t *testing.T) {
	if testing.Short() {
		t.Skip("runs four builds; skipped with -short")
	}
	url := testPostgresURL(t)
	tmpl := crashTemplate(t)
	wsA, wsB := copyWorkspace(t, tmpl), copyWorkspace(t, tmpl)
	withDB := func(c *exec.Cmd) *exec.Cmd { return childEnv(c, map[string]string{"DATABASE_URL": url}) }

	first := withDB(vibeChild(t, "--workspace", wsA, "build", "demo"))
	firstOut := &syncBuffer{}
	pipe, err := first.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 64)
	go func() {
		defer close(lines)
		buf := make([]byte, 4096)
		var acc string
		for {
			n, err := pipe.Read(buf)
			acc += string(buf[:n])
			for {
				i := strings.IndexByte(acc, '\n')
				if i < 0 {
					break
				}
				firstOut.add(acc[:i])
				lines <- acc[:i]
				acc = acc[i+1:]
			}
			if err != nil {
				return
			}
		}
	}()
	for l := range lines {
		if strings.HasPrefix(l, "==> ingest demo") {
			break
		}
	}
	if err := first.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	holder := "vibe process " + strconv.Itoa(first.Process.Pid)
	out, err := withDB(vibeChild(t, "--workspace", wsB, "build", "demo", "--take-over")).CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != exitFailure || !strings.Contains(string(out), "theme demo is being built by "+holder) {
		t.Errorf("second build while the first holds the store: %v\n%s", err, out)
	}
	if strings.Contains(string(out), "==> ingest") {
		t.Errorf("the refused build ran its stages:\n%s", out)
	}
	// vibe ingest from the other machine takes the same lock.
	out, err = withDB(vibeChild(t, "--workspace", wsB, "ingest", "demo")).CombinedOutput()
	if !errors.As(err, &ee) || ee.ExitCode() != exitFailure || !strings.Contains(string(out), "theme demo is being built by "+holder) {
		t.Errorf("vibe ingest while a build runs: %v\n%s", err, out)
	}
	if err := first.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	for range lines {
	}
	if err := first.Wait(); err != nil {
		t.Fatalf("first build: %v\n%s", err, firstOut)
	}
	docsA := storedDocs(t, url)
	if len(docsA) == 0 {
		t.Fatal("the first build stored no documents")
	}
	// The theme belongs to workspace A now: B is refused with the reason.
	out, err = withDB(vibeChild(t, "--workspace", wsB, "build", "demo")).CombinedOutput()
	if !errors.As(err, &ee) || ee.ExitCode() != exitFailure || !strings.Contains(string(out), "was built from workspace") || !strings.Contains(string(out), wsA) || !strings.Contains(string(out), "--take-over") {
		t.Errorf("build from another workspace: %v\n%s", err, out)
	}
	if got := storedDocs(t, url); strings.Join(got, ",") != strings.Join(docsA, ",") {
		t.Errorf("the refused build changed the store: %v -> %v", docsA, got)
	}
	// A rebuild from A goes on as usual; B taking over builds too.
	if out, err := withDB(vibeChild(t, "--workspace", wsA, "--quiet", "build", "demo")).CombinedOutput(); err != nil {
		t.Errorf("rebuild from the owner: %v\n%s", err, out)
	}
	if out, err := withDB(vibeChild(t, "--workspace", wsB, "--quiet", "build", "demo", "--take-over")).CombinedOutput(); err != nil {
		t.Errorf("build with --take-over: %v\n%s", err, out)
	}
	if got := storedDocs(t, url); strings.Join(got, ",") != strings.Join(docsA, ",") {
		t.Errorf("documents after take-over = %v, want %v", got, docsA)
	}
	if strings.Contains(firstOut.String(), "40P01") {
		t.Errorf("deadlock:\n%s", firstOut)
	}
}

func storedDocs(t *testing.T, url string) []string {
	t.Helper()
	st, err := pgvector.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	docs, err := st.Documents(context.Background(), "demo")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, d := range docs {
		out = append(out, d.ID+"@"+d.ContentHash[:8])
	}
	return out
}
