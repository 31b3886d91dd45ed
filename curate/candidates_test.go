package curate

import (
	"context"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/vibelife/vibe/internal/zipfcorpus"
)

func randomSig(r *rand.Rand) signature {
	var s signature
	for i := range s {
		s[i] = r.Uint64()
	}
	return s
}

// TestBandIndexFindsEverySignatureAtTheThreshold: for thresholds across
// the range, a signature differing from the query in d slots is yielded
// whenever similarity reaches the threshold, for every d and with the
// differences placed the worst way (one in each band, first) or at
// random; each id is yielded once; and the bands are no wider than they
// need be: one difference more, placed one per band, is not a candidate.
func TestBandIndexFindsEverySignatureAtTheThreshold(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, th := range []float64{DefaultNearDuplicate, 0.5, sameWorkSimilarity, 0.95, 0.9, 1, 0, -0.5, 1.5, 0.33} {
		x := newBandIndex(th)
		q := randomSig(r)
		var sigs []signature
		for d := 0; d <= minhashSize; d++ {
			for _, spread := range []bool{true, false} {
				s := q
				var slots []int
				if spread {
					for _, b := range x.bands {
						slots = append(slots, b[0])
					}
					for _, p := range r.Perm(minhashSize) {
						if !slices.Contains(slots, p) {
							slots = append(slots, p)
						}
					}
				} else {
					slots = r.Perm(minhashSize)
				}
				for _, p := range slots[:d] {
					s[p] = r.Uint64()
				}
				x.add(int32(len(sigs)), &s)
				sigs = append(sigs, s)
			}
		}
		got := map[int32]int{}
		x.candidates(&q, func(id int32) { got[id]++ })
		for id, s := range sigs {
			sim := similarity(q, s)
			if sim >= th && got[int32(id)] != 1 {
				t.Errorf("threshold %.2f: a signature at similarity %.3f was yielded %d times, want once", th, sim, got[int32(id)])
			}
		}
		for id, n := range got {
			if n != 1 {
				t.Errorf("threshold %.2f: id %d yielded %d times", th, id, n)
			}
		}
		if s := minSameSlots(th); s > 0 && s <= minhashSize {
			if len(x.bands) != minhashSize-s+1 {
				t.Errorf("threshold %.2f: %d bands, want %d", th, len(x.bands), minhashSize-s+1)
			}
			// d = len(bands), spread: every band broken, and similarity below th.
			id := int32(2 * len(x.bands))
			if sim := similarity(q, sigs[id]); sim >= th || got[id] != 0 {
				t.Errorf("threshold %.2f: one difference in every band (similarity %.3f) was a candidate %d times", th, sim, got[id])
			}
		}
		// Unrelated signatures share no band.
		if th > 0 && th <= 1 {
			y := newBandIndex(th)
			for i := 0; i < 500; i++ {
				s := randomSig(r)
				y.add(int32(i), &s)
			}
			n := 0
			y.candidates(&q, func(int32) { n++ })
			if n != 0 {
				t.Errorf("threshold %.2f: %d candidates among 500 unrelated signatures", th, n)
			}
		}
	}
}

// TestSimilarPairsIsAllPairs compares similarPairs with comparing every
// pair, on signatures whose slots often hold a value many signatures share
// (as common shingles do), in groups planted at agreements around each
// threshold.
func TestSimilarPairsIsAllPairs(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	common := randomSig(r)
	var sigs []*signature
	for g := 0; g < 60; g++ {
		base := randomSig(r)
		for j := range base {
			if r.IntN(4) == 0 { // a quarter of the slots hold the common value
				base[j] = common[j]
			}
		}
		for v := 0; v < 4; v++ {
			s := base
			for _, p := range r.Perm(minhashSize)[:r.IntN(minhashSize+1)] {
				s[p] = r.Uint64()
			}
			sigs = append(sigs, &s)
		}
		if g%7 == 0 {
			sigs = append(sigs, nil)
		}
	}
	for _, th := range []float64{sameWorkSimilarity, DefaultNearDuplicate, 0.5, 0.1, 1, 0, 1.5} {
		var want [][2]int32
		for y := range sigs {
			for x := range y {
				if sigs[x] != nil && sigs[y] != nil && similarity(*sigs[x], *sigs[y]) >= th {
					want = append(want, [2]int32{int32(x), int32(y)})
				}
			}
		}
		want = sortPairs(want)
		got := similarPairs(sigs, th)
		if !reflect.DeepEqual(got, want) && !(len(got) == 0 && len(want) == 0) {
			t.Errorf("threshold %.2f: %d pairs, all-pairs finds %d", th, len(got), len(want))
		}
		t.Logf("threshold %.2f: %d pairs of %d", th, len(got), len(sigs)*(len(sigs)-1)/2)
	}
}

// TestNamePairs: names holding one another pair up, as sameTitle reads
// them; a name with more than maxNamesakes namesakes pairs with none.
func TestNamePairs(t *testing.T) {
	names := []string{"子平真诠.md", "子平真诠-ocr.md", "books/子平真诠-1935.pdf", "滴天髓.md", "a.md", "abab.txt", "ab.txt"}
	for i := 1; i <= 12; i++ {
		names = append(names, fmt.Sprintf("book%05d.md", i))
	}
	names = append(names, "handbook.md", "notes.md")
	keys := make([]string, len(names))
	for i, n := range names {
		keys[i] = titleKey(n)
	}
	got, generic := namePairs(keys, func(i int) bool { return names[i] != "notes.md" })
	// 子平真诠-1935.pdf reads 子平真诠, as sameTitle takes only letters.
	want := [][2]int32{{0, 1}, {0, 2}, {1, 2}, {5, 6}}
	if !reflect.DeepEqual(sortPairs(got), want) {
		t.Errorf("pairs %v, want %v", got, want)
	}
	if !generic["book"] || !generic["handbook"] || generic["子平真诠"] {
		t.Errorf("generic %v: want book (12 files) and handbook (which holds book) only", generic)
	}
	// The same pairs as sameTitle over every pair.
	var all [][2]int32
	items := make([]gradeItem, len(names))
	for i, n := range names {
		items[i].c.name = n
	}
	for y := range items {
		for x := range y {
			if names[x] != "notes.md" && names[y] != "notes.md" && sameTitle(items[x], items[y], generic) {
				all = append(all, [2]int32{int32(x), int32(y)})
			}
		}
	}
	if !reflect.DeepEqual(all, want) {
		t.Errorf("sameTitle over every pair gives %v, the index %v", all, want)
	}
}

// plantedLibrary writes n generated books (30 sections of Zipf words, as
// bench/curatebench writes) into dir as vol%03d.md, and after every
// book in plantAt an edited copy (vol%03d.v2.md) with about the Jaccard
// similarity levels[k] to it; it returns the copies' exact similarities
// by name.
func plantedLibrary(t *testing.T, dir string, n int, plantAt []int, levels []float64) map[string]float64 {
	t.Helper()
	r := rand.New(rand.NewPCG(20261128, 1))
	vocab := zipfcorpus.Vocab(6000)
	z := rand.NewZipf(r, 1.07, 2, uint64(len(vocab)-1))
	exact := map[string]float64{}
	for b := 0; b < n; b++ {
		var topic []string
		for i := 0; i < 24; i++ {
			topic = append(topic, vocab[50+r.IntN(2000)])
		}
		var sb strings.Builder
		fmt.Fprintf(&sb, "# 卷%d\n\n", b+1)
		for s := 0; s < 30; s++ {
			fmt.Fprintf(&sb, "## 第%d节\n\n%s。\n\n", s+1, zipfcorpus.Text(r, z, vocab, topic, 0.2, 340))
		}
		text := sb.String()
		write(t, dir, fmt.Sprintf("vol%03d.md", b), text)
		if k := slices.Index(plantAt, b); k >= 0 {
			cp := editTo(text, levels[k], rand.New(rand.NewPCG(uint64(b), 9)))
			name := fmt.Sprintf("vol%03d.v2.md", b)
			write(t, dir, name, cp)
			exact[name] = jaccard(text, cp)
		}
	}
	return exact
}

// editTo replaces letters at random by other Han characters so that the
// 5-letter shingle sets keep about Jaccard similarity j: a share p of
// letters replaced leaves a shingle with probability q = (1-p)^5, and
// J = q / (2 - q).
func editTo(text string, j float64, r *rand.Rand) string {
	p := 1 - math.Pow(2*j/(1+j), 0.2)
	out := []rune(text)
	for i, c := range out {
		if (unicode.IsLetter(c) || unicode.IsDigit(c)) && r.Float64() < p {
			out[i] = rune(0x4E00 + r.IntN(3500))
		}
	}
	return string(out)
}

// jaccard is the exact Jaccard similarity of the texts' shingle sets, as
// sketch takes them.
func jaccard(a, b string) float64 {
	set := func(s string) map[string]bool {
		var norm []rune
		for _, r := range strings.ToLower(s) {
			if unicode.IsLetter(r) || unicode.IsDigit(r) {
				norm = append(norm, r)
			}
		}
		m := map[string]bool{}
		for i := 0; i+5 <= len(norm); i++ {
			m[string(norm[i:i+5])] = true
		}
		return m
	}
	sa, sb := set(a), set(b)
	both := 0
	for k := range sa {
		if sb[k] {
			both++
		}
	}
	return float64(both) / float64(len(sa)+len(sb)-both)
}

// allPairsDecisions is what comparing every pair decides for a lock's
// entries, in order: for each entry curate measured (kept, or dropped as a
// near-duplicate), the first kept one before it whose signature is
// similar enough (the loop Run had before the band index), and the pairs
// of graded items the old grading loop compared, read with sameTitle.
func allPairsDecisions(t *testing.T, root string, entries []Entry, threshold float64, sketches map[string]signature) (nearDup map[string]string, pairs map[[2]string]bool) {
	t.Helper()
	type doc struct {
		origin, name string
		sig          signature
		witness      bool
	}
	var kept, items []doc
	nearDup = map[string]string{}
	for _, e := range entries {
		if e.Status != StatusKept && !strings.HasPrefix(e.Reason, nearDuplicatePrefix) {
			continue
		}
		b, err := os.ReadFile(filepath.Join(root, e.Origin))
		if err != nil {
			t.Fatal(err)
		}
		sig, ok := sketches[string(b)]
		if !ok {
			sig, _ = sketch(string(b))
			sketches[string(b)] = sig
		}
		d := doc{origin: e.Origin, name: filepath.Base(e.Origin), sig: sig}
		for _, k := range kept {
			if similarity(sig, k.sig) >= threshold {
				nearDup[e.Origin] = k.origin
				d.witness = true
				break
			}
		}
		if !d.witness {
			kept = append(kept, d)
		}
		items = append(items, d)
	}
	keys := make([]string, len(items))
	gi := make([]gradeItem, len(items))
	for i, d := range items {
		keys[i] = titleKey(d.name)
		gi[i].c.name = d.name
	}
	_, generic := namePairs(keys, func(int) bool { return true })
	pairs = map[[2]string]bool{}
	for x := range items {
		for y := x + 1; y < len(items); y++ {
			a, b := items[x], items[y]
			if a.witness && b.witness {
				continue
			}
			if similarity(a.sig, b.sig) >= sameWorkSimilarity || sameTitle(gi[x], gi[y], generic) {
				pairs[[2]string{a.origin, b.origin}] = true
			}
		}
	}
	return nearDup, pairs
}

// agreedPairs returns the pairs a run's lock records an agreement for, as
// origins in lock order.
func agreedPairs(entries []Entry) map[[2]string]bool {
	pos := map[string]int{}
	for i, e := range entries {
		pos[e.Origin] = i
	}
	out := map[[2]string]bool{}
	for _, e := range entries {
		if e.Credibility == nil {
			continue
		}
		for _, a := range e.Credibility.Agreement {
			x, y := e.Origin, a.With
			if pos[x] > pos[y] {
				x, y = y, x
			}
			out[[2]string{x, y}] = true
		}
	}
	return out
}

func countAgreeFiles(t *testing.T, dir string) int {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), "agree-") {
			n++
		}
	}
	return n
}

// TestPlantedNearDuplicatesAtScale curates a generated library of 150
// books (all named vol%03d: a naming scheme, not 150 titles of one work)
// with near-duplicates planted at Jaccard similarities from 0.97 down to
// 0.15, and checks:
//
//   - the near-duplicates dropped, and what for, are those of comparing
//     every new source with every kept one (the band index is exact on
//     the MinHash estimate: candidates.go);
//   - every copy planted at a similarity of 0.9 or more (comfortably above
//     the threshold 0.8: the estimate falls below 0.8 for a pair truly at
//     0.9 with odds of 1 in 2,800, by the binomial law of its 128 slots)
//     is dropped as a
//     near-duplicate of its original, and none at 0.6 or below is;
//   - the pairs compared for their agreement are those of comparing every
//     pair, and only those are aligned (one cached agreement each);
//   - a re-run extracts nothing and aligns nothing; adding a book and a
//     copy of an earlier one extracts those two and aligns only the pairs
//     they make.
func TestPlantedNearDuplicatesAtScale(t *testing.T) {
	root := t.TempDir()
	books := filepath.Join(root, "books")
	levels := []float64{0.97, 0.95, 0.93, 0.9, 0.9, 0.88, 0.86, 0.84, 0.82, 0.81, 0.8, 0.8, 0.79, 0.78, 0.76, 0.74, 0.7, 0.6, 0.5, 0.4, 0.3, 0.25, 0.2, 0.15}
	var at []int
	for i := range levels {
		at = append(at, 3+6*i)
	}
	exact := plantedLibrary(t, books, 150, at, levels)
	cache := filepath.Join(root, ".vibe/cache/curate")
	calls := 0
	counting := func(ctx context.Context, p string) (string, error) { calls++; return fakeExtract(ctx, p) }
	opts := Options{Root: root, SourceDir: filepath.Join(root, "knowledge/gen/source"), Sources: []Spec{{Source: "books"}},
		Now: fixedNow, CacheDir: cache, Extract: counting}

	sketches := map[string]signature{} // by text, for allPairsDecisions
	check := func(res Result) (pairs map[[2]string]bool) {
		t.Helper()
		wantDup, wantPairs := allPairsDecisions(t, root, res.Lock.Sources, DefaultNearDuplicate, sketches)
		gotDup := map[string]string{}
		for _, e := range res.Lock.Sources {
			if of, ok := nearDuplicateOf(e.Reason); ok {
				gotDup[e.Origin] = of
			}
		}
		if !reflect.DeepEqual(gotDup, wantDup) {
			t.Errorf("near-duplicates %v, comparing every pair gives %v", gotDup, wantDup)
		}
		// Pairs whose alignment found nothing record no agreement, so the
		// recorded ones are a subset; the cache holds one per pair aligned.
		for p := range agreedPairs(res.Lock.Sources) {
			if !wantPairs[p] {
				t.Errorf("an agreement between %s and %s, a pair comparing every pair does not compare", p[0], p[1])
			}
		}
		return wantPairs
	}

	res, err := Run(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	pairs := check(res)
	if n := countAgreeFiles(t, cache); n != len(pairs) {
		t.Errorf("%d pairs aligned, comparing every pair compares %d", n, len(pairs))
	}
	dropped := map[string]bool{}
	for _, e := range res.Lock.Sources {
		if _, ok := nearDuplicateOf(e.Reason); ok {
			dropped[filepath.Base(e.Origin)] = true
		}
	}
	names := make([]string, 0, len(exact))
	for n := range exact {
		names = append(names, n)
	}
	slices.SortFunc(names, func(a, b string) int { return int(math.Copysign(1, exact[b]-exact[a])) })
	for _, n := range names {
		j := exact[n]
		t.Logf("planted %s: exact Jaccard %.3f, dropped as a near-duplicate: %v", n, j, dropped[n])
		switch {
		case j >= 0.9 && !dropped[n]:
			t.Errorf("%s (Jaccard %.3f, comfortably above %.2f) was not found", n, j, DefaultNearDuplicate)
		case j <= 0.6 && dropped[n]:
			t.Errorf("%s (Jaccard %.3f) was dropped as a near-duplicate", n, j)
		}
	}
	if len(pairs) < len(levels)-3 {
		t.Errorf("only %d pairs compared for agreement: the planted copies should make most of %d", len(pairs), len(levels))
	}

	// Nothing changed: nothing extracted, nothing aligned.
	before, agreeBefore := calls, countAgreeFiles(t, cache)
	again, err := Run(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if calls != before || countAgreeFiles(t, cache) != agreeBefore || again.Changed {
		t.Errorf("re-run: %d extractions, %d alignments, changed %v; want none", calls-before, countAgreeFiles(t, cache)-agreeBefore, again.Changed)
	}
	if !reflect.DeepEqual(again.Lock, res.Lock) {
		t.Error("re-run: the lock differs")
	}

	// One more book, one more copy of an early one.
	b, err := os.ReadFile(filepath.Join(books, "vol010.md"))
	if err != nil {
		t.Fatal(err)
	}
	write(t, books, "vol010.v2.md", editTo(string(b), 0.9, rand.New(rand.NewPCG(7, 7))))
	write(t, books, "vol999.md", strings.Repeat("另一部书，讲的是别的事情，和前面的都不一样。", 200))
	added, err := Run(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	after := check(added)
	newPairs := 0
	for p := range after {
		if !pairs[p] {
			newPairs++
		}
	}
	// The two new files, and the text of each earlier source one of the
	// new pairs aligns (the cache keeps texts' measures, not the texts).
	if n := calls - before; n < 2 || n > 2+newPairs {
		t.Errorf("adding two files extracted %d texts, want the 2 and at most %d more", n, newPairs)
	}
	if n := countAgreeFiles(t, cache) - agreeBefore; n != newPairs || newPairs == 0 {
		t.Errorf("adding two files aligned %d pairs; the pairs they make are %d", n, newPairs)
	}
}

// sketchBefore is sketch as it was before it skipped repeated shingles and
// hashed them inline: the signatures must not change (they are cached, and
// the decisions rest on them).
func sketchBefore(text string) (signature, bool) {
	var norm []rune
	for _, r := range strings.ToLower(text) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			norm = append(norm, r)
		}
	}
	var sig signature
	for i := range sig {
		sig[i] = ^uint64(0)
	}
	const k = 5
	if len(norm) < k {
		return sig, false
	}
	buf := make([]byte, 0, 4*k)
	for i := 0; i+k <= len(norm); i++ {
		buf = buf[:0]
		for _, r := range norm[i : i+k] {
			buf = utf8.AppendRune(buf, r)
		}
		h := fnv.New64a()
		h.Write(buf)
		base := h.Sum64()
		for j := range sig {
			x := base ^ (uint64(j+1) * 0x9E3779B97F4A7C15)
			x ^= x >> 33
			x *= 0xff51afd7ed558ccd
			x ^= x >> 33
			if x < sig[j] {
				sig[j] = x
			}
		}
	}
	return sig, true
}

func TestSketchUnchanged(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	texts := []string{"", "abcd", "abcde", "ABCDE abcde", enText, zhText, "ÀÉÎ ö 𝔘𝔫𝔦 test 12345 ü İstanbul ǅ"}
	vocab := zipfcorpus.Vocab(6000)
	z := rand.NewZipf(r, 1.07, 2, uint64(len(vocab)-1))
	for i := 0; i < 20; i++ {
		texts = append(texts, zipfcorpus.Text(r, z, vocab, nil, 0, 2000+r.IntN(20000)))
		var b strings.Builder
		for n := r.IntN(3000); n > 0; n-- {
			b.WriteRune(rune(r.IntN(0x3000)))
		}
		texts = append(texts, b.String())
	}
	for i, text := range texts {
		got, gotOK := sketch(text)
		want, wantOK := sketchBefore(text)
		if got != want || gotOK != wantOK {
			t.Errorf("text %d: the signature changed", i)
		}
	}
}
