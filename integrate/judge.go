package integrate

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/vibelife/vibe/llm"
)

// Chatter is what the LLM judge needs from the llm client (which caches
// responses, so an unchanged rule costs no call on the next check).
type Chatter interface {
	Chat(ctx context.Context, req llm.Request) (llm.Response, error)
}

// JudgePromptVersion changes when the judge prompt changes, invalidating the cache.
const JudgePromptVersion = "check-judge-1"

var judgeSchema = json.RawMessage(`{"type":"object","additionalProperties":false,"required":["supported","reason"],"properties":{"supported":{"type":"boolean"},"reason":{"type":"string"}}}`)

// NewLLMJudge returns a Judge asking the model, with structured output,
// whether the source entails the claim.
func NewLLMJudge(c Chatter, model string) Judge {
	return func(ctx context.Context, claim, source string) (bool, string, error) {
		temp := 0.0
		resp, err := c.Chat(ctx, llm.Request{
			Stage: "check", Model: model, Temperature: &temp, PromptVersion: JudgePromptVersion,
			Schema: &llm.Schema{Name: "entailment", JSON: judgeSchema},
			Messages: []llm.Message{
				{Role: llm.RoleSystem, Content: "You verify expert rules against their source text. Answer whether the SOURCE states or directly implies the CLAIM. Judge only from the source."},
				{Role: llm.RoleUser, Content: "SOURCE:\n" + source + "\n\nCLAIM:\n" + claim},
			},
		})
		if err != nil {
			return false, "", err
		}
		var v struct {
			Supported *bool  `json:"supported"`
			Reason    string `json:"reason"`
		}
		if err := json.Unmarshal([]byte(resp.Content), &v); err != nil || v.Supported == nil {
			return false, "", fmt.Errorf("judge: the model did not answer {supported, reason}: %q", resp.Content)
		}
		return *v.Supported, v.Reason, nil
	}
}
