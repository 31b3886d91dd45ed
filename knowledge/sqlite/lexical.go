package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/vibelife/vibe/chunk"
	"github.com/vibelife/vibe/knowledge"
	"github.com/vibelife/vibe/knowledge/lexical"
	"github.com/vibelife/vibe/knowledge/lexindex"
)

// The lexical index (knowledge/lexindex) lives in five tables:
//
//   - lex_posting: posting rows, keyed by (segment, term, theme, first chunk
//     number); a chunk's number is chunks.lex_num, taken above every stored
//     one by each write;
//   - lex_seg: the segments, in write order: each its level, the chunk
//     numbers it covers and how many documents it holds;
//   - lex_doc: per document, its chunk and token counts and its terms, so
//     a delete finds the rows to change without reading the chunks;
//   - lex_theme: per theme, its chunk and token counts;
//   - lex_merge: the merges in progress (below), one a level at most.
//
// Each document written is a segment of its own: its rows, keyed first by
// the new segment's number, fill new pages at the end of the table instead
// of changing a page of each of its terms' rows (a 56-chunk book holds
// ~8,000 terms, and each term's last row sat on a page of its own once the
// table was large, so a write cost more the larger the index). Segments are
// merged as FTS5 and Lucene merge theirs: when segFanIn segments have the
// same level, they become one segment of the next level, their rows
// packed again (lexindex.Merge, which also packs the rows deletes left
// short). Every segment written later has a lower level, so a level's
// segments are consecutive and a segment's chunk numbers all follow those
// of the segments before it: a term's rows in a theme, read segment by
// segment, are in number order and do not overlap, as lexindex.TopK needs.
// A posting is written about log_segFanIn(documents) times over a store's
// life, each time in a sequential pass; a query looks each of its terms up
// in every segment (at most segFanIn - 1 a level). After a bulk load,
// FinishIndex merges every segment into one (startFullMerge), so a query
// then looks each term up once.
//
// BM25's statistics (chunks, average length, each term's document
// frequency) are the whole store's, as FTS5's were for its one table: a
// theme's ranking and the retrieval figures (eval) are those FTS5 gave.
//
// The first four change in the transaction that writes or deletes the
// document, which also does a bounded part of the merges (below); writes
// are serialised by SQLite's write lock.

// segFanIn is how many segments of one level are merged into one of the
// next.
const segFanIn = 8

// Merges are incremental, as FTS5's automerge is: a merge of the segFanIn
// oldest segments of a level (a lex_merge row, one a level at most) moves
// their rows into the first of them (the input segment numbered lowest),
// (term, theme) by (term, theme) in key order, a bounded number of rows a
// transaction, and records in lex_merge the last (term, theme) it moved.
// At every commit each (term, theme)'s rows of the merged segments are
// either all in the first (merged, spanning the inputs' numbers) or each in
// its own input segment (not yet), never both: read segment by segment they
// are in number order, so a query reads an index in the middle of a merge
// as it reads any other, and a crash leaves it resumable. When the last
// (term, theme) has moved, the first segment takes the next level and the
// others' lex_seg rows go.
//
// A document's write merges up to mergeShare times the rows it wrote
// (at least mergeMinRows, at most Store.mergeRows), lowest level first, in
// its own transaction; what is left (a level filled late in an ingest, or
// a merge a crash interrupted) is done by FinishIndex, which knowledge.Ingest
// calls at the end of every run: a transaction of at most Store.mergeRows
// input rows at a time, pausing between them so that another writer of the
// file (vibe serve's memory, another theme's build) gets the lock.
const (
	mergeShare   = 4
	mergeMinRows = 2048
	mergeMaxRows = 16384
)

// indexDoc adds the postings of chunks, numbered first, first+1, ..., of
// the document id of theme, as a new segment numbered seg (nextSeg), and
// returns how many rows it wrote. It merges nothing (ReplaceDocument calls
// mergeWork).
func indexDoc(ctx context.Context, tx *sql.Tx, seg int64, theme, id string, first int64, chunks []chunk.Chunk) (int, error) {
	toks := lexical.DocTokens(chunks)
	var total int64
	for _, t := range toks {
		total += int64(len(t))
	}
	terms, lists := lexindex.Postings(first, toks)
	written := 0
	if len(chunks) > 0 {
		w, err := newRowWriter(ctx, tx, seg)
		if err != nil {
			return 0, err
		}
		defer w.close()
		for i, term := range terms {
			if i%512 == 0 {
				if err := ctx.Err(); err != nil {
					return 0, err
				}
			}
			_, rows := lexindex.Append(lexindex.Row{}, lists[i])
			for _, r := range rows {
				if err := w.add(ctx, term, theme, r); err != nil {
					return 0, err
				}
				written++
			}
		}
		if err := w.flush(ctx); err != nil {
			return 0, err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO lex_seg(seg, level, lo, hi, docs) VALUES (?, 0, ?, ?, 1)`,
			seg, first, first+int64(len(chunks))-1); err != nil {
			return 0, err
		}
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO lex_doc(doc_id, theme, chunks, tokens, terms) VALUES (?,?,?,?,?)`,
		id, theme, len(chunks), total, strings.Join(terms, " ")); err != nil {
		return 0, err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO lex_theme(theme, chunks, tokens) VALUES (?,?,?)
ON CONFLICT(theme) DO UPDATE SET chunks = chunks + excluded.chunks, tokens = tokens + excluded.tokens`, theme, len(chunks), total); err != nil {
		return 0, err
	}
	return written, nil
}

// nextSeg is the number of a new segment: above every segment's, and
// above every merge's inputs (whose last may have been emptied by deletes
// and gone from lex_seg while the merge runs).
func nextSeg(ctx context.Context, tx *sql.Tx) (int64, error) {
	var seg int64
	err := tx.QueryRowContext(ctx, `SELECT max((SELECT coalesce(max(seg), 0) FROM lex_seg), (SELECT coalesce(max(last), 0) FROM lex_merge)) + 1`).Scan(&seg)
	return seg, err
}

// mergeBudget is how many input rows a write of written rows merges.
func (s *Store) mergeBudget(written int) int {
	return min(s.mergeRows, max(mergeMinRows, mergeShare*written))
}

// rowBatch is how many rows one statement writes.
const rowBatch = 64

// rowWriter writes posting rows of one segment, rowBatch a statement, the
// statements prepared once.
type rowWriter struct {
	tx         *sql.Tx
	seg        int64
	one, batch *sql.Stmt
	args       []any
}

const insRow = `INSERT INTO lex_posting(seg, term, theme, first, last, n, maxtf, minlen, data) VALUES (?,?,?,?,?,?,?,?,?)`

func newRowWriter(ctx context.Context, tx *sql.Tx, seg int64) (*rowWriter, error) {
	w := &rowWriter{tx: tx, seg: seg}
	var err error
	if w.one, err = tx.PrepareContext(ctx, insRow); err != nil {
		return nil, err
	}
	if w.batch, err = tx.PrepareContext(ctx, insRow+strings.Repeat(",(?,?,?,?,?,?,?,?,?)", rowBatch-1)); err != nil {
		w.one.Close()
		return nil, err
	}
	return w, nil
}

func (w *rowWriter) add(ctx context.Context, term, theme string, r lexindex.Row) error {
	w.args = append(w.args, w.seg, term, theme, r.First, r.Last, r.N, r.MaxTF, r.MinLen, r.Data)
	if len(w.args) < 9*rowBatch {
		return nil
	}
	_, err := w.batch.ExecContext(ctx, w.args...)
	w.args = w.args[:0]
	return err
}

// flush writes the rows added since the last full batch.
func (w *rowWriter) flush(ctx context.Context) error {
	for i := 0; i < len(w.args); i += 9 {
		if _, err := w.one.ExecContext(ctx, w.args[i:i+9]...); err != nil {
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

// merge is a lex_merge row: the segments numbered seg..last, of level, are
// being merged into seg; the (term, theme)s up to (term, theme) have been
// (none when term is empty: every term is longer).
type merge struct {
	level, seg, last int64
	term, theme      string
}

// mergeWork merges up to budget input rows (or one (term, theme)'s rows,
// when they are more), lowest level first: it goes on with a merge in
// progress, or starts one of the oldest segFanIn segments of a level
// holding that many outside a merge, and goes on while budget is left. It
// returns the input rows it moved; 0 when no merge was left to do.
func mergeWork(ctx context.Context, tx *sql.Tx, budget int) (int, error) {
	moved := 0
	for moved < budget {
		m, ok, err := nextMerge(ctx, tx)
		if err != nil || !ok {
			return moved, err
		}
		n, err := mergeStep(ctx, tx, m, budget-moved, moved == 0)
		if err != nil {
			return moved, fmt.Errorf("merge segments %d-%d of level %d: %w", m.seg, m.last, m.level, err)
		}
		if n == 0 && moved > 0 {
			// Its next (term, theme) would pass the budget.
			break
		}
		moved += n
	}
	return moved, nil
}

// nextMerge returns the merge to work on: the lowest level's, started
// when a level holding segFanIn segments outside a merge is lower than
// every merge in progress.
func nextMerge(ctx context.Context, tx *sql.Tx) (merge, bool, error) {
	var m merge
	var full sql.NullInt64
	if err := tx.QueryRowContext(ctx, `SELECT min(level) FROM (SELECT level FROM lex_seg s WHERE `+outsideMerges+` GROUP BY level HAVING count(*) >= ?)`, segFanIn).Scan(&full); err != nil {
		return m, false, err
	}
	err := tx.QueryRowContext(ctx, `SELECT level, seg, last, term, theme FROM lex_merge ORDER BY level LIMIT 1`).Scan(&m.level, &m.seg, &m.last, &m.term, &m.theme)
	switch {
	case err == nil && (!full.Valid || m.level < full.Int64):
		return m, true, nil
	case err != nil && !errors.Is(err, sql.ErrNoRows):
		return m, false, err
	case !full.Valid:
		return m, false, nil
	}
	// Start one: the oldest segFanIn of the level. A level's segments are
	// consecutive (levels never grow in segment order), so no other
	// segment lies between them.
	m = merge{level: full.Int64}
	if err := tx.QueryRowContext(ctx, `SELECT min(seg), max(seg) FROM (SELECT seg FROM lex_seg s WHERE level = ? AND `+outsideMerges+` ORDER BY seg LIMIT ?)`, m.level, segFanIn).Scan(&m.seg, &m.last); err != nil {
		return m, false, err
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO lex_merge(level, seg, last, term, theme) VALUES (?, ?, ?, '', '')`, m.level, m.seg, m.last)
	return m, err == nil, err
}

// outsideMerges selects the segments (lex_seg s) a merge may start on: of
// a level with no merge in progress (one a level at most), and in the
// range of none (a full merge, startFullMerge, takes in segments of every
// level below its own).
const outsideMerges = `NOT EXISTS (SELECT 1 FROM lex_merge m WHERE m.level = s.level OR s.seg BETWEEN m.seg AND m.last)`

// segCursor reads one segment's rows in key order.
type segCursor struct {
	rows        *sql.Rows
	term, theme string
	row         lexindex.Row
	ok          bool
}

func (c *segCursor) next() error {
	c.ok = c.rows.Next()
	if !c.ok {
		return c.rows.Err()
	}
	c.row = lexindex.Row{}
	return c.rows.Scan(&c.term, &c.theme, &c.row.First, &c.row.Last, &c.row.N, &c.row.MaxTF, &c.row.MinLen, &c.row.Data)
}

// outRow is a merged row and its (term, theme).
type outRow struct {
	term, theme string
	row         lexindex.Row
}

// afterKey selects the rows of a segment after (term, theme) ?2, ?3.
const afterKey = `seg = ?1 AND term >= ?2 AND (term > ?2 OR theme > ?3)`

// mergeStep moves the next (term, theme)s of m into its first segment, as
// many as fit in budget input rows (at least one when first is set), and
// finishes m when none is left. It returns the input rows moved.
func mergeStep(ctx context.Context, tx *sql.Tx, m merge, budget int, first bool) (int, error) {
	var segs []int64
	rows, err := tx.QueryContext(ctx, `SELECT seg FROM lex_seg WHERE seg BETWEEN ? AND ? ORDER BY seg`, m.seg, m.last)
	if err != nil {
		return 0, err
	}
	for rows.Next() {
		var seg int64
		if err := rows.Scan(&seg); err != nil {
			rows.Close()
			return 0, err
		}
		segs = append(segs, seg)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, err
	}
	curs := make([]*segCursor, 0, len(segs))
	closeAll := func() {
		for _, c := range curs {
			c.rows.Close()
		}
		curs = nil
	}
	defer closeAll()
	for _, seg := range segs {
		// A statement of its own each (one prepared statement steps one
		// query at a time).
		rows, err := tx.QueryContext(ctx, `SELECT term, theme, first, last, n, maxtf, minlen, data FROM lex_posting WHERE `+afterKey+` ORDER BY term, theme, first`, seg, m.term, m.theme)
		if err != nil {
			return 0, err
		}
		c := &segCursor{rows: rows}
		curs = append(curs, c)
		if err := c.next(); err != nil {
			return 0, err
		}
	}
	var out []outRow
	var group []lexindex.Row
	moved, end, done := 0, m, false
	for n := 0; ; n++ {
		if n%512 == 0 {
			if err := ctx.Err(); err != nil {
				return 0, err
			}
		}
		// The smallest (term, theme) at the head of a cursor, then its
		// rows from every cursor, segment by segment (number order).
		var term, theme string
		found := false
		for _, c := range curs {
			if c.ok && (!found || c.term < term || (c.term == term && c.theme < theme)) {
				term, theme, found = c.term, c.theme, true
			}
		}
		if !found {
			done = true
			break
		}
		group = group[:0]
		for _, c := range curs {
			for c.ok && c.term == term && c.theme == theme {
				group = append(group, c.row)
				if err := c.next(); err != nil {
					return 0, err
				}
			}
		}
		if moved+len(group) > budget && (moved > 0 || !first) {
			break
		}
		packed, err := lexindex.Merge(group)
		if err != nil {
			return 0, fmt.Errorf("term %q: %w", term, err)
		}
		for _, r := range packed {
			out = append(out, outRow{term, theme, r})
		}
		moved += len(group)
		end.term, end.theme = term, theme
	}
	closeAll()
	if moved > 0 {
		// The moved (term, theme)s' rows go from every input, then their
		// merged rows are written into the first.
		for _, seg := range segs {
			if _, err := tx.ExecContext(ctx, `DELETE FROM lex_posting WHERE `+afterKey+` AND term <= ?4 AND (term < ?4 OR theme <= ?5)`,
				seg, m.term, m.theme, end.term, end.theme); err != nil {
				return 0, err
			}
		}
		w, err := newRowWriter(ctx, tx, m.seg)
		if err != nil {
			return 0, err
		}
		defer w.close()
		for _, o := range out {
			if err := w.add(ctx, o.term, o.theme, o.row); err != nil {
				return 0, err
			}
		}
		if err := w.flush(ctx); err != nil {
			return 0, err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE lex_merge SET term = ?, theme = ? WHERE level = ?`, end.term, end.theme, m.level); err != nil {
			return 0, err
		}
	}
	if done {
		return moved, finishMerge(ctx, tx, m)
	}
	return moved, nil
}

// finishMerge makes the first segment of m, which holds every row of its
// inputs now, one of the next level spanning their numbers and documents,
// and removes the others (or the first too, when deletes emptied them all).
func finishMerge(ctx context.Context, tx *sql.Tx, m merge) error {
	var docs, hi int64
	if err := tx.QueryRowContext(ctx, `SELECT coalesce(sum(docs), 0), coalesce(max(hi), 0) FROM lex_seg WHERE seg BETWEEN ? AND ?`, m.seg, m.last).Scan(&docs, &hi); err != nil {
		return err
	}
	if docs > 0 {
		if _, err := tx.ExecContext(ctx, `UPDATE lex_seg SET level = ?, hi = ?, docs = ? WHERE seg = ?`, m.level+1, hi, docs, m.seg); err != nil {
			return err
		}
	} else if _, err := tx.ExecContext(ctx, `DELETE FROM lex_seg WHERE seg = ?`, m.seg); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM lex_seg WHERE seg > ? AND seg <= ?`, m.seg, m.last); err != nil {
		return err
	}
	_, err := tx.ExecContext(ctx, `DELETE FROM lex_merge WHERE level = ?`, m.level)
	return err
}

// mergeAll does every merge there is to do, in tx (a migration's).
func mergeAll(ctx context.Context, tx *sql.Tx) error {
	for {
		n, err := mergeWork(ctx, tx, 1<<30)
		if err != nil || n == 0 {
			return err
		}
	}
}

// FinishIndex does the merges of the lexical index's segments that the
// writes left (knowledge.IndexMaintainer; knowledge.Ingest calls it at the
// end of every run), each transaction moving at most s.mergeRows input
// rows, then pausing half as long as it held the write lock, so that
// another writer of the file waiting in SQLite's busy handler, which
// sleeps up to 100 ms between tries, finds it free.
//
// When the tiered merges are done and the segments after the first (the
// oldest and largest) hold at least fullMergeShare of the documents the
// first holds, as after a bulk load, it then merges every segment into one
// (startFullMerge): a query looks each of its terms up once instead of
// once a segment (9 segments at 100 documents, 16 at 1,500). A full merge
// rewrites the whole index, so it waits until the documents written since
// the last one are a fixed share of it: each posting is rewritten a
// bounded number of times over the store's life, as with tiered merges.
func (s *Store) FinishIndex(ctx context.Context) error {
	full := false
	for {
		start := time.Now()
		n, err := s.mergeTx(ctx, s.mergeRows)
		if err != nil {
			return fmt.Errorf("merge the lexical index: %w", err)
		}
		if n == 0 {
			if full {
				return nil
			}
			full = true
			started, err := s.startFullMerge(ctx)
			if err != nil {
				return fmt.Errorf("merge the lexical index: %w", err)
			}
			if !started {
				return nil
			}
			continue
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Since(start) / 2):
		}
	}
}

// fullMergeShare: FinishIndex merges every segment into one when the
// segments after the first hold at least this share of the documents the
// first holds.
const fullMergeShare = 0.5

// startFullMerge records a merge of every segment into the first, when no
// merge is in progress, there are several segments and the later ones hold
// at least fullMergeShare of the first's documents; it reports whether it
// did. The merge is a lex_merge row like a tiered merge's, at the first
// segment's level (the highest: levels do not grow in segment order), over
// every segment's number, so mergeWork moves its rows a bounded number a
// transaction, a crash leaves it resumable, deletes in the middle of it
// find the rows it moved, and the segments written meanwhile (numbered
// after it) are merged as usual, never those inside it (outsideMerges).
// The merged segment takes the next level, above every other.
func (s *Store) startFullMerge(ctx context.Context) (started bool, err error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return false, err
	}
	defer func() {
		if err == nil && started {
			err = tx.Commit()
		} else {
			tx.Rollback()
		}
	}()
	var merging int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM lex_merge`).Scan(&merging); err != nil || merging > 0 {
		return false, err
	}
	rows, err := tx.QueryContext(ctx, `SELECT seg, level, docs FROM lex_seg ORDER BY seg`)
	if err != nil {
		return false, err
	}
	var first merge
	var firstDocs, rest int64
	n := 0
	for rows.Next() {
		var seg, level, docs int64
		if err := rows.Scan(&seg, &level, &docs); err != nil {
			rows.Close()
			return false, err
		}
		if n == 0 {
			first, firstDocs = merge{level: level, seg: seg}, docs
		} else {
			rest += docs
		}
		first.last = seg
		n++
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return false, err
	}
	if n < 2 || float64(rest) < fullMergeShare*float64(firstDocs) {
		return false, nil
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO lex_merge(level, seg, last, term, theme) VALUES (?, ?, ?, '', '')`, first.level, first.seg, first.last); err != nil {
		return false, err
	}
	return true, nil
}

// mergeTx runs mergeWork(budget) in a transaction of its own.
func (s *Store) mergeTx(ctx context.Context, budget int) (n int, err error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer func() {
		if err != nil {
			tx.Rollback()
		}
	}()
	if n, err = mergeWork(ctx, tx, budget); err != nil {
		return 0, err
	}
	if s.onMerge != nil {
		s.onMerge(n)
	}
	return n, tx.Commit()
}

// unindexDoc removes the postings of the document id (its chunks still
// stored, numbered lo..hi) from the segment holding them, and its counts.
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
	if lo.Valid {
		// Segments cover consecutive numbers: the document's are in the
		// last segment starting at or before them.
		var seg int64
		err := tx.QueryRowContext(ctx, `SELECT seg FROM lex_seg WHERE lo <= ? ORDER BY lo DESC LIMIT 1`, lo.Int64).Scan(&seg)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("no lexical index segment holds chunk %d", lo.Int64)
		}
		if err != nil {
			return err
		}
		// When a merge takes the segment in, the rows of the (term,
		// theme)s it has moved are in its first segment.
		segs := []int64{seg}
		var into int64
		err = tx.QueryRowContext(ctx, `SELECT seg FROM lex_merge WHERE seg < ?1 AND last >= ?1`, seg).Scan(&into)
		switch {
		case err == nil:
			segs = append(segs, into)
		case !errors.Is(err, sql.ErrNoRows):
			return err
		}
		if terms != "" {
			for _, g := range segs {
				if err := unindexRows(ctx, tx, g, theme, strings.Split(terms, " "), lo.Int64, hi.Int64); err != nil {
					return err
				}
			}
		}
		if _, err := tx.ExecContext(ctx, `UPDATE lex_seg SET docs = docs - 1 WHERE seg = ?`, seg); err != nil {
			return err
		}
		// An emptied segment holds no rows left: it goes too, unless a
		// merge is moving rows into it (the merge removes it at its end).
		if _, err := tx.ExecContext(ctx, `DELETE FROM lex_seg WHERE seg = ?1 AND docs <= 0 AND NOT EXISTS (SELECT 1 FROM lex_merge WHERE seg = ?1)`, seg); err != nil {
			return err
		}
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM lex_doc WHERE doc_id = ?`, id); err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, `UPDATE lex_theme SET chunks = chunks - ?, tokens = tokens - ? WHERE theme = ?`, chunks, tokens, theme)
	return err
}

// unindexRows takes the postings of chunks lo..hi out of the rows of terms
// in the theme in segment seg.
func unindexRows(ctx context.Context, tx *sql.Tx, seg int64, theme string, terms []string, lo, hi int64) error {
	sel, err := tx.PrepareContext(ctx, `SELECT first, last, n, maxtf, minlen, data FROM lex_posting WHERE seg = ? AND term = ? AND theme = ? AND first <= ? ORDER BY first DESC`)
	if err != nil {
		return err
	}
	defer sel.Close()
	del, err := tx.PrepareContext(ctx, `DELETE FROM lex_posting WHERE seg = ? AND term = ? AND theme = ? AND first = ?`)
	if err != nil {
		return err
	}
	defer del.Close()
	ins, err := tx.PrepareContext(ctx, insRow)
	if err != nil {
		return err
	}
	defer ins.Close()
	for _, term := range terms {
		// The rows overlapping [lo, hi], read before any is changed.
		var hit []lexindex.Row
		rows, err := sel.QueryContext(ctx, seg, term, theme, hi)
		if err != nil {
			return err
		}
		for rows.Next() {
			var r lexindex.Row
			if err := rows.Scan(&r.First, &r.Last, &r.N, &r.MaxTF, &r.MinLen, &r.Data); err != nil {
				rows.Close()
				return err
			}
			if r.Last < lo {
				break
			}
			hit = append(hit, r)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		for _, r := range hit {
			rest, err := lexindex.Without(r, lo, hi)
			if err != nil {
				return fmt.Errorf("term %q: %w", term, err)
			}
			if _, err := del.ExecContext(ctx, seg, term, theme, r.First); err != nil {
				return err
			}
			for _, m := range rest {
				if _, err := ins.ExecContext(ctx, seg, term, theme, m.First, m.Last, m.N, m.MaxTF, m.MinLen, m.Data); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// nextLexNum is the number the next chunk written takes: above every
// stored chunk's, so each term's new postings follow its stored ones.
func nextLexNum(ctx context.Context, tx *sql.Tx) (int64, error) {
	var n int64
	err := tx.QueryRowContext(ctx, `SELECT coalesce(max(lex_num), 0) + 1 FROM chunks`).Scan(&n)
	return n, err
}

// numberChunks gives every stored chunk its lexical index number, document
// by document (theme, then id order): migration 11's step for a store
// written before the lexical index. Migration 12's (indexStored) indexes
// them.
func numberChunks(ctx context.Context, tx *sql.Tx) error {
	_, err := tx.ExecContext(ctx, `UPDATE chunks SET lex_num = n.num FROM
(SELECT c.id, row_number() OVER (ORDER BY d.theme, d.id, c.ordinal, c.id) AS num FROM chunks c JOIN documents d ON d.id = c.doc_id) AS n
WHERE chunks.id = n.id`)
	return err
}

// indexStored indexes the stored documents the lexical index does not
// hold (those of a store written before it: numbered by migration 11), in
// the order of their chunk numbers, a segment each (migration 13 merges
// them).
func indexStored(ctx context.Context, tx *sql.Tx) error {
	type doc struct {
		id, theme string
		first     int64
	}
	var docs []doc
	rows, err := tx.QueryContext(ctx, `SELECT d.id, d.theme, coalesce((SELECT min(lex_num) FROM chunks WHERE doc_id = d.id), 0) AS first
FROM documents d WHERE NOT EXISTS (SELECT 1 FROM lex_doc WHERE doc_id = d.id) ORDER BY first, d.id`)
	if err != nil {
		return err
	}
	for rows.Next() {
		var d doc
		if err := rows.Scan(&d.id, &d.theme, &d.first); err != nil {
			rows.Close()
			return err
		}
		docs = append(docs, d)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, d := range docs {
		var chunks []chunk.Chunk
		rows, err := tx.QueryContext(ctx, `SELECT `+chunkCols+` FROM chunks WHERE doc_id = ? ORDER BY lex_num`, d.id)
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
		// No merge runs before migration 13 (which has lex_merge).
		var seg int64
		if err := tx.QueryRowContext(ctx, `SELECT coalesce(max(seg), 0) + 1 FROM lex_seg`).Scan(&seg); err != nil {
			return err
		}
		if _, err := indexDoc(ctx, tx, seg, d.theme, d.id, d.first, chunks); err != nil {
			return fmt.Errorf("document %s: %w", d.id, err)
		}
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
	terms, st, atGen, err := s.cachedTermRows(ctx, v, theme, toks)
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
	var known map[int64]string
	if !load && atGen && len(top) > 0 {
		// A hybrid search has read the theme's vectors (the vector side
		// runs first), with their chunks' numbers: the ids need no
		// statement when they are of the rows' generation.
		nums := make([]int64, len(top))
		for i, h := range top {
			nums[i] = h.Num
		}
		known, _ = s.idsByNum(theme, v.themeGen, nums)
	}
	hits, err := s.lexHits(ctx, v, top, load, known)
	if err != nil {
		return nil, nil, err
	}
	if len(hits) > n {
		hits = hits[:n]
	}
	return hits, idf, nil
}

// termRows reads the posting rows of each of toks in the theme (from every
// segment), counts its postings in the other themes, and reads the store's
// statistics and generation, all in one statement, so that they are of one
// snapshot. The statistics are zero, and gen -1, when no token has a row.
func (s *Store) termRows(ctx context.Context, theme string, toks []string) (_ []lexindex.Term, _ lexindex.Stats, gen int64, _ error) {
	gen = -1
	var st lexindex.Stats
	out := make([]lexindex.Term, len(toks))
	at := make(map[string]int, len(toks))
	for i, t := range toks {
		at[t] = i
	}
	list, err := jsonStrings(toks)
	if err != nil {
		return nil, st, gen, err
	}
	// Each segment in turn (number order), each token's rows in it: a
	// term's rows of the theme come in number order (the order is the
	// primary key's within a segment: SQLite sorts nothing).
	rows, err := s.queryStmt(ctx, `SELECT p.term, p.theme = ?1, p.first, p.last, p.n, p.maxtf, p.minlen, CASE WHEN p.theme = ?1 THEN p.data END,
	(SELECT coalesce(sum(chunks), 0) FROM lex_theme), (SELECT coalesce(sum(tokens), 0) FROM lex_theme)`+genColumn+`
FROM lex_seg s CROSS JOIN lex_posting p WHERE p.seg = s.seg AND p.term IN (SELECT value FROM json_each(?2)) ORDER BY s.seg, p.term, p.theme, p.first`, theme, list)
	if err != nil {
		return nil, st, gen, err
	}
	defer rows.Close()
	var term sql.RawBytes
	for rows.Next() {
		var mine bool
		var r lexindex.Row
		if err := rows.Scan(&term, &mine, &r.First, &r.Last, &r.N, &r.MaxTF, &r.MinLen, &r.Data, &st.Chunks, &st.Tokens, &gen); err != nil {
			return nil, st, gen, err
		}
		i, ok := at[string(term)]
		switch {
		case !ok:
			return nil, st, gen, fmt.Errorf("posting row of %q, not asked for", term)
		case mine:
			out[i].Rows = append(out[i].Rows, r)
		default:
			out[i].Elsewhere += int64(r.N)
		}
	}
	return out, st, gen, rows.Err()
}

// lexHits turns ranked chunk numbers into hits carrying the chunk id (or,
// with load, the whole chunk) and score, best first, equal scores in chunk
// id order, from known (the ids of every number of top, when not nil), the
// cache of v or read (and cached). A number whose chunk is gone (deleted
// since the rows were read) is left out.
func (s *Store) lexHits(ctx context.Context, v view, top []lexindex.Hit, load bool, known map[int64]string) ([]knowledge.Hit, error) {
	cols := `id`
	if load {
		cols = chunkCols
	}
	// The hits in top's order, each chunk set in place; the numbers not
	// found in known or the cache are read below (into byNum).
	out := make([]knowledge.Hit, len(top))
	found := make([]bool, len(top))
	var miss []int64
	for i, h := range top {
		out[i].LexicalScore, out[i].LexicalTerms = h.Score, h.Terms
		if id, ok := known[h.Num]; ok && !load {
			out[i].Chunk.ID, found[i] = id, true
			continue
		}
		id, ok := v.id(h.Num)
		if ok && load {
			var c chunk.Chunk
			if c, ok = v.chunk(id); ok {
				out[i].Chunk, found[i] = c, true
			}
		} else if ok {
			out[i].Chunk.ID, found[i] = id, true
		}
		if !ok {
			miss = append(miss, h.Num)
		}
	}
	var byNum map[int64]chunk.Chunk
	if len(miss) > 0 {
		byNum = make(map[int64]chunk.Chunk, len(miss))
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
	kept := out[:0]
	for i, h := range top {
		if !found[i] {
			c, ok := byNum[h.Num]
			if !ok {
				continue
			}
			out[i].Chunk = c
		}
		kept = append(kept, out[i])
	}
	out = kept
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

// TermCounts implements knowledge.TermCounter: the theme's chunks, and how
// many of them hold each token (its posting rows in the theme, through the
// cache a search of the same tokens has just filled).
func (s *Store) TermCounts(ctx context.Context, theme string, toks []string) (knowledge.TermCounts, error) {
	out := knowledge.TermCounts{DF: make([]int64, len(toks))}
	v, err := s.begin(ctx, theme)
	if err != nil {
		return out, fmt.Errorf("term counts %s: %w", theme, err)
	}
	if err := s.scanStmt(ctx, `SELECT coalesce((SELECT chunks FROM lex_theme WHERE theme = ?), 0)`, []any{theme}, &out.Chunks); err != nil {
		return out, fmt.Errorf("term counts %s: %w", theme, err)
	}
	if out.Chunks == 0 || len(toks) == 0 {
		return out, nil
	}
	terms, _, _, err := s.cachedTermRows(ctx, v, theme, toks)
	if err != nil {
		return out, fmt.Errorf("term counts %s: %w", theme, err)
	}
	for i, t := range terms {
		for _, r := range t.Rows {
			out.DF[i] += int64(r.N)
		}
	}
	return out, nil
}

var _ knowledge.TermCounter = (*Store)(nil)
