package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBuildRefusesADocumentThatLosesItsText: a build whose document's chunks
// hold less than 90% of its text (a catalogue that is almost all contents
// list) exits 1 with an error naming the document, what was set aside and
// the curate.yaml lines that allow it; with the allowance the build passes
// with a warning; `vibe sources list` shows each source's characters, source
// -> converted -> chunked -> cited; a bad coverage value is refused naming
// the field.
func TestBuildRefusesADocumentThatLosesItsText(t *testing.T) {
	ws := t.TempDir()
	env := map[string]string{}
	books := filepath.Join(ws, "books")
	if err := os.MkdirAll(books, 0o755); err != nil {
		t.Fatal(err)
	}
	var cat strings.Builder
	cat.WriteString("# Tool Catalogue\n\n## Contents\n\n")
	for i := 1; i <= 300; i++ {
		fmt.Fprintf(&cat, "- Chapter %d: Hand tools of the %dth kind\n", i, i)
	}
	cat.WriteString("\n## Care\n\nIf a blade is wet, then dry it before it rusts.\n")
	os.WriteFile(filepath.Join(books, "catalogue.md"), []byte(cat.String()), 0o644)
	os.WriteFile(filepath.Join(books, "care.txt"), []byte(strings.Repeat("If a chisel is dull, then hone it on a fine stone before use. Always keep the edge covered when it is stored. ", 8)), 0o644)
	if code, _, errOut := runVibe(t, env, "--workspace", ws, "curate", "tools", "--from", books); code != 0 {
		t.Fatalf("curate: exit %d\n%s", code, errOut)
	}
	code, out, errOut := runVibe(t, env, "--workspace", ws, "build", "tools")
	if code != exitFailure {
		t.Fatalf("build: exit %d, want %d\n%s%s", code, exitFailure, out, errOut)
	}
	for _, want := range []string{"knowledge/tools/converted/catalogue.md", "knowledge/tools/source/catalogue.md", "below the 90%", "contents list (Contents)",
		"knowledge/tools/curate.yaml", "coverage:", "- source: catalogue.md"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("build error lacks %q:\n%s", want, errOut)
		}
	}
	if !strings.Contains(errOut, "care.txt: source ") {
		t.Errorf("the build report lacks the figures of care.txt:\n%s", errOut)
	}

	curateYAML := filepath.Join(ws, "knowledge", "tools", "curate.yaml")
	orig, err := os.ReadFile(curateYAML)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(curateYAML, append(orig, []byte("coverage:\n  min: 1.5\n")...), 0o644)
	if code, _, errOut := runVibe(t, env, "--workspace", ws, "build", "tools"); code == 0 || !strings.Contains(errOut, "coverage.min is 1.5") || !strings.Contains(errOut, "curate.yaml") {
		t.Errorf("bad coverage.min: exit %d\n%s", code, errOut)
	}

	os.WriteFile(curateYAML, append(orig, []byte("coverage:\n  allow:\n    - source: catalogue.md\n      min: 0\n      reason: a catalogue is mostly its list\n")...), 0o644)
	code, out, errOut = runVibe(t, env, "--workspace", ws, "build", "tools")
	if code != 0 {
		t.Fatalf("build with the allowance: exit %d\n%s%s", code, out, errOut)
	}
	if !strings.Contains(errOut, "warning: knowledge/tools/converted/catalogue.md: its chunks hold") || !strings.Contains(errOut, "coverage.allow[0] (catalogue.md)") || !strings.Contains(errOut, "a catalogue is mostly its list") {
		t.Errorf("no warning for the allowed document:\n%s", errOut)
	}

	code, out, _ = runVibe(t, env, "--workspace", ws, "sources", "list", "tools")
	if code != 0 || !strings.Contains(out, "characters: source ") || !strings.Contains(out, "-> cited ") || !strings.Contains(out, "set aside: contents list (Contents)") || !strings.Contains(out, "allowed catalogue.md") {
		t.Errorf("sources list: exit %d\n%s", code, out)
	}
}
