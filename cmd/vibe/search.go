package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/vibelife/vibe/convert"
	"github.com/vibelife/vibe/internal/iostreams"
	"github.com/vibelife/vibe/knowledge"
	"github.com/vibelife/vibe/runtime"
	"github.com/vibelife/vibe/skills"
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
	// NoBridge searches the query's own words only, even when it is in
	// another language than the sources.
	NoBridge bool
}

func newSearchCmd(a *app) *cobra.Command {
	opts := &SearchOptions{IO: a.io}
	cmd := &cobra.Command{
		Use:   "search <theme> [query]",
		Short: "Search a theme's ingested knowledge (hybrid, vector or lexical)",
		Long: `Search the chunks ingested for a theme. Every hit shows the chunk id, the
original source file, the heading path, the character offsets into the
converted file and the scores of each side.

A query in another language than the sources (English over Chinese books)
is carried over the way the agent's search_knowledge does it: rewritten by
the model when one is configured (cached), else with the terms of the
theme's glossary (knowledge/<theme>/glossary.yaml, or the skill's copy) it
names. The output says what was searched besides the query ("searched as:
… (bridged by glossary)"), or that the query could not be carried over;
--no-bridge searches its own words only.

--json prints {"query", "searched_as", "bridged_by", "unbridged", "hits"}
(the bridge fields only when set). With --batch FILE (or - for stdin), read
one JSON object per line, {"id": "...", "query": "..."}, and write one JSON
line per query, {"id": "...", "hits": [...]}, plus the bridge fields when
set.`,
		Example: `  vibe search bazi "用神 月令"
  vibe search bazi "day master" -k 5 --mode lexical --json
  vibe search bazi "hurting officer meets the officer" --no-bridge
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
	cmd.Flags().BoolVar(&opts.NoBridge, "no-bridge", false, "search the query's own words only, not carried over to the sources' language")
	return cmd
}

// searchResult is the JSON shape of one query's answer: `vibe search
// --json`, and each line of --batch (with ID, without Query). The bridge
// fields are set only when the query was carried over (or could not be).
type searchResult struct {
	ID         string      `json:"id,omitempty"`
	Query      string      `json:"query,omitempty"`
	Hits       []searchHit `json:"hits"`
	SearchedAs string      `json:"searched_as,omitempty"`
	BridgedBy  string      `json:"bridged_by,omitempty"`
	Unbridged  bool        `json:"unbridged,omitempty"`
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
	// Proximity is set by a hybrid search (knowledge.Proximity).
	Proximity float64 `json:"proximity,omitempty"`
}

func toSearchHits(hits []knowledge.Hit) []searchHit {
	out := make([]searchHit, 0, len(hits))
	for _, h := range hits {
		out = append(out, searchHit{h.Chunk.ID, h.Chunk.Text, h.Chunk.Source, h.Chunk.Doc, h.Chunk.HeadingPath, h.Chunk.Start, h.Chunk.End,
			h.Score, h.VectorScore, h.LexicalScore, h.VectorRank, h.LexicalRank, h.Proximity})
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
	bridge := func(string) runtime.Bridged { return runtime.Bridged{} }
	if !opts.NoBridge {
		if bridge, err = a.searchBridge(ctx, opts.Theme); err != nil {
			return fmt.Errorf("search %s: %w", opts.Theme, err)
		}
	}
	// search carries the query over to the sources' language, then
	// searches it with what it was carried over as.
	search := func(query string) ([]knowledge.Hit, runtime.Bridged, error) {
		br := bridge(query)
		text := br.Text(query)
		q := knowledge.Query{Theme: opts.Theme, Text: text, K: opts.K, Mode: mode}
		if emb != nil {
			vs, err := emb.Embed(ctx, []string{text})
			if err != nil {
				return nil, br, fmt.Errorf("embed the query: %w", err)
			}
			q.Vector = vs[0]
		}
		hits, err := store.Search(ctx, q)
		return hits, br, storeHint(err, opts.Theme)
	}
	if opts.Batch != "" {
		return a.searchBatch(opts, search)
	}
	hits, br, err := search(opts.Query)
	if err != nil {
		return fmt.Errorf("search %s: %w", opts.Theme, err)
	}
	if opts.JSON {
		return printJSON(opts.IO.Out, newSearchResult("", opts.Query, hits, br))
	}
	switch {
	case br.SearchedAs != "":
		fmt.Fprintf(opts.IO.Out, "searched as: %s (bridged by %s)\n", br.SearchedAs, br.BridgedBy)
	case br.Unbridged:
		fmt.Fprintf(opts.IO.Out, "not bridged: the query is in %s and the sources in %s; no model rewrote it and it names no term of the glossary (knowledge/%s/glossary.yaml), so the hits match its own words only\n",
			runtime.LanguageName(br.QueryLang), runtime.LanguageName(br.SourceLang), opts.Theme)
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

func newSearchResult(id, query string, hits []knowledge.Hit, br runtime.Bridged) searchResult {
	return searchResult{ID: id, Query: query, Hits: toSearchHits(hits), SearchedAs: br.SearchedAs, BridgedBy: br.BridgedBy, Unbridged: br.Unbridged}
}

// searchBridge returns how `vibe search` carries a query over to the
// language of the theme's sources, with the runtime's Bridger (what
// search_knowledge does): the model's rewrite when a model is configured
// (answers cached in .vibe/cache/llm), else the glossary's terms. The
// sources' language is the glossary's, else that of the converted sources
// (none when they are in several languages), else of the skill's SKILL.md;
// unknown, no query is carried over.
func (a *app) searchBridge(ctx context.Context, theme string) (func(string) runtime.Bridged, error) {
	ws, err := a.workspace()
	if err != nil {
		return nil, err
	}
	cfg, err := a.config()
	if err != nil {
		return nil, err
	}
	g, err := loadGlossary(filepath.Join(ws.SkillDir(theme), filepath.FromSlash(skills.GlossaryPath)), filepath.Join(ws.KnowledgeDir(theme), "glossary.yaml"))
	if err != nil {
		return nil, err
	}
	lang := g.Language()
	if lang == "" {
		var known bool
		if lang, known = convertedLanguage(ws.ConvertedDir(theme)); !known {
			b, _ := os.ReadFile(filepath.Join(ws.SkillDir(theme), "SKILL.md"))
			lang = runtime.TextLanguage(string(b))
		}
	}
	br := &runtime.Bridger{Dictionary: a.userDictionary()}
	switch {
	case a.chatModel != nil:
		br.Model = a.chatModel
	case cfg.LLMEnabled():
		model := chatModelName(cfg)
		br.Model, br.ModelName = newLLMClient(ws, cfg, model, 0, false), model
	}
	return func(q string) runtime.Bridged { return br.Bridge(ctx, q, lang, g, theme) }, nil
}

// loadGlossary reads the glossaries of paths that exist, each laid over
// the ones before it (the skill's built glossary, then the theme's
// hand-kept one, which wins by term, as `vibe integrate` lays it); nil when
// none exists.
func loadGlossary(paths ...string) (*runtime.Glossary, error) {
	var g skills.Glossary
	found := false
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		over, err := skills.ParseGlossary(b, p)
		if err != nil {
			return nil, withHint(err, "fix the glossary, or pass --no-bridge to search the query's own words")
		}
		g, found = g.Overlay(over), true
	}
	if !found {
		return nil, nil
	}
	return runtime.NewGlossary(g), nil
}

// convertedLanguage is the language of a theme's converted sources: that
// of each of up to eight files spread over the sorted list (a 4 KB sample
// of each, runtime.TextLanguage), when they all agree; "" when they are
// written in more than one language (a question in any of them is searched
// as it is: a theme of English and Chinese pages is not "Chinese"). known
// is false when no file told a language.
func convertedLanguage(dir string) (lang string, known bool) {
	names, _ := filepath.Glob(filepath.Join(dir, "*.md"))
	sort.Strings(names)
	const samples = 8
	for i := 0; i < min(len(names), samples); i++ {
		n := names[i*len(names)/min(len(names), samples)]
		doc, _, err := convert.ReadFile(n)
		if err != nil {
			continue
		}
		body := doc.Markdown
		if len(body) > 4096 {
			body = body[:4096]
		}
		switch l := runtime.TextLanguage(body); {
		case l == "":
		case lang == "":
			lang = l
		case l != lang:
			return "", true
		}
	}
	return lang, lang != ""
}

func (a *app) searchBatch(opts *SearchOptions, search func(string) ([]knowledge.Hit, runtime.Bridged, error)) error {
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
		hits, br, err := search(in.Query)
		if err != nil {
			return fmt.Errorf("search --batch %s:%d (id %q): %w", name, line, in.ID, err)
		}
		// The id is written even when empty: each line answers one input line.
		res := newSearchResult("", "", hits, br)
		if err := enc.Encode(struct {
			ID string `json:"id"`
			searchResult
		}{in.ID, res}); err != nil {
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
