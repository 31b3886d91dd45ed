package extract

import (
	"context"
	"crypto/sha256"
	"fmt"
	"github.com/vibelife/vibe/internal/testcorpus"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/vibelife/vibe/chunk"
	"github.com/vibelife/vibe/knowledge"
	"github.com/vibelife/vibe/knowledge/schema"
)

// corpusDir finds ../shared/corpus/<theme> from the repository root.
func corpusDir(t testing.TB, theme string) string {
	return testcorpus.Dir(t, theme)
}

// splitMarkdown is a simple test splitter: a chunk per paragraph group of at
// most ~800 runes under the current heading path, with rune offsets.
func splitMarkdown(doc, text string) []chunk.Chunk {
	var out []chunk.Chunk
	var heads []string
	runes := []rune(text)
	start, pos := 0, 0
	flush := func(end int) {
		body := string(runes[start:end])
		if strings.TrimSpace(body) != "" {
			sum := sha256.Sum256([]byte(fmt.Sprintf("%s|%d|%s", doc, len(out), body)))
			out = append(out, chunk.Chunk{
				ID: fmt.Sprintf("%x", sum[:8]), Doc: doc, Title: strings.TrimSuffix(filepath.Base(doc), ".md"),
				HeadingPath: append([]string(nil), heads...), Start: start, End: end, Ordinal: len(out), Text: body,
			})
		}
		start = end
	}
	for _, line := range strings.SplitAfter(text, "\n") {
		n := len([]rune(line))
		if strings.HasPrefix(line, "#") {
			flush(pos)
			level := len(line) - len(strings.TrimLeft(line, "#"))
			if level > len(heads)+1 {
				level = len(heads) + 1
			}
			heads = append(heads[:level-1], strings.TrimSpace(strings.TrimLeft(line, "#")))
		} else if pos-start > 800 && strings.TrimSpace(line) == "" {
			flush(pos)
		}
		pos += n
	}
	flush(pos)
	return out
}

func loadCorpus(t testing.TB, theme string) []chunk.Chunk {
	dir := corpusDir(t, theme)
	names, err := filepath.Glob(filepath.Join(dir, "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(names)
	var chunks []chunk.Chunk
	for _, n := range names {
		b, err := os.ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		chunks = append(chunks, splitMarkdown("knowledge/"+theme+"/converted/"+filepath.Base(n), string(b))...)
	}
	return chunks
}

func validate(t *testing.T, f knowledge.Files) {
	t.Helper()
	for kind, v := range map[string]any{schema.SOP: f.SOP, schema.Patterns: f.Patterns, schema.Rules: f.Rules} {
		data, err := knowledge.Encode(v)
		if err != nil {
			t.Fatal(err)
		}
		probs, err := schema.ValidateYAML(kind, data)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range probs {
			t.Errorf("%s.yaml: %v", kind, p)
		}
	}
}

// allEvidence lists every evidence of every item, labelled.
func allEvidence(f knowledge.Files) map[string][]knowledge.Evidence {
	out := map[string][]knowledge.Evidence{}
	for _, r := range f.Rules.Rules.All() {
		out["rule "+r.ID] = r.Evidence
	}
	for _, p := range f.Patterns.Patterns.QuickPatterns {
		out["pattern "+p.ID] = p.Evidence
	}
	for _, x := range f.Patterns.Patterns.RedFlags {
		out["red flag "+x.ID] = x.Evidence
	}
	for _, ph := range f.SOP.SOP.Phases {
		for _, s := range ph.Steps {
			if len(s.Evidence) > 0 {
				out["step "+s.ID] = s.Evidence
			}
		}
	}
	return out
}

func TestOfflineCorpus(t *testing.T) {
	chunks := loadCorpus(t, "bazi")
	byID := map[string]string{}
	for _, c := range chunks {
		byID[c.ID] = c.Text
	}
	res, err := Run(context.Background(), Options{Theme: "bazi", Chunks: chunks})
	if err != nil {
		t.Fatal(err)
	}
	validate(t, res.Files)
	c := res.Counts
	t.Logf("counts: %+v", c)
	checks := []struct {
		name     string
		got      int
		min, max int
	}{
		{"phases", c.Phases, 5, 7},
		{"tier1", c.Tier1, 5, 10},
		{"tier2", c.Tier2, 30, 50},
		{"tier3", c.Tier3, 10, 30},
		{"patterns", c.Patterns, 10, 20},
		{"red flags", c.RedFlags, 5, 10},
	}
	for _, ck := range checks {
		if ck.got < ck.min || ck.got > ck.max {
			t.Errorf("%s = %d, want %d..%d", ck.name, ck.got, ck.min, ck.max)
		}
	}
	for label, evs := range allEvidence(res.Files) {
		if len(evs) == 0 {
			t.Errorf("%s has no evidence", label)
		}
		for _, e := range evs {
			text, ok := byID[e.Chunk]
			if !ok {
				t.Errorf("%s cites unknown chunk %s", label, e.Chunk)
				continue
			}
			if !strings.Contains(text, e.Quote) {
				t.Errorf("%s quote %q not in chunk %s", label, e.Quote, e.Chunk)
			}
		}
	}
	if res.Files.Rules.Meta == nil || res.Files.Rules.Meta.Extractor != OfflineExtractor {
		t.Errorf("meta = %+v, want extractor %s", res.Files.Rules.Meta, OfflineExtractor)
	}
	// Deterministic: a second run gives the same bytes.
	res2, err := Run(context.Background(), Options{Theme: "bazi", Chunks: chunks, Previous: &res.Files})
	if err != nil {
		t.Fatal(err)
	}
	a, _ := knowledge.Encode(res.Files.Rules)
	b, _ := knowledge.Encode(res2.Files.Rules)
	if string(a) != string(b) {
		t.Error("second run over the same chunks changed rules.yaml")
	}
}

func BenchmarkOfflineBazi(b *testing.B) {
	chunks := loadCorpus(b, "bazi")
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := Run(context.Background(), Options{Theme: "bazi", Chunks: chunks}); err != nil {
			b.Fatal(err)
		}
	}
}
