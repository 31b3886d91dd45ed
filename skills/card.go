package skills

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// CardTemplate is how the chat page lays out a display tool's card: a
// declaration from a small fixed vocabulary, no script and no markup. The
// page fills it with the card's props as text (a markdown field through
// its escaping renderer), so a template cannot inject anything.
//
//	card:
//	  title: "Brew: {tea}"          # {prop} is the prop's value
//	  layout: table                  # table, list or stats
//	  fields:
//	    - {prop: grams, label: Leaves, unit: g}
//	    - {prop: steeps_s, label: Steeps, unit: s, join: " · "}
//	    - {prop: method, label: Method, format: markdown}
//	  sources: citations             # a prop of chunk or rule ids: cite buttons
//	  note: Figures from the demo books.
type CardTemplate struct {
	Title   string      `yaml:"title,omitempty" json:"title,omitempty"`
	Layout  string      `yaml:"layout" json:"layout"`
	Fields  []CardField `yaml:"fields" json:"fields"`
	Sources string      `yaml:"sources,omitempty" json:"sources,omitempty"`
	Note    string      `yaml:"note,omitempty" json:"note,omitempty"`
}

// CardField is one field of a card: the prop shown, its label, and how.
type CardField struct {
	Prop  string `yaml:"prop" json:"prop"`
	Label string `yaml:"label,omitempty" json:"label,omitempty"`
	// Unit follows the value ("g", "°C"); Join joins a list's items
	// (default ", ").
	Unit string `yaml:"unit,omitempty" json:"unit,omitempty"`
	Join string `yaml:"join,omitempty" json:"join,omitempty"`
	// Format is text (the default), list (a list's items, one a line) or
	// markdown (rendered by the page's escaping Markdown renderer).
	Format string `yaml:"format,omitempty" json:"format,omitempty"`
}

// The card vocabulary: layouts and field formats.
var (
	CardLayouts = []string{"table", "list", "stats"}
	CardFormats = []string{"text", "list", "markdown"}
)

// The keys a card template and its fields may have: any other is a
// mistake (a misspelt key would silently do nothing).
var (
	cardKeys      = []string{"title", "layout", "fields", "sources", "note"}
	cardFieldKeys = []string{"prop", "label", "unit", "join", "format"}
)

// UnmarshalYAML decodes a card template, refusing keys outside the
// vocabulary.
func (c *CardTemplate) UnmarshalYAML(n *yaml.Node) error {
	if err := knownKeys(n, "card", cardKeys); err != nil {
		return err
	}
	if f := mapValue(n, "fields"); f != nil && f.Kind == yaml.SequenceNode {
		for i, fn := range f.Content {
			if err := knownKeys(fn, fmt.Sprintf("card.fields[%d]", i), cardFieldKeys); err != nil {
				return err
			}
		}
	}
	type plain CardTemplate
	return n.Decode((*plain)(c))
}

func mapValue(n *yaml.Node, key string) *yaml.Node {
	if n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

func knownKeys(n *yaml.Node, where string, keys []string) error {
	if n.Kind != yaml.MappingNode {
		return fmt.Errorf("line %d: %s must be a mapping (keys %s)", n.Line, where, strings.Join(keys, ", "))
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if k := n.Content[i].Value; !slices.Contains(keys, k) {
			return fmt.Errorf("line %d: %s.%s: unknown key; a card knows only %s (no script, no markup)", n.Content[i].Line, where, k, strings.Join(keys, ", "))
		}
	}
	return nil
}

var placeholder = regexp.MustCompile(`\{([^{}]*)\}`)

// cardIssues checks a display tool's card template against the tool's
// card_props: every field and placeholder names a prop, the layout and
// formats are in the vocabulary.
func cardIssues(t Tool) []ToolIssue {
	c := t.Card
	var out []ToolIssue
	add := func(field, format string, args ...any) {
		out = append(out, ToolIssue{Field: "card." + field, Message: fmt.Sprintf(format, args...)})
	}
	if t.Type != TypeDisplay {
		return []ToolIssue{{Field: "card", Message: fmt.Sprintf("tool %s is of type %s and has a card, which only display tools show: make it type display or drop card", t.Name, t.Type)}}
	}
	var props []string
	for _, p := range t.CardProps {
		props = append(props, p.Name)
	}
	known := func(p string) bool { return slices.Contains(props, p) }
	if !slices.Contains(CardLayouts, c.Layout) {
		add("layout", "display tool %s: layout %q: use one of %s", t.Name, c.Layout, strings.Join(CardLayouts, ", "))
	}
	if len(c.Fields) == 0 {
		add("fields", "display tool %s: the card has no fields: list the props it shows, e.g. fields: [{prop: %s, label: ...}]", t.Name, orNone(props))
	}
	if len(props) == 0 {
		add("fields", "display tool %s has a card but no card_props: declare the props the card shows under card_props", t.Name)
	}
	for i, f := range c.Fields {
		switch {
		case f.Prop == "":
			add(fmt.Sprintf("fields[%d].prop", i), "display tool %s: field %d names no prop: give prop: one of %s", t.Name, i, orNone(props))
		case len(props) > 0 && !known(f.Prop):
			add(fmt.Sprintf("fields[%d].prop", i), "display tool %s: %q is not one of its card_props (%s)", t.Name, f.Prop, orNone(props))
		}
		if f.Format != "" && !slices.Contains(CardFormats, f.Format) {
			add(fmt.Sprintf("fields[%d].format", i), "display tool %s: format %q: use one of %s", t.Name, f.Format, strings.Join(CardFormats, ", "))
		}
		for k, v := range map[string]string{"label": f.Label, "unit": f.Unit, "join": f.Join} {
			if utf8.RuneCountInString(v) > 80 {
				add(fmt.Sprintf("fields[%d].%s", i, k), "display tool %s: %s is longer than 80 characters: shorten it", t.Name, k)
			}
		}
	}
	for _, m := range placeholder.FindAllStringSubmatch(c.Title, -1) {
		if len(props) > 0 && !known(m[1]) {
			add("title", "display tool %s: the title's {%s} is not one of its card_props (%s)", t.Name, m[1], orNone(props))
		}
	}
	if c.Sources != "" && len(props) > 0 && !known(c.Sources) {
		add("sources", "display tool %s: sources names %q, which is not one of its card_props (%s)", t.Name, c.Sources, orNone(props))
	}
	return out
}
