package integrate

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"unicode"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// maxExamples is how many example questions SKILL.md offers; an example
// longer than maxExampleRunes is not offered (the welcome shows each on a
// button).
const (
	maxExamples     = 4
	maxExampleRunes = 80
)

// exampleQuestions returns the example questions of the SKILL.md front
// matter: the first questions of the theme's eval cases (path), taken in
// turn from each language they are written in (Han script or not), so a
// bilingual theme offers both. A missing file gives none; a file that is not
// an eval set is an error naming it (shown as name).
func exampleQuestions(path, name string) ([]string, error) {
	if path == "" {
		return nil, nil
	}
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var f struct {
		Cases []struct {
			Question string `yaml:"question"`
		} `yaml:"cases"`
	}
	if err := yaml.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("%s: the example questions are taken from its cases: %w (vibe schema eval shows its shape)", name, err)
	}
	var byLang [2][]string
	for _, c := range f.Cases {
		q := strings.Join(strings.Fields(c.Question), " ")
		if q == "" || utf8.RuneCountInString(q) > maxExampleRunes {
			continue
		}
		i := 1
		if strings.IndexFunc(q, func(r rune) bool { return unicode.Is(unicode.Han, r) }) >= 0 {
			i = 0
		}
		byLang[i] = append(byLang[i], q)
	}
	var out []string
	for k := 0; len(out) < maxExamples && (k < len(byLang[0]) || k < len(byLang[1])); k++ {
		for _, qs := range byLang {
			if k < len(qs) && len(out) < maxExamples {
				out = append(out, qs[k])
			}
		}
	}
	return out, nil
}
