package integrate

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// sarifSchema compiles the official SARIF 2.1.0 schema vendored in
// testdata/sarif (see its README for origin and license), asserting formats
// (uri, uri-reference) too.
func sarifSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	f, err := os.Open("testdata/sarif/sarif-schema-2.1.0.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatalf("the vendored schema is not JSON: %v", err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	const url = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
	if err := c.AddResource(url, doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile(url)
	if err != nil {
		t.Fatalf("compile the SARIF schema: %v", err)
	}
	return sch
}

func validateSARIF(t *testing.T, sch *jsonschema.Schema, rep Report) map[string]any {
	t.Helper()
	var b bytes.Buffer
	if err := Write(&b, rep, "sarif"); err != nil {
		t.Fatal(err)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(b.Bytes()))
	if err != nil {
		t.Fatalf("SARIF output is not JSON: %v", err)
	}
	if err := sch.Validate(inst); err != nil {
		t.Fatalf("SARIF output breaks the SARIF 2.1.0 schema:\n%v\n%s", err, b.Bytes())
	}
	var log map[string]any
	json.Unmarshal(b.Bytes(), &log)
	return log
}

func TestSARIFValidatesAgainstTheOfficialSchema(t *testing.T) {
	sch := sarifSchema(t)

	// The schema is strict enough to catch a broken log: otherwise this test
	// would pass on anything.
	for name, bad := range map[string]string{
		"no version":        `{"runs": []}`,
		"bad level":         `{"version":"2.1.0","runs":[{"tool":{"driver":{"name":"x"}},"results":[{"message":{"text":"m"},"level":"fatal"}]}]}`,
		"line 0":            `{"version":"2.1.0","runs":[{"tool":{"driver":{"name":"x"}},"results":[{"message":{"text":"m"},"locations":[{"physicalLocation":{"artifactLocation":{"uri":"a"},"region":{"startLine":0}}}]}]}]}`,
		"unknown property":  `{"version":"2.1.0","runs":[{"tool":{"driver":{"name":"x","colour":"red"}}}]}`,
		"message with none": `{"version":"2.1.0","runs":[{"tool":{"driver":{"name":"x"}},"results":[{"message":{}}]}]}`,
	} {
		inst, _ := jsonschema.UnmarshalJSON(strings.NewReader(bad))
		if sch.Validate(inst) == nil {
			t.Errorf("the schema accepts a broken log (%s): is the vendored copy intact?", name)
		}
	}

	faulty, err := Check(context.Background(), Options{Theme: "demo", SkillDir: "testdata/faulty", Chunks: loadChunks(t), Config: checkCfg()})
	if err != nil {
		t.Fatal(err)
	}
	log := validateSARIF(t, sch, faulty)
	run := log["runs"].([]any)[0].(map[string]any)
	if n := len(run["results"].([]any)); n != len(faulty.Findings) {
		t.Errorf("%d results, want one per finding (%d)", n, len(faulty.Findings))
	}
	rules := run["tool"].(map[string]any)["driver"].(map[string]any)["rules"].([]any)
	for i, r := range run["results"].([]any) {
		res := r.(map[string]any)
		idx := int(res["ruleIndex"].(float64))
		if rules[idx].(map[string]any)["id"] != res["ruleId"] {
			t.Errorf("result %d: ruleIndex %d points at %v, not %v", i, idx, rules[idx], res["ruleId"])
		}
	}

	// A clean report, and findings with awkward content: a file name that
	// needs escaping in a URI, a finding at line 0, notes, quotes and newlines.
	clean, err := Check(context.Background(), Options{Theme: "demo", SkillDir: copyDirIntegrated(t), Chunks: loadChunks(t), Config: checkCfg(), DeclaredTools: "testdata/declared/tools.yaml"})
	if err != nil {
		t.Fatal(err)
	}
	if clean.Summary.Errors != 0 {
		t.Fatalf("the clean fixture has errors:\n%s", textOf(t, clean))
	}
	validateSARIF(t, sch, clean)
	odd := Report{Theme: "demo", Findings: []Finding{
		{Severity: SevNote, RuleID: "VIBE020", Check: "coverage.missing-rule", File: "knowledge/八字 notes/rules #1.yaml", Line: 0, Column: 0, Message: "says \"凡…则…\"\nand more"},
		{Severity: SevWarning, RuleID: "VIBE030", Check: "duplicate.rule", Item: "T2_001", File: "knowledge/rules.yaml", Line: 3, Column: 7, Message: "m"},
		{Severity: SevWarning, RuleID: "VIBE030", Check: "duplicate.pattern", Item: "QP1", File: "knowledge/patterns.yaml", Line: 3, Column: 7, Message: "m"},
	}}
	log = validateSARIF(t, sch, odd)
	res := log["runs"].([]any)[0].(map[string]any)["results"].([]any)[0].(map[string]any)
	uri := res["locations"].([]any)[0].(map[string]any)["physicalLocation"].(map[string]any)["artifactLocation"].(map[string]any)["uri"]
	if uri != "knowledge/%E5%85%AB%E5%AD%97%20notes/rules%20%231.yaml" {
		t.Errorf("uri %v is not the percent-encoded path", uri)
	}
}

// copyDirIntegrated is the clean fixture after integrate, with its
// hand-declared tools merged.
func copyDirIntegrated(t *testing.T) string {
	t.Helper()
	dir := copyDir(t, "testdata/clean")
	if _, err := Integrate(context.Background(), IntegrateOptions{Theme: "demo", SkillDir: dir, DeclaredTools: "testdata/declared/tools.yaml"}); err != nil {
		t.Fatal(err)
	}
	return dir
}
