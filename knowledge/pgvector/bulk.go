package pgvector

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/vibelife/vibe/knowledge"
)

var _ knowledge.BulkLoader = (*Store)(nil)

// bulkLockKey names the advisory lock of bulk loads into the store's
// schema: every bulk load holds it shared for its duration, and whoever
// (re)builds the deferred indexes holds it exclusively, so an index is never
// rebuilt under a running bulk load and a bulk load never drops an index
// being built.
func (s *Store) bulkLockKey() string { return "vibe bulk load " + s.schema }

// Bulk-load policy. BenchmarkIncrementalIngest (20k chunks in the table):
// a chunk written with the indexes live costs 0.8-1.1 ms, one written
// without them 0.2 ms, and rebuilding both indexes 0.4-0.5 ms per chunk the
// table then holds. Deferring pays once the load is about half of the
// table, so a load defers index maintenance when it writes at least
// bulkMinChunks chunks and at least 1/bulkShare of the rows the table will
// then hold; smaller updates keep the indexes live (and other themes'
// searches fast).
const (
	bulkMinChunks = 1000
	bulkShare     = 2
)

// deferredIndex is an index a bulk load drops and rebuilds once at the end.
type deferredIndex struct {
	name string
	// what names it for a reader (knowledge.IndexBuild.Index).
	what string
	// create returns the CREATE INDEX statement for the store's schema;
	// empty when the index cannot be built now (no vector size recorded
	// yet, or too many dimensions for HNSW).
	create func(schema string, dims int) string
}

var deferredIndexes = []deferredIndex{
	{"kb_embedding_hnsw", "vector", func(schema string, dims int) string {
		if dims <= 0 || dims > hnswMaxDims {
			return ""
		}
		return `CREATE INDEX IF NOT EXISTS kb_embedding_hnsw ON ` + schema + `.kb_embedding USING hnsw ` + hnswOn(dims) + ` ` + hnswParams
	}},
}

// BeginBulk implements knowledge.BulkLoader. When the announced load is
// large against what the tables hold, it drops the deferred indexes
// (searches keep working, by sequential scans) and finish rebuilds them in
// one pass each, with maintenance_work_mem sized to the HNSW graph. Each
// ReplaceDocument stays its own transaction, so a failure at any point
// leaves whole documents only; indexes a crash left missing are rebuilt by
// the next Open or bulk load.
//
// A load too small to defer anything keeps the indexes live; its finish
// rebuilds any index still missing.
//
// The lexical index (kb_lex_posting) is written live in every case: each
// document's transaction appends to its terms' rows. During a deferring
// bulk load the store remembers the last rows it wrote (tailCache), so a
// document reads only those of terms the load has not seen.
//
// opts.IndexProgress, when set, is told when finish starts and ends an
// index's build (the HNSW index over 84k chunks takes minutes).
func (s *Store) BeginBulk(ctx context.Context, opts knowledge.BulkOptions) (func(context.Context) error, error) {
	chunks := opts.Chunks
	noop := func(ctx context.Context) error {
		// Indexes a crash left missing, and Open could not rebuild (a bulk
		// load was running, or seemed to), are rebuilt now.
		if err := s.ensureIndexes(ctx, opts.IndexProgress); err != nil {
			return fmt.Errorf("bulk load: %w", err)
		}
		return nil
	}
	if chunks < bulkMinChunks {
		return noop, nil
	}
	var rows int64
	if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM kb_embedding`).Scan(&rows); err != nil {
		return nil, fmt.Errorf("bulk load: %w", err)
	}
	if int64(chunks)*bulkShare < rows+int64(chunks) {
		return noop, nil
	}
	// The bulk load's lock lives on a connection of its own, outside the
	// pool, so Close can end it (releasing the lock) even when finish is
	// never called.
	conn, err := pgx.ConnectConfig(ctx, s.pool.Config().ConnConfig)
	if err != nil {
		return nil, fmt.Errorf("bulk load: %w", err)
	}
	s.mu.Lock()
	s.bulkConns[conn] = true
	s.mu.Unlock()
	closeConn := func() {
		s.mu.Lock()
		delete(s.bulkConns, conn)
		s.mu.Unlock()
		conn.Close(context.WithoutCancel(ctx))
	}
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock_shared(hashtextextended($1, 0))`, s.bulkLockKey()); err != nil {
		closeConn()
		return nil, fmt.Errorf("bulk load: %w", err)
	}
	s.bulk.Add(1)
	for _, ix := range deferredIndexes {
		if _, err := conn.Exec(ctx, `DROP INDEX IF EXISTS `+s.qualified(ix.name)); err != nil {
			s.bulk.Add(-1)
			closeConn()
			return nil, fmt.Errorf("bulk load: drop %s: %w", ix.name, err)
		}
	}
	var once sync.Once
	return func(ctx context.Context) error {
		err := errors.New("bulk load: finished twice")
		once.Do(func() {
			if s.bulk.Add(-1) == 0 {
				s.dropTails()
			}
			defer closeConn()
			if _, err = conn.Exec(ctx, `SELECT pg_advisory_unlock_shared(hashtextextended($1, 0))`, s.bulkLockKey()); err != nil {
				err = fmt.Errorf("bulk load: %w (the next open or ingest rebuilds the indexes)", err)
				return
			}
			if err = s.ensureIndexesOn(ctx, conn, opts.IndexProgress); err != nil {
				err = fmt.Errorf("bulk load: %w (the next open or ingest rebuilds them)", err)
			}
		})
		return err
	}, nil
}

// ensureIndexes builds the deferred indexes that are missing (or left
// invalid), unless a bulk load is running (it builds them when it ends).
// report, when not nil, is told when each build starts and ends.
func (s *Store) ensureIndexes(ctx context.Context, report func(knowledge.IndexBuild)) error {
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("check indexes: %w", err)
	}
	defer conn.Release()
	return s.ensureIndexesOn(ctx, conn.Conn(), report)
}

func (s *Store) ensureIndexesOn(ctx context.Context, conn *pgx.Conn, report func(knowledge.IndexBuild)) error {
	missing, dims, err := s.missingIndexes(ctx, conn)
	if err != nil || len(missing) == 0 {
		return err
	}
	var locked bool
	if err := conn.QueryRow(ctx, `SELECT pg_try_advisory_lock(hashtextextended($1, 0))`, s.bulkLockKey()).Scan(&locked); err != nil {
		return fmt.Errorf("rebuild indexes: %w", err)
	}
	if !locked {
		return nil // a bulk load is running; it rebuilds them when it ends
	}
	defer conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock(hashtextextended($1, 0))`, s.bulkLockKey())
	// Look again under the lock: another process may have just built them.
	if missing, dims, err = s.missingIndexes(ctx, conn); err != nil || len(missing) == 0 {
		return err
	}
	var rows int64
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM kb_embedding`).Scan(&rows); err != nil {
		return fmt.Errorf("rebuild indexes: %w", err)
	}
	for _, ix := range missing {
		if report != nil {
			report(knowledge.IndexBuild{Index: ix.what, Chunks: rows})
		}
		start := time.Now()
		err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, `DROP INDEX IF EXISTS `+s.qualified(ix.name)); err != nil { // an invalid leftover
				return err
			}
			if _, err := tx.Exec(ctx, fmt.Sprintf(`SET LOCAL maintenance_work_mem = '%dMB'`, buildMemoryMB(rows, dims))); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, ix.create(s.schema, dims))
			return err
		})
		if report != nil {
			report(knowledge.IndexBuild{Index: ix.what, Chunks: rows, Done: true, Took: time.Since(start), Err: err})
		}
		if err != nil {
			return fmt.Errorf("rebuild index %s: %w", ix.name, err)
		}
	}
	// Fresh statistics for the planner; the vacuum clears the dead rows a
	// rewrite left (the posting rows' included: every write rewrites its
	// terms' last rows).
	if _, err := conn.Exec(ctx, `VACUUM (ANALYZE) `+s.qualified("kb_chunk")+`, `+s.qualified("kb_embedding")+`, `+s.qualified("kb_lex_posting")); err != nil {
		return fmt.Errorf("vacuum: %w", err)
	}
	return nil
}

// missingIndexes returns the deferred indexes absent or invalid that can be
// built, and the recorded vector size (0 when none is).
func (s *Store) missingIndexes(ctx context.Context, conn *pgx.Conn) ([]deferredIndex, int, error) {
	var dims int
	err := conn.QueryRow(ctx, `SELECT dimensions FROM kb_embedding_info WHERE id = 1`).Scan(&dims)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return nil, 0, fmt.Errorf("check indexes: %w", err)
	}
	var missing []deferredIndex
	for _, ix := range deferredIndexes {
		if ix.create(s.schema, dims) == "" {
			continue
		}
		var valid bool
		err := conn.QueryRow(ctx, `SELECT indisvalid FROM pg_index WHERE indexrelid = to_regclass($1)`, s.qualified(ix.name)).Scan(&valid)
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return nil, 0, fmt.Errorf("check index %s: %w", ix.name, err)
		}
		if !valid {
			missing = append(missing, ix)
		}
	}
	return missing, dims, nil
}

// buildMemoryMB sizes maintenance_work_mem for an index build over rows
// vectors of dims so the HNSW graph is built in memory (2 bytes a
// dimension, the index's half-precision floats, plus 300 bytes of neighbour
// lists and tuple overhead per element), between 64 MB and 2 GB.
func buildMemoryMB(rows int64, dims int) int64 {
	need := rows*int64(2*dims+300)*5/4>>20 + 1
	return min(max(need, 64), 2048)
}
