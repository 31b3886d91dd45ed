package integrate

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/vibelife/vibe/skills"
)

func dirSnapshot(t *testing.T, dir string) Snapshot {
	t.Helper()
	s, err := ParseSnapshot(func(name string) ([]byte, bool, error) {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if errors.Is(err, os.ErrNotExist) {
			return nil, false, nil
		}
		return data, err == nil, err
	})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestDiffBetweenFixtures(t *testing.T) {
	changes := Diff(dirSnapshot(t, "testdata/clean"), dirSnapshot(t, "testdata/faulty"))
	// The clean fixture has no tools.yaml, the faulty one two tools.
	want := map[string]string{"T2_003": "added", "T3_001": "added", "P2_S1": "step-changed", "calc_strength": "added", "show_chart": "added"}
	got := map[string]bool{}
	for _, c := range changes {
		got[c.Item+"/"+c.Kind] = true
	}
	for item, kind := range want {
		if !got[item+"/"+kind] {
			t.Errorf("diff lacks %s %s; got %+v", kind, item, changes)
		}
	}
	if len(Diff(dirSnapshot(t, "testdata/clean"), dirSnapshot(t, "testdata/clean"))) != 0 {
		t.Error("a build differs from itself")
	}
	var b bytes.Buffer
	if err := WriteDiff(&b, changes); err != nil {
		t.Fatal(err)
	}
	golden(t, "diff.clean-faulty.golden", b.Bytes())
}

// TestDiffTools: tools added, removed and changed, and for a changed one
// what changed, in the text and in the JSON change list.
func TestDiffTools(t *testing.T) {
	parse := func(doc string) Snapshot {
		t.Helper()
		var s Snapshot
		if err := yaml.Unmarshal([]byte(doc), &s.Tools); err != nil {
			t.Fatal(err)
		}
		return s
	}
	old := parse(`tools:
  - name: calc_brew
    type: compute
    description: brew figures
    parameters:
      - {name: tea, type: string, required: true}
      - {name: vessel_ml, type: integer}
      - {name: milk, type: boolean}
    plugin: {command: [plugins/brew-calc], timeout: 5s}
  - name: show_brew_card
    type: display
    description: a card
    card_type: brew_card
    card_props:
      - {name: grams, type: number, required: true}
  - name: lookup
    type: retrieve
    description: gone
  - name: same
    type: flow
    description: unchanged
`)
	cur := parse(`tools:
  - name: calc_brew
    type: compute
    description: brew figures
    parameters:
      - {name: tea, type: string, required: true}
      - {name: vessel_ml, type: number, required: true}
      - {name: leaf, type: string}
    plugin: {url: "http://127.0.0.1:9000/brew"}
  - name: show_brew_card
    type: display
    description: a card
    card_type: brew_card_v2
    card_props:
      - {name: grams, type: number, required: true, description: leaves}
      - {name: temp_c, type: integer}
  - name: ask_vessel
    type: collect
    description: asks for the vessel
  - name: same
    type: flow
    description: unchanged
`)
	changes := Diff(old, cur)
	var b bytes.Buffer
	if err := WriteDiff(&b, changes); err != nil {
		t.Fatal(err)
	}
	want := `added        tool ask_vessel (collect): asks for the vessel
tool-changed tool calc_brew: parameters vessel_ml type integer -> number, vessel_ml optional -> required, +leaf string, -milk; plugin command [plugins/brew-calc], timeout 5s -> url http://127.0.0.1:9000/brew
tool-changed tool show_brew_card: card_type brew_card -> brew_card_v2; card props grams description changed, +temp_c integer
removed      tool lookup (retrieve): gone
`
	if b.String() != want {
		t.Errorf("diff:\n%s\nwant:\n%s", b.String(), want)
	}
	var fields [][]string
	for _, c := range changes {
		if c.Area != "tool" {
			t.Errorf("change %+v: area %q", c, c.Area)
		}
		if c.Kind == "tool-changed" {
			fields = append(fields, c.Fields)
		}
	}
	if !reflect.DeepEqual(fields, [][]string{{"parameters", "plugin"}, {"card_type", "card_props"}}) {
		t.Errorf("changed fields %q", fields)
	}
	j, _ := json.Marshal(changes[1])
	if !strings.Contains(string(j), `"kind":"tool-changed","area":"tool","item":"calc_brew"`) || !strings.Contains(string(j), `"fields":["parameters","plugin"]`) {
		t.Errorf("json %s", j)
	}
	// The type and the texts the model reads count too.
	moved := parse("tools:\n  - {name: same, type: compute, description: now computes, when_to_call: always}\n")
	if c := Diff(cur, moved); len(c) != 4 || !reflect.DeepEqual(c[0].Fields, []string{"type", "description", "when_to_call"}) {
		t.Errorf("type change: %+v", c)
	}
	if len(Diff(cur, cur)) != 0 {
		t.Error("a build's tools differ from themselves")
	}
}

func TestDiffToolsOfEveryType(t *testing.T) {
	old := ToolsFile{Tools: []skills.Tool{
		{Name: "draw", Type: "random", Description: "d", Draw: &skills.Draw{Items: []any{"a", "b"}}},
		{Name: "quiz", Type: "flow", Description: "d", Steps: []skills.FlowStep{{ID: "a", Prompt: "A", Field: skills.Field{Type: "string"}}}},
	}}
	cur := ToolsFile{Tools: []skills.Tool{
		{Name: "draw", Type: "random", Description: "d", Draw: &skills.Draw{Items: []any{"a", "b", "c"}}},
		{Name: "quiz", Type: "flow", Description: "d", Steps: []skills.FlowStep{{ID: "a", Prompt: "A", Field: skills.Field{Type: "string"}}}},
	}}
	ch := diffTools(old, cur)
	if len(ch) != 1 || ch[0].Item != "draw" || strings.Join(ch[0].Fields, ",") != "draw" {
		t.Fatalf("changes %+v", ch)
	}
}
