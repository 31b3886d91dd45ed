package workspace

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
)

// ErrInvalidTheme is returned by [ValidateTheme] for names that are not usable
// as a theme.
var ErrInvalidTheme = errors.New("invalid theme name")

var themeRe = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)

// MaxThemeLen is the longest theme name accepted.
const MaxThemeLen = 32

// ValidateTheme reports whether name is a valid theme: lowercase ASCII letters,
// digits and single hyphens, starting and ending with a letter or digit, at most
// [MaxThemeLen] characters.
func ValidateTheme(name string) error {
	switch {
	case name == "":
		return fmt.Errorf("%w: empty; use lowercase letters, digits and hyphens, e.g. \"bazi\"", ErrInvalidTheme)
	case len(name) > MaxThemeLen:
		return fmt.Errorf("%w %q: %d characters, at most %d allowed", ErrInvalidTheme, name, len(name), MaxThemeLen)
	case !themeRe.MatchString(name):
		return fmt.Errorf("%w %q: use lowercase letters, digits and single hyphens (e.g. \"tarot\", \"feng-shui\")", ErrInvalidTheme, name)
	}
	return nil
}

// Workspace is a vibe workspace rooted at Root. Its methods only compute paths;
// they never touch the disk unless their name says so.
type Workspace struct {
	// Root is the absolute path of the workspace directory.
	Root string
}

// Open returns the workspace rooted at dir (made absolute). The directory must
// exist.
func Open(dir string) (*Workspace, error) {
	if dir == "" {
		dir = "."
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("workspace %s: %w", dir, err)
	}
	st, err := os.Stat(abs)
	if err != nil {
		return nil, fmt.Errorf("workspace %s: %w (create it, or pass --workspace DIR)", abs, err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("workspace %s: not a directory", abs)
	}
	return &Workspace{Root: abs}, nil
}

// ConfigPath is the path of vibe.yaml.
func (w *Workspace) ConfigPath() string { return filepath.Join(w.Root, "vibe.yaml") }

// KnowledgeDir is knowledge/<theme>.
func (w *Workspace) KnowledgeDir(theme string) string {
	return filepath.Join(w.Root, "knowledge", theme)
}

// CurateFile is knowledge/<theme>/curate.yaml.
func (w *Workspace) CurateFile(theme string) string {
	return filepath.Join(w.KnowledgeDir(theme), "curate.yaml")
}

// SourceDir is knowledge/<theme>/source, where gathered originals live.
func (w *Workspace) SourceDir(theme string) string {
	return filepath.Join(w.KnowledgeDir(theme), "source")
}

// LockFile is knowledge/<theme>/source/sources.lock.json.
func (w *Workspace) LockFile(theme string) string {
	return filepath.Join(w.SourceDir(theme), "sources.lock.json")
}

// ConvertedDir is knowledge/<theme>/converted, one Markdown file per source.
func (w *Workspace) ConvertedDir(theme string) string {
	return filepath.Join(w.KnowledgeDir(theme), "converted")
}

// SkillDir is skills/<theme>.
func (w *Workspace) SkillDir(theme string) string {
	return filepath.Join(w.Root, "skills", theme)
}

// SkillsRoot is skills/.
func (w *Workspace) SkillsRoot() string { return filepath.Join(w.Root, "skills") }

// SkillKnowledgeDir is skills/<theme>/knowledge, holding sop.yaml,
// patterns.yaml and rules.yaml.
func (w *Workspace) SkillKnowledgeDir(theme string) string {
	return filepath.Join(w.SkillDir(theme), "knowledge")
}

// StateDir is .vibe, for the embedded store and caches.
func (w *Workspace) StateDir() string { return filepath.Join(w.Root, ".vibe") }

// CacheDir is .vibe/cache/<name>.
func (w *Workspace) CacheDir(name string) string {
	return filepath.Join(w.StateDir(), "cache", name)
}

// Rel returns path relative to the workspace root, with forward slashes, or
// path itself when it lies outside the workspace.
func (w *Workspace) Rel(path string) string {
	rel, err := filepath.Rel(w.Root, path)
	if err != nil || rel == ".." || len(rel) > 2 && rel[:3] == ".."+string(filepath.Separator) {
		return filepath.ToSlash(path)
	}
	return filepath.ToSlash(rel)
}
