package curate

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReadingListWriteLoadAndValidate(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, ReadingListName)
	l := ReadingList{Theme: "bazi", Model: "m", Prompt: ReadingListPromptVersion}
	added := MergeSuggestions(&l, []Suggested{
		{Title: "子平真诠", Author: "沈孝瞻", Period: "清", Why: "格局之法", Kind: KindClassic, Language: "zh", Where: "中国哲学书电子化计划"},
		{Title: "滴天髓", Author: "京图", Period: "宋", Why: "命理总纲", Kind: KindClassic, Language: "zh"},
		{Title: "", Kind: KindClassic},               // no title: left out
		{Title: "x", Why: "y", Kind: "encyclopedia"}, // unknown kind: left out
	})
	if strings.Join(added, " ") != "R1 R2" {
		t.Fatalf("added %v, want R1 R2", added)
	}
	if err := WriteReadingList(p, l); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(p)
	if !strings.Contains(string(data), "vibe sources accept bazi R1 R3") {
		t.Errorf("the file does not say how to accept:\n%s", data)
	}
	got, err := LoadReadingList(p)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Works) != 2 || got.Works[0].Title != "子平真诠" || got.Works[0].Where != "中国哲学书电子化计划" || got.Works[1].ID != "R2" {
		t.Errorf("loaded %+v", got.Works)
	}
	// A second proposal keeps what is there (the same work named with a
	// bracketed translation and spaces) and numbers the new ones on.
	got.Works[0].Accepted = true
	added = MergeSuggestions(&got, []Suggested{
		{Title: "子平 真诠 (Ziping's True Commentary)", Author: "沈孝瞻", Kind: KindClassic, Why: "again"},
		{Title: "子平真诠评注", Author: "徐乐吾", Kind: KindCommentary, Why: "民国评注"},
	})
	if strings.Join(added, " ") != "R3" || !got.Works[0].Accepted || got.Works[0].Why != "格局之法" {
		t.Errorf("merge: added %v, works %+v", added, got.Works)
	}

	for _, bad := range []struct{ file, want string }{
		{"theme: x\nworks:\n  - {id: R1, title: a, kind: novel}\n", "works[0] (R1): kind \"novel\": use classic, commentary, modern or cases"},
		{"theme: x\nworks:\n  - {title: a, kind: classic}\n", "works[0] (a) has no id"},
		{"theme: x\nworks:\n  - {id: R1, title: a, kind: classic}\n  - {id: R1, title: b, kind: classic}\n", "the id R1 is used twice"},
		{"theme: x\nworks:\n  - {id: R1, kind: classic}\n", "(R1) has no title"},
		{"theme: x\nworks:\n  - {id: R1, title: a, kind: classic, accept: true}\n", "field accept not found"},
	} {
		os.WriteFile(p, []byte(bad.file), 0o644)
		if _, err := LoadReadingList(p); err == nil || !strings.Contains(err.Error(), bad.want) || !strings.Contains(err.Error(), p) {
			t.Errorf("%q: got %v, want an error naming the file and saying %q", bad.file, err, bad.want)
		}
	}
}

func TestUpdateWorksKeepsCommentsAndRefusesUnknownIDs(t *testing.T) {
	p := filepath.Join(t.TempDir(), ReadingListName)
	orig := `# my notes on the list
theme: bazi
works:
  - id: R1
    accepted: false
    title: 子平真诠   # the core text
    kind: classic
  - id: R2
    accepted: false
    title: 滴天髓
    kind: classic
`
	os.WriteFile(p, []byte(orig), 0o644)
	err := UpdateWorks(p, []string{"R2", "R9"}, func(w *Work) { w.Accepted = true })
	if !errors.Is(err, ErrNoSuchWork) || !strings.Contains(err.Error(), "R9 is not in") || !strings.Contains(err.Error(), "R1, R2") {
		t.Fatalf("unknown id: %v", err)
	}
	if data, _ := os.ReadFile(p); string(data) != orig {
		t.Fatalf("a refused update wrote the file:\n%s", data)
	}
	if err := UpdateWorks(p, []string{"R1"}, func(w *Work) {
		w.Accepted = true
		w.Source, w.Query, w.Found = "https://x.example/zp", "子平真诠 沈孝瞻", "2026-01-02"
	}); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(p)
	for _, want := range []string{"# my notes on the list", "# the core text", "source: https://x.example/zp", "query: 子平真诠 沈孝瞻"} {
		if !strings.Contains(string(data), want) {
			t.Errorf("after the update the file lacks %q:\n%s", want, data)
		}
	}
	l, err := LoadReadingList(p)
	if err != nil {
		t.Fatal(err)
	}
	if !l.Works[0].Accepted || l.Works[1].Accepted {
		t.Errorf("accepted: %v %v, want only R1", l.Works[0].Accepted, l.Works[1].Accepted)
	}
}

func TestMarkHeld(t *testing.T) {
	l := ReadingList{Works: []Work{{ID: "R1", Title: "子平真诠"}, {ID: "R2", Title: "Tea Classic"}, {ID: "R3", Title: "三命通会"}}}
	MarkHeld(&l, map[string]string{"子平真诠-1935.pdf": "", "chajing.md": "The Tea Classic (茶经)", "other.md": ""})
	if l.Works[0].Held != "子平真诠-1935.pdf" || l.Works[1].Held != "" || l.Works[2].Held != "" {
		t.Errorf("held = %q %q %q", l.Works[0].Held, l.Works[1].Held, l.Works[2].Held)
	}
	MarkHeld(&l, map[string]string{"chajing.md": "Tea Classic"})
	if l.Works[1].Held != "chajing.md" || l.Works[0].Held != "" {
		t.Errorf("held by title: %q, and R1 no longer held: %q", l.Works[1].Held, l.Works[0].Held)
	}
}

func TestAppendSpecsWritesSearchProvenance(t *testing.T) {
	p := filepath.Join(t.TempDir(), "curate.yaml")
	os.WriteFile(p, []byte("# mine\nsources:\n  - books/\n"), 0o644)
	changed, err := AppendSpecs(p, []Spec{{Source: "books/"}, {Source: "https://x.example/a", Title: "A study", Query: "tea study", Retrieved: "2026-01-02", Notes: "found by research"}, {Source: "plain/"}})
	if err != nil || !changed {
		t.Fatalf("changed %v, err %v", changed, err)
	}
	f, err := LoadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Sources) != 3 || f.Sources[1].Query != "tea study" || f.Sources[1].Retrieved != "2026-01-02" || f.Sources[1].Title != "A study" || f.Sources[2].Source != "plain/" {
		t.Errorf("sources = %+v", f.Sources)
	}
	data, _ := os.ReadFile(p)
	if !strings.Contains(string(data), "# mine") || !strings.Contains(string(data), "  - plain/\n") {
		t.Errorf("comments lost or plain entry not a string:\n%s", data)
	}
}

func TestRunRecordsTheQueryThatFoundASource(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(zhText)) }))
	defer srv.Close()
	root := t.TempDir()
	res, err := Run(context.Background(), Options{Root: root, SourceDir: filepath.Join(root, "knowledge/t/source"), Extract: fakeExtract, Now: fixedNow,
		Sources: []Spec{{Source: srv.URL + "/green.txt", Title: "绿茶冲泡", Query: "绿茶 冲泡 水温", Retrieved: "2026-01-02", Published: "2025-11-30"}}})
	if err != nil {
		t.Fatal(err)
	}
	e := res.Lock.Sources[0]
	p := e.Provenance
	if e.Status != StatusKept || p.URL != srv.URL+"/green.txt" || p.Query != "绿茶 冲泡 水温" || p.Retrieved != "2026-01-02" || p.Published != "2025-11-30" {
		t.Fatalf("entry %+v", e)
	}
	if e.Credibility == nil || !strings.Contains(strings.Join(e.Credibility.Reasons, "\n"), "found by the web search «绿茶 冲泡 水温» on 2026-01-02") {
		t.Errorf("credibility reasons do not name the search: %+v", e.Credibility)
	}
}

func TestWorkSearchQuery(t *testing.T) {
	for _, tc := range []struct{ title, author, want string }{
		{"穷通宝鉴", "余春台 编（原名《栏江网》）", "穷通宝鉴 余春台"},
		{"子平真诠评注", "沈孝瞻 著，commentary: 徐乐吾", "子平真诠评注 沈孝瞻"},
		{"The Classic of Tea (茶经)", "Lu Yu", "The Classic of Tea Lu Yu"},
		{"渊海子平", "unknown", "渊海子平"},
		{"渊海子平", "徐升（徐大升）编", "渊海子平 徐升"},
		{"Tea", "A. Smith ed.", "Tea A. Smith"},
		{"李虚中命书", "", "李虚中命书"},
	} {
		if got := (Work{Title: tc.title, Author: tc.author}).SearchQuery(); got != tc.want {
			t.Errorf("%s / %s: %q, want %q", tc.title, tc.author, got, tc.want)
		}
	}
}

func TestRunKeepsMarkdownOfAURL(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("# 绿茶\n\n" + zhText)) }))
	defer srv.Close()
	root := t.TempDir()
	res, err := Run(context.Background(), Options{Root: root, SourceDir: filepath.Join(root, "knowledge/t/source"), Extract: fakeExtract, Now: fixedNow,
		Sources: []Spec{{Source: srv.URL + "/notes/green.md"}, {Source: srv.URL + "/plain"}}})
	if err != nil {
		t.Fatal(err)
	}
	if e := res.Lock.Sources[0]; e.File != "green.md" || e.MediaType != "text/markdown" {
		t.Errorf("a .md URL stored as %q (%s), want green.md", e.File, e.MediaType)
	}
	if e := res.Lock.Sources[1]; e.Status != StatusDropped || !strings.Contains(e.Reason, "duplicate") {
		t.Errorf("the same bytes again: %+v", e)
	}
}
