// Package runtime is the agent runtime behind `vibe serve` and `vibe chat`:
// system prompt assembly (core skill, user context as narrative, active
// skill, runtime context), the core and skill-level tools, the agentic loop
// streaming the model's text through the output guardrails, memory and
// profiles through knowledge.MemoryStore, and the HTTP API (SSE /api/chat,
// OpenAI-compatible /v1/chat/completions, /api/skills, /api/tools/execute).
// With no model configured it answers in a labelled retrieval-only mode.
package runtime
