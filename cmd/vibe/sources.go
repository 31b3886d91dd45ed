package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/vibelife/vibe/curate"
	"github.com/vibelife/vibe/knowledge"
)

func newSourcesCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "sources",
		Short: "List or remove the sources a theme gathers (knowledge/<theme>/curate.yaml)",
		Long: `List the sources knowledge/<theme>/curate.yaml names, with what the last
curate kept from each (from sources.lock.json): every kept file with its
credibility grade (A-D) and the reasons for it, and for a git source the
commit it was gathered from. Or remove one. Add sources with
'vibe curate <theme> --from PATH|DIR|GLOB|URL|github:owner/repo'.`,
		Example: `  vibe sources list bazi
  vibe sources list bazi --json
  vibe sources remove bazi https://example.org/ziping.html
  vibe sources accept bazi R1 R3          # works of the reading list (vibe curate bazi --suggest)`,
	}
	cmd.AddCommand(newSourcesListCmd(a), newSourcesRemoveCmd(a), newSourcesAcceptCmd(a))
	return cmd
}

// sourceListing is one line of `vibe sources list`.
type sourceListing struct {
	Source  string   `json:"source"`
	Notes   string   `json:"notes,omitempty"`
	Kept    []string `json:"kept"`
	Dropped int      `json:"dropped"`
	Failed  int      `json:"failed"`
	// Files are the kept files with their provenance and credibility.
	Files []sourceFile `json:"files"`
	// Git is the commit a git source was gathered from.
	Git *curate.GitSource `json:"git,omitempty"`
	// Characters is the accounting of the documents kept (source ->
	// converted -> chunked -> cited), once they are ingested.
	Characters *sourceFigures `json:"characters,omitempty"`
}

// sourceFile is a kept file of a listed source.
type sourceFile struct {
	File        string              `json:"file"`
	Origin      string              `json:"origin"`
	Provenance  curate.Provenance   `json:"provenance,omitzero"`
	Credibility *curate.Credibility `json:"credibility,omitempty"`
}

func newSourcesListCmd(a *app) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list <theme>",
		Short: "List a theme's sources and what curate kept from each",
		Example: `  vibe sources list bazi
  vibe sources list bazi --json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ws, theme, err := a.theme(args)
			if err != nil {
				return err
			}
			f, err := curate.LoadFile(ws.CurateFile(theme))
			lock, lerr := curate.ReadLock(filepath.Join(ws.SourceDir(theme), curate.LockName))
			if errors.Is(err, curate.ErrNoCurateFile) && len(lock.Sources) == 0 {
				return withExit(exitFailure, withHint(fmt.Errorf("theme %s lists no sources: %s does not exist", theme, ws.Rel(ws.CurateFile(theme))),
					fmt.Sprintf("add one with `vibe curate %s --from PATH|DIR|'GLOB'|URL`", theme)))
			}
			if err != nil && !errors.Is(err, curate.ErrNoCurateFile) {
				return err
			}
			if lerr != nil {
				return lerr
			}
			list := listSources(ws.Root, ws.Rel(ws.SourceDir(theme))+"/", f.Sources, lock)
			ledger, err := knowledge.ReadLedger(ledgerPath(ws, theme))
			if err != nil {
				return err
			}
			for i := range list {
				list[i].Characters = figuresOf(ledger, ws, theme, list[i].Kept)
			}
			if asJSON {
				return printJSON(a.io.Out, list)
			}
			w := a.io.Out
			unjudged := ""
			for _, s := range list {
				fmt.Fprintf(w, "%s\n", s.Source)
				if s.Notes != "" {
					fmt.Fprintf(w, "    notes: %s\n", s.Notes)
				}
				if g := s.Git; g != nil {
					fmt.Fprintf(w, "    %s at %s, committed %s (%d files)\n", g.Ref, short(g.Commit), g.CommittedAt.Format("2006-01-02"), g.Files)
				}
				fmt.Fprintf(w, "    %d kept, %d dropped", len(s.Kept), s.Dropped)
				if s.Failed > 0 {
					fmt.Fprintf(w, " (%d failed)", s.Failed)
				}
				if len(s.Kept) > 0 {
					fmt.Fprintf(w, ": %s", nameList(s.Kept, 5))
				}
				fmt.Fprintln(w)
				if c := s.Characters; c != nil {
					src := "?"
					if c.Source > 0 {
						src = fmt.Sprint(c.Source)
					}
					fmt.Fprintf(w, "    characters: source %s -> converted %d -> chunked %d (%s) -> cited %d\n", src, c.Converted, c.Chunked, share(c.Chunked, c.Converted), c.Cited)
					if len(c.SetAside) > 0 {
						fmt.Fprintf(w, "    set aside: %s\n", strings.Join(c.SetAside, ", "))
					}
					if len(c.Added) > 0 {
						fmt.Fprintf(w, "    added: %s\n", strings.Join(c.Added, ", "))
					}
					for _, d := range c.Documents {
						if d.Status != knowledge.AccountOK {
							fmt.Fprintf(w, "    %s %s: %s\n", d.Status, filepath.Base(d.Doc), d.Note)
						}
					}
				} else if len(s.Kept) > 0 {
					fmt.Fprintf(w, "    characters: not ingested yet (run `vibe build %s`)\n", theme)
				}
				for _, f := range s.Files {
					c := f.Credibility
					if c == nil {
						continue
					}
					fmt.Fprintf(w, "    %s %.2f  %s\n", c.Grade, c.Score, f.File)
					for _, r := range c.Reasons {
						fmt.Fprintf(w, "           %s\n", r)
					}
					if c.Unjudged != "" {
						unjudged = c.Unjudged
					}
				}
			}
			if unjudged != "" {
				fmt.Fprintf(w, "(%s)\n", unjudged)
			}
			if err := printReadingList(w, ws.Rel, filepath.Join(ws.KnowledgeDir(theme), curate.ReadingListName)); err != nil {
				return err
			}
			if len(list) == 0 {
				fmt.Fprintf(a.io.ErrOut, "%s lists no sources; add one with `vibe curate %s --from PATH`\n", ws.Rel(ws.CurateFile(theme)), theme)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the list as JSON")
	return cmd
}

// listSources matches each listed source with the lock entries it produced;
// the files put into source/ by hand (origins under srcPrefix) come last.
func listSources(root, srcPrefix string, specs []curate.Spec, lock curate.Lock) []sourceListing {
	out := make([]sourceListing, 0, len(specs))
	for _, s := range specs {
		l := sourceListing{Source: s.Source, Notes: s.Notes, Kept: []string{}, Files: []sourceFile{}}
		for i, g := range lock.Git {
			if g.Source == s.Source {
				l.Git = &lock.Git[i]
			}
		}
		for _, e := range lock.Sources {
			if !curate.Owns(root, s.Source, e.Origin) {
				continue
			}
			switch {
			case e.Status == curate.StatusKept:
				l.Kept = append(l.Kept, e.File)
				l.Files = append(l.Files, sourceFile{File: e.File, Origin: e.Origin, Provenance: e.Provenance, Credibility: e.Credibility})
			case e.Failed:
				l.Failed++
				l.Dropped++
			default:
				l.Dropped++
			}
		}
		out = append(out, l)
	}
	// Files put into source/ by hand are sources of their own.
	hand := sourceListing{Source: "(put into source/ by hand)", Kept: []string{}, Files: []sourceFile{}}
	for _, e := range lock.Sources {
		owned := !strings.HasPrefix(e.Origin, srcPrefix)
		for _, s := range specs {
			owned = owned || curate.Owns(root, s.Source, e.Origin)
		}
		if owned {
			continue
		}
		switch {
		case e.Status == curate.StatusKept:
			hand.Kept = append(hand.Kept, e.File)
			hand.Files = append(hand.Files, sourceFile{File: e.File, Origin: e.Origin, Provenance: e.Provenance, Credibility: e.Credibility})
		case e.Failed:
			hand.Failed++
			hand.Dropped++
		default:
			hand.Dropped++
		}
	}
	if len(hand.Kept)+hand.Dropped > 0 {
		out = append(out, hand)
	}
	return out
}

func newSourcesRemoveCmd(a *app) *cobra.Command {
	var gather bool
	cmd := &cobra.Command{
		Use:   "remove <theme> <source>",
		Short: "Remove a source from curate.yaml (and, with --curate, its copies from source/)",
		Long: `Remove a source from knowledge/<theme>/curate.yaml, written exactly as
'vibe sources list' shows it. The copies gathered from it stay in source/ until
the next 'vibe curate' or 'vibe build' (or at once with --curate).`,
		Example: `  vibe sources remove bazi https://example.org/ziping.html
  vibe sources remove bazi books/old/ --curate`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			ws, theme, err := a.theme(args[:1])
			if err != nil {
				return err
			}
			unlock, err := a.lockTheme(theme)
			if err != nil {
				return err
			}
			defer unlock()
			src := strings.TrimSpace(args[1])
			file := ws.CurateFile(theme)
			err = curate.RemoveSource(file, src)
			if errors.Is(err, curate.ErrSourceNotListed) {
				// Accept the path as typed on the command line too.
				if rel := workspaceRelative(ws.Root, src); rel != src {
					err = curate.RemoveSource(file, rel)
					src = rel
				}
			}
			if errors.Is(err, curate.ErrSourceNotListed) {
				return withExit(exitFailure, withHint(err, fmt.Sprintf("`vibe sources list %s` shows the sources as listed", theme)))
			}
			if err != nil {
				return err
			}
			if !a.quiet {
				fmt.Fprintf(a.io.ErrOut, "removed %s from %s\n", src, ws.Rel(file))
			}
			if !gather {
				if !a.quiet {
					fmt.Fprintf(a.io.ErrOut, "its copies leave %s at the next `vibe curate %s` or `vibe build %s`\n", ws.Rel(ws.SourceDir(theme)), theme, theme)
				}
				return nil
			}
			return curateRun(cmd.Context(), &curateOptions{IO: a.io, Workspace: a.workspace, Config: a.config, Extract: a.convertText, ExtractDoc: a.convertDoc, Judge: a.curateJudge, Theme: theme, Quiet: a.quiet})
		},
	}
	cmd.Flags().BoolVar(&gather, "curate", false, "run curate right away, so the source's copies leave source/")
	return cmd
}

func newSourcesAcceptCmd(a *app) *cobra.Command {
	var undo bool
	cmd := &cobra.Command{
		Use:   "accept <theme> <id>...",
		Short: "Accept works of the theme's reading list (knowledge/<theme>/reading-list.yaml), so curate gathers them",
		Long: `Mark works of knowledge/<theme>/reading-list.yaml (proposed by
'vibe curate <theme> --suggest') as accepted. The next 'vibe curate <theme>'
or 'vibe build <theme>' gathers each accepted work from its source: (a path,
URL or git source you may write in the file), or from a copy the web search
of vibe.yaml finds; the copy goes into curate.yaml once it is kept. Works not
accepted are never gathered. The file keeps your comments and edits.`,
		Example: `  vibe sources accept bazi R1 R3
  vibe sources accept bazi R3 --undo`,
		Args: cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			ws, theme, err := a.theme(args[:1])
			if err != nil {
				return err
			}
			unlock, err := a.lockTheme(theme)
			if err != nil {
				return err
			}
			defer unlock()
			path := filepath.Join(ws.KnowledgeDir(theme), curate.ReadingListName)
			if _, err := curate.LoadReadingList(path); errors.Is(err, os.ErrNotExist) {
				return withExit(exitFailure, withHint(fmt.Errorf("theme %s has no reading list: %s does not exist", theme, ws.Rel(path)),
					fmt.Sprintf("have a model propose one with `vibe curate %s --suggest`", theme)))
			} else if err != nil {
				return err
			}
			ids := args[1:]
			var titles []string
			err = curate.UpdateWorks(path, ids, func(w *curate.Work) {
				w.Accepted = !undo
				titles = append(titles, w.ID+" "+w.Title)
			})
			if errors.Is(err, curate.ErrNoSuchWork) {
				return withExit(exitFailure, withHint(err, fmt.Sprintf("the ids are the id: fields of %s", ws.Rel(path))))
			}
			if err != nil {
				return err
			}
			if !a.quiet {
				verb := "accepted"
				if undo {
					verb = "no longer accepted (copies already gathered stay until you `vibe sources remove` them)"
				}
				fmt.Fprintf(a.io.ErrOut, "%s: %s\n", verb, strings.Join(titles, ", "))
				if !undo {
					fmt.Fprintf(a.io.ErrOut, "`vibe curate %s` gathers them\n", theme)
				}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&undo, "undo", false, "withdraw the acceptance instead")
	return cmd
}

// printReadingList sums up the theme's reading list, if it has one: the
// accepted works and where each is gathered from.
func printReadingList(w io.Writer, rel func(string) string, path string) error {
	l, err := curate.LoadReadingList(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	accepted := 0
	for _, wk := range l.Works {
		if wk.Accepted {
			accepted++
		}
	}
	fmt.Fprintf(w, "reading list (%s): %d works, %d accepted\n", rel(path), len(l.Works), accepted)
	for _, wk := range l.Works {
		if !wk.Accepted {
			continue
		}
		from := "no copy yet (name one with source:, or configure search: in vibe.yaml)"
		switch {
		case wk.Source != "" && wk.Query != "":
			from = fmt.Sprintf("%s (found by the search «%s» on %s)", wk.Source, wk.Query, wk.Found)
		case wk.Source != "":
			from = wk.Source
		case wk.Held != "":
			from = "held as " + wk.Held
		}
		fmt.Fprintf(w, "    %s %s: %s\n", wk.ID, wk.Title, from)
	}
	return nil
}
