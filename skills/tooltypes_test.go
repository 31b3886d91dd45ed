package skills

import (
	"strings"
	"testing"
	"testing/fstest"
)

func TestLoadRefusesAToolThatCannotRun(t *testing.T) {
	fsys := fstest.MapFS{
		"SKILL.md":         {Data: []byte("---\nname: oracle\ndescription: d\n---\nbody")},
		"tools/tools.yaml": {Data: []byte("tools:\n  - name: show_x\n    type: display\n    description: d\n  - name: ask\n    type: collect\n    description: no form\n")},
	}
	_, err := LoadFS(fsys, "oracle", "skills/oracle")
	if err == nil || !strings.Contains(err.Error(), "tools/tools.yaml: tools[1].form: collect tool ask has no form") || !strings.Contains(err.Error(), "vibe check oracle") {
		t.Fatalf("err = %v", err)
	}
	// A compute tool without a plugin still loads: calling it says what to add.
	fsys["tools/tools.yaml"] = &fstest.MapFile{Data: []byte("tools:\n  - name: calc\n    type: compute\n    description: d\n")}
	if _, err := LoadFS(fsys, "oracle", "skills/oracle"); err != nil {
		t.Fatal(err)
	}
}

func TestNextStep(t *testing.T) {
	steps := []FlowStep{
		{ID: "a", Branches: map[string]string{"yes": "c"}},
		{ID: "b", Next: "end"},
		{ID: "c"},
	}
	for _, tt := range []struct {
		i    int
		v    any
		want string
	}{{0, "yes", "c"}, {0, "no", "b"}, {1, 1.0, FlowEnd}, {2, "x", FlowEnd}} {
		if got := NextStep(steps, tt.i, tt.v); got != tt.want {
			t.Errorf("NextStep(%d, %v) = %s, want %s", tt.i, tt.v, got, tt.want)
		}
	}
}
