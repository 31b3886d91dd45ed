package blind

import (
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"
)

// CaseBlocks returns the text up to and including the `cases:` line, and the text of each case
// (from its `- id:` line to the line before the next case, without trailing comment or blank
// lines).
func CaseBlocks(b []byte) (string, []string, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(b, &root); err != nil {
		return "", nil, err
	}
	if len(root.Content) != 1 {
		return "", nil, fmt.Errorf("not one YAML document")
	}
	m := root.Content[0]
	var seq *yaml.Node
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == "cases" {
			seq = m.Content[i+1]
		}
	}
	if seq == nil || seq.Kind != yaml.SequenceNode {
		return "", nil, fmt.Errorf("no cases sequence")
	}
	lines := strings.SplitAfter(string(b), "\n")
	var starts []int
	for _, c := range seq.Content {
		starts = append(starts, c.Line-1)
	}
	head := strings.Join(lines[:starts[0]], "")
	head = trimTrailing(head)
	var blocks []string
	for i, s := range starts {
		end := len(lines)
		if i+1 < len(starts) {
			end = starts[i+1]
		}
		blocks = append(blocks, trimTrailing(strings.Join(lines[s:end], "")))
	}
	return head, blocks, nil
}

// trimTrailing drops trailing blank and comment-only lines.
func trimTrailing(s string) string {
	ls := strings.SplitAfter(s, "\n")
	for len(ls) > 0 {
		t := strings.TrimSpace(ls[len(ls)-1])
		if t != "" && !strings.HasPrefix(t, "#") {
			break
		}
		ls = ls[:len(ls)-1]
	}
	return strings.Join(ls, "")
}
