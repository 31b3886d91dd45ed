package storetest

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vibelife/vibe/knowledge"
)

// CrashEnv is the environment variable that turns a test binary into the
// writer RunCrash kills: its value is the store target (a path or URL).
const CrashEnv = "VIBE_STORETEST_CRASH_TARGET"

const (
	crashTheme     = "crash"
	crashDocChunks = 60
	crashDims      = 16
)

// crashDoc is document i of the crash writer: its content is a function of
// i and round, so a reader can tell a whole document from a mix.
func crashDoc(i, round int) SyntheticDoc {
	c := NewCorpus(Zipf, crashTheme, crashDocChunks, crashDocChunks, crashDims, uint64(i*1000+round))
	d := c.Docs[0]
	d.Doc.ID = fmt.Sprintf("knowledge/%s/converted/doc%03d.md", crashTheme, i)
	d.Doc.ContentHash = fmt.Sprintf("%d/%d", i, round)
	for k := range d.Chunks {
		d.Chunks[k].ID = fmt.Sprintf("%s#%d", d.Doc.ID, k)
		d.Chunks[k].Doc = d.Doc.ID
		d.Chunks[k].Source = d.Doc.ID
	}
	return d
}

// CrashChild is the writer side of RunCrash, run by the child process: it
// announces a bulk load when s is a knowledge.BulkLoader, then rewrites
// documents 0..7 round after round, printing "committed N" after each
// write, until it is killed. It never returns.
func CrashChild(s knowledge.Store) {
	ctx := context.Background()
	fail := func(err error) {
		fmt.Println("error", err)
		os.Exit(3)
	}
	if bl, ok := s.(knowledge.BulkLoader); ok {
		if _, err := bl.BeginBulk(ctx, knowledge.BulkOptions{Chunks: 1 << 20}); err != nil {
			fail(err)
		}
	}
	info := knowledge.EmbeddingInfo{Model: "synthetic", Dimensions: crashDims}
	for n := 0; ; n++ {
		d := crashDoc(n%8, n/8)
		if err := s.ReplaceDocument(ctx, d.Doc, d.Chunks, d.Vectors, info); err != nil {
			fail(err)
		}
		fmt.Println("committed", n+1)
	}
}

// RunCrash runs the test named testName of the current test binary as a
// child process with CrashEnv=target (the test must then call CrashChild
// with the store at target), lets it commit a few documents, kills it with
// SIGKILL in the middle of its next writes, and checks the store open
// reopens: every stored document whole (its chunks and their texts exactly
// one version of it), at least the committed ones present, search working.
// check, when not nil, makes store-specific checks on the reopened store.
func RunCrash(t *testing.T, testName, target string, open func(t *testing.T, target string) knowledge.Store, check func(t *testing.T, s knowledge.Store)) {
	if testing.Short() {
		t.Skip("crash test spawns a writer process; not run with -short")
	}
	for kill := 0; kill < 3; kill++ {
		cmd := exec.Command(os.Args[0], "-test.run=^"+testName+"$", "-test.count=1")
		cmd.Env = append(os.Environ(), CrashEnv+"="+target)
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(out)
		committed := 0
		// Kill after a different number of commits each round, then after a
		// short pause, so the kill lands inside a write, not between two.
		for committed < 2+kill && sc.Scan() {
			line := sc.Text()
			if n, ok := strings.CutPrefix(line, "committed "); ok {
				committed, _ = strconv.Atoi(n)
			} else if strings.HasPrefix(line, "error") {
				cmd.Process.Kill()
				cmd.Wait()
				t.Fatalf("crash writer: %s", line)
			}
		}
		if committed == 0 {
			cmd.Wait()
			t.Fatalf("crash writer committed nothing")
		}
		time.Sleep(time.Duration(5+10*kill) * time.Millisecond)
		if err := cmd.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		cmd.Wait()
		s := open(t, target)
		checkWhole(t, s, min(committed, 8))
		if check != nil {
			check(t, s)
		}
		s.Close()
	}
}

// checkWhole checks every crash document in s is one whole version and
// that at least want documents are stored.
func checkWhole(t *testing.T, s knowledge.Store, want int) {
	t.Helper()
	ctx := context.Background()
	docs, err := s.Documents(ctx, crashTheme)
	if err != nil {
		t.Fatalf("after the crash: %v", err)
	}
	if len(docs) < want {
		t.Errorf("after the crash: %d documents stored, %d were committed", len(docs), want)
	}
	chunks, err := s.Chunks(ctx, crashTheme)
	if err != nil {
		t.Fatalf("after the crash: %v", err)
	}
	byDoc := map[string][]string{}
	for _, c := range chunks {
		byDoc[c.Doc] = append(byDoc[c.Doc], c.Text)
	}
	for _, d := range docs {
		var i, round int
		if _, err := fmt.Sscanf(d.ContentHash, "%d/%d", &i, &round); err != nil {
			t.Fatalf("document %s: content hash %q", d.ID, d.ContentHash)
		}
		wantDoc := crashDoc(i, round)
		got := byDoc[d.ID]
		if len(got) != len(wantDoc.Chunks) || d.Chunks != len(wantDoc.Chunks) {
			t.Errorf("document %s: %d chunks stored, document says %d, version %s has %d", d.ID, len(got), d.Chunks, d.ContentHash, len(wantDoc.Chunks))
			continue
		}
		for k, text := range got {
			if text != wantDoc.Chunks[k].Text {
				t.Errorf("document %s chunk %d is not from version %s", d.ID, k, d.ContentHash)
				break
			}
		}
		delete(byDoc, d.ID)
	}
	for id, texts := range byDoc {
		t.Errorf("%d chunks of %s stored without their document", len(texts), id)
	}
	q := crashDoc(0, 0)
	hits, err := s.Search(ctx, knowledge.Query{Theme: crashTheme, Text: q.Chunks[0].Text, Vector: q.Vectors[0], K: 5})
	if err != nil || len(hits) == 0 {
		t.Errorf("search after the crash: %d hits, %v", len(hits), err)
	}
}
