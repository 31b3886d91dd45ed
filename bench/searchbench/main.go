// Command searchbench measures vibe's search against Xapian's BM25 on a
// generated theme at several sizes, in one run: for each size it writes a
// theme of Markdown books whose sections are about 340 characters of
// Zipf-distributed words (the realistic synthetic corpus of
// knowledge/storetest, each book favouring its own topic words), builds it
// with `vibe curate`, `convert` and `ingest` (offline, local embedder),
// then runs the same queries (two topic words of a book and one common
// word) through
//
//   - `vibe search --batch`, hybrid (the default) and lexical, as child
//     processes: CPU per query is the CPU of a run of all the queries less
//     that of a run of one, divided by the queries less one (so the
//     process's start-up is not counted), and start-up resident memory is
//     the peak RSS of the one-query run;
//   - Xapian's BM25 (BM25Weight with its defaults) over the chunks vibe
//     stored, each indexed by the same tokens vibe's lexical index holds
//     (knowledge/lexical), the queries being vibe's lexical query tokens
//     OR-ed: a Python query loop (python3-xapian) in a child process, CPU
//     per query measured inside it around the loop.
//
// Ingest CPU per chunk is the CPU of `vibe ingest` divided by the chunks
// it stored. Every figure is printed with the machine's load average at the
// start and the end of its size.
//
//	go build -o bin/vibe ./cmd/vibe
//	go run ./bench/searchbench -vibe bin/vibe -sizes 5000,20000,75000
//
// bench/run.sh search installs python3-xapian from Debian's packages when it
// is missing and runs this.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/vibelife/vibe/internal/zipfcorpus"
	"github.com/vibelife/vibe/knowledge/lexical"
	"github.com/vibelife/vibe/knowledge/sqlite"
)

func main() {
	vibe := flag.String("vibe", "vibe", "the vibe binary")
	sizes := flag.String("sizes", "5000,20000,75000", "corpus sizes in chunks (about)")
	nq := flag.Int("queries", 300, "queries per size")
	work := flag.String("work", "", "work directory (default: a new temporary one); a size already built there is reused")
	xapian := flag.String("xapian", "", "the Xapian query loop (default: xapian_bm25.py beside this file)")
	python := flag.String("python", "/usr/bin/python3", "the Python holding Debian's python3-xapian")
	ingestOnly := flag.Bool("ingest-only", false, "measure ingest only: convert each size once (kept in -work), then ingest it into a new store while another connection takes the write lock every 20 ms (trying every millisecond while it is held), and print ingest CPU, wall and that writer's waits: the write lock's holds")
	pgURL := flag.String("postgres", "", "with -ingest-only: ingest into this PostgreSQL database (a new schema each run) instead of SQLite, and count the server's CPU too: that of the backends serving the ingest (and their parallel workers), read from /proc every 0.2 s and split by the statement each runs, and that of all postgres processes (the server must run on this machine)")
	keep := flag.Bool("keep", false, "with -postgres: keep each size's schema (named on stderr) instead of dropping it")
	flag.Parse()
	if *xapian == "" {
		*xapian = filepath.Join("bench", "searchbench", "xapian_bm25.py")
	}
	if *work == "" {
		d, err := os.MkdirTemp("", "vibe-searchbench-")
		if err != nil {
			fail(err)
		}
		*work = d
	}
	abs, err := filepath.Abs(*vibe)
	if err != nil {
		fail(err)
	}
	ctx := context.Background()
	if *ingestOnly {
		if *pgURL != "" {
			fmt.Println("| chunks | vibe CPU s (user + sys) | server CPU s: the ingest's backends (all postgres processes) | wall s | ms CPU a chunk: vibe, server, both | load (start - end) |")
			fmt.Println("|---:|---:|---:|---:|---|---|")
		} else {
			fmt.Println("| chunks | ingest CPU s (user + sys) | wall s | ms CPU a chunk | another writer's waits (1 ms tries): longest, p99, > 1 s (of n) | load (start - end) |")
			fmt.Println("|---:|---:|---:|---:|---|---|")
		}
		for _, f := range strings.Split(*sizes, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n <= 0 {
				fail(fmt.Errorf("-sizes: %q is not a positive number", f))
			}
			if err := ingestSize(ctx, abs, filepath.Join(*work, strconv.Itoa(n)), n, *pgURL, *keep); err != nil {
				fail(fmt.Errorf("size %d: %w", n, err))
			}
		}
		fmt.Fprintf(os.Stderr, "workspaces in %s\n", *work)
		return
	}
	fmt.Println("| chunks | vibe hybrid CPU / wall ms a query | vibe lexical CPU / wall | Xapian BM25 CPU / wall | hybrid / Xapian CPU | lexical / Xapian | start-up RSS MB | ingest CPU s, ms a chunk | load (start-end) |")
	fmt.Println("|---:|---:|---:|---:|---:|---:|---:|---:|---|")
	for _, f := range strings.Split(*sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			fail(fmt.Errorf("-sizes: %q is not a positive number", f))
		}
		r, err := runSize(ctx, abs, *python, *xapian, filepath.Join(*work, strconv.Itoa(n)), n, *nq)
		if err != nil {
			fail(fmt.Errorf("size %d: %w", n, err))
		}
		fmt.Printf("| %d | %.2f / %.2f | %.2f / %.2f | %.3f / %.3f | %.1fx | %.1fx | %.0f | %.1f, %.3f | %s - %s |\n",
			r.chunks, r.hybrid.cpu, r.hybrid.wall, r.lexical.cpu, r.lexical.wall, r.xapian.cpu, r.xapian.wall,
			r.hybrid.cpu/r.xapian.cpu, r.lexical.cpu/r.xapian.cpu, r.rssMB, r.ingestCPU, 1000*r.ingestCPU/float64(r.chunks), r.loadStart, loadavg())
	}
	fmt.Fprintf(os.Stderr, "workspaces in %s\n", *work)
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "searchbench:", err)
	os.Exit(1)
}

type perQuery struct{ cpu, wall float64 } // milliseconds a query

type result struct {
	chunks                  int
	hybrid, lexical, xapian perQuery
	rssMB, ingestCPU        float64
	loadStart               string
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

// run runs a command and returns its CPU (user + system) and wall seconds
// and its peak resident memory in MB.
func run(cmd *exec.Cmd) (cpu, wall, rssMB float64, err error) {
	start := time.Now()
	if err := cmd.Run(); err != nil {
		return 0, 0, 0, fmt.Errorf("%s: %w", strings.Join(cmd.Args, " "), err)
	}
	wall = time.Since(start).Seconds()
	ps := cmd.ProcessState
	cpu = (ps.UserTime() + ps.SystemTime()).Seconds()
	if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
		rssMB = float64(ru.Maxrss) / 1024
	}
	return cpu, wall, rssMB, nil
}

func vibeCmd(ctx context.Context, vibe, ws string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, vibe, append([]string{"-w", ws, "--quiet"}, args...)...)
	cmd.Env = append(os.Environ(), "VIBE_LLM_PROVIDER=offline")
	cmd.Stderr = os.Stderr
	return cmd
}

func runSize(ctx context.Context, vibe, python, xapian, ws string, n, nq int) (result, error) {
	res := result{loadStart: loadavg()}
	c := newCorpus(n)
	ingest, err := build(ctx, vibe, ws, c)
	if err != nil {
		return res, err
	}
	res.ingestCPU = ingest
	st, err := sqlite.Open(ctx, filepath.Join(ws, ".vibe", "vibe.db"))
	if err != nil {
		return res, err
	}
	chunks, err := st.Chunks(ctx, "gen")
	st.Close()
	if err != nil {
		return res, err
	}
	res.chunks = len(chunks)
	queries := c.queries(nq)
	all, one := filepath.Join(ws, "queries.jsonl"), filepath.Join(ws, "one.jsonl")
	if err := writeQueries(all, queries); err != nil {
		return res, err
	}
	if err := writeQueries(one, queries[:1]); err != nil {
		return res, err
	}
	for _, mode := range []string{"hybrid", "lexical"} {
		var cpu, wall [2]float64
		for i, f := range []string{one, all} {
			cmd := vibeCmd(ctx, vibe, ws, "search", "gen", "--batch", f, "--mode", mode, "-k", "10")
			cmd.Stdout = nil
			c, w, rss, err := run(cmd)
			if err != nil {
				return res, err
			}
			cpu[i], wall[i] = c, w
			if i == 0 && mode == "hybrid" {
				res.rssMB = rss
			}
		}
		pq := perQuery{1000 * (cpu[1] - cpu[0]) / float64(nq-1), 1000 * (wall[1] - wall[0]) / float64(nq-1)}
		if mode == "hybrid" {
			res.hybrid = pq
		} else {
			res.lexical = pq
		}
	}
	// Xapian over the same chunks and the same tokens.
	docs := filepath.Join(ws, "xapian-docs.txt")
	f, err := os.Create(docs)
	if err != nil {
		return res, err
	}
	w := bufio.NewWriter(f)
	for _, ch := range chunks {
		fmt.Fprintln(w, lexical.IndexChunk(ch))
	}
	if err := w.Flush(); err != nil {
		return res, err
	}
	f.Close()
	qf := filepath.Join(ws, "xapian-queries.txt")
	var qb strings.Builder
	for _, q := range queries {
		qb.WriteString(strings.Join(lexical.QueryTokens(q), " ") + "\n")
	}
	if err := os.WriteFile(qf, []byte(qb.String()), 0o644); err != nil {
		return res, err
	}
	cmd := exec.CommandContext(ctx, python, xapian, docs, qf, filepath.Join(ws, "xapian.db"))
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return res, fmt.Errorf("xapian: %w (python3-xapian installed? bench/run.sh search installs it)", err)
	}
	var x struct {
		Queries       int     `json:"queries"`
		QueryCPU      float64 `json:"query_cpu_s"`
		QueryWall     float64 `json:"query_wall_s"`
		IndexedChunks int     `json:"docs"`
	}
	if err := json.Unmarshal(out, &x); err != nil {
		return res, fmt.Errorf("xapian output %q: %w", out, err)
	}
	if x.IndexedChunks != len(chunks) || x.Queries != nq {
		return res, fmt.Errorf("xapian indexed %d chunks and ran %d queries, want %d and %d", x.IndexedChunks, x.Queries, len(chunks), nq)
	}
	res.xapian = perQuery{1000 * x.QueryCPU / float64(nq), 1000 * x.QueryWall / float64(nq)}
	return res, nil
}

func writeQueries(path string, qs []string) error {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	for i, q := range qs {
		if err := enc.Encode(map[string]string{"id": fmt.Sprintf("q%d", i), "query": q}); err != nil {
			return err
		}
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

// build writes the corpus as books of a theme and builds it, unless the
// workspace holds it already; it returns the CPU seconds of `vibe ingest`.
func build(ctx context.Context, vibe, ws string, c *corpus) (float64, error) {
	stamp := filepath.Join(ws, "built")
	if b, err := os.ReadFile(stamp); err == nil {
		if v, err := strconv.ParseFloat(strings.TrimSpace(string(b)), 64); err == nil {
			return v, nil
		}
	}
	if err := os.RemoveAll(ws); err != nil {
		return 0, err
	}
	books := filepath.Join(ws, "books")
	if err := os.MkdirAll(books, 0o755); err != nil {
		return 0, err
	}
	for i, b := range c.books {
		if err := os.WriteFile(filepath.Join(books, fmt.Sprintf("book%05d.md", i)), []byte(b), 0o644); err != nil {
			return 0, err
		}
	}
	theme := filepath.Join(ws, "knowledge", "gen")
	if err := os.MkdirAll(theme, 0o755); err != nil {
		return 0, err
	}
	if err := os.WriteFile(filepath.Join(theme, "curate.yaml"), []byte("sources:\n  - books\n"), 0o644); err != nil {
		return 0, err
	}
	var ingest float64
	for _, args := range [][]string{{"curate", "gen"}, {"convert", "gen"}, {"ingest", "gen"}} {
		cmd := vibeCmd(ctx, vibe, ws, args...)
		cpu, _, _, err := run(cmd)
		if err != nil {
			return 0, err
		}
		if args[0] == "ingest" {
			ingest = cpu
		}
	}
	return ingest, os.WriteFile(stamp, []byte(strconv.FormatFloat(ingest, 'f', 3, 64)), 0o644)
}

// corpus is a generated theme: books of sections, and the topic words of
// each book for its queries.
type corpus struct {
	books  []string
	topics [][]string
	vocab  []string
	r      *rand.Rand
}

const (
	vocabSize   = 6000
	topicWords  = 24
	topicMix    = 0.2
	sectionLen  = 340 // characters, about: one chunk each
	perBook     = 50  // sections
	corpusSeed  = 20261127
	commonWords = 200
)

// newCorpus generates books holding about n sections of sectionLen
// characters (knowledge/storetest's zipf corpus, as Markdown: each section
// under its own heading, so each becomes one chunk).
func newCorpus(n int) *corpus {
	r := rand.New(rand.NewPCG(corpusSeed, 7))
	c := &corpus{vocab: vocab(), r: rand.New(rand.NewPCG(corpusSeed, 99))}
	z := rand.NewZipf(r, 1.07, 2, uint64(len(c.vocab)-1))
	for b := 0; b*perBook < n; b++ {
		var topic []string
		for i := 0; i < topicWords; i++ {
			topic = append(topic, c.vocab[50+r.IntN(2000)])
		}
		c.topics = append(c.topics, topic)
		var sb strings.Builder
		fmt.Fprintf(&sb, "# 卷%d\n\n", b+1)
		for s := 0; s < perBook && b*perBook+s < n; s++ {
			fmt.Fprintf(&sb, "## 第%d节\n\n%s\n\n", s+1, text(r, z, c.vocab, topic))
		}
		c.books = append(c.books, sb.String())
	}
	return c
}

// queries returns n queries: two topic words of a book and one of the
// commonest words, space-separated.
func (c *corpus) queries(n int) []string {
	out := make([]string, n)
	for i := range out {
		t := c.topics[c.r.IntN(len(c.topics))]
		out[i] = t[c.r.IntN(len(t))] + " " + t[c.r.IntN(len(t))] + " " + c.vocab[c.r.IntN(commonWords)]
	}
	return out
}

// vocab is the fixed 6000-word vocabulary (knowledge/storetest's).
func vocab() []string { return zipfcorpus.Vocab(vocabSize) }

// text writes about sectionLen characters, ending with a full stop.
func text(r *rand.Rand, z *rand.Zipf, vocab, topic []string) string {
	return zipfcorpus.Text(r, z, vocab, topic, topicMix, sectionLen) + "。"
}
