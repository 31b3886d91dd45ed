package main

import (
	"context"
	"encoding/json"
	"github.com/vibelife/vibe/internal/testcorpus"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/vibelife/vibe/curate"
	"github.com/vibelife/vibe/internal/iostreams"
)

func TestNewCurateCmdFlags(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		wantFrom []string
		wantJSON bool
		wantErr  string
	}{
		{"plain", []string{"tea"}, nil, false, ""},
		{"from twice", []string{"tea", "--from", "a/", "--from", "b/*.pdf"}, []string{"a/", "b/*.pdf"}, false, ""},
		{"json", []string{"tea", "--json"}, nil, true, ""},
		{"bad theme", []string{"Tea!"}, nil, false, "theme"},
		{"no theme", []string{}, nil, false, "curate: missing the theme argument, e.g. `vibe curate bazi --from ~/books/bazi/"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ios, _, _, _ := iostreams.Test()
			a := &app{io: ios, getenv: func(string) string { return "" }, workspaceDir: t.TempDir()}
			var got *curateOptions
			cmd := newCurateCmdWith(a, func(ctx context.Context, o *curateOptions) error { got = o; return nil })
			namedArgs(cmd) // as newRootCmd does
			cmd.SetArgs(tt.args)
			cmd.SetOut(ios.Out)
			cmd.SetErr(ios.ErrOut)
			err := cmd.Execute()
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Theme != "tea" || !reflect.DeepEqual(got.From, tt.wantFrom) || got.JSON != tt.wantJSON {
				t.Errorf("got theme %q from %v json %v", got.Theme, got.From, got.JSON)
			}
		})
	}
}

func TestCurateCommand(t *testing.T) {
	ws := t.TempDir()
	books := filepath.Join(ws, "books")
	os.MkdirAll(books, 0o755)
	text := strings.Repeat("If the water is boiling, then let it cool before brewing green tea. ", 6)
	os.WriteFile(filepath.Join(books, "a.txt"), []byte(text), 0o644)
	os.WriteFile(filepath.Join(books, "b.txt"), []byte(text), 0o644)
	os.WriteFile(filepath.Join(books, "junk.txt"), []byte("tiny"), 0o644)

	// Nothing to gather: a hint with the --from usage.
	code, _, errOut := runVibe(t, nil, "--workspace", ws, "curate", "tea")
	if code != exitError || !strings.Contains(errOut, "--from") {
		t.Fatalf("empty theme: exit %d, stderr %q", code, errOut)
	}

	code, out, errOut := runVibe(t, nil, "--workspace", ws, "curate", "tea", "--from", filepath.Join(ws, "books"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"kept     books/a.txt", "dropped  books/b.txt: duplicate of books/a.txt", "dropped  books/junk.txt: too little text", "1 kept, 2 dropped, updated"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	f, err := curate.LoadFile(filepath.Join(ws, "knowledge/tea/curate.yaml"))
	if err != nil || len(f.Sources) != 1 || f.Sources[0].Source != "books" {
		t.Fatalf("curate.yaml: %+v %v (want the workspace-relative source books)", f, err)
	}

	// Re-run: unchanged, JSON lock.
	code, out, _ = runVibe(t, nil, "--workspace", ws, "curate", "tea", "--json")
	if code != 0 {
		t.Fatalf("json: exit %d", code)
	}
	var lock curate.Lock
	if err := json.Unmarshal([]byte(out), &lock); err != nil || len(lock.Sources) != 3 {
		t.Fatalf("json lock: %v %s", err, out)
	}
	code, out, _ = runVibe(t, nil, "--workspace", ws, "curate", "tea")
	if code != 0 || !strings.Contains(out, "unchanged") {
		t.Errorf("re-run: exit %d\n%s", code, out)
	}

	// A --from path that does not exist: one message before anything runs
	// (exit 2), nothing gathered, curate.yaml untouched. (A listed source
	// that disappears: TestCurateVanishedAndEmptySources.)
	before, _ := os.ReadFile(filepath.Join(ws, "knowledge", "tea", "curate.yaml"))
	code, out, errOut = runVibe(t, nil, "--workspace", ws, "curate", "tea", "--from", filepath.Join(ws, "nope.pdf"))
	if code != exitError || !strings.HasPrefix(errOut, "vibe: curate tea: --from "+filepath.Join(ws, "nope.pdf")+": no such file or directory\n") || out != "" {
		t.Errorf("missing --from: exit %d\n%s\n%s", code, out, errOut)
	}
	if after, _ := os.ReadFile(filepath.Join(ws, "knowledge", "tea", "curate.yaml")); string(after) != string(before) {
		t.Errorf("a missing --from changed curate.yaml:\n%s", after)
	}
}

// TestCurateDemoCorpus runs curate with the real converter over examples/demo
// and checks the decisions the demo README promises.
func TestCurateDemoCorpus(t *testing.T) {
	demo, err := filepath.Abs("../../examples/demo")
	if err != nil {
		t.Fatal(err)
	}
	ws := t.TempDir()
	os.MkdirAll(filepath.Join(ws, "knowledge/demo"), 0o755)
	yaml := "sources:\n  - " + filepath.Join(demo, "green-tea.md") + "\n  - " + demo + "\n"
	os.WriteFile(filepath.Join(ws, "knowledge/demo/curate.yaml"), []byte(yaml), 0o644)
	code, out, errOut := runVibe(t, nil, "--workspace", ws, "curate", "demo", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var lock curate.Lock
	if err := json.Unmarshal([]byte(out), &lock); err != nil {
		t.Fatal(err)
	}
	got := map[string]curate.Entry{}
	for _, e := range lock.Sources {
		got[filepath.Base(e.Origin)] = e
	}
	want := map[string]string{
		"green-tea.md":        "kept",
		"green-tea-copy.html": "near-duplicate of " + filepath.ToSlash(filepath.Join(demo, "green-tea.md")),
		"oolong.html":         "kept",
		"black-tea.docx":      "kept",
		"puer-gbk.txt":        "kept",
		"white-tea-utf16.txt": "kept",
		"scratch.txt":         "too little text",
		"README.md":           "kept",
	}
	for name, w := range want {
		e, ok := got[name]
		switch {
		case !ok:
			t.Errorf("%s: not in the lock", name)
		case w == "kept" && e.Status != curate.StatusKept:
			t.Errorf("%s: dropped: %s", name, e.Reason)
		case w != "kept" && (e.Status != curate.StatusDropped || !strings.Contains(e.Reason, w)):
			t.Errorf("%s: %s %q, want dropped with %q", name, e.Status, e.Reason, w)
		}
	}
}

// curateCorpusDir finds ../shared/corpus next to the repository root.
func curateCorpusDir(t *testing.T) string {
	return testcorpus.Dir(t)
}

// TestCurateRealCorpus gathers the shared corpus's EPUBs, PDFs and texts with
// the real converter: the misPackaged EPUB is the same book as the good one,
// the encrypted PDF is a failed source naming what to do, the GB18030/GBK
// novels are kept.
func TestCurateRealCorpus(t *testing.T) {
	t.Parallel() // a workspace of its own: overlaps the other slow tests of the package
	corpus := curateCorpusDir(t)
	ws := t.TempDir()
	// Curating converts every file once (pdfium in WebAssembly among them):
	// single-threaded work the race detector slows and has nothing to find in.
	code, out, errOut := runVibeOffline(t, "--workspace", ws, "curate", "corp", "--json",
		"--from", filepath.Join(corpus, "epub"), "--from", filepath.Join(corpus, "pdf"), "--from", filepath.Join(corpus, "txt"))
	if code != exitFailure {
		t.Errorf("exit %d, want 1 (the encrypted PDF failed): %s", code, errOut)
	}
	var lock curate.Lock
	if err := json.Unmarshal([]byte(out), &lock); err != nil {
		t.Fatal(err)
	}
	got := map[string]curate.Entry{}
	for _, e := range lock.Sources {
		got[filepath.Base(e.Origin)] = e
	}
	want := map[string]string{
		"tao-yuanming-poems-zh.epub":                      "kept",
		"tao-yuanming-poems-zh.original-misPackaged.epub": "near-duplicate of",
		"moby-dick.epub":                                  "kept",
		"libreoffice-writer-password-encrypted.pdf":       "encrypted",
		"tracemonkey-2col-en.pdf":                         "kept",
		"hongloumeng.gb18030.txt":                         "kept",
		"sanguoyanyi.gbk.txt":                             "kept",
		"xiyouji.utf8-bom.txt":                            "kept",
	}
	// An EPUB's package document names the work: its title, author and
	// publisher are the source's provenance, no longer "no title, author,
	// publisher or edition recorded".
	if p := got["moby-dick.epub"].Provenance; p.Title != "Moby-Dick" || p.Author != "Herman Melville" || p.Publisher != "Harper & Brothers, Publishers" {
		t.Errorf("moby-dick.epub provenance %+v, want the OPF's title, creator and publisher", p)
	}
	if p := got["hongloumeng.gb18030.txt"].Provenance; p.Title != "" || p.Author != "" {
		t.Errorf("a text file names no work: provenance %+v", p)
	}
	for name, w := range want {
		e, ok := got[name]
		switch {
		case !ok:
			t.Errorf("%s: not in the lock", name)
		case w == "kept" && e.Status != curate.StatusKept:
			t.Errorf("%s: dropped: %s", name, e.Reason)
		case w != "kept" && (e.Status != curate.StatusDropped || !strings.Contains(e.Reason, w)):
			t.Errorf("%s: %s %q, want dropped with %q", name, e.Status, e.Reason, w)
		}
	}
	if !got["libreoffice-writer-password-encrypted.pdf"].Failed {
		t.Errorf("the encrypted PDF is not marked failed")
	}
}

// TestCurateVanishedAndEmptySources: a listed directory that disappears keeps
// its copies with a warning naming it and exits 1; an empty directory or one
// of unsupported files is an error with a hint, not "0 kept"; unsupported
// files next to supported ones are counted and named.
func TestCurateVanishedAndEmptySources(t *testing.T) {
	ws := t.TempDir()
	text := strings.Repeat("If the water is boiling, then let it cool before brewing green tea. ", 6)
	books := filepath.Join(ws, "books")
	os.MkdirAll(books, 0o755)
	os.WriteFile(filepath.Join(books, "a.txt"), []byte(text), 0o644)
	os.WriteFile(filepath.Join(books, "cover.png"), []byte("\x89PNG"), 0o644)
	code, _, errOut := runVibe(t, nil, "--workspace", ws, "curate", "tea", "--from", books)
	if code != 0 || !strings.Contains(errOut, "1 unsupported file(s) in books: cover.png") {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	copyPath := filepath.Join(ws, "knowledge/tea/source/a.txt")

	// The disk is unmounted: the directory is there but empty.
	os.Remove(filepath.Join(books, "a.txt"))
	os.Remove(filepath.Join(books, "cover.png"))
	code, out, errOut := runVibe(t, nil, "--workspace", ws, "curate", "tea")
	if code != exitFailure || !strings.Contains(errOut, "source books gave nothing: kept the 1 copies") || !strings.Contains(errOut, "vibe sources remove tea") {
		t.Errorf("emptied: exit %d\n%s\n%s", code, out, errOut)
	}
	if _, err := os.Stat(copyPath); err != nil {
		t.Errorf("the copy of the emptied source was deleted: %v", err)
	}
	// Moved away.
	os.Remove(books)
	code, _, errOut = runVibe(t, nil, "--workspace", ws, "curate", "tea")
	if code != exitFailure || !strings.Contains(errOut, "books does not exist") || !strings.Contains(errOut, "kept the 1 copies") {
		t.Errorf("moved: exit %d\n%s", code, errOut)
	}
	if _, err := os.Stat(copyPath); err != nil {
		t.Errorf("the copy of the moved source was deleted: %v", err)
	}

	// A new theme from a directory of pictures and spreadsheets.
	pics := filepath.Join(ws, "pics")
	os.MkdirAll(pics, 0o755)
	os.WriteFile(filepath.Join(pics, "a.png"), []byte("\x89PNG"), 0o644)
	os.WriteFile(filepath.Join(pics, "b.xlsx"), []byte("PK"), 0o644)
	code, out, errOut = runVibe(t, nil, "--workspace", ws, "curate", "pics", "--from", pics)
	if code != exitFailure || !strings.Contains(errOut, "2 unsupported: a.png, b.xlsx") || !strings.Contains(errOut, "PDF, EPUB, DOCX, HTML, TXT or Markdown") {
		t.Errorf("pictures: exit %d\n%s\n%s", code, out, errOut)
	}
	empty := filepath.Join(ws, "empty")
	os.MkdirAll(empty, 0o755)
	code, _, errOut = runVibe(t, nil, "--workspace", ws, "curate", "empty", "--from", empty)
	if code != exitFailure || !strings.Contains(errOut, "holds no PDF") {
		t.Errorf("empty: exit %d\n%s", code, errOut)
	}
}
