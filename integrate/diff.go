package integrate

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/vibelife/vibe/knowledge"
)

// Snapshot is the knowledge of one build, for Diff.
type Snapshot struct {
	SOP      knowledge.SOPFile
	Patterns knowledge.PatternsFile
	Rules    knowledge.RulesFile
}

// ParseSnapshot decodes a build's three knowledge files; read returns a
// file's bytes by name (sop.yaml, patterns.yaml, rules.yaml) and ok=false
// when the build has no such file.
func ParseSnapshot(read func(name string) (data []byte, ok bool, err error)) (Snapshot, error) {
	var s Snapshot
	for name, into := range map[string]any{"sop.yaml": &s.SOP, "patterns.yaml": &s.Patterns, "rules.yaml": &s.Rules} {
		data, ok, err := read(name)
		if err != nil {
			return s, err
		}
		if !ok {
			continue
		}
		if err := yaml.Unmarshal(data, into); err != nil {
			return s, fmt.Errorf("%s: %w", name, err)
		}
	}
	return s, nil
}

// Change is one difference between two builds.
type Change struct {
	Kind   string `json:"kind"` // added|removed|reworded|retiered|cited|step-changed
	Item   string `json:"item"`
	Detail string `json:"detail"`
}

// Diff lists what changed from old to new: rules added, removed, reworded,
// re-tiered; SOP steps and phases changed; patterns changed; citations moved.
func Diff(old, cur Snapshot) []Change {
	var out []Change
	oldR, newR := map[string]knowledge.TieredRule{}, map[string]knowledge.TieredRule{}
	for _, r := range old.Rules.Rules.All() {
		oldR[r.ID] = r
	}
	for _, r := range cur.Rules.Rules.All() {
		newR[r.ID] = r
	}
	for _, id := range sortedKeys(newR) {
		n := newR[id]
		o, ok := oldR[id]
		if !ok {
			out = append(out, Change{"added", id, fmt.Sprintf("rule %s (%s): %s -> %s", id, n.Tier, n.Condition, ruleOutcome(n.Rule))})
			continue
		}
		if o.Tier != n.Tier {
			out = append(out, Change{"retiered", id, fmt.Sprintf("rule %s moved %s -> %s", id, o.Tier, n.Tier)})
		}
		if o.Condition != n.Condition || ruleOutcome(o.Rule) != ruleOutcome(n.Rule) {
			out = append(out, Change{"reworded", id, fmt.Sprintf("rule %s: %q -> %q", id, o.Condition+" -> "+ruleOutcome(o.Rule), n.Condition+" -> "+ruleOutcome(n.Rule))})
		}
		if c := citeChange(o.Evidence, n.Evidence); c != "" {
			out = append(out, Change{"cited", id, fmt.Sprintf("rule %s citations %s", id, c)})
		}
	}
	for _, id := range sortedKeys(oldR) {
		if _, ok := newR[id]; !ok {
			o := oldR[id]
			out = append(out, Change{"removed", id, fmt.Sprintf("rule %s (%s): %s -> %s", id, o.Tier, o.Condition, ruleOutcome(o.Rule))})
		}
	}

	type step struct {
		phase string
		knowledge.Step
	}
	oldS, newS := map[string]step{}, map[string]step{}
	for _, p := range old.SOP.SOP.Phases {
		for _, s := range p.Steps {
			oldS[s.ID] = step{p.ID, s}
		}
	}
	for _, p := range cur.SOP.SOP.Phases {
		for _, s := range p.Steps {
			newS[s.ID] = step{p.ID, s}
		}
	}
	for _, id := range sortedKeys(newS) {
		n := newS[id]
		o, ok := oldS[id]
		switch {
		case !ok:
			out = append(out, Change{"added", id, fmt.Sprintf("SOP step %s in %s: %s", id, n.phase, n.Action)})
		case o.Action != n.Action || o.Tool != n.Tool || o.phase != n.phase:
			out = append(out, Change{"step-changed", id, fmt.Sprintf("SOP step %s: %q (tool %s, phase %s) -> %q (tool %s, phase %s)", id, o.Action, o.Tool, o.phase, n.Action, n.Tool, n.phase)})
		}
		if ok {
			if c := citeChange(o.Evidence, n.Evidence); c != "" {
				out = append(out, Change{"cited", id, fmt.Sprintf("SOP step %s citations %s", id, c)})
			}
		}
	}
	for _, id := range sortedKeys(oldS) {
		if _, ok := newS[id]; !ok {
			out = append(out, Change{"removed", id, fmt.Sprintf("SOP step %s: %s", id, oldS[id].Action)})
		}
	}

	oldP, newP := map[string]knowledge.Pattern{}, map[string]knowledge.Pattern{}
	for _, p := range old.Patterns.Patterns.QuickPatterns {
		oldP[p.ID] = p
	}
	for _, p := range cur.Patterns.Patterns.QuickPatterns {
		newP[p.ID] = p
	}
	for _, id := range sortedKeys(newP) {
		n := newP[id]
		o, ok := oldP[id]
		switch {
		case !ok:
			out = append(out, Change{"added", id, fmt.Sprintf("pattern %s: %s", id, n.Name)})
		case o.Signature != n.Signature || o.Indication != n.Indication || o.Name != n.Name:
			out = append(out, Change{"reworded", id, fmt.Sprintf("pattern %s: %q -> %q", id, o.Signature+" => "+o.Indication, n.Signature+" => "+n.Indication)})
		}
	}
	for _, id := range sortedKeys(oldP) {
		if _, ok := newP[id]; !ok {
			out = append(out, Change{"removed", id, fmt.Sprintf("pattern %s: %s", id, oldP[id].Name)})
		}
	}
	return out
}

func ruleOutcome(r knowledge.Rule) string { return nonEmpty(r.Conclusion, r.Action) }

func citeChange(o, n []knowledge.Evidence) string {
	ids := func(ev []knowledge.Evidence) string {
		var s []string
		for _, e := range ev {
			s = append(s, e.Chunk)
		}
		return strings.Join(s, ",")
	}
	if a, b := ids(o), ids(n); a != b {
		return fmt.Sprintf("moved %s -> %s", a, b)
	}
	return ""
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// WriteDiff prints changes as a readable change log.
func WriteDiff(w io.Writer, changes []Change) error {
	if len(changes) == 0 {
		_, err := fmt.Fprintln(w, "no knowledge changes")
		return err
	}
	for _, c := range changes {
		if _, err := fmt.Fprintf(w, "%-12s %s\n", c.Kind, c.Detail); err != nil {
			return err
		}
	}
	return nil
}
