package sqlite

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/vibelife/vibe/chunk"
	"github.com/vibelife/vibe/knowledge"

	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// Store is a knowledge.Store in one SQLite file.
type Store struct {
	db   *sql.DB
	path string
	// wmu serialises this process's writes to the memory tables: 200
	// concurrent turns otherwise queue in SQLite's busy handler, which
	// polls with growing sleeps and, past busy_timeout, fails with
	// SQLITE_BUSY. Readers do not take it (WAL lets them read meanwhile).
	wmu sync.Mutex

	mu       sync.Mutex
	cache    map[string]*themeVectors // quantised vectors per theme
	ivfCache map[string]*ivfIndex     // vector index centroids per theme
	ivfMin   int                      // smallest theme indexed (ivfMinVectors; tests lower it)

	// stmts are the search path's statements, prepared once (see stmt).
	stmtMu sync.Mutex
	stmts  map[string]*sql.Stmt

	rc *readCache // what searches read, for the store's generation

	// mergeRows bounds the input rows of the lexical index's merges a
	// transaction moves (mergeMaxRows; tests lower it); onMerge, when set
	// (tests), is told how many each write transaction moved.
	mergeRows int
	onMerge   func(moved int)
}

var (
	_ knowledge.Store         = (*Store)(nil)
	_ knowledge.VectorIndexer = (*Store)(nil)
	_ knowledge.IndexFinisher = (*Store)(nil)
)

// themeVectors are a theme's vectors as a search scans them: each
// L2-normalised and quantised to int8 with a scale of its own
// (v[j] ~ scale * code[j]), stored a dimension at a time (codes[j*len(ids)
// + i] is dimension j of vector i) so that a query touches only the
// dimensions where it is not zero (the local embedder's queries hold a few
// dozen of its 1024). A quarter of the memory of float32 rows; the exact
// vectors stay on disk.
type themeVectors struct {
	gen   int64 // the theme's generation (theme_gen) the vectors were read at
	dims  int
	ids   []string
	rows  []int64 // the embeddings rowid of each of ids
	scale []float32
	codes []int8
	// numGen is the theme's generation read in the statement that read
	// the vectors, and byNum the chunk ids by lexical index number, of
	// that generation (numbered: number order; see idsByNum).
	numGen int64
	byNum  []numbered
	// chunkRows is the chunks table's rowid of each of ids (0: no chunk),
	// of generation numGen, for loading the chunks by rowid (loadChunks);
	// sorted is whether ids are in ascending order, as binary search needs.
	chunkRows []int64
	sorted    bool
}

// numbered is a chunk's lexical index number and id.
type numbered struct {
	num int64
	id  string
}

// Open opens (creating if needed) the database at path and applies the
// migrations.
func Open(ctx context.Context, path string) (*Store, error) {
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("open store %s: %w", path, err)
		}
	}
	q := url.Values{}
	q.Add("_pragma", "busy_timeout(10000)")
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "foreign_keys(1)")
	q.Add("_pragma", "synchronous(NORMAL)")
	// A document's write dirties a page of the lexical index for most of
	// its terms; checkpointing every 64 MB of WAL instead of every 4 MB
	// copies a page touched by several writes back to the file once
	// (measured: ingest wall -35 %, CPU -11 %, docs/retrieval.md).
	q.Add("_pragma", "wal_autocheckpoint(16384)")
	q.Set("_txlock", "immediate")
	db, err := sql.Open("sqlite", "file:"+path+"?"+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	if err := migrate(ctx, db); err != nil {
		db.Close()
		if errors.Is(err, knowledge.ErrSchemaNewer) {
			return nil, err // it names the file
		}
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	return &Store{db: db, path: path, cache: map[string]*themeVectors{}, stmts: map[string]*sql.Stmt{}, ivfCache: map[string]*ivfIndex{}, ivfMin: ivfMinVectors, rc: newReadCache(), mergeRows: mergeMaxRows}, nil
}

// Close closes the database.
func (s *Store) Close() error {
	s.stmtMu.Lock()
	for q, st := range s.stmts {
		st.Close()
		delete(s.stmts, q)
	}
	s.stmtMu.Unlock()
	return s.db.Close()
}

// stmt returns query prepared, preparing it on its first use. A search runs
// the same few statements each time (lists of ids go in as one JSON array,
// read with json_each, so that their text does not change), and preparing
// them anew was near a tenth of a search's CPU.
func (s *Store) stmt(ctx context.Context, query string) (*sql.Stmt, error) {
	s.stmtMu.Lock()
	defer s.stmtMu.Unlock()
	if st, ok := s.stmts[query]; ok {
		return st, nil
	}
	st, err := s.db.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	s.stmts[query] = st
	return st, nil
}

// queryStmt runs the prepared query (see stmt), one of a search's short
// statements: see shortCtx.
func (s *Store) queryStmt(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	st, err := s.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	qctx, err := shortCtx(ctx)
	if err != nil {
		return nil, err
	}
	return st.QueryContext(qctx, args...)
}

// scanStmt runs the prepared query (see stmt), one of a search's short
// statements (see shortCtx), and scans its one row into dest.
func (s *Store) scanStmt(ctx context.Context, query string, args []any, dest ...any) error {
	st, err := s.stmt(ctx, query)
	if err != nil {
		return err
	}
	qctx, err := shortCtx(ctx)
	if err != nil {
		return err
	}
	return st.QueryRowContext(qctx, args...).Scan(dest...)
}

// shortCtx is the context of one of a search's short statements: ctx's
// error when it is done, else ctx without its cancellation. The driver
// watches a cancellable context for the whole of each statement (a
// goroutine and a channel, database/sql another for the rows, and SQLite's
// progress handler every 1000 steps): about 15 % of a hybrid search's CPU
// at 5,599 chunks, over its five or so statements (docs/retrieval.md, Cost
// against BM25). These statements take well under a millisecond each, so
// the search is cancelled between them instead.
func shortCtx(ctx context.Context) (context.Context, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return context.WithoutCancel(ctx), nil
}

// jsonInts is ns as a JSON array, for json_each.
func jsonInts(ns []int64) string {
	b := make([]byte, 0, 8*len(ns)+2)
	b = append(b, '[')
	for i, n := range ns {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, n, 10)
	}
	return string(append(b, ']'))
}

// jsonStrings is ss as a JSON array, for json_each.
func jsonStrings(ss []string) (string, error) {
	b, err := json.Marshal(ss)
	return string(b), err
}

// EmbeddingInfo implements knowledge.Store.
func (s *Store) EmbeddingInfo(ctx context.Context) (knowledge.EmbeddingInfo, bool, error) {
	var info knowledge.EmbeddingInfo
	err := s.db.QueryRowContext(ctx, `SELECT model, dimensions FROM embedding_info WHERE id = 1`).Scan(&info.Model, &info.Dimensions)
	if errors.Is(err, sql.ErrNoRows) {
		return info, false, nil
	}
	if err != nil {
		return info, false, fmt.Errorf("embedding info: %w", err)
	}
	return info, true, nil
}

// Documents implements knowledge.Store.
func (s *Store) Documents(ctx context.Context, theme string) ([]knowledge.Document, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT id, theme, source, title, content_hash, chunks, updated_at FROM documents WHERE theme = ? ORDER BY id`, theme)
	if err != nil {
		return nil, fmt.Errorf("list documents of %s: %w", theme, err)
	}
	defer rows.Close()
	var out []knowledge.Document
	for rows.Next() {
		var d knowledge.Document
		var ts string
		if err := rows.Scan(&d.ID, &d.Theme, &d.Source, &d.Title, &d.ContentHash, &d.Chunks, &ts); err != nil {
			return nil, err
		}
		d.UpdatedAt, _ = time.Parse(time.RFC3339Nano, ts)
		out = append(out, d)
	}
	return out, rows.Err()
}

// bumpGen advances the theme's generation inside a write transaction, so
// every process's caches of the theme (vectors, token frequencies) see the
// change on their next search.
func bumpGen(ctx context.Context, tx *sql.Tx, theme string) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO theme_gen(theme, gen) VALUES (?, 1) ON CONFLICT(theme) DO UPDATE SET gen = gen + 1`, theme)
	return err
}

// ReplaceDocument implements knowledge.Store.
func (s *Store) ReplaceDocument(ctx context.Context, doc knowledge.Document, chunks []chunk.Chunk, vectors [][]float32, info knowledge.EmbeddingInfo) (err error) {
	if err := knowledge.CheckReplace(doc, chunks, vectors, info); err != nil {
		return err
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("replace %s: %w", doc.ID, err)
	}
	defer func() {
		if err != nil {
			tx.Rollback()
			// A cancelled context rolls the transaction back from
			// database/sql's own goroutine and closes its statements, so
			// the statement running then fails with "statement is closed":
			// the cancellation is the cause, and errors.Is finds it.
			if cerr := ctx.Err(); cerr != nil && !errors.Is(err, cerr) {
				err = fmt.Errorf("%w (%v)", cerr, err)
			}
			err = fmt.Errorf("replace %s: %w", doc.ID, err)
		}
	}()
	if len(vectors) > 0 {
		cur, ok, err := txInfo(ctx, tx)
		if err != nil {
			return err
		}
		if ok && cur != info {
			return knowledge.MismatchError(cur, info)
		}
		if !ok {
			if _, err := tx.ExecContext(ctx, `INSERT INTO embedding_info(id, model, dimensions) VALUES (1, ?, ?)`, info.Model, info.Dimensions); err != nil {
				return err
			}
		}
	}
	// A new document has nothing to delete: only a stored one is looked
	// up and removed.
	var stored int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM documents WHERE id = ?`, doc.ID).Scan(&stored); err != nil {
		return err
	}
	if stored > 0 {
		if err := deleteDoc(ctx, tx, doc.ID); err != nil {
			return err
		}
	}
	if err := bumpGen(ctx, tx, doc.Theme); err != nil {
		return err
	}
	if doc.UpdatedAt.IsZero() {
		doc.UpdatedAt = time.Now().UTC()
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO documents(id, theme, source, title, content_hash, chunks, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
		doc.ID, doc.Theme, doc.Source, doc.Title, doc.ContentHash, len(chunks), doc.UpdatedAt.UTC().Format(time.RFC3339Nano)); err != nil {
		return err
	}
	// The chunks take the lexical index's next numbers, in order.
	first, err := nextLexNum(ctx, tx)
	if err != nil {
		return err
	}
	insChunk, err := tx.PrepareContext(ctx, `INSERT INTO chunks(id, doc_id, theme, ordinal, source, title, heading_path, start_off, end_off, text, tokens, lex_num) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)`)
	if err != nil {
		return err
	}
	defer insChunk.Close()
	insVec, err := tx.PrepareContext(ctx, `INSERT INTO embeddings(chunk_id, theme, vector) VALUES (?,?,?)`)
	if err != nil {
		return err
	}
	defer insVec.Close()
	var rowids []int64
	for i, c := range chunks {
		if err := ctx.Err(); err != nil {
			return err
		}
		hp, _ := json.Marshal(nonNil(c.HeadingPath))
		if _, err := insChunk.ExecContext(ctx, c.ID, doc.ID, doc.Theme, c.Ordinal, c.Source, c.Title, string(hp), c.Start, c.End, c.Text, c.Tokens, first+int64(i)); err != nil {
			return fmt.Errorf("chunk %s: %w", c.ID, err)
		}
		if len(vectors) > 0 {
			res, err := insVec.ExecContext(ctx, c.ID, doc.Theme, storeVector(vectors[i]))
			if err != nil {
				return err
			}
			id, err := res.LastInsertId()
			if err != nil {
				return err
			}
			rowids = append(rowids, id)
		}
	}
	seg, err := nextSeg(ctx, tx)
	if err != nil {
		return err
	}
	written, err := indexDoc(ctx, tx, seg, doc.Theme, doc.ID, first, chunks)
	if err != nil {
		return err
	}
	// A bounded part of the lexical index's merges (lexical.go).
	moved, err := mergeWork(ctx, tx, s.mergeBudget(written))
	if err != nil {
		return err
	}
	if s.onMerge != nil {
		s.onMerge(moved)
	}
	if err := s.indexWrite(ctx, tx, doc.Theme, doc.ID, rowids, vectors); err != nil {
		return err
	}
	return tx.Commit()
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func txInfo(ctx context.Context, tx *sql.Tx) (knowledge.EmbeddingInfo, bool, error) {
	var info knowledge.EmbeddingInfo
	err := tx.QueryRowContext(ctx, `SELECT model, dimensions FROM embedding_info WHERE id = 1`).Scan(&info.Model, &info.Dimensions)
	if errors.Is(err, sql.ErrNoRows) {
		return info, false, nil
	}
	return info, err == nil, err
}

// deleteDoc removes a document, its chunks, their vectors, its rows in the
// vector index and its postings, each found through an index.
func deleteDoc(ctx context.Context, tx *sql.Tx, id string) error {
	if _, err := tx.ExecContext(ctx, `DELETE FROM vec_ivf_lists WHERE doc_id = ?`, id); err != nil {
		return err
	}
	if err := unindexDoc(ctx, tx, id); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM embeddings WHERE chunk_id IN (SELECT id FROM chunks WHERE doc_id = ?)`, id); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM chunks WHERE doc_id = ?`, id); err != nil {
		return err
	}
	_, err := tx.ExecContext(ctx, `DELETE FROM documents WHERE id = ?`, id)
	return err
}

// DeleteDocument implements knowledge.Store. When the last vector goes, the
// recorded embedding space is forgotten too.
func (s *Store) DeleteDocument(ctx context.Context, theme, id string) (err error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("delete %s: %w", id, err)
	}
	defer func() {
		if err != nil {
			tx.Rollback()
			err = fmt.Errorf("delete %s: %w", id, err)
		}
	}()
	if err := deleteDoc(ctx, tx, id); err != nil {
		return err
	}
	if err := bumpGen(ctx, tx, theme); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM vec_ivf WHERE theme = ? AND NOT EXISTS (SELECT 1 FROM embeddings WHERE theme = ?)`, theme, theme); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM embedding_info WHERE NOT EXISTS (SELECT 1 FROM embeddings)`); err != nil {
		return err
	}
	return tx.Commit()
}

const chunkCols = `id, doc_id, source, title, heading_path, start_off, end_off, ordinal, text, tokens`

func scanChunk(sc interface{ Scan(...any) error }) (chunk.Chunk, error) {
	var c chunk.Chunk
	var hp string
	if err := sc.Scan(&c.ID, &c.Doc, &c.Source, &c.Title, &hp, &c.Start, &c.End, &c.Ordinal, &c.Text, &c.Tokens); err != nil {
		return c, err
	}
	var ok bool
	if c.HeadingPath, ok = plainStrings(hp); !ok {
		if err := json.Unmarshal([]byte(hp), &c.HeadingPath); err != nil {
			return c, fmt.Errorf("chunk %s: heading path: %w", c.ID, err)
		}
	}
	return c, nil
}

// plainStrings decodes a JSON array of strings written without escapes
// and white space (what json.Marshal writes for most headings), as
// json.Unmarshal would (an empty array is an empty slice, not nil); ok is
// false for anything else, for json.Unmarshal to decode.
func plainStrings(s string) (out []string, ok bool) {
	if len(s) < 2 || s[0] != '[' || s[len(s)-1] != ']' || strings.IndexByte(s, '\\') >= 0 || !utf8.ValidString(s) {
		return nil, false
	}
	body := s[1 : len(s)-1]
	out = []string{}
	for len(body) > 0 {
		if body[0] != '"' {
			return nil, false
		}
		end := strings.IndexByte(body[1:], '"')
		if end < 0 {
			return nil, false
		}
		str := body[1 : 1+end]
		for i := 0; i < len(str); i++ {
			if str[i] < 0x20 { // a control character: not valid JSON
				return nil, false
			}
		}
		out = append(out, str)
		body = body[2+end:]
		if len(body) > 0 {
			if body[0] != ',' || len(body) == 1 {
				return nil, false
			}
			body = body[1:]
		}
	}
	return out, true
}

// Chunk implements knowledge.Store.
func (s *Store) Chunk(ctx context.Context, id string) (chunk.Chunk, error) {
	c, err := scanChunk(s.db.QueryRowContext(ctx, `SELECT `+chunkCols+` FROM chunks WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return c, fmt.Errorf("chunk %s: %w", id, knowledge.ErrNotFound)
	}
	if err != nil {
		return c, fmt.Errorf("chunk %s: %w", id, err)
	}
	return c, nil
}

// Chunks implements knowledge.Store.
func (s *Store) Chunks(ctx context.Context, theme string) ([]chunk.Chunk, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+chunkCols+` FROM chunks WHERE theme = ? ORDER BY doc_id, ordinal`, theme)
	if err != nil {
		return nil, fmt.Errorf("chunks of %s: %w", theme, err)
	}
	defer rows.Close()
	var out []chunk.Chunk
	for rows.Next() {
		c, err := scanChunk(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// Search implements knowledge.Store.
func (s *Store) Search(ctx context.Context, q knowledge.Query) ([]knowledge.Hit, error) {
	v, err := s.begin(ctx, q.Theme)
	if err != nil {
		return nil, fmt.Errorf("search %s: %w", q.Theme, err)
	}
	hits, err := knowledge.Search(ctx, q,
		func(ctx context.Context, q knowledge.Query, n int) ([]knowledge.Hit, error) {
			return s.vectorSearchIn(ctx, v, q.Theme, q.Vector, n)
		},
		func(ctx context.Context, q knowledge.Query, n int) ([]knowledge.Hit, map[string]float64, error) {
			return s.lexicalSearchIn(ctx, v, q.Theme, q.Text, n, q.Mode == knowledge.SearchLexical)
		},
		func(ctx context.Context, hits []knowledge.Hit) ([]knowledge.Hit, error) {
			return s.fillIn(ctx, v, q.Theme, hits)
		})
	if err != nil {
		return nil, err
	}
	return hits, nil
}

// fill loads the chunks of hits that carry only their id (a hit whose
// chunk names its document is loaded already), from the cache or fillBatch
// ids a query (a hybrid search loads its hundred candidates in one),
// keeping their order.
func (s *Store) fill(ctx context.Context, hits []knowledge.Hit) ([]knowledge.Hit, error) {
	v, err := s.begin(ctx, "")
	if err != nil {
		return nil, err
	}
	return s.fillIn(ctx, v, "", hits)
}

// fillIn is fill with the search's view of the cache, for a search in
// theme ("" for none).
func (s *Store) fillIn(ctx context.Context, v view, theme string, hits []knowledge.Hit) ([]knowledge.Hit, error) {
	// The hits in their order, each chunk set in place from the cache;
	// the ids not cached are read below (into byID).
	out := make([]knowledge.Hit, len(hits))
	found := make([]bool, len(hits))
	var ids []string
	for i, h := range hits {
		out[i] = h
		if h.Chunk.Doc != "" {
			found[i] = true
		} else if c, ok := v.chunk(h.Chunk.ID); ok {
			out[i].Chunk, found[i] = c, true
		} else {
			ids = append(ids, h.Chunk.ID)
		}
	}
	if len(ids) == 0 {
		return out, nil
	}
	byID := make(map[string]chunk.Chunk, len(ids))
	for start := 0; start < len(ids); start += fillBatch {
		if err := s.loadChunks(ctx, v, theme, ids[start:min(start+fillBatch, len(ids))], byID); err != nil {
			return nil, err
		}
	}
	kept := out[:0]
	for i := range out {
		if !found[i] {
			c, ok := byID[out[i].Chunk.ID]
			if !ok { // deleted between ranking and loading
				continue
			}
			out[i].Chunk = c
		}
		kept = append(kept, out[i])
	}
	return kept, nil
}

// fillBatch bounds the ids of one query, far under SQLite's limit on bound
// parameters.
const fillBatch = 500

// loadChunks adds the chunks of ids (at least one) to byID, and to the
// cache. The chunks whose rowid the theme's vectors hold, read at the
// theme's generation v began at, are read by rowid (one b-tree search each,
// not two through the id's index); a row read so is kept only when it is
// the chunk asked for (the store may have changed since), and what is not
// found so is read by id.
func (s *Store) loadChunks(ctx context.Context, v view, theme string, ids []string, byID map[string]chunk.Chunk) error {
	byRow, rest := s.chunkRowids(theme, v.themeGen, ids)
	if len(byRow) > 0 {
		asked := make(map[string]bool, len(byRow))
		rowids := make([]int64, 0, len(byRow))
		for _, r := range byRow {
			asked[r.id] = true
			rowids = append(rowids, r.num)
		}
		if err := s.readChunks(ctx, v, `SELECT `+chunkCols+genColumn+` FROM chunks WHERE rowid IN (SELECT value FROM json_each(?))`, jsonInts(rowids), asked, byID); err != nil {
			return err
		}
		for _, r := range byRow {
			if _, ok := byID[r.id]; !ok {
				rest = append(rest, r.id)
			}
		}
	}
	if len(rest) == 0 {
		return nil
	}
	list, err := jsonStrings(rest)
	if err != nil {
		return fmt.Errorf("load chunks: %w", err)
	}
	return s.readChunks(ctx, v, `SELECT `+chunkCols+genColumn+` FROM chunks WHERE id IN (SELECT value FROM json_each(?))`, list, nil, byID)
}

// readChunks adds the chunks the statement q reads with arg (those in
// asked, unless nil) to byID, and to the cache.
func (s *Store) readChunks(ctx context.Context, v view, q, arg string, asked map[string]bool, byID map[string]chunk.Chunk) error {
	rows, err := s.queryStmt(ctx, q, arg)
	if err != nil {
		return fmt.Errorf("load chunks: %w", err)
	}
	defer rows.Close()
	var gen int64
	var got []chunk.Chunk
	for rows.Next() {
		c, err := scanChunk(suffixed{rows, &gen})
		if err != nil {
			return fmt.Errorf("load chunks: %w", err)
		}
		if asked != nil && !asked[c.ID] {
			continue
		}
		byID[c.ID] = c
		got = append(got, c)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("load chunks: %w", err)
	}
	v.putChunks(gen, got, nil)
	return nil
}

// chunkRowids splits ids into those whose chunk's rowid the theme's
// vectors hold, read at the theme's generation gen (num the rowid), and
// the rest.
func (s *Store) chunkRowids(theme string, gen int64, ids []string) (byRow []numbered, rest []string) {
	var tv *themeVectors
	if theme != "" {
		s.mu.Lock()
		tv = s.cache[theme]
		s.mu.Unlock()
	}
	if tv == nil || tv.numGen != gen || !tv.sorted {
		return nil, ids
	}
	for _, id := range ids {
		if i, found := slices.BinarySearch(tv.ids, id); found && tv.chunkRows[i] > 0 {
			byRow = append(byRow, numbered{tv.chunkRows[i], id})
		} else {
			rest = append(rest, id)
		}
	}
	return byRow, rest
}

// vectors returns the theme's vectors as of its generation gen, read
// before them (Store.begin): a write in between makes the cached copy look
// stale and reloaded next time, never the reverse.
func (s *Store) vectors(ctx context.Context, v view, theme string) (*themeVectors, error) {
	gen := v.themeGen
	s.mu.Lock()
	if tv, ok := s.cache[theme]; ok && tv.gen == gen {
		s.mu.Unlock()
		return tv, nil
	}
	s.mu.Unlock()

	var n int
	if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM embeddings WHERE theme = ?`, theme).Scan(&n); err != nil {
		return nil, err
	}
	// With each vector, its chunk's lexical index number (a hybrid
	// search's lexical candidates are found by number, idsByNum), and the
	// theme's generation, in the same statement: the same snapshot.
	rows, err := s.db.QueryContext(ctx, `SELECT e.rowid, e.chunk_id, e.vector, coalesce(c.lex_num, 0), coalesce(c.rowid, 0), coalesce((SELECT gen FROM theme_gen WHERE theme = ?1), 0)`+genColumn+`
FROM embeddings e LEFT JOIN chunks c ON c.id = e.chunk_id WHERE e.theme = ?1 ORDER BY e.chunk_id`, theme)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	tv := &themeVectors{gen: gen, sorted: true}
	var row []float32
	var storeGen int64 // read with the rows: the generation they are of
	pre := newPrefill(n)
	for rows.Next() {
		var rowid, num, crow int64
		var id string
		var blob sql.RawBytes
		if err := rows.Scan(&rowid, &id, &blob, &num, &crow, &tv.numGen, &storeGen); err != nil {
			return nil, err
		}
		if tv.dims == 0 {
			tv.dims = blobDims(blob)
			if tv.dims <= 0 {
				return nil, fmt.Errorf("chunk %s: a vector of %d bytes: %w", id, len(blob), knowledge.ErrDimensionMismatch)
			}
			tv.codes = make([]int8, n*tv.dims)
			row = make([]float32, tv.dims)
		}
		if d := blobDims(blob); d != tv.dims {
			return nil, fmt.Errorf("chunk %s: vector of %d dims among %d: %w", id, d, tv.dims, knowledge.ErrDimensionMismatch)
		}
		if len(tv.ids) == n {
			break // written after the count; the next search sees it
		}
		pre.add(rowid, id, theme, blob)
		decodeBlob(row, blob)
		normalize(row)
		// Column-major from the start: codes[j*n+i] is dimension j of
		// vector i.
		i := len(tv.ids)
		if i > 0 && id <= tv.ids[i-1] {
			tv.sorted = false
		}
		tv.ids = append(tv.ids, id)
		tv.rows = append(tv.rows, rowid)
		tv.chunkRows = append(tv.chunkRows, crow)
		tv.scale = append(tv.scale, quantizeInto(row, tv.codes[i:], n))
		if num > 0 {
			tv.byNum = append(tv.byNum, numbered{num, id})
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	v.putVectors(storeGen, pre.rowids, pre.vs)
	slices.SortFunc(tv.byNum, func(a, b numbered) int { return cmp.Compare(a.num, b.num) })
	if len(tv.ids) < n { // rows deleted after the count
		tv.codes = compact(tv.codes, tv.dims, n, len(tv.ids))
	}
	s.mu.Lock()
	if old, ok := s.cache[theme]; !ok || old.gen <= gen {
		s.cache[theme] = tv
	}
	s.mu.Unlock()
	return tv, nil
}

// idsByNum returns the chunk ids of the lexical index numbers nums from
// the theme's vectors, when they were read at the theme's generation gen
// (the one a search's posting rows were read at: see lexTopK); ok is false
// when they were not (or are not loaded), and the ids must be read.
// A number no vector's chunk has is left out of ids.
func (s *Store) idsByNum(theme string, gen int64, nums []int64) (ids map[int64]string, ok bool) {
	s.mu.Lock()
	tv := s.cache[theme]
	s.mu.Unlock()
	if tv == nil || tv.numGen != gen {
		return nil, false
	}
	ids = make(map[int64]string, len(nums))
	for _, num := range nums {
		i, found := slices.BinarySearchFunc(tv.byNum, num, func(e numbered, num int64) int { return cmp.Compare(e.num, num) })
		if !found {
			return nil, false // a chunk without a vector: read them all
		}
		ids[num] = tv.byNum[i].id
	}
	return ids, true
}

// vectorSearch returns the n chunks of the theme nearest to qv by cosine.
// A dense query on a theme with a vector index of its dimensions goes
// through the index (ivfSearch). Otherwise it scores every vector of the
// theme by its int8 code (see themeVectors), over the dimensions where the
// query is not zero only, then ranks the best rerankCandidates of them
// exactly, by their float32 vectors read from disk.
func (s *Store) vectorSearch(ctx context.Context, theme string, qv []float32, n int) ([]knowledge.Hit, error) {
	v, err := s.begin(ctx, theme)
	if err != nil {
		return nil, fmt.Errorf("vector: %w", err)
	}
	return s.vectorSearchIn(ctx, v, theme, qv, n)
}

// vectorSearchIn is vectorSearch with the search's view of the cache.
func (s *Store) vectorSearchIn(ctx context.Context, v view, theme string, qv []float32, n int) ([]knowledge.Hit, error) {
	if denseQuery(qv) {
		ix, err := s.ivf(ctx, s.db, theme)
		if err != nil {
			return nil, fmt.Errorf("vector: %w", err)
		}
		if ix != nil && ix.dims == len(qv) {
			q, qb := unitQuery(qv)
			defer queryPool.Put(qb)
			hits, err := s.ivfSearch(ctx, v, theme, ix, q, n)
			if err != nil {
				return nil, fmt.Errorf("vector: %w", err)
			}
			return hits, nil
		}
	}
	tv, err := s.vectors(ctx, v, theme)
	if err != nil {
		return nil, fmt.Errorf("vector: %w", err)
	}
	if len(tv.ids) == 0 {
		return nil, nil
	}
	if len(qv) != tv.dims {
		return nil, fmt.Errorf("query vector has %d dims, the store %d: %w", len(qv), tv.dims, knowledge.ErrDimensionMismatch)
	}
	q, qb := unitQuery(qv)
	defer queryPool.Put(qb)
	buf := approxPool.Get().(*[]float32)
	defer approxPool.Put(buf)
	approx := tv.approx(q, buf)
	// The candidates: the best by the codes' scores, by their index in
	// tv.ids. The ids are in order and offered in that order, so a tie
	// goes to the smaller id, as topN breaks ties, without comparing
	// strings.
	cand := newTopRows(min(len(tv.ids), rerankCandidates(n)))
	for i, a := range approx {
		// Once full, a score not above the last is refused by add: not
		// called (most of the theme).
		if k := len(cand.s); k > 0 && k == cand.n && a <= cand.s[k-1] {
			continue
		}
		cand.add(int64(i), a)
	}
	// Read by rowid, saving the lookup in the chunk id index; a row of
	// another theme (rows rewritten since the codes were read) is not read,
	// and the id read is the row's own.
	rowids := make([]int64, len(cand.ids))
	for k, i := range cand.ids {
		rowids[k] = tv.rows[i]
	}
	top := newTopN(n)
	if err := s.exactByRowid(ctx, v, theme, rowids, q, top); err != nil {
		return nil, fmt.Errorf("vector: %w", err)
	}
	return top.hits(), nil
}

// vectorsByRowid reads the vectors of a theme's rowids (a JSON array) by
// rowid, and the store's generation: the unary + keeps SQLite from going
// through the theme index.
const vectorsByRowid = `SELECT rowid, chunk_id, vector` + genColumn + ` FROM embeddings WHERE +theme = ? AND rowid IN (SELECT value FROM json_each(?))`

// rerankCandidates is how many chunks, ranked by their codes, are ranked
// again exactly for n hits. TestVectorCodesKeepTheExactRanking checks that
// the exact top n is among them.
func rerankCandidates(n int) int { return n + n/5 + 5 }

func normalize(v []float32) {
	var sum float64
	for _, x := range v {
		sum += float64(x) * float64(x)
	}
	if sum == 0 {
		return
	}
	inv := float32(1 / math.Sqrt(sum))
	for i := range v {
		v[i] *= inv
	}
}

// EncodeVector encodes v as little-endian float32s.
func EncodeVector(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

// DecodeVector decodes EncodeVector's output.
func DecodeVector(b []byte) []float32 {
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}

// quantizeInto writes the int8 code of the unit vector v to codes[0],
// codes[stride], codes[2*stride]... and returns its scale. The codes must
// be zeros (as made): a zero of v (or -0) is left as it is, its code being
// 0, so that a sparse vector's load writes only its nonzero dimensions (a
// column-major write is a cache miss each; start-up at 5,599 chunks of the
// local embedder, docs/retrieval.md).
func quantizeInto(v []float32, codes []int8, stride int) float32 {
	m := float32(0)
	for _, x := range v {
		m = max(m, x, -x)
	}
	if m == 0 {
		return 0
	}
	scale := m / 127
	for j, x := range v {
		if x != 0 {
			codes[j*stride] = int8(math.Round(float64(x / scale)))
		}
	}
	return scale
}

// compact shrinks column-major codes laid out for n vectors to the first
// have of them.
func compact(codes []int8, dims, n, have int) []int8 {
	out := make([]int8, dims*have)
	for j := 0; j < dims; j++ {
		copy(out[j*have:(j+1)*have], codes[j*n:j*n+have])
	}
	return out
}

// approxPool holds the buffers of approx, one a search, so that a search
// does not allocate one the size of the theme.
var approxPool = sync.Pool{New: func() any { return new([]float32) }}

// queryPool holds the buffers of unitQuery, one a search (4 KB for the
// local embedder's vectors).
var queryPool = sync.Pool{New: func() any { return new([]float32) }}

// unitQuery returns a copy of qv normalised, in a buffer of queryPool (qb,
// to put back once the search is done with q: nothing keeps q).
func unitQuery(qv []float32) (q []float32, qb *[]float32) {
	qb = queryPool.Get().(*[]float32)
	*qb = append((*qb)[:0], qv...)
	normalize(*qb)
	return *qb, qb
}

// approx returns each vector's approximate cosine with the unit vector q,
// in *buf (grown as needed).
//
// Each term qj * code is looked up in a table of the 256 products of qj,
// the same float32 values as multiplying, without a conversion and a
// multiplication an element. The dimensions are taken four (then two) at
// a time, each sum still adding them in dimension order (((acc + t1) + t2)
// + ... is what one pass a dimension adds), so that the sums are read and
// written a quarter as often.
func (tv *themeVectors) approx(q []float32, buf *[]float32) []float32 {
	n := len(tv.ids)
	if cap(*buf) < n {
		*buf = make([]float32, n)
	}
	acc := (*buf)[:n]
	clear(acc)
	var nz []int
	for j, qj := range q {
		if qj != 0 {
			nz = append(nz, j)
		}
	}
	var p1, p2, p3, p4 [256]float32
	table := func(p *[256]float32, qj float32) {
		for c := -128; c < 128; c++ {
			p[uint8(int8(c))] = qj * float32(int8(c))
		}
	}
	k := 0
	for ; k+4 <= len(nz); k += 4 {
		j1, j2, j3, j4 := nz[k], nz[k+1], nz[k+2], nz[k+3]
		table(&p1, q[j1])
		table(&p2, q[j2])
		table(&p3, q[j3])
		table(&p4, q[j4])
		c1 := tv.codes[j1*n : (j1+1)*n]
		c2 := tv.codes[j2*n : (j2+1)*n]
		c3 := tv.codes[j3*n : (j3+1)*n]
		c4 := tv.codes[j4*n : (j4+1)*n]
		c2, c3, c4 = c2[:len(c1)], c3[:len(c1)], c4[:len(c1)]
		acc := acc[:len(c1)]
		for i, c := range c1 {
			acc[i] = acc[i] + p1[uint8(c)] + p2[uint8(c2[i])] + p3[uint8(c3[i])] + p4[uint8(c4[i])]
		}
	}
	for ; k+2 <= len(nz); k += 2 {
		j1, j2 := nz[k], nz[k+1]
		table(&p1, q[j1])
		table(&p2, q[j2])
		c1 := tv.codes[j1*n : (j1+1)*n]
		c2 := tv.codes[j2*n : (j2+1)*n]
		c2 = c2[:len(c1)]
		acc := acc[:len(c1)]
		for i, c := range c1 {
			acc[i] = acc[i] + p1[uint8(c)] + p2[uint8(c2[i])]
		}
	}
	if k < len(nz) {
		j := nz[k]
		table(&p1, q[j])
		col := tv.codes[j*n : (j+1)*n]
		acc := acc[:len(col)]
		for i, c := range col {
			acc[i] += p1[uint8(c)]
		}
	}
	for i := range acc {
		acc[i] *= tv.scale[i]
	}
	return acc
}

// prefill collects the exact vectors a theme's load reads (Store.vectors),
// in the form the read cache keeps them, when all of the theme's fit in the
// cache's budget for vectors; the load puts them in the cache. The exact
// rerank of a search would read them from the table a few at a time (17.7
// vectors a query at 5,599 chunks, almost every vector of the theme over
// the bench's 300 queries), each a page SQLite fetches and sets up, while
// the load has each one's blob in hand. A theme of up to about 23,000 of
// the local embedder's vectors (1.4 KB each in the cache) is reranked from
// memory from its first search; a larger theme's load keeps none, so its
// start-up memory is what it was (the cache fills as its searches read,
// to the same bound).
type prefill struct {
	n      int  // the theme's vectors
	fill   bool // still collecting
	bytes  int
	rowids []int64
	vs     []*cachedVector
}

func newPrefill(n int) *prefill { return &prefill{n: n, fill: true} }

func (p *prefill) add(rowid int64, id, theme string, blob []byte) {
	if !p.fill {
		return
	}
	cv := cachedFromBlob(id, theme, blob)
	b := cv.bytes()
	// Past the budget none is kept; a theme whose first vector's size
	// times its vectors is twice the budget is not collected at all (the
	// sizes vary, so the first is only a guess).
	if len(p.vs) == 0 && b*p.n > 2*cacheVectorBytes || p.bytes+b > cacheVectorBytes {
		p.fill, p.bytes, p.rowids, p.vs = false, 0, nil, nil
		return
	}
	p.bytes += b
	p.rowids = append(p.rowids, rowid)
	p.vs = append(p.vs, cv)
}
