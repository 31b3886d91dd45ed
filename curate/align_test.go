package curate

import (
	"math/rand/v2"
	"strings"
	"testing"
)

func TestEditDistanceCountsASwapOnce(t *testing.T) {
	for _, tt := range []struct {
		a, b string
		want int
	}{
		{"甲木", "木甲", 1}, {"参天", "参夭", 1}, {"君安", "君l安", 1}, {"", "ab", 2}, {"abc", "abc", 0},
	} {
		if got := editDistance([]rune(tt.a), []rune(tt.b)); got != tt.want {
			t.Errorf("%q %q: %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}

// TestAlignLaysDifferencesOnTheMisreading aligns a text with a copy that
// has one look-alike, one swap and one stray letter: three differences,
// each laid on the copy, whose readings occur nowhere else.
func TestAlignLaysDifferencesOnTheMisreading(t *testing.T) {
	// Words recur, as in a book, but no run of four words does.
	words := strings.Fields("甲木 参天 脱胎 要火 春金 秋土 火炽 乘龙 水宕 骑虎 地润 天和 植立 千古 乙木 虽柔 刲羊 解牛 怀丁 抱丙 跨凤 乘猴 虚湿 之地 骑马 亦忧 藤萝 系甲 可春 可秋")
	rng := rand.New(rand.NewPCG(1, 2))
	var b strings.Builder
	for i := range 600 {
		b.WriteString(words[rng.IntN(len(words))])
		if i%7 == 6 {
			b.WriteString("。")
		}
	}
	good := []rune(b.String())
	bad := append([]rune(nil), good...)
	// A look-alike (夭 for 天), a swap and a stray letter, far apart.
	at := func(from int, w string) int {
		i := strings.Index(string(bad[from:]), w)
		if i < 0 {
			t.Fatalf("%s not found", w)
		}
		return from + len([]rune(string(bad[from:])[:i]))
	}
	i := at(100, "参天")
	bad[i+1] = '夭'
	j := at(500, "甲木")
	bad[j], bad[j+1] = bad[j+1], bad[j]
	k := at(900, "千古")
	bad = append(bad[:k+1], append([]rune{'l'}, bad[k+1:]...)...)
	r := align(normalize(string(bad)), normalize(string(good)), 8)
	if r.Differ != 3 || r.BlameA != 3 || r.BlameB != 0 {
		t.Errorf("differ %d, blame copy %d, original %d; want 3, 3, 0", r.Differ, r.BlameA, r.BlameB)
	}
	if r.Compared < len(good)*9/10 {
		t.Errorf("compared %d characters of %d", r.Compared, len(good))
	}
	if len(r.ExamplesA) == 0 || !strings.Contains(r.ExamplesA[0], "参夭") || !strings.Contains(r.ExamplesA[0], "where the other has") {
		t.Errorf("examples %q", r.ExamplesA)
	}
	// Cut short, the copy stops where the original goes on.
	cut := align(normalize(string(bad[:len(bad)/2])), normalize(string(good)), 8)
	if a := agreementOf(cut, false, "good"); !a.Truncated || a.Coverage < 0.4 || a.Coverage > 0.6 {
		t.Errorf("half the text: %+v", a)
	}
	if a := agreementOf(cut, true, "cut"); a.Truncated {
		t.Errorf("the whole text is not the truncated one: %+v", a)
	}
	// Two different texts share nothing worth aligning.
	other := normalize(strings.Repeat("凡论命，先看月令，次看日主强弱，再看用神喜忌。", 20))
	if r := align(other, normalize(string(good)), 8); r.Compared != 0 {
		t.Errorf("unrelated texts aligned %d characters", r.Compared)
	}
}

func TestInspect(t *testing.T) {
	clean := inspect(Extracted{Text: "第1章 论十干\n\n甲木参天，脱胎要火。\n\n1.2.1\t甲木\nThe stems, in English prose: 2 words.\n"})
	if clean.Noise != 0 || clean.CutOff != "" {
		t.Errorf("clean text: noise %d %q, cut off %q", clean.Noise, clean.NoiseExamples, clean.CutOff)
	}
	noisy := inspect(Extracted{Text: "甲木l参天，脱|胎要火，c0de and wo|rd.\n" + strings.Repeat("春不容金秋不容土", 5), Warnings: []string{"needs OCR: pages 3 have no text layer"}, NeedsOCR: true})
	if noisy.Noise != 4 || len(noisy.NoiseExamples) != 3 {
		t.Errorf("noisy text: noise %d %q, want 4", noisy.Noise, noisy.NoiseExamples)
	}
	if noisy.CutOff == "" || !noisy.NeedsOCR || len(noisy.Warnings) != 1 {
		t.Errorf("noisy text: cut off %q, needs OCR %v, warnings %v", noisy.CutOff, noisy.NeedsOCR, noisy.Warnings)
	}
}

func TestWithFrontMatter(t *testing.T) {
	md := []byte("---\ntitle: 子平真诠评注\nauthor: 沈孝瞻\npublisher: 中华书局\ndate: 1996\nurl: https://example.org/zp\n---\n\n# 序\n")
	p := withFrontMatter(Provenance{Publisher: "curate.yaml wins"}, md, ".md")
	want := Provenance{Title: "子平真诠评注", Author: "沈孝瞻", Publisher: "curate.yaml wins", Published: "1996", URL: "https://example.org/zp"}
	if p != want {
		t.Errorf("%+v, want %+v", p, want)
	}
	if p := withFrontMatter(Provenance{}, md, ".txt"); p != (Provenance{}) {
		t.Errorf("a .txt file's lines are not front matter: %+v", p)
	}
}
