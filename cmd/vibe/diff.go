package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/vibelife/vibe/integrate"
)

func newDiffCmd(a *app) *cobra.Command {
	var against string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "diff <theme>",
		Short: "Show how a theme's knowledge changed between two builds",
		Long: `Show a readable change log of skills/<theme>/knowledge and tools/tools.yaml
between the working tree and another build: rules added, removed, reworded or
re-tiered, SOP steps changed, patterns changed, citations moved, tools added,
removed or changed (type, description, when_to_call, parameters, returns, card
type and props, plugin).

--against is a git revision (read with git show REV:path; default HEAD) or a
directory holding another build's skill (skills/<theme>, or its knowledge/
with the tools read from ../tools/). A build without tools/tools.yaml has no
tools, so every tool of the other shows as added or removed.

--json prints a list of {kind, area (rule|step|pattern|tool), item, detail,
fields (what changed in a tool)}.`,
		Example: `  vibe diff bazi                      # against HEAD
  vibe diff bazi --against origin/main --json
  vibe diff bazi --against /backup/skills/bazi`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			_, theme, err := a.theme(args)
			if err != nil {
				return err
			}
			return a.runDiff(cmd.Context(), theme, against, asJSON)
		},
	}
	cmd.Flags().StringVar(&against, "against", "HEAD", "git revision or directory of the other build")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the changes as JSON")
	return cmd
}

// dirReader reads a build's files (integrate.SnapshotFiles) from a skill
// directory, or from a knowledge directory and the tools/ beside it.
func dirReader(dir string) func(string) ([]byte, bool, error) {
	root := dir
	if _, err := os.Stat(filepath.Join(dir, "knowledge")); err != nil {
		root = filepath.Dir(dir)
	}
	return func(name string) ([]byte, bool, error) {
		p := filepath.Join(root, name)
		if k, ok := strings.CutPrefix(name, "knowledge/"); ok && root != dir {
			p = filepath.Join(dir, k)
		}
		data, err := os.ReadFile(p)
		if errors.Is(err, os.ErrNotExist) {
			return nil, false, nil
		}
		return data, err == nil, err
	}
}

func gitReader(ctx context.Context, root, rev, rel string) func(string) ([]byte, bool, error) {
	return func(name string) ([]byte, bool, error) {
		var out, errb bytes.Buffer
		c := exec.CommandContext(ctx, "git", "show", rev+":./"+filepath.ToSlash(filepath.Join(rel, name)))
		c.Dir = root
		c.Stdout, c.Stderr = &out, &errb
		if err := c.Run(); err != nil {
			msg := errb.String()
			if bytes.Contains(errb.Bytes(), []byte("does not exist")) || bytes.Contains(errb.Bytes(), []byte("exists on disk, but not in")) {
				return nil, false, nil
			}
			return nil, false, fmt.Errorf("git show %s:%s: %v: %s", rev, filepath.Join(rel, name), err, msg)
		}
		return out.Bytes(), true, nil
	}
}

func (a *app) runDiff(ctx context.Context, theme, against string, asJSON bool) error {
	ws, err := a.workspace()
	if err != nil {
		return err
	}
	cur, err := integrate.ParseSnapshot(dirReader(ws.SkillDir(theme)))
	if err != nil {
		return fmt.Errorf("diff %s: %w", theme, err)
	}
	var read func(string) ([]byte, bool, error)
	if st, err := os.Stat(against); err == nil && st.IsDir() {
		read = dirReader(against)
	} else {
		rel := ws.Rel(ws.SkillDir(theme))
		if filepath.IsAbs(rel) {
			return withExit(exitError, fmt.Errorf("diff %s: --against %q is not a directory, and the workspace is not inside a git repository path", theme, against))
		}
		read = gitReader(ctx, ws.Root, against, rel)
	}
	old, err := integrate.ParseSnapshot(read)
	if err != nil {
		return withExit(exitError, withHint(fmt.Errorf("diff %s against %s: %w", theme, against, err), "give a git revision (e.g. HEAD~1) or a directory"))
	}
	changes := integrate.Diff(old, cur)
	if asJSON {
		if changes == nil {
			changes = []integrate.Change{}
		}
		return printJSON(a.io.Out, changes)
	}
	return integrate.WriteDiff(a.io.Out, changes)
}
