package integrate

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The example questions of SKILL.md are the eval set's first questions,
// taken in turn from each language it is written in; over-long ones are
// skipped, a missing file gives none and a broken one names the file.
func TestExampleQuestions(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "eval.yaml")
	long := strings.Repeat("长", maxExampleRunes+1)
	body := "version: 1\ncases:\n" +
		"  - {id: a, question: 伤官见官会怎样？}\n" +
		"  - {id: b, question: " + long + "}\n" +
		"  - {id: c, question: 煞印相生是什么意思？}\n" +
		"  - {id: d, question: \"What does  a clash mean?\"}\n" +
		"  - {id: e, question: 甲木参天是什么意思}\n" +
		"  - {id: f, question: \"Is a seven killings chart bad?\"}\n" +
		"  - {id: g, question: 第五个中文问题}\n"
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := exampleQuestions(p, "knowledge/bazi/eval.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"伤官见官会怎样？", "What does a clash mean?", "煞印相生是什么意思？", "Is a seven killings chart bad?"}
	if !slices.Equal(got, want) {
		t.Fatalf("examples = %q, want %q", got, want)
	}
	if got, err := exampleQuestions(filepath.Join(dir, "none.yaml"), "none.yaml"); err != nil || got != nil {
		t.Fatalf("missing file: %q %v", got, err)
	}
	if err := os.WriteFile(p, []byte("cases: {a: [}"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := exampleQuestions(p, "knowledge/bazi/eval.yaml"); err == nil || !strings.Contains(err.Error(), "knowledge/bazi/eval.yaml") {
		t.Fatalf("broken file: %v", err)
	}
}

// vibe check fails a SKILL.md whose examples the loader would refuse (the
// skill would not load in vibe serve), at the examples line.
func TestCheckExamples(t *testing.T) {
	dir := copyDir(t, "testdata/clean")
	ctx := context.Background()
	res, err := Integrate(ctx, IntegrateOptions{Theme: "demo", SkillDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	md, _ := os.ReadFile(res.SkillMD)
	edited := strings.Replace(string(md), "---\nname: demo\n", "---\nname: demo\nexamples: [ok, '']\n", 1)
	if err := os.WriteFile(res.SkillMD, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	rep, err := Check(ctx, Options{Theme: "demo", SkillDir: dir, Chunks: loadChunks(t), Config: checkCfg()})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range rep.Findings {
		if f.Check == "skill.examples" {
			got = append(got, fmt.Sprintf("%s %s:%d %s", f.RuleID, f.File, f.Line, f.Message))
		}
	}
	if want := "VIBE050 SKILL.md:3 examples[1] is empty: write a question a person would ask, or remove it"; strings.Join(got, "\n") != want || !rep.Failed(false) {
		t.Fatalf("findings %q, want %q", got, want)
	}
}
