package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/vibelife/vibe/internal/iostreams"
	"github.com/vibelife/vibe/knowledge"
)

// SearchOptions are the flags of `vibe search`.
type SearchOptions struct {
	IO       *iostreams.IOStreams
	Theme    string
	Query    string
	K        int
	Mode     string
	JSON     bool
	Batch    string
	Store    string
	Embedder string
}

func newSearchCmd(a *app) *cobra.Command {
	opts := &SearchOptions{IO: a.io}
	cmd := &cobra.Command{
		Use:   "search <theme> [query]",
		Short: "Search a theme's ingested knowledge (hybrid, vector or lexical)",
		Long: `Search the chunks ingested for a theme. Every hit shows the chunk id, the
original source file, the heading path, the character offsets into the
converted file and the scores of each side.

With --batch FILE (or - for stdin), read one JSON object per line,
{"id": "...", "query": "..."}, and write one JSON line per query,
{"id": "...", "hits": [...]}.`,
		Example: `  vibe search bazi "用神 月令"
  vibe search bazi "day master" -k 5 --mode lexical --json
  vibe search bazi --batch questions.jsonl > answers.jsonl`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			_, theme, err := a.theme(args)
			if err != nil {
				return err
			}
			opts.Theme = theme
			if len(args) == 2 {
				opts.Query = args[1]
			}
			if (opts.Query == "") == (opts.Batch == "") {
				return flagErrorf("give either a query or --batch FILE")
			}
			return a.runSearch(cmd.Context(), opts)
		},
	}
	cmd.Flags().IntVarP(&opts.K, "k", "k", 10, "number of hits")
	cmd.Flags().StringVar(&opts.Mode, "mode", "hybrid", "hybrid, vector or lexical")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print hits as JSON")
	cmd.Flags().StringVar(&opts.Batch, "batch", "", "JSONL file of {\"id\",\"query\"} lines (- for stdin)")
	cmd.Flags().StringVar(&opts.Store, "store", "", "store driver: sqlite or postgres (default from vibe.yaml)")
	cmd.Flags().StringVar(&opts.Embedder, "embedder", "", "embedder: local or openai (default from vibe.yaml)")
	return cmd
}

// searchHit is the JSON shape of a hit.
type searchHit struct {
	Chunk        string   `json:"chunk"`
	Text         string   `json:"text"`
	Source       string   `json:"source"`
	Doc          string   `json:"doc"`
	HeadingPath  []string `json:"heading_path"`
	Start        int      `json:"start"`
	End          int      `json:"end"`
	Score        float64  `json:"score"`
	VectorScore  float64  `json:"vector_score"`
	LexicalScore float64  `json:"lexical_score"`
	VectorRank   int      `json:"vector_rank"`
	LexicalRank  int      `json:"lexical_rank"`
}

func toSearchHits(hits []knowledge.Hit) []searchHit {
	out := make([]searchHit, 0, len(hits))
	for _, h := range hits {
		out = append(out, searchHit{h.Chunk.ID, h.Chunk.Text, h.Chunk.Source, h.Chunk.Doc, h.Chunk.HeadingPath, h.Chunk.Start, h.Chunk.End,
			h.Score, h.VectorScore, h.LexicalScore, h.VectorRank, h.LexicalRank})
	}
	return out
}

func (a *app) runSearch(ctx context.Context, opts *SearchOptions) error {
	mode := knowledge.SearchMode(opts.Mode)
	switch mode {
	case knowledge.SearchHybrid, knowledge.SearchVector, knowledge.SearchLexical:
	default:
		return flagErrorf("--mode %q: use hybrid, vector or lexical", opts.Mode)
	}
	if opts.K <= 0 {
		return flagErrorf("-k %d: give a positive number of hits", opts.K)
	}
	if err := a.applyStoreFlags(opts.Store, opts.Embedder); err != nil {
		return err
	}
	store, err := a.openStore(ctx)
	if err != nil {
		return fmt.Errorf("search %s: open the store: %w", opts.Theme, err)
	}
	defer store.Close()
	if docs, err := store.Documents(ctx, opts.Theme); err != nil {
		return fmt.Errorf("search %s: %w", opts.Theme, err)
	} else if len(docs) == 0 {
		return withHint(fmt.Errorf("search %s: the store holds no documents of theme %q", opts.Theme, opts.Theme),
			fmt.Sprintf("run `vibe ingest %s` (or `vibe build %s`) first; `vibe curate %s --from DIR` gathers its sources", opts.Theme, opts.Theme, opts.Theme))
	}
	var emb knowledge.Embedder
	if mode != knowledge.SearchLexical {
		emb, err = a.openEmbedder(ctx)
		if err != nil {
			return fmt.Errorf("search %s: %w", opts.Theme, err)
		}
		if info, ok, err := store.EmbeddingInfo(ctx); err == nil && ok && info != knowledge.InfoOf(emb) {
			return storeHint(fmt.Errorf("search %s: %w", opts.Theme, knowledge.MismatchError(info, knowledge.InfoOf(emb))), opts.Theme)
		}
	}
	search := func(text string) ([]knowledge.Hit, error) {
		q := knowledge.Query{Theme: opts.Theme, Text: text, K: opts.K, Mode: mode}
		if emb != nil {
			vs, err := emb.Embed(ctx, []string{text})
			if err != nil {
				return nil, fmt.Errorf("embed the query: %w", err)
			}
			q.Vector = vs[0]
		}
		hits, err := store.Search(ctx, q)
		return hits, storeHint(err, opts.Theme)
	}
	if opts.Batch != "" {
		return a.searchBatch(opts, search)
	}
	hits, err := search(opts.Query)
	if err != nil {
		return fmt.Errorf("search %s: %w", opts.Theme, err)
	}
	if opts.JSON {
		return printJSON(opts.IO.Out, toSearchHits(hits))
	}
	if len(hits) == 0 {
		fmt.Fprintf(opts.IO.ErrOut, "no hits for %q in %s (has `vibe ingest %s` run?)\n", opts.Query, opts.Theme, opts.Theme)
		return nil
	}
	for i, h := range hits {
		c := h.Chunk
		// Above every heading a chunk is cited by its document title.
		place := strings.Join(c.HeadingPath, " › ")
		if place == "" {
			place = c.Title
		}
		fmt.Fprintf(opts.IO.Out, "%d. %s › %s [%d:%d]  score %.4f (vector %.3f #%d, lexical %.3f #%d)\n   %s\n   id %s\n",
			i+1, c.Source, place, c.Start, c.End, h.Score, h.VectorScore, h.VectorRank, h.LexicalScore, h.LexicalRank,
			snippet(c.Text, 160), c.ID)
	}
	return nil
}

func (a *app) searchBatch(opts *SearchOptions, search func(string) ([]knowledge.Hit, error)) error {
	var r io.Reader = opts.IO.In
	name := "stdin"
	if opts.Batch != "-" {
		f, err := os.Open(opts.Batch)
		if err != nil {
			return withExit(exitError, fmt.Errorf("search --batch: %w", err))
		}
		defer f.Close()
		r, name = f, opts.Batch
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	enc := json.NewEncoder(opts.IO.Out)
	enc.SetEscapeHTML(false)
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if text == "" {
			continue
		}
		var in struct {
			ID    string `json:"id"`
			Query string `json:"query"`
		}
		if err := json.Unmarshal([]byte(text), &in); err != nil {
			return withExit(exitError, fmt.Errorf("search --batch %s:%d: %v (want {\"id\": \"...\", \"query\": \"...\"})", name, line, err))
		}
		if in.Query == "" {
			return withExit(exitError, fmt.Errorf("search --batch %s:%d: field \"query\" is empty", name, line))
		}
		hits, err := search(in.Query)
		if err != nil {
			return fmt.Errorf("search --batch %s:%d (id %q): %w", name, line, in.ID, err)
		}
		if err := enc.Encode(struct {
			ID   string      `json:"id"`
			Hits []searchHit `json:"hits"`
		}{in.ID, toSearchHits(hits)}); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("search --batch %s: %w", name, err)
	}
	return nil
}

// snippet trims text to about n characters on one line.
func snippet(text string, n int) string {
	text = strings.Join(strings.Fields(text), " ")
	r := []rune(text)
	if len(r) <= n {
		return text
	}
	return string(r[:n]) + "…"
}
