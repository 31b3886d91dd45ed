package skills

import (
	"os"
	"path/filepath"
	"testing"
	"testing/fstest"
)

// FuzzSkillMD loads a skill whose SKILL.md is the input (front matter and
// body): LoadFS must not panic, and a loaded skill answers its tier-1 and
// tier-2 calls.
func FuzzSkillMD(f *testing.F) {
	if b, err := os.ReadFile(filepath.Join("..", "runtime", "testdata", "skills", "bazi", "SKILL.md")); err == nil {
		f.Add(b)
	}
	f.Add([]byte("---\nname: a\ndescription: d\ntriggers: [x]\n---\nbody"))
	f.Fuzz(func(t *testing.T, data []byte) {
		sk, err := LoadFS(fstest.MapFS{"SKILL.md": {Data: data}}, "demo", "demo")
		if err != nil {
			return
		}
		_ = sk.Header.Summary()
		_ = sk.Instructions()
		_ = ValidateName(sk.Name)
	})
}

// FuzzToolsYAML loads a skill whose tools/tools.yaml is the input.
func FuzzToolsYAML(f *testing.F) {
	if b, err := os.ReadFile(filepath.Join("..", "runtime", "testdata", "skills", "bazi", "tools", "tools.yaml")); err == nil {
		f.Add(b)
	}
	f.Add([]byte("tools:\n  - name: x\n    type: display\n    card_props: [{name: a, type: string}]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		sk, err := LoadFS(fstest.MapFS{
			"SKILL.md":         {Data: []byte("---\nname: demo\n---\nb")},
			"tools/tools.yaml": {Data: data},
		}, "demo", "demo")
		if err != nil {
			return
		}
		for _, tl := range sk.Tools {
			if tl.Name == "" || tl.Type == "" {
				t.Fatalf("a tool without name or type was loaded: %+v", tl)
			}
			if _, ok := sk.Tool(tl.Name); !ok {
				t.Fatalf("tool %q not found by name", tl.Name)
			}
		}
	})
}
