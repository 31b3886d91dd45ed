package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/vibelife/vibe/knowledge"
	"github.com/vibelife/vibe/knowledge/embedding"
	"github.com/vibelife/vibe/knowledge/pgvector"
	"github.com/vibelife/vibe/knowledge/sqlite"
	"github.com/vibelife/vibe/workspace"
)

// openStore opens the configured knowledge store (store.driver: sqlite, the
// default, at store.path; or postgres at store.database_url / DATABASE_URL).
// The caller closes it.
func (a *app) openStore(ctx context.Context) (knowledge.Store, error) {
	ws, err := a.workspace()
	if err != nil {
		return nil, err
	}
	cfg, err := a.config()
	if err != nil {
		return nil, err
	}
	switch cfg.Store.Driver {
	case "", "sqlite":
		path := cfg.Store.Path
		if path == "" {
			path = filepath.Join(".vibe", "vibe.db")
		}
		if !filepath.IsAbs(path) {
			path = filepath.Join(ws.Root, path)
		}
		return sqlite.Open(ctx, path)
	case "postgres":
		if cfg.Store.DatabaseURL == "" {
			return nil, withHint(errors.New("store.driver is postgres but no database URL is set"),
				"set DATABASE_URL or store.database_url in vibe.yaml")
		}
		return openPostgres(ctx, cfg.Store.DatabaseURL)
	default:
		return nil, withHint(fmt.Errorf("store.driver %q is not known", cfg.Store.Driver), "use sqlite or postgres in vibe.yaml (store.driver)")
	}
}

// storeOpenError is why `vibe serve` does not start: its store could not be
// opened. Serving with a private in-memory memory instead would split
// replicas silently (each its own conversations and profiles), so it stops,
// naming the setting to fix.
func storeOpenError(cfg *workspace.Config, err error) error {
	if errors.Is(err, knowledge.ErrSchemaNewer) {
		// The error says what to do: upgrade vibe, not fix a setting.
		return fmt.Errorf("vibe serve: the store (store.driver %q) cannot be opened: %w", cmp.Or(cfg.Store.Driver, "sqlite"), err)
	}
	setting := "store.path (vibe.yaml)"
	if cfg.Store.Driver == "postgres" {
		setting = "store.database_url (vibe.yaml) or DATABASE_URL"
	}
	return withHint(fmt.Errorf("vibe serve: the store (store.driver %q) cannot be opened: %w", cmp.Or(cfg.Store.Driver, "sqlite"), err),
		"fix "+setting+" and start again; vibe serve does not run without its store, since conversations and profiles kept in one process's memory would differ from replica to replica")
}

// storeHint explains store errors a user can act on.
func storeHint(err error, theme string) error {
	if errors.Is(err, knowledge.ErrDimensionMismatch) {
		return withHint(err, fmt.Sprintf("re-ingest with `vibe ingest %s --rebuild`, or use the same embedder as before", theme))
	}
	return err
}

// openPostgres opens the PostgreSQL store.
func openPostgres(ctx context.Context, url string) (knowledge.Store, error) {
	s, err := pgvector.Open(ctx, url)
	if errors.Is(err, knowledge.ErrSchemaNewer) {
		return nil, err // it says what to do
	}
	if err != nil {
		return nil, withHint(err, "check DATABASE_URL / store.database_url and that the server runs with the vector extension (scripts/postgres.sh sets one up)")
	}
	return s, nil
}

// openEmbedder returns the configured embedder (embedding.provider): local
// (deterministic, offline; the default) or openai.
func (a *app) openEmbedder(ctx context.Context) (knowledge.Embedder, error) {
	cfg, err := a.config()
	if err != nil {
		return nil, err
	}
	switch cfg.Embedding.Provider {
	case "", "local":
		return embedding.NewLocal(cfg.Embedding.Dimensions), nil
	case "openai":
		if cfg.Embedding.Model == "" || cfg.Embedding.Model == embedding.LocalModel {
			return nil, withHint(errors.New("embedding.provider is openai but embedding.model names no remote model"),
				"set embedding.model (e.g. text-embedding-3-small) and embedding.dimensions in vibe.yaml")
		}
		ws, err := a.workspace()
		if err != nil {
			return nil, err
		}
		return embedding.NewOpenAI(embedding.OpenAIOptions{
			BaseURL:     cfg.LLM.BaseURL,
			APIKey:      cfg.LLM.APIKey,
			Model:       cfg.Embedding.Model,
			Dimensions:  cfg.Embedding.Dimensions,
			BatchSize:   cfg.Embedding.BatchSize,
			Concurrency: cfg.Embedding.Concurrency,
			MaxRetries:  cfg.LLM.MaxRetries,
			CacheDir:    ws.CacheDir("embeddings"),
		})
	default:
		return nil, withHint(fmt.Errorf("embedding.provider %q is not known", cfg.Embedding.Provider), "use local or openai in vibe.yaml (embedding.provider)")
	}
}
