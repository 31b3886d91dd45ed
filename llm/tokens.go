package llm

import (
	"fmt"
	"strings"
	"unicode"
)

// Token encodings of OpenAI models, as tiktoken names them.
const (
	EncodingCL100K = "cl100k_base"
	EncodingO200K  = "o200k_base"
)

// EncodingFor returns the tiktoken encoding of an OpenAI model: o200k_base
// for the gpt-4o, gpt-4.1, gpt-4.5, gpt-5 and o-series families, cl100k_base
// otherwise. Models of other vendors (Qwen, DeepSeek, Llama...) have
// tokenizers of their own; cl100k_base only approximates their counts.
func EncodingFor(model string) string {
	m := strings.ToLower(model)
	if i := strings.LastIndex(m, "/"); i >= 0 {
		m = m[i+1:] // "openai/gpt-4o" as routers name it
	}
	for _, p := range []string{"gpt-4o", "gpt-4.1", "gpt-4.5", "gpt-5", "o1", "o3", "o4", "chatgpt-4o"} {
		if strings.HasPrefix(m, p) {
			return EncodingO200K
		}
	}
	return EncodingCL100K
}

// TokenizerFor names the tokenizer vibe counts a model's tokens with and
// says whether it is the model's own: tiktoken's o200k_base or cl100k_base
// for OpenAI's models, and cl100k_base as the nearest known one for the
// models of other vendors, whose tokenizers are not bundled (for Chinese it
// counts more tokens than Qwen's or DeepSeek's, so a budget errs high).
func TokenizerFor(model string) (encoding string, exact bool) {
	enc := EncodingFor(model)
	m := strings.ToLower(model)
	if i := strings.LastIndex(m, "/"); i >= 0 {
		m = m[i+1:]
	}
	for _, p := range []string{"gpt-", "o1", "o3", "o4", "chatgpt-", "text-embedding-3", "text-embedding-ada"} {
		if strings.HasPrefix(m, p) {
			return enc, true
		}
	}
	return enc, false
}

// DescribeTokenizer is how reports name the counter of a model's tokens,
// e.g. "tiktoken o200k_base (gpt-4o-mini's own)" or "tiktoken cl100k_base
// (the nearest known to qwen2.5-72b-instruct; its own is not bundled)".
func DescribeTokenizer(model string) string {
	enc, exact := TokenizerFor(model)
	if model == "" {
		return "tiktoken " + enc + " (no model named)"
	}
	if exact {
		return fmt.Sprintf("tiktoken %s (%s's own)", enc, model)
	}
	return fmt.Sprintf("tiktoken %s (the nearest known to %s; its own is not bundled)", enc, model)
}

// estimateTokenizer names EstimateTokens in reports.
const estimateTokenizer = "estimate (a Han character a token, other text 4 bytes a token)"

// CompletionTokens counts the tokens of an answer with count: its content
// and every tool call's name and arguments.
func CompletionTokens(r Response, count func(string) int) int {
	if count == nil {
		count = EstimateTokens
	}
	n := count(r.Content)
	for _, tc := range r.ToolCalls {
		n += count(tc.Name + tc.Arguments)
	}
	return n
}

// EstimateTokens approximates a token count without a tokenizer: a Han
// character is a token, other text about 4 bytes a token. Prefer a tiktoken
// counter (Options.CountTokens); this is the fallback when none is given.
func EstimateTokens(s string) int {
	han, other := 0, 0
	for _, r := range s {
		if unicode.Is(unicode.Han, r) {
			han++
		} else {
			other += len(string(r))
		}
	}
	return han + (other+3)/4
}

// perMessageTokens is what each chat message adds to the prompt beyond its
// content (role and separators), as OpenAI documents for its chat models.
const perMessageTokens = 4

// PromptTokens counts the prompt tokens of req with count: every message's
// content plus its framing, the tool definitions and the response schema.
// In JSON mode the client sends the schema in a system message instead of
// response_format; the count is the same within a few tokens.
func PromptTokens(req Request, count func(string) int) int {
	if count == nil {
		count = EstimateTokens
	}
	n := 3 // the reply's priming
	for _, m := range req.Messages {
		n += perMessageTokens + count(m.Content)
		for _, tc := range m.ToolCalls {
			n += count(tc.Name + tc.Arguments)
		}
	}
	for _, t := range req.Tools {
		n += count(t.Name + t.Description + string(t.Parameters))
	}
	if req.Schema != nil {
		n += count(string(req.Schema.JSON))
	}
	return n
}
