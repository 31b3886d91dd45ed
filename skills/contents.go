package skills

import (
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"
)

// ContentsPath is the skill file listing the headings of the skill's
// sources, document by document, in their order: what the books are about,
// section by section. `vibe integrate` writes it from the stored chunks.
// The router reads the headings as words of the skill (a question about 奔豚
// or "the opposition" reaches the skill whose books have a section on it,
// though no rule or glossary term names it), and a model can read the file
// as one of the skill's resources.
const ContentsPath = "knowledge/contents.yaml"

// Contents is the table of contents of a skill's sources.
type Contents struct {
	Documents []ContentsDocument `yaml:"documents" json:"documents"`
}

// ContentsDocument is one source document: its path in the workspace, its
// title, and its distinct headings in the order they first appear.
type ContentsDocument struct {
	Source   string   `yaml:"source" json:"source"`
	Title    string   `yaml:"title,omitempty" json:"title,omitempty"`
	Headings []string `yaml:"headings,omitempty" json:"headings,omitempty"`
}

// ParseContents decodes a contents file; where names it in errors.
func ParseContents(b []byte, where string) (Contents, error) {
	var c Contents
	if err := yaml.Unmarshal(b, &c); err != nil {
		return c, fmt.Errorf("%s: %w (expected `documents:` with a list of {source, title, headings}; `vibe integrate` rewrites it)", where, err)
	}
	for i, d := range c.Documents {
		if strings.TrimSpace(d.Source) == "" {
			return c, fmt.Errorf("%s: documents[%d]: source is empty; `vibe integrate` rewrites the file from the store", where, i)
		}
	}
	return c, nil
}
