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
// (llm.EncodingFor) for dry runs and the budget.
func newLLMClient(ws *workspace.Workspace, cfg *workspace.Config, model string, budget float64, dryRun bool) *llm.Client {
	prices := map[string]llm.Price{}
	for m, p := range cfg.LLM.Prices {
		prices[m] = llm.Price{InputPerMTok: p.InputPerMTok, OutputPerMTok: p.OutputPerMTok}
	}
	var count func(string) int
	// The BPE files are embedded in the binary: this cannot fail short of
	// a broken build, and then the client's estimate is the fallback.
	if sp, err := chunk.New(chunk.Options{Encoding: llm.EncodingFor(model)}); err == nil {
		count = sp.Count
	}
	return llm.New(llm.Options{BaseURL: cfg.LLM.BaseURL, APIKey: cfg.LLM.APIKey, Model: model,
		MaxConcurrency: cfg.LLM.MaxConcurrency, Timeout: cfg.LLM.Timeout, MaxRetries: cfg.LLM.MaxRetries,
		CacheDir: ws.CacheDir("llm"), Prices: prices, Budget: budget, DryRun: dryRun, CountTokens: count})
}

// chatModelName is the model the agent talks with, and rewrites search
// queries with (llm.chat_model, else llm.model).
func chatModelName(cfg *workspace.Config) string {
	if cfg.LLM.ChatModel != "" {
		return cfg.LLM.ChatModel
	}
	return cfg.LLM.Model
}
