package integrate

// ToolsFile is skills/<theme>/tools/tools.yaml (design §8.5; schema in
// knowledge/schema/tools.schema.json).
type ToolsFile struct {
	Tools []Tool `yaml:"tools" json:"tools"`
}

// Tool is one tool declaration.
type Tool struct {
	Name        string  `yaml:"name" json:"name"`
	Type        string  `yaml:"type" json:"type"` // compute|collect|display|retrieve|flow
	Description string  `yaml:"description" json:"description"`
	WhenToCall  string  `yaml:"when_to_call,omitempty" json:"when_to_call,omitempty"`
	CardType    string  `yaml:"card_type,omitempty" json:"card_type,omitempty"`
	CardProps   []Field `yaml:"card_props,omitempty" json:"card_props,omitempty"`
	Parameters  []Field `yaml:"parameters,omitempty" json:"parameters,omitempty"`
	Returns     []Field `yaml:"returns,omitempty" json:"returns,omitempty"`
}

// Field is a parameter, return value or card property of a tool.
type Field struct {
	Name        string `yaml:"name" json:"name"`
	Type        string `yaml:"type" json:"type"`
	Required    bool   `yaml:"required,omitempty" json:"required,omitempty"`
	Description string `yaml:"description,omitempty" json:"description,omitempty"`
}
