package pgvector

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/jackc/pgx/v5"

	"github.com/vibelife/vibe/knowledge"
)

var _ knowledge.BuildLocker = (*Store)(nil)

// LockBuild implements knowledge.BuildLocker with a session advisory lock
// keyed by the schema and the theme, held on a connection of its own for
// the whole build: a second build of the theme, from any machine, is
// refused at once instead of interleaving its writes with the first's
// (which deadlocked, SQLSTATE 40P01, and mixed the two runs' chunks). The
// lock goes with the connection, so a killed build never leaves it taken.
func (s *Store) LockBuild(ctx context.Context, theme, workspace string, takeOver bool) (func(), error) {
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return nil, fmt.Errorf("pgvector: build lock of %s: %w", theme, err)
	}
	key := s.schemaName + ":build:" + theme
	var got bool
	if err := conn.QueryRow(ctx, `SELECT pg_try_advisory_lock(hashtextextended($1, 0))`, key).Scan(&got); err != nil {
		conn.Release()
		return nil, fmt.Errorf("pgvector: build lock of %s: %w", theme, err)
	}
	if !got {
		holder := "another vibe"
		var h string
		if err := conn.QueryRow(ctx, `SELECT holder FROM kb_build_holder WHERE theme = $1`, theme).Scan(&h); err == nil && h != "" {
			holder = h
		}
		conn.Release()
		return nil, fmt.Errorf("%w: theme %s is being built by %s; wait for it to finish, or stop it, and run again", knowledge.ErrBuildLocked, theme, holder)
	}
	release := func() {
		ctx := context.WithoutCancel(ctx)
		_, _ = conn.Exec(ctx, `DELETE FROM kb_build_holder WHERE theme = $1`, theme)
		_, _ = conn.Exec(ctx, `SELECT pg_advisory_unlock(hashtextextended($1, 0))`, key)
		conn.Release()
	}
	var owner string
	err = conn.QueryRow(ctx, `SELECT workspace FROM kb_theme_owner WHERE theme = $1`, theme).Scan(&owner)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
	case err != nil:
		release()
		return nil, fmt.Errorf("pgvector: owner of %s: %w", theme, err)
	case owner != workspace && !takeOver:
		release()
		return nil, fmt.Errorf("%w: theme %s in this store was built from workspace %s; its documents are named by paths in that workspace, so building it from %s would overwrite them. Use another store (or schema) for this workspace, or pass --take-over to make this workspace the theme's source",
			knowledge.ErrThemeOwned, theme, owner, workspace)
	}
	host, _ := os.Hostname()
	if _, err := conn.Exec(ctx, `INSERT INTO kb_theme_owner(theme, workspace) VALUES ($1, $2) ON CONFLICT (theme) DO UPDATE SET workspace = excluded.workspace, updated_at = now()`, theme, workspace); err != nil {
		release()
		return nil, fmt.Errorf("pgvector: owner of %s: %w", theme, err)
	}
	if _, err := conn.Exec(ctx, `INSERT INTO kb_build_holder(theme, holder) VALUES ($1, $2) ON CONFLICT (theme) DO UPDATE SET holder = excluded.holder, started_at = now()`,
		theme, fmt.Sprintf("vibe process %d on %s (workspace %s)", os.Getpid(), host, workspace)); err != nil {
		release()
		return nil, fmt.Errorf("pgvector: build lock of %s: %w", theme, err)
	}
	return release, nil
}
