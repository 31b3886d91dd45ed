package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/vibelife/vibe/chunk"
	"github.com/vibelife/vibe/knowledge"
	"github.com/vibelife/vibe/knowledge/lexical"
	"github.com/vibelife/vibe/knowledge/lexindex"
)

// The lexical index (knowledge/lexindex) lives in three tables:
//
//   - lex_posting: each term's posting rows in a theme, keyed by (term,
//     theme, first chunk number); a chunk's number is chunks.lex_num, taken
//     above every stored one by each write;
//   - lex_doc: per document, its chunk and token counts and its terms, so
//     a delete finds the rows to change without reading the chunks;
//   - lex_theme: per theme, its chunk and token counts.
//
// BM25's statistics (chunks, average length, each term's document
// frequency) are the whole store's, as FTS5's were for its one table: a
// theme's ranking and the retrieval figures (eval) are those FTS5 gave.
//
// All three change in the transaction that writes or deletes the document.

// indexDoc adds the postings of chunks, numbered first, first+1, ..., of
// the document id of theme.
func indexDoc(ctx context.Context, tx *sql.Tx, theme, id string, first int64, chunks []chunk.Chunk) error {
	toks := make([][]string, len(chunks))
	var total int64
	for i, c := range chunks {
		toks[i] = lexical.ChunkTokens(c)
		total += int64(len(toks[i]))
	}
	terms, lists := lexindex.Postings(first, toks)
	// Each term's last row, read a batch of terms a query, takes what of
	// the term's new postings fits; the rest go into new rows. Both are
	// written a batch of rows a statement (INSERT OR REPLACE: a changed
	// row keeps its key).
	tails, err := tx.PrepareContext(ctx, `SELECT p.term, p.first, p.last, p.n, p.maxtf, p.minlen, p.data FROM json_each(?2) q JOIN lex_posting p
ON p.term = q.value AND p.theme = ?1 AND p.first = (SELECT max(first) FROM lex_posting WHERE term = q.value AND theme = ?1)`)
	if err != nil {
		return err
	}
	defer tails.Close()
	w, err := newRowWriter(ctx, tx, theme)
	if err != nil {
		return err
	}
	defer w.close()
	for start := 0; start < len(terms); start += tailBatch {
		if err := ctx.Err(); err != nil {
			return err
		}
		part := terms[start:min(start+tailBatch, len(terms))]
		last, err := lastRows(ctx, tails, theme, part)
		if err != nil {
			return err
		}
		for i, term := range part {
			r := last[term]
			changed, more := lexindex.Append(r, lists[start+i])
			if changed.N != r.N {
				if err := w.add(ctx, term, changed); err != nil {
					return err
				}
			}
			for _, m := range more {
				if err := w.add(ctx, term, m); err != nil {
					return err
				}
			}
		}
	}
	if err := w.flush(ctx); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO lex_doc(doc_id, theme, chunks, tokens, terms) VALUES (?,?,?,?,?)`,
		id, theme, len(chunks), total, strings.Join(terms, " ")); err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO lex_theme(theme, chunks, tokens) VALUES (?,?,?)
ON CONFLICT(theme) DO UPDATE SET chunks = chunks + excluded.chunks, tokens = tokens + excluded.tokens`, theme, len(chunks), total)
	return err
}

// tailBatch is how many terms' last rows one query reads, and rowBatch
// how many rows one statement writes.
const (
	tailBatch = 500
	rowBatch  = 64
)

// lastRows returns, by tails (prepared in indexDoc), the last row of each
// of terms in the theme that has rows.
func lastRows(ctx context.Context, tails *sql.Stmt, theme string, terms []string) (map[string]lexindex.Row, error) {
	list, err := json.Marshal(terms)
	if err != nil {
		return nil, err
	}
	rows, err := tails.QueryContext(ctx, theme, string(list))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := make(map[string]lexindex.Row)
	for rows.Next() {
		var term string
		var r lexindex.Row
		if err := rows.Scan(&term, &r.First, &r.Last, &r.N, &r.MaxTF, &r.MinLen, &r.Data); err != nil {
			return nil, err
		}
		out[term] = r
	}
	return out, rows.Err()
}

// rowWriter writes posting rows of one theme, rowBatch a statement
// (INSERT OR REPLACE: a changed row keeps its key), the statements prepared
// once.
type rowWriter struct {
	tx         *sql.Tx
	theme      string
	one, batch *sql.Stmt
	args       []any
}

const insRow = `INSERT OR REPLACE INTO lex_posting(term, theme, first, last, n, maxtf, minlen, data) VALUES (?,?,?,?,?,?,?,?)`

func newRowWriter(ctx context.Context, tx *sql.Tx, theme string) (*rowWriter, error) {
	w := &rowWriter{tx: tx, theme: theme}
	var err error
	if w.one, err = tx.PrepareContext(ctx, insRow); err != nil {
		return nil, err
	}
	if w.batch, err = tx.PrepareContext(ctx, insRow+strings.Repeat(",(?,?,?,?,?,?,?,?)", rowBatch-1)); err != nil {
		w.one.Close()
		return nil, err
	}
	return w, nil
}

func (w *rowWriter) add(ctx context.Context, term string, r lexindex.Row) error {
	w.args = append(w.args, term, w.theme, r.First, r.Last, r.N, r.MaxTF, r.MinLen, r.Data)
	if len(w.args) < 8*rowBatch {
		return nil
	}
	_, err := w.batch.ExecContext(ctx, w.args...)
	w.args = w.args[:0]
	return err
}

// flush writes the rows added since the last full batch.
func (w *rowWriter) flush(ctx context.Context) error {
	for i := 0; i < len(w.args); i += 8 {
		if _, err := w.one.ExecContext(ctx, w.args[i:i+8]...); err != nil {
			return err
		}
	}
	w.args = w.args[:0]
	return nil
}

func (w *rowWriter) close() {
	w.one.Close()
	w.batch.Close()
}

// unindexDoc removes the postings of the document id (its chunks still
// stored, numbered lo..hi) and its counts.
func unindexDoc(ctx context.Context, tx *sql.Tx, id string) error {
	var theme, terms string
	var chunks, tokens int64
	err := tx.QueryRowContext(ctx, `SELECT theme, chunks, tokens, terms FROM lex_doc WHERE doc_id = ?`, id).Scan(&theme, &chunks, &tokens, &terms)
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	if err != nil {
		return err
	}
	var lo, hi sql.NullInt64
	if err := tx.QueryRowContext(ctx, `SELECT min(lex_num), max(lex_num) FROM chunks WHERE doc_id = ?`, id).Scan(&lo, &hi); err != nil {
		return err
	}
	if lo.Valid && terms != "" {
		sel, err := tx.PrepareContext(ctx, `SELECT first, last, n, maxtf, minlen, data FROM lex_posting WHERE theme = ? AND term = ? AND first <= ? ORDER BY first DESC`)
		if err != nil {
			return err
		}
		defer sel.Close()
		del, err := tx.PrepareContext(ctx, `DELETE FROM lex_posting WHERE theme = ? AND term = ? AND first = ?`)
		if err != nil {
			return err
		}
		defer del.Close()
		ins, err := tx.PrepareContext(ctx, `INSERT INTO lex_posting(theme, term, first, last, n, maxtf, minlen, data) VALUES (?,?,?,?,?,?,?,?)`)
		if err != nil {
			return err
		}
		defer ins.Close()
		for _, term := range strings.Split(terms, " ") {
			// The rows overlapping [lo, hi], read before any is changed.
			var hit []lexindex.Row
			rows, err := sel.QueryContext(ctx, theme, term, hi.Int64)
			if err != nil {
				return err
			}
			for rows.Next() {
				var r lexindex.Row
				if err := rows.Scan(&r.First, &r.Last, &r.N, &r.MaxTF, &r.MinLen, &r.Data); err != nil {
					rows.Close()
					return err
				}
				if r.Last < lo.Int64 {
					break
				}
				hit = append(hit, r)
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return err
			}
			for _, r := range hit {
				rest, err := lexindex.Without(r, lo.Int64, hi.Int64)
				if err != nil {
					return fmt.Errorf("term %q: %w", term, err)
				}
				if _, err := del.ExecContext(ctx, theme, term, r.First); err != nil {
					return err
				}
				for _, m := range rest {
					if _, err := ins.ExecContext(ctx, theme, term, m.First, m.Last, m.N, m.MaxTF, m.MinLen, m.Data); err != nil {
						return err
					}
				}
			}
		}
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM lex_doc WHERE doc_id = ?`, id); err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, `UPDATE lex_theme SET chunks = chunks - ?, tokens = tokens - ? WHERE theme = ?`, chunks, tokens, theme)
	return err
}

// nextLexNum is the number the next chunk written takes: above every
// stored chunk's, so each term's new postings follow its stored ones.
func nextLexNum(ctx context.Context, tx *sql.Tx) (int64, error) {
	var n int64
	err := tx.QueryRowContext(ctx, `SELECT coalesce(max(lex_num), 0) + 1 FROM chunks`).Scan(&n)
	return n, err
}

// buildLexIndex indexes every stored document: migration 10's step for a
// store written before the lexical index.
func buildLexIndex(ctx context.Context, tx *sql.Tx) error {
	var docs []struct{ id, theme string }
	rows, err := tx.QueryContext(ctx, `SELECT id, theme FROM documents ORDER BY theme, id`)
	if err != nil {
		return err
	}
	for rows.Next() {
		var d struct{ id, theme string }
		if err := rows.Scan(&d.id, &d.theme); err != nil {
			rows.Close()
			return err
		}
		docs = append(docs, d)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	setNum, err := tx.PrepareContext(ctx, `UPDATE chunks SET lex_num = ? WHERE id = ?`)
	if err != nil {
		return err
	}
	defer setNum.Close()
	next := int64(1)
	for _, d := range docs {
		var chunks []chunk.Chunk
		rows, err := tx.QueryContext(ctx, `SELECT `+chunkCols+` FROM chunks WHERE doc_id = ? ORDER BY ordinal, id`, d.id)
		if err != nil {
			return err
		}
		for rows.Next() {
			c, err := scanChunk(rows)
			if err != nil {
				rows.Close()
				return err
			}
			chunks = append(chunks, c)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		for i, c := range chunks {
			if _, err := setNum.ExecContext(ctx, next+int64(i), c.ID); err != nil {
				return err
			}
		}
		if err := indexDoc(ctx, tx, d.theme, d.id, next, chunks); err != nil {
			return fmt.Errorf("document %s: %w", d.id, err)
		}
		next += int64(len(chunks))
	}
	return nil
}

// lexicalSearch returns the theme's n best chunks by BM25 over the query's
// tokens (lexindex.TopK over their posting rows), equal scores in chunk id
// order, and the knowledge.IDF of each token some chunk of the theme holds.
// The hits carry the chunk id only, or the whole chunk when load is set
// (a lexical search shows all of them; a hybrid one loads only those that
// can still rank).
func (s *Store) lexicalSearch(ctx context.Context, theme, text string, n int, load bool) ([]knowledge.Hit, map[string]float64, error) {
	v, err := s.begin(ctx, theme)
	if err != nil {
		return nil, nil, fmt.Errorf("lexical: %w", err)
	}
	return s.lexicalSearchIn(ctx, v, theme, text, n, load)
}

// lexicalSearchIn is lexicalSearch with the search's view of the cache.
func (s *Store) lexicalSearchIn(ctx context.Context, v view, theme, text string, n int, load bool) ([]knowledge.Hit, map[string]float64, error) {
	toks := lexical.QueryTokens(text)
	if len(toks) == 0 {
		return nil, nil, nil
	}
	hits, idf, err := s.lexTopK(ctx, v, theme, toks, n, load)
	if err != nil {
		return nil, nil, fmt.Errorf("lexical: %w", err)
	}
	return hits, idf, nil
}

func (s *Store) lexTopK(ctx context.Context, v view, theme string, toks []string, n int, load bool) ([]knowledge.Hit, map[string]float64, error) {
	terms, st, err := s.cachedTermRows(ctx, v, theme, toks)
	if err != nil {
		return nil, nil, err
	}
	if st.Chunks <= 0 {
		return nil, nil, nil
	}
	idf := make(map[string]float64, len(toks))
	for i, t := range toks {
		if df := terms[i].DF(); df > 0 { // a token no chunk holds weighs nothing
			idf[t] = knowledge.IDF(float64(st.Chunks), float64(df))
		}
	}
	top, err := lexindex.TopK(terms, st, n)
	if err != nil {
		return nil, nil, err
	}
	hits, err := s.lexHits(ctx, v, top, load)
	if err != nil {
		return nil, nil, err
	}
	if len(hits) > n {
		hits = hits[:n]
	}
	return hits, idf, nil
}

// termRows reads the posting rows of each of toks in the theme, counts its
// postings in the other themes, and reads the store's statistics, all in
// one statement, so that they are of one snapshot. The statistics are
// zero when no token has a row.
func (s *Store) termRows(ctx context.Context, theme string, toks []string) ([]lexindex.Term, lexindex.Stats, error) {
	var st lexindex.Stats
	out := make([]lexindex.Term, len(toks))
	at := make(map[string]int, len(toks))
	for i, t := range toks {
		at[t] = i
	}
	list, err := jsonStrings(toks)
	if err != nil {
		return nil, st, err
	}
	rows, err := s.queryStmt(ctx, `SELECT term, theme = ?1, first, last, n, maxtf, minlen, CASE WHEN theme = ?1 THEN data END,
	(SELECT coalesce(sum(chunks), 0) FROM lex_theme), (SELECT coalesce(sum(tokens), 0) FROM lex_theme)
FROM lex_posting WHERE term IN (SELECT value FROM json_each(?2)) ORDER BY term, theme, first`, theme, list)
	if err != nil {
		return nil, st, err
	}
	defer rows.Close()
	var term sql.RawBytes
	for rows.Next() {
		var mine bool
		var r lexindex.Row
		if err := rows.Scan(&term, &mine, &r.First, &r.Last, &r.N, &r.MaxTF, &r.MinLen, &r.Data, &st.Chunks, &st.Tokens); err != nil {
			return nil, st, err
		}
		i, ok := at[string(term)]
		switch {
		case !ok:
			return nil, st, fmt.Errorf("posting row of %q, not asked for", term)
		case mine:
			out[i].Rows = append(out[i].Rows, r)
		default:
			out[i].Elsewhere += int64(r.N)
		}
	}
	return out, st, rows.Err()
}

// lexHits turns ranked chunk numbers into hits carrying the chunk id (or,
// with load, the whole chunk) and score, best first, equal scores in chunk
// id order, from the cache of v or read (and cached). A number whose chunk
// is gone (deleted since the rows were read) is left out.
func (s *Store) lexHits(ctx context.Context, v view, top []lexindex.Hit, load bool) ([]knowledge.Hit, error) {
	cols := `id`
	if load {
		cols = chunkCols
	}
	byNum := make(map[int64]chunk.Chunk, len(top))
	var miss []int64
	for _, h := range top {
		id, ok := v.id(h.Num)
		if ok && load {
			var c chunk.Chunk
			if c, ok = v.chunk(id); ok {
				byNum[h.Num] = c
			}
		} else if ok {
			byNum[h.Num] = chunk.Chunk{ID: id}
		}
		if !ok {
			miss = append(miss, h.Num)
		}
	}
	for start := 0; start < len(miss); start += fillBatch {
		part := miss[start:min(start+fillBatch, len(miss))]
		rows, err := s.queryStmt(ctx, `SELECT lex_num, `+cols+genColumn+` FROM chunks WHERE lex_num IN (SELECT value FROM json_each(?))`, jsonInts(part))
		if err != nil {
			return nil, err
		}
		var gen int64
		var nums []int64
		var got []chunk.Chunk
		for rows.Next() {
			var num int64
			var c chunk.Chunk
			var err error
			if load {
				c, err = scanChunk(prefixed{rows, &num, &gen})
			} else {
				err = rows.Scan(&num, &c.ID, &gen)
			}
			if err != nil {
				rows.Close()
				return nil, err
			}
			byNum[num] = c
			nums = append(nums, num)
			got = append(got, c)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, err
		}
		if load {
			v.putChunks(gen, got, nums)
		} else {
			ids := make([]string, len(got))
			for i, c := range got {
				ids[i] = c.ID
			}
			v.putIDs(gen, nums, ids)
		}
	}
	out := make([]knowledge.Hit, 0, len(top))
	for _, h := range top {
		if c, ok := byNum[h.Num]; ok {
			out = append(out, knowledge.Hit{Chunk: c, LexicalScore: h.Score})
		}
	}
	knowledge.SortHitsBy(out, func(h *knowledge.Hit) float64 { return h.LexicalScore })
	return out, nil
}

// prefixed scans one leading column into first, then the rest as sc's
// caller asks, then one trailing column into last.
type prefixed struct {
	rows        *sql.Rows
	first, last any
}

func (p prefixed) Scan(dest ...any) error {
	return p.rows.Scan(append(append([]any{p.first}, dest...), p.last)...)
}

// suffixed scans the columns sc's caller asks for, then one trailing
// column into last.
type suffixed struct {
	rows *sql.Rows
	last any
}

func (p suffixed) Scan(dest ...any) error { return p.rows.Scan(append(dest, p.last)...) }
