package integrate

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckReferencesAndSchema plants one fault per case in a copy of the
// clean fixture and asserts the finding and its line.
func TestCheckReferencesAndSchema(t *testing.T) {
	tests := []struct {
		name, file, old, new string
		check                string
		line                 int
	}{
		{"next_phase missing", "knowledge/sop.yaml", "next_phase: P2", "next_phase: P9", "ref.next-phase-missing", 18},
		{"phase cycle", "knowledge/sop.yaml", "      exit_condition: 用神已定\n", "      exit_condition: 用神已定\n      next_phase: P1\n", "ref.phase-cycle", 18},
		{"duplicate id across files", "knowledge/patterns.yaml", "id: QP_001", "id: T2_001", "ids.duplicate", 0},
		{"schema enum", "knowledge/patterns.yaml", "confidence: high", "confidence: certain", "schema.invalid", 7},
		{"yaml syntax", "knowledge/rules.yaml", "  tier2_core:\n", "  tier2_core: [\n", "schema.yaml-syntax", 0},
		{"missing quote", "knowledge/rules.yaml", "quote: 若财多身弱，则必以比劫为用。", "quote: 若财多身弱，则必以食伤为用。", "grounding.quote-not-found", 21},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := copyDir(t, "testdata/clean")
			if _, err := Integrate(context.Background(), IntegrateOptions{Theme: "demo", SkillDir: dir}); err != nil {
				t.Fatal(err)
			}
			p := filepath.Join(dir, tt.file)
			data, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			edited := strings.Replace(string(data), tt.old, tt.new, 1)
			if edited == string(data) {
				t.Fatalf("fixture lacks %q", tt.old)
			}
			os.WriteFile(p, []byte(edited), 0o644)
			rep, err := Check(context.Background(), Options{Theme: "demo", SkillDir: dir, Chunks: loadChunks(t), Config: checkCfg()})
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range rep.Findings {
				if f.Check == tt.check && (tt.line == 0 || f.File == tt.file && f.Line == tt.line) {
					if f.Severity != SevError {
						t.Errorf("severity %s", f.Severity)
					}
					return
				}
			}
			t.Errorf("no %s at %s:%d:\n%s", tt.check, tt.file, tt.line, textOf(t, rep))
		})
	}
}

func TestLexicalMeasures(t *testing.T) {
	tests := []struct {
		claim, source string
		lo, hi        float64
	}{
		{"日主衰弱", "凡日主衰弱者，则宜用印比扶之。", 1, 1},
		{"财多身弱", "凡日主衰弱者，则宜用印比扶之。", 0, 0.34},
		{"the day master is strong", "If the day master is strong, then drain it.", 1, 1},
		{"marriage will be happy", "If the day master is strong, then drain it.", 0, 0.01},
	}
	for _, tt := range tests {
		if got := containment(tt.claim, tt.source); got < tt.lo || got > tt.hi {
			t.Errorf("containment(%q) = %.2f, want in [%.2f, %.2f]", tt.claim, got, tt.lo, tt.hi)
		}
	}
	if !quoteOccurs("凡日主衰弱者，\n则宜用印比扶之。", "凡日主衰弱者，则宜用印比扶之。") {
		t.Error("a line break inside a CJK quote must not matter")
	}
	if !quoteOccurs("drained  by\noutput", "should be drained by output stars") {
		t.Error("white space runs must compare equal")
	}
	if quoteOccurs("drained by input", "should be drained by output stars") {
		t.Error("a different quote matched")
	}
}
