package knowledge_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vibelife/vibe/chunk"
	"github.com/vibelife/vibe/knowledge"
	"github.com/vibelife/vibe/knowledge/sqlite"
	"github.com/vibelife/vibe/knowledge/storetest"
)

// TestIngestRefusesADocumentThatLosesItsText: a document whose chunks hold
// less than 90% of its characters (here a contents list of 300 entries over
// a page of text) fails the ingest with an error naming it, what was set
// aside and how to allow it, and is not stored; an allowance lets it through
// marked "allowed"; taking the allowance back refuses the unchanged document
// again and removes it from the store. The ledger records every figure.
func TestIngestRefusesADocumentThatLosesItsText(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	store, err := sqlite.Open(ctx, filepath.Join(root, "vibe.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	sp, err := chunk.New(chunk.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var list strings.Builder
	for i := 1; i <= 300; i++ {
		fmt.Fprintf(&list, "- Chapter %d: On the care of tools, part %d\n", i, i)
	}
	storetest.WriteConverted(t, root, "t", "big", "# Handbook\n\n## Contents\n\n"+list.String()+"\n## Tools\n\nKeep every tool clean and dry after use.\n", false)
	storetest.WriteConverted(t, root, "t", "fine", "# Notes\n\nOil the hinges every spring.", false)
	dir := filepath.Join(root, "knowledge", "t", "converted")
	ledger := filepath.Join(root, "knowledge", "t", "accounting.json")
	allow := false
	opts := knowledge.IngestOptions{Theme: "t", Root: root, ConvertedDir: dir, Splitter: sp, Embedder: &countingEmbedder{}, Ledger: ledger,
		Coverage: func(source string) knowledge.CoverageRule {
			if allow && strings.HasSuffix(source, "big.txt") {
				return knowledge.CoverageRule{Min: 0, Allowed: true, Where: "coverage.allow[0] (big.txt)", Reason: "a catalogue"}
			}
			return knowledge.CoverageRule{Min: knowledge.DefaultMinCoverage, Where: "the default", Hint: "knowledge/t/curate.yaml: coverage: allow: - source: big.txt"}
		}}

	rep, err := knowledge.Ingest(ctx, store, opts)
	if !errors.Is(err, knowledge.ErrCoverage) {
		t.Fatalf("err = %v, want ErrCoverage", err)
	}
	for _, want := range []string{"knowledge/t/converted/big.md", "knowledge/t/source/big.txt", "below the 90%", "contents list (Contents)", "curate.yaml", "source: big.txt"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not say %q:\n%v", want, err)
		}
	}
	if rep.Added != 1 || len(rep.Failed) != 1 || rep.Failed[0].Doc != "knowledge/t/converted/big.md" {
		t.Fatalf("report = %+v", rep)
	}
	docs, _ := store.Documents(ctx, "t")
	if len(docs) != 1 || docs[0].ID != "knowledge/t/converted/fine.md" {
		t.Fatalf("stored %+v: the refused document must not be", docs)
	}
	l, err := knowledge.ReadLedger(ledger)
	if err != nil {
		t.Fatal(err)
	}
	big, ok := l.Find("knowledge/t/converted/big.md")
	if !ok || big.Status != knowledge.AccountRefused || big.Chunking.Share() >= 0.9 || big.Converted() == 0 || len(big.Chunking.Aside) != 1 {
		t.Fatalf("ledger entry = %+v", big)
	}
	if fine, _ := l.Find("knowledge/t/converted/fine.md"); fine.Status != knowledge.AccountOK || fine.Chunked() != fine.Converted() || fine.Chunks != 1 {
		t.Errorf("fine = %+v", fine)
	}

	// Allowed: stored, with a warning status.
	allow = true
	rep, err = knowledge.Ingest(ctx, store, opts)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Added != 1 || rep.Unchanged != 1 {
		t.Fatalf("allowed run = %+v", rep)
	}
	var got knowledge.DocAccount
	for _, d := range rep.Accounts {
		if d.Doc == "knowledge/t/converted/big.md" {
			got = d
		}
	}
	if got.Status != knowledge.AccountAllowed || !strings.Contains(got.Note, "coverage.allow[0]") || !strings.Contains(got.Note, "a catalogue") {
		t.Errorf("allowed account = %+v", got)
	}

	// The allowance taken back: the unchanged document is refused again
	// and leaves the store.
	allow = false
	rep, err = knowledge.Ingest(ctx, store, opts)
	if !errors.Is(err, knowledge.ErrCoverage) || len(rep.Failed) != 1 {
		t.Fatalf("err = %v, report %+v", err, rep)
	}
	if docs, _ := store.Documents(ctx, "t"); len(docs) != 1 {
		t.Errorf("stored %d documents, want the refused one removed", len(docs))
	}
}

// TestCitedChars counts cited characters once, overlap included.
func TestCitedChars(t *testing.T) {
	chunks := []chunk.Chunk{
		{ID: "a", Doc: "d", Start: 0, End: 10, Text: "0123456789"},
		{ID: "b", Doc: "d", Start: 6, End: 16, Text: "6789abcdef"},
		{ID: "c", Doc: "e", Start: 0, End: 3, Text: "x y"},
		{ID: "z", Doc: "e", Start: 3, End: 6, Text: "zzz"},
	}
	got := knowledge.CitedChars(chunks, map[string]bool{"a": true, "b": true, "c": true})
	if got["d"] != 16 || got["e"] != 2 {
		t.Errorf("cited = %v, want d 16 (overlap once), e 2", got)
	}
}
