package knowledge

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestWriteReadFiles(t *testing.T) {
	dir := t.TempDir()
	ev := []Evidence{{Chunk: "c1", Quote: "凡日主衰弱"}}
	f := Files{
		SOP:      SOPFile{SOP: SOP{Name: "n", Description: "d", Phases: []Phase{{ID: "P1", Name: "收集", Steps: []Step{{ID: "P1.1", Action: "a", Output: "o", Evidence: ev}}}}}, Meta: &Meta{Theme: "bazi", Extractor: "x"}},
		Patterns: PatternsFile{Patterns: Patterns{QuickPatterns: []Pattern{{ID: "PAT001", Name: "正官格", Confidence: "high", Evidence: ev}}, RedFlags: []RedFlag{}}},
		Rules:    RulesFile{Rules: Rules{Tier1: []Rule{}, Tier2: []Rule{{ID: "R001", Condition: "c", Conclusion: "k", Confidence: "medium", Evidence: ev}}, Tier3: []Rule{}}},
	}
	written, err := WriteFiles(dir, f)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(written, ",") != "sop.yaml,patterns.yaml,rules.yaml" {
		t.Errorf("written %v", written)
	}
	got, found, err := ReadFiles(dir)
	if err != nil || !found {
		t.Fatalf("read: %v found=%v", err, found)
	}
	if !reflect.DeepEqual(got, f) {
		t.Errorf("round trip changed the files:\n%+v\n%+v", got, f)
	}
	// Unchanged content is not rewritten.
	written, err = WriteFiles(dir, f)
	if err != nil || len(written) != 0 {
		t.Errorf("rewrite: %v %v", written, err)
	}
	// A broken file is named in the error.
	os.WriteFile(filepath.Join(dir, RulesFileName), []byte("rules: [\n"), 0o644)
	if _, _, err := ReadFiles(dir); err == nil || !strings.Contains(err.Error(), RulesFileName) {
		t.Errorf("err = %v, want it to name rules.yaml", err)
	}
	// A missing directory is not an error.
	if _, found, err := ReadFiles(filepath.Join(dir, "none")); err != nil || found {
		t.Errorf("missing dir: %v %v", found, err)
	}
}
