package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/vibelife/vibe/chunk"
	"github.com/vibelife/vibe/integrate"
	"github.com/vibelife/vibe/skills"
	"github.com/vibelife/vibe/workspace"
)

func newIntegrateCmd(a *app) *cobra.Command {
	var regenerate bool
	cmd := &cobra.Command{
		Use:   "integrate <theme>",
		Short: "Write SKILL.md, tools/tools.yaml and meta.json from the extracted knowledge, then check them",
		Long: `Write the skill's files from skills/<theme>/knowledge/*.yaml, then run vibe check:

  skills/<theme>/SKILL.md          front matter, expert identity, scope, core SOP, expression
                                   style and forbidden behaviours, intent -> tool table; in the
                                   language of the sources (Chinese or English)
  skills/<theme>/tools/tools.yaml  one tool per non-core tool the SOP steps call, merged with the
                                   tools declared by hand in knowledge/<theme>/tools.yaml
  skills/<theme>/meta.json         versions, knowledge hashes, counts, extractor, who wrote the
                                   prose and its LLM usage, the extraction's LLM usage per pass
                                   (requests, cached answers, tokens, cost; left by vibe extract
                                   in .vibe/usage/<theme>/extract.json), check summary

With an LLM configured (OPENAI_BASE_URL / OPENAI_API_KEY) the model writes the
prose (display name, description, identity, scope, style, forbidden
behaviours) from the extracted knowledge; the answer must pass the SKILL.md
checks (description at most 512 characters, name and description within
check.max_metadata_tokens, body within check.max_skill_tokens, the required
sections), gets one repair round, and falls back to the template with a
warning. The answer is cached, so an unchanged rebuild makes no request.
Offline the prose comes from a template filled from the knowledge: the works
cited, the topics the rules cover, the patterns and the procedure. The SOP
and the tool table are always laid out from the knowledge files.

Which parts of SKILL.md are generated: the front matter, the title (it follows
display_name) and the text between <!-- vibe:generated:start NAME --> and
<!-- vibe:generated:end NAME --> markers. A generated part you edited by hand
is kept on rebuild (vibe compares it with the hash recorded in meta.json), as
is everything outside the markers; integrate lists what it kept.
--regenerate rewrites the whole file, discarding hand edits.

tools/tools.yaml is rewritten on every run. Declare the theme's own tools (a
compute tool with its plugin, a display tool with its card) in
knowledge/<theme>/tools.yaml, same schema (` + "`vibe schema tools`" + `): a declaration
there wins over the generated one of the same name, an empty when_to_call is
filled from the SOP step that calls the tool, and tools no step calls are
added too. Errors in that file stop integrate with their line and column.`,
		Example: `  vibe integrate bazi
  vibe integrate bazi --regenerate`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			_, theme, err := a.theme(args)
			if err != nil {
				return err
			}
			unlock, err := a.lockTheme(theme)
			if err != nil {
				return err
			}
			defer unlock()
			return a.runIntegrate(cmd.Context(), theme, regenerate)
		},
	}
	cmd.Flags().BoolVar(&regenerate, "regenerate", false, "rewrite SKILL.md entirely, discarding hand edits")
	return cmd
}

// stageIntegrate is the integrate stage of vibe build: integrate, then check.
func (a *app) stageIntegrate(ctx context.Context, theme string) error {
	return a.runIntegrate(ctx, theme, false)
}

func (a *app) runIntegrate(ctx context.Context, theme string, regenerate bool) error {
	ws, err := a.workspace()
	if err != nil {
		return err
	}
	cfg, err := a.config()
	if err != nil {
		return err
	}
	opt := integrate.IntegrateOptions{
		Theme: theme, SkillDir: ws.SkillDir(theme), Glossary: filepath.Join(ws.KnowledgeDir(theme), "glossary.yaml"),
		Regenerate: regenerate, Version: version, Now: a.now,
		DeclaredTools: filepath.Join(ws.KnowledgeDir(theme), integrate.DeclaredToolsName), RelTo: ws.Root,
		EvalCases: filepath.Join(ws.KnowledgeDir(theme), "eval.yaml"),
		Limits:    cfg.Check,
	}
	if opt.GlossaryInputs, opt.Contents, err = a.glossaryInputs(ctx, theme); err != nil {
		return withExit(exitError, err)
	}
	// The glossary's characters get their English words from the user's
	// dictionary, and from the built-in Unihan table for the characters
	// it lacks or when the user names none; "none" turns both off.
	switch p := cfg.Glossary.Dictionary; p {
	case "":
		opt.Dictionary = integrate.BuiltinDictionary()
	case workspace.NoDictionary:
	default:
		if !filepath.IsAbs(p) {
			p = filepath.Join(ws.Root, p)
		}
		d, err := integrate.LoadDictionary(p)
		if err != nil {
			return withHint(err, "vibe.yaml glossary.dictionary names a Chinese–English dictionary in the CC-CEDICT format (cedict_ts.u8); fix the path or remove the setting")
		}
		opt.Dictionary = d.WithBuiltin()
	}
	// The extraction's usage, for meta.json.
	if opt.ExtractUsage, err = integrate.ReadExtractUsage(extractUsagePath(ws, theme)); err != nil {
		return withExit(exitError, err)
	}
	if cfg.LLMEnabled() {
		// The prose answer is cached with every other answer in .vibe/cache/llm,
		// so a rebuild of unchanged knowledge asks nothing.
		opt.LLM, opt.Model = a.trackLLM(newLLMClient(ws, cfg, cfg.LLM.Model, cfg.LLM.Budget, false)), cfg.LLM.Model
	}
	res, err := integrate.Integrate(ctx, opt)
	var te *integrate.ToolsFileError
	if errors.As(err, &te) {
		return withHint(err, "fix the tool declarations; `vibe schema tools` prints the schema")
	}
	if err != nil {
		if strings.Contains(err.Error(), "glossary") {
			return withHint(err, "fix knowledge/"+theme+"/glossary.yaml: `terms:` with a list of {term, aliases, english, pinyin}")
		}
		return withHint(err, "run `vibe extract "+theme+"` first, or `vibe check "+theme+"` to locate the problem")
	}
	// -q leaves out the notes and the check line; warnings and errors print.
	notes := a.io.ErrOut
	if a.quiet {
		notes = io.Discard
	}
	fmt.Fprintf(notes, "integrate %s: wrote %s, %s (%d tools), %s, %s (%d terms)\n", theme, ws.Rel(res.SkillMD), ws.Rel(res.ToolsYAML), res.Tools, ws.Rel(res.MetaJSON), ws.Rel(res.Glossary), res.GlossaryTerms)
	prose := "prose from the offline template filled from the knowledge (set OPENAI_BASE_URL for model-written prose)"
	switch {
	case res.Prose != "template":
		prose = "prose written by " + strings.TrimPrefix(res.Prose, "llm:") + " and checked"
	case cfg.LLMEnabled():
		prose = "prose from the offline template filled from the knowledge"
	}
	fmt.Fprintf(notes, "integrate %s: SKILL.md in %s, %s; generated: front matter, title and the vibe:generated regions (your edits to them are kept)\n",
		theme, map[string]string{"zh": "Chinese", "en": "English"}[res.Language], prose)
	for _, w := range res.Warnings {
		fmt.Fprintf(a.io.ErrOut, "integrate %s: warning: %s\n", theme, w)
	}
	if len(res.Kept) > 0 {
		fmt.Fprintf(notes, "integrate %s: kept hand-edited SKILL.md regions: %s (use --regenerate to overwrite)\n", theme, strings.Join(res.Kept, ", "))
	}
	rep, err := a.check(ctx, theme, false)
	if err != nil {
		return withExit(exitError, err)
	}
	if err := integrate.RecordCheck(ws.SkillDir(theme), rep.Summary); err != nil {
		return fmt.Errorf("integrate %s: %w", theme, err)
	}
	for _, f := range rep.Findings {
		if f.Severity != integrate.SevNote {
			fmt.Fprintf(a.io.ErrOut, "%s:%d:%d: %s %s %s: %s\n", f.File, f.Line, f.Column, f.Severity, f.RuleID, f.Check, f.Message)
		}
	}
	if !a.quiet || rep.Summary.Errors > 0 {
		fmt.Fprintln(a.io.ErrOut, integrate.SummaryLine(rep))
	}
	if rep.Failed(false) {
		return withHint(fmt.Errorf("integrate %s: check found %d errors", theme, rep.Summary.Errors), "run `vibe check "+theme+"` for the full report: each error says how to fix the item, or how to leave out one vibe extracted wrongly (knowledge/"+theme+"/drop.yaml, docs/extract.md)")
	}
	return nil
}

// glossaryInputs reads the heading and document titles of the theme's
// chunks, which the built glossary is mined from, and the sources' table of
// contents; none when the store holds no chunks of the theme (the skill was
// extracted elsewhere).
func (a *app) glossaryInputs(ctx context.Context, theme string) (integrate.GlossaryInputs, skills.Contents, error) {
	store, err := a.openStore(ctx)
	if err != nil {
		return integrate.GlossaryInputs{}, skills.Contents{}, fmt.Errorf("integrate %s: open the store: %w", theme, err)
	}
	defer store.Close()
	chunks, err := store.Chunks(ctx, theme)
	if err != nil {
		return integrate.GlossaryInputs{}, skills.Contents{}, fmt.Errorf("integrate %s: read chunks: %w", theme, err)
	}
	return glossaryInputsOf(chunks), contentsOf(chunks), nil
}

// contentsOf lists, document by document in the chunks' order, the
// source, the title and the distinct headings of the chunks (a table of
// contents, a navigation chunk, is no section of the book).
func contentsOf(chunks []chunk.Chunk) skills.Contents {
	var c skills.Contents
	at := map[string]int{}
	seen := map[string]bool{}
	for _, ch := range chunks {
		i, ok := at[ch.Doc]
		if !ok {
			i = len(c.Documents)
			at[ch.Doc] = i
			src := ch.Source
			if src == "" {
				src = ch.Doc
			}
			c.Documents = append(c.Documents, skills.ContentsDocument{Source: src, Title: ch.Title})
		}
		if ch.Navigation {
			continue
		}
		d := &c.Documents[i]
		for _, h := range ch.HeadingPath {
			if h = strings.TrimSpace(h); h != "" && h != d.Title && !seen[ch.Doc+"\x00"+h] {
				seen[ch.Doc+"\x00"+h] = true
				d.Headings = append(d.Headings, h)
			}
		}
	}
	return c
}

// glossaryInputsOf gathers the distinct heading and document titles of
// chunks, and the text of those that are no navigation.
func glossaryInputsOf(chunks []chunk.Chunk) integrate.GlossaryInputs {
	var in integrate.GlossaryInputs
	seen := map[string]bool{}
	for _, c := range chunks {
		if !c.Navigation {
			in.Passages = append(in.Passages, c.Text)
		}
		for _, h := range append([]string{c.Title}, c.HeadingPath...) {
			if h != "" && !seen[h] {
				seen[h] = true
				in.Headings = append(in.Headings, h)
			}
		}
		if d := strings.TrimSuffix(filepath.Base(c.Doc), filepath.Ext(c.Doc)); d != "" && !seen["\x00"+d] {
			seen["\x00"+d] = true
			in.Titles = append(in.Titles, d)
		}
	}
	return in
}

// sampleText is the text of up to 50 chunks spread over chunks, to tell
// the sources' language by.
func sampleText(chunks []chunk.Chunk) string {
	var sb strings.Builder
	step := max(1, len(chunks)/50)
	for i := 0; i < len(chunks); i += step {
		sb.WriteString(chunks[i].Text)
		sb.WriteByte('\n')
	}
	return sb.String()
}

// userDictionary returns the English renderings of a Chinese word, or of a
// character, in the dictionary vibe.yaml's glossary.dictionary names
// (CC-CEDICT), for the runtime's reverse bridge (runtime.Config.Dictionary);
// nil when it names none, or "none". The file is read on the first lookup
// (a Chinese question over English sources: 0.7 s CPU and 40 MB for the
// 2020 CC-CEDICT), not before; a file that cannot be read is said once as
// a warning, and the built-in table of the characters' glosses bridges
// alone.
func (a *app) userDictionary() func(string) []string {
	ws, err := a.workspace()
	if err != nil {
		return nil
	}
	cfg, err := a.config()
	if err != nil {
		return nil
	}
	p := cfg.Glossary.Dictionary
	if p == "" || p == workspace.NoDictionary {
		return nil
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(ws.Root, p)
	}
	var (
		once sync.Once
		d    *integrate.Dictionary
	)
	return func(w string) []string {
		once.Do(func() {
			var err error
			if d, err = integrate.LoadDictionary(p); err != nil {
				fmt.Fprintf(a.io.ErrOut, "warning: glossary.dictionary: %s; Chinese questions over English sources are carried over by the characters' built-in glosses alone\n", logSafe(err.Error()))
			}
		})
		switch {
		case d == nil:
			return nil
		case utf8.RuneCountInString(w) == 1:
			return d.Characters([]string{w})[w].English
		}
		return d.English(w)
	}
}
