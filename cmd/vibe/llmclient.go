package main

import (
	"github.com/vibelife/vibe/chunk"
	"github.com/vibelife/vibe/llm"
	"github.com/vibelife/vibe/workspace"
)

// newLLMClient builds the client every build stage shares: the endpoint,
// concurrency, timeout and retries from vibe.yaml, per-model prices, the
// response cache in .vibe/cache/llm, so an unchanged rebuild (or re-check)
// makes no request, and tokens counted with tiktoken in the model's encoding
// (llm.EncodingFor) for dry runs, the usage and the budget (the larger of
// that count and the endpoint's usage).
func newLLMClient(ws *workspace.Workspace, cfg *workspace.Config, model string, budget float64, dryRun bool) *llm.Client {
	prices := map[string]llm.Price{}
	for m, p := range cfg.LLM.Prices {
		prices[m] = llm.Price{InputPerMTok: p.InputPerMTok, OutputPerMTok: p.OutputPerMTok}
	}
	count, tokenizer := tokenCounter(model)
	return llm.New(llm.Options{BaseURL: cfg.LLM.BaseURL, APIKey: cfg.LLM.APIKey, Model: model,
		MaxConcurrency: cfg.LLM.MaxConcurrency, Timeout: cfg.LLM.Timeout, MaxRetries: cfg.LLM.MaxRetries,
		CacheDir: ws.CacheDir("llm"), Prices: prices, Budget: budget, DryRun: dryRun, CountTokens: count, Tokenizer: tokenizer})
}

// tokenCounter returns the counter of model's tokens (tiktoken in the
// model's encoding, or the nearest known one: llm.TokenizerFor) and its name
// for reports. The BPE files are embedded in the binary: this cannot fail
// short of a broken build, and then the client's estimate is the fallback
// (nil, "").
func tokenCounter(model string) (func(string) int, string) {
	sp, err := chunk.New(chunk.Options{Encoding: llm.EncodingFor(model)})
	if err != nil {
		return nil, ""
	}
	return sp.Count, llm.DescribeTokenizer(model)
}

// chatModelName is the model the agent talks with, and rewrites search
// queries with (llm.chat_model, else llm.model).
func chatModelName(cfg *workspace.Config) string {
	if cfg.LLM.ChatModel != "" {
		return cfg.LLM.ChatModel
	}
	return cfg.LLM.Model
}
