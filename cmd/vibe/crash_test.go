package main

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"reflect"
	goruntime "runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/vibelife/vibe/internal/iostreams"
	"github.com/vibelife/vibe/knowledge/sqlite"
)

// childArgsEnv, when set (to a JSON list of arguments), makes the test
// binary run vibe with them instead of the tests (see TestMain): the crash
// and lock tests need vibe processes they can kill or stop.
const childArgsEnv = "VIBE_TEST_CHILD_ARGS"

// childEnvEnv holds a JSON object of further variables a child started by
// a test sees (childEnv sets it).
const childEnvEnv = "VIBE_TEST_CHILD_ENV"

// childEnv gives the child started by cmd these environment variables, both
// when it is this test binary re-executed and when it is a vibe binary.
func childEnv(cmd *exec.Cmd, env map[string]string) *exec.Cmd {
	b, _ := json.Marshal(env)
	cmd.Env = append(cmd.Env, childEnvEnv+"="+string(b))
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	return cmd
}

// childMain runs vibe as `main` does, with only HOME, PATH and TMPDIR from
// the environment (so a DATABASE_URL or OPENAI_* of the test environment
// never moves the child off the offline defaults).
func childMain(argsJSON string) int {
	var args []string
	if err := json.Unmarshal([]byte(argsJSON), &args); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", childArgsEnv, err)
		return exitError
	}
	getenv := func(k string) string {
		switch k {
		case "HOME", "PATH", "TMPDIR":
			return os.Getenv(k)
		}
		// Only what a test gives explicitly (the PostgreSQL tests).
		var extra map[string]string
		_ = json.Unmarshal([]byte(os.Getenv(childEnvEnv)), &extra)
		if v, ok := extra[k]; ok {
			return v
		}
		return ""
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return run(ctx, iostreams.System(), args, getenv)
}

var (
	childBinOnce sync.Once
	childBin     string
	childBinErr  error
)

// vibeChild returns an unstarted vibe process with only HOME, PATH and
// TMPDIR in its environment: this test binary re-executed, or, when the
// tests run with -race (whose binary makes the 41 builds of the crash suite
// several times slower), a vibe built once without it.
func vibeChild(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	var env []string
	for _, k := range []string{"HOME", "PATH", "TMPDIR"} {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	if raceEnabled {
		cmd := exec.Command(unracedVibe(t), args...)
		cmd.Env = env
		return cmd
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	a, _ := json.Marshal(args)
	cmd := exec.Command(exe)
	cmd.Env = append(env, childArgsEnv+"="+string(a))
	return cmd
}

// unracedVibe is a vibe binary built from this tree without -race, once
// per test binary: the crash suite's builds under -race, and the one vibe
// binary scripts/demo.sh runs in TestDemoScript (linking vibe costs tens of
// CPU seconds, so it is linked once).
func unracedVibe(t *testing.T) string {
	t.Helper()
	childBinOnce.Do(func() {
		dir, err := os.MkdirTemp("", "vibe-crash-bin-")
		if err != nil {
			childBinErr = err
			return
		}
		childBin = filepath.Join(dir, "vibe")
		build := exec.Command(filepath.Join(goruntime.GOROOT(), "bin", "go"), "build", "-o", childBin, "./cmd/vibe")
		build.Dir = demoRepo
		if out, err := build.CombinedOutput(); err != nil {
			childBinErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if childBinErr != nil {
		t.Fatal(childBinErr)
	}
	return childBin
}

// crashTemplate is a workspace holding the demo corpus in books/ and the
// demo theme's curate.yaml (not its tools.yaml: no plugin to build), not
// built yet.
func crashTemplate(t *testing.T) string {
	t.Helper()
	ws := t.TempDir()
	src := filepath.Join(demoRepo, "examples", "demo")
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() || e.Name() == "README.md" {
			continue
		}
		copyTestFile(t, filepath.Join(src, e.Name()), filepath.Join(ws, "books", e.Name()))
	}
	copyTestFile(t, filepath.Join(src, "theme", "curate.yaml"), filepath.Join(ws, "knowledge", "demo", "curate.yaml"))
	return ws
}

func copyTestFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// copyWorkspace copies a template workspace into a fresh directory.
func copyWorkspace(t *testing.T, tmpl string) string {
	t.Helper()
	ws := filepath.Join(t.TempDir(), "ws")
	if err := os.CopyFS(ws, os.DirFS(tmpl)); err != nil {
		t.Fatal(err)
	}
	return ws
}

// fingerprint is what a build of the demo theme produced, for comparing a
// rebuild after a crash with a clean build.
type fingerprint struct {
	// Files maps each file under knowledge/demo/source (hidden ones such as
	// .dropped/ and the curate journal included), knowledge/demo/converted
	// and skills/demo to the sha256 of its content without the lines that
	// carry a timestamp (gathered_at, generated_at).
	Files map[string]string
	// Docs are the stored documents: id, source, content hash, chunks.
	Docs []string
	// Chunks are the stored chunk ids, sorted.
	Chunks []string
	// RuleIDs are the ids in rules.yaml, sop.yaml and patterns.yaml.
	RuleIDs []string
}

func buildFingerprint(t *testing.T, ws string) fingerprint {
	t.Helper()
	fp := fingerprint{Files: map[string]string{}}
	for _, dir := range []string{"knowledge/demo/source", "knowledge/demo/converted", "skills/demo"} {
		root := filepath.Join(ws, dir)
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			var keep []string
			for _, line := range strings.Split(string(b), "\n") {
				if !strings.Contains(line, `"gathered_at"`) && !strings.Contains(line, `"generated_at"`) {
					keep = append(keep, line)
				}
			}
			sum := sha256.Sum256([]byte(strings.Join(keep, "\n")))
			rel, _ := filepath.Rel(ws, p)
			fp.Files[filepath.ToSlash(rel)] = hex.EncodeToString(sum[:8])
			return nil
		})
		if err != nil {
			t.Fatalf("fingerprint %s: %v", dir, err)
		}
	}
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(ws, ".vibe", "vibe.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	docs, err := st.Documents(ctx, "demo")
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	hashes := map[string]string{}
	for _, d := range docs {
		fp.Docs = append(fp.Docs, fmt.Sprintf("%s <- %s %s %d chunks", d.ID, d.Source, d.ContentHash[:12], d.Chunks))
		total += d.Chunks
		if other, dup := hashes[d.ContentHash]; dup {
			t.Errorf("%s: documents %s and %s are the same text stored twice", ws, other, d.ID)
		}
		hashes[d.ContentHash] = d.ID
	}
	sort.Strings(fp.Docs)
	chunks, err := st.Chunks(ctx, "demo")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, c := range chunks {
		if seen[c.ID] {
			t.Errorf("%s: chunk %s stored twice", ws, c.ID)
		}
		seen[c.ID] = true
		fp.Chunks = append(fp.Chunks, c.ID)
	}
	sort.Strings(fp.Chunks)
	if len(chunks) != total {
		t.Errorf("%s: %d chunks stored, the documents count %d", ws, len(chunks), total)
	}
	for _, f := range []string{"rules.yaml", "sop.yaml", "patterns.yaml"} {
		b, err := os.ReadFile(filepath.Join(ws, "skills", "demo", "knowledge", f))
		if err != nil {
			t.Fatal(err)
		}
		var v any
		if err := yaml.Unmarshal(b, &v); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		fp.RuleIDs = append(fp.RuleIDs, collectIDs(v)...)
	}
	return fp
}

// collectIDs returns every `id:` value in a decoded YAML tree, in order.
func collectIDs(v any) []string {
	var out []string
	switch x := v.(type) {
	case map[string]any:
		if id, ok := x["id"].(string); ok {
			out = append(out, id)
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			out = append(out, collectIDs(x[k])...)
		}
	case []any:
		for _, e := range x {
			out = append(out, collectIDs(e)...)
		}
	}
	return out
}

// diffFingerprints describes how got differs from want.
func diffFingerprints(got, want fingerprint) string {
	var b strings.Builder
	for k, w := range want.Files {
		if g, ok := got.Files[k]; !ok {
			fmt.Fprintf(&b, "  missing file %s\n", k)
		} else if g != w {
			fmt.Fprintf(&b, "  file %s differs\n", k)
		}
	}
	for k := range got.Files {
		if _, ok := want.Files[k]; !ok {
			fmt.Fprintf(&b, "  extra file %s\n", k)
		}
	}
	if !reflect.DeepEqual(got.Docs, want.Docs) {
		fmt.Fprintf(&b, "  documents:\n   got %v\n  want %v\n", got.Docs, want.Docs)
	}
	if !reflect.DeepEqual(got.Chunks, want.Chunks) {
		fmt.Fprintf(&b, "  chunk ids: %d stored, want %d (or other ids)\n", len(got.Chunks), len(want.Chunks))
	}
	if !reflect.DeepEqual(got.RuleIDs, want.RuleIDs) {
		fmt.Fprintf(&b, "  rule ids:\n   got %v\n  want %v\n", got.RuleIDs, want.RuleIDs)
	}
	return b.String()
}

// buildStageNames are the stages of `vibe build`, in order.
var buildStageNames = []string{"curate", "convert", "ingest", "extract", "integrate"}

// startBuild starts `vibe build demo` in ws and returns the process and a
// channel that receives each stage's name when its "==> stage demo" line
// appears (closed when stderr ends), plus the stderr text collected so far.
func startBuild(t *testing.T, ws string) (*exec.Cmd, <-chan string, *syncBuffer) {
	t.Helper()
	cmd := vibeChild(t, "--workspace", ws, "build", "demo")
	pipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stages := make(chan string, 16)
	buf := &syncBuffer{}
	go func() {
		defer close(stages)
		sc := bufio.NewScanner(pipe)
		for sc.Scan() {
			line := sc.Text()
			buf.add(line)
			if s, ok := strings.CutPrefix(line, "==> "); ok {
				if name, ok := strings.CutSuffix(s, " demo"); ok {
					stages <- name
				} else if strings.HasPrefix(s, "build demo done") {
					stages <- "done"
				}
			}
		}
	}()
	return cmd, stages, buf
}

type syncBuffer struct {
	mu    sync.Mutex
	lines []string
}

func (b *syncBuffer) add(s string) {
	b.mu.Lock()
	b.lines = append(b.lines, s)
	b.mu.Unlock()
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return strings.Join(b.lines, "\n")
}

// cleanBuild builds the template's copy to the end and returns its
// fingerprint and how long each stage took.
func cleanBuild(t *testing.T, tmpl string) (fingerprint, map[string]time.Duration) {
	t.Helper()
	ws := copyWorkspace(t, tmpl)
	cmd, stages, buf := startBuild(t, ws)
	took := map[string]time.Duration{}
	prev, start := "", time.Now()
	for s := range stages {
		now := time.Now()
		if prev != "" {
			took[prev] = now.Sub(start)
		}
		prev, start = s, now
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("clean build: %v\n%s", err, buf)
	}
	return buildFingerprint(t, ws), took
}

// TestCrashSuite kills `vibe build` with SIGKILL at 20 seeded random points
// spread over all stages, curate included (four kills in each stage, at a
// random share of the time that stage takes in a clean build), then builds
// again to the end: every rebuild must equal a clean build, file by file
// (sources, converted Markdown, the skill with its rule ids), in the stored
// documents and chunk ids, with no chunk stored twice. The seed is fixed so
// the points are the same on every run (VIBE_CRASH_SEED picks others); the
// instruction a kill lands on still depends on timing, and the log says how
// many kills landed before the build ended.
func TestCrashSuite(t *testing.T) {
	if testing.Short() {
		t.Skip("the crash suite runs 41 builds; skipped with -short")
	}
	seed := uint64(18)
	if s := os.Getenv("VIBE_CRASH_SEED"); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("VIBE_CRASH_SEED=%q: %v", s, err)
		}
		seed = n
	}
	tmpl := crashTemplate(t)
	want, took := cleanBuild(t, tmpl)
	if len(want.Chunks) == 0 || len(want.RuleIDs) == 0 {
		t.Fatalf("the clean build stored %d chunks and %d rule ids", len(want.Chunks), len(want.RuleIDs))
	}
	t.Logf("seed %d; clean build stages: %v", seed, took)
	rng := rand.New(rand.NewPCG(seed, 0))
	const kills = 20
	// The kills are drawn first (the same seed gives the same points) and
	// run two at a time: each has a workspace of its own, and the suite's
	// 41 builds are most of make test's wall clock when run one by one.
	type kill struct {
		stage string
		delay time.Duration
	}
	var plan []kill
	for i := 0; i < kills; i++ {
		stage := buildStageNames[i%len(buildStageNames)]
		plan = append(plan, kill{stage, time.Duration(rng.Float64() * float64(took[stage]))})
	}
	var landed, identical atomic.Int32
	t.Run("kills", func(t *testing.T) {
		for i, k := range plan {
			t.Run(fmt.Sprintf("%02d-%s", i, k.stage), func(t *testing.T) {
				t.Parallel()
				stage, delay := k.stage, k.delay
				ws := copyWorkspace(t, tmpl)
				cmd, stages, buf := startBuild(t, ws)
				var timer *time.Timer
				for s := range stages {
					if s == stage && timer == nil {
						timer = time.AfterFunc(delay, func() { _ = cmd.Process.Kill() })
					}
				}
				err := cmd.Wait()
				if timer != nil {
					timer.Stop()
				}
				var ee *exec.ExitError
				killed := errors.As(err, &ee) && ee.Sys().(syscall.WaitStatus).Signaled()
				if err != nil && !killed {
					t.Fatalf("kill %d: the build failed by itself: %v\n%s", i, err, buf)
				}
				if killed {
					landed.Add(1)
				}
				rebuild := vibeChild(t, "--workspace", ws, "--quiet", "build", "demo")
				if out, err := rebuild.CombinedOutput(); err != nil {
					t.Fatalf("kill %d (%s +%s): the rebuild failed: %v\n%s", i, stage, delay.Round(time.Millisecond), err, out)
				}
				got := buildFingerprint(t, ws)
				if d := diffFingerprints(got, want); d != "" {
					t.Fatalf("kill %d (%s +%s, killed %v): the rebuild differs from a clean build:\n%s", i, stage, delay.Round(time.Millisecond), killed, d)
				}
				identical.Add(1)
			})
		}
	})
	landedN, identicalN := int(landed.Load()), int(identical.Load())
	t.Logf("%d of %d rebuilds identical to a clean build; %d kills landed before the build ended", identicalN, kills, landedN)
	if landedN < kills/2 {
		t.Errorf("only %d of %d kills landed inside the build: the suite tests little", landedN, kills)
	}
}

// TestConcurrentBuildsOfOneTheme starts a build, stops it (SIGSTOP) while it
// holds the theme lock, and starts a second build and a stage command of the
// same theme: both are refused, naming the first build's process id, and
// touch nothing. The first build then finishes with the store and skill of a
// clean build (no partial store), and the lock is free again.
func TestConcurrentBuildsOfOneTheme(t *testing.T) {
	if testing.Short() {
		t.Skip("runs three builds; skipped with -short")
	}
	tmpl := crashTemplate(t)
	want, _ := cleanBuild(t, tmpl)
	ws := copyWorkspace(t, tmpl)
	first, stages, buf := startBuild(t, ws)
	if s := <-stages; s != "curate" {
		t.Fatalf("first stage %q", s)
	}
	if err := first.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	holder := "vibe process " + strconv.Itoa(first.Process.Pid)
	for _, args := range [][]string{{"build", "demo"}, {"ingest", "demo"}, {"curate", "demo"}} {
		second := vibeChild(t, append([]string{"--workspace", ws}, args...)...)
		out, err := second.CombinedOutput()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != exitFailure || !strings.Contains(string(out), "theme demo is being built by "+holder) {
			t.Errorf("vibe %s while a build runs: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	if err := first.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	for range stages {
	}
	if err := first.Wait(); err != nil {
		t.Fatalf("first build: %v\n%s", err, buf)
	}
	if d := diffFingerprints(buildFingerprint(t, ws), want); d != "" {
		t.Errorf("the build that held the lock differs from a clean build:\n%s", d)
	}
	if out, err := vibeChild(t, "--workspace", ws, "--quiet", "build", "demo").CombinedOutput(); err != nil {
		t.Errorf("a build after the first ended: %v\n%s", err, out)
	}
}
