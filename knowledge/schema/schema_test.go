package schema

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestValidateYAML(t *testing.T) {
	tests := []struct {
		name    string
		kind    string
		doc     string
		want    []Problem // Path, Line, Column checked; Message checked by substring
		wantMsg []string
	}{
		{
			name: "valid rules",
			kind: Rules,
			doc: `rules:
  tier1_must_know:
    - id: R1
      condition: 身弱
      action: 先扶身
      priority: critical
      source: 滴天髓
      evidence: [{chunk: c1, quote: 身弱}]
  tier2_core: []
  tier3_edge: []
`,
		},
		{
			name: "bad priority located",
			kind: Rules,
			doc: `rules:
  tier1_must_know:
    - id: R1
      condition: 身弱
      action: 先扶身
      priority: urgent
      source: x
      evidence: [{chunk: c1, quote: q}]
  tier2_core: []
  tier3_edge: []
`,
			want:    []Problem{{Path: "/rules/tier1_must_know/0/priority", Line: 6, Column: 17}},
			wantMsg: []string{"critical"},
		},
		{
			name: "missing evidence on a step",
			kind: SOP,
			doc: `sop:
  name: n
  description: d
  phases:
    - id: P1
      name: 收集
      description: d
      entry_condition: e
      exit_condition: x
      steps:
        - id: P1.1
          action: 问生辰
          output: 生辰
`,
			want:    []Problem{{Path: "/sop/phases/0/steps/0", Line: 11, Column: 11}},
			wantMsg: []string{"evidence"},
		},
		{
			name:    "yaml syntax error",
			kind:    Patterns,
			doc:     "patterns:\n  quick_patterns: [\n  red_flags: x\n",
			want:    []Problem{{Path: "", Line: 1}},
			wantMsg: []string{"invalid YAML"},
		},
		{
			name: "valid tools",
			kind: Tools,
			doc: `tools:
  - name: search_knowledge
    type: retrieve
    description: search the books
`,
		},
		{
			name:    "bad tool type",
			kind:    Tools,
			doc:     "tools:\n  - name: x\n    type: magic\n    description: d\n",
			want:    []Problem{{Path: "/tools/0/type", Line: 3, Column: 11}},
			wantMsg: []string{"compute"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ValidateYAML(tt.kind, []byte(tt.doc))
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %d problems %v, want %d", len(got), got, len(tt.want))
			}
			for i, w := range tt.want {
				g := got[i]
				if g.Path != w.Path || g.Line != w.Line || (w.Column != 0 && g.Column != w.Column) {
					t.Errorf("problem %d = %v, want path %q at %d:%d", i, g, w.Path, w.Line, w.Column)
				}
				if !strings.Contains(g.Message, tt.wantMsg[i]) {
					t.Errorf("problem %d message %q lacks %q", i, g.Message, tt.wantMsg[i])
				}
			}
		})
	}
}

func TestUnknownKind(t *testing.T) {
	if _, err := ValidateYAML("nope", []byte("x: 1")); !errors.Is(err, ErrUnknownKind) {
		t.Fatalf("err = %v, want ErrUnknownKind", err)
	}
	if _, err := JSON("nope"); !errors.Is(err, ErrUnknownKind) {
		t.Fatalf("err = %v, want ErrUnknownKind", err)
	}
}

func TestSchemasAreJSON(t *testing.T) {
	for _, k := range Kinds() {
		b, err := JSON(k)
		if err != nil {
			t.Fatal(err)
		}
		var v map[string]any
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatalf("%s: %v", k, err)
		}
		if v["$schema"] == nil {
			t.Errorf("%s: no $schema", k)
		}
	}
}
