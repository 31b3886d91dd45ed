package knowledge

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/vibelife/vibe/chunk"
	"github.com/vibelife/vibe/convert"
	"github.com/vibelife/vibe/knowledge/lexical"
)

// Splitter cuts a converted file into chunks (chunk.Splitter satisfies it).
type Splitter interface {
	SplitFile(ctx context.Context, relPath string, data []byte) ([]chunk.Chunk, error)
}

// Embedder embeds texts; vectors[i] embeds texts[i]. Model and Dimensions
// name the embedding space recorded with the vectors (embedding.Embedder
// satisfies it).
type Embedder interface {
	Embed(ctx context.Context, texts []string) ([][]float32, error)
	Model() string
	Dimensions() int
}

// InfoOf returns the embedding space of e.
func InfoOf(e Embedder) EmbeddingInfo {
	return EmbeddingInfo{Model: e.Model(), Dimensions: e.Dimensions()}
}

// ErrNoConverted is returned when the theme has no converted directory.
var ErrNoConverted = errors.New("knowledge: no converted documents")

// IngestOptions configure Ingest.
type IngestOptions struct {
	Theme string
	// Root is the workspace root; document ids are paths relative to it.
	Root string
	// ConvertedDir is knowledge/<theme>/converted.
	ConvertedDir string
	Splitter     Splitter
	Embedder     Embedder
	// BatchSize is the number of chunks per Embed call (default 64).
	BatchSize int
	// IncludeGarbled ingests documents whose front matter says
	// quality.garbled. By default they are skipped with a reason (and any
	// stored version removed), because mojibake only pollutes retrieval.
	IncludeGarbled bool
	// Rebuild drops the theme's data first, so every document is embedded
	// again (e.g. after switching embedders).
	Rebuild bool
	// Progress, when set, is called after each document.
	Progress func(done, total int, doc string)
	// IndexProgress, when set, is told when the store starts and ends
	// building an index it deferred during the run's writes (a BulkLoader's
	// rebuild at the end, minutes at 100k chunks, after the last document's
	// Progress).
	IndexProgress func(IndexBuild)
	// Coverage returns what the chunks of the document converted from
	// source (its front matter's source) must hold; nil means
	// DefaultMinCoverage for every document.
	Coverage func(source string) CoverageRule
	// Ledger is the path of the theme's accounting ledger
	// (knowledge/<theme>/accounting.json); empty keeps none.
	Ledger string
	// Now stamps documents (default time.Now).
	Now func() time.Time
}

// IngestReport counts what Ingest did.
type IngestReport struct {
	Added, Updated, Unchanged, Removed int
	// Skipped lists documents left out, with the reason.
	Skipped []Skipped `json:"skipped,omitempty"`
	// Failed lists documents whose ingest failed; others went on.
	Failed []Failed `json:"failed,omitempty"`
	// Chunks counts the chunks written; EmbedCalls and EmbeddedTexts the
	// embedding work done.
	Chunks        int
	EmbedCalls    int
	EmbeddedTexts int
	Embedding     EmbeddingInfo
	// Accounts is the character accounting of every document of the
	// theme after the run (refused ones included), sorted by document.
	Accounts []DocAccount `json:"accounts,omitempty"`
}

// Skipped is a document left out on purpose.
type Skipped struct {
	Doc    string `json:"doc"`
	Reason string `json:"reason"`
}

// Failed is a document whose ingest failed.
type Failed struct {
	Doc string `json:"doc"`
	Err error  `json:"-"`
}

// BulkLoader is implemented by stores that write many documents faster when
// told in advance (the PostgreSQL store defers its HNSW index maintenance
// to one build at the end). Ingest uses it when a run has changed documents
// to write.
type BulkLoader interface {
	// BeginBulk announces that about opts.Chunks chunks are about to be
	// written, one ReplaceDocument per document as usual. The store may
	// defer index maintenance until finish is called; every write stays
	// atomic and searches keep working meanwhile, only slower. finish must
	// be called, after a failure too; when it cannot run (the process dies
	// first) the store restores its indexes on its next open or bulk load.
	BeginBulk(ctx context.Context, opts BulkOptions) (finish func(context.Context) error, err error)
}

// BulkOptions describe a bulk load to a BulkLoader.
type BulkOptions struct {
	// Chunks is about how many chunks the load writes.
	Chunks int
	// IndexProgress, when set, is called when finish starts building an
	// index and when that build ends.
	IndexProgress func(IndexBuild)
}

// IndexBuild tells of the build of an index a store deferred.
type IndexBuild struct {
	// Index says which index: "vector" for the vector index.
	Index string
	// Chunks is the number of chunks (rows) the index is built over.
	Chunks int64
	// Done is false when the build starts; true when it has ended, Took
	// and Err then say how long it took and how it ended.
	Done bool
	Took time.Duration
	Err  error
}

// VectorIndexer is implemented by stores whose vector index is trained
// apart from the writes: [Ingest] calls IndexVectors at the end of every
// run, changes or not, and the store trains or retrains the theme's index
// when it needs it (and does nothing otherwise). Searches stay correct
// whether it ran or not.
type VectorIndexer interface {
	IndexVectors(ctx context.Context, theme string) error
}

// IndexFinisher is implemented by stores that leave part of their index
// maintenance for later (the SQLite store merges its lexical index's
// segments a bounded part a write): [Ingest] calls FinishIndex at the end
// of every run, changes or not, and the store does what is left, in
// transactions as short as its writes'. Searches are correct whether it ran
// or not.
type IndexFinisher interface {
	FinishIndex(ctx context.Context) error
}

// bytesPerChunk estimates converted Markdown bytes per chunk at the default
// 512-token budget (about 340 CJK characters, or 2 KB of English), to tell
// a BulkLoader how much is coming before anything is chunked. It errs on
// the side of more chunks.
const bytesPerChunk = 1000

// pending is a converted file whose content differs from the stored copy.
type pending struct {
	path, id string
	size     int64
}

// Ingest brings the store's view of a theme in line with its converted
// directory: new and changed files (by sha256) are chunked, embedded and
// written, one transaction per document; unchanged ones cost nothing;
// documents whose file is gone are removed. A failing document is reported
// in IngestReport.Failed and the returned error (naming it) while the others
// go on; since nothing half-written is stored, the next run repairs it.
// When the store is a BulkLoader, the writes of a run are announced to it.
func Ingest(ctx context.Context, store Store, opts IngestOptions) (rep IngestReport, err error) {
	if opts.Theme == "" || opts.Splitter == nil || opts.Embedder == nil || store == nil {
		return rep, fmt.Errorf("ingest: theme, store, splitter and embedder are required")
	}
	if opts.BatchSize <= 0 {
		opts.BatchSize = 64
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	rep.Embedding = InfoOf(opts.Embedder)
	files, err := convertedFiles(opts.ConvertedDir)
	if err != nil {
		return rep, err
	}
	if opts.Rebuild {
		docs, err := store.Documents(ctx, opts.Theme)
		if err != nil {
			return rep, fmt.Errorf("ingest %s: %w", opts.Theme, err)
		}
		for _, d := range docs {
			if err := store.DeleteDocument(ctx, opts.Theme, d.ID); err != nil {
				return rep, fmt.Errorf("ingest %s: rebuild: %w", d.ID, err)
			}
		}
	}
	stored, err := store.Documents(ctx, opts.Theme)
	if err != nil {
		return rep, fmt.Errorf("ingest %s: %w", opts.Theme, err)
	}
	known := map[string]Document{}
	for _, d := range stored {
		known[d.ID] = d
	}
	present := map[string]bool{}
	var errs []error
	fail := func(id string, err error) {
		rep.Failed = append(rep.Failed, Failed{Doc: id, Err: err})
		errs = append(errs, fmt.Errorf("ingest %s: %w", id, err))
	}
	ledger, err := ReadLedger(opts.Ledger)
	if err != nil && opts.Ledger != "" {
		return rep, fmt.Errorf("ingest %s: %w", opts.Theme, err)
	}
	if opts.Ledger == "" {
		ledger = Ledger{}
	}
	accounts := map[string]DocAccount{}
	defer func() {
		rep.Accounts = rep.Accounts[:0]
		for _, id := range sortedKeys(accounts) {
			if present[id] {
				rep.Accounts = append(rep.Accounts, accounts[id])
			}
		}
		if opts.Ledger != "" && ctx.Err() == nil {
			ledger.Theme, ledger.UpdatedAt, ledger.Documents = opts.Theme, opts.Now().UTC(), rep.Accounts
			if werr := ledger.Write(opts.Ledger); werr != nil {
				err = errors.Join(err, fmt.Errorf("ingest %s: write the accounting: %w", opts.Theme, werr))
			}
		}
	}()
	done := 0
	progress := func(id string) {
		done++
		if opts.Progress != nil {
			opts.Progress(done, len(files), id)
		}
	}
	// Plan: hash every file; only changed ones are chunked and embedded.
	var todo []pending
	var todoBytes int64
	for _, path := range files {
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		id := docID(opts.Root, path)
		present[id] = true
		data, err := os.ReadFile(path)
		if err != nil {
			fail(id, err)
			progress(id)
			continue
		}
		if old, had := known[id]; had && old.ContentHash == contentHash(data) {
			// Unchanged: its accounting is judged again (curate.yaml's
			// allowances may have changed), from the ledger or, when the
			// ledger does not have it, from its chunks.
			acct, ok := ledger.Find(id)
			if !ok || acct.ContentHash != old.ContentHash {
				if acct, err = accountOnly(ctx, opts, data, id, old.ContentHash); err != nil {
					fail(id, err)
					progress(id)
					continue
				}
			}
			rule := opts.rule(acct.Source)
			judge(&acct, rule)
			accounts[id] = acct
			if acct.Status == AccountRefused {
				if derr := store.DeleteDocument(ctx, opts.Theme, id); derr != nil {
					fail(id, fmt.Errorf("%w: %w", ErrStoreWrite, derr))
				} else {
					fail(id, acct.Refusal(rule))
				}
				progress(id)
				continue
			}
			rep.Unchanged++
			progress(id)
			continue
		}
		todo = append(todo, pending{path: path, id: id, size: int64(len(data))})
		todoBytes += int64(len(data))
	}
	if bl, ok := store.(BulkLoader); ok && len(todo) > 0 {
		finish, berr := bl.BeginBulk(ctx, BulkOptions{Chunks: int(todoBytes/bytesPerChunk) + len(todo), IndexProgress: opts.IndexProgress})
		if berr != nil {
			return rep, fmt.Errorf("ingest %s: %w", opts.Theme, berr)
		}
		defer func() {
			if ferr := finish(ctx); ferr != nil {
				err = errors.Join(err, fmt.Errorf("ingest %s: %w", opts.Theme, ferr))
			}
		}()
	}
	for _, p := range todo {
		if err := ctx.Err(); err != nil {
			return rep, fmt.Errorf("ingest %s: %w", p.id, err)
		}
		acct, err := ingestOne(ctx, store, opts, p.path, p.id, known, &rep)
		if acct.Doc != "" {
			accounts[p.id] = acct
		}
		if err != nil {
			if ctx.Err() != nil {
				return rep, fmt.Errorf("ingest %s: %w", p.id, err)
			}
			fail(p.id, err)
		}
		progress(p.id)
	}
	for _, d := range stored {
		if present[d.ID] {
			continue
		}
		if err := store.DeleteDocument(ctx, opts.Theme, d.ID); err != nil {
			errs = append(errs, fmt.Errorf("ingest: remove %s: %w: %w", d.ID, ErrStoreWrite, err))
			continue
		}
		rep.Removed++
	}
	if fi, ok := store.(IndexFinisher); ok && ctx.Err() == nil {
		if err := fi.FinishIndex(ctx); err != nil {
			errs = append(errs, fmt.Errorf("ingest %s: %w", opts.Theme, err))
		}
	}
	if vi, ok := store.(VectorIndexer); ok && ctx.Err() == nil {
		if err := vi.IndexVectors(ctx, opts.Theme); err != nil {
			errs = append(errs, fmt.Errorf("ingest %s: %w", opts.Theme, err))
		}
	}
	return rep, errors.Join(errs...)
}

// dropNavigation leaves out the chunks that only help a reader move around
// the book (tables of contents): they answer no question, and a search that
// returned them would crowd out the passages that do. The rest keep their
// order and are numbered from 0 again.
func dropNavigation(chunks []chunk.Chunk) []chunk.Chunk {
	out := chunks[:0]
	for _, c := range chunks {
		if c.Navigation {
			continue
		}
		c.Ordinal = len(out)
		out = append(out, c)
	}
	return out
}

// contentHash is the hash ingest compares to decide whether a document must
// be re-indexed: the file's bytes and the lexical index version, so a change
// in how text becomes tokens re-indexes every store on its next build.
func contentHash(data []byte) string {
	h := sha256.New()
	fmt.Fprintf(h, "lexical-v%d chunk-v%d\x00", lexical.Version, chunk.Version)
	h.Write(data)
	return hex.EncodeToString(h.Sum(nil))
}

func ingestOne(ctx context.Context, store Store, opts IngestOptions, path, id string, known map[string]Document, rep *IngestReport) (DocAccount, error) {
	var acct DocAccount
	data, err := os.ReadFile(path)
	if err != nil {
		return acct, err
	}
	hash := contentHash(data)
	old, had := known[id]
	if had && old.ContentHash == hash {
		rep.Unchanged++
		return acct, nil
	}
	if err := CheckText(string(data)); err != nil {
		return acct, fmt.Errorf("%w (fix the file, or re-run vibe convert %s on its source)", err, opts.Theme)
	}
	meta, _, err := convert.Parse(data)
	if err != nil {
		return acct, fmt.Errorf("%w (re-run vibe convert %s)", err, opts.Theme)
	}
	if meta.Quality.Garbled && !opts.IncludeGarbled {
		reason := fmt.Sprintf("garbled text (garbled_ratio %.2f); fix the source or pass --include-garbled", meta.Quality.GarbledRatio)
		rep.Skipped = append(rep.Skipped, Skipped{Doc: id, Reason: reason})
		acct = DocAccount{Doc: id, Source: meta.Source, Title: meta.Title, ContentHash: hash, SourceChars: meta.Quality.SourceChars,
			ConvertAside: meta.Quality.SetAside, ConvertAdded: meta.Quality.Added, Chunking: chunk.Accounting{Converted: meta.Quality.TextChars}, Status: AccountSkipped, Note: reason}
		if had {
			if err := store.DeleteDocument(ctx, opts.Theme, id); err != nil {
				return acct, fmt.Errorf("%w: %w", ErrStoreWrite, err)
			}
		}
		return acct, nil
	}
	chunks, err := opts.Splitter.SplitFile(ctx, id, data)
	if err != nil {
		return acct, err
	}
	rule := opts.rule(meta.Source)
	if acct, err = accountFor(id, hash, meta, data, chunks, rule); err != nil {
		return acct, err
	}
	if acct.Status == AccountRefused {
		// Nothing of it is stored: a document that lost its text must not
		// pass for built.
		if had {
			if err := store.DeleteDocument(ctx, opts.Theme, id); err != nil {
				return acct, fmt.Errorf("%w: %w", ErrStoreWrite, err)
			}
		}
		return acct, acct.Refusal(rule)
	}
	chunks = dropNavigation(chunks)
	info := InfoOf(opts.Embedder)
	subjects := chunk.Subjects(chunks)
	var vectors [][]float32
	for a := 0; a < len(chunks); a += opts.BatchSize {
		b := min(a+opts.BatchSize, len(chunks))
		texts := make([]string, b-a)
		for i := range texts {
			texts[i] = chunks[a+i].EmbedTextWith(subjects[a+i])
		}
		vs, err := opts.Embedder.Embed(ctx, texts)
		rep.EmbedCalls++
		if err != nil {
			return acct, fmt.Errorf("embed: %w", err)
		}
		if len(vs) != len(texts) {
			return acct, fmt.Errorf("embed: %d vectors for %d texts", len(vs), len(texts))
		}
		rep.EmbeddedTexts += len(texts)
		vectors = append(vectors, vs...)
	}
	title := meta.Title
	source := meta.Source
	if len(chunks) > 0 {
		source = chunks[0].Source
	}
	doc := Document{ID: id, Theme: opts.Theme, Source: source, Title: title, ContentHash: hash, Chunks: len(chunks), UpdatedAt: opts.Now().UTC()}
	if err := store.ReplaceDocument(ctx, doc, chunks, vectors, info); err != nil {
		return acct, fmt.Errorf("%w: %w", ErrStoreWrite, err)
	}
	rep.Chunks += len(chunks)
	if had {
		rep.Updated++
	} else {
		rep.Added++
	}
	return acct, nil
}

// rule returns the coverage rule of the document converted from source.
func (o IngestOptions) rule(source string) CoverageRule {
	if o.Coverage != nil {
		return o.Coverage(source)
	}
	return CoverageRule{Min: DefaultMinCoverage, Where: "the default"}
}

// accountOnly accounts for an unchanged document the ledger does not know:
// it is cut into chunks again, nothing is embedded or written.
func accountOnly(ctx context.Context, opts IngestOptions, data []byte, id, hash string) (DocAccount, error) {
	meta, _, err := convert.Parse(data)
	if err != nil {
		return DocAccount{}, fmt.Errorf("%w (re-run vibe convert %s)", err, opts.Theme)
	}
	chunks, err := opts.Splitter.SplitFile(ctx, id, data)
	if err != nil {
		return DocAccount{}, err
	}
	return accountFor(id, hash, meta, data, chunks, opts.rule(meta.Source))
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func docID(root, path string) string {
	if root != "" {
		if rel, err := filepath.Rel(root, path); err == nil && !strings.HasPrefix(rel, "..") {
			return filepath.ToSlash(rel)
		}
	}
	return filepath.ToSlash(path)
}

func convertedFiles(dir string) ([]string, error) {
	var files []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.EqualFold(filepath.Ext(p), ".md") {
			files = append(files, p)
		}
		return nil
	})
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("ingest: %s: %w (run vibe convert first)", dir, ErrNoConverted)
	}
	if err != nil {
		return nil, fmt.Errorf("ingest: %w", err)
	}
	sort.Strings(files)
	return files, nil
}
