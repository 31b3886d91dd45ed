package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// fakeEmbeddings serves /embeddings with deterministic 8-dimensional vectors
// and counts the texts it was asked to embed.
func fakeEmbeddings(t *testing.T, texts *atomic.Int64) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasSuffix(r.URL.Path, "/embeddings") {
			http.NotFound(w, r)
			return
		}
		var req struct {
			Input []string `json:"input"`
			Model string   `json:"model"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		texts.Add(int64(len(req.Input)))
		type item struct {
			Object    string    `json:"object"`
			Index     int       `json:"index"`
			Embedding []float64 `json:"embedding"`
		}
		var data []item
		for i, in := range req.Input {
			v := make([]float64, 8)
			for j, r := range in {
				v[(j+int(r))%8] += 1
			}
			data = append(data, item{"embedding", i, v})
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data, "model": req.Model,
			"usage": map[string]int{"prompt_tokens": 1, "total_tokens": 1}})
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestIngestWithOpenAIEmbedderUsesItsCache(t *testing.T) {
	var texts atomic.Int64
	srv := fakeEmbeddings(t, &texts)
	ws := t.TempDir()
	writeConvertedForSearch(t, ws, "ziping", "# 子平真诠\n\n## 论用神\n\n八字用神，专求月令。\n\n## 论格局\n\n格局成败，各有其说。")
	env := map[string]string{
		"OPENAI_BASE_URL":           srv.URL + "/v1",
		"OPENAI_API_KEY":            "sk-test",
		"VIBE_EMBEDDING_MODEL":      "fake-embed",
		"VIBE_EMBEDDING_DIMENSIONS": "8",
	}
	code, out, errOut := runVibe(t, env, "--workspace", ws, "ingest", "demo", "--embedder", "openai")
	if code != 0 || !strings.Contains(out, "1 added") || !strings.Contains(out, "fake-embed") {
		t.Fatalf("ingest: code %d, out %q, err %q", code, out, errOut)
	}
	first := texts.Load()
	if first == 0 {
		t.Fatal("the endpoint was never asked to embed")
	}
	// Dropping the store's data re-embeds every chunk, but the embedding
	// cache in .vibe/cache/embeddings answers without a request.
	code, out, errOut = runVibe(t, env, "--workspace", ws, "ingest", "demo", "--embedder", "openai", "--rebuild")
	if code != 0 || !strings.Contains(out, "1 added") {
		t.Fatalf("rebuild: code %d, out %q, err %q", code, out, errOut)
	}
	if texts.Load() != first {
		t.Fatalf("rebuild sent %d texts again; the cache should have answered", texts.Load()-first)
	}
	code, out, errOut = runVibe(t, env, "--workspace", ws, "search", "demo", "用神", "-k", "1", "--embedder", "openai")
	if code != 0 || !strings.Contains(out, "论用神") {
		t.Fatalf("search: code %d, out %q, err %q", code, out, errOut)
	}
}

func TestOpenAIEmbedderNeedsARemoteModel(t *testing.T) {
	ws := t.TempDir()
	writeConvertedForSearch(t, ws, "a", "# A\n\ntext")
	code, _, errOut := runVibe(t, map[string]string{"OPENAI_API_KEY": "x"}, "--workspace", ws, "ingest", "demo", "--embedder", "openai")
	if code == 0 || !strings.Contains(errOut, "embedding.model") {
		t.Fatalf("want an error naming embedding.model, got %d %q", code, errOut)
	}
}
