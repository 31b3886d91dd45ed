// Package llmtest is a scripted fake OpenAI-compatible chat completions
// server for tests. Script the replies in order (text, streamed text, tool
// calls, JSON, HTTP errors with Retry-After, a stream cut mid-way, a slow
// response) and inspect every request the server received:
//
//	srv := llmtest.New(t, llmtest.Text("hello"), llmtest.RateLimited("2"), llmtest.ToolCall("search_knowledge", `{"query":"x"}`))
//	// point the client at srv.URL (it serves /v1/chat/completions and /chat/completions)
//	reqs := srv.Requests()
//
// A request that arrives when the script is exhausted gets the Fallback
// reply (a 500 naming the problem unless set).
package llmtest
