package integrate

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/vibelife/vibe/knowledge"
	"github.com/vibelife/vibe/skills"
)

// Snapshot is the knowledge and the tools of one build, for Diff.
type Snapshot struct {
	SOP      knowledge.SOPFile
	Patterns knowledge.PatternsFile
	Rules    knowledge.RulesFile
	Tools    ToolsFile
}

// SnapshotFiles are the files of a skill directory a Snapshot reads, by
// their path in it.
var SnapshotFiles = []string{"knowledge/sop.yaml", "knowledge/patterns.yaml", "knowledge/rules.yaml", "tools/tools.yaml"}

// ParseSnapshot decodes a build's knowledge files and tools.yaml; read
// returns a file's bytes by its path in the skill directory (SnapshotFiles)
// and ok=false when the build has no such file (a build without
// tools/tools.yaml has no tools).
func ParseSnapshot(read func(name string) (data []byte, ok bool, err error)) (Snapshot, error) {
	var s Snapshot
	into := []any{&s.SOP, &s.Patterns, &s.Rules, &s.Tools}
	for i, name := range SnapshotFiles {
		data, ok, err := read(name)
		if err != nil {
			return s, err
		}
		if !ok {
			continue
		}
		if err := yaml.Unmarshal(data, into[i]); err != nil {
			return s, fmt.Errorf("%s: %w", name, err)
		}
	}
	return s, nil
}

// Change is one difference between two builds.
type Change struct {
	Kind string `json:"kind"` // added|removed|reworded|retiered|cited|step-changed|tool-changed
	// Area is what Item is: rule, step, pattern or tool.
	Area   string `json:"area"`
	Item   string `json:"item"`
	Detail string `json:"detail"`
	// Fields lists what changed in a changed tool: type, description,
	// when_to_call, parameters, returns, card_type, card_props, plugin.
	Fields []string `json:"fields,omitempty"`
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
			out = append(out, Change{Kind: "added", Area: "rule", Item: id, Detail: fmt.Sprintf("rule %s (%s): %s -> %s", id, n.Tier, n.Condition, ruleOutcome(n.Rule))})
			continue
		}
		if o.Tier != n.Tier {
			out = append(out, Change{Kind: "retiered", Area: "rule", Item: id, Detail: fmt.Sprintf("rule %s moved %s -> %s", id, o.Tier, n.Tier)})
		}
		if o.Condition != n.Condition || ruleOutcome(o.Rule) != ruleOutcome(n.Rule) {
			out = append(out, Change{Kind: "reworded", Area: "rule", Item: id, Detail: fmt.Sprintf("rule %s: %q -> %q", id, o.Condition+" -> "+ruleOutcome(o.Rule), n.Condition+" -> "+ruleOutcome(n.Rule))})
		}
		if c := citeChange(o.Evidence, n.Evidence); c != "" {
			out = append(out, Change{Kind: "cited", Area: "rule", Item: id, Detail: fmt.Sprintf("rule %s citations %s", id, c)})
		}
	}
	for _, id := range sortedKeys(oldR) {
		if _, ok := newR[id]; !ok {
			o := oldR[id]
			out = append(out, Change{Kind: "removed", Area: "rule", Item: id, Detail: fmt.Sprintf("rule %s (%s): %s -> %s", id, o.Tier, o.Condition, ruleOutcome(o.Rule))})
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
			out = append(out, Change{Kind: "added", Area: "step", Item: id, Detail: fmt.Sprintf("SOP step %s in %s: %s", id, n.phase, n.Action)})
		case o.Action != n.Action || o.Tool != n.Tool || o.phase != n.phase:
			out = append(out, Change{Kind: "step-changed", Area: "step", Item: id, Detail: fmt.Sprintf("SOP step %s: %q (tool %s, phase %s) -> %q (tool %s, phase %s)", id, o.Action, o.Tool, o.phase, n.Action, n.Tool, n.phase)})
		}
		if ok {
			if c := citeChange(o.Evidence, n.Evidence); c != "" {
				out = append(out, Change{Kind: "cited", Area: "step", Item: id, Detail: fmt.Sprintf("SOP step %s citations %s", id, c)})
			}
		}
	}
	for _, id := range sortedKeys(oldS) {
		if _, ok := newS[id]; !ok {
			out = append(out, Change{Kind: "removed", Area: "step", Item: id, Detail: fmt.Sprintf("SOP step %s: %s", id, oldS[id].Action)})
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
			out = append(out, Change{Kind: "added", Area: "pattern", Item: id, Detail: fmt.Sprintf("pattern %s: %s", id, n.Name)})
		case o.Signature != n.Signature || o.Indication != n.Indication || o.Name != n.Name:
			out = append(out, Change{Kind: "reworded", Area: "pattern", Item: id, Detail: fmt.Sprintf("pattern %s: %q -> %q", id, o.Signature+" => "+o.Indication, n.Signature+" => "+n.Indication)})
		}
	}
	for _, id := range sortedKeys(oldP) {
		if _, ok := newP[id]; !ok {
			out = append(out, Change{Kind: "removed", Area: "pattern", Item: id, Detail: fmt.Sprintf("pattern %s: %s", id, oldP[id].Name)})
		}
	}
	return append(out, diffTools(old.Tools, cur.Tools)...)
}

// diffTools lists the tools added, removed and changed, and for a changed
// one what changed: its type, description, when_to_call, parameters,
// returns, card type and props, plugin, draw, steps, form, sources, version
// and cache.
func diffTools(old, cur ToolsFile) []Change {
	var out []Change
	oldT, newT := map[string]skills.Tool{}, map[string]skills.Tool{}
	for _, t := range old.Tools {
		oldT[t.Name] = t
	}
	for _, t := range cur.Tools {
		newT[t.Name] = t
	}
	for _, name := range sortedKeys(newT) {
		n := newT[name]
		o, ok := oldT[name]
		if !ok {
			out = append(out, Change{Kind: "added", Area: "tool", Item: name, Detail: fmt.Sprintf("tool %s (%s%s): %s", name, n.Type, pluginNote(n.Plugin), n.Description)})
			continue
		}
		var fields, what []string
		note := func(field, format string, args ...any) {
			fields = append(fields, field)
			what = append(what, fmt.Sprintf(format, args...))
		}
		if o.Type != n.Type {
			note("type", "type %s -> %s", o.Type, n.Type)
		}
		if o.Description != n.Description {
			note("description", "description %q -> %q", o.Description, n.Description)
		}
		if o.WhenToCall != n.WhenToCall {
			note("when_to_call", "when_to_call %q -> %q", o.WhenToCall, n.WhenToCall)
		}
		if d := diffFields(o.Parameters, n.Parameters); d != "" {
			note("parameters", "parameters %s", d)
		}
		if d := diffFields(o.Returns, n.Returns); d != "" {
			note("returns", "returns %s", d)
		}
		if o.CardType != n.CardType {
			note("card_type", "card_type %s -> %s", nonEmpty(o.CardType, "(none)"), nonEmpty(n.CardType, "(none)"))
		}
		if d := diffFields(o.CardProps, n.CardProps); d != "" {
			note("card_props", "card props %s", d)
		}
		if a, b := pluginNote(o.Plugin), pluginNote(n.Plugin); a != b {
			note("plugin", "plugin %s -> %s", nonEmpty(strings.TrimPrefix(a, ", "), "(none)"), nonEmpty(strings.TrimPrefix(b, ", "), "(none)"))
		}
		// The declarations of the other types, compared whole.
		for _, f := range []struct {
			name string
			a, b any
		}{{"draw", o.Draw, n.Draw}, {"steps", o.Steps, n.Steps}, {"form", o.Form, n.Form}, {"sources", o.Sources, n.Sources}, {"version", o.Version, n.Version}, {"cache", o.Cache, n.Cache}} {
			ja, _ := yaml.Marshal(f.a)
			jb, _ := yaml.Marshal(f.b)
			if string(ja) != string(jb) {
				note(f.name, "%s changed", f.name)
			}
		}
		if len(fields) > 0 {
			out = append(out, Change{Kind: "tool-changed", Area: "tool", Item: name, Detail: fmt.Sprintf("tool %s: %s", name, strings.Join(what, "; ")), Fields: fields})
		}
	}
	for _, name := range sortedKeys(oldT) {
		if _, ok := newT[name]; !ok {
			o := oldT[name]
			out = append(out, Change{Kind: "removed", Area: "tool", Item: name, Detail: fmt.Sprintf("tool %s (%s%s): %s", name, o.Type, pluginNote(o.Plugin), o.Description)})
		}
	}
	return out
}

// pluginNote describes a plugin as ", command [x --json], timeout 5s" (""
// for none).
func pluginNote(p *skills.Plugin) string {
	if p == nil || (p.URL == "" && len(p.Command) == 0) {
		return ""
	}
	s := ", url " + p.URL
	if len(p.Command) > 0 {
		s = ", command [" + strings.Join(p.Command, " ") + "]"
	}
	if p.Timeout != "" {
		s += ", timeout " + p.Timeout
	}
	return s
}

// diffFields compares two lists of parameters or props by name: "+name
// type" added, "-name" removed, "name type a -> b", "name required ->
// optional", "name description changed"; "" when they are the same.
func diffFields(old, cur []skills.Field) string {
	oldF := map[string]skills.Field{}
	for _, f := range old {
		oldF[f.Name] = f
	}
	var parts []string
	seen := map[string]bool{}
	for _, n := range cur {
		seen[n.Name] = true
		o, ok := oldF[n.Name]
		switch {
		case !ok:
			parts = append(parts, fmt.Sprintf("+%s %s%s", n.Name, n.Type, map[bool]string{true: " required"}[n.Required]))
			continue
		case o.Type != n.Type:
			parts = append(parts, fmt.Sprintf("%s type %s -> %s", n.Name, o.Type, n.Type))
		}
		if o.Required != n.Required {
			parts = append(parts, fmt.Sprintf("%s %s -> %s", n.Name, optionality(o.Required), optionality(n.Required)))
		}
		if o.Description != n.Description {
			parts = append(parts, n.Name+" description changed")
		}
	}
	for _, o := range old {
		if !seen[o.Name] {
			parts = append(parts, "-"+o.Name)
		}
	}
	return strings.Join(parts, ", ")
}

func optionality(required bool) string {
	if required {
		return "required"
	}
	return "optional"
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
