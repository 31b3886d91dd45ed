package runtime

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/vibelife/vibe/knowledge"
	"github.com/vibelife/vibe/llm"
)

// The probes below expose, for `vibe eval`, the deterministic parts of a
// turn exactly as the runtime computes them: the skill the triggers route a
// message to, what get_rules and search_knowledge return, and the tools a
// skill offers the model. They read; they change no conversation.

// Route returns the skill the runtime activates for msg without a model
// (the offline mode's choice, also the hint the model gets), "" for none.
func (a *Agent) Route(msg string) string {
	m, _ := a.route(context.Background(), msg)
	return m
}

// RouteReason is [Agent.Route] with the reason of its choice: the
// router's terms, or the passage of the sources that chose the skill.
func (a *Agent) RouteReason(ctx context.Context, msg string) (skill, reason string) {
	return a.route(ctx, msg)
}

// Rules returns what get_rules returns for question in skill, unbridged:
// the k rules most relevant to it above get_rules' cut-off (minRuleScore),
// or, when no rule states a term it asks about, the partial ones.
func (a *Agent) Rules(skill, question string, k int) ([]knowledge.TieredRule, error) {
	rules, _, err := a.rulesFor(skill, question, k, minRuleScore)
	return rules, err
}

// Passages returns what search_knowledge returns for query in skill.
func (a *Agent) Passages(ctx context.Context, skill, query string, k int) ([]Passage, error) {
	return a.search(ctx, skill, query, k)
}

// Tools lists the tools the model is offered while skill is active (the
// core tools plus the skill's own).
func (a *Agent) Tools(skill string) []llm.Tool {
	return a.toolsFor(skill)
}

// CheckToolArgs reports whether args would be accepted by tool name of
// skill before it runs: the tool exists for the skill and the arguments
// satisfy its declared parameters.
func (a *Agent) CheckToolArgs(skill, name string, args json.RawMessage) error {
	for _, t := range coreTools {
		if t.Name == name {
			if _, err := decodeArgs(args); err != nil {
				return err
			}
			return nil
		}
	}
	if skill == "" {
		return fmt.Errorf("tool %q: no skill is active and it is not a core tool", name)
	}
	sk, err := a.cfg.Skills.Get(skill)
	if err != nil {
		return err
	}
	t, ok := sk.Tool(name)
	if !ok {
		return fmt.Errorf("tool %q: skill %s declares no such tool", name, skill)
	}
	m, err := decodeArgs(args)
	if err != nil {
		return err
	}
	return validate(fieldsOf(t), m, a.cfg.Now())
}
