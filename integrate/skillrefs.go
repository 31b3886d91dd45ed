package integrate

import (
	"os"
	"path/filepath"
	"slices"

	"gopkg.in/yaml.v3"
)

// skillRefs is what the SKILL.md front matter names outside itself
// (skill-spec-v5): the skills it requires and the tools it uses.
type skillRefs struct {
	Requires []string `yaml:"requires"`
	Tools    []string `yaml:"tools"`
}

// checkSkillRefs reports, as the runtime would refuse to load the skill, a
// required skill not installed beside this one and a listed tool that is
// neither in tools/tools.yaml nor a core tool.
func (c *checker) checkSkillRefs(path string, refs skillRefs, fpos func(string) pos) {
	skillDir := filepath.Dir(path)
	for _, r := range refs.Requires {
		if _, err := os.Stat(filepath.Join(filepath.Dir(skillDir), r, "SKILL.md")); err != nil {
			c.add(SevError, "VIBE050", "skill.requires", r, path, fpos("requires"), "requires skill %s, which is not installed (no skills/%s/SKILL.md): build it or remove it from requires", r, r)
		}
	}
	if len(refs.Tools) == 0 {
		return
	}
	var tf struct {
		Tools []struct {
			Name string `yaml:"name"`
		} `yaml:"tools"`
	}
	if b, err := os.ReadFile(filepath.Join(skillDir, "tools", "tools.yaml")); err == nil {
		_ = yaml.Unmarshal(b, &tf)
	}
	for _, n := range refs.Tools {
		known := slices.Contains(coreTools, n)
		for _, t := range tf.Tools {
			known = known || t.Name == n
		}
		if !known {
			c.add(SevError, "VIBE050", "skill.tools", n, path, fpos("tools"), "tools lists %s, which is neither a tool of tools/tools.yaml nor a core tool: declare it in knowledge/%s/tools.yaml or remove it from tools", n, c.opt.Theme)
		}
	}
}
