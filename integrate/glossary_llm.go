package integrate

import (
	"context"

	"github.com/vibelife/vibe/skills"
)

// modelGlossary asks the model for the glossary's synonyms and renderings.
func modelGlossary(ctx context.Context, c Chatter, model, theme string, L labels, ks *knowledgeSet, mined skills.Glossary) (skills.Glossary, []string, error) {
	return skills.Glossary{}, nil, nil
}
