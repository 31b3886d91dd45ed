package knowledge

import (
	"os"
	"path/filepath"
	"testing"
)

// fuzzKnowledgeFile decodes data as the knowledge file name and, when it
// decodes, encodes the value again: neither may panic, and what was read
// must be writable (vibe integrate writes the files it read).
func fuzzKnowledgeFile(f *testing.F, name string, v func() any) {
	for _, dir := range []string{"../integrate/testdata/clean/knowledge", "../integrate/testdata/faulty/knowledge", "../runtime/testdata/skills/bazi/knowledge"} {
		if b, err := os.ReadFile(filepath.Join(dir, name)); err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p := filepath.Join(t.TempDir(), name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		val := v()
		if err := decodeFile(p, val); err != nil {
			return
		}
		if _, err := Encode(val); err != nil {
			t.Fatalf("%s decoded but does not encode again: %v", name, err)
		}
	})
}

func FuzzSOPYAML(f *testing.F) { fuzzKnowledgeFile(f, SOPFileName, func() any { return &SOPFile{} }) }

func FuzzPatternsYAML(f *testing.F) {
	fuzzKnowledgeFile(f, PatternsFileName, func() any { return &PatternsFile{} })
}

func FuzzRulesYAML(f *testing.F) {
	fuzzKnowledgeFile(f, RulesFileName, func() any { return &RulesFile{} })
}
