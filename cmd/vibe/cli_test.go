package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vibelife/vibe/curate"
)

// TestBuildFromAPathPointsToCurate: build's stage flags are --from-stage and
// --until-stage; a path given to them (or to the deprecated --from) is
// refused with the curate command that gathers it, not "unknown stage".
func TestBuildFromAPathPointsToCurate(t *testing.T) {
	ws := t.TempDir()
	for _, args := range [][]string{
		{"build", "demo", "--from", "books/"},
		{"build", "demo", "--from-stage", "./books"},
		{"build", "demo", "--until-stage", "https://example.org/a.html"},
	} {
		code, _, errOut := runVibe(t, nil, append([]string{"--workspace", ws}, args...)...)
		if code != exitError || !strings.Contains(errOut, "not a source") || !strings.Contains(errOut, "hint: to gather it, run `vibe curate demo --from ") || strings.Contains(errOut, "unknown stage") {
			t.Errorf("%v: exit %d\n%s", args, code, errOut)
		}
	}
	code, _, errOut := runVibe(t, nil, "--workspace", ws, "build", "demo", "--from-stage", "ingst")
	if code != exitError || !strings.Contains(errOut, `unknown stage "ingst": use one of curate, convert, ingest, extract, integrate`) {
		t.Errorf("misspelt stage: exit %d\n%s", code, errOut)
	}
	code, _, errOut = runVibe(t, nil, "--workspace", ws, "build", "demo", "--from-stage", "ingest", "--from", "extract")
	if code != exitError || !strings.Contains(errOut, "disagree") {
		t.Errorf("--from-stage and --from disagreeing: exit %d\n%s", code, errOut)
	}
}

func TestStageFlagAlias(t *testing.T) {
	all := []buildStage{{name: "curate"}, {name: "convert"}, {name: "ingest"}}
	for _, tt := range []struct{ val, old, want string }{
		{"", "", ""}, {"ingest", "", "ingest"}, {"", "ingest", "ingest"}, {"ingest", "ingest", "ingest"},
	} {
		got, err := stageFlag("demo", "--from-stage", tt.val, "--from", tt.old)
		if err != nil || got != tt.want {
			t.Errorf("stageFlag(%q, %q) = %q, %v; want %q", tt.val, tt.old, got, err, tt.want)
		}
	}
	if ss, err := selectStages(all, "demo", "convert", ""); err != nil || len(ss) != 2 {
		t.Errorf("selectStages from convert: %v %v", ss, err)
	}
}

// TestCurateRecordsOnlyGatheredFromSources: a --from URL that fails (and an
// empty --from directory) is not written to curate.yaml, so the next build
// does not fail on it; the good --from is.
func TestCurateRecordsOnlyGatheredFromSources(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	defer srv.Close()
	ws := t.TempDir()
	books := filepath.Join(ws, "books")
	os.MkdirAll(books, 0o755)
	os.WriteFile(filepath.Join(books, "a.txt"), []byte(strings.Repeat("If the water is boiling, then let it cool before brewing green tea. ", 6)), 0o644)
	os.MkdirAll(filepath.Join(ws, "empty"), 0o755)
	bad := srv.URL + "/missing.html"
	code, _, errOut := runVibe(t, nil, "--workspace", ws, "curate", "tea", "--from", books, "--from", bad, "--from", filepath.Join(ws, "empty"))
	if code != exitFailure || !strings.Contains(errOut, "\nvibe: curate tea: --from "+bad+", empty gathered nothing, so they were not added to knowledge/tea/curate.yaml: ") || strings.Count(errOut, "vibe: ") != 1 || strings.Contains(errOut, "warning:") {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	f, err := curate.LoadFile(filepath.Join(ws, "knowledge/tea/curate.yaml"))
	if err != nil || len(f.Sources) != 1 || f.Sources[0].Source != "books" {
		t.Fatalf("curate.yaml: %+v %v, want only books", f.Sources, err)
	}
	code, _, errOut = runVibe(t, nil, "--workspace", ws, "curate", "tea")
	if code != 0 {
		t.Errorf("the next curate fails: exit %d\n%s", code, errOut)
	}
}

// TestSourcesListAndRemove: `vibe sources list` shows each listed source with
// its kept copies; `vibe sources remove` unlists it (the path as typed or as
// listed), and with --curate its copies leave source/.
func TestSourcesListAndRemove(t *testing.T) {
	ws := t.TempDir()
	texts := map[string]string{
		"books": strings.Repeat("If the water is boiling, then let it cool before brewing green tea. ", 6),
		"more":  strings.Repeat("Bonsai wiring: if a branch bends too far, then remove the wire at once and wait a season. ", 4),
	}
	for d, text := range texts {
		os.MkdirAll(filepath.Join(ws, d), 0o755)
		os.WriteFile(filepath.Join(ws, d, d+".txt"), []byte(text), 0o644)
	}
	if code, _, errOut := runVibe(t, nil, "--workspace", ws, "curate", "tea", "--from", filepath.Join(ws, "books"), "--from", filepath.Join(ws, "more")); code != 0 {
		t.Fatalf("curate: exit %d\n%s", code, errOut)
	}
	code, out, _ := runVibe(t, nil, "--workspace", ws, "sources", "list", "tea")
	if code != 0 || !strings.Contains(out, "books\n    1 kept, 0 dropped: books.txt") || !strings.Contains(out, "more\n    1 kept, 0 dropped: more.txt") {
		t.Fatalf("list: exit %d\n%s", code, out)
	}
	code, _, errOut := runVibe(t, nil, "--workspace", ws, "sources", "remove", "tea", "nope/")
	if code != exitFailure || !strings.Contains(errOut, "lists books, more") {
		t.Errorf("removing an unlisted source: exit %d\n%s", code, errOut)
	}
	code, _, errOut = runVibe(t, nil, "--workspace", ws, "sources", "remove", "tea", filepath.Join(ws, "more"), "--curate")
	if code != 0 || !strings.Contains(errOut, "removed more from knowledge/tea/curate.yaml") {
		t.Fatalf("remove: exit %d\n%s", code, errOut)
	}
	if _, err := os.Stat(filepath.Join(ws, "knowledge/tea/source/more.txt")); err == nil {
		t.Errorf("the removed source's copy is still in source/")
	}
	code, out, _ = runVibe(t, nil, "--workspace", ws, "sources", "list", "tea", "--json")
	if code != 0 || strings.Contains(out, `"more"`) || !strings.Contains(out, `"source": "books"`) {
		t.Errorf("list after remove: exit %d\n%s", code, out)
	}
	// Unlisting the last source lets its copies go too.
	if code, _, errOut := runVibe(t, nil, "--workspace", ws, "sources", "remove", "tea", "books", "--curate"); code != 0 {
		t.Fatalf("remove the last: exit %d\n%s", code, errOut)
	}
	if _, err := os.Stat(filepath.Join(ws, "knowledge/tea/source/books.txt")); err == nil {
		t.Errorf("the last source's copy is still in source/")
	}
}

// TestQuietAndVerbose: -q leaves out curate's kept lines, ingest's counts,
// integrate's notes and the check line of a build (errors still print); -v
// is --verbose (debug logging), not --version.
func TestQuietAndVerbose(t *testing.T) {
	ws := copyWorkspace(t, crashTemplate(t))
	code, out, errOut := runVibe(t, nil, "--workspace", ws, "-q", "build", "demo")
	if code != 0 {
		t.Fatalf("-q build: exit %d\n%s", code, errOut)
	}
	for _, noisy := range []string{"kept ", "curate demo:", "ingest demo:", "integrate demo: wrote", "integrate demo: SKILL.md", "check demo:", "==> "} {
		if strings.Contains(out+errOut, noisy) {
			t.Errorf("-q build prints %q:\n%s\n%s", noisy, out, errOut)
		}
	}
	code, out, errOut = runVibe(t, nil, "--workspace", ws, "-q", "curate", "demo", "--from", filepath.Join(ws, "nope.pdf"))
	if code != exitError || !strings.Contains(errOut, "nope.pdf: no such file or directory") || strings.Contains(out, "kept ") {
		t.Errorf("-q curate with a failing source: exit %d\n%s\n%s", code, out, errOut)
	}
	code, _, errOut = runVibe(t, nil, "--workspace", ws, "-v", "build", "demo", "--until-stage", "curate")
	if code != 0 || !strings.Contains(errOut, "level=DEBUG") {
		t.Errorf("-v: exit %d, no debug lines:\n%s", code, errOut)
	}
	code, out, _ = runVibe(t, nil, "--version")
	if code != 0 || !strings.Contains(out, "vibe version") {
		t.Errorf("--version: exit %d %q", code, out)
	}
	if code, _, errOut := runVibe(t, nil, "-q", "-v", "config"); code != exitError || !strings.Contains(errOut, "contradict") {
		t.Errorf("-q -v: exit %d %q", code, errOut)
	}
}
