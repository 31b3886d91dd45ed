package curate

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"
)

const enText = `Brewing green tea. If the water is boiling, then let it cool to eighty degrees before pouring.
Every leaf must be rinsed once. Steep the leaves for two minutes, then pour out all the liquor so the leaves do not stew.
A second infusion takes a little longer than the first. Keep the pot warm between infusions and never leave leaves soaking.`

const zhBase = `绿茶冲泡之法。若水已沸，则应稍候，待其降至八十度再注水。凡投茶，必先温杯。投茶之后，浸泡两分钟即出汤，
出汤务尽，勿使茶叶久浸。第二泡时间稍长于第一泡。两泡之间，壶宜保温，切勿令茶叶久泡于水中。此法适用于龙井、碧螺春等名茶。
水质以山泉为上，江水次之，井水为下。器以白瓷为佳，便于观色。`

var zhText = strings.Repeat(zhBase, 2)

var tagRE = regexp.MustCompile(`<[^>]+>`)

// fakeExtract strips tags, like a converter would, so an HTML page and a TXT
// file with the same words are near-duplicates.
func fakeExtract(ctx context.Context, p string) (string, error) {
	b, err := os.ReadFile(p)
	if err != nil {
		return "", err
	}
	return tagRE.ReplaceAllString(string(b), " "), nil
}

func write(t *testing.T, dir, name, content string) {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func fixedNow() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) }

func mixedWorkspace(t *testing.T) (root string) {
	root = t.TempDir()
	in := filepath.Join(root, "in")
	write(t, in, "a-green.txt", enText)
	write(t, in, "b-copy.txt", enText) // exact duplicate
	write(t, in, "c-page.html", "<!DOCTYPE html><html><body><h1>Brewing</h1><p>"+strings.ReplaceAll(enText, "\n", "</p><p>")+"</p></body></html>")
	write(t, in, "d-junk.txt", "too short")
	write(t, in, "e-zh.md", "# 绿茶\n\n"+zhText)
	write(t, in, "f-garbled.txt", strings.Repeat("\uFFFD\uFFFD\uFFFDab", 100))
	write(t, in, "g-binary.txt", "\x00\x01\x02binary")
	write(t, in, ".hidden.txt", enText+" hidden")
	write(t, in, "notes.csv", "a,b,c")
	write(t, in, "sub/h-other.txt", strings.Repeat("Oolong is rolled and partly oxidised; rinse it with boiling water and pour at once. ", 5))
	return root
}

func TestRunMixedDirectory(t *testing.T) {
	root := mixedWorkspace(t)
	src := filepath.Join(root, "knowledge/tea/source")
	tests := []struct {
		lang string
		want map[string]string // origin -> "kept" or a substring of the reason
	}{
		{"", map[string]string{
			"in/a-green.txt":     "kept",
			"in/b-copy.txt":      "duplicate of in/a-green.txt",
			"in/c-page.html":     "near-duplicate of in/a-green.txt",
			"in/d-junk.txt":      "too little text",
			"in/e-zh.md":         "kept",
			"in/f-garbled.txt":   "garbled",
			"in/g-binary.txt":    "unsupported type",
			"in/sub/h-other.txt": "kept",
		}},
		{"en", map[string]string{
			"in/a-green.txt": "kept",
			"in/e-zh.md":     "wrong language (detected zh, wanted en)",
		}},
		{"zh", map[string]string{
			"in/a-green.txt": "wrong language (detected en, wanted zh)",
			"in/e-zh.md":     "kept",
		}},
	}
	for _, tt := range tests {
		t.Run("lang="+tt.lang, func(t *testing.T) {
			res, err := Run(context.Background(), Options{
				Root: root, SourceDir: src, Sources: []Spec{{Source: "in"}},
				Language: tt.lang, Extract: fakeExtract, Now: fixedNow,
			})
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]Entry{}
			for _, e := range res.Lock.Sources {
				got[e.Origin] = e
			}
			if _, ok := got["in/.hidden.txt"]; ok {
				t.Errorf("hidden file gathered")
			}
			if _, ok := got["in/notes.csv"]; ok {
				t.Errorf("csv gathered from a directory")
			}
			for origin, want := range tt.want {
				e, ok := got[origin]
				if !ok {
					t.Errorf("%s: missing from lock", origin)
					continue
				}
				if want == "kept" {
					if e.Status != StatusKept {
						t.Errorf("%s: dropped (%s), want kept", origin, e.Reason)
					} else if _, err := os.Stat(filepath.Join(src, e.File)); err != nil {
						t.Errorf("%s: kept but not stored: %v", origin, err)
					}
					continue
				}
				if e.Status != StatusDropped || !strings.Contains(e.Reason, want) {
					t.Errorf("%s: status %s reason %q, want dropped with %q", origin, e.Status, e.Reason, want)
				}
				if e.File != "" {
					t.Errorf("%s: dropped entry has file %q", origin, e.File)
				}
			}
			// Only kept files are in source/.
			ents, _ := os.ReadDir(src)
			for _, d := range ents {
				if d.Name() == LockName {
					continue
				}
				found := false
				for _, e := range res.Lock.Sources {
					found = found || (e.Status == StatusKept && e.File == d.Name())
				}
				if !found {
					t.Errorf("source/%s is not a kept entry", d.Name())
				}
			}
		})
	}
}

func TestRunIdempotentAndRemoval(t *testing.T) {
	root := mixedWorkspace(t)
	src := filepath.Join(root, "knowledge/tea/source")
	opts := Options{Root: root, SourceDir: src, Sources: []Spec{{Source: "in/**/*.txt"}, {Source: "in/e-zh.md"}}, Extract: fakeExtract, Now: fixedNow}
	first, err := Run(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if !first.Changed || first.Kept() != 3 {
		t.Fatalf("first run: changed %v kept %d, want true 3: %+v", first.Changed, first.Kept(), first.Lock.Sources)
	}
	lock1, _ := os.ReadFile(filepath.Join(src, LockName))
	opts.Now = func() time.Time { return fixedNow().Add(time.Hour) }
	second, err := Run(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	lock2, _ := os.ReadFile(filepath.Join(src, LockName))
	if second.Changed || string(lock1) != string(lock2) {
		t.Errorf("re-run changed something:\n%s\n---\n%s", lock1, lock2)
	}
	// Round-trip: the lock on disk reads back to the result.
	l, err := ReadLock(filepath.Join(src, LockName))
	if err != nil || len(l.Sources) != len(second.Lock.Sources) {
		t.Fatalf("ReadLock: %v, %d entries", err, len(l.Sources))
	}
	for i := range l.Sources {
		if !l.Sources[i].GatheredAt.Equal(second.Lock.Sources[i].GatheredAt) || !sameEntry(l.Sources[i], second.Lock.Sources[i]) {
			t.Errorf("entry %d round-trip: %+v vs %+v", i, l.Sources[i], second.Lock.Sources[i])
		}
	}
	// Drop a source: its stored file goes.
	opts.Sources = opts.Sources[1:]
	third, err := Run(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(third.Removed) != 2 || third.Kept() != 1 {
		t.Errorf("removed %v kept %d, want 2 removed, 1 kept", third.Removed, third.Kept())
	}
}

func TestRunCollisionsAndHandPlaced(t *testing.T) {
	root := t.TempDir()
	write(t, root, "x/book.txt", enText)
	write(t, root, "y/book.txt", strings.Repeat("Bonsai wiring: if a branch bends too far, then remove the wire at once and wait a season. ", 4))
	src := filepath.Join(root, "knowledge/b/source")
	res, err := Run(context.Background(), Options{Root: root, SourceDir: src, Sources: []Spec{{Source: "x/book.txt"}, {Source: "y/book.txt"}}, Now: fixedNow})
	if err != nil {
		t.Fatal(err)
	}
	if res.Lock.Sources[0].File != "book.txt" || res.Lock.Sources[1].File != "book-2.txt" {
		t.Errorf("names %q %q, want book.txt book-2.txt", res.Lock.Sources[0].File, res.Lock.Sources[1].File)
	}
	// Files put into source/ by hand are the sources when none are listed.
	hand := filepath.Join(root, "knowledge/h/source")
	write(t, hand, "mine.txt", enText)
	res, err = Run(context.Background(), Options{Root: root, SourceDir: hand, Now: fixedNow})
	if err != nil {
		t.Fatal(err)
	}
	if res.Kept() != 1 || res.Lock.Sources[0].Origin != "knowledge/h/source/mine.txt" || res.Lock.Sources[0].File != "mine.txt" {
		t.Errorf("hand-placed: %+v", res.Lock.Sources)
	}
	if _, err := Run(context.Background(), Options{Root: root, SourceDir: filepath.Join(root, "knowledge/none/source")}); err != ErrNothingToGather {
		t.Errorf("empty theme: err %v, want ErrNothingToGather", err)
	}
}

func TestRunURLs(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/page", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/octet-stream") // wrong on purpose
		w.Write([]byte("<html><body><p>" + enText + "</p></body></html>"))
	})
	mux.HandleFunc("/loop", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/loop", http.StatusFound) })
	mux.HandleFunc("/hop", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/zh.txt", http.StatusFound) })
	mux.HandleFunc("/zh.txt", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(zhText)) })
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) {
		w.(http.Flusher).Flush() // no Content-Length: the cap must hold while reading
		for i := 0; i < 100; i++ {
			w.Write([]byte(strings.Repeat("x", 1000)))
		}
	})
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
		}
	})
	mux.HandleFunc("/missing", http.NotFound)
	srv := httptest.NewServer(mux)
	defer srv.Close()

	root := t.TempDir()
	src := filepath.Join(root, "knowledge/u/source")
	specs := []Spec{}
	for _, p := range []string{"/page", "/loop", "/hop", "/big", "/slow", "/missing"} {
		specs = append(specs, Spec{Source: srv.URL + p})
	}
	res, err := Run(context.Background(), Options{
		Root: root, SourceDir: src, Sources: specs, Extract: fakeExtract, Now: fixedNow,
		MaxDownloadBytes: 50_000, DownloadTimeout: 300 * time.Millisecond, MaxRedirects: 3,
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []struct{ status, file, mtype, reason string }{
		{StatusKept, "page.html", "text/html", ""},
		{StatusDropped, "", "", "more than 3 redirects"},
		{StatusKept, "hop.txt", "text/plain", ""},
		{StatusDropped, "", "", "curate.max_download_bytes"},
		{StatusDropped, "", "", "curate.download_timeout"},
		{StatusDropped, "", "", "404"},
	}
	for i, w := range want {
		e := res.Lock.Sources[i]
		if e.Status != w.status || e.File != w.file || e.MediaType != w.mtype || !strings.Contains(e.Reason, w.reason) {
			t.Errorf("%s: got %s %q %q %q, want %s %q %q reason containing %q", e.Origin, e.Status, e.File, e.MediaType, e.Reason, w.status, w.file, w.mtype, w.reason)
		}
		if strings.Contains(e.Reason, "too large: too large") {
			t.Errorf("%s: doubled prefix in %q", e.Origin, e.Reason)
		}
		if w.status == StatusDropped && !e.Failed {
			t.Errorf("%s: download problem not marked failed", e.Origin)
		}
	}
	if res.Failed() != 4 {
		t.Errorf("Failed() = %d, want 4", res.Failed())
	}
}

func TestAppendSources(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "curate.yaml")
	orig := "# my tea books\nlanguage: en # English only\nsources:\n  - source: books/\n    notes: the shelf\n  - extra.txt\n"
	write(t, dir, "curate.yaml", orig)
	changed, err := AppendSources(p, []string{"extra.txt", "https://example.org/x.html", "books/", "new/*.md"})
	if err != nil || !changed {
		t.Fatalf("changed %v err %v", changed, err)
	}
	f, err := LoadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range f.Sources {
		got = append(got, s.Source)
	}
	if strings.Join(got, "|") != "books/|extra.txt|https://example.org/x.html|new/*.md" || f.Language != "en" || f.Sources[0].Notes != "the shelf" {
		t.Errorf("after append: %+v", f)
	}
	data, _ := os.ReadFile(p)
	if !strings.Contains(string(data), "# my tea books") || !strings.Contains(string(data), "# English only") {
		t.Errorf("comments lost:\n%s", data)
	}
	changed, err = AppendSources(p, []string{"extra.txt"})
	if err != nil || changed {
		t.Errorf("second append: changed %v err %v, want false nil", changed, err)
	}
	// A missing file is created.
	q := filepath.Join(dir, "new.yaml")
	if _, err := AppendSources(q, []string{"a.pdf"}); err != nil {
		t.Fatal(err)
	}
	if f, err := LoadFile(q); err != nil || len(f.Sources) != 1 || f.Sources[0].Source != "a.pdf" {
		t.Errorf("created file: %+v %v", f, err)
	}
	// Bad values name the field.
	for body, want := range map[string]string{
		"quality:\n  near_duplicate: 80\n":    "quality.near_duplicate",
		"quality:\n  max_garbled_ratio: -1\n": "quality.max_garbled_ratio",
		"quality:\n  min_chars: -5\n":         "quality.min_chars",
		"language: chinese\n":                 "language \"chinese\"",
	} {
		write(t, dir, "v.yaml", body)
		if _, err := LoadFile(filepath.Join(dir, "v.yaml")); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: err %v, want one naming %s", body, err, want)
		}
	}
	write(t, dir, "ok.yaml", "language: zh-TW\nsources: [a.txt]\n")
	if f, err := LoadFile(filepath.Join(dir, "ok.yaml")); err != nil || f.Language != "zh-TW" {
		t.Errorf("zh-TW: %+v %v", f, err)
	}
	// Unknown keys name the line.
	write(t, dir, "bad.yaml", "sources: []\nlangauge: en\n")
	if _, err := LoadFile(filepath.Join(dir, "bad.yaml")); err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("typo: err %v, want one naming line 2", err)
	}
}

func TestMeasureAndSniff(t *testing.T) {
	tests := []struct {
		text, script string
	}{
		{enText, "en"},
		{zhText, "zh"},
		{"これは日本語の文章です。お茶を淹れる。", "ja"},
		{"차를 우리는 방법입니다", "ko"},
		{"Чай заваривают горячей водой", "ru"},
		{"绿茶 green tea 龙井 Longjing 的冲泡方法", "zh"},
	}
	for _, tt := range tests {
		if got := measure(tt.text).script; got != tt.script {
			t.Errorf("measure(%.20q).script = %s, want %s", tt.text, got, tt.script)
		}
	}
	sniffs := []struct {
		data, name, ext string
	}{
		{"%PDF-1.7 ...", "x.txt", ".pdf"},
		{"PK\x03\x04....mimetypeapplication/epub+zip", "x.zip", ".epub"},
		{"PK\x03\x04....word/document.xml", "x", ".docx"},
		{"PK\x03\x04....other", "x.docx", ""},
		{"PK\x03\x04..OEBPS/a.xhtml..META-INF/container.xml", "x", ".epub"},
		{"PK\x03\x04..mimetypeapplication/vnd.oasis.opendocument.text..META-INF/container.xml", "x.epub", ""},
		{"\xff\xfeh\x00i\x00", "x.bin", ".txt"},
		{"  <!DOCTYPE HTML><html>", "x.txt", ".html"},
		{"# Title\n\ntext", "x.md", ".md"},
		{"<div id=\"page\">\n  <p>text</p></div>", "x.html", ".html"},
		{"<b>not really a page</b> a < b", "x.txt", ".txt"},
		{"plain", "x.pdf", ".txt"},
		{"\x00\x00\x00", "x.txt", ""},
	}
	for _, s := range sniffs {
		if got := sniff([]byte(s.data), s.name); got != s.ext {
			t.Errorf("sniff(%q, %s) = %q, want %q", s.data, s.name, got, s.ext)
		}
	}
	a, _ := sketch(enText)
	b, _ := sketch(strings.ToUpper(strings.ReplaceAll(enText, " ", "  ")))
	c, _ := sketch(zhText)
	if s := similarity(a, b); s < 0.99 {
		t.Errorf("same text, different spacing: similarity %.2f", s)
	}
	if s := similarity(a, c); s > 0.1 {
		t.Errorf("different texts: similarity %.2f", s)
	}
}

func TestRunWorkspaceRootSkipsOwnOutput(t *testing.T) {
	root := t.TempDir()
	write(t, root, "notes/tea.txt", enText)
	write(t, root, "knowledge/t/converted/tea.md", "---\nsource: x\n---\n"+zhText)
	src := filepath.Join(root, "knowledge/t/source")
	opts := Options{Root: root, SourceDir: src, Sources: []Spec{{Source: "."}}, Now: fixedNow}
	for run := 1; run <= 2; run++ {
		res, err := Run(context.Background(), opts)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Lock.Sources) != 1 || res.Lock.Sources[0].Origin != "notes/tea.txt" {
			t.Errorf("run %d gathered %+v, want only notes/tea.txt", run, res.Lock.Sources)
		}
	}
}

func TestRunCacheProgressOnError(t *testing.T) {
	root := mixedWorkspace(t)
	src := filepath.Join(root, "knowledge/tea/source")
	calls := 0
	counting := func(ctx context.Context, p string) (string, error) { calls++; return fakeExtract(ctx, p) }
	var progressed []string
	var failed []string
	opts := Options{
		Root: root, SourceDir: src, Sources: []Spec{{Source: "in"}, {Source: "in/missing.pdf"}},
		Extract: counting, Now: fixedNow, CacheDir: filepath.Join(root, ".vibe/cache/curate"),
		Progress: func(done, total int, e Entry) { progressed = append(progressed, e.Origin) },
		OnError:  func(origin string, err error) error { failed = append(failed, origin); return nil },
	}
	first, err := Run(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if calls == 0 || len(progressed) != len(first.Lock.Sources) || len(failed) != 1 || failed[0] != "in/missing.pdf" {
		t.Fatalf("calls %d progressed %v failed %v", calls, progressed, failed)
	}
	firstCalls := calls
	second, err := Run(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if calls != firstCalls {
		t.Errorf("re-run extracted %d more times, want 0 (cache)", calls-firstCalls)
	}
	if second.Changed {
		t.Errorf("re-run changed something")
	}
	for i := range first.Lock.Sources {
		if !sameEntry(first.Lock.Sources[i], second.Lock.Sources[i]) {
			t.Errorf("entry %d differs with the cache: %+v vs %+v", i, first.Lock.Sources[i], second.Lock.Sources[i])
		}
	}
	// Another extractor version measures again.
	opts.ExtractVersion = "v2"
	if _, err := Run(context.Background(), opts); err != nil {
		t.Fatal(err)
	}
	if calls == firstCalls {
		t.Errorf("a new ExtractVersion reused the old cache")
	}
	// OnError returning an error aborts.
	opts.OnError = func(origin string, err error) error { return err }
	if _, err := Run(context.Background(), opts); err == nil || !strings.Contains(err.Error(), "missing.pdf") {
		t.Errorf("abort: err %v, want one naming missing.pdf", err)
	}
}

func TestRunHandPlacedNextToListed(t *testing.T) {
	root := t.TempDir()
	other := strings.Repeat("Bonsai wiring: if a branch bends too far, then remove the wire at once and wait a season. ", 4)
	write(t, root, "books/book.txt", enText)
	src := filepath.Join(root, "knowledge/t/source")
	write(t, src, "book.txt", other) // the user's own file, same name
	opts := Options{Root: root, SourceDir: src, Sources: []Spec{{Source: "books/book.txt"}}, Now: fixedNow}
	res, err := Run(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if res.Kept() != 2 {
		t.Fatalf("kept %d, want 2: %+v", res.Kept(), res.Lock.Sources)
	}
	if b, _ := os.ReadFile(filepath.Join(src, "book.txt")); string(b) != other {
		t.Errorf("the hand-placed book.txt was overwritten")
	}
	if res.Lock.Sources[0].File != "book-2.txt" || res.Lock.Sources[1].Origin != "knowledge/t/source/book.txt" {
		t.Errorf("lock: %+v", res.Lock.Sources)
	}
	// A junk file put by hand is moved aside, not deleted.
	write(t, src, "junk.txt", "tiny")
	res, err = Run(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(src, DroppedDir, "junk.txt")); err != nil || string(b) != "tiny" {
		t.Errorf("junk not moved aside: %v", err)
	}
	if _, err := os.Stat(filepath.Join(src, "junk.txt")); err == nil {
		t.Errorf("junk left in source/")
	}
	if len(res.MovedAside) != 1 || res.MovedAside[0] != "junk.txt" || len(res.Removed) != 0 {
		t.Errorf("moved aside %v removed %v, want [junk.txt] and none", res.MovedAside, res.Removed)
	}
	// Unlisting the source removes its copy and keeps the user's file.
	opts.Sources = nil
	res, err = Run(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Removed) != 1 || res.Removed[0] != "book-2.txt" || res.Kept() != 1 {
		t.Errorf("removed %v kept %d, want [book-2.txt] and 1", res.Removed, res.Kept())
	}
	if _, err := os.Stat(filepath.Join(src, "book.txt")); err != nil {
		t.Errorf("user's file gone: %v", err)
	}
}

// listDir returns the names in dir (hidden ones included) with each file's
// content, and the lock without gathered_at.
func snapshot(t *testing.T, src string) (files map[string]string, lock []Entry) {
	t.Helper()
	files = map[string]string{}
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() == LockName {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(src, p)
		files[rel] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	l, err := ReadLock(filepath.Join(src, LockName))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range l.Sources {
		e.GatheredAt = time.Time{}
		lock = append(lock, e)
	}
	return files, lock
}

// TestRunInterruptedAfterCopy stops curate after each copy, before the lock
// is written (what kill -9 does), and checks that the next run gives the
// same source/ and lock as an uninterrupted run: no *-2 copies, nothing moved
// to .dropped/. It does so with the journal the interrupted run left, and
// without it (a copy made by an older vibe, or lost journal): then the copy
// is adopted because it holds the origin's exact bytes.
func TestRunInterruptedAfterCopy(t *testing.T) {
	root := mixedWorkspace(t)
	sources := []Spec{{Source: "in/"}}
	clean := filepath.Join(root, "knowledge/clean/source")
	if _, err := Run(context.Background(), Options{Root: root, SourceDir: clean, Sources: sources, Extract: fakeExtract, Now: fixedNow}); err != nil {
		t.Fatal(err)
	}
	wantFiles, wantLock := snapshot(t, clean)
	for _, dropJournal := range []bool{false, true} {
		for stopAt := 1; stopAt <= 2; stopAt++ { // of 3 kept
			name := fmt.Sprintf("stop%d-nojournal%v", stopAt, dropJournal)
			t.Run(name, func(t *testing.T) {
				src := filepath.Join(root, "knowledge", name, "source")
				ctx, cancel := context.WithCancel(context.Background())
				copied := 0
				opts := Options{Root: root, SourceDir: src, Sources: sources, Extract: fakeExtract, Now: fixedNow}
				opts.afterCopy = func() {
					if copied++; copied == stopAt {
						cancel()
					}
				}
				_, err := Run(ctx, opts)
				cancel()
				if err == nil {
					t.Fatalf("the run was not interrupted (%d copied)", copied)
				}
				if _, err := os.Stat(filepath.Join(src, LockName)); err == nil {
					t.Fatal("the interrupted run wrote the lock")
				}
				if dropJournal {
					if err := os.Remove(filepath.Join(src, JournalName)); err != nil {
						t.Fatal(err)
					}
				}
				res, err := Run(context.Background(), Options{Root: root, SourceDir: src, Sources: sources, Extract: fakeExtract, Now: fixedNow})
				if err != nil {
					t.Fatal(err)
				}
				if len(res.MovedAside) != 0 || len(res.Removed) != 0 {
					t.Errorf("moved aside %v, removed %v after an interrupted run", res.MovedAside, res.Removed)
				}
				if dropJournal && len(res.Adopted) != stopAt {
					t.Errorf("adopted %v, want %d copies", res.Adopted, stopAt)
				}
				gotFiles, gotLock := snapshot(t, src)
				if !reflect.DeepEqual(gotFiles, wantFiles) {
					t.Errorf("source/ differs from a clean run:\n got %v\nwant %v", keys(gotFiles), keys(wantFiles))
				}
				for i := range gotLock {
					gotLock[i].Origin = strings.Replace(gotLock[i].Origin, "knowledge/"+name, "knowledge/clean", 1)
				}
				if !reflect.DeepEqual(gotLock, wantLock) {
					t.Errorf("lock differs from a clean run:\n got %+v\nwant %+v", gotLock, wantLock)
				}
			})
		}
	}
}

func keys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// TestRunRestoresEditedCopyAndSaysSo: a copy edited in source/ is put back
// from its unchanged origin, and the result names it.
func TestRunRestoresEditedCopyAndSaysSo(t *testing.T) {
	root := t.TempDir()
	write(t, root, "books/book.txt", enText)
	src := filepath.Join(root, "knowledge/t/source")
	opts := Options{Root: root, SourceDir: src, Sources: []Spec{{Source: "books/"}}, Now: fixedNow}
	if _, err := Run(context.Background(), opts); err != nil {
		t.Fatal(err)
	}
	write(t, src, "book.txt", enText+" my own note")
	res, err := Run(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Restored) != 1 || res.Restored[0] != (Restored{File: "book.txt", Origin: "books/book.txt"}) {
		t.Errorf("restored %+v, want book.txt from books/book.txt", res.Restored)
	}
	if b, _ := os.ReadFile(filepath.Join(src, "book.txt")); string(b) != enText {
		t.Errorf("copy not put back")
	}
}

// TestRunKeepsCopiesOfVanishedSource: a listed directory moved away, emptied
// (an unmounted disk) or a URL that fails keeps the copies earlier runs made,
// as they were, and the result says which source failed and what it kept.
func TestRunKeepsCopiesOfVanishedSource(t *testing.T) {
	for _, how := range []string{"moved", "emptied", "unsupported-only"} {
		t.Run(how, func(t *testing.T) {
			root := mixedWorkspace(t)
			src := filepath.Join(root, "knowledge/tea/source")
			opts := Options{Root: root, SourceDir: src, Sources: []Spec{{Source: "in/"}}, Extract: fakeExtract, Now: fixedNow}
			first, err := Run(context.Background(), opts)
			if err != nil {
				t.Fatal(err)
			}
			wantFiles, wantLock := snapshot(t, src)
			in := filepath.Join(root, "in")
			switch how {
			case "moved":
				if err := os.Rename(in, filepath.Join(root, "elsewhere")); err != nil {
					t.Fatal(err)
				}
			case "emptied":
				os.RemoveAll(in)
				os.MkdirAll(in, 0o755)
			case "unsupported-only":
				os.RemoveAll(in)
				write(t, in, "cover.png", "\x89PNG")
				write(t, in, "table.xlsx", "PK")
			}
			res, err := Run(context.Background(), opts)
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Removed) != 0 {
				t.Errorf("removed %v", res.Removed)
			}
			errs := res.SourceErrors()
			if len(errs) != 1 || errs[0].Source != "in/" || len(errs[0].Carried) != first.Kept() {
				t.Fatalf("source errors %+v, want in/ with %d copies kept", errs, first.Kept())
			}
			if how == "unsupported-only" && !strings.Contains(errs[0].Err.Error(), "2 unsupported: cover.png, table.xlsx") {
				t.Errorf("error does not name the unsupported files: %v", errs[0].Err)
			}
			gotFiles, gotLock := snapshot(t, src)
			if !reflect.DeepEqual(gotFiles, wantFiles) {
				t.Errorf("source/ changed: %v, want %v", keys(gotFiles), keys(wantFiles))
			}
			var kept []Entry
			for _, e := range gotLock {
				if e.Status == StatusKept {
					kept = append(kept, e)
				}
			}
			var wantKept []Entry
			for _, e := range wantLock {
				if e.Status == StatusKept {
					wantKept = append(wantKept, e)
				}
			}
			if !reflect.DeepEqual(kept, wantKept) {
				t.Errorf("kept entries changed:\n got %+v\nwant %+v", kept, wantKept)
			}
			if res.Failed() != 1 {
				t.Errorf("failed %d, want the source itself recorded as failed", res.Failed())
			}
			// Removing the source from the list does let the copies go.
			opts.Sources = []Spec{{Source: "in/nothing-here.txt"}}
			res, err = Run(context.Background(), opts)
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Removed) != first.Kept() {
				t.Errorf("after unlisting: removed %v, want %d", res.Removed, first.Kept())
			}
		})
	}
}

func TestRunSkipsLinksLeavingTheSourceAndReportsUnsupported(t *testing.T) {
	root := t.TempDir()
	write(t, root, "outside/secret.txt", enText+" secret")
	write(t, root, "in/book.txt", enText)
	write(t, root, "in/cover.png", "\x89PNG")
	if err := os.Symlink(filepath.Join(root, "outside/secret.txt"), filepath.Join(root, "in/passwd.txt")); err != nil {
		t.Skip("no symlinks here:", err)
	}
	if err := os.Symlink("book.txt", filepath.Join(root, "in/alias.md")); err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(root, "knowledge/t/source")
	os.MkdirAll(src, 0o755)
	os.Symlink(filepath.Join(root, "outside/secret.txt"), filepath.Join(src, "mine.txt"))
	for _, spec := range []string{"in/", "in/*"} {
		res, err := Run(context.Background(), Options{Root: root, SourceDir: src, Sources: []Spec{{Source: spec}}, Now: fixedNow})
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range res.Lock.Sources {
			if strings.Contains(e.Origin, "passwd") || strings.Contains(e.Origin, "mine") {
				t.Errorf("%s: link leaving the source gathered: %+v", spec, e)
			}
		}
		r := res.Sources[0]
		if len(r.Links) != 1 || !strings.HasSuffix(r.Links[0].Link, "passwd.txt") || !strings.HasSuffix(r.Links[0].Target, "outside/secret.txt") {
			t.Errorf("%s: links %+v, want in/passwd.txt", spec, r.Links)
		}
		if len(res.HandLinks) != 1 || !strings.HasSuffix(res.HandLinks[0].Link, "mine.txt") {
			t.Errorf("%s: hand links %+v", spec, res.HandLinks)
		}
		if !reflect.DeepEqual(r.Unsupported, []string{"cover.png"}) {
			t.Errorf("%s: unsupported %v", spec, r.Unsupported)
		}
		// The link inside the tree is followed: same bytes as book.txt.
		if res.Kept() != 1 || res.Lock.Sources[1].Reason != "duplicate of in/alias.md" {
			t.Errorf("%s: lock %+v", spec, res.Lock.Sources)
		}
	}
}

func TestRemoveSourceKeepsTheRest(t *testing.T) {
	p := filepath.Join(t.TempDir(), "curate.yaml")
	write(t, filepath.Dir(p), "curate.yaml", "# my theme\nlanguage: en\nsources:\n  - books/ # the shelf\n  - source: https://example.org/x.html\n    notes: online\n  - scans/*.pdf\n")
	if err := RemoveSource(p, "https://example.org/x.html"); err != nil {
		t.Fatal(err)
	}
	f, err := LoadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Sources) != 2 || f.Sources[0].Source != "books/" || f.Sources[1].Source != "scans/*.pdf" || f.Language != "en" {
		t.Errorf("after removing: %+v", f)
	}
	b, _ := os.ReadFile(p)
	if !strings.Contains(string(b), "# my theme") || !strings.Contains(string(b), "# the shelf") {
		t.Errorf("comments lost:\n%s", b)
	}
	err = RemoveSource(p, "nope/")
	if !errors.Is(err, ErrSourceNotListed) || !strings.Contains(err.Error(), "books/, scans/*.pdf") {
		t.Errorf("unlisted source: %v", err)
	}
}

// TestLoadFileCoverage reads the coverage: section and names the field of a
// bad value.
func TestLoadFileCoverage(t *testing.T) {
	dir := t.TempDir()
	write := func(body string) string {
		p := filepath.Join(dir, "curate.yaml")
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	f, err := LoadFile(write("sources: [a.txt]\ncoverage:\n  min: 0.95\n  allow:\n    - source: scans/*.pdf\n      min: 0.5\n      reason: tables\n"))
	if err != nil {
		t.Fatal(err)
	}
	if f.Coverage.Min == nil || *f.Coverage.Min != 0.95 || len(f.Coverage.Allow) != 1 || *f.Coverage.Allow[0].Min != 0.5 || f.Coverage.Allow[0].Reason != "tables" {
		t.Errorf("coverage = %+v", f.Coverage)
	}
	for _, tt := range []struct{ body, want string }{
		{"coverage:\n  min: 90\n", "coverage.min is 90: use a share between 0 and 1"},
		{"coverage:\n  allow:\n    - min: 0.5\n", "coverage.allow[0] has no source"},
		{"coverage:\n  allow:\n    - source: a.pdf\n", "coverage.allow[0] (a.pdf) has no min"},
		{"coverage:\n  allow:\n    - source: a.pdf\n      min: -1\n", "coverage.allow[0].min is -1"},
		{"coverage:\n  minimum: 0.5\n", "field minimum not found"},
	} {
		_, err := LoadFile(write(tt.body))
		if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "curate.yaml") {
			t.Errorf("%q: err = %v, want it to name curate.yaml and say %q", tt.body, err, tt.want)
		}
	}
}
