package curate

import (
	"math"
	"strings"
	"unicode"
)

// Agreement between two texts of one work (two editions, or a work and a
// copy of it) is measured on their normalised letters and digits: a k-gram
// found once in the other text anchors an aligned stretch, the stretch is
// followed character by character, and after a difference the two texts
// are brought back in step at the next anchor a few characters on. The gap
// between is a disagreement, counted as its edit distance (a swap of two
// characters counts one). Each disagreement is laid on the side whose
// reading is the less likely: the character bigrams of both texts make a
// small model, and a reading whose bigrams occur elsewhere in the two
// texts beats one whose bigrams occur nowhere else, as a true reading
// recurs through a book and a misprint or an OCR error does not.

const (
	// alignWindow is how far past a difference the next anchor is looked
	// for; a wider gap ends the aligned stretch.
	alignWindow = 32
	// blameMargin is the difference of mean log bigram counts past which
	// one reading is judged the less likely.
	blameMargin = 0.5
	// maxExamples is how many disagreements are quoted per side.
	maxExamples = 3
)

// normText is a text reduced to lowercased letters and digits, with the
// position of each kept rune in the original.
type normText struct {
	r   []rune
	pos []int32
	// orig is the original text, for quoting.
	orig []rune
}

func normalize(text string) normText {
	orig := []rune(text)
	n := normText{orig: orig, r: make([]rune, 0, len(orig)), pos: make([]int32, 0, len(orig))}
	for i, r := range orig {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			n.r = append(n.r, unicode.ToLower(r))
			n.pos = append(n.pos, int32(i))
		}
	}
	return n
}

// kFor is the anchor length: a Han, kana or Hangul character carries about
// a word, a Latin letter a fifth of one.
func kFor(script string) int {
	switch script {
	case "zh", "ja", "ko":
		return 8
	}
	return 24
}

// pairResult is the agreement of texts a and b.
type pairResult struct {
	// Compared counts the characters of a inside aligned stretches, Differ
	// the characters that differ there.
	Compared, Differ int
	// BlameA and BlameB count the differing characters laid on each side;
	// the rest are readings neither model prefers (textual variants).
	BlameA, BlameB int
	// ExamplesA quote a's less likely readings, ExamplesB b's.
	ExamplesA, ExamplesB []string
	// EndA and EndB are how far (in normalised characters) the last
	// aligned stretch reached in each text; LenA and LenB their lengths.
	EndA, EndB, LenA, LenB int
}

func gramHash(r []rune) uint64 {
	h := uint64(14695981039346656037)
	for _, c := range r {
		h ^= uint64(c)
		h *= 1099511628211
	}
	return h
}

// align measures the agreement of a and b with anchors of k characters.
func align(a, b normText, k int) pairResult {
	res := pairResult{LenA: len(a.r), LenB: len(b.r)}
	if len(a.r) < k || len(b.r) < k {
		return res
	}
	// Anchors: k-grams that occur once in b.
	idx := make(map[uint64]int32, len(b.r))
	for j := 0; j+k <= len(b.r); j++ {
		h := gramHash(b.r[j : j+k])
		if _, dup := idx[h]; dup {
			idx[h] = -1
		} else {
			idx[h] = int32(j)
		}
	}
	anchor := func(i int) int {
		if i+k > len(a.r) {
			return -1
		}
		j, ok := idx[gramHash(a.r[i:i+k])]
		if !ok || j < 0 || !runesEqual(a.r[i:i+k], b.r[int(j):int(j)+k]) {
			return -1
		}
		return int(j)
	}
	bg := newBigrams(a.r, b.r)
	type gap struct{ i0, i1, j0, j1 int }
	minRun := 4 * k
	i := 0
	for i+k <= len(a.r) {
		j := anchor(i)
		if j < 0 {
			i++
			continue
		}
		matched, startI := 0, i
		var gaps []gap
		for {
			for i < len(a.r) && j < len(b.r) && a.r[i] == b.r[j] {
				i, j, matched = i+1, j+1, matched+1
			}
			if i >= len(a.r) || j >= len(b.r) {
				break
			}
			// Back in step at the next anchor within the window.
			next := false
			for di := 0; di <= alignWindow && i+di+k <= len(a.r); di++ {
				if jj := anchor(i + di); jj > j && jj <= j+alignWindow {
					gaps = append(gaps, gap{i, i + di, j, jj})
					i, j, next = i+di, jj, true
					break
				} else if jj == j && di > 0 {
					// a has extra characters: b goes on where a does.
					gaps = append(gaps, gap{i, i + di, j, j})
					i, next = i+di, true
					break
				}
			}
			if !next {
				break
			}
		}
		if matched < minRun {
			// Too short to be the same passage: a chance match.
			i = startI + 1
			continue
		}
		res.Compared += i - startI
		res.EndA, res.EndB = max(res.EndA, i), max(res.EndB, j)
		for _, g := range gaps {
			ga, gb := a.r[g.i0:g.i1], b.r[g.j0:g.j1]
			d := editDistance(ga, gb)
			if d == 0 {
				continue
			}
			res.Differ += d
			switch blame(bg, a.r, b.r, g.i0, g.i1, g.j0, g.j1) {
			case 1:
				res.BlameA += d
				if len(res.ExamplesA) < maxExamples {
					res.ExamplesA = append(res.ExamplesA, quotePair(a, g.i0, g.i1, b, g.j0, g.j1))
				}
			case 2:
				res.BlameB += d
				if len(res.ExamplesB) < maxExamples {
					res.ExamplesB = append(res.ExamplesB, quotePair(b, g.j0, g.j1, a, g.i0, g.i1))
				}
			}
		}
	}
	return res
}

func runesEqual(a, b []rune) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// editDistance is the optimal-string-alignment distance: insertions,
// deletions, substitutions and swaps of neighbours cost one each.
func editDistance(a, b []rune) int {
	if len(a) == 0 {
		return len(b)
	}
	if len(b) == 0 {
		return len(a)
	}
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}

// bigrams counts the character bigrams of two texts.
type bigrams map[uint64]int32

func newBigrams(texts ...[]rune) bigrams {
	m := bigrams{}
	for _, t := range texts {
		for i := 0; i+1 < len(t); i++ {
			m[uint64(t[i])<<32|uint64(t[i+1])]++
		}
	}
	return m
}

// plausibility is the mean log count of the bigrams of s.
func (m bigrams) plausibility(s []rune) float64 {
	if len(s) < 2 {
		return 0
	}
	sum := 0.0
	for i := 0; i+1 < len(s); i++ {
		sum += math.Log(float64(m[uint64(s[i])<<32|uint64(s[i+1])]) + 0.5)
	}
	return sum / float64(len(s)-1)
}

// blame says which reading of a gap is the less likely: 1 for a's, 2 for
// b's, 0 for neither. Each reading is taken with one character of the
// shared context on each side.
func blame(m bigrams, a, b []rune, i0, i1, j0, j1 int) int {
	withCtx := func(t []rune, s, e int) []rune {
		lo, hi := max(0, s-1), min(len(t), e+1)
		return t[lo:hi]
	}
	pa, pb := m.plausibility(withCtx(a, i0, i1)), m.plausibility(withCtx(b, j0, j1))
	switch {
	case pb-pa > blameMargin:
		return 1
	case pa-pb > blameMargin:
		return 2
	}
	return 0
}

// quotePair quotes x's reading of a gap and y's, with two characters of
// context from the original texts: 「参夭地」 where the other has 「参天地」.
func quotePair(x normText, x0, x1 int, y normText, y0, y1 int) string {
	return "「" + quote(x, x0, x1) + "」 where the other has 「" + quote(y, y0, y1) + "」"
}

func quote(t normText, s, e int) string {
	lo, hi := max(0, s-2), min(len(t.r), e+2)
	if lo >= hi {
		return ""
	}
	from, to := int(t.pos[lo]), int(t.pos[hi-1])+1
	q := strings.Join(strings.Fields(string(t.orig[from:to])), " ")
	if r := []rune(q); len(r) > 40 {
		q = string(r[:40]) + "…"
	}
	return q
}
