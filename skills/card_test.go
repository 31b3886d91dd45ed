package skills

import (
	"strings"
	"testing"
)

const cardTool = `tools:
  - name: show_brew
    type: display
    description: the brew
    card_type: brew_card
    card_props:
      - {name: tea, type: string}
      - {name: grams, type: number}
      - {name: citations, type: array}
    card:
%s
`

// A skill's card template loads with its tool; a template outside the
// vocabulary, or naming a prop the tool does not have, fails the load with
// the file and the field to fix.
func TestCardTemplates(t *testing.T) {
	root := t.TempDir()
	writeSkill(t, root, "tea", "---\nname: tea\ndescription: tea\n---\n# Tea\n", strings.ReplaceAll(cardTool, "%s",
		"      title: \"Brew: {tea}\"\n      layout: table\n      fields:\n        - {prop: grams, label: Leaves, unit: g}\n      sources: citations"))
	s, err := Open(root, Options{})
	if err != nil {
		t.Fatal(err)
	}
	sk, _ := s.Get("tea")
	tool, ok := sk.Tool("show_brew")
	if !ok || tool.Card == nil || tool.Card.Layout != "table" || tool.Card.Fields[0].Unit != "g" || tool.Card.Sources != "citations" {
		t.Fatalf("card = %+v", tool.Card)
	}
	for card, want := range map[string]string{
		"      layout: table\n      fields: [{prop: grams}]\n      script: alert(1)":  "card.script: unknown key",
		"      layout: table\n      fields: [{prop: grams, onclick: x}]":              "card.fields[0].onclick: unknown key",
		"      layout: carousel\n      fields: [{prop: grams}]":                       "tools[0].card.layout: display tool show_brew: layout \"carousel\"",
		"      layout: table\n      fields: [{prop: weight}]":                         "tools[0].card.fields[0].prop: display tool show_brew: \"weight\" is not one of its card_props (tea, grams, citations)",
		"      layout: list\n      fields: [{prop: grams, format: html}]":             "tools[0].card.fields[0].format: display tool show_brew: format \"html\"",
		"      title: \"{teas}\"\n      layout: stats\n      fields: [{prop: grams}]": "tools[0].card.title: display tool show_brew: the title's {teas}",
		"      layout: table\n      fields: [{prop: grams}]\n      sources: refs":     "tools[0].card.sources: display tool show_brew: sources names \"refs\"",
		"      layout: table\n      fields: []":                                       "tools[0].card.fields: display tool show_brew: the card has no fields",
	} {
		bad := t.TempDir()
		writeSkill(t, bad, "tea", "---\nname: tea\ndescription: tea\n---\n# Tea\n", strings.ReplaceAll(cardTool, "%s", card))
		_, err := Open(bad, Options{})
		if err == nil || !strings.Contains(err.Error(), "tools/tools.yaml") || !strings.Contains(err.Error(), want) {
			t.Errorf("card\n%s\nerr = %v\nwant %q", card, err, want)
		}
	}
	// A card on a tool that shows none.
	bad := t.TempDir()
	writeSkill(t, bad, "tea", "---\nname: tea\ndescription: tea\n---\n# Tea\n", "tools:\n  - {name: pick, type: random, description: d, draw: {items: [a]}, card: {layout: table, fields: [{prop: a}]}}\n")
	if _, err := Open(bad, Options{}); err == nil || !strings.Contains(err.Error(), "tools[0].card: tool pick is of type random and has a card") {
		t.Errorf("card on a random tool: %v", err)
	}
}
