// Command curatebench measures `vibe curate` on a generated library at
// several sizes: for each size it writes N Markdown books (bench/searchbench's
// books: the same generator, seed and file names, about 20,000 characters
// of Zipf-distributed words each, every book favouring its own topic
// words) plus planted near-duplicates, lists the directory in the theme's
// curate.yaml, and runs, each as a child process of the given binary
// (offline):
//
//  1. `vibe curate gen` on an empty cache (the first run),
//  2. the same again with nothing changed (the re-run),
//  3. the same after one more book and one more near-duplicate of an
//     earlier book are added (the incremental run).
//
// Each run's CPU (user + system of the child), wall time and peak resident
// memory are printed with the machine's load average at the start and end
// of the size, and so are the run's decisions read from sources.lock.json
// (kept, dropped as near-duplicates, sources graded with an agreement) and
// the agreements cached in .vibe/cache/curate. The planted near-duplicates:
// every 25th book gets an edited copy, named after it (book00024-ed.md,
// gathered just before book00024.md, which is then the one dropped when
// the two are near-duplicates), with a share of its letters replaced
// that gives a Jaccard similarity of 5-character shingles of about,
// cycling through 0.95, 0.9, 0.85, 0.8, 0.75 and 0.6 (the default
// near-duplicate threshold is 0.8).
//
//	go build -o bin/vibe ./cmd/vibe
//	go run ./bench/curatebench -vibe bin/vibe -sizes 100,400,1500
//
// -timeout bounds each run (a binary that compares every pair of sources
// does not finish at 1,500 books in minutes): a run past it is killed and
// printed as such, with the agreements it had cached by then.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode"

	"github.com/vibelife/vibe/internal/zipfcorpus"
)

func main() {
	vibe := flag.String("vibe", "vibe", "the vibe binary")
	sizes := flag.String("sizes", "100,400,1500", "library sizes in books")
	work := flag.String("work", "", "work directory (default: a new temporary one); each size's workspace is written anew")
	timeout := flag.Duration("timeout", 20*time.Minute, "bound on each curate run")
	flag.Parse()
	if *work == "" {
		d, err := os.MkdirTemp("", "vibe-curatebench-")
		if err != nil {
			fail(err)
		}
		*work = d
	}
	abs, err := filepath.Abs(*vibe)
	if err != nil {
		fail(err)
	}
	fmt.Println("| books (+ planted) | first run CPU / wall s | peak RSS MB | re-run CPU / wall s | +1 book, +1 copy CPU / wall s | kept, near-dup dropped | graded with an agreement | agreements cached | load (start - end) |")
	fmt.Println("|---:|---:|---:|---:|---:|---:|---:|---:|---|")
	for _, f := range strings.Split(*sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			fail(fmt.Errorf("-sizes: %q is not a positive number", f))
		}
		if err := runSize(abs, filepath.Join(*work, strconv.Itoa(n)), n, *timeout); err != nil {
			fail(fmt.Errorf("size %d: %w", n, err))
		}
	}
	fmt.Fprintf(os.Stderr, "workspaces in %s\n", *work)
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "curatebench:", err)
	os.Exit(1)
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

// timing is one curate run; timedOut says it was killed at the bound,
// skipped that it did not run (an earlier run was killed).
type timing struct {
	cpu, wall, rssMB  float64
	timedOut, skipped bool
}

func (t timing) String() string {
	if t.skipped {
		return "-"
	}
	if t.timedOut {
		return fmt.Sprintf("killed at %.0f s (CPU %.0f)", t.wall, t.cpu)
	}
	return fmt.Sprintf("%.2f / %.2f", t.cpu, t.wall)
}

// curate runs `vibe curate gen` in ws.
func curate(vibe, ws string, timeout time.Duration) (timing, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, vibe, "-w", ws, "--quiet", "curate", "gen")
	cmd.Env = append(os.Environ(), "VIBE_LLM_PROVIDER=offline")
	cmd.Stderr = os.Stderr
	start := time.Now()
	err := cmd.Run()
	t := timing{wall: time.Since(start).Seconds()}
	if ps := cmd.ProcessState; ps != nil {
		t.cpu = (ps.UserTime() + ps.SystemTime()).Seconds()
		if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
			t.rssMB = float64(ru.Maxrss) / 1024
		}
	}
	if ctx.Err() != nil {
		t.timedOut = true
		return t, nil
	}
	if err != nil {
		return t, fmt.Errorf("%s: %w", strings.Join(cmd.Args, " "), err)
	}
	return t, nil
}

func runSize(vibe, ws string, n int, timeout time.Duration) error {
	if err := os.RemoveAll(ws); err != nil {
		return err
	}
	books := filepath.Join(ws, "books")
	if err := os.MkdirAll(books, 0o755); err != nil {
		return err
	}
	lib := newLibrary(n + 1)
	planted := 0
	for i, b := range lib.books[:n] {
		if err := write(books, i, b); err != nil {
			return err
		}
		if (i+1)%plantEvery == 0 {
			if err := writeCopy(books, i, b, planted); err != nil {
				return err
			}
			planted++
		}
	}
	theme := filepath.Join(ws, "knowledge", "gen")
	if err := os.MkdirAll(theme, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(theme, "curate.yaml"), []byte("sources:\n  - books\n"), 0o644); err != nil {
		return err
	}
	load := loadavg()
	first, err := curate(vibe, ws, timeout)
	if err != nil {
		return err
	}
	again, added := timing{skipped: true}, timing{skipped: true}
	var dec decisions
	if !first.timedOut {
		if again, err = curate(vibe, ws, timeout); err != nil {
			return err
		}
		// One more book (the next of the generator) and one more copy of
		// an early book.
		if err := write(books, n, lib.books[n]); err != nil {
			return err
		}
		if err := writeCopy(books, 1, lib.books[1], 0); err != nil {
			return err
		}
		if added, err = curate(vibe, ws, timeout); err != nil {
			return err
		}
		if dec, err = readDecisions(filepath.Join(theme, "source", "sources.lock.json")); err != nil {
			return err
		}
	}
	agreements := countAgreements(filepath.Join(ws, ".vibe", "cache", "curate"))
	decCell, gradedCell := "-", "-"
	if !first.timedOut {
		decCell = fmt.Sprintf("%d, %d", dec.kept, dec.nearDup)
		gradedCell = strconv.Itoa(dec.withAgreement)
	}
	fmt.Printf("| %d (+ %d) | %s | %.0f | %s | %s | %s | %s | %d | %s - %s |\n",
		n, planted, first, first.rssMB, again, added, decCell, gradedCell, agreements, load, loadavg())
	return nil
}

func write(dir string, i int, text string) error {
	return os.WriteFile(filepath.Join(dir, fmt.Sprintf("book%05d.md", i)), []byte(text), 0o644)
}

// plantEvery is how often a book gets a near-duplicate.
const plantEvery = 25

// plantLevels are the estimated Jaccard similarities the copies are made
// at, in turn.
var plantLevels = []float64{0.95, 0.9, 0.85, 0.8, 0.75, 0.6}

// writeCopy writes book i's k-th planted near-duplicate.
func writeCopy(dir string, i int, text string, k int) error {
	name := fmt.Sprintf("book%05d-ed.md", i)
	if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
		name = fmt.Sprintf("book%05d-ed2.md", i)
	}
	r := rand.New(rand.NewPCG(uint64(i), uint64(k)))
	return os.WriteFile(filepath.Join(dir, name), []byte(edit(text, plantLevels[k%len(plantLevels)], r)), 0o644)
}

// edit replaces letters of text at random by other Han characters so that
// the Jaccard similarity of the two texts' 5-letter shingle sets is about
// j: with a share p of letters replaced, a shingle survives with
// probability q = (1-p)^5, and J = q / (2 - q).
func edit(text string, j float64, r *rand.Rand) string {
	q := 2 * j / (1 + j)
	p := 1 - math.Pow(q, 0.2)
	out := []rune(text)
	for i, c := range out {
		if (unicode.IsLetter(c) || unicode.IsDigit(c)) && r.Float64() < p {
			out[i] = rune(0x4E00 + r.IntN(3500))
		}
	}
	return string(out)
}

// decisions are what a run's lock says.
type decisions struct {
	kept, nearDup, withAgreement int
}

func readDecisions(lockPath string) (decisions, error) {
	var lock struct {
		Sources []struct {
			Status      string `json:"status"`
			Reason      string `json:"reason"`
			Credibility *struct {
				Agreement []json.RawMessage `json:"agreement"`
			} `json:"credibility"`
		} `json:"sources"`
	}
	b, err := os.ReadFile(lockPath)
	if err != nil {
		return decisions{}, err
	}
	if err := json.Unmarshal(b, &lock); err != nil {
		return decisions{}, err
	}
	var d decisions
	for _, e := range lock.Sources {
		if e.Status == "kept" {
			d.kept++
		}
		if strings.HasPrefix(e.Reason, "near-duplicate of ") {
			d.nearDup++
		}
		if e.Credibility != nil && len(e.Credibility.Agreement) > 0 {
			d.withAgreement++
		}
	}
	return d, nil
}

func countAgreements(dir string) int {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return 0
	}
	n := 0
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), "agree-") {
			n++
		}
	}
	return n
}

// library is bench/searchbench's generated theme, by books: the same
// vocabulary, seed and parameters, so book i is searchbench's book i.
type library struct {
	books []string
}

const (
	vocabSize  = 6000
	topicWords = 24
	topicMix   = 0.2
	sectionLen = 340
	perBook    = 50
	corpusSeed = 20261127
)

func newLibrary(n int) *library {
	r := rand.New(rand.NewPCG(corpusSeed, 7))
	vocab := zipfcorpus.Vocab(vocabSize)
	z := rand.NewZipf(r, 1.07, 2, uint64(len(vocab)-1))
	l := &library{}
	for b := 0; b < n; b++ {
		var topic []string
		for i := 0; i < topicWords; i++ {
			topic = append(topic, vocab[50+r.IntN(2000)])
		}
		var sb strings.Builder
		fmt.Fprintf(&sb, "# 卷%d\n\n", b+1)
		for s := 0; s < perBook; s++ {
			fmt.Fprintf(&sb, "## 第%d节\n\n%s。\n\n", s+1, zipfcorpus.Text(r, z, vocab, topic, topicMix, sectionLen))
		}
		l.books = append(l.books, sb.String())
	}
	return l
}
