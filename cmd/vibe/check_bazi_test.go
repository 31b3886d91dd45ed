package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The done-when, as a test: `vibe check bazi --format sarif` on a
// theme freshly built offline from the bazi corpus exits 0; after one
// rule's conclusion is edited into something its source does not say, it
// exits 1 naming that rule and its line.
func TestCheckBaziSARIFCatchesADriftedConclusion(t *testing.T) {
	t.Parallel() // a workspace of its own: overlaps the other slow tests of the package
	dir := copyWorkspace(t, baziWorkspace(t))
	sarif := func() (int, []map[string]any) {
		t.Helper()
		code, out, errOut := runVibeOffline(t, "-w", dir, "check", "bazi", "--format", "sarif")
		var log struct {
			Version string `json:"version"`
			Runs    []struct {
				Results []map[string]any `json:"results"`
			} `json:"runs"`
		}
		if err := json.Unmarshal([]byte(out), &log); err != nil || log.Version != "2.1.0" || len(log.Runs) != 1 {
			t.Fatalf("not a SARIF log (exit %d, %v):\n%.2000s\n%s", code, err, out, errOut)
		}
		return code, log.Runs[0].Results
	}
	code, results := sarif()
	if code != 0 {
		for _, r := range results {
			if r["level"] == "error" {
				t.Errorf("error on a fresh build: %v", r["message"])
			}
		}
		t.Fatalf("check of a fresh build: exit %d", code)
	}

	// Edit the first core rule's conclusion into something no classic says.
	p := filepath.Join(dir, "skills", "bazi", "knowledge", "rules.yaml")
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(data), "\n")
	id, line := "", 0
	inTier2 := false
	for i, l := range lines {
		trimmed := strings.TrimSpace(l)
		switch {
		case strings.HasPrefix(l, "  tier2_core:"):
			inTier2 = true
		case strings.HasPrefix(l, "  tier3_edge:"):
			inTier2 = false
		case inTier2 && strings.HasPrefix(trimmed, "- id: ") && id == "":
			id = strings.TrimPrefix(trimmed, "- id: ")
		case inTier2 && id != "" && strings.HasPrefix(trimmed, "conclusion: "):
			lines[i] = l[:strings.Index(l, "conclusion: ")] + "conclusion: 宜投资加密货币并移居海外，三年之内必成巨富"
			line = i + 1
		}
		if line > 0 {
			break
		}
	}
	if line == 0 {
		t.Fatalf("no tier2 rule with a conclusion in %s", p)
	}
	if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	code, results = sarif()
	if code != 1 {
		t.Fatalf("check after the drifted edit: exit %d, want 1", code)
	}
	found := false
	for _, r := range results {
		if r["level"] != "error" {
			continue
		}
		msg := r["message"].(map[string]any)["text"].(string)
		loc := r["locations"].([]any)[0].(map[string]any)["physicalLocation"].(map[string]any)
		uri := loc["artifactLocation"].(map[string]any)["uri"].(string)
		start := int(loc["region"].(map[string]any)["startLine"].(float64))
		if uri == "skills/bazi/knowledge/rules.yaml" && start == line && strings.Contains(msg, id) {
			found = true
		} else {
			t.Errorf("unexpected error %s:%d: %s", uri, start, msg)
		}
	}
	if !found {
		t.Errorf("no error names rule %s at skills/bazi/knowledge/rules.yaml:%s", id, strconv.Itoa(line))
	}
}
