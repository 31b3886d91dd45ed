package curate

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vibelife/vibe/internal/testcorpus"
)

// baziWorkspace copies the five bazi books of the shared corpus into a
// workspace's books/, with books/子平真诠-ocr.md, a corrupted edition of
// 子平真诠 (OCR-like noise, swapped characters, the last 40% cut off).
func baziWorkspace(t *testing.T) string {
	t.Helper()
	corpus := testcorpus.Dir(t, "bazi")
	root := t.TempDir()
	books := filepath.Join(root, "books")
	if err := os.MkdirAll(books, 0o755); err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir(corpus)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		data, err := os.ReadFile(filepath.Join(corpus, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(books, e.Name()), data, 0o644); err != nil {
			t.Fatal(err)
		}
		if e.Name() == "子平真诠.md" {
			if err := os.WriteFile(filepath.Join(books, "子平真诠-ocr.md"), []byte(testcorpus.Corrupt(string(data), 7, 0.6)), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	return root
}

// TestCredibilityBaziCorruptedEdition grades the five bazi classics and a
// corrupted edition of one of them: every kept source has a grade with
// reasons, the corrupted edition is graded below all the others, and its
// reasons say why (the noise, the disagreement with the good edition, the
// truncation). A re-run with nothing changed writes nothing.
func TestCredibilityBaziCorruptedEdition(t *testing.T) {
	root := baziWorkspace(t)
	opts := Options{Root: root, SourceDir: filepath.Join(root, "knowledge/bazi/source"),
		Sources: []Spec{{Source: "books/"}}, Now: fixedNow, CacheDir: filepath.Join(root, ".vibe/cache/curate"),
		JudgeNote: "offline: no model configured"}
	res, err := Run(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	const bad = "books/子平真诠-ocr.md"
	var badGrade *Credibility
	others := map[string]*Credibility{}
	for _, e := range res.Lock.Sources {
		if e.Status != StatusKept {
			t.Errorf("%s %s: %s", e.Origin, e.Status, e.Reason)
			continue
		}
		c := e.Credibility
		if c == nil || c.Grade == "" || len(c.Reasons) == 0 || c.Version != CredibilityVersion {
			t.Fatalf("%s: no credibility grade with reasons: %+v", e.Origin, c)
		}
		if c.Judged != nil || c.Unjudged != "offline: no model configured" {
			t.Errorf("%s: offline grade says %+v / %q, want no judgement and the offline note", e.Origin, c.Judged, c.Unjudged)
		}
		t.Logf("%s %s %.2f: %s", e.Origin, c.Grade, c.Score, strings.Join(c.Reasons, " | "))
		if e.Origin == bad {
			badGrade = c
		} else {
			others[e.Origin] = c
		}
	}
	if badGrade == nil || len(others) != 5 {
		t.Fatalf("want the corrupted edition and 5 books graded, got %v and %d", badGrade, len(others))
	}
	for origin, c := range others {
		if !GradeBelow(badGrade.Grade, c.Grade) || badGrade.Score >= c.Score {
			t.Errorf("%s is graded %s (%.2f), not below %s's %s (%.2f)", bad, badGrade.Grade, badGrade.Score, origin, c.Grade, c.Score)
		}
		if GradeBelow(c.Grade, "B") {
			t.Errorf("%s: a clean classic graded %s: %v", origin, c.Grade, c.Reasons)
		}
	}
	why := strings.Join(badGrade.Reasons, "\n")
	for _, want := range []string{"OCR-like noise", "disagrees with books/子平真诠.md", "its reading is the less likely", "truncated: stops at"} {
		if !strings.Contains(why, want) {
			t.Errorf("the corrupted edition's reasons do not say %q:\n%s", want, why)
		}
	}
	good := others["books/子平真诠.md"]
	if len(good.Agreement) != 1 || good.Agreement[0].With != bad || good.Agreement[0].Blamed*10 > badGrade.Agreement[0].Blamed {
		t.Errorf("the good edition's agreement %+v should lay the differences on the corrupted one %+v", good.Agreement, badGrade.Agreement)
	}
	again, err := Run(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if again.Changed {
		t.Error("a re-run with nothing changed rewrote the lock or source/")
	}
}

// TestCredibilityFloor keeps the corrupted edition out with floor C: it is
// dropped with its grade and reasons, its copy leaves source/, the books
// stay.
func TestCredibilityFloor(t *testing.T) {
	root := baziWorkspace(t)
	src := filepath.Join(root, "knowledge/bazi/source")
	opts := Options{Root: root, SourceDir: src, Sources: []Spec{{Source: "books/"}}, Now: fixedNow}
	if _, err := Run(context.Background(), opts); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(src, "子平真诠-ocr.md")); err != nil {
		t.Fatal("without a floor the corrupted edition is kept:", err)
	}
	opts.CredibilityFloor = "C"
	res, err := Run(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if res.Kept() != 5 || res.Sources[0].Kept != 5 {
		t.Errorf("kept %d (source report %d), want the 5 books", res.Kept(), res.Sources[0].Kept)
	}
	for _, e := range res.Lock.Sources {
		if e.Origin != "books/子平真诠-ocr.md" {
			continue
		}
		if e.Status != StatusDropped || !strings.Contains(e.Reason, "below the floor C") || !strings.Contains(e.Reason, "OCR-like noise") || e.Credibility == nil {
			t.Errorf("corrupted edition: %s %q %+v", e.Status, e.Reason, e.Credibility)
		}
	}
	if _, err := os.Stat(filepath.Join(src, "子平真诠-ocr.md")); err == nil {
		t.Error("the kept-out edition's copy is still in source/")
	}
}

// TestCredibilityFloorKeepsTheNearDuplicate: the corrupted edition, listed
// first, is kept and the good edition dropped as its near-duplicate; with
// the floor the corrupted one is kept out and the good one takes its place.
// The corrupted one is never copied, and a re-run writes nothing.
func TestCredibilityFloorKeepsTheNearDuplicate(t *testing.T) {
	corpus := testcorpus.Dir(t, "bazi")
	book, err := os.ReadFile(filepath.Join(corpus, "子平真诠.md"))
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "books"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{"a-scan.md": testcorpus.Corrupt(string(book), 3, 0.85), "b-edition.md": string(book)} {
		if err := os.WriteFile(filepath.Join(root, "books", name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	src := filepath.Join(root, "knowledge/zp/source")
	opts := Options{Root: root, SourceDir: src, Sources: []Spec{{Source: "books/"}}, Now: fixedNow, NearDuplicate: 0.5,
		CacheDir: filepath.Join(root, ".vibe/cache/curate")}
	res, err := Run(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if res.Kept() != 1 || !strings.HasPrefix(res.Lock.Sources[1].Reason, "near-duplicate of books/a-scan.md") {
		t.Fatalf("without a floor the first edition is kept, the second dropped as its near-duplicate: %+v", res.Lock.Sources)
	}
	opts.CredibilityFloor = "B"
	var copied []string
	opts.afterCopy = func() { copied = append(copied, "copy") }
	res, err = Run(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	a, b := res.Lock.Sources[0], res.Lock.Sources[1]
	if a.Status != StatusDropped || !strings.Contains(a.Reason, "below the floor B") {
		t.Errorf("the corrupted edition: %s %q", a.Status, a.Reason)
	}
	if b.Status != StatusKept || b.File != "b-edition.md" || b.Credibility == nil || GradeBelow(b.Credibility.Grade, "B") ||
		!strings.Contains(strings.Join(b.Credibility.Reasons, "\n"), "kept in place of its near-duplicate books/a-scan.md") {
		t.Errorf("the good edition: %+v %+v", b, b.Credibility)
	}
	if res.Sources[0].Kept != 1 || len(copied) != 1 {
		t.Errorf("kept %d, copies %d: want the good edition alone", res.Sources[0].Kept, len(copied))
	}
	names := []string{}
	ents, _ := os.ReadDir(src)
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if strings.Join(names, ",") != "b-edition.md,"+LockName {
		t.Errorf("source/ holds %v", names)
	}
	copied = nil
	again, err := Run(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if again.Changed || len(copied) != 0 || again.Lock.Sources[1].File != "b-edition.md" {
		t.Errorf("re-run: changed %v, %d copies, %+v", again.Changed, len(copied), again.Lock.Sources[1])
	}
}
