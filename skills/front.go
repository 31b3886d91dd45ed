package skills

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// checkFrontTools refuses a front matter `tools` entry that is neither a
// tool of the skill's tools/tools.yaml nor a core tool.
func checkFrontTools(sk *Skill) error {
	var unknown []string
	for _, n := range sk.DeclaredTools {
		if _, ok := sk.Tool(n); !ok && !slices.Contains(BuiltinTools, n) {
			unknown = append(unknown, n)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	var own []string
	for _, t := range sk.Tools {
		own = append(own, t.Name)
	}
	return fmt.Errorf("tools: %s is neither a tool of tools/tools.yaml (%s) nor a core tool (%s); declare it in tools/tools.yaml or remove it from tools",
		strings.Join(unknown, ", "), orNone(own), strings.Join(BuiltinTools, ", "))
}

// MaxExamples and MaxExampleRunes bound the front matter's examples: the
// chat page shows each on a button of its welcome.
const (
	MaxExamples     = 8
	MaxExampleRunes = 200
)

// CheckExamples refuses front matter examples the welcome cannot show: an
// empty one, one too long, or too many.
func CheckExamples(ex []string) error {
	if len(ex) > MaxExamples {
		return fmt.Errorf("examples: %d questions; the welcome shows at most %d: keep the best ones", len(ex), MaxExamples)
	}
	for i, q := range ex {
		switch n := utf8.RuneCountInString(strings.TrimSpace(q)); {
		case n == 0:
			return fmt.Errorf("examples[%d] is empty: write a question a person would ask, or remove it", i)
		case n > MaxExampleRunes:
			return fmt.Errorf("examples[%d] has %d characters; at most %d: shorten the question", i, n, MaxExampleRunes)
		}
	}
	return nil
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}

// OfferedTools returns the skill's tools/tools.yaml tools the model is
// offered while it is active: all of them, or only those the front matter's
// `tools` lists when it lists any.
func (s *Skill) OfferedTools() []Tool {
	if len(s.DeclaredTools) == 0 {
		return s.Tools
	}
	var out []Tool
	for _, t := range s.Tools {
		if slices.Contains(s.DeclaredTools, t.Name) {
			out = append(out, t)
		}
	}
	return out
}

// requireError is a skill whose `requires` names a skill that is not
// installed.
type requireError struct {
	skill, missing string
	dropped        bool // missing was itself dropped for a missing requirement
}

func (e *requireError) Error() string {
	if e.dropped {
		return fmt.Sprintf("load skill %s: requires skill %s, which failed to load (see its error); fix %s or remove it from requires in %s/SKILL.md", e.skill, e.missing, e.missing, e.skill)
	}
	return fmt.Sprintf("load skill %s: requires skill %s, which is not installed (no skills/%s/SKILL.md); install %s or remove it from requires in %s/SKILL.md", e.skill, e.missing, e.missing, e.missing, e.skill)
}

// resolveRequires checks every skill's `requires` against the loaded
// skills, removing from m each skill whose requirement is missing (and, in
// turn, the skills requiring it), and returns why, by skill name.
func resolveRequires(m map[string]*Skill) []*requireError {
	var errs []*requireError
	dropped := map[string]bool{}
	for changed := true; changed; {
		changed = false
		names := make([]string, 0, len(m))
		for n := range m {
			names = append(names, n)
		}
		slices.Sort(names)
		for _, n := range names {
			for _, r := range m[n].Requires {
				if _, ok := m[r]; ok {
					continue
				}
				errs = append(errs, &requireError{skill: n, missing: r, dropped: dropped[r]})
				dropped[n] = true
				delete(m, n)
				changed = true
				break
			}
		}
	}
	return errs
}

// WithRequired returns names followed by the skills they require,
// transitively, each once, in order of first mention; unknown names are
// kept (the caller reports them).
func (s *Set) WithRequired(names []string) []string {
	var out []string
	seen := map[string]bool{}
	var add func(n string)
	add = func(n string) {
		if seen[n] {
			return
		}
		seen[n] = true
		out = append(out, n)
		if sk, err := s.Get(n); err == nil {
			for _, r := range sk.Requires {
				add(r)
			}
		}
	}
	for _, n := range names {
		add(n)
	}
	return out
}
