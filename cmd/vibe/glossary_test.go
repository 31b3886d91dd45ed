package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// integrate copies the theme's glossary into the skill, and refuses a
// malformed one naming the file and the entry.
func TestIntegrateCopiesTheGlossary(t *testing.T) {
	dir := t.TempDir()
	knowledgeDir, skillDir := filepath.Join(dir, "knowledge", "tea"), filepath.Join(dir, "skills", "tea")
	if err := os.MkdirAll(knowledgeDir, 0o755); err != nil {
		t.Fatal(err)
	}
	good := "terms:\n  - term: green tea\n    aliases: [绿茶]\n"
	if err := os.WriteFile(filepath.Join(knowledgeDir, "glossary.yaml"), []byte(good), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := copyGlossary(knowledgeDir, skillDir); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(skillDir, "knowledge", "glossary.yaml"))
	if err != nil || string(b) != good {
		t.Fatalf("skill glossary = %q, %v", b, err)
	}
	if err := os.WriteFile(filepath.Join(knowledgeDir, "glossary.yaml"), []byte("terms:\n  - aliases: [x]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	err = copyGlossary(knowledgeDir, skillDir)
	if err == nil || !strings.Contains(err.Error(), "glossary.yaml: terms[0]: term is empty") {
		t.Fatalf("malformed glossary: err = %v", err)
	}
	// Without a theme glossary, the skill's is left alone.
	if err := os.Remove(filepath.Join(knowledgeDir, "glossary.yaml")); err != nil {
		t.Fatal(err)
	}
	if err := copyGlossary(knowledgeDir, skillDir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(skillDir, "knowledge", "glossary.yaml")); err != nil {
		t.Fatalf("skill glossary removed: %v", err)
	}
}
