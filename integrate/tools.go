package integrate

// ToolsFile is skills/<theme>/tools/tools.yaml (design §8.5).
type ToolsFile struct {
	Tools []Tool `yaml:"tools" json:"tools"`
}

// Tool is one tool declaration.
type Tool struct {
	Name        string         `yaml:"name" json:"name"`
	Type        string         `yaml:"type" json:"type"` // compute|collect|display|retrieve|flow
	Description string         `yaml:"description" json:"description"`
	WhenToCall  string         `yaml:"when_to_call" json:"when_to_call"`
	CardType    string         `yaml:"card_type,omitempty" json:"card_type,omitempty"`
	CardProps   map[string]any `yaml:"card_props,omitempty" json:"card_props,omitempty"`
	Parameters  map[string]any `yaml:"parameters,omitempty" json:"parameters,omitempty"`
	Returns     map[string]any `yaml:"returns,omitempty" json:"returns,omitempty"`
}
