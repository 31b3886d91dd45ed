package integrate

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"
)

// TestSARIFStructure asserts the requirements of the SARIF 2.1.0 schema that
// apply to what vibe emits. The official schema JSON is not vendored (no
// offline copy may be committed), so this test checks the required
// properties, types and enums by hand.
func TestSARIFStructure(t *testing.T) {
	rep, err := Check(context.Background(), Options{Theme: "demo", SkillDir: "testdata/faulty", Chunks: loadChunks(t), Config: checkCfg()})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := Write(&b, rep, "sarif"); err != nil {
		t.Fatal(err)
	}
	var log struct {
		Version string `json:"version"`
		Schema  string `json:"$schema"`
		Runs    []struct {
			Tool struct {
				Driver struct {
					Name  string `json:"name"`
					Rules []struct {
						ID string `json:"id"`
					} `json:"rules"`
				} `json:"driver"`
			} `json:"tool"`
			Results []struct {
				RuleID    string `json:"ruleId"`
				RuleIndex *int   `json:"ruleIndex"`
				Level     string `json:"level"`
				Message   struct {
					Text string `json:"text"`
				} `json:"message"`
				Locations []struct {
					PhysicalLocation struct {
						ArtifactLocation struct {
							URI string `json:"uri"`
						} `json:"artifactLocation"`
						Region struct {
							StartLine   int `json:"startLine"`
							StartColumn int `json:"startColumn"`
						} `json:"region"`
					} `json:"physicalLocation"`
				} `json:"locations"`
			} `json:"results"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(b.Bytes(), &log); err != nil {
		t.Fatalf("SARIF is not valid JSON: %v", err)
	}
	if log.Version != "2.1.0" || log.Schema == "" {
		t.Fatalf("version %q schema %q", log.Version, log.Schema)
	}
	if len(log.Runs) != 1 || log.Runs[0].Tool.Driver.Name == "" {
		t.Fatalf("want one run with a named driver: %+v", log.Runs)
	}
	run := log.Runs[0]
	if len(run.Results) != len(rep.Findings) {
		t.Errorf("%d results, want %d", len(run.Results), len(rep.Findings))
	}
	levels := map[string]bool{"none": true, "note": true, "warning": true, "error": true}
	for i, r := range run.Results {
		if !levels[r.Level] {
			t.Errorf("result %d: level %q not in the SARIF enum", i, r.Level)
		}
		if r.Message.Text == "" {
			t.Errorf("result %d: message.text is required", i)
		}
		if r.RuleIndex == nil || *r.RuleIndex < 0 || *r.RuleIndex >= len(run.Tool.Driver.Rules) || run.Tool.Driver.Rules[*r.RuleIndex].ID != r.RuleID {
			t.Errorf("result %d: ruleIndex does not point at rule %s", i, r.RuleID)
		}
		if len(r.Locations) != 1 {
			t.Fatalf("result %d: want one location", i)
		}
		pl := r.Locations[0].PhysicalLocation
		if pl.ArtifactLocation.URI == "" || pl.Region.StartLine < 1 || pl.Region.StartColumn < 1 {
			t.Errorf("result %d: bad location %+v", i, pl)
		}
	}
}
