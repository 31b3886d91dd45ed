package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFirstContactMistakes walks the mistakes a newcomer makes (issue 27)
// and asserts each exits non-zero with one message, whose first line says
// what is wrong and what to do, never cobra's or Go's own wording, and no
// wrong advice after it.
func TestFirstContactMistakes(t *testing.T) {
	ws := t.TempDir()
	if err := os.MkdirAll(filepath.Join(ws, "knowledge", "bazi"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(ws, "knowledge", "bazi", "curate.yaml"), []byte("sources: []\n"), 0o644)
	short := filepath.Join(t.TempDir(), "short.txt")
	os.WriteFile(short, []byte("too short\n"), 0o644)
	cfg := func(yaml string) func() {
		return func() { os.WriteFile(filepath.Join(ws, "vibe.yaml"), []byte(yaml), 0o644) }
	}
	noCfg := func() { os.Remove(filepath.Join(ws, "vibe.yaml")) }
	repo, err := filepath.Abs(demoRepo)
	if err != nil {
		t.Fatal(err)
	}

	cases := []struct {
		name  string
		setup func()
		args  []string
		code  int
		first string   // the first line of stderr
		not   []string // anywhere in stderr
	}{
		{"build a misspelt theme", noCfg, []string{"-w", ws, "build", "bazzi"}, 2,
			`vibe: no theme "bazzi" in this workspace; did you mean "bazi"? Run: vibe build bazi`, []string{"curate bazzi --from PATH"}},
		{"search a misspelt theme", nil, []string{"-w", ws, "search", "bazzi", "用神"}, 2,
			`vibe: no theme "bazzi" in this workspace; did you mean "bazi"? Run: vibe search bazi`, []string{"vibe ingest bazzi"}},
		{"a misspelt stage flag", nil, []string{"-w", ws, "build", "bazi", "--form-stage", "ingest"}, 2,
			"vibe: unknown flag --form-stage: did you mean --from-stage?", nil},
		{"a misspelt skill flag", nil, []string{"-w", ws, "chat", "--skil", "bazi"}, 2,
			"vibe: unknown flag --skil: did you mean --skill?", nil},
		{"build without a theme", nil, []string{"-w", ws, "build"}, 2,
			"vibe: build: missing the theme argument, e.g. `vibe build bazi` (a theme is a name under knowledge/)", []string{"accepts 1 arg"}},
		{"--from a missing path", nil, []string{"-w", ws, "curate", "bazi", "--from", filepath.Join(ws, "no", "such", "books")}, 2,
			"vibe: curate bazi: --from " + filepath.Join(ws, "no", "such", "books") + ": no such file or directory",
			[]string{"curate.yaml)", "sources remove", "warning:", "dropped"}},
		{"--from a text too short", nil, []string{"-w", ws, "curate", "bazi", "--from", short}, 1,
			"vibe: curate bazi: --from " + short + " gathered nothing, so it was not added to knowledge/bazi/curate.yaml: " + short + ": too little text (",
			[]string{"give a PDF", "warning:"}},
		{"an unknown config key", cfg("serve:\n  turn_timout: 2m\n"), []string{"-w", ws, "config"}, 2,
			"vibe: " + filepath.Join(ws, "vibe.yaml") + ":2: unknown key serve.turn_timout (did you mean serve.turn_timeout?); the keys of serve are ",
			[]string{"workspace.", "Config"}},
		{"a word for a number", cfg("serve:\n  max_steps: five\n"), []string{"-w", ws, "config"}, 2,
			"vibe: " + filepath.Join(ws, "vibe.yaml") + `:2: serve.max_steps: "five" is not a whole number; for example ` + "`max_steps: 8`",
			[]string{"!!str", "unmarshal", " int"}},
		{"words for a duration", cfg("convert:\n  timeout: 2 minutes\n"), []string{"-w", ws, "config"}, 2,
			"vibe: " + filepath.Join(ws, "vibe.yaml") + `:2: convert.timeout: "2 minutes" is not a duration (a number with a unit: ms, s, m or h); for example ` + "`timeout: 2m`",
			[]string{"!!str", "time.Duration"}},
		{"a timeout key that is not there", cfg("serve:\n  timeout: 2 minutes\n"), []string{"-w", ws, "config"}, 2,
			"vibe: " + filepath.Join(ws, "vibe.yaml") + ":2: unknown key serve.timeout (did you mean serve.turn_timeout?); the keys of serve are",
			[]string{"workspace.", "ServeConfig"}},
		{"convert a missing file", noCfg, []string{"-w", ws, "convert", filepath.Join(ws, "book.pdf"), "-o", filepath.Join(ws, "out")}, 2,
			"vibe: convert: " + filepath.Join(ws, "book.pdf") + " does not exist", []string{"stat "}},
		{"convert a missing file, no -o", nil, []string{"-w", ws, "convert", filepath.Join(ws, "book.pdf")}, 2,
			"vibe: convert: " + filepath.Join(ws, "book.pdf") + " does not exist", []string{"stat ", "theme name \""}},
		// The tests run in cmd/vibe, inside vibe's own module: with no
		// --workspace the current directory is refused, and naming the
		// repository root is refused too.
		{"curate in vibe's source tree", nil, []string{"curate", "notes", "--from", short}, 2,
			"vibe: refusing to use " + mustAbs(t, ".") + " as the workspace: it is inside vibe's own source tree (" + repo + "), and no --workspace was given", nil},
		{"serve in vibe's source tree", nil, []string{"serve", "--insecure-dev"}, 2,
			"vibe: refusing to use " + mustAbs(t, ".") + " as the workspace:", nil},
		{"curate with --workspace at vibe's root", nil, []string{"-w", repo, "curate", "notes", "--from", short}, 2,
			"vibe: refusing to use " + repo + " as the workspace: it holds vibe's own source (the Go module github.com/vibelife/vibe), whose knowledge/ and skills/ are Go packages", nil},
	}
	for _, c := range cases {
		if c.setup != nil {
			c.setup()
		}
		code, _, errOut := runVibe(t, nil, c.args...)
		first, _, _ := strings.Cut(errOut, "\n")
		if code != c.code || !strings.HasPrefix(first, c.first) {
			t.Errorf("%s: vibe %s\nexit %d, want %d; first line:\n  %s\nwant it to start with:\n  %s\nstderr:\n%s", c.name, strings.Join(c.args, " "), code, c.code, first, c.first, errOut)
		}
		for _, bad := range c.not {
			if strings.Contains(errOut, bad) {
				t.Errorf("%s: stderr holds %q:\n%s", c.name, bad, errOut)
			}
		}
		if n := strings.Count(errOut, "vibe: "); n != 1 {
			t.Errorf("%s: %d messages, want one:\n%s", c.name, n, errOut)
		}
	}
	// Nothing was written into the source tree.
	for _, p := range []string{filepath.Join(repo, "knowledge", "notes"), "knowledge", ".vibe", filepath.Join(repo, ".vibe", "vibe.db")} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s was written into vibe's source tree", p)
		}
	}
}

func mustAbs(t *testing.T, p string) string {
	t.Helper()
	abs, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return abs
}
