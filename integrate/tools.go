package integrate

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/vibelife/vibe/knowledge"
	"github.com/vibelife/vibe/knowledge/schema"
	"github.com/vibelife/vibe/skills"
)

// ToolsFile is the shape of a tools.yaml (design §8.5; schema in
// knowledge/schema/tools.schema.json): both the generated
// skills/<theme>/tools/tools.yaml the runtime reads and the hand-written
// knowledge/<theme>/tools.yaml a knowledge engineer declares the theme's own
// tools in. The tool type is the runtime's, so nothing a hand declaration
// says (a plugin, a card) is lost on the way.
type ToolsFile struct {
	Tools []skills.Tool `yaml:"tools" json:"tools"`
}

// DeclaredToolsName is the file name of the hand-written tool declarations
// in knowledge/<theme>/.
const DeclaredToolsName = "tools.yaml"

// ToolProblem is one thing wrong with a tools.yaml, located in the file.
type ToolProblem struct {
	Line, Column int
	// Tool names the tool concerned ("" for the whole file).
	Tool string
	// Severity is SevError or SevWarning.
	Severity Severity
	Check    string
	Message  string
}

// ToolsFileError reports the errors of a hand-written tools.yaml.
type ToolsFileError struct {
	Path     string
	Problems []ToolProblem
}

func (e *ToolsFileError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %d problem(s) in the tool declarations", e.Path, len(e.Problems))
	for _, p := range e.Problems {
		fmt.Fprintf(&b, "\n  %s:%d:%d: %s", e.Path, p.Line, p.Column, p.Message)
	}
	return b.String()
}

// toolsDoc is a parsed tools.yaml with the position of each tool and field.
type toolsDoc struct {
	file ToolsFile
	// at[i] is the position of tools[i]; fields[i] of each of its keys.
	at     []pos
	fields []map[string]pos
}

func (d *toolsDoc) pos(i int, field string) pos {
	if i < 0 || i >= len(d.at) {
		return pos{1, 1}
	}
	if p, ok := d.fields[i][field]; ok && field != "" {
		return p
	}
	return d.at[i]
}

// parseTools validates data against the tools schema and the rules the
// runtime relies on. It returns the decoded file (nil when it cannot be
// decoded) and every problem found.
func parseTools(data []byte) (*toolsDoc, []ToolProblem) {
	var probs []ToolProblem
	sp, err := schema.ValidateYAML(schema.Tools, data)
	if err != nil {
		return nil, []ToolProblem{{Line: 1, Column: 1, Severity: SevError, Check: "schema.invalid", Message: err.Error()}}
	}
	for _, p := range sp {
		at := p.Path
		if at == "" {
			at = "/"
		}
		probs = append(probs, ToolProblem{Line: p.Line, Column: p.Column, Severity: SevError, Check: "schema.invalid", Message: at + ": " + p.Message})
	}
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		if len(probs) == 0 {
			probs = append(probs, ToolProblem{Line: yamlErrPos(err).Line, Column: 1, Severity: SevError, Check: "schema.yaml-syntax", Message: "invalid YAML: " + err.Error()})
		}
		return nil, probs
	}
	d := &toolsDoc{}
	if err := root.Decode(&d.file); err != nil {
		if len(probs) == 0 {
			probs = append(probs, ToolProblem{Line: yamlErrPos(err).Line, Column: 1, Severity: SevError, Check: "schema.invalid", Message: "does not match the tools.yaml schema: " + err.Error()})
		}
		return nil, probs
	}
	if len(root.Content) > 0 && root.Content[0].Kind == yaml.MappingNode {
		m := root.Content[0]
		for i := 0; i+1 < len(m.Content); i += 2 {
			if m.Content[i].Value != "tools" || m.Content[i+1].Kind != yaml.SequenceNode {
				continue
			}
			for _, t := range m.Content[i+1].Content {
				d.at = append(d.at, pos{t.Line, t.Column})
				f := map[string]pos{}
				for j := 0; j+1 < len(t.Content); j += 2 {
					k, v := t.Content[j].Value, t.Content[j+1]
					f[k] = pos{v.Line, v.Column}
					if k == "plugin" && v.Kind == yaml.MappingNode {
						for l := 0; l+1 < len(v.Content); l += 2 {
							f["plugin."+v.Content[l].Value] = pos{v.Content[l+1].Line, v.Content[l+1].Column}
						}
					}
				}
				d.fields = append(d.fields, f)
			}
		}
	}
	if len(sp) > 0 {
		return d, probs // the semantic checks below assume a schema-valid file
	}
	return d, append(probs, toolSemantics(d)...)
}

// toolSemantics finds what the schema cannot: duplicate names, names that
// shadow core tools, and plugins the runtime could not run.
func toolSemantics(d *toolsDoc) []ToolProblem {
	var probs []ToolProblem
	add := func(i int, field string, sev Severity, check, tool, format string, args ...any) {
		p := d.pos(i, field)
		probs = append(probs, ToolProblem{Line: p.Line, Column: p.Column, Tool: tool, Severity: sev, Check: check, Message: fmt.Sprintf(format, args...)})
	}
	first := map[string]int{}
	for i, t := range d.file.Tools {
		if j, ok := first[t.Name]; ok {
			add(i, "name", SevError, "tools.duplicate", t.Name, "tool %s is declared twice (first at line %d): keep one declaration", t.Name, d.pos(j, "").Line)
			continue
		}
		first[t.Name] = i
		if isCoreTool(t.Name) {
			add(i, "name", SevError, "tools.core-name", t.Name, "tool %s has the name of a core tool, which every skill already has: choose another name", t.Name)
		}
		if p := t.Plugin; p != nil {
			switch {
			case p.URL != "" && len(p.Command) > 0:
				add(i, "plugin", SevError, "tools.plugin", t.Name, "tool %s: plugin gives both url and command: keep one", t.Name)
			case p.URL == "" && len(p.Command) == 0:
				add(i, "plugin", SevError, "tools.plugin", t.Name, "tool %s: plugin needs url (POST JSON) or command (JSON on stdin and stdout)", t.Name)
			case p.URL != "":
				if why := badPluginURL(p.URL); why != "" {
					add(i, "plugin.url", SevError, "tools.plugin", t.Name, "tool %s: plugin url %q %s: give an absolute http:// or https:// URL such as http://127.0.0.1:9000/%s", t.Name, p.URL, why, t.Name)
				}
			case strings.TrimSpace(p.Command[0]) == "":
				add(i, "plugin.command", SevError, "tools.plugin", t.Name, "tool %s: plugin command starts with an empty program name", t.Name)
			}
			if p.Timeout != "" {
				if dur, err := time.ParseDuration(p.Timeout); err != nil || dur <= 0 {
					add(i, "plugin", SevError, "tools.plugin", t.Name, "tool %s: plugin timeout %q is not a positive Go duration such as 10s", t.Name, p.Timeout)
				}
			}
			if t.Type != "compute" {
				add(i, "plugin", SevWarning, "tools.plugin", t.Name, "tool %s is of type %s, and only compute tools run a plugin: make it type compute or drop the plugin", t.Name, t.Type)
			}
		}
		for j, f := range append(append([]skills.Field(nil), t.Parameters...), t.CardProps...) {
			if err := f.CheckDecl(); err != nil {
				field := "parameters"
				if j >= len(t.Parameters) {
					field = "card_props"
				}
				add(i, field, SevError, "tools.parameter", t.Name, "tool %s: %s %s: %v: fix the declaration", t.Name, field, f.Name, err)
			}
		}
		if t.Type != "display" && (t.CardType != "" || len(t.CardProps) > 0) {
			add(i, "card_type", SevWarning, "tools.card", t.Name, "tool %s is of type %s, and only display tools show a card: make it type display or drop card_type and card_props", t.Name, t.Type)
		}
	}
	return probs
}

// badPluginURL says what is wrong with a plugin URL ("" when nothing).
func badPluginURL(raw string) string {
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return "does not parse (" + err.Error() + ")"
	case u.Scheme != "http" && u.Scheme != "https":
		return "is not http:// or https://"
	case u.Hostname() == "":
		return "names no host"
	case u.Fragment != "" || strings.HasSuffix(raw, "#"):
		return "has a #fragment, which is never sent"
	}
	if port := u.Port(); port != "" {
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return "has port " + port + ", outside 1-65535"
		}
	}
	return ""
}

// checkPluginCommands checks that the program of every command plugin in
// the merged tools.yaml exists where the runtime will look for it: a
// relative path with a slash (plugins/brew-calc) under the workspace root
// (an error when missing or not executable: the workspace ships it), a bare
// name in PATH and an absolute path on this machine (warnings: the server
// may differ). A tool declared by hand is reported in the declaration, the
// place to fix it.
func (c *checker) checkPluginCommands(merged, declared *toolsDoc) {
	if merged == nil || c.opt.PluginDir == "" {
		return
	}
	at := func(name string) (string, pos) {
		if declared != nil {
			for i, t := range declared.file.Tools {
				if t.Name == name {
					return c.opt.DeclaredTools, declared.pos(i, "plugin.command")
				}
			}
		}
		for i, t := range merged.file.Tools {
			if t.Name == name {
				return filepath.Join(c.opt.SkillDir, "tools", "tools.yaml"), merged.pos(i, "plugin.command")
			}
		}
		return "", pos{1, 1}
	}
	for _, t := range merged.file.Tools {
		if t.Plugin == nil || len(t.Plugin.Command) == 0 || strings.TrimSpace(t.Plugin.Command[0]) == "" {
			continue
		}
		prog := t.Plugin.Command[0]
		file, p := at(t.Name)
		switch {
		case filepath.IsAbs(prog):
			if _, err := os.Stat(prog); err != nil {
				c.add(SevWarning, "VIBE007", "tools.plugin-missing", t.Name, file, p,
					"tool %s: plugin command %s does not exist on this machine: make sure the server running vibe serve has it, or use a path relative to the workspace such as plugins/%s", t.Name, prog, filepath.Base(prog))
			}
		case strings.ContainsRune(filepath.ToSlash(prog), '/'):
			full := filepath.Join(c.opt.PluginDir, prog)
			st, err := os.Stat(full)
			switch {
			case err != nil:
				c.add(SevError, "VIBE007", "tools.plugin-missing", t.Name, file, p,
					"tool %s: plugin command %s is not in the workspace (%s): build or copy the program there (relative commands run from the workspace root), or fix plugin.command", t.Name, prog, c.rel(full))
			case st.IsDir():
				c.add(SevError, "VIBE007", "tools.plugin-missing", t.Name, file, p,
					"tool %s: plugin command %s is a directory: name the program inside it", t.Name, prog)
			case st.Mode()&0o111 == 0:
				c.add(SevError, "VIBE007", "tools.plugin-missing", t.Name, file, p,
					"tool %s: plugin command %s is not executable: chmod +x %s", t.Name, prog, c.rel(full))
			}
		default:
			if _, err := exec.LookPath(prog); err != nil {
				c.add(SevWarning, "VIBE007", "tools.plugin-missing", t.Name, file, p,
					"tool %s: plugin command %s is not in PATH here: install it where vibe serve runs, or give a path relative to the workspace such as plugins/%s", t.Name, prog, prog)
			}
		}
	}
}

// LoadDeclaredTools reads the hand-written tool declarations at path
// (knowledge/<theme>/tools.yaml). A missing file declares nothing. A file
// with errors gives a *ToolsFileError listing each with its line and column.
// display is the path used in messages.
func LoadDeclaredTools(path, display string) (ToolsFile, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return ToolsFile{}, nil
	}
	if err != nil {
		return ToolsFile{}, err
	}
	d, probs := parseTools(data)
	var errs []ToolProblem
	for _, p := range probs {
		if p.Severity == SevError {
			errs = append(errs, p)
		}
	}
	if d != nil && len(errs) == 0 {
		// A declared tool the runtime could not run is not offered.
		for i, t := range d.file.Tools {
			for _, is := range t.Issues(nil) {
				key := is.Field
				if k := strings.IndexAny(key, ".["); k >= 0 {
					key = key[:k]
				}
				p := d.pos(i, key)
				errs = append(errs, ToolProblem{Line: p.Line, Column: p.Column, Tool: t.Name, Severity: SevError, Check: "tools.unrunnable", Message: is.Field + ": " + is.Message})
			}
		}
	}
	if len(errs) > 0 || d == nil {
		return ToolsFile{}, &ToolsFileError{Path: display, Problems: errs}
	}
	return d.file, nil
}

func isCoreTool(name string) bool {
	for _, c := range coreTools {
		if c == name {
			return true
		}
	}
	return false
}

// toolType infers the design §2.3 tool type from a tool's name.
func toolType(name string) string {
	n := strings.ToLower(name)
	switch {
	case strings.HasPrefix(n, "show_") || strings.HasPrefix(n, "display_") || strings.HasPrefix(n, "render_"):
		return "display"
	case strings.HasPrefix(n, "collect_") || strings.HasPrefix(n, "ask_"):
		return "collect"
	case strings.HasPrefix(n, "search_") || strings.HasPrefix(n, "get_") || strings.HasPrefix(n, "lookup_") || strings.HasPrefix(n, "read_"):
		return "retrieve"
	case strings.HasPrefix(n, "calc") || strings.HasPrefix(n, "compute_"):
		return "compute"
	}
	return "flow"
}

// deriveTools declares every non-core tool the SOP steps call that runs
// without a hand declaration: display tools (a card of title and content)
// and retrieve tools (a search of the skill's sources). A compute tool needs
// a plugin, a collect tool its form and a flow its steps, which only a
// declaration in knowledge/<theme>/tools.yaml can give: those are returned
// in missing too, and mergeTools leaves them out unless declared (vibe
// check then fails on the step naming the tool, with the fix).
func deriveTools(s knowledge.SOP, L labels) (out ToolsFile, missing []string) {
	byName := map[string]*skills.Tool{}
	var order []string
	for _, ph := range s.Phases {
		for _, st := range ph.Steps {
			if st.Tool == "" || isCoreTool(st.Tool) {
				continue
			}
			if _, ok := byName[st.Tool]; ok {
				continue
			}
			t := &skills.Tool{Name: st.Tool, Type: toolType(st.Tool), Description: st.Action}
			t.WhenToCall = fmt.Sprintf(L.phaseStep, nonEmpty(ph.Name, ph.ID), st.Action)
			switch t.Type {
			case skills.TypeDisplay:
				t.CardType = strings.TrimPrefix(strings.TrimPrefix(st.Tool, "show_"), "display_") + "_card"
				t.CardProps = []skills.Field{{Name: "title", Type: "string", Required: true}, {Name: "content", Type: "object"}}
			case skills.TypeRetrieve:
				t.Parameters = []skills.Field{{Name: "query", Type: "string", Required: true, Description: nonEmpty(st.Output, st.Action)}, {Name: "k", Type: "integer", Minimum: ptr(1), Maximum: ptr(20)}}
			default:
				// Kept for its place in the SOP order: mergeTools drops it
				// unless a declaration replaces it.
				missing = append(missing, st.Tool)
			}
			byName[st.Tool] = t
			order = append(order, st.Tool)
		}
	}
	out = ToolsFile{Tools: []skills.Tool{}}
	for _, n := range order {
		out.Tools = append(out.Tools, *byName[n])
	}
	return out, missing
}

func ptr(f float64) *float64 { return &f }

// undeclaredHint is the fix for an SOP step naming a tool that cannot be
// generated (see deriveTools).
func undeclaredHint(name, theme string) string {
	switch toolType(name) {
	case skills.TypeCompute:
		return fmt.Sprintf("%s is a compute tool, which needs a plugin: declare it in knowledge/%s/%s with plugin: {url: ...} or plugin: {command: [...]} and run `vibe integrate %s`, or set the step's tool to \"\" so the agent works the result out and shows its working", name, theme, DeclaredToolsName, theme)
	case skills.TypeCollect:
		return fmt.Sprintf("%s is a collect tool, which needs its form: declare it in knowledge/%s/%s with form: [fields] and run `vibe integrate %s`, or use the core tool collect_info", name, theme, DeclaredToolsName, theme)
	}
	return fmt.Sprintf("declare %s in knowledge/%s/%s (a flow tool with its steps, a random tool with its draw ...) and run `vibe integrate %s`, or use a core tool", name, theme, DeclaredToolsName, theme)
}

// mergeTools combines the tools derived from the SOP with the hand-declared
// ones. A hand declaration wins by name, whole; only an empty when_to_call
// is filled from the SOP step that calls the tool, so the model still learns
// when to call it. Generated tools keep the SOP's order; hand-declared tools
// no SOP step calls follow in the order of their file.
func mergeTools(gen, hand ToolsFile) ToolsFile {
	declared := map[string]skills.Tool{}
	for _, t := range hand.Tools {
		declared[t.Name] = t
	}
	out := ToolsFile{Tools: []skills.Tool{}}
	used := map[string]bool{}
	for _, g := range gen.Tools {
		if h, ok := declared[g.Name]; ok {
			if strings.TrimSpace(h.WhenToCall) == "" {
				h.WhenToCall = g.WhenToCall
			}
			out.Tools = append(out.Tools, h)
			used[g.Name] = true
			continue
		}
		if len(g.Issues(nil)) > 0 {
			continue // cannot run undeclared (see deriveTools)
		}
		out.Tools = append(out.Tools, g)
	}
	for _, h := range hand.Tools {
		if !used[h.Name] {
			out.Tools = append(out.Tools, h)
		}
	}
	return out
}

// readTools checks a tools.yaml and returns it parsed, or nil when it is
// missing or cannot be decoded (the problems are findings).
func (c *checker) readTools(path string) *toolsDoc {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		c.add(SevError, "VIBE001", "schema.unreadable", "", path, pos{1, 1}, "cannot read: %v", err)
		return nil
	}
	d, probs := parseTools(data)
	for _, p := range probs {
		id := "VIBE007"
		if strings.HasPrefix(p.Check, "schema.") {
			id = "VIBE001"
		}
		c.add(p.Severity, id, p.Check, p.Tool, path, pos{p.Line, p.Column}, "%s", p.Message)
	}
	return d
}

// loadTools checks the skill's tools/tools.yaml (what the runtime reads).
func (c *checker) loadTools(path string) *toolsDoc {
	return c.readTools(path)
}

// checkRunnable fails every tool of the merged tools.yaml the runtime could
// not run (skills.Tool.Issues: a compute tool without a plugin, a random
// tool with nothing to draw, a collect tool without a form, a flow without
// steps or with a step leading nowhere ...), each with its fix. A tool
// declared by hand is reported in the declaration, the place to fix it.
func (c *checker) checkRunnable(merged, declared *toolsDoc) {
	if merged == nil {
		return
	}
	fsys := skills.DirFS(c.opt.SkillDir)
	mergedPath := filepath.Join(c.opt.SkillDir, "tools", "tools.yaml")
	for i, t := range merged.file.Tools {
		file, doc, at := mergedPath, merged, i
		if declared != nil {
			for j, d := range declared.file.Tools {
				if d.Name == t.Name {
					file, doc, at = c.opt.DeclaredTools, declared, j
					break
				}
			}
		}
		for _, is := range t.Issues(fsys) {
			check := "tools.unrunnable"
			if is.Field == "plugin" && t.Type == skills.TypeCompute {
				check = "tools.no-plugin"
			}
			key := is.Field
			if k := strings.IndexAny(key, ".["); k >= 0 {
				key = key[:k]
			}
			msg := is.Message
			if file == mergedPath {
				msg += fmt.Sprintf(" (declare it in knowledge/%s/%s and run `vibe integrate %s`)", c.opt.Theme, DeclaredToolsName, c.opt.Theme)
			}
			c.add(SevError, "VIBE007", check, t.Name, file, doc.pos(at, key), "%s: %s", is.Field, msg)
		}
	}
}

// checkDeclaredTools checks the hand-written declarations and that the
// merged tools.yaml carries each of them as written (else integrate has not
// run since they changed).
func (c *checker) checkDeclaredTools(path string, merged *toolsDoc) *toolsDoc {
	d := c.readTools(path)
	if d == nil {
		return nil
	}
	have := map[string]skills.Tool{}
	if merged != nil {
		for _, t := range merged.file.Tools {
			have[t.Name] = t
		}
	}
	for i, t := range d.file.Tools {
		m, ok := have[t.Name]
		if ok && strings.TrimSpace(t.WhenToCall) == "" {
			m.WhenToCall = ""
		}
		if !ok || !sameTool(m, t) {
			what := "lacks it"
			if ok {
				what = "declares it differently"
			}
			c.add(SevWarning, "VIBE008", "tools.stale", t.Name, path, d.pos(i, "name"),
				"tool %s is declared here but skills/%s/tools/tools.yaml %s, so the agent does not see this declaration: run `vibe integrate %s`",
				t.Name, c.opt.Theme, what, c.opt.Theme)
		}
	}
	return d
}

// sameTool compares two declarations as they would be written, so an empty
// list and an absent one are the same.
func sameTool(a, b skills.Tool) bool {
	ja, errA := yaml.Marshal(a)
	jb, errB := yaml.Marshal(b)
	return errA == nil && errB == nil && string(ja) == string(jb)
}
