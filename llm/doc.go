// Package llm is vibe's client for OpenAI-compatible chat endpoints, built on
// openai-go: streaming, tool calls, structured output validated against a JSON
// Schema with one repair round, retries with backoff honouring Retry-After, a
// bound on concurrent requests, token accounting per stage, a response cache
// in the workspace, dry runs and budgets.
//
// Package llm/llmtest provides a scripted fake OpenAI-compatible server for
// tests.
package llm
