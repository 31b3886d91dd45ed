package llm

import "encoding/json"

// Roles of chat messages.
const (
	RoleSystem    = "system"
	RoleUser      = "user"
	RoleAssistant = "assistant"
	RoleTool      = "tool"
)

// Message is one chat message.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
	// ToolCalls are the calls an assistant message asks for.
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	// ToolCallID answers a call, on a tool message.
	ToolCallID string `json:"tool_call_id,omitempty"`
	// Name of the tool, on a tool message.
	Name string `json:"name,omitempty"`
}

// ToolCall is a function call requested by the model.
type ToolCall struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	// Arguments is the JSON text of the arguments, as the model sent it.
	Arguments string `json:"arguments"`
}

// Tool is a function the model may call.
type Tool struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	// Parameters is a JSON Schema object.
	Parameters json.RawMessage `json:"parameters"`
}

// Schema asks for structured output validated against a JSON Schema.
type Schema struct {
	// Name identifies the schema to the endpoint (letters, digits, _ and -).
	Name string
	// JSON is the JSON Schema document.
	JSON json.RawMessage
}

// Request is one chat completion request.
type Request struct {
	// Stage labels the request in usage reports and the cache (e.g.
	// "extract.map", "serve").
	Stage string
	// Model overrides the client's default model.
	Model       string
	Messages    []Message
	Tools       []Tool
	Temperature *float64
	MaxTokens   int
	// Schema requests structured output. The client uses the endpoint's
	// json_schema response format when it supports it, else JSON mode, and
	// validates the answer either way.
	Schema *Schema
	// PromptVersion is part of the cache key: bump it when a prompt changes.
	PromptVersion string
	// NoCache bypasses the response cache (chat turns are not cached).
	NoCache bool
}

// Usage counts tokens. PromptTokens and CompletionTokens are the figures
// the client records, reports and charges against the budget: each is the
// larger of the endpoint's usage and vibe's own count with the client's
// tokenizer (Options.CountTokens), so an endpoint that estimates its usage
// low (a relay counting three characters a token) cannot make a report or a
// budget low, and one that returns no usage is still counted.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	// EndpointPromptTokens and EndpointCompletionTokens are the usage the
	// endpoint returned (0 when it returned none).
	EndpointPromptTokens     int `json:"endpoint_prompt_tokens,omitempty"`
	EndpointCompletionTokens int `json:"endpoint_completion_tokens,omitempty"`
	// CountedPromptTokens and CountedCompletionTokens are vibe's count of
	// what was sent and answered.
	CountedPromptTokens     int `json:"counted_prompt_tokens,omitempty"`
	CountedCompletionTokens int `json:"counted_completion_tokens,omitempty"`
}

// Add counts o into u.
func (u *Usage) Add(o Usage) {
	u.PromptTokens += o.PromptTokens
	u.CompletionTokens += o.CompletionTokens
	u.EndpointPromptTokens += o.EndpointPromptTokens
	u.EndpointCompletionTokens += o.EndpointCompletionTokens
	u.CountedPromptTokens += o.CountedPromptTokens
	u.CountedCompletionTokens += o.CountedCompletionTokens
}

// CountedLarger says whether vibe's count is above the endpoint's usage in
// either direction, so the recorded figures are vibe's.
func (u Usage) CountedLarger() bool {
	return u.CountedPromptTokens > u.EndpointPromptTokens || u.CountedCompletionTokens > u.EndpointCompletionTokens
}

// Response is a completed chat response.
type Response struct {
	Content      string     `json:"content"`
	ToolCalls    []ToolCall `json:"tool_calls,omitempty"`
	FinishReason string     `json:"finish_reason"`
	Usage        Usage      `json:"usage"`
	// Cached is true when the answer came from the response cache.
	Cached bool `json:"cached,omitempty"`
}

// Delta is a piece of a streamed response: text as it arrives, or a tool
// call once it is complete.
type Delta struct {
	Content  string
	ToolCall *ToolCall
}
