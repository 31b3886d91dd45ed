package skills

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"gopkg.in/yaml.v3"
)

// Tool types (design expert-system-2.0 §2.3). Every one of them runs:
// compute calls its plugin, random draws from its declared set, collect shows
// its form, display shows its card, retrieve searches the skill's sources and
// flow walks its declared steps.
const (
	TypeCompute  = "compute"
	TypeRandom   = "random"
	TypeCollect  = "collect"
	TypeDisplay  = "display"
	TypeRetrieve = "retrieve"
	TypeFlow     = "flow"
)

// Types lists the tool types tools.yaml accepts.
var Types = []string{TypeCompute, TypeRandom, TypeCollect, TypeDisplay, TypeRetrieve, TypeFlow}

// Draw declares what a random tool draws from: a tarot deck, the 64
// hexagrams, the faces of a die. Items are listed inline or, for a long set,
// in ItemsFile, a YAML list in the skill (data/tarot.yaml). Count items are
// drawn (default 1), each once unless Repeat (dice: repeat: true). Reversed
// gives each drawn item an upright or reversed orientation (tarot).
type Draw struct {
	Items     []any  `yaml:"items,omitempty" json:"items,omitempty"`
	ItemsFile string `yaml:"items_file,omitempty" json:"items_file,omitempty"`
	Count     int    `yaml:"count,omitempty" json:"count,omitempty"`
	Repeat    bool   `yaml:"repeat,omitempty" json:"repeat,omitempty"`
	Reversed  bool   `yaml:"reversed,omitempty" json:"reversed,omitempty"`
}

// FlowStep is one step of a flow tool: the question put to the user
// (Prompt), the answer it takes (Field: its type and constraints), and where
// the flow goes next: Branches maps an answer to a step id, else Next, else
// the following step of the list; "end" (or the last step) ends the flow.
type FlowStep struct {
	ID       string            `yaml:"id" json:"id"`
	Prompt   string            `yaml:"prompt" json:"prompt"`
	Field    Field             `yaml:"field" json:"field"`
	Next     string            `yaml:"next,omitempty" json:"next,omitempty"`
	Branches map[string]string `yaml:"branches,omitempty" json:"branches,omitempty"`
}

// FlowEnd is the Next (or branch target) that ends a flow.
const FlowEnd = "end"

// NextStep returns the id of the step after steps[i] for the answer v
// (FlowEnd when the flow is done).
func NextStep(steps []FlowStep, i int, v any) string {
	st := steps[i]
	if to, ok := st.Branches[fmt.Sprint(v)]; ok {
		return to
	}
	if st.Next != "" {
		return st.Next
	}
	if i+1 < len(steps) {
		return steps[i+1].ID
	}
	return FlowEnd
}

// ToolIssue is one reason a declared tool cannot run: Field names the key of
// the tool's declaration to fix ("plugin", "draw.items", "steps[1].next").
type ToolIssue struct {
	Field   string
	Message string
}

// Issues reports why the runtime could not run the tool as declared, each
// with the fix; none for a tool that runs. fsys is the skill directory (for
// draw.items_file); nil skips the files.
func (t Tool) Issues(fsys fs.FS) []ToolIssue {
	var out []ToolIssue
	add := func(field, format string, args ...any) {
		out = append(out, ToolIssue{Field: field, Message: fmt.Sprintf(format, args...)})
	}
	if t.Draw != nil && t.Type != TypeRandom {
		add("draw", "tool %s is of type %s and has a draw, which only random tools use: make it type random or drop draw", t.Name, t.Type)
	}
	if len(t.Steps) > 0 && t.Type != TypeFlow {
		add("steps", "tool %s is of type %s and has steps, which only flow tools use: make it type flow or drop steps", t.Name, t.Type)
	}
	if len(t.Form) > 0 && t.Type != TypeCollect {
		add("form", "tool %s is of type %s and has a form, which only collect tools show: make it type collect or drop form", t.Name, t.Type)
	}
	if t.Card != nil {
		out = append(out, cardIssues(t)...)
	}
	if t.Prompt != "" && t.Type != TypeCollect {
		add("prompt", "tool %s is of type %s and has a prompt, which only collect tools show above their form: make it type collect or drop prompt", t.Name, t.Type)
	}
	if len(t.Sources) > 0 && t.Type != TypeRetrieve {
		add("sources", "tool %s is of type %s and has sources, which only retrieve tools search: make it type retrieve or drop sources", t.Name, t.Type)
	}
	switch t.Type {
	case TypeCompute:
		if t.Plugin == nil || (t.Plugin.URL == "" && len(t.Plugin.Command) == 0) {
			add("plugin", "compute tool %s has no plugin, so the agent cannot run it: give it plugin: {url: ...} or plugin: {command: [...]}, or remove the tool (and the SOP steps naming it) so the agent works the result out and shows its working", t.Name)
		}
	case TypeRandom:
		if t.Draw == nil {
			add("draw", "random tool %s has no draw: declare what it draws from, e.g. draw: {items: [1, 2, 3, 4, 5, 6], count: 2, repeat: true}", t.Name)
			break
		}
		items, err := t.Draw.Load(fsys)
		switch {
		case err != nil:
			add("draw.items_file", "random tool %s: %v", t.Name, err)
		case len(t.Draw.Items) > 0 && t.Draw.ItemsFile != "":
			add("draw", "random tool %s gives both draw.items and draw.items_file: keep one", t.Name)
		case len(items) == 0 && (fsys != nil || t.Draw.ItemsFile == ""):
			add("draw.items", "random tool %s draws from an empty set: list the items under draw.items or name a YAML list in draw.items_file", t.Name)
		case t.Draw.Count < 0:
			add("draw.count", "random tool %s: draw.count %d is negative: give the number of items drawn (default 1)", t.Name, t.Draw.Count)
		case !t.Draw.Repeat && t.Draw.Count > len(items) && len(items) > 0:
			add("draw.count", "random tool %s draws %d of %d items without repeat: lower draw.count or set draw.repeat: true", t.Name, t.Draw.Count, len(items))
		}
		if p, ok := t.param("count"); ok && JSONType(p.Type) != "integer" {
			add("parameters", "random tool %s: parameter count must be an integer (it overrides draw.count)", t.Name)
		}
	case TypeCollect:
		if len(t.Form) == 0 {
			add("form", "collect tool %s has no form: list the fields the user fills in under form: (as collect_info's fields), or use the core tool collect_info", t.Name)
		}
		seen := map[string]bool{}
		for i, f := range t.Form {
			if f.Name == "" || seen[f.Name] {
				add(fmt.Sprintf("form[%d].name", i), "collect tool %s: form field %d has an empty or repeated name %q: give each field its own name", t.Name, i, f.Name)
			}
			seen[f.Name] = true
			if err := f.CheckDecl(); err != nil {
				add(fmt.Sprintf("form[%d]", i), "collect tool %s: form field %s: %v: fix the declaration", t.Name, f.Name, err)
			}
		}
	case TypeRetrieve:
		if len(t.Parameters) > 0 {
			if p, ok := t.param("query"); !ok || JSONType(p.Type) != "string" {
				add("parameters", "retrieve tool %s: its parameters must include query (type string), the text searched; or drop parameters for the default {query, k}", t.Name)
			}
		}
		for i, s := range t.Sources {
			if strings.TrimSpace(s) == "" {
				add(fmt.Sprintf("sources[%d]", i), "retrieve tool %s: sources[%d] is empty: name a source of the theme (books/x.md) or drop it", t.Name, i)
			}
		}
	case TypeFlow:
		out = append(out, flowIssues(t)...)
	case TypeDisplay:
	default:
		add("type", "tool %s has type %q, which the runtime does not know: use one of %s", t.Name, t.Type, strings.Join(Types, ", "))
	}
	return out
}

func (t Tool) param(name string) (Field, bool) {
	for _, p := range t.Parameters {
		if p.Name == name {
			return p, true
		}
	}
	return Field{}, false
}

func flowIssues(t Tool) []ToolIssue {
	var out []ToolIssue
	add := func(field, format string, args ...any) {
		out = append(out, ToolIssue{Field: field, Message: fmt.Sprintf(format, args...)})
	}
	if len(t.Steps) == 0 {
		add("steps", "flow tool %s has no steps: list them under steps: (id, prompt, field; next or branches to branch), or use the core tools", t.Name)
		return out
	}
	ids := map[string]bool{}
	for i, s := range t.Steps {
		if s.ID == "" || s.ID == FlowEnd || ids[s.ID] {
			add(fmt.Sprintf("steps[%d].id", i), "flow tool %s: step %d has an empty, repeated or reserved (end) id %q: give each step its own id", t.Name, i, s.ID)
		}
		ids[s.ID] = true
	}
	for i, s := range t.Steps {
		if strings.TrimSpace(s.Prompt) == "" {
			add(fmt.Sprintf("steps[%d].prompt", i), "flow tool %s: step %s has no prompt: write the question put to the user", t.Name, s.ID)
		}
		if s.Field.Name == "" {
			s.Field.Name = s.ID
		}
		if s.Field.Type == "" {
			add(fmt.Sprintf("steps[%d].field", i), "flow tool %s: step %s has no field type: give field: {type: string} (or integer, number, boolean; with enum, minimum ...)", t.Name, s.ID)
		} else if err := s.Field.CheckDecl(); err != nil {
			add(fmt.Sprintf("steps[%d].field", i), "flow tool %s: step %s: %v: fix the declaration", t.Name, s.ID, err)
		}
		if s.Next != "" && s.Next != FlowEnd && !ids[s.Next] {
			add(fmt.Sprintf("steps[%d].next", i), "flow tool %s: step %s goes next to %q, which is not a step: name a step id or end", t.Name, s.ID, s.Next)
		}
		for ans, to := range s.Branches {
			if to != FlowEnd && !ids[to] {
				add(fmt.Sprintf("steps[%d].branches", i), "flow tool %s: step %s branches on %q to %q, which is not a step: name a step id or end", t.Name, s.ID, ans, to)
			}
			if len(s.Field.Enum) > 0 {
				in := false
				for _, e := range s.Field.Enum {
					in = in || fmt.Sprint(e) == ans
				}
				if !in {
					add(fmt.Sprintf("steps[%d].branches", i), "flow tool %s: step %s branches on %q, which its field's enum does not allow: use one of the enum values", t.Name, s.ID, ans)
				}
			}
		}
	}
	if len(out) > 0 {
		return out
	}
	// Every step must be able to reach the end, or the flow never finishes.
	index := map[string]int{}
	for i, s := range t.Steps {
		index[s.ID] = i
	}
	ends := map[string]bool{}
	for changed := true; changed; {
		changed = false
		for i, s := range t.Steps {
			if ends[s.ID] {
				continue
			}
			var targets []string
			if s.Next != "" {
				targets = append(targets, s.Next)
			} else if i+1 < len(t.Steps) {
				targets = append(targets, t.Steps[i+1].ID)
			} else {
				targets = append(targets, FlowEnd)
			}
			for _, to := range s.Branches {
				targets = append(targets, to)
			}
			for _, to := range targets {
				if to == FlowEnd || ends[to] {
					ends[s.ID], changed = true, true
					break
				}
			}
		}
	}
	for i, s := range t.Steps {
		if !ends[s.ID] {
			add(fmt.Sprintf("steps[%d].next", i), "flow tool %s: from step %s the flow can never end: let some step go next to end (or be the last step without next)", t.Name, s.ID)
			break
		}
	}
	return out
}

// Load returns the items drawn from: Items, or the YAML list in ItemsFile
// read from the skill directory fsys (nil: Items only).
func (d *Draw) Load(fsys fs.FS) ([]any, error) {
	if d.ItemsFile == "" || fsys == nil {
		return d.Items, nil
	}
	b, err := fs.ReadFile(fsys, d.ItemsFile)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("draw.items_file %s is not in the skill: add it (a YAML list) or fix the path", d.ItemsFile)
	}
	if err != nil {
		return nil, fmt.Errorf("draw.items_file %s: %v", d.ItemsFile, err)
	}
	var items []any
	if err := yaml.Unmarshal(b, &items); err != nil {
		return nil, fmt.Errorf("draw.items_file %s is not a YAML list: %v", d.ItemsFile, err)
	}
	return items, nil
}
