package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vibelife/vibe/internal/testcorpus"
	"github.com/vibelife/vibe/knowledge"
	"github.com/vibelife/vibe/runtime"
)

// A theme of one book, 子平真诠 alone, built offline with the bazi glossary,
// keeps the book's most famous rule, 伤官见官，为祸百端 (论用神配气候得失),
// and the retrieval-only answer to 伤官见官会怎样 lists it. Before the
// one-book ranking (docs/extract.md) the 50 tier-2 rules were the 若…则
// sentences of the first chapters, from 22 of the book's sections, and this
// one (no opening word, no 则) was not among them; the tier-2 rules now come
// from at least 30 sections.
func TestOneBookKeepsTheFamousRule(t *testing.T) {
	corpus := testcorpus.Dir(t, "bazi")
	dir := t.TempDir()
	src := filepath.Join(dir, "incoming")
	copyFile(t, filepath.Join(corpus, "子平真诠.md"), filepath.Join(src, "子平真诠.md"))
	if code, _, errOut := runVibeOffline(t, "-w", dir, "--quiet", "curate", "zp", "--from", src); code != 0 {
		t.Fatalf("vibe curate zp: exit %d: %s", code, errOut)
	}
	copyFile(t, filepath.Join("..", "..", "examples", "bazi", "glossary.yaml"), filepath.Join(dir, "knowledge", "zp", "glossary.yaml"))
	if code, _, errOut := runVibeOffline(t, "-w", dir, "--quiet", "build", "zp"); code != 0 {
		t.Fatalf("vibe build zp: exit %d: %s", code, errOut)
	}
	f, _, err := knowledge.ReadFiles(filepath.Join(dir, "skills", "zp", "knowledge"))
	if err != nil {
		t.Fatal(err)
	}
	found := false
	sections := map[string]bool{}
	for _, r := range f.Rules.Rules.All() {
		found = found || r.Condition == "伤官见官" && strings.HasPrefix(r.Conclusion, "为祸百端")
		if r.Tier == knowledge.Tier2 {
			sections[r.Source] = true
		}
	}
	if !found {
		t.Errorf("no rule 伤官见官 → 为祸百端 among the %d rules", len(f.Rules.Rules.All()))
	}
	// An offline tier 2 is sized to the sources: one rule a chunk, at
	// least the design's 50 (extract's offlineTier2Cap).
	if n := len(f.Rules.Rules.Tier2); n < 50 || n > knowledge.MaxOfflineTier2 || len(sections) < 30 {
		t.Errorf("%d tier-2 rules from %d sections, want 50 to %d from 30 or more", n, len(sections), knowledge.MaxOfflineTier2)
	}

	a := skillsAgent(t, filepath.Join(dir, "skills"))
	answer, err := a.Turn(context.Background(), runtime.TurnRequest{UserID: "u", Message: "伤官见官会怎样", Skill: "zp"}, func(runtime.Event) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	_, rules, _ := strings.Cut(answer, "**相关规则**")
	rules, _, _ = strings.Cut(rules, "**相关原文**")
	if !strings.Contains(rules, "伤官见官，则为祸百端") {
		t.Errorf("the answer does not list the rule 伤官见官 → 为祸百端:\n%s", answer)
	}
}
