package pgvector

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	pgv "github.com/pgvector/pgvector-go"
	pgxvec "github.com/pgvector/pgvector-go/pgx"

	"github.com/vibelife/vibe/chunk"
	"github.com/vibelife/vibe/knowledge"
	"github.com/vibelife/vibe/knowledge/lexindex"
)

// Store is a knowledge.Store in PostgreSQL.
type Store struct {
	pool *pgxpool.Pool
	// schemaName is the schema holding the store's tables (the first of
	// the search path they were created in) and schema its quoted form:
	// index names are qualified with it, never resolved through the search
	// path, which may hold another store's.
	schemaName, schema string
	// bulk counts this process's bulk loads in progress; while it is
	// positive the HNSW index is not created on first write.
	bulk atomic.Int32

	mu        sync.Mutex
	bulkConns map[*pgx.Conn]bool // the connections holding bulk-load locks
	// lexTails caches, by theme, the last posting rows a bulk load wrote
	// (tailCache); guarded by lexMu, dropped when the bulk loads end.
	lexMu    sync.Mutex
	lexTails map[string]*tailCache
	// tailReads counts the terms whose last posting rows writes read.
	tailReads atomic.Int64
	// ratesSwept is when this process last dropped idle rate buckets.
	ratesSwept time.Time
	// tokenDaysSwept is the UTC day this process last dropped old daily
	// token counts.
	tokenDaysSwept time.Time
}

var _ knowledge.Store = (*Store)(nil)

// HNSW parameters. At 100k chunks of clustered 256-dim vectors (the
// realistic synthetic corpus of BenchmarkSearch), pgvector's default build
// (m 16, ef_construction 64) gave recall@10 0.94-0.97 at ef_search 100 and
// at most 0.96 at 400, depending on the (parallel, so not deterministic)
// build; ef_construction 128, for a build half again as long, gave
// 0.978-0.998 at 200 over four builds and 0.985-0.987 at 100
// (docs/retrieval.md). A search's candidate list is max(2k, hnswEfSearch).
//
// The index holds the vectors as half-precision floats (hnswOn): its build
// costs 0.64 of a float32 index's CPU at 22k chunks (0.78 at 5.6k), where
// the build is most of a bulk load's server CPU and grows faster than the
// table (the graph's vectors outgrow the CPU's caches), for recall@10 at
// ef_search 200 of 0.9865 against 0.987 for float32 (the 22,322 chunks of
// searchbench's ingest corpus, 200 stored vectors as queries,
// docs/retrieval.md). The table keeps float32 vectors: scores are exact.
// At 83,832 chunks of that corpus the same index's recall@10 is 0.90, below
// issue 30's 0.97, and ef_construction 64 gives 0.86 there (0.977 at
// 22,322) for a build 42 % cheaper: kept at 128 (bench/hnswbuild,
// docs/retrieval.md). The misses there are results the graph never
// reaches, not an order the half-precision copy spoils: re-ranking 50 to
// 3,000 candidates by the float32 vectors gains nothing; ef_search 1,000
// (pgvector's maximum) reaches 0.9695 at four times a query's CPU, and m
// 32 reaches 0.9735 at ef_search 200 for a build twice as long (bench/hnswbuild
// -sweep, docs/retrieval.md). Not changed: each trades one of issue 30's
// targets (ingest, query cost) for the other.
const (
	hnswParams   = `WITH (m = 16, ef_construction = 128)`
	hnswEfSearch = 200
)

// hnswMaxDims is the largest dimension pgvector's HNSW index accepts for
// the index's type, halfvec (float32 vectors stop at 2,000); above it
// search is exact. A store whose vectors are wider than 2,000 and which an
// older vibe left without an index gets one on open (ensureIndexes).
const hnswMaxDims = 4000

// hnswOn is the HNSW index's column and operator class: the vector as
// half-precision floats. A query reaches the index by ordering on the same
// expression (vectorSearch).
func hnswOn(dims int) string {
	return fmt.Sprintf(`((embedding::halfvec(%d)) halfvec_cosine_ops)`, dims)
}

// Open connects to url, applies the migrations and returns the store.
func Open(ctx context.Context, url string) (*Store, error) {
	// The pool's parser knows the pool options (pool_max_conns, …) that a
	// lone connection's parser would send to the server as settings, which
	// the server refuses: parse once, and migrate on a connection made from
	// the pool's connection config.
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("open postgres store: %w", err)
	}
	conn, err := pgx.ConnectConfig(ctx, cfg.ConnConfig.Copy())
	if err != nil {
		return nil, fmt.Errorf("open postgres store: %w", err)
	}
	err = migrate(ctx, conn)
	conn.Close(context.WithoutCancel(ctx))
	if err != nil {
		return nil, fmt.Errorf("open postgres store: %w", err)
	}
	cfg.AfterConnect = pgxvec.RegisterTypes
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("open postgres store: %w", err)
	}
	s := &Store{pool: pool, bulkConns: map[*pgx.Conn]bool{}}
	if err := pool.QueryRow(ctx, `SELECT n.nspname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = 'kb_chunk'::regclass`).Scan(&s.schemaName); err != nil {
		pool.Close()
		return nil, fmt.Errorf("open postgres store: find the schema of kb_chunk: %w", err)
	}
	s.schema = pgx.Identifier{s.schemaName}.Sanitize()
	// Indexes an interrupted bulk load left missing are rebuilt now.
	if err := s.ensureIndexes(ctx, nil); err != nil {
		pool.Close()
		return nil, fmt.Errorf("open postgres store: %w", err)
	}
	return s, nil
}

// Close closes the pool and the connections of unfinished bulk loads (their
// deferred indexes are then rebuilt by the next Open or bulk load).
func (s *Store) Close() error {
	s.mu.Lock()
	conns := s.bulkConns
	s.bulkConns = map[*pgx.Conn]bool{}
	s.mu.Unlock()
	for c := range conns {
		c.Close(context.Background())
	}
	s.pool.Close()
	return nil
}

// EmbeddingInfo implements knowledge.Store.
func (s *Store) EmbeddingInfo(ctx context.Context) (knowledge.EmbeddingInfo, bool, error) {
	var info knowledge.EmbeddingInfo
	err := s.pool.QueryRow(ctx, `SELECT model, dimensions FROM kb_embedding_info WHERE id = 1`).Scan(&info.Model, &info.Dimensions)
	if errors.Is(err, pgx.ErrNoRows) {
		return info, false, nil
	}
	if err != nil {
		return info, false, fmt.Errorf("embedding info: %w", err)
	}
	return info, true, nil
}

// Documents implements knowledge.Store.
func (s *Store) Documents(ctx context.Context, theme string) ([]knowledge.Document, error) {
	rows, err := s.pool.Query(ctx, `SELECT id, theme, source, title, content_hash, chunks, updated_at FROM kb_document WHERE theme = $1 ORDER BY id`, theme)
	if err != nil {
		return nil, fmt.Errorf("list documents of %s: %w", theme, err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (knowledge.Document, error) {
		var d knowledge.Document
		err := r.Scan(&d.ID, &d.Theme, &d.Source, &d.Title, &d.ContentHash, &d.Chunks, &d.UpdatedAt)
		d.UpdatedAt = d.UpdatedAt.UTC()
		return d, err
	})
	if err != nil {
		return nil, fmt.Errorf("list documents of %s: %w", theme, err)
	}
	return out, nil
}

// ReplaceDocument implements knowledge.Store: one transaction, a per-document
// advisory lock, the lock of the themes whose lexical index it changes
// (lockThemes), delete then COPY, and the document's postings.
func (s *Store) ReplaceDocument(ctx context.Context, doc knowledge.Document, chunks []chunk.Chunk, vectors [][]float32, info knowledge.EmbeddingInfo) error {
	if err := knowledge.CheckReplace(doc, chunks, vectors, info); err != nil {
		return err
	}
	if doc.UpdatedAt.IsZero() {
		doc.UpdatedAt = time.Now().UTC()
	}
	toks, total := chunkTokens(chunks)
	var w written
	err := retryDeadlock(ctx, func() (err error) {
		w, err = s.replace(ctx, doc, chunks, vectors, info, toks, total)
		return err
	})
	if err != nil {
		return fmt.Errorf("replace %s: %w", doc.ID, err)
	}
	s.tailReads.Add(int64(w.asked))
	if w.replaced != nil {
		s.dropTails(w.replaced...)
	} else if s.bulk.Load() > 0 {
		s.noteTails(doc.Theme, w.before, w.after, w.tails)
	}
	return nil
}

// written is what a committed replace tells the bulk load's tailCache.
type written struct {
	before, after themeState // the theme's state before and after
	tails         []termTail
	asked         int      // terms whose last rows were read
	replaced      []string // the themes of a document that was replaced
}

// deadlockRetries bounds how often a write that PostgreSQL chose as a
// deadlock's victim is run again.
const deadlockRetries = 5

// retryDeadlock runs the transaction fn and runs it again when PostgreSQL
// aborted it to break a deadlock (SQLSTATE 40P01): the other transaction
// has then gone ahead, and the retry finds what it wrote. Writers that find
// no embedding space recorded do that: each share-locks kb_embedding_info
// before it knows it must record the space, which takes the table
// exclusively (ensureSpace).
func retryDeadlock(ctx context.Context, fn func() error) error {
	var err error
	for range deadlockRetries {
		err = fn()
		var pgErr *pgconn.PgError
		if !errors.As(err, &pgErr) || pgErr.Code != "40P01" || ctx.Err() != nil {
			return err
		}
	}
	return err
}

// replace is ReplaceDocument's transaction.
func (s *Store) replace(ctx context.Context, doc knowledge.Document, chunks []chunk.Chunk, vectors [][]float32, info knowledge.EmbeddingInfo, toks [][]string, total int64) (w written, err error) {
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		// One round trip: lock the document, read the recorded embedding
		// space (share-locking it against a concurrent reset) and the
		// document's lexical index entry.
		var b pgx.Batch
		b.Queue(`SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, doc.ID)
		var cur knowledge.EmbeddingInfo
		haveInfo := true
		b.Queue(`SELECT model, dimensions FROM kb_embedding_info WHERE id = 1 FOR SHARE`).QueryRow(func(r pgx.Row) error {
			err := r.Scan(&cur.Model, &cur.Dimensions)
			if errors.Is(err, pgx.ErrNoRows) {
				haveInfo = false
				return nil
			}
			return err
		})
		var old lexDoc
		haveOld := true
		b.Queue(`SELECT theme, lo, hi, chunks, tokens, terms FROM kb_lex_doc WHERE doc_id = $1`, doc.ID).QueryRow(func(r pgx.Row) error {
			err := r.Scan(&old.theme, &old.lo, &old.hi, &old.chunks, &old.tokens, &old.terms)
			if errors.Is(err, pgx.ErrNoRows) {
				haveOld = false
				return nil
			}
			return err
		})
		if err := tx.SendBatch(ctx, &b).Close(); err != nil {
			return err
		}
		if len(vectors) > 0 {
			if haveInfo && cur != info {
				return knowledge.MismatchError(cur, info)
			}
			if !haveInfo {
				if err := s.ensureSpace(ctx, tx, info); err != nil {
					return err
				}
			}
		}
		themes := []string{doc.Theme}
		if haveOld && old.theme != doc.Theme {
			themes = append(themes, old.theme)
		}
		states, err := lockThemes(ctx, tx, themes...)
		if err != nil {
			return err
		}
		var known func([]string) map[string]lexindex.Row
		if haveOld {
			if err := unindexDoc(ctx, tx, doc.ID, old); err != nil {
				return err
			}
			w.replaced = themes
		} else {
			known = s.knownTails(doc.Theme, states[doc.Theme])
		}
		// The document row goes with its chunks and vectors (by cascade)
		// and comes back.
		b = pgx.Batch{}
		b.Queue(`DELETE FROM kb_document WHERE id = $1`, doc.ID)
		b.Queue(`INSERT INTO kb_document(id, theme, source, title, content_hash, chunks, updated_at) VALUES ($1,$2,$3,$4,$5,$6,$7)`,
			doc.ID, doc.Theme, doc.Source, doc.Title, doc.ContentHash, len(chunks), doc.UpdatedAt)
		if err := tx.SendBatch(ctx, &b).Close(); err != nil {
			return err
		}
		first := states[doc.Theme].next
		if len(chunks) > 0 {
			rows := make([][]any, len(chunks))
			for i, c := range chunks {
				hp := c.HeadingPath
				if hp == nil {
					hp = []string{}
				}
				rows[i] = []any{c.ID, doc.ID, doc.Theme, c.Ordinal, c.Source, c.Title, hp, c.Start, c.End, c.Text, c.Tokens, first + int64(i)}
			}
			if _, err := tx.CopyFrom(ctx, pgx.Identifier{"kb_chunk"}, chunkCopyCols, pgx.CopyFromRows(rows)); err != nil {
				return fmt.Errorf("copy chunks: %w", err)
			}
		}
		if len(vectors) > 0 {
			vrows := make([][]any, len(chunks))
			for i, c := range chunks {
				vrows[i] = []any{c.ID, doc.Theme, pgv.NewVector(vectors[i])}
			}
			if _, err := tx.CopyFrom(ctx, pgx.Identifier{"kb_embedding"}, []string{"chunk_id", "theme", "embedding"}, pgx.CopyFromRows(vrows)); err != nil {
				return fmt.Errorf("copy embeddings: %w", err)
			}
		}
		w.tails, w.asked, err = indexDoc(ctx, tx, doc.Theme, doc.ID, first, toks, total, known)
		w.before = states[doc.Theme]
		w.after = w.before
		if len(toks) > 0 {
			w.after = themeState{next: max(w.before.next, first+int64(len(toks))), chunks: w.before.chunks + int64(len(toks))}
		}
		return err
	})
	return w, err
}

// ensureSpace checks info against the recorded embedding space, recording
// it (and sizing the vector column and its HNSW index, unless a bulk load
// defers that) on first write.
func (s *Store) ensureSpace(ctx context.Context, tx pgx.Tx, info knowledge.EmbeddingInfo) error {
	if _, err := tx.Exec(ctx, `LOCK TABLE kb_embedding_info IN EXCLUSIVE MODE`); err != nil {
		return err
	}
	var cur knowledge.EmbeddingInfo
	err := tx.QueryRow(ctx, `SELECT model, dimensions FROM kb_embedding_info WHERE id = 1`).Scan(&cur.Model, &cur.Dimensions)
	if err == nil {
		if cur != info {
			return knowledge.MismatchError(cur, info)
		}
		return nil
	}
	if !errors.Is(err, pgx.ErrNoRows) {
		return err
	}
	stmts := []string{
		`DELETE FROM kb_embedding`,
		`DROP INDEX IF EXISTS ` + s.qualified("kb_embedding_hnsw"),
		fmt.Sprintf(`ALTER TABLE kb_embedding ALTER COLUMN embedding TYPE vector(%d)`, info.Dimensions),
	}
	if info.Dimensions <= hnswMaxDims && s.bulk.Load() == 0 {
		stmts = append(stmts, `CREATE INDEX kb_embedding_hnsw ON kb_embedding USING hnsw `+hnswOn(info.Dimensions)+` `+hnswParams)
	}
	for _, q := range stmts {
		if _, err := tx.Exec(ctx, q); err != nil {
			return fmt.Errorf("size the vector column: %w", err)
		}
	}
	_, err = tx.Exec(ctx, `INSERT INTO kb_embedding_info(id, model, dimensions) VALUES (1, $1, $2)`, info.Model, info.Dimensions)
	return err
}

// qualified returns name qualified with the store's schema.
func (s *Store) qualified(name string) string { return s.schema + "." + name }

// DeleteDocument implements knowledge.Store.
func (s *Store) DeleteDocument(ctx context.Context, theme, id string) error {
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, id); err != nil {
			return err
		}
		old, ok, err := readLexDoc(ctx, tx, id)
		if err != nil {
			return err
		}
		if ok {
			if _, err := lockThemes(ctx, tx, old.theme); err != nil {
				return err
			}
			if err := unindexDoc(ctx, tx, id, old); err != nil {
				return err
			}
		}
		if _, err := tx.Exec(ctx, `DELETE FROM kb_document WHERE id = $1`, id); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `DELETE FROM kb_embedding_info WHERE NOT EXISTS (SELECT 1 FROM kb_embedding)`)
		return err
	})
	if err != nil {
		return fmt.Errorf("delete %s: %w", id, err)
	}
	return nil
}

// chunkCopyCols are the kb_chunk columns a write COPYs.
var chunkCopyCols = []string{"id", "doc_id", "theme", "ordinal", "source", "title", "heading_path", "start_off", "end_off", "text", "tokens", "lex_num"}

const chunkCols = `id, doc_id, source, title, heading_path, start_off, end_off, ordinal, text, tokens`

func scanChunk(r pgx.Row) (chunk.Chunk, error) {
	var c chunk.Chunk
	err := r.Scan(&c.ID, &c.Doc, &c.Source, &c.Title, &c.HeadingPath, &c.Start, &c.End, &c.Ordinal, &c.Text, &c.Tokens)
	return c, err
}

// Chunk implements knowledge.Store.
func (s *Store) Chunk(ctx context.Context, id string) (chunk.Chunk, error) {
	c, err := scanChunk(s.pool.QueryRow(ctx, `SELECT `+chunkCols+` FROM kb_chunk WHERE id = $1`, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return c, fmt.Errorf("chunk %s: %w", id, knowledge.ErrNotFound)
	}
	if err != nil {
		return c, fmt.Errorf("chunk %s: %w", id, err)
	}
	return c, nil
}

// Chunks implements knowledge.Store.
func (s *Store) Chunks(ctx context.Context, theme string) ([]chunk.Chunk, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+chunkCols+` FROM kb_chunk WHERE theme = $1 ORDER BY doc_id, ordinal`, theme)
	if err != nil {
		return nil, fmt.Errorf("chunks of %s: %w", theme, err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (chunk.Chunk, error) { return scanChunk(r) })
	if err != nil {
		return nil, fmt.Errorf("chunks of %s: %w", theme, err)
	}
	return out, nil
}

// Search implements knowledge.Store.
func (s *Store) Search(ctx context.Context, q knowledge.Query) ([]knowledge.Hit, error) {
	hits, err := knowledge.Search(ctx, q,
		func(ctx context.Context, q knowledge.Query, n int) ([]knowledge.Hit, error) {
			return s.vectorSearch(ctx, q.Theme, q.Vector, n)
		},
		func(ctx context.Context, q knowledge.Query, n int) ([]knowledge.Hit, map[string]float64, error) {
			return s.lexicalSearch(ctx, q.Theme, q.Text, n, q.Mode == knowledge.SearchLexical)
		}, s.fill)
	if err != nil {
		return nil, err
	}
	return hits, nil
}

// fill loads the chunks of hits that carry only their id (a hit whose
// chunk names its document is loaded already), keeping their order.
func (s *Store) fill(ctx context.Context, hits []knowledge.Hit) ([]knowledge.Hit, error) {
	out := make([]knowledge.Hit, 0, len(hits))
	var ids []string
	for _, h := range hits {
		if h.Chunk.Doc == "" {
			ids = append(ids, h.Chunk.ID)
		}
	}
	if len(ids) == 0 {
		return append(out, hits...), nil
	}
	rows, err := s.pool.Query(ctx, `SELECT `+chunkCols+` FROM kb_chunk WHERE id = ANY($1)`, ids)
	if err != nil {
		return nil, err
	}
	chunks, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (chunk.Chunk, error) { return scanChunk(r) })
	if err != nil {
		return nil, err
	}
	byID := map[string]chunk.Chunk{}
	for _, c := range chunks {
		byID[c.ID] = c
	}
	for _, h := range hits {
		if h.Chunk.Doc != "" {
			out = append(out, h)
		} else if c, ok := byID[h.Chunk.ID]; ok { // else deleted between ranking and loading
			h.Chunk = c
			out = append(out, h)
		}
	}
	return out, nil
}

// vectorQuery is vector search's statement for vectors of dims ($1 the
// query vector, $2 the theme, $3 how many): ordered by the half-precision
// distance, the HNSW index's (hnswOn), scored by the float32 one. Above
// hnswMaxDims there is no index and the order is exact.
func vectorQuery(dims int) string {
	order := `embedding <=> $1`
	if dims <= hnswMaxDims {
		order = fmt.Sprintf(`embedding::halfvec(%d) <=> $1::halfvec(%[1]d)`, dims)
	}
	return `SELECT chunk_id, 1 - (embedding <=> $1) FROM kb_embedding WHERE theme = $2 ORDER BY ` + order + ` LIMIT $3`
}

func (s *Store) vectorSearch(ctx context.Context, theme string, qv []float32, n int) ([]knowledge.Hit, error) {
	info, ok, err := s.EmbeddingInfo(ctx)
	if err != nil || !ok {
		return nil, err
	}
	if len(qv) != info.Dimensions {
		return nil, fmt.Errorf("query vector has %d dims, the store %d (%s): %w", len(qv), info.Dimensions, info.Model, knowledge.ErrDimensionMismatch)
	}
	// One round trip: the HNSW settings (per session, so they hold on the
	// pooled connection the batch runs on; every vector search sets them)
	// and the query. The ORDER BY is the distance alone, the form the HNSW
	// index serves: a tie-breaking second key makes the planner sort the
	// whole theme instead. Ties are broken by chunk id below.
	var b pgx.Batch
	b.Queue(fmt.Sprintf(`SET hnsw.ef_search = %d`, min(max(2*n, hnswEfSearch), 1000)))
	b.Queue(`SET hnsw.iterative_scan = strict_order`)
	var out []knowledge.Hit
	b.Queue(vectorQuery(info.Dimensions),
		pgv.NewVector(qv), theme, n).Query(func(rows pgx.Rows) error {
		var err error
		out, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (knowledge.Hit, error) {
			var h knowledge.Hit
			err := r.Scan(&h.Chunk.ID, &h.VectorScore)
			return h, err
		})
		return err
	})
	err = s.pool.SendBatch(ctx, &b).Close()
	knowledge.SortHitsBy(out, func(h *knowledge.Hit) float64 { return h.VectorScore })
	if err != nil {
		return nil, fmt.Errorf("vector: %w", err)
	}
	return out, nil
}
