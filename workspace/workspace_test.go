package workspace

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestValidateTheme(t *testing.T) {
	tests := []struct {
		name string
		ok   bool
	}{
		{"bazi", true},
		{"feng-shui", true},
		{"tarot2", true},
		{"", false},
		{"Bazi", false},
		{"-bazi", false},
		{"bazi-", false},
		{"ba--zi", false},
		{"ba zi", false},
		{"八字", false},
		{strings.Repeat("a", 32), true},
		{strings.Repeat("a", 33), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := ValidateTheme(tt.name)
			if (err == nil) != tt.ok {
				t.Fatalf("ValidateTheme(%q) = %v, want ok=%v", tt.name, err, tt.ok)
			}
			if err != nil && !errors.Is(err, ErrInvalidTheme) {
				t.Fatalf("error %v does not wrap ErrInvalidTheme", err)
			}
		})
	}
}

func env(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func TestLoadConfigLayers(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "vibe.yaml")
	if err := os.WriteFile(p, []byte("llm:\n  model: file-model\n  timeout: 5s\nchunk:\n  max_tokens: 300\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := LoadConfig(p, env(map[string]string{
		"VIBE_LLM_MODEL":     "env-model",
		"OPENAI_API_KEY":     "sk-test",
		"DATABASE_URL":       "postgres://x",
		"VIBE_CHUNK_OVERLAP": "10",
	}))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.LLM.Model != "env-model" {
		t.Errorf("model = %q, env should override the file", cfg.LLM.Model)
	}
	if cfg.LLM.Timeout != 5*time.Second {
		t.Errorf("timeout = %v, want 5s from the file", cfg.LLM.Timeout)
	}
	if cfg.Chunk.MaxTokens != 300 || cfg.Chunk.Overlap != 10 {
		t.Errorf("chunk = %+v", cfg.Chunk)
	}
	if cfg.Store.Driver != "postgres" || cfg.Store.DatabaseURL != "postgres://x" {
		t.Errorf("DATABASE_URL should select postgres: %+v", cfg.Store)
	}
	if !cfg.LLMEnabled() {
		t.Error("an API key should enable the LLM")
	}
	if cfg.Embedding.Dimensions != 1024 {
		t.Errorf("defaults lost: %+v", cfg.Embedding)
	}
}

func TestLoadConfigErrorsNameTheProblem(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "vibe.yaml")
	os.WriteFile(p, []byte("llm:\n  modle: x\n"), 0o644)
	_, err := LoadConfig(p, env(nil))
	if err == nil || !strings.Contains(err.Error(), "vibe.yaml:2: unknown key llm.modle (did you mean llm.model?)") {
		t.Fatalf("want an error naming line 2, the key and the nearest one, got %v", err)
	}
	// Values: the key, the value and a valid example, no Go type names.
	for yaml, want := range map[string]string{
		"serve:\n  max_steps: five\n":          `vibe.yaml:2: serve.max_steps: "five" is not a whole number; for example ` + "`max_steps: 8`",
		"convert:\n  timeout: 2 minutes\n":     `vibe.yaml:2: convert.timeout: "2 minutes" is not a duration (a number with a unit: ms, s, m or h); for example ` + "`timeout: 2m`",
		"check:\n  min_lexical_support: [1]\n": "vibe.yaml:2: check.min_lexical_support is a list, want a number; for example `min_lexical_support: 0.3`",
		"serve: 8080\n":                        `vibe.yaml:1: serve must be a mapping of keys (key: value on lines of their own), not "8080"`,
		"llm:\n  prices: [1]\n":                "vibe.yaml:",
	} {
		os.WriteFile(p, []byte(yaml), 0o644)
		_, err := LoadConfig(p, env(nil))
		if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "workspace.") || strings.Contains(err.Error(), "!!") || strings.Contains(err.Error(), "time.Duration") {
			t.Errorf("%q: got %v, want %q and no Go type names", yaml, err, want)
		}
	}
	_, err = LoadConfig(filepath.Join(dir, "none.yaml"), env(map[string]string{"VIBE_CHUNK_MAX_TOKENS": "lots"}))
	if err == nil || !strings.Contains(err.Error(), "VIBE_CHUNK_MAX_TOKENS") {
		t.Fatalf("want an error naming the variable, got %v", err)
	}
	os.WriteFile(p, nil, 0o644)
	if _, err := LoadConfig(p, env(nil)); err != nil {
		t.Fatalf("empty vibe.yaml: %v", err)
	}
}

func TestLoadConfigSourcesAndValidation(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "vibe.yaml")
	if err := os.WriteFile(p, []byte("llm:\n  model: file-model\n  prices:\n    m: {input_per_mtok: 1}\nconvert:\n  pdf_engine: pdfium\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, src, err := LoadConfigSources(p, env(map[string]string{"VIBE_CHUNK_OVERLAP": "10", "DATABASE_URL": "postgres://x"}))
	if err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]string{
		"llm.model":          p + ":2",
		"llm.prices":         p + ":3",
		"convert.pdf_engine": p + ":6",
		"chunk.overlap":      "env VIBE_CHUNK_OVERLAP",
		"store.driver":       "env DATABASE_URL",
		"chunk.max_tokens":   SourceDefault,
	} {
		if got := src.Of(key); got != want {
			t.Errorf("source of %s = %q, want %q", key, got, want)
		}
	}
	for _, bad := range []struct{ file, want string }{
		{"llm:\n  provider: offlin\n", p + `:2: llm.provider "offlin" is not allowed; use one of "" (unset), offline, openai`},
		{"embedding:\n  provider: ollama\n", p + `:2: embedding.provider "ollama" is not allowed; use one of local, openai`},
		{"convert:\n  pdf_engine: mupdf\n", `convert.pdf_engine "mupdf"`},
		{"chunk:\n  encoding: p50k\n", `chunk.encoding "p50k"`},
		{"extract:\n  extractor: gpt\n", `extract.extractor "gpt"`},
		{"serve:\n  tokens_per_day: -5\n", p + `:2: serve.tokens_per_day -5 is negative`},
		{"serve:\n  command_plugins: [bazi, Evil/One]\n", p + `:2: serve.command_plugins "Evil/One" is not a skill name`},
		{"serve:\n  trusted_proxies: [10.0.0.0/8, lb.example]\n", p + `:2: serve.trusted_proxies "lb.example": not an IP address or CIDR`},
		{"serve:\n  plugin_output_bytes: -1\n", `serve.plugin_output_bytes -1 is negative`},
	} {
		if err := os.WriteFile(p, []byte(bad.file), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := LoadConfig(p, env(nil)); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%q: want an error containing %q, got %v", bad.file, bad.want, err)
		}
	}
	if err := os.WriteFile(p, []byte("serve:\n  tokens_per_day: 100\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if cfg, err := LoadConfig(p, env(nil)); err != nil || cfg.Serve.TokensPerDay != 100 {
		t.Errorf("serve.tokens_per_day: 100 loaded as %d, %v", cfg.Serve.TokensPerDay, err)
	}
	if cfg, err := LoadConfig(p, env(nil)); err != nil || strings.Join(cfg.Serve.CommandPlugins, ",") != "*" || cfg.Serve.PluginOutputBytes != 4<<20 {
		t.Errorf("defaults: command_plugins %v, plugin_output_bytes %d, %v", cfg.Serve.CommandPlugins, cfg.Serve.PluginOutputBytes, err)
	}
	if err := os.WriteFile(p, []byte("serve:\n  command_plugins: []\n  trusted_proxies: [10.0.0.0/8, 192.168.1.7]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if cfg, err := LoadConfig(p, env(nil)); err != nil || cfg.Serve.CommandPlugins == nil || len(cfg.Serve.CommandPlugins) != 0 || len(cfg.Serve.TrustedProxies) != 2 {
		t.Errorf("command_plugins: [] loaded as %#v, trusted_proxies %v, %v", cfg.Serve.CommandPlugins, cfg.Serve.TrustedProxies, err)
	}
	if cfg, err := LoadConfig(p, env(map[string]string{"VIBE_SERVE_TOKENS_PER_DAY": "250000"})); err != nil || cfg.Serve.TokensPerDay != 250000 {
		t.Errorf("VIBE_SERVE_TOKENS_PER_DAY=250000 loaded as %d, %v", cfg.Serve.TokensPerDay, err)
	}
	if _, err := LoadConfig(p, env(map[string]string{"VIBE_SERVE_TOKENS_PER_DAY": "-1"})); err == nil || !strings.Contains(err.Error(), "env VIBE_SERVE_TOKENS_PER_DAY: serve.tokens_per_day -1 is negative") {
		t.Errorf("VIBE_SERVE_TOKENS_PER_DAY=-1: got %v", err)
	}
}

func TestSearchConfig(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "vibe.yaml")
	if err := os.WriteFile(p, []byte("search:\n  provider: brave\n  results: 3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, src, err := LoadConfigSources(p, env(map[string]string{"BRAVE_API_KEY": "tok"}))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Search.Provider != "brave" || cfg.Search.APIKey != "tok" || cfg.Search.Results != 3 || cfg.Search.Recent != "year" || cfg.Search.Timeout != 30*time.Second {
		t.Errorf("search = %+v, want brave, the key from BRAVE_API_KEY, 3 results, recent year, 30s", cfg.Search)
	}
	if got := src.Of("search.api_key"); got != "env BRAVE_API_KEY" {
		t.Errorf("search.api_key from %q", got)
	}
	cfg, err = LoadConfig(p, env(map[string]string{"BRAVE_API_KEY": "tok", "VIBE_SEARCH_API_KEY": "over"}))
	if err != nil || cfg.Search.APIKey != "over" {
		t.Errorf("VIBE_SEARCH_API_KEY should override BRAVE_API_KEY: %q, %v", cfg.Search.APIKey, err)
	}
	for _, bad := range []struct{ file, want string }{
		{"search:\n  provider: google\n", "search.provider \"google\" is not allowed"},
		{"search:\n  results: 0\n", "search.results 0"},
		{"search:\n  recent: decade\n", "search.recent"},
	} {
		if err := os.WriteFile(p, []byte(bad.file), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := LoadConfig(p, env(nil)); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%q: want an error containing %q, got %v", bad.file, bad.want, err)
		}
	}
}
