package integrate

import (
	"bytes"
	"errors"
	"math"
	"os"
	"regexp"
	"strings"
	"sync"

	"github.com/pkoukk/tiktoken-go"
	tiktoken_loader "github.com/pkoukk/tiktoken-go-loader"
	"gopkg.in/yaml.v3"

	"github.com/vibelife/vibe/skills"
)

func sqrt(x float64) float64 { return math.Sqrt(x) }

// FrontMatter is the YAML front matter of SKILL.md.
type FrontMatter struct {
	Name              string   `yaml:"name"`
	DisplayName       string   `yaml:"display_name,omitempty"`
	Description       string   `yaml:"description"`
	Triggers          []string `yaml:"triggers,omitempty"`
	RequiresBirthInfo bool     `yaml:"requires_birth_info,omitempty"`
	Version           string   `yaml:"version,omitempty"`
	Tools             []string `yaml:"tools,omitempty"`
	Examples          []string `yaml:"examples,omitempty"`
}

// splitFrontMatter splits SKILL.md into the front matter node, the body and
// the body's first line number.
func splitFrontMatter(data []byte) (fm *yaml.Node, body string, bodyLine int, err error) {
	s := string(data)
	if !strings.HasPrefix(s, "---\n") {
		return nil, s, 1, errors.New("SKILL.md must start with a `---` front matter block")
	}
	end := strings.Index(s[4:], "\n---")
	if end < 0 {
		return nil, s, 1, errors.New("the front matter block is not closed by `---`")
	}
	head := s[4 : 4+end]
	rest := s[4+end+4:]
	rest = strings.TrimPrefix(rest, "\n")
	var n yaml.Node
	if err := yaml.Unmarshal([]byte(head), &n); err != nil {
		return nil, rest, 1, err
	}
	return &n, rest, strings.Count(s[:len(s)-len(rest)], "\n") + 1, nil
}

var (
	nameRe = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)
	tkOnce sync.Once
	tkEnc  *tiktoken.Tiktoken
	tkErr  error
)

func tiktokenCount(s string) int {
	tkOnce.Do(func() {
		tiktoken.SetBpeLoader(tiktoken_loader.NewOfflineLoader())
		tkEnc, tkErr = tiktoken.GetEncoding("cl100k_base")
	})
	if tkErr != nil {
		return len([]rune(s)) // conservative fallback: one token per character
	}
	return len(tkEnc.Encode(s, nil, nil))
}

func (c *checker) checkSkillMD(path string) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		c.add(SevError, "VIBE053", "skill.missing", "", path, pos{1, 1}, "SKILL.md is missing: run `vibe integrate %s`", c.opt.Theme)
		return
	}
	if err != nil {
		c.add(SevError, "VIBE053", "skill.unreadable", "", path, pos{1, 1}, "cannot read: %v", err)
		return
	}
	fmNode, body, bodyLine, err := splitFrontMatter(data)
	if err != nil {
		c.add(SevError, "VIBE050", "skill.front-matter", "", path, pos{1, 1}, "%v", err)
		return
	}
	var fm FrontMatter
	if err := fmNode.Decode(&fm); err != nil {
		c.add(SevError, "VIBE050", "skill.front-matter", "", path, yamlErrPos(err), "front matter: %v", err)
		return
	}
	fpos := func(key string) pos {
		if len(fmNode.Content) > 0 {
			m := fmNode.Content[0]
			for i := 0; i+1 < len(m.Content); i += 2 {
				if m.Content[i].Value == key {
					// +1: the node positions count from the line after the opening ---.
					return pos{m.Content[i+1].Line + 1, m.Content[i+1].Column}
				}
			}
		}
		return pos{1, 1}
	}
	switch {
	case fm.Name == "":
		c.add(SevError, "VIBE050", "skill.name", "", path, pos{1, 1}, "front matter has no name: add `name: %s`", c.opt.Theme)
	case !nameRe.MatchString(fm.Name) || len(fm.Name) > 32:
		c.add(SevError, "VIBE050", "skill.name", "", path, fpos("name"), "name %q must be lowercase letters, digits and hyphens, at most 32 characters", fm.Name)
	case fm.Name == "system" || fm.Name == "admin" || (fm.Name == "core" && c.opt.Theme != "core"):
		c.add(SevError, "VIBE050", "skill.name", "", path, fpos("name"), "name %q is reserved: choose another", fm.Name)
	}
	var refs skillRefs
	if fmNode.Decode(&refs) == nil {
		c.checkSkillRefs(path, refs, fpos)
	}
	if err := skills.CheckExamples(fm.Examples); err != nil {
		// The loader refuses the skill for it: vibe serve would skip it.
		c.add(SevError, "VIBE050", "skill.examples", "", path, fpos("examples"), "%v", err)
	}
	if fm.Description == "" {
		c.add(SevError, "VIBE051", "skill.description", "", path, pos{1, 1}, "front matter has no description: say what the skill does and when to use it")
	} else if n := len([]rune(fm.Description)); n > 512 {
		c.add(SevError, "VIBE051", "skill.description", "", path, fpos("description"), "description is %d characters; at most 512 are allowed", n)
	}
	count := c.opt.CountTokens
	if count == nil {
		count = tiktokenCount
	}
	if max := c.opt.Config.MaxMetadataTokens; max > 0 {
		if n := count(fm.Name + "\n" + fm.Description); n > max {
			c.add(SevWarning, "VIBE042", "size.metadata-tokens", "", path, fpos("description"), "name and description take %d tokens; keep the metadata about 50 (max %d)", n, max)
		}
	}
	if max := c.opt.Config.MaxSkillTokens; max > 0 {
		if n := count(body); n > max {
			c.add(SevError, "VIBE041", "size.skill-tokens", "", path, pos{bodyLine, 1}, "SKILL.md body is %d tokens; at most %d load well: move detail into knowledge/ or shorten the SOP", n, max)
		}
	}
	for _, sec := range requiredSections {
		if !hasHeading(body, sec[0]) && !hasHeading(body, sec[1]) {
			c.add(SevError, "VIBE052", "skill.section-missing", "", path, pos{bodyLine, 1}, "SKILL.md has no `## %s` (or `## %s`) section (required by the skill spec)", sec[0], sec[1])
		}
	}
}

func hasHeading(body, title string) bool {
	for _, line := range bytes.Split([]byte(body), []byte("\n")) {
		l := strings.TrimSpace(string(line))
		if strings.HasPrefix(l, "#") && strings.Contains(l, title) {
			return true
		}
	}
	return false
}
