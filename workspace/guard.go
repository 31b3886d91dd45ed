package workspace

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// ModulePath is vibe's own Go module: a workspace is never its source tree.
const ModulePath = "github.com/vibelife/vibe"

// SourceTreeError refuses a directory as a workspace because vibe would
// write its knowledge/ and skills/ into Go source (vibe's own, whose
// knowledge/ and skills/ are Go packages, or another module's).
type SourceTreeError struct {
	Dir    string
	Reason string
}

func (e *SourceTreeError) Error() string {
	return fmt.Sprintf("refusing to use %s as the workspace: %s", e.Dir, e.Reason)
}

// CheckNotSourceTree refuses dir as a workspace when it holds vibe's own
// source, or Go source where vibe writes (the directory itself, knowledge/
// or skills/). When the workspace was not named (the current directory),
// a directory anywhere inside a Go module is refused too: `vibe curate` run
// in a clone must not write knowledge/notes/ into the Go package knowledge/.
// A workspace named with --workspace inside some other module (a docs/
// folder of a project) is the user's choice and allowed.
func CheckNotSourceTree(dir string, named bool) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil
	}
	if mod := modulePath(filepath.Join(abs, "go.mod")); mod == ModulePath {
		return &SourceTreeError{abs, "it holds vibe's own source (the Go module " + ModulePath + "), whose knowledge/ and skills/ are Go packages"}
	}
	if !named {
		for d := abs; ; {
			if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
				what := "the Go module at " + d
				if modulePath(filepath.Join(d, "go.mod")) == ModulePath {
					what = "vibe's own source tree (" + d + ")"
				}
				return &SourceTreeError{abs, "it is inside " + what + ", and no --workspace was given"}
			}
			parent := filepath.Dir(d)
			if parent == d {
				break
			}
			d = parent
		}
	}
	for _, d := range []string{abs, filepath.Join(abs, "knowledge"), filepath.Join(abs, "skills")} {
		if hasGoFiles(d) {
			return &SourceTreeError{abs, fmt.Sprintf("%s holds Go source files, and vibe would write its own files there", d)}
		}
	}
	return nil
}

func modulePath(goMod string) string {
	f, err := os.Open(goMod)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "module "); ok {
			return strings.Trim(strings.TrimSpace(rest), `"`)
		}
	}
	return ""
}

func hasGoFiles(dir string) bool {
	es, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, e := range es {
		if !e.IsDir() && strings.HasSuffix(e.Name(), ".go") {
			return true
		}
	}
	return false
}
