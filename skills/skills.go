package skills

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"gopkg.in/yaml.v3"
)

//go:embed core/*.md
var coreFS embed.FS

// CoreName is the name of the always-loaded core skill.
const CoreName = "core"

// ErrNotFound is returned for an unknown skill or resource.
var ErrNotFound = errors.New("skills: not found")

// ErrInvalidName is returned for a skill whose name breaks the naming rule.
var ErrInvalidName = errors.New("skills: invalid skill name")

// MaxDescription is the longest description listed to the model in tier 1
// (skill-spec-v5: at most 512 characters); longer ones are cut there.
const MaxDescription = 512

var nameRe = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)

// reserved names a workspace skill may not take (core may only be overridden
// by skills/core/).
var reserved = map[string]bool{"system": true, "admin": true}

// ValidateName checks a skill name: lower-case letters, digits and single
// hyphens, at most 32 characters, not a reserved name.
func ValidateName(name string) error {
	switch {
	case name == "":
		return fmt.Errorf("%w: empty (give name: in the SKILL.md front matter)", ErrInvalidName)
	case len(name) > 32:
		return fmt.Errorf("%w: %q is longer than 32 characters", ErrInvalidName, name)
	case !nameRe.MatchString(name):
		return fmt.Errorf("%w: %q: use lower-case letters, digits and single hyphens, e.g. tarot-reading", ErrInvalidName, name)
	case reserved[name]:
		return fmt.Errorf("%w: %q is reserved", ErrInvalidName, name)
	}
	return nil
}

// Summary returns the tier-1 description: at most MaxDescription
// characters, on one line.
func (h Header) Summary() string {
	d := strings.Join(strings.Fields(h.Description), " ")
	if r := []rune(d); len(r) > MaxDescription {
		d = string(r[:MaxDescription-1]) + "…"
	}
	return d
}

// Header is the tier-1 front matter of a SKILL.md.
type Header struct {
	Name        string   `yaml:"name" json:"name"`
	Description string   `yaml:"description" json:"description"`
	Triggers    []string `yaml:"triggers" json:"triggers,omitempty"`
	// Theme is the knowledge theme searched for this skill (default: Name).
	Theme string `yaml:"theme,omitempty" json:"theme,omitempty"`
	// DisplayName is the name shown to people (the API's skill list, the
	// chat page); Name stays the identifier.
	DisplayName string `yaml:"display_name,omitempty" json:"display_name,omitempty"`
	// Version and Author are skill-spec-v5's optional metadata ("1.0.0").
	Version string `yaml:"version,omitempty" json:"version,omitempty"`
	Author  string `yaml:"author,omitempty" json:"author,omitempty"`
	// Requires names the skills this one builds on: each must be
	// installed (a missing one is a load error naming both), and
	// activating this skill activates them too.
	Requires []string `yaml:"requires,omitempty" json:"requires,omitempty"`
	// DeclaredTools (front matter `tools`), when given, lists the tools the skill uses: each is a tool of
	// its tools/tools.yaml or a core tool (BuiltinTools), and only the
	// listed tools of tools.yaml are offered while it is active.
	DeclaredTools []string `yaml:"tools,omitempty" json:"tools,omitempty"`
	// RequiresBirthInfo says the skill reads the user's birth data: while
	// the profile lacks identity.birth_info the runtime collects it first.
	RequiresBirthInfo bool `yaml:"requires_birth_info,omitempty" json:"requires_birth_info,omitempty"`
	// Examples are questions a person may ask the skill, in its languages:
	// the chat page's welcome offers them (vibe integrate takes them from
	// the theme's eval.yaml).
	Examples []string `yaml:"examples,omitempty" json:"examples,omitempty"`
}

// BuiltinTools are the names of the runtime's core tools, which a skill's
// front matter `tools` may list besides its own (the runtime's tests keep
// this list equal to the tools it offers).
var BuiltinTools = []string{"use_skill", "recommend_skills", "search_knowledge", "get_rules", "read_skill_resource",
	"get_user_profile", "upsert_user_profile", "save_skill_data", "collect_info", "show_report", "show_insight",
	"get_user_history", "get_conversation_summary"}

// Title returns the display name, or the name when there is none.
func (h Header) Title() string {
	if h.DisplayName != "" {
		return h.DisplayName
	}
	return h.Name
}

// Field is one parameter or card prop declared in tools.yaml.
type Field struct {
	Name        string `yaml:"name" json:"name"`
	Type        string `yaml:"type" json:"type"`
	Required    bool   `yaml:"required,omitempty" json:"required,omitempty"`
	Description string `yaml:"description,omitempty" json:"description,omitempty"`
	// Constraints, checked before a tool runs (Field.Check) and given to
	// the model in the function schema. Enum lists the allowed values;
	// Minimum and Maximum bound a number; Pattern is a regular expression
	// (RE2) a string must match; Format is date, date-time, time, email or
	// uri; NotFuture refuses a date or date-time after now; Default fills
	// a missing argument.
	Enum      []any    `yaml:"enum,omitempty" json:"enum,omitempty"`
	Minimum   *float64 `yaml:"minimum,omitempty" json:"minimum,omitempty"`
	Maximum   *float64 `yaml:"maximum,omitempty" json:"maximum,omitempty"`
	Pattern   string   `yaml:"pattern,omitempty" json:"pattern,omitempty"`
	Format    string   `yaml:"format,omitempty" json:"format,omitempty"`
	NotFuture bool     `yaml:"not_future,omitempty" json:"not_future,omitempty"`
	Default   any      `yaml:"default,omitempty" json:"default,omitempty"`
}

// Plugin says how a compute tool is run: an HTTP endpoint (POST JSON) or a
// local command (JSON on stdin, JSON on stdout). Timeout is a Go duration
// ("10s"), default 30s.
//
// A command runs with an empty environment: PATH (a safe default unless
// listed) plus the server's variables Env names, nothing else; it runs in
// its skill's directory.
type Plugin struct {
	URL     string   `yaml:"url,omitempty" json:"url,omitempty"`
	Command []string `yaml:"command,omitempty" json:"command,omitempty"`
	Timeout string   `yaml:"timeout,omitempty" json:"timeout,omitempty"`
	// Env names the environment variables a command plugin receives from
	// the server's (TZ, LANG, BAZI_DATA ...); no others are passed.
	Env []string `yaml:"env,omitempty" json:"env,omitempty"`
}

// Tool is one skill-level tool from tools/tools.yaml.
type Tool struct {
	Name        string  `yaml:"name" json:"name"`
	Type        string  `yaml:"type" json:"type"` // compute|random|collect|display|retrieve|flow
	Description string  `yaml:"description" json:"description"`
	CardType    string  `yaml:"card_type,omitempty" json:"card_type,omitempty"`
	CardProps   []Field `yaml:"card_props,omitempty" json:"card_props,omitempty"`
	WhenToCall  string  `yaml:"when_to_call,omitempty" json:"when_to_call,omitempty"`
	Parameters  []Field `yaml:"parameters,omitempty" json:"parameters,omitempty"`
	Returns     []Field `yaml:"returns,omitempty" json:"returns,omitempty"`
	Plugin      *Plugin `yaml:"plugin,omitempty" json:"plugin,omitempty"`
	// Draw is what a random tool draws from.
	Draw *Draw `yaml:"draw,omitempty" json:"draw,omitempty"`
	// Steps are a flow tool's steps; its state lives in the user's skill
	// data (skill_data.<skill>.flows.<tool>).
	Steps []FlowStep `yaml:"steps,omitempty" json:"steps,omitempty"`
	// Form lists the fields a collect tool's form asks for; Prompt is the
	// sentence shown to the user above it (the description is the
	// model's, and is never shown).
	Form   []Field `yaml:"form,omitempty" json:"form,omitempty"`
	Prompt string  `yaml:"prompt,omitempty" json:"prompt,omitempty"`
	// Sources scope a retrieve tool's search to some of the theme's
	// sources (matched against a passage's source path or document name);
	// none searches them all.
	Sources []string `yaml:"sources,omitempty" json:"sources,omitempty"`
	// Version is part of a compute tool's result-cache key: change it when
	// the plugin's answers change. Cache: false keeps a compute tool whose
	// answer is not a function of its arguments (the time of day) out of
	// the cache.
	Version string `yaml:"version,omitempty" json:"version,omitempty"`
	Cache   *bool  `yaml:"cache,omitempty" json:"cache,omitempty"`

	// Card, on a display tool, is the skill's own layout of its card
	// (CardTemplate); without one the page shows the props as a table.
	Card *CardTemplate `yaml:"card,omitempty" json:"card,omitempty"`
}

// Protocol is a rules/*.md protocol file: pulled into the prompt when the
// conversation matches one of its triggers.
type Protocol struct {
	Name     string   `yaml:"name" json:"name"`
	Triggers []string `yaml:"triggers" json:"triggers"`
	// Steps, when given, are markers whose presence in the history tells
	// how far the protocol has progressed.
	Steps []string `yaml:"steps,omitempty" json:"steps,omitempty"`
	Path  string   `yaml:"-" json:"path"`
	Body  string   `yaml:"-" json:"-"`
}

// Skill is one loaded skill.
type Skill struct {
	Header
	// Body is the SKILL.md body without front matter (tier 2).
	Body      string
	Tools     []Tool
	Protocols []Protocol
	// Embedded is true for the built-in core skill.
	Embedded bool
	fsys     fs.FS
	// dir is the skill's directory on disk ("" for the embedded core).
	dir string
}

var (
	htmlComment = regexp.MustCompile(`(?s)<!--.*?-->`)
	blankRun    = regexp.MustCompile(`\n{3,}`)
)

// Instructions returns the tier-2 text given to the model: the body without
// HTML comments (such as the markers vibe integrate keeps its generated
// regions between), which would only cost tokens.
func (s *Skill) Instructions() string {
	b := htmlComment.ReplaceAllString(s.Body, "")
	return strings.TrimSpace(blankRun.ReplaceAllString(b, "\n\n"))
}

// ReadResource returns a file of the skill by relative path (tier 3).
func (s *Skill) ReadResource(rel string) ([]byte, error) {
	clean := path.Clean(filepath.ToSlash(rel))
	if clean == "." || strings.HasPrefix(clean, "../") || clean == ".." || path.IsAbs(clean) {
		return nil, fmt.Errorf("skill %s resource %q: %w (use a path inside the skill)", s.Name, rel, ErrNotFound)
	}
	b, err := fs.ReadFile(s.fsys, clean)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("skill %s resource %q: %w", s.Name, rel, ErrNotFound)
	case err != nil:
		// Chiefly a link leading out of the skill directory (os.Root's
		// "path escapes from parent"): refused, not followed.
		return nil, fmt.Errorf("skill %s resource %q: %w: refused: %v", s.Name, rel, ErrNotFound, err)
	}
	return b, nil
}

// Resources lists the skill's files (tier 3 index). A symbolic link is
// listed only when it resolves inside the skill directory.
func (s *Skill) Resources() []string {
	var out []string
	_ = fs.WalkDir(s.fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		if d.Type()&fs.ModeSymlink != 0 {
			if fi, err := fs.Stat(s.fsys, p); err != nil || fi.IsDir() {
				return nil
			}
		}
		out = append(out, p)
		return nil
	})
	return out
}

// DirFS returns a file system over the skill directory dir that opens every
// path through an [os.Root]: a symbolic link, or "..", leading out of the
// directory is refused (os.DirFS would follow it, and skills may come from
// third parties), while links between the skill's own files still work.
func DirFS(dir string) fs.FS { return rootFS(dir) }

type rootFS string

func (d rootFS) Open(name string) (fs.File, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	// One Root per open: a Set reloads its skills while requests still
	// read the previous ones, so there is no moment to close a shared one.
	// The opened file stays valid once the Root is closed.
	r, err := os.OpenRoot(string(d))
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return r.Open(name)
}

// FS returns the skill directory's file system.
func (s *Skill) FS() fs.FS { return s.fsys }

// Dir returns the skill's directory on disk ("" for the embedded core skill
// and a skill loaded from another file system).
func (s *Skill) Dir() string { return s.dir }

// Tool returns the skill tool with that name.
func (s *Skill) Tool(name string) (Tool, bool) {
	for _, t := range s.Tools {
		if t.Name == name {
			return t, true
		}
	}
	return Tool{}, false
}

// SplitFrontMatter splits "---\nYAML\n---\nbody" into its two parts.
func SplitFrontMatter(b []byte) (front, body []byte, ok bool) {
	b = bytes.TrimPrefix(b, []byte("\ufeff"))
	s := strings.ReplaceAll(string(b), "\r\n", "\n")
	if !strings.HasPrefix(s, "---\n") {
		return nil, []byte(s), false
	}
	rest := s[4:]
	i := strings.Index(rest, "\n---")
	if i < 0 {
		return nil, []byte(s), false
	}
	body0 := rest[i+4:]
	body0 = strings.TrimPrefix(body0, "\n")
	return []byte(rest[:i]), []byte(body0), true
}

// LoadFS loads one skill from a file system rooted at the skill directory.
// name is used when SKILL.md does not give one.
func LoadFS(fsys fs.FS, name, where string) (*Skill, error) {
	raw, err := fs.ReadFile(fsys, "SKILL.md")
	if err != nil {
		return nil, fmt.Errorf("load skill %s: %w (every skill needs a SKILL.md)", where, err)
	}
	front, body, ok := SplitFrontMatter(raw)
	sk := &Skill{fsys: fsys, Body: strings.TrimSpace(string(body))}
	if ok {
		if err := yaml.Unmarshal(front, &sk.Header); err != nil {
			return nil, fmt.Errorf("load skill %s: SKILL.md front matter: %w", where, err)
		}
	}
	if sk.Name == "" {
		sk.Name = name
	}
	if sk.Theme == "" {
		sk.Theme = sk.Name
	}
	if b, err := fs.ReadFile(fsys, "tools/tools.yaml"); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("load skill %s: tools/tools.yaml: %w", where, err)
	} else if err == nil {
		var tf struct {
			Tools []Tool `yaml:"tools"`
		}
		if err := yaml.Unmarshal(b, &tf); err != nil {
			return nil, fmt.Errorf("load skill %s: tools/tools.yaml: %w", where, err)
		}
		for i, t := range tf.Tools {
			if t.Name == "" || t.Type == "" {
				return nil, fmt.Errorf("load skill %s: tools/tools.yaml: tools[%d]: name and type are required", where, i)
			}
			if t.Type == TypeCompute {
				// A compute tool without a plugin loads (vibe check fails
				// on it; calling it says what to add).
				continue
			}
			if is := t.Issues(fsys); len(is) > 0 {
				return nil, fmt.Errorf("load skill %s: tools/tools.yaml: tools[%d].%s: %s (a tool an older vibe integrate generated goes on the next run of it; vibe check %s lists every problem)", where, i, is[0].Field, is[0].Message, filepath.Base(where))
			}
		}
		sk.Tools = tf.Tools
	}
	if err := checkFrontTools(sk); err != nil {
		return nil, fmt.Errorf("load skill %s: SKILL.md front matter: %w", where, err)
	}
	if err := CheckExamples(sk.Examples); err != nil {
		return nil, fmt.Errorf("load skill %s: SKILL.md front matter: %w", where, err)
	}
	entries, err := fs.ReadDir(fsys, "rules")
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("load skill %s: rules/: %w", where, err)
	}
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".md") {
			continue
		}
		p := "rules/" + e.Name()
		b, err := fs.ReadFile(fsys, p)
		if err != nil {
			return nil, fmt.Errorf("load skill %s: %s: %w", where, p, err)
		}
		front, body, ok := SplitFrontMatter(b)
		pr := Protocol{Path: p, Body: strings.TrimSpace(string(body))}
		if ok {
			if err := yaml.Unmarshal(front, &pr); err != nil {
				return nil, fmt.Errorf("load skill %s: %s front matter: %w", where, p, err)
			}
		}
		if pr.Name == "" {
			pr.Name = strings.TrimSuffix(e.Name(), ".md")
		}
		sk.Protocols = append(sk.Protocols, pr)
	}
	return sk, nil
}

// Core returns the embedded core skill.
func Core() *Skill {
	sub, _ := fs.Sub(coreFS, "core")
	sk, err := LoadFS(sub, CoreName, "core (embedded)")
	if err != nil {
		panic(err) // the embedded files are part of the binary
	}
	sk.Embedded = true
	return sk
}

// Set is the loaded skills of a workspace, reloaded when files change.
type Set struct {
	root     string
	interval time.Duration
	now      func() time.Time

	// reloading is held by the one caller that checks and reloads; others
	// go on with the skills they have.
	reloading sync.Mutex

	mu      sync.RWMutex
	skills  map[string]*Skill
	router  *router
	stamp   string
	checked time.Time
	// OnError, when set, receives a skill that failed to load; the other
	// skills still load. Without it the first error fails Load.
	onError func(dir string, err error)
}

// Options configure a Set.
type Options struct {
	// Interval between stat checks for changes (default 2s; negative: every call).
	Interval time.Duration
	// OnError receives per-skill load errors; the skill is skipped.
	OnError func(dir string, err error)
	Now     func() time.Time
}

// Open loads every skill under root (root/<name>/SKILL.md) plus the core
// skill. A missing root gives only the core skill.
func Open(root string, opts Options) (*Set, error) {
	s := &Set{root: root, interval: opts.Interval, now: opts.Now, onError: opts.OnError}
	if s.interval == 0 {
		s.interval = 2 * time.Second
	}
	if s.now == nil {
		s.now = time.Now
	}
	if err := s.reload(); err != nil {
		return nil, err
	}
	return s, nil
}

// Root returns the directory the skills are loaded from.
func (s *Set) Root() string { return s.root }

// stampOf summarises the modification times and sizes of every file.
func (s *Set) stampOf() string {
	var sb strings.Builder
	_ = filepath.WalkDir(s.root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if info, err := d.Info(); err == nil && !d.IsDir() {
			fmt.Fprintf(&sb, "%s|%d|%d\n", p, info.ModTime().UnixNano(), info.Size())
		}
		return nil
	})
	return sb.String()
}

func (s *Set) reload() error {
	stamp := s.stampOf()
	m := map[string]*Skill{CoreName: Core()}
	entries, err := os.ReadDir(s.root)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("load skills %s: %w", s.root, err)
	}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		dir := filepath.Join(s.root, e.Name())
		if _, err := os.Stat(filepath.Join(dir, "SKILL.md")); err != nil {
			continue
		}
		sk, err := LoadFS(DirFS(dir), e.Name(), dir)
		if err == nil {
			err = checkLoaded(sk, e.Name(), dir, m)
		}
		if err != nil {
			if s.onError != nil {
				s.onError(dir, err)
				continue
			}
			return err
		}
		sk.dir = dir
		m[sk.Name] = sk
	}
	for _, err := range resolveRequires(m) {
		if s.onError == nil {
			return err
		}
		s.onError(filepath.Join(s.root, err.skill), err)
	}
	r := newRouter(m, func(name string, err error) {
		if s.onError != nil {
			s.onError(filepath.Join(s.root, name), fmt.Errorf("routing vocabulary: %w", err))
		}
	})
	s.mu.Lock()
	s.skills, s.router, s.stamp, s.checked = m, r, stamp, s.now()
	s.mu.Unlock()
	return nil
}

// checkLoaded refuses a skill whose name breaks the naming rule, that claims
// the core name outside skills/core/, or whose name another directory
// already took.
func checkLoaded(sk *Skill, dirName, dir string, loaded map[string]*Skill) error {
	if err := ValidateName(sk.Name); err != nil {
		return fmt.Errorf("load skill %s: %w", dir, err)
	}
	if sk.Name == CoreName && dirName != CoreName {
		return fmt.Errorf("load skill %s: the name core belongs to the core skill; override it in skills/core/ or rename this one", dir)
	}
	if prev, ok := loaded[sk.Name]; ok && !prev.Embedded {
		return fmt.Errorf("load skill %s: another skill directory is already named %q; names must be unique", dir, sk.Name)
	}
	return nil
}

// Refresh reloads the skills if any file changed since the last check and the
// check interval has passed. It is cheap to call on every request and safe
// for concurrent use: one caller checks, the others keep the current skills
// meanwhile.
func (s *Set) Refresh() error {
	if !s.reloading.TryLock() {
		return nil
	}
	defer s.reloading.Unlock()
	s.mu.RLock()
	due := s.interval < 0 || s.now().Sub(s.checked) >= s.interval
	stamp := s.stamp
	s.mu.RUnlock()
	if !due {
		return nil
	}
	if s.stampOf() == stamp {
		s.mu.Lock()
		s.checked = s.now()
		s.mu.Unlock()
		return nil
	}
	return s.reload()
}

// Get returns a skill by name.
func (s *Set) Get(name string) (*Skill, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	sk, ok := s.skills[name]
	if !ok {
		return nil, fmt.Errorf("skill %q: %w (see `vibe serve` GET /api/skills for the list)", name, ErrNotFound)
	}
	return sk, nil
}

// Headers returns the tier-1 headers of every skill except core, by name.
func (s *Set) Headers() []Header {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]Header, 0, len(s.skills))
	for _, sk := range s.skills {
		if sk.Name != CoreName {
			out = append(out, sk.Header)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
