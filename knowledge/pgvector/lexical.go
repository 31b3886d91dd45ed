package pgvector

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"github.com/jackc/pgx/v5"

	"github.com/vibelife/vibe/chunk"
	"github.com/vibelife/vibe/knowledge"
	"github.com/vibelife/vibe/knowledge/lexical"
	"github.com/vibelife/vibe/knowledge/lexindex"
)

// The lexical index (knowledge/lexindex, the SQLite store's too) lives in
// three tables:
//
//   - kb_lex_posting: each term's posting rows in a theme, keyed by (term,
//     theme, first chunk number); a chunk's number is kb_chunk.lex_num,
//     unique in its theme;
//   - kb_lex_doc: per document, its theme, the range of its chunks'
//     numbers, its chunk and token counts and its terms, so a delete finds
//     the rows to change without reading the chunks;
//   - kb_theme_stats: per theme, its chunk and token counts and next_num,
//     the number its next chunk takes (numbers only grow, so a term's new
//     postings always follow its stored ones).
//
// BM25's statistics (chunks, average length, each term's document
// frequency) are the whole store's, as the SQLite store's are (FTS5 kept
// them for its one table): both stores give the same chunks the same
// scores.
//
// Writers of one theme take its kb_theme_stats row lock (lockThemes)
// before reading or changing any of its posting rows and hold it to
// commit, so they change a term's rows one after another: a second replica
// writing another document of the theme waits, and then reads the rows and
// the next number the first one committed. Writers of different themes
// touch different rows. Readers see the rows of one snapshot (one
// statement) and never wait.

// lexDoc is a document's kb_lex_doc row.
type lexDoc struct {
	theme          string
	lo, hi         int64 // its chunks' numbers; hi < lo when it has none
	chunks, tokens int64
	terms          []string
}

// chunkTokens returns the index tokens of chunks and their total.
func chunkTokens(chunks []chunk.Chunk) ([][]string, int64) {
	toks := lexical.DocTokens(chunks)
	var total int64
	for _, t := range toks {
		total += int64(len(t))
	}
	return toks, total
}

// themeState is a theme's kb_theme_stats figures that change with every
// write of its posting rows: a write of chunks raises next_num, a delete of
// chunks lowers chunks. While both are what a process last left, no other
// writer has changed the theme's posting rows since (tailCache).
type themeState struct{ next, chunks int64 }

// lockThemes locks the kb_theme_stats rows of themes (made when missing),
// in name order so two writers never wait on each other in a circle, and
// returns each theme's state (its next chunk number and chunk count). The
// locks are held to the end of tx.
func lockThemes(ctx context.Context, tx pgx.Tx, themes ...string) (map[string]themeState, error) {
	sort.Strings(themes)
	rows, err := tx.Query(ctx, `INSERT INTO kb_theme_stats AS s (theme, chunks, tokens)
SELECT DISTINCT t, 0, 0 FROM unnest($1::text[]) AS t ORDER BY t
ON CONFLICT (theme) DO UPDATE SET chunks = s.chunks RETURNING theme, next_num, chunks`, themes)
	if err != nil {
		return nil, fmt.Errorf("lock themes: %w", err)
	}
	out := map[string]themeState{}
	var theme string
	var st themeState
	_, err = pgx.ForEachRow(rows, []any{&theme, &st.next, &st.chunks}, func() error {
		out[theme] = st
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("lock themes: %w", err)
	}
	return out, nil
}

// readLexDoc returns the kb_lex_doc row of the document id, if any.
func readLexDoc(ctx context.Context, tx pgx.Tx, id string) (lexDoc, bool, error) {
	var d lexDoc
	err := tx.QueryRow(ctx, `SELECT theme, lo, hi, chunks, tokens, terms FROM kb_lex_doc WHERE doc_id = $1`, id).
		Scan(&d.theme, &d.lo, &d.hi, &d.chunks, &d.tokens, &d.terms)
	if errors.Is(err, pgx.ErrNoRows) {
		return d, false, nil
	}
	if err != nil {
		return d, false, fmt.Errorf("read lexical index of %s: %w", id, err)
	}
	return d, true, nil
}

// indexDoc adds the postings of the chunks of the document id of theme,
// numbered first, first+1, ... (their index tokens toks, total of them), its
// kb_lex_doc row and its counts. The caller holds the theme's lock.
//
// Each term's last row takes what of the term's new postings fits, the
// rest go into new rows. A row's data is a sequence of runs that each
// decode knowing only the row's first number (lexindex's encoding), so the
// last rows are read without their data and the new run is appended on the
// server (lexindex.Append of a row without data returns just that run).
//
// known, when not nil, gives the last rows (without data; N 0 for a term
// without rows) of the terms it knows, which are then not read (a bulk
// load's tailCache). indexDoc returns every term's last row after the
// write, without data, and how many terms' last rows it read.
func indexDoc(ctx context.Context, tx pgx.Tx, theme, id string, first int64, toks [][]string, total int64, known func(terms []string) map[string]lexindex.Row) ([]termTail, int, error) {
	terms, lists := lexindex.Postings(first, toks)
	var tails map[string]lexindex.Row
	if known != nil {
		tails = known(terms)
	}
	if tails == nil {
		tails = map[string]lexindex.Row{}
	}
	ask := terms
	if len(tails) > 0 {
		ask = make([]string, 0, len(terms)-len(tails))
		for _, t := range terms {
			if _, ok := tails[t]; !ok {
				ask = append(ask, t)
			}
		}
	}
	if len(ask) > 0 {
		rows, err := tx.Query(ctx, `SELECT q.term, p.first, p.last, p.n, p.maxtf, p.minlen FROM unnest($2::text[]) AS q(term)
CROSS JOIN LATERAL (SELECT first, last, n, maxtf, minlen FROM kb_lex_posting WHERE term = q.term AND theme = $1 ORDER BY first DESC LIMIT 1) p`,
			theme, ask)
		if err != nil {
			return nil, 0, fmt.Errorf("read last posting rows: %w", err)
		}
		var term string
		var r lexindex.Row
		_, err = pgx.ForEachRow(rows, []any{&term, &r.First, &r.Last, &r.N, &r.MaxTF, &r.MinLen}, func() error {
			tails[term] = r
			return nil
		})
		if err != nil {
			return nil, 0, fmt.Errorf("read last posting rows: %w", err)
		}
	}
	var up, ins rowBatch
	after := make([]termTail, len(terms))
	for i, term := range terms {
		r := tails[term]
		r.Data = nil
		changed, more := lexindex.Append(r, lists[i])
		if changed.N != r.N {
			up.add(term, changed)
		}
		for _, m := range more {
			ins.add(term, m)
		}
		last := changed
		if len(more) > 0 {
			last = more[len(more)-1]
		}
		last.Data = nil
		after[i] = termTail{term, last}
	}
	var b pgx.Batch
	if len(up.terms) > 0 {
		b.Queue(`UPDATE kb_lex_posting p SET last = u.l, n = u.n, maxtf = u.x, minlen = u.m, data = p.data || u.d
FROM unnest($2::text[], $3::int8[], $4::int8[], $5::int4[], $6::int4[], $7::int4[], $8::bytea[]) AS u(t, f, l, n, x, m, d)
WHERE p.term = u.t AND p.theme = $1 AND p.first = u.f`, up.args(theme)...)
	}
	if len(ins.terms) > 0 {
		queueInsertRows(&b, theme, &ins)
	}
	lo, hi := first, first+int64(len(toks))-1
	b.Queue(`INSERT INTO kb_lex_doc(doc_id, theme, lo, hi, chunks, tokens, terms) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
		id, theme, lo, hi, len(toks), total, terms)
	b.Queue(`INSERT INTO kb_theme_stats AS s (theme, chunks, tokens, next_num) VALUES ($1, $2, $3, $4)
ON CONFLICT (theme) DO UPDATE SET chunks = s.chunks + excluded.chunks, tokens = s.tokens + excluded.tokens, next_num = greatest(s.next_num, excluded.next_num)`,
		theme, len(toks), total, hi+1)
	if err := tx.SendBatch(ctx, &b).Close(); err != nil {
		return nil, 0, fmt.Errorf("write posting rows: %w", err)
	}
	return after, len(ask), nil
}

// termTail is a term's last posting row (without data).
type termTail struct {
	term string
	row  lexindex.Row
}

// maxCachedTails bounds a theme's tailCache (about 60 bytes a term); past
// it the cache is dropped and the last rows are read again.
const maxCachedTails = 2 << 20

// tailCache holds, during a bulk load, the last posting row (without data)
// of the terms of a theme this process wrote or read, so that the next
// document's write reads only the rows of terms it has not seen: each
// document reads and rewrites the last rows of its thousands of terms,
// spread over a table that outgrows the server's buffers and the CPU's
// caches as the load goes on, and the read was half of those visits. It is
// good while the theme's state (read under the theme's lock) is the one
// the cache was left at; any other writer changes that state, and the
// cache is then dropped. complete says that every term of the theme is in
// tails (the cache began with the theme holding no chunks).
type tailCache struct {
	state    themeState
	complete bool
	tails    map[string]tail
}

// tail is a last row's figures, as a tailCache keeps them (a Row less its
// data, in 32 bytes).
type tail struct {
	first, last      int64
	n, maxtf, minlen int32
}

func (t tail) row() lexindex.Row {
	return lexindex.Row{First: t.first, Last: t.last, N: int(t.n), MaxTF: int(t.maxtf), MinLen: int(t.minlen)}
}

// knownTails returns the function indexDoc asks for the theme's known last
// rows: none when the theme holds no chunks (then it has no posting rows),
// else the bulk load's tailCache when it is good for state; nil otherwise.
func (s *Store) knownTails(theme string, state themeState) func([]string) map[string]lexindex.Row {
	if state.chunks == 0 {
		return func(terms []string) map[string]lexindex.Row {
			out := make(map[string]lexindex.Row, len(terms))
			for _, t := range terms {
				out[t] = lexindex.Row{}
			}
			return out
		}
	}
	if s.bulk.Load() == 0 {
		return nil
	}
	return func(terms []string) map[string]lexindex.Row {
		s.lexMu.Lock()
		defer s.lexMu.Unlock()
		c := s.lexTails[theme]
		if c == nil || c.state != state {
			return nil
		}
		out := make(map[string]lexindex.Row, len(terms))
		for _, t := range terms {
			if r, ok := c.tails[t]; ok {
				out[t] = r.row()
			} else if c.complete {
				out[t] = lexindex.Row{}
			}
		}
		return out
	}
}

// noteTails records, after a committed write of theme that found it in
// state before and left it in after, the last rows of the terms it wrote.
func (s *Store) noteTails(theme string, before, after themeState, tails []termTail) {
	s.lexMu.Lock()
	defer s.lexMu.Unlock()
	if s.bulk.Load() == 0 {
		s.lexTails = nil
		return
	}
	c := s.lexTails[theme]
	if c == nil || c.state != before {
		// A new cache: it knows the terms of this write, and all of the
		// theme's when the theme held no chunks before it.
		c = &tailCache{complete: before.chunks == 0, tails: make(map[string]tail, len(tails))}
		if s.lexTails == nil {
			s.lexTails = map[string]*tailCache{}
		}
		s.lexTails[theme] = c
	}
	for _, t := range tails {
		r := t.row
		c.tails[t.term] = tail{r.First, r.Last, int32(r.N), int32(r.MaxTF), int32(r.MinLen)}
	}
	c.state = after
	if len(c.tails) > maxCachedTails {
		delete(s.lexTails, theme)
	}
}

// dropTails forgets the cached last rows of themes (all of them with none).
func (s *Store) dropTails(themes ...string) {
	s.lexMu.Lock()
	defer s.lexMu.Unlock()
	if len(themes) == 0 {
		s.lexTails = nil
	}
	for _, t := range themes {
		delete(s.lexTails, t)
	}
}

// rowBatch gathers posting rows, column by column, for one statement.
type rowBatch struct {
	terms            []string
	first, last      []int64
	n, maxtf, minlen []int32
	data             [][]byte
}

func (rb *rowBatch) add(term string, r lexindex.Row) {
	rb.terms = append(rb.terms, term)
	rb.first = append(rb.first, r.First)
	rb.last = append(rb.last, r.Last)
	rb.n = append(rb.n, int32(r.N))
	rb.maxtf = append(rb.maxtf, int32(r.MaxTF))
	rb.minlen = append(rb.minlen, int32(r.MinLen))
	rb.data = append(rb.data, r.Data)
}

func (rb *rowBatch) args(theme string) []any {
	return []any{theme, rb.terms, rb.first, rb.last, rb.n, rb.maxtf, rb.minlen, rb.data}
}

func queueInsertRows(b *pgx.Batch, theme string, rb *rowBatch) {
	b.Queue(`INSERT INTO kb_lex_posting(term, theme, first, last, n, maxtf, minlen, data)
SELECT t, $1, f, l, n, x, m, d FROM unnest($2::text[], $3::int8[], $4::int8[], $5::int4[], $6::int4[], $7::int4[], $8::bytea[]) AS u(t, f, l, n, x, m, d)`, rb.args(theme)...)
}

// unindexDoc removes the postings of the document d describes, its
// kb_lex_doc row and its counts. The caller holds the theme's lock.
func unindexDoc(ctx context.Context, tx pgx.Tx, id string, d lexDoc) error {
	var b pgx.Batch
	if d.hi >= d.lo && len(d.terms) > 0 {
		// Each term's rows overlapping [lo, hi]: those from the last
		// starting at or before lo on, up to hi. A row inside the range
		// goes whole; one across its edge keeps its other postings, so
		// only those are read with their data.
		rows, err := tx.Query(ctx, `SELECT q.term, p.first, p.last, p.n, p.maxtf, p.minlen, CASE WHEN p.first < $3 OR p.last > $4 THEN p.data END
FROM unnest($2::text[]) AS q(term) CROSS JOIN LATERAL (
	SELECT first, last, n, maxtf, minlen, data FROM kb_lex_posting
	WHERE term = q.term AND theme = $1 AND first <= $4
	AND first >= coalesce((SELECT max(first) FROM kb_lex_posting WHERE term = q.term AND theme = $1 AND first <= $3), $3)) p
WHERE p.last >= $3`, d.theme, d.terms, d.lo, d.hi)
		if err != nil {
			return fmt.Errorf("read posting rows: %w", err)
		}
		var del, ins rowBatch
		var term string
		var r lexindex.Row
		_, err = pgx.ForEachRow(rows, []any{&term, &r.First, &r.Last, &r.N, &r.MaxTF, &r.MinLen, &r.Data}, func() error {
			del.add(term, lexindex.Row{First: r.First})
			if r.Data == nil {
				return nil
			}
			rest, err := lexindex.Without(r, d.lo, d.hi)
			if err != nil {
				return fmt.Errorf("term %q: %w", term, err)
			}
			for _, m := range rest {
				ins.add(term, m)
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("read posting rows: %w", err)
		}
		if len(del.terms) > 0 {
			b.Queue(`DELETE FROM kb_lex_posting p USING unnest($2::text[], $3::int8[]) AS u(t, f)
WHERE p.term = u.t AND p.theme = $1 AND p.first = u.f`, d.theme, del.terms, del.first)
		}
		if len(ins.terms) > 0 {
			queueInsertRows(&b, d.theme, &ins)
		}
	}
	b.Queue(`DELETE FROM kb_lex_doc WHERE doc_id = $1`, id)
	b.Queue(`UPDATE kb_theme_stats SET chunks = chunks - $2, tokens = tokens - $3 WHERE theme = $1`, d.theme, d.chunks, d.tokens)
	if err := tx.SendBatch(ctx, &b).Close(); err != nil {
		return fmt.Errorf("remove posting rows: %w", err)
	}
	return nil
}

// buildLexIndex indexes every stored document, its chunks numbered in
// (theme, document, ordinal) order: migration 12's step for a store written
// before the lexical index. The theme counts are made again from the
// tokens.
func buildLexIndex(ctx context.Context, tx pgx.Tx) error {
	type doc struct{ id, theme string }
	rows, err := tx.Query(ctx, `SELECT id, theme FROM kb_document ORDER BY theme, id`)
	if err != nil {
		return err
	}
	docs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (doc, error) {
		var d doc
		err := r.Scan(&d.id, &d.theme)
		return d, err
	})
	if err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `UPDATE kb_theme_stats SET chunks = 0, tokens = 0`); err != nil {
		return err
	}
	next := map[string]int64{}
	for _, d := range docs {
		rows, err := tx.Query(ctx, `SELECT `+chunkCols+` FROM kb_chunk WHERE doc_id = $1 ORDER BY ordinal, id`, d.id)
		if err != nil {
			return err
		}
		chunks, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (chunk.Chunk, error) { return scanChunk(r) })
		if err != nil {
			return fmt.Errorf("document %s: %w", d.id, err)
		}
		first := max(next[d.theme], 1)
		ids := make([]string, len(chunks))
		nums := make([]int64, len(chunks))
		for i, c := range chunks {
			ids[i], nums[i] = c.ID, first+int64(i)
		}
		if _, err := tx.Exec(ctx, `UPDATE kb_chunk c SET lex_num = u.n FROM unnest($1::text[], $2::int8[]) AS u(id, n) WHERE c.id = u.id`, ids, nums); err != nil {
			return fmt.Errorf("document %s: %w", d.id, err)
		}
		toks, total := chunkTokens(chunks)
		if _, _, err := indexDoc(ctx, tx, d.theme, d.id, first, toks, total, nil); err != nil {
			return fmt.Errorf("document %s: %w", d.id, err)
		}
		next[d.theme] = first + int64(len(chunks))
	}
	_, err = tx.Exec(ctx, `ALTER TABLE kb_chunk ALTER COLUMN lex_num SET NOT NULL;
CREATE UNIQUE INDEX kb_chunk_lex_num ON kb_chunk(theme, lex_num)`)
	return err
}

// lexicalSearch returns the theme's n best chunks by BM25 over the query's
// tokens (lexindex.TopK over their posting rows), equal scores in chunk id
// order, and the knowledge.IDF of each token some chunk holds. The hits
// carry the chunk id only, or the whole chunk when load is set (a lexical
// search shows all of them; a hybrid one loads only those that can still
// rank).
func (s *Store) lexicalSearch(ctx context.Context, theme, text string, n int, load bool) ([]knowledge.Hit, map[string]float64, error) {
	toks := lexical.QueryTokens(text)
	if len(toks) == 0 {
		return nil, nil, nil
	}
	hits, idf, err := s.lexTopK(ctx, theme, toks, n, load)
	if err != nil {
		return nil, nil, fmt.Errorf("lexical: %w", err)
	}
	return hits, idf, nil
}

func (s *Store) lexTopK(ctx context.Context, theme string, toks []string, n int, load bool) ([]knowledge.Hit, map[string]float64, error) {
	st, terms, err := s.termRows(ctx, theme, toks)
	if err != nil || st.Chunks <= 0 {
		return nil, nil, err
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
	hits, err := s.lexHits(ctx, theme, top, load)
	if err != nil {
		return nil, nil, err
	}
	if len(hits) > n {
		hits = hits[:n]
	}
	return hits, idf, nil
}

// termRows reads, in one statement (one snapshot), the store's statistics,
// the posting rows of each of toks in the theme and the number of its
// postings in the other themes (those before the theme and those after it,
// two ranges of the primary key: "theme <> $1" would be a filter, reading
// the theme's rows a second time).
func (s *Store) termRows(ctx context.Context, theme string, toks []string) (lexindex.Stats, []lexindex.Term, error) {
	var st lexindex.Stats
	out := make([]lexindex.Term, len(toks))
	at := make(map[string]int, len(toks))
	for i, t := range toks {
		at[t] = i
	}
	rows, err := s.pool.Query(ctx, `
SELECT 0, '', 0::int8, 0::int8, coalesce(sum(chunks), 0)::int8, coalesce(sum(tokens), 0)::int8, 0, NULL::bytea FROM kb_theme_stats
UNION ALL
SELECT 1, term, first, last, n::int8, maxtf::int8, minlen, data FROM kb_lex_posting WHERE theme = $1 AND term = ANY($2)
UNION ALL
SELECT 2, term, 0, 0, sum(n)::int8, 0, 0, NULL FROM kb_lex_posting WHERE term = ANY($2) AND theme < $1 GROUP BY term
UNION ALL
SELECT 2, term, 0, 0, sum(n)::int8, 0, 0, NULL FROM kb_lex_posting WHERE term = ANY($2) AND theme > $1 GROUP BY term
ORDER BY 1, 2, 3`, theme, toks)
	if err != nil {
		return st, nil, err
	}
	var kind int
	var term string
	var first, last, n, maxtf int64
	var minlen int
	var data []byte
	_, err = pgx.ForEachRow(rows, []any{&kind, &term, &first, &last, &n, &maxtf, &minlen, &data}, func() error {
		if kind == 0 {
			st = lexindex.Stats{Chunks: n, Tokens: maxtf}
			return nil
		}
		i, ok := at[term]
		if !ok {
			return fmt.Errorf("posting row of %q, not asked for", term)
		}
		if kind == 1 {
			out[i].Rows = append(out[i].Rows, lexindex.Row{First: first, Last: last, N: int(n), MaxTF: int(maxtf), MinLen: minlen, Data: data})
		} else {
			out[i].Elsewhere += n
		}
		return nil
	})
	if err != nil {
		return st, nil, err
	}
	return st, out, nil
}

// lexHits turns ranked chunk numbers of the theme into hits carrying the
// chunk id (or, with load, the whole chunk) and score, best first, equal
// scores in chunk id order. A number whose chunk is gone (deleted since
// the rows were read) is left out.
func (s *Store) lexHits(ctx context.Context, theme string, top []lexindex.Hit, load bool) ([]knowledge.Hit, error) {
	if len(top) == 0 {
		return nil, nil
	}
	nums := make([]int64, len(top))
	for i, h := range top {
		nums[i] = h.Num
	}
	cols := `id`
	if load {
		cols = chunkCols
	}
	rows, err := s.pool.Query(ctx, `SELECT lex_num, `+cols+` FROM kb_chunk WHERE theme = $1 AND lex_num = ANY($2)`, theme, nums)
	if err != nil {
		return nil, err
	}
	byNum := make(map[int64]chunk.Chunk, len(top))
	for rows.Next() {
		var num int64
		var c chunk.Chunk
		if load {
			err = rows.Scan(&num, &c.ID, &c.Doc, &c.Source, &c.Title, &c.HeadingPath, &c.Start, &c.End, &c.Ordinal, &c.Text, &c.Tokens)
		} else {
			err = rows.Scan(&num, &c.ID)
		}
		if err != nil {
			rows.Close()
			return nil, err
		}
		byNum[num] = c
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
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

// TermCounts implements knowledge.TermCounter: the theme's chunks, and how
// many of them hold each token (its posting rows in the theme).
func (s *Store) TermCounts(ctx context.Context, theme string, toks []string) (knowledge.TermCounts, error) {
	out := knowledge.TermCounts{DF: make([]int64, len(toks))}
	if len(toks) == 0 {
		return out, nil
	}
	rows, err := s.pool.Query(ctx, `
SELECT '', coalesce((SELECT chunks FROM kb_theme_stats WHERE theme = $1), 0)::int8
UNION ALL
SELECT term, sum(n)::int8 FROM kb_lex_posting WHERE theme = $1 AND term = ANY($2) GROUP BY term`, theme, toks)
	if err != nil {
		return out, fmt.Errorf("term counts %s: %w", theme, err)
	}
	at := make(map[string][]int, len(toks))
	for i, t := range toks {
		at[t] = append(at[t], i)
	}
	var term string
	var n int64
	_, err = pgx.ForEachRow(rows, []any{&term, &n}, func() error {
		if term == "" {
			out.Chunks = n
			return nil
		}
		for _, i := range at[term] {
			out.DF[i] = n
		}
		return nil
	})
	if err != nil {
		return out, fmt.Errorf("term counts %s: %w", theme, err)
	}
	return out, nil
}

var _ knowledge.TermCounter = (*Store)(nil)
