// Package testcorpus locates the shared corpus of real documents
// (../shared/corpus beside the repository, or $VIBE_TEST_CORPUS) for tests.
//
// When the corpus is missing, the tests that need it are skipped, and the
// first one in each test binary prints a banner on stderr saying so and why,
// so a fresh clone never passes those tests silently. Under CI=true they fail
// instead: CI must prove the code against the real documents. (`go test` in
// package-list mode shows a passing package's output only with -v, so
// `make test` prints the same banner once before the run.)
package testcorpus

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// EnvVar names the corpus directory when it is not ../shared/corpus.
const EnvVar = "VIBE_TEST_CORPUS"

var bannerOnce sync.Once

// Dir returns <corpus>/<sub...>, where the corpus is $VIBE_TEST_CORPUS or
// ../shared/corpus relative to the repository root (the directory holding
// go.mod above the test's working directory). When it is missing the test is
// skipped, after a banner printed once per test binary, except under
// CI=true, where it fails.
func Dir(t testing.TB, sub ...string) string {
	t.Helper()
	root, err := corpusRoot()
	if err != nil {
		t.Fatal(err)
	}
	c := filepath.Join(append([]string{root}, sub...)...)
	if _, err := os.Stat(c); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("testcorpus: %s missing under CI=true: %v (CI must run the corpus tests: provide the corpus or set %s)", c, err, EnvVar)
		}
		bannerOnce.Do(func() { Banner(os.Stderr, c) })
		t.Skipf("testcorpus: SKIPPED, corpus %s missing (set %s to its directory)", c, EnvVar)
	}
	return c
}

// Banner writes the notice that corpus tests are skipped because missing is
// absent.
func Banner(w io.Writer, missing string) {
	fmt.Fprintf(w, `
################################################################################
# CORPUS TESTS SKIPPED: %s does not exist.
# The tests that prove vibe against real books (PDF, EPUB, DOCX, HTML, the bazi
# classics) are skipped, so a pass here does not cover them. Put the corpus at
# ../shared/corpus beside the repository, or set %s=/path/to/corpus.
# Under CI=true these tests fail instead of skipping.
################################################################################

`, missing, EnvVar)
}

func corpusRoot() (string, error) {
	if d := os.Getenv(EnvVar); d != "" {
		return filepath.Abs(d)
	}
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("testcorpus: no go.mod above the test's directory")
		}
		dir = parent
	}
	return filepath.Join(dir, "..", "shared", "corpus"), nil
}
