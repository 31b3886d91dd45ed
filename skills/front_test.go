package skills

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// writeSkill writes root/<dir>/SKILL.md (and tools/tools.yaml when given).
func writeSkill(t *testing.T, root, dir, skillMD, toolsYAML string) {
	t.Helper()
	d := filepath.Join(root, dir)
	if err := os.MkdirAll(filepath.Join(d, "tools"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(d, "SKILL.md"), []byte(skillMD), 0o644); err != nil {
		t.Fatal(err)
	}
	if toolsYAML != "" {
		if err := os.WriteFile(filepath.Join(d, "tools", "tools.yaml"), []byte(toolsYAML), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

const careerTools = `tools:
  - {name: score_career, type: compute, description: score}
  - {name: show_career, type: display, description: card, card_type: career}
`

// The skill spec's front matter is read: version (a YAML number kept as
// written), author, display name, requires, tools, requires_birth_info; the
// API's skill list (the headers as JSON) carries them.
func TestFrontMatterFields(t *testing.T) {
	root := t.TempDir()
	writeSkill(t, root, "bazi", "---\nname: bazi\ndescription: 八字\nrequires_birth_info: true\n---\n# 八字\n", "")
	writeSkill(t, root, "career", `---
name: career
display_name: 事业规划 / Career
description: career questions
version: 1.0
author: Vibe Team
requires: [bazi]
tools: [show_career, search_knowledge]
---
# Career
`, careerTools)
	s, err := Open(root, Options{})
	if err != nil {
		t.Fatal(err)
	}
	sk, err := s.Get("career")
	if err != nil {
		t.Fatal(err)
	}
	if sk.Version != "1.0" || sk.Author != "Vibe Team" || sk.DisplayName != "事业规划 / Career" || sk.Title() != "事业规划 / Career" ||
		!slices.Equal(sk.Requires, []string{"bazi"}) || !slices.Equal(sk.DeclaredTools, []string{"show_career", "search_knowledge"}) {
		t.Fatalf("header = %+v", sk.Header)
	}
	// Only the listed tools of tools.yaml are offered.
	if got := sk.OfferedTools(); len(got) != 1 || got[0].Name != "show_career" || len(sk.Tools) != 2 {
		t.Fatalf("offered = %+v", got)
	}
	if bz, _ := s.Get("bazi"); !bz.RequiresBirthInfo || bz.Title() != "bazi" || len(bz.OfferedTools()) != 0 {
		t.Fatalf("bazi = %+v", bz.Header)
	}
	b, _ := json.Marshal(s.Headers())
	for _, w := range []string{`"version":"1.0"`, `"display_name":"事业规划 / Career"`, `"author":"Vibe Team"`, `"requires":["bazi"]`, `"requires_birth_info":true`} {
		if !strings.Contains(string(b), w) {
			t.Errorf("headers JSON lacks %s: %s", w, b)
		}
	}
	// Activating career brings in bazi, once.
	if got := s.WithRequired([]string{"career", "bazi"}); !slices.Equal(got, []string{"career", "bazi"}) {
		t.Fatalf("with required = %v", got)
	}
	if got := s.WithRequired([]string{"career"}); !slices.Equal(got, []string{"career", "bazi"}) {
		t.Fatalf("with required = %v", got)
	}
}

// A required skill that is not installed is a load error naming both
// skills; with OnError the other skills still load, and a skill requiring
// the dropped one is dropped too, with its own error.
func TestRequiresMissingSkillIsALoadError(t *testing.T) {
	root := t.TempDir()
	writeSkill(t, root, "career", "---\nname: career\ndescription: c\nrequires: [bazi]\n---\n# C\n", "")
	writeSkill(t, root, "coach", "---\nname: coach\ndescription: c\nrequires: [career]\n---\n# C\n", "")
	writeSkill(t, root, "tea", "---\nname: tea\ndescription: t\n---\n# T\n", "")
	_, err := Open(root, Options{})
	if err == nil || !strings.Contains(err.Error(), "career") || !strings.Contains(err.Error(), "requires skill bazi, which is not installed") {
		t.Fatalf("err = %v", err)
	}
	var errs []string
	s, err := Open(root, Options{OnError: func(dir string, err error) { errs = append(errs, filepath.Base(dir)+": "+err.Error()) }})
	if err != nil {
		t.Fatal(err)
	}
	if hs := s.Headers(); len(hs) != 1 || hs[0].Name != "tea" {
		t.Fatalf("loaded = %+v", hs)
	}
	if len(errs) != 2 || !strings.Contains(strings.Join(errs, "\n"), "coach: load skill coach: requires skill career, which failed to load") {
		t.Fatalf("errors = %q", errs)
	}
}

// A front matter `tools` entry that is neither the skill's nor a core tool
// is a load error saying what to do.
func TestFrontMatterToolsMustExist(t *testing.T) {
	root := t.TempDir()
	writeSkill(t, root, "career", "---\nname: career\ndescription: c\ntools: [show_career, show_horoscope]\n---\n# C\n", careerTools)
	_, err := Open(root, Options{})
	if err == nil || !strings.Contains(err.Error(), "show_horoscope is neither a tool of tools/tools.yaml (score_career, show_career) nor a core tool") ||
		!strings.Contains(err.Error(), "SKILL.md front matter") {
		t.Fatalf("err = %v", err)
	}
}

// The front matter's examples reach the API's skill list; an empty, an
// over-long, or too many examples fail the load naming the field.
func TestFrontMatterExamples(t *testing.T) {
	root := t.TempDir()
	writeSkill(t, root, "tea", "---\nname: tea\ndescription: tea\nexamples: ['How hot for green tea?', 绿茶用多少度的水？]\n---\n# Tea\n", "")
	s, err := Open(root, Options{})
	if err != nil {
		t.Fatal(err)
	}
	sk, err := s.Get("tea")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(sk.Examples, []string{"How hot for green tea?", "绿茶用多少度的水？"}) {
		t.Fatalf("examples = %q", sk.Examples)
	}
	if b, _ := json.Marshal(s.Headers()); !strings.Contains(string(b), `"examples":["How hot for green tea?","绿茶用多少度的水？"]`) {
		t.Errorf("headers JSON lacks the examples: %s", b)
	}
	many := "[" + strings.Repeat("q, ", MaxExamples) + "q]"
	for front, want := range map[string]string{
		"examples: [ok, '  ']": "examples[1] is empty",
		"examples: [" + strings.Repeat("长", MaxExampleRunes+1) + "]": "examples[0] has 201 characters",
		"examples: " + many: "examples: 9 questions; the welcome shows at most 8",
	} {
		bad := t.TempDir()
		writeSkill(t, bad, "tea", "---\nname: tea\ndescription: tea\n"+front+"\n---\n# Tea\n", "")
		_, err := Open(bad, Options{})
		if err == nil || !strings.Contains(err.Error(), "SKILL.md front matter: "+want) {
			t.Errorf("%s: err = %v, want %q", front, err, want)
		}
	}
}
