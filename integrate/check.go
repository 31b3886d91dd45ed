package integrate

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"unicode"

	"gopkg.in/yaml.v3"

	"github.com/vibelife/vibe/chunk"
	"github.com/vibelife/vibe/knowledge"
	"github.com/vibelife/vibe/knowledge/schema"
	"github.com/vibelife/vibe/skills"
	"github.com/vibelife/vibe/workspace"
)

// Severity of a finding.
type Severity string

const (
	SevError   Severity = "error"
	SevWarning Severity = "warning"
	SevNote    Severity = "note"
)

// Finding is one problem found by Check.
type Finding struct {
	Severity Severity `json:"severity"`
	RuleID   string   `json:"rule_id"` // e.g. VIBE010
	Check    string   `json:"check"`   // e.g. grounding.quote-not-found
	Item     string   `json:"item,omitempty"`
	File     string   `json:"file"` // relative to the skill directory's parent's parent (the workspace)
	Line     int      `json:"line"`
	Column   int      `json:"column"`
	Message  string   `json:"message"`
}

// Report is the outcome of Check.
type Report struct {
	Theme    string    `json:"theme"`
	Findings []Finding `json:"findings"`
	Summary  Summary   `json:"summary"`
	// Coverage details the coverage check (nil when it did not run: no
	// store, or rules.yaml unreadable).
	Coverage *Coverage `json:"coverage,omitempty"`
}

// Summary counts the findings and carries the coverage figure.
type Summary struct {
	Errors   int `json:"errors"`
	Warnings int `json:"warnings"`
	Notes    int `json:"notes"`
	Rules    int `json:"rules"`
	// Coverage is the share of rule-like passages of the sources a rule
	// cites, in percent; RuleLike counts those passages and Uncovered the
	// ones no rule cites (each a coverage.missing-rule note).
	Coverage  float64 `json:"coverage_percent"`
	RuleLike  int     `json:"rule_like_passages"`
	Uncovered int     `json:"uncovered_passages"`
	// SectionCoverage is the share of the sections stating rules that some
	// rule cites, in percent.
	SectionCoverage float64 `json:"section_coverage_percent"`
	Sections        int     `json:"rule_sections"`
	CoveredSections int     `json:"covered_sections"`
}

// Failed reports whether the report fails: any error, or any warning when strict.
func (r Report) Failed(strict bool) bool {
	return r.Summary.Errors > 0 || (strict && r.Summary.Warnings > 0)
}

// ChunkSource is what Check needs from the knowledge store.
type ChunkSource interface {
	Chunk(ctx context.Context, id string) (chunk.Chunk, error)
	Chunks(ctx context.Context, theme string) ([]chunk.Chunk, error)
}

// Embedder turns texts into vectors; the local lexical embedder works offline.
type Embedder interface {
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// Judge returns an entailment verdict: does source support claim?
type Judge func(ctx context.Context, claim, source string) (supported bool, reason string, err error)

// Options configure Check.
type Options struct {
	Theme string
	// SkillDir is skills/<theme>.
	SkillDir string
	// RelTo makes finding file names relative to it (the workspace root); empty keeps them relative to SkillDir.
	RelTo string
	// Chunks resolves evidence; nil skips reference and grounding checks against the store.
	Chunks   ChunkSource
	Embedder Embedder // optional
	Judge    Judge    // optional (--judge)
	Config   workspace.CheckConfig
	// DeclaredTools is the hand-written knowledge/<theme>/tools.yaml, checked
	// and compared with the merged tools/tools.yaml; empty skips it.
	DeclaredTools string
	// CountTokens counts tokens; nil uses the tiktoken cl100k_base encoding.
	CountTokens func(string) int
	// PluginDir is the directory relative plugin commands are resolved
	// against, as the runtime does (the workspace root); empty skips the
	// check that each command plugin's program is there.
	PluginDir string
}

// coreTools are the tools every skill may call without declaring them:
// the runtime's core tools.
var coreTools = skills.BuiltinTools

// ErrNoKnowledge means the skill has no extracted knowledge to check.
var ErrNoKnowledge = errors.New("no extracted knowledge")

// ErrNoSources means the store holds no chunk of the theme, so nothing can
// be checked against the sources.
var ErrNoSources = errors.New("the store holds no source chunks of the theme")

type checker struct {
	ctx    context.Context
	opt    Options
	chunks []chunk.Chunk  // the theme's chunks, listed once
	pos    map[string]int // chunk id -> index in chunks
	out    []Finding
	rel    func(string) string
	pass   map[string]bool
	// names are the theme's names holding a negation character (its
	// glossary's, and 未 as a branch): not negations (nameVocab).
	names *nameVocab
}

func (c *checker) add(sev Severity, id, check, item, file string, p pos, format string, args ...any) {
	c.out = append(c.out, Finding{Severity: sev, RuleID: id, Check: check, Item: item, File: c.rel(file), Line: p.Line, Column: p.Column, Message: fmt.Sprintf(format, args...)})
}

type loaded struct {
	path string
	ix   itemIndex
}

// loadYAML reads and decodes one knowledge file, recording positions.
// A missing or undecodable file is a finding, not an error.
func (c *checker) loadYAML(path, kind string, into any, required bool) (*loaded, bool) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		if required {
			c.add(SevError, "VIBE001", "schema.missing-file", "", path, pos{1, 1}, "%s is missing: run `vibe extract %s`", filepath.Base(path), c.opt.Theme)
		}
		return nil, false
	}
	if err != nil {
		c.add(SevError, "VIBE001", "schema.unreadable", "", path, pos{1, 1}, "cannot read: %v", err)
		return nil, false
	}
	problems, err := schema.ValidateYAML(kind, data)
	if err != nil {
		return nil, false
	}
	for _, p := range problems {
		at := p.Path
		if at == "" {
			at = "/"
		}
		c.add(SevError, "VIBE001", "schema.invalid", "", path, pos{p.Line, p.Column}, "%s: %s", at, p.Message)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		c.add(SevError, "VIBE001", "schema.yaml-syntax", "", path, yamlErrPos(err), "invalid YAML: %v", err)
		return nil, false
	}
	if err := yaml.Unmarshal(data, into); err != nil {
		if len(problems) == 0 {
			c.add(SevError, "VIBE001", "schema.invalid", "", path, yamlErrPos(err), "does not match the schema: %v", err)
		}
		return nil, false
	}
	ix, dups := itemIndex{}, map[string][]pos{}
	indexNode(&doc, ix, dups)
	for id, ps := range dups {
		for _, p := range ps {
			c.add(SevError, "VIBE002", "ids.duplicate", id, path, p, "id %s is used more than once (first at line %d): give each item its own id", id, ix[id].at.Line)
		}
	}
	return &loaded{path: path, ix: ix}, true
}

var lineRe = regexp.MustCompile(`line (\d+)`)

func yamlErrPos(err error) pos {
	if m := lineRe.FindStringSubmatch(err.Error()); m != nil {
		var n int
		fmt.Sscanf(m[1], "%d", &n)
		return pos{n, 1}
	}
	return pos{1, 1}
}

// Check runs every offline check of a built skill. It returns an error only
// when the check itself cannot run (context cancelled, store failure, a
// store without the theme's sources: ErrNoSources).
func Check(ctx context.Context, opt Options) (Report, error) {
	c := &checker{ctx: ctx, opt: opt, pass: map[string]bool{}}
	if opt.Chunks != nil {
		chunks, err := opt.Chunks.Chunks(ctx, opt.Theme)
		if err != nil {
			return Report{}, fmt.Errorf("check %s: list chunks: %w", opt.Theme, err)
		}
		if len(chunks) == 0 {
			return Report{}, fmt.Errorf("check %s: %w", opt.Theme, ErrNoSources)
		}
		c.chunks = chunks
	}
	base := opt.RelTo
	if base == "" {
		base = opt.SkillDir
	}
	c.rel = func(p string) string {
		if r, err := filepath.Rel(base, p); err == nil {
			return filepath.ToSlash(r)
		}
		return p
	}
	kdir := filepath.Join(opt.SkillDir, "knowledge")
	// The built glossary (skills/<theme>/knowledge/glossary.yaml) names
	// the theme's terms; one that cannot be read leaves the branches only.
	var names []string
	if g, ok, _ := readGlossaryFile(filepath.Join(kdir, "glossary.yaml")); ok {
		for _, t := range g.Terms {
			if t.From != skills.FromMined {
				names = append(names, t.Term)
				names = append(names, t.Aliases...)
				names = append(names, t.English...)
			}
		}
	}
	c.names = newNameVocab(names)
	var sopF knowledge.SOPFile
	var patF knowledge.PatternsFile
	var ruleF knowledge.RulesFile
	sopL, sopOK := c.loadYAML(filepath.Join(kdir, "sop.yaml"), schema.SOP, &sopF, true)
	patL, patOK := c.loadYAML(filepath.Join(kdir, "patterns.yaml"), schema.Patterns, &patF, true)
	ruleL, ruleOK := c.loadYAML(filepath.Join(kdir, "rules.yaml"), schema.Rules, &ruleF, true)
	tools := c.loadTools(filepath.Join(opt.SkillDir, "tools", "tools.yaml"))
	var declared *toolsDoc
	if opt.DeclaredTools != "" {
		declared = c.checkDeclaredTools(opt.DeclaredTools, tools)
	}
	c.checkPluginCommands(tools, declared)
	c.checkRunnable(tools, declared)

	// Unique ids across files.
	seen := map[string]string{}
	for _, l := range []*loaded{sopL, patL, ruleL} {
		if l == nil {
			continue
		}
		ids := make([]string, 0, len(l.ix))
		for id := range l.ix {
			ids = append(ids, id)
		}
		sort.Strings(ids)
		for _, id := range ids {
			if prev, ok := seen[id]; ok {
				c.add(SevError, "VIBE002", "ids.duplicate", id, l.path, l.ix.item(id), "id %s is also used in %s: ids must be unique across sop, patterns and rules", id, c.rel(prev))
			} else {
				seen[id] = l.path
			}
		}
	}

	type cited struct {
		id, file string
		ix       itemIndex
		ev       []knowledge.Evidence
		claims   map[string]string // field -> text that must be supported
	}
	var items []cited
	if sopOK {
		c.checkSOP(sopF.SOP, sopL, tools, declared)
		for _, ph := range sopF.SOP.Phases {
			if len(ph.Evidence) > 0 {
				items = append(items, cited{ph.ID, sopL.path, sopL.ix, ph.Evidence, nil})
			}
			for _, st := range ph.Steps {
				items = append(items, cited{st.ID, sopL.path, sopL.ix, st.Evidence, nil})
			}
		}
	}
	if patOK {
		for _, p := range patF.Patterns.QuickPatterns {
			items = append(items, cited{p.ID, patL.path, patL.ix, p.Evidence, nil})
		}
		for _, r := range patF.Patterns.RedFlags {
			items = append(items, cited{r.ID, patL.path, patL.ix, r.Evidence, nil})
		}
	}
	var rules []knowledge.TieredRule
	if ruleOK {
		rules = ruleF.Rules.All()
		for _, r := range rules {
			cl := map[string]string{"condition": r.Condition}
			if r.Conclusion != "" {
				cl["conclusion"] = r.Conclusion
			}
			if r.Action != "" {
				cl["action"] = r.Action
			}
			items = append(items, cited{r.ID, ruleL.path, ruleL.ix, r.Evidence, cl})
		}
	}

	// References and grounding.
	citedChunks := map[string]bool{}
	for _, it := range items {
		if len(it.ev) == 0 {
			c.add(SevError, "VIBE001", "schema.no-evidence", it.id, it.file, it.ix.item(it.id), "%s cites no evidence: every item must cite a chunk and quote it", it.id)
			continue
		}
		var support strings.Builder
		for i, ev := range it.ev {
			citedChunks[ev.Chunk] = true
			if opt.Chunks == nil {
				continue
			}
			ch, err := opt.Chunks.Chunk(ctx, ev.Chunk)
			if errors.Is(err, knowledge.ErrNotFound) {
				c.add(SevError, "VIBE003", "ref.chunk-missing", it.id, it.file, it.ix.evidence(it.id, i, false), "%s cites chunk %s, which is not in the store: re-run `vibe ingest %s` or fix the citation", it.id, ev.Chunk, opt.Theme)
				continue
			}
			if err != nil {
				return Report{}, fmt.Errorf("check %s: chunk %s: %w", opt.Theme, ev.Chunk, err)
			}
			support.WriteString(ch.Text)
			support.WriteString("\n")
			if !quoteOccurs(ev.Quote, ch.Text) {
				c.add(SevError, "VIBE010", "grounding.quote-not-found", it.id, it.file, it.ix.evidence(it.id, i, true), "%s quotes %q, which does not occur in chunk %s: quote the source verbatim", it.id, short(ev.Quote), ev.Chunk)
			}
		}
		if support.Len() == 0 {
			continue
		}
		fields := make([]string, 0, len(it.claims))
		for f := range it.claims {
			fields = append(fields, f)
		}
		sort.Strings(fields)
		for _, f := range fields {
			claim := it.claims[f]
			if f == "action" {
				// An action is an instruction to the agent, not a claim of
				// the source: it must be about the rule (its terms are
				// the rule's or its source's), not in the source's words.
				ctxText := support.String() + "\n" + it.claims["condition"] + "\n" + it.claims["conclusion"]
				if lc := letterContainment(claim, ctxText); lc < minInstructionSupport {
					c.add(SevError, "VIBE011", "grounding.action-off-rule", it.id, it.file, it.ix.field(it.id, f), "%s action %q is hardly about its rule (%.2f of its characters are in the rule and its cited chunk, want %.2f): say what to do about the rule's condition, in its terms", it.id, short(claim), lc, minInstructionSupport)
				}
				continue
			}
			if why := reversal(c.names.mask(claim), c.names.mask(support.String())); why != "" {
				c.add(SevError, "VIBE011", "grounding.reversed", it.id, it.file, it.ix.field(it.id, f), "%s %s %q turns round its cited chunk: %s; say what the source says%s", it.id, f, short(claim), why, c.dropHint(it.ev))
				continue
			}
			lex := containment(claim, support.String())
			if lex >= opt.Config.MinLexicalSupport || c.paraphrased(claim, it.ev) {
				continue
			}
			if opt.Embedder != nil {
				if sim, err := c.embedSim(claim, support.String()); err != nil {
					return Report{}, fmt.Errorf("check %s: embed: %w", opt.Theme, err)
				} else if sim >= opt.Config.MinEmbeddingSupport {
					continue
				}
			}
			if opt.Judge != nil {
				ok, reason, err := opt.Judge(ctx, claim, support.String())
				if err != nil {
					return Report{}, fmt.Errorf("check %s: judge: %w", opt.Theme, err)
				}
				if ok {
					continue
				}
				c.add(SevError, "VIBE012", "grounding.not-entailed", it.id, it.file, it.ix.field(it.id, f), "%s %s is not entailed by its cited chunk: %s%s", it.id, f, reason, c.dropHint(it.ev))
				continue
			}
			c.add(SevError, "VIBE011", "grounding.weak-support", it.id, it.file, it.ix.field(it.id, f), "%s %s %q is not supported by its cited chunk (lexical support %.2f < %.2f): reword it to what the source says or cite the right chunk%s", it.id, f, short(claim), lex, opt.Config.MinLexicalSupport, c.dropHint(it.ev))
		}
	}

	if ruleOK && patOK {
		// A red flag's link to the rule it restates names a rule of the skill.
		ids := map[string]bool{}
		for _, r := range rules {
			ids[r.ID] = true
		}
		for _, rf := range patF.Patterns.RedFlags {
			if rf.Rule != "" && !ids[rf.Rule] {
				c.add(SevError, "VIBE009", "ref.rule-missing", rf.ID, patL.path, patL.ix.field(rf.ID, "rule"), "red flag %s links to rule %s, which is not in rules.yaml: remove the link or run `vibe extract %s`", rf.ID, rf.Rule, c.opt.Theme)
			}
		}
	}
	if ruleOK {
		c.checkDuplicates(rules, patF.Patterns.QuickPatterns, ruleL, patL)
		c.checkSizes(ruleF, patF.Patterns, ruleL, patL)
	}
	rep := Report{Theme: opt.Theme}
	if opt.Chunks != nil && ruleOK {
		c.checkCoverage(rules, ruleL, &rep)
	}
	c.checkSkillMD(filepath.Join(opt.SkillDir, "SKILL.md"))

	sort.SliceStable(c.out, func(i, j int) bool {
		a, b := c.out[i], c.out[j]
		if a.File != b.File {
			return a.File < b.File
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.RuleID < b.RuleID
	})
	rep.Findings = c.out
	if rep.Findings == nil {
		rep.Findings = []Finding{}
	}
	rep.Summary.Rules = len(rules)
	for _, f := range rep.Findings {
		switch f.Severity {
		case SevError:
			rep.Summary.Errors++
		case SevWarning:
			rep.Summary.Warnings++
		default:
			rep.Summary.Notes++
		}
	}
	return rep, nil
}

// Grounding of paraphrases. A faithful paraphrase of classical Chinese
// keeps the source's characters but not their order: 正官格官星透露 shares
// 0.17 of its bigrams with its chunk and every character but two. So a
// claim passes on bigrams (Config.MinLexicalSupport) or on the mean of its
// bigram and character containment (minParaphraseSupport: on 子平真诠 a
// replayed strong model's rules pass at 0.98, the same claims against a
// random other passage of the book at 0.27), and only when it keeps the
// source's polarity (reversal). An action is graded as an instruction: minInstructionSupport
// of its characters must come from its rule or the cited chunk.
const (
	minParaphraseSupport  = 0.4
	minInstructionSupport = 0.5
)

// paraphrased reports whether claim passes as a paraphrase of its cited
// chunks read as the model read them: with their heading and the chunks
// before and after them under the same heading (a condition often names
// what the sentence before the quote set up).
//
// Only Chinese claims are judged so: for Latin script the bigram measure
// already compares whole words.
func (c *checker) paraphrased(claim string, ev []knowledge.Evidence) bool {
	if !strings.ContainsFunc(claim, func(r rune) bool { return unicode.Is(unicode.Han, r) }) {
		return false
	}
	if c.pos == nil {
		c.pos = map[string]int{}
		for i, ch := range c.chunks {
			c.pos[ch.ID] = i
		}
	}
	var b strings.Builder
	for _, e := range ev {
		i, ok := c.pos[e.Chunk]
		if !ok {
			continue
		}
		ch := c.chunks[i]
		b.WriteString(strings.Join(ch.HeadingPath, " "))
		for _, j := range []int{i - 1, i, i + 1} {
			if j >= 0 && j < len(c.chunks) && c.chunks[j].Doc == ch.Doc && slices.Equal(c.chunks[j].HeadingPath, ch.HeadingPath) {
				b.WriteString("\n")
				b.WriteString(c.chunks[j].Text)
			}
		}
	}
	src := b.String()
	return (containment(claim, src)+letterContainment(claim, src))/2 >= minParaphraseSupport
}

func short(s string) string {
	r := []rune(normalizeSpace(s))
	if len(r) > 40 {
		return string(r[:40]) + "…"
	}
	return string(r)
}

func (c *checker) embedSim(a, b string) (float64, error) {
	vs, err := c.opt.Embedder.Embed(c.ctx, []string{a, b})
	if err != nil {
		return 0, err
	}
	if len(vs) != 2 || len(vs[0]) != len(vs[1]) {
		return 0, fmt.Errorf("embedder returned %d vectors", len(vs))
	}
	var dot, na, nb float64
	for i := range vs[0] {
		x, y := float64(vs[0][i]), float64(vs[1][i])
		dot, na, nb = dot+x*y, na+x*x, nb+y*y
	}
	if na == 0 || nb == 0 {
		return 0, nil
	}
	return dot / (sqrt(na) * sqrt(nb)), nil
}

func (c *checker) checkSOP(s knowledge.SOP, l *loaded, tools *toolsDoc, declared *toolsDoc) {
	known := map[string]bool{}
	for _, t := range coreTools {
		known[t] = true
	}
	if tools != nil {
		for _, t := range tools.file.Tools {
			known[t.Name] = true
		}
	}
	handMade := map[string]bool{}
	if declared != nil {
		for _, t := range declared.file.Tools {
			handMade[t.Name] = true
		}
	}
	phases := map[string]string{}
	for _, ph := range s.Phases {
		phases[ph.ID] = ph.NextPhase
	}
	for _, ph := range s.Phases {
		for _, st := range ph.Steps {
			if st.Tool != "" && !known[st.Tool] {
				hint := "run `vibe integrate " + c.opt.Theme + "`, which declares the display and retrieve tools the SOP calls, or use a core tool"
				if t := toolType(st.Tool); t != skills.TypeDisplay && t != skills.TypeRetrieve {
					hint = undeclaredHint(st.Tool, c.opt.Theme)
				}
				if handMade[st.Tool] {
					hint = "it is declared in " + c.rel(c.opt.DeclaredTools) + ": run `vibe integrate " + c.opt.Theme + "` to merge it"
				}
				c.add(SevError, "VIBE004", "ref.tool-missing", st.ID, l.path, l.ix.field(st.ID, "tool"), "step %s calls tool %q, which is neither in tools.yaml nor a core tool: %s", st.ID, st.Tool, hint)
			}
		}
		if ph.NextPhase != "" {
			if _, ok := phases[ph.NextPhase]; !ok {
				c.add(SevError, "VIBE005", "ref.next-phase-missing", ph.ID, l.path, l.ix.field(ph.ID, "next_phase"), "phase %s has next_phase %q, which is not a phase of this SOP", ph.ID, ph.NextPhase)
			}
		}
	}
	// Cycle detection: next_phase is a function, so follow it from each phase.
	reported := map[string]bool{}
	for _, ph := range s.Phases {
		visited := map[string]bool{}
		cur := ph.ID
		var path []string
		for cur != "" && !visited[cur] {
			visited[cur] = true
			path = append(path, cur)
			cur = phases[cur]
		}
		if cur != "" && cur == ph.ID && !reported[ph.ID] {
			for _, p := range path {
				reported[p] = true
			}
			c.add(SevError, "VIBE006", "ref.phase-cycle", ph.ID, l.path, l.ix.field(ph.ID, "next_phase"), "phases form a cycle: %s -> %s: the last phase must have no next_phase", strings.Join(path, " -> "), ph.ID)
		}
	}
}

// dropHint tells how to leave out an item vibe extracted wrongly: an
// entry of knowledge/<theme>/drop.yaml naming its quote, ready to paste,
// and the command that rebuilds without it.
func (c *checker) dropHint(ev []knowledge.Evidence) string {
	if len(ev) == 0 || ev[0].Quote == "" {
		return ""
	}
	q := []rune(strings.Join(strings.Fields(ev[0].Quote), " "))
	if len(q) > 60 {
		q = q[:60]
	}
	// knowledge/<theme>/drop.yaml is extract.DropFileName.
	return fmt.Sprintf(" (or, if vibe misread the source, leave the item out: add `- quote: %q` to the `drop:` list of knowledge/%s/drop.yaml and run `vibe build %s --from extract`)", string(q), c.opt.Theme, c.opt.Theme)
}

func ruleText(r knowledge.Rule) string {
	return r.Condition + " " + nonEmpty(r.Conclusion, r.Action)
}

func (c *checker) checkDuplicates(rules []knowledge.TieredRule, pats []knowledge.Pattern, rl, pl *loaded) {
	th := c.opt.Config.DuplicateThreshold
	for i := range rules {
		for j := i + 1; j < len(rules); j++ {
			a, b := rules[i], rules[j]
			if s := dice(ruleText(a.Rule), ruleText(b.Rule)); s >= th {
				c.add(SevWarning, "VIBE030", "duplicate.rule", b.ID, rl.path, rl.ix.item(b.ID), "rule %s (%s) nearly duplicates %s (%s), similarity %.2f: merge them", b.ID, b.Tier, a.ID, a.Tier, s)
				continue
			}
			if dice(a.Condition, b.Condition) >= th && statesSituation(a.Condition) && statesSituation(b.Condition) {
				ca, cb := nonEmpty(a.Conclusion, a.Action), nonEmpty(b.Conclusion, b.Action)
				ma, mb := c.names.mask(ca), c.names.mask(cb)
				if negated(ma) != negated(mb) && dice(stripNegation(ma), stripNegation(mb)) >= 0.5 {
					// An extra rule of an offline build (one quoted
					// sentence a chunk, retrieved by get_rules only when
					// its subject is asked about) is not worth failing
					// the build over: the pair is a warning (葛根汤's
					// 必自下利 and 不下利，但呕者 of 伤寒论 under one
					// shortened condition).
					sev := SevError
					if a.Extra || b.Extra {
						sev = SevWarning
					}
					c.add(sev, "VIBE031", "contradiction.rule", b.ID, rl.path, rl.ix.field(b.ID, conclField(b.Rule)), "rule %s contradicts %s: same condition, opposite conclusions (%q vs %q); if the sources do say both, tell them apart in the conditions; if vibe misread one of them%s", b.ID, a.ID, short(cb), short(ca), c.dropHint(b.Evidence))
				}
			}
		}
	}
	if pl == nil {
		return
	}
	for i := range pats {
		for j := i + 1; j < len(pats); j++ {
			a, b := pats[i], pats[j]
			if s := dice(a.Signature+a.Indication, b.Signature+b.Indication); s >= th {
				c.add(SevWarning, "VIBE030", "duplicate.pattern", b.ID, pl.path, pl.ix.item(b.ID), "pattern %s nearly duplicates %s, similarity %.2f: merge them", b.ID, a.ID, s)
			}
		}
	}
}

func conclField(r knowledge.Rule) string {
	if r.Conclusion != "" {
		return "conclusion"
	}
	return "action"
}

// Design targets (expert-system-2.0 §6.1): tier1 5-10, tier2 30-50, tier3 20-30,
// quick patterns 10-20, red flags 5-10.
func (c *checker) checkSizes(rf knowledge.RulesFile, p knowledge.Patterns, rl, pl *loaded) {
	r := rf.Rules
	type target struct {
		name      string
		n, lo, hi int
		file      string
	}
	// An offline build keeps a tier 2 sized to its sources (quoted
	// sentences retrieved by get_rules, never listed in the prompt:
	// extract's offlineTier2Cap), up to knowledge.MaxOfflineTier2.
	hi2 := 50
	if rf.Meta != nil && strings.HasPrefix(rf.Meta.Extractor, "offline") {
		hi2 = knowledge.MaxOfflineTier2
	}
	ts := []target{
		{knowledge.Tier1, len(r.Tier1), 5, 10, rl.path},
		{knowledge.Tier2, len(r.Tier2), 30, hi2, rl.path},
		{knowledge.Tier3, len(r.Tier3), 20, 30, rl.path},
	}
	if pl != nil {
		ts = append(ts, target{"quick_patterns", len(p.QuickPatterns), 10, 20, pl.path}, target{"red_flags", len(p.RedFlags), 5, 10, pl.path})
	}
	// Over the target is a warning (the skill grows past what the prompt
	// budget was designed for: merge or drop items). Under it is a note: a
	// small corpus (the demo's five pages) gives fewer items and nothing in
	// the skill is wrong; more sources give more.
	for _, t := range ts {
		switch {
		case t.n > t.hi:
			c.add(SevWarning, "VIBE040", "size.count", "", t.file, pos{1, 1}, "%s has %d items; the design targets %d-%d: merge near-duplicates or move items to a lower tier", t.name, t.n, t.lo, t.hi)
		case t.n < t.lo:
			c.add(SevNote, "VIBE040", "size.count", "", t.file, pos{1, 1}, "%s has %d items, under the design's %d-%d for a theme built from whole books; more sources give more", t.name, t.n, t.lo, t.hi)
		}
	}
}
