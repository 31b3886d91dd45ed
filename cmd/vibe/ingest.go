package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/vibelife/vibe/chunk"
	"github.com/vibelife/vibe/internal/iostreams"
	"github.com/vibelife/vibe/knowledge"
)

// IngestOptions are the flags of `vibe ingest`.
type IngestOptions struct {
	IO             *iostreams.IOStreams
	Theme          string
	Store          string
	Embedder       string
	Rebuild        bool
	IncludeGarbled bool
	JSON           bool
}

func newIngestCmd(a *app) *cobra.Command {
	opts := &IngestOptions{IO: a.io}
	cmd := &cobra.Command{
		Use:   "ingest <theme>",
		Short: "Chunk, embed and store the theme's converted Markdown for hybrid search",
		Long: `Chunk every converted document of the theme along its Markdown structure,
embed the chunks and write them to the store, one transaction per document.
Only documents whose converted file changed are chunked and embedded again;
documents whose file is gone are removed. Documents the converter marked as
garbled are skipped with a reason unless --include-garbled.`,
		Example: `  vibe ingest bazi
  vibe ingest bazi --store postgres --embedder openai
  vibe ingest bazi --rebuild    # after switching embedders`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			_, theme, err := a.theme(args)
			if err != nil {
				return err
			}
			opts.Theme = theme
			unlock, err := a.lockTheme(theme)
			if err != nil {
				return err
			}
			defer unlock()
			if err := a.applyStoreFlags(opts.Store, opts.Embedder); err != nil {
				return err
			}
			// The store's build lock and theme owner, as vibe build takes.
			release, err := a.lockStoreTheme(cmd.Context(), theme, []buildStage{{name: "ingest"}}, false)
			if err != nil {
				return err
			}
			defer release()
			return a.runIngest(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Store, "store", "", "store driver: sqlite or postgres (default from vibe.yaml)")
	cmd.Flags().StringVar(&opts.Embedder, "embedder", "", "embedder: local or openai (default from vibe.yaml)")
	cmd.Flags().BoolVar(&opts.Rebuild, "rebuild", false, "drop the theme's stored data first and embed everything again")
	cmd.Flags().BoolVar(&opts.IncludeGarbled, "include-garbled", false, "ingest documents marked garbled by convert")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the report as JSON")
	return cmd
}

// stageIngest is the ingest stage of `vibe build`.
func (a *app) stageIngest(ctx context.Context, theme string) error {
	return a.runIngest(ctx, &IngestOptions{IO: a.io, Theme: theme})
}

func (a *app) applyStoreFlags(storeDriver, embedder string) error {
	cfg, err := a.config()
	if err != nil {
		return err
	}
	switch storeDriver {
	case "":
	case "sqlite", "postgres":
		cfg.Store.Driver = storeDriver
	default:
		return flagErrorf("--store %q: use sqlite or postgres", storeDriver)
	}
	switch embedder {
	case "":
	case "local", "openai":
		cfg.Embedding.Provider = embedder
	default:
		return flagErrorf("--embedder %q: use local or openai", embedder)
	}
	return nil
}

func (a *app) runIngest(ctx context.Context, opts *IngestOptions) error {
	if err := a.applyStoreFlags(opts.Store, opts.Embedder); err != nil {
		return err
	}
	ws, err := a.workspace()
	if err != nil {
		return err
	}
	cfg, err := a.config()
	if err != nil {
		return err
	}
	emb, err := a.openEmbedder(ctx)
	if err != nil {
		return fmt.Errorf("ingest %s: %w", opts.Theme, err)
	}
	sp, err := chunk.New(chunk.Options{Root: ws.Root})
	if err != nil {
		return fmt.Errorf("ingest %s: %w", opts.Theme, err)
	}
	store, err := a.openStore(ctx)
	if err != nil {
		return fmt.Errorf("ingest %s: open the store: %w", opts.Theme, err)
	}
	defer store.Close()
	coverage, unusedAllowances, err := coverageRules(ws, opts.Theme)
	if err != nil {
		return withExit(exitError, fmt.Errorf("ingest %s: %w", opts.Theme, err))
	}
	var prog *iostreams.Progress
	rep, err := knowledge.Ingest(ctx, store, knowledge.IngestOptions{
		Theme: opts.Theme, Root: ws.Root, ConvertedDir: ws.ConvertedDir(opts.Theme),
		Splitter: sp, Embedder: emb, BatchSize: cfg.Embedding.BatchSize,
		IncludeGarbled: opts.IncludeGarbled, Rebuild: opts.Rebuild, Now: a.now,
		Coverage: coverage, Ledger: ledgerPath(ws, opts.Theme),
		Progress: func(done, total int, doc string) {
			if prog == nil {
				prog = opts.IO.NewProgress("ingest", total, a.quiet || opts.JSON)
			}
			prog.Step(ws.Rel(doc))
		},
		IndexProgress: func(b knowledge.IndexBuild) {
			if a.quiet || opts.JSON {
				return
			}
			if prog != nil {
				prog.Done() // the documents' bar ends before the build's lines
				prog = nil
			}
			fmt.Fprintln(opts.IO.ErrOut, indexBuildLine(b))
		},
	})
	if prog != nil {
		prog.Done()
	}
	if errors.Is(err, knowledge.ErrNoConverted) {
		return withExit(exitError, withHint(err, "run `vibe convert "+opts.Theme+"` first"))
	}
	if opts.JSON {
		type failed struct {
			Doc   string `json:"doc"`
			Error string `json:"error"`
		}
		out := struct {
			Theme string `json:"theme"`
			knowledge.IngestReport
			Failed []failed `json:"failed,omitempty"`
		}{Theme: opts.Theme, IngestReport: rep}
		for _, f := range rep.Failed {
			out.Failed = append(out.Failed, failed{f.Doc, f.Err.Error()})
		}
		if perr := printJSON(opts.IO.Out, out); perr != nil {
			return perr
		}
	} else if !a.quiet {
		fmt.Fprintf(opts.IO.Out, "ingest %s: %d added, %d updated, %d unchanged, %d removed; %d chunks written, %d texts embedded in %d calls (%s, %d dims)\n",
			opts.Theme, rep.Added, rep.Updated, rep.Unchanged, rep.Removed, rep.Chunks, rep.EmbeddedTexts, rep.EmbedCalls, rep.Embedding.Model, rep.Embedding.Dimensions)
		for _, s := range rep.Skipped {
			fmt.Fprintf(opts.IO.ErrOut, "skipped %s: %s\n", s.Doc, s.Reason)
		}
		printAccounting(opts.IO.Out, ws, rep.Accounts)
	}
	if !opts.JSON {
		for _, d := range rep.Accounts {
			if d.Status == knowledge.AccountAllowed {
				fmt.Fprintf(opts.IO.ErrOut, "warning: %s: its chunks hold %s of its text, %s\n", d.Doc, share(d.Chunked(), d.Converted()), d.Note)
			}
		}
		for _, u := range unusedAllowances() {
			fmt.Fprintf(opts.IO.ErrOut, "warning: %s\n", u)
		}
	}
	if err != nil {
		// A document that failed by itself lets the build go on; a store
		// that failed (a deadlock, a lost connection) stops it.
		if len(rep.Failed) > 0 && ctx.Err() == nil && !errors.Is(err, knowledge.ErrStoreWrite) {
			return withExit(exitFailure, storeHint(err, opts.Theme))
		}
		return storeHint(err, opts.Theme)
	}
	return nil
}

// indexBuildLine is the line `vibe ingest` prints when the store starts or
// ends the build of an index it deferred during a bulk load (PostgreSQL's
// HNSW index: minutes at 100k chunks, with nothing else printed meanwhile).
func indexBuildLine(b knowledge.IndexBuild) string {
	n := groupThousands(b.Chunks)
	switch {
	case !b.Done:
		return fmt.Sprintf("building the %s index over %s chunks…", b.Index, n)
	case b.Err != nil:
		return fmt.Sprintf("building the %s index over %s chunks failed after %s", b.Index, n, b.Took.Round(100*time.Millisecond))
	default:
		return fmt.Sprintf("built the %s index over %s chunks in %s", b.Index, n, b.Took.Round(100*time.Millisecond))
	}
}

// groupThousands writes n with a comma between groups of three digits.
func groupThousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	var out []byte
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	if neg {
		return "-" + string(out)
	}
	return string(out)
}
