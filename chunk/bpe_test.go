package chunk

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"unicode/utf8"

	"github.com/pkoukk/tiktoken-go"
	"github.com/vibelife/vibe/internal/racetest"
)

// reference is tiktoken-go built from the same embedded ranks and pattern,
// the encoder the counter must agree with.
type reference struct {
	enc *tiktoken.Tiktoken
	cnt *counter
}

var (
	refOnce sync.Once
	refs    map[string]reference
	refErr  error
)

func references(t testing.TB) map[string]reference {
	t.Helper()
	refOnce.Do(func() {
		refs = map[string]reference{}
		for _, name := range []string{EncodingCL100K, EncodingO200K} {
			ranks, pat, err := loadRanks(name)
			if err != nil {
				refErr = err
				return
			}
			bpe, err := tiktoken.NewCoreBPE(ranks, map[string]int{}, pat)
			if err != nil {
				refErr = err
				return
			}
			enc := tiktoken.NewTiktoken(bpe, &tiktoken.Encoding{Name: name, PatStr: pat, MergeableRanks: ranks}, map[string]any{})
			refs[name] = reference{enc: enc, cnt: newCounter(ranks, name == EncodingO200K)}
		}
	})
	if refErr != nil {
		t.Fatal(refErr)
	}
	return refs
}

// tricky holds the cases where the pattern's alternatives interact:
// contractions in both cases, whitespace runs before letters, newlines and
// punctuation, numbers longer than three digits, marks, title case, CJK
// with ASCII, invalid UTF-8, and letters regexp2 could fold.
var tricky = []string{
	"", " ", "  ", "\n", " \n", "\n\n", "  \n  \n  x", "a  b", "a \t b", "a\u00a0b", "\u3000\u3000正文",
	"don't", "DON'T", "I'm", "we'RE", "they'Ve", "he'LL", "'s", "'sand", "x'", "''s", "it's'", "'ſ", "'K",
	"12345", "１２３４５", "a1b2", "3.14159", "v1.2.3", "¾½", "Ⅻ",
	"Hello World", "HELLOworld", "helloWORLD", "ǅemal", "ǅ", "ʰello", "e\u0301t\u0301", "\u0301abc", " \u0301abc",
	"...", " ...", "?!\n", "a/b//c\n\n", " //\n", "--\r\n\r\n", "\r\n", "\r", "x\r\n y",
	"子平真诠，八、论用神。", "八字用神，专求月令，以日干配月令地支。", "ABC中文def", "中文ABC", "《三命通会》卷一",
	"\xff\xfeabc", "a\x80b", "中\xe4文",
	"emoji 👍🏽 and 🇨🇳", "tab\there", "x\v\fy", "\u2028line\u2029", "\u0085next",
}

func TestCounterMatchesTiktoken(t *testing.T) {
	for name, r := range references(t) {
		for _, s := range tricky {
			if got, want := r.cnt.Count(s), len(r.enc.EncodeOrdinary(s)); got != want {
				t.Errorf("%s: Count(%q) = %d, tiktoken-go %d", name, s, got, want)
			}
		}
	}
}

// TestCounterOnTheCorpusBooks compares the counts of every paragraph, and
// of every file whole, of the corpus books with tiktoken-go's.
func TestCounterOnTheCorpusBooks(t *testing.T) {
	racetest.SequentialOnly(t)
	if testing.Short() {
		t.Skip("-short: the corpus comparison takes a while")
	}
	dir := corpusDir(t)
	files, _ := filepath.Glob(filepath.Join(dir, "*", "*.md"))
	more, _ := filepath.Glob(filepath.Join(dir, "html-expected", "*.html"))
	files = append(files, more...)
	if len(files) == 0 {
		t.Fatal("no corpus files")
	}
	for name, r := range references(t) {
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			text := string(data)
			if name == EncodingO200K && len(text) > 200_000 {
				text = text[:200_000] // the slow reference; cl100k covers the rest
				for !utf8.ValidString(text) {
					text = text[:len(text)-1]
				}
			}
			paras := strings.Split(text, "\n\n")
			bad := 0
			for _, p := range paras {
				if got, want := r.cnt.Count(p), len(r.enc.EncodeOrdinary(p)); got != want {
					bad++
					if bad <= 3 {
						t.Errorf("%s %s: paragraph %q: %d tokens, tiktoken-go %d", name, filepath.Base(f), trunc(p), got, want)
					}
				}
			}
			if got, want := r.cnt.Count(text), len(r.enc.EncodeOrdinary(text)); got != want {
				t.Errorf("%s %s: whole file %d tokens, tiktoken-go %d", name, filepath.Base(f), got, want)
			}
			t.Logf("%s %s: %d paragraphs, %d differ", name, filepath.Base(f), len(paras), bad)
		}
	}
}

func trunc(s string) string {
	if r := []rune(s); len(r) > 60 {
		return string(r[:60]) + "…"
	}
	return s
}

// FuzzCounter checks the counter against tiktoken-go on arbitrary text, in
// both encodings.
func FuzzCounter(f *testing.F) {
	for _, s := range tricky {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if len(s) > 4096 {
			return
		}
		for name, r := range references(t) {
			if got, want := r.cnt.Count(s), len(r.enc.EncodeOrdinary(s)); got != want {
				t.Fatalf("%s: Count(%q) = %d, tiktoken-go %d", name, s, got, want)
			}
		}
	})
}

// BenchmarkCount compares the counter with tiktoken-go on the paragraphs
// of 子平真诠 (Chinese) and of an English page of the corpus, reporting
// the process's CPU time per round (cpu-ms/op): on the shared machine wall
// time says more about the load than about the code.
func BenchmarkCount(b *testing.B) {
	dir := corpusDir(b)
	r := references(b)[EncodingCL100K]
	for _, f := range []string{filepath.Join(dir, "bazi", "子平真诠.md"), filepath.Join(dir, "html-expected", "readability-ietf-1.expected.html")} {
		data, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		paras := strings.Split(string(data), "\n\n")
		name := filepath.Base(f)
		b.Run(name+"/counter", func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			c := newCounter(r.cnt.ranks, false)
			c0 := cpuTime()
			for b.Loop() {
				c.cache = map[string]int{} // a cold cache each round
				for _, p := range paras {
					c.Count(p)
				}
			}
			b.ReportMetric(float64(cpuTime()-c0)/1e6/float64(b.N), "cpu-ms/op")
		})
		b.Run(name+"/tiktoken-go", func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			c0 := cpuTime()
			for b.Loop() {
				for _, p := range paras {
					r.enc.EncodeOrdinary(p)
				}
			}
			b.ReportMetric(float64(cpuTime()-c0)/1e6/float64(b.N), "cpu-ms/op")
		})
	}
}

// cpuTime is the process's user and system CPU time in nanoseconds.
func cpuTime() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
