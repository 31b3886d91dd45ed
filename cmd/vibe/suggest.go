package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/vibelife/vibe/workspace"
)

// nearest is the candidate closest to s by edit distance, when it is close
// enough to be a slip (a letter or two, and under half of s), or "".
func nearest(s string, candidates []string) string {
	best, bestD := "", -1
	for _, c := range candidates {
		if c == s {
			continue
		}
		d := workspace.EditDistance(strings.ToLower(s), strings.ToLower(c))
		if bestD < 0 || d < bestD {
			best, bestD = c, d
		}
	}
	if bestD < 0 || bestD > 2 || 2*bestD >= len([]rune(s)) {
		return ""
	}
	return best
}

// themesIn lists the themes of a workspace: the directories of knowledge/
// and skills/ (but the core skill).
func themesIn(ws *workspace.Workspace) []string {
	var out []string
	for _, d := range []string{filepath.Join(ws.Root, "knowledge"), filepath.Join(ws.Root, "skills")} {
		es, _ := os.ReadDir(d)
		for _, e := range es {
			if e.IsDir() && e.Name() != "core" && !strings.HasPrefix(e.Name(), ".") && !slices.Contains(out, e.Name()) {
				out = append(out, e.Name())
			}
		}
	}
	slices.Sort(out)
	return out
}

// nearThemeError refuses a theme the workspace does not hold when another
// one it holds is a slip away (bazzi for bazi): one message naming it and
// the command to run, instead of a build or search of an empty theme.
func nearThemeError(ws *workspace.Workspace, cmdPath, theme string) error {
	for _, d := range []string{ws.KnowledgeDir(theme), filepath.Join(ws.Root, "skills", theme)} {
		if _, err := os.Stat(d); err == nil {
			return nil
		}
	}
	near := nearest(theme, themesIn(ws))
	if near == "" {
		return nil
	}
	return withExit(exitError, withHint(
		fmt.Errorf("no theme %q in this workspace; did you mean %q? Run: %s %s", theme, near, cmdPath, near),
		fmt.Sprintf("the workspace (%s) holds the themes %s; `vibe curate %s --from DIR` starts a new theme of that name", ws.Root, strings.Join(themesIn(ws), ", "), theme)))
}

var unknownFlagRe = regexp.MustCompile(`^unknown flag: --(\S+)`)

// flagErrorWithSuggestion is cobra's flag error function: an unknown long
// flag is reported with the nearest flag the command has.
func flagErrorWithSuggestion(c *cobra.Command, err error) error {
	m := unknownFlagRe.FindStringSubmatch(err.Error())
	if m == nil {
		return &flagError{err}
	}
	var names []string
	visit := func(f *pflag.Flag) {
		if !f.Hidden && !slices.Contains(names, f.Name) {
			names = append(names, f.Name)
		}
	}
	c.Flags().VisitAll(visit)
	c.InheritedFlags().VisitAll(visit)
	if near := nearest(m[1], names); near != "" {
		return &flagError{withHint(fmt.Errorf("unknown flag --%s: did you mean --%s?", m[1], near), fmt.Sprintf("`%s --help` lists its flags", c.CommandPath()))}
	}
	return &flagError{withHint(fmt.Errorf("unknown flag --%s", m[1]), fmt.Sprintf("`%s --help` lists its flags", c.CommandPath()))}
}

var argNameRe = regexp.MustCompile(`<([^>]+)>`)

// namedArgs wraps a command's argument check so a missing argument is named,
// with an example from the command's own, instead of cobra's "accepts 1
// arg(s), received 0".
func namedArgs(c *cobra.Command) {
	check := c.Args
	if check == nil {
		return
	}
	c.Args = func(cmd *cobra.Command, args []string) error {
		err := check(cmd, args)
		if err == nil {
			return nil
		}
		names := argNameRe.FindAllStringSubmatch(cmd.Use, -1)
		if len(args) < len(names) {
			missing := names[len(args)][1]
			example := ""
			for _, l := range strings.Split(cmd.Example, "\n") {
				l = strings.TrimSpace(l)
				if strings.HasPrefix(l, "vibe ") && len(strings.Fields(l)) > len(args)+2 {
					example = l
					if i := strings.Index(example, "  #"); i >= 0 {
						example = strings.TrimSpace(example[:i])
					}
					break
				}
			}
			msg := fmt.Sprintf("%s: missing the %s argument", strings.TrimPrefix(cmd.CommandPath(), "vibe "), missing)
			if example != "" {
				msg += fmt.Sprintf(", e.g. `%s`", example)
			}
			if missing == "theme" {
				msg += " (a theme is a name under knowledge/)"
			}
			return &flagError{withHint(errors.New(msg), fmt.Sprintf("`%s --help` shows its usage", cmd.CommandPath()))}
		}
		return &flagError{withHint(fmt.Errorf("%s: %v", strings.TrimPrefix(cmd.CommandPath(), "vibe "), err), fmt.Sprintf("usage: %s (`%s --help` for more)", cmd.UseLine(), cmd.CommandPath()))}
	}
}
