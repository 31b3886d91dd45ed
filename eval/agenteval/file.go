package agenteval

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/vibelife/vibe/knowledge/schema"
)

// FileName is the eval file of a theme, in knowledge/<theme>/.
const FileName = "eval.yaml"

// DraftFileName is where `vibe eval --generate` writes drafted cases for a
// knowledge engineer to review; vibe never reads it as the eval file.
const DraftFileName = "eval.draft.yaml"

// None is the expected skill of a question no skill should take.
const None = "none"

// File is a theme's eval file.
type File struct {
	Version int `yaml:"version" json:"version"`
	// Skill is the skill most cases expect (a case's own skill wins).
	Skill string `yaml:"skill,omitempty" json:"skill,omitempty"`
	// Thresholds override vibe.yaml's eval.thresholds for this theme.
	Thresholds *Thresholds `yaml:"thresholds,omitempty" json:"thresholds,omitempty"`
	Cases      []Case      `yaml:"cases" json:"cases"`
}

// Case is one question, or one scripted dialogue (Turns).
type Case struct {
	ID   string   `yaml:"id" json:"id"`
	Tags []string `yaml:"tags,omitempty" json:"tags,omitempty"`
	// Question and the expectations beside it make a one-turn case.
	Question string `yaml:"question,omitempty" json:"question,omitempty"`
	Expect   `yaml:",inline"`
	// Turns make a dialogue: each user message in order, in one
	// conversation, with what that turn must show.
	Turns []Turn `yaml:"turns,omitempty" json:"turns,omitempty"`

	line int
}

// Turn is one user message of a dialogue and what its answer must show.
type Turn struct {
	User   string `yaml:"user" json:"user"`
	Expect `yaml:",inline"`
}

// Expect is what a correct answer needs. Empty fields are not checked.
type Expect struct {
	// Skill is the skill that must be active after the turn; "none" for a
	// question no skill should take.
	Skill string `yaml:"skill,omitempty" json:"skill,omitempty"`
	// Rules: at least one of these rule ids must be in get_rules' top k.
	Rules []string `yaml:"rules,omitempty" json:"rules,omitempty"`
	// RuleText: a rule whose condition, action or conclusion contains one
	// of these must be in get_rules' top k (robust to rule ids changing
	// when a skill is rebuilt from scratch).
	RuleText []string `yaml:"rule_text,omitempty" json:"rule_text,omitempty"`
	// Passages: each must be among search_knowledge's top k.
	Passages []PassageRef `yaml:"passages,omitempty" json:"passages,omitempty"`
	// Tools the answer must call (with a model), or that must be offered
	// and accept these arguments (offline).
	Tools []ToolCall `yaml:"tools,omitempty" json:"tools,omitempty"`
	// NotTools must not be called.
	NotTools []string `yaml:"not_tools,omitempty" json:"not_tools,omitempty"`
	// Form: the turn must end showing a form (collect_info) asking for
	// these fields.
	Form []string `yaml:"form,omitempty" json:"form,omitempty"`
	// Facts the answer must state, judged against the retrieved sources
	// (needs a model).
	Facts []string `yaml:"facts,omitempty" json:"facts,omitempty"`
	// Contains: substrings the answer text must contain (checked in every
	// mode; offline the answer is the retrieval listing).
	Contains []string `yaml:"contains,omitempty" json:"contains,omitempty"`
}

// PassageRef names a passage: a substring of its source file name, and
// substrings of its heading path and of its text (any may be empty, not
// all).
type PassageRef struct {
	Source  string `yaml:"source,omitempty" json:"source,omitempty"`
	Heading string `yaml:"heading,omitempty" json:"heading,omitempty"`
	Text    string `yaml:"text,omitempty" json:"text,omitempty"`
}

func (p PassageRef) String() string {
	var parts []string
	if p.Source != "" {
		parts = append(parts, "source~"+p.Source)
	}
	if p.Heading != "" {
		parts = append(parts, "heading~"+p.Heading)
	}
	if p.Text != "" {
		parts = append(parts, "text~"+p.Text)
	}
	return strings.Join(parts, " ")
}

// ToolCall is a tool that must be called, with arguments that must be a
// subset of the call's (nil: any arguments).
type ToolCall struct {
	Name string         `yaml:"name" json:"name"`
	Args map[string]any `yaml:"args,omitempty" json:"args,omitempty"`
}

// UnmarshalYAML accepts a bare tool name as well as {name, args}.
func (t *ToolCall) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		t.Name = n.Value
		return nil
	}
	type plain ToolCall
	return n.Decode((*plain)(t))
}

// Thresholds are the least fraction of each measure a run must reach
// (0..1); a measure with no case is not gated.
type Thresholds struct {
	Routing       *float64 `yaml:"routing,omitempty" json:"routing,omitempty"`
	RuleHit       *float64 `yaml:"rule_hit,omitempty" json:"rule_hit,omitempty"`
	PassageRecall *float64 `yaml:"passage_recall,omitempty" json:"passage_recall,omitempty"`
	Tools         *float64 `yaml:"tools,omitempty" json:"tools,omitempty"`
	Contains      *float64 `yaml:"contains,omitempty" json:"contains,omitempty"`
	Faithfulness  *float64 `yaml:"faithfulness,omitempty" json:"faithfulness,omitempty"`
	FactCoverage  *float64 `yaml:"fact_coverage,omitempty" json:"fact_coverage,omitempty"`
}

// Merge returns t with o's set values on top.
func (t Thresholds) Merge(o *Thresholds) Thresholds {
	if o == nil {
		return t
	}
	for _, p := range []struct{ dst, src **float64 }{
		{&t.Routing, &o.Routing}, {&t.RuleHit, &o.RuleHit}, {&t.PassageRecall, &o.PassageRecall},
		{&t.Tools, &o.Tools}, {&t.Contains, &o.Contains}, {&t.Faithfulness, &o.Faithfulness}, {&t.FactCoverage, &o.FactCoverage},
	} {
		if *p.src != nil {
			*p.dst = *p.src
		}
	}
	return t
}

func f64(v float64) *float64 { return &v }

// DefaultThresholds gate every deterministic measure at 100%: any failed
// case fails the run, naming it. Judged measures allow for judgement.
func DefaultThresholds() Thresholds {
	return Thresholds{Routing: f64(1), RuleHit: f64(1), PassageRecall: f64(1), Tools: f64(1), Contains: f64(1),
		Faithfulness: f64(0.8), FactCoverage: f64(0.8)}
}

// Load reads and validates an eval file. Errors name the file, the line
// and the field, and say what to do.
func Load(path string) (*File, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("%s: no eval file: write one (`vibe schema eval` prints its schema) or draft one with `vibe eval --generate <theme>`", path)
		}
		return nil, err
	}
	return Parse(path, b)
}

// Parse decodes and validates an eval file's bytes; path names it in
// errors.
func Parse(path string, b []byte) (*File, error) {
	probs, err := schema.ValidateYAML(schema.Eval, b)
	if err != nil {
		return nil, err
	}
	if len(probs) > 0 {
		var lines []string
		for i, p := range probs {
			if i == 5 {
				lines = append(lines, fmt.Sprintf("... and %d more", len(probs)-5))
				break
			}
			lines = append(lines, fmt.Sprintf("%s:%s", path, p))
		}
		return nil, fmt.Errorf("%s does not fit the eval schema (see `vibe schema eval`):\n  %s", path, strings.Join(lines, "\n  "))
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	var f File
	if err := dec.Decode(&f); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%s: the eval file is empty: it needs `version: 1` and `cases:`", path)
		}
		return nil, fmt.Errorf("%s: %v (see `vibe schema eval`)", path, err)
	}
	// Line numbers of the cases, for errors and reports.
	var root yaml.Node
	if yaml.Unmarshal(b, &root) == nil && len(root.Content) == 1 {
		m := root.Content[0]
		for i := 0; i+1 < len(m.Content); i += 2 {
			if m.Content[i].Value == "cases" && m.Content[i+1].Kind == yaml.SequenceNode {
				for j, c := range m.Content[i+1].Content {
					if j < len(f.Cases) {
						f.Cases[j].line = c.Line
					}
				}
			}
		}
	}
	if err := f.validate(path); err != nil {
		return nil, err
	}
	return &f, nil
}

func (f *File) validate(path string) error {
	if f.Version != 1 {
		return fmt.Errorf("%s: version: want 1, got %d", path, f.Version)
	}
	if len(f.Cases) == 0 {
		return fmt.Errorf("%s: cases: none; add at least one case (`vibe eval --generate <theme>` drafts some)", path)
	}
	if err := f.Thresholds.validate(); err != nil {
		return fmt.Errorf("%s: thresholds: %v", path, err)
	}
	seen := map[string]int{}
	for i := range f.Cases {
		c := &f.Cases[i]
		at := fmt.Sprintf("%s:%d: cases[%d]", path, c.line, i)
		if c.ID == "" {
			return fmt.Errorf("%s: id is required", at)
		}
		at += " (" + c.ID + ")"
		if prev, ok := seen[c.ID]; ok {
			return fmt.Errorf("%s: id already used on line %d", at, prev)
		}
		seen[c.ID] = c.line
		switch {
		case c.Question != "" && len(c.Turns) > 0:
			return fmt.Errorf("%s: give either question (one turn) or turns (a dialogue), not both", at)
		case c.Question == "" && len(c.Turns) == 0:
			return fmt.Errorf("%s: question or turns is required", at)
		case len(c.Turns) > 0 && !c.Expect.empty():
			return fmt.Errorf("%s: a dialogue's expectations go on its turns, not on the case", at)
		}
		for j, t := range c.Turns {
			if strings.TrimSpace(t.User) == "" {
				return fmt.Errorf("%s: turns[%d].user is required", at, j)
			}
			if err := t.Expect.validate(); err != nil {
				return fmt.Errorf("%s: turns[%d]: %v", at, j, err)
			}
		}
		if err := c.Expect.validate(); err != nil {
			return fmt.Errorf("%s: %v", at, err)
		}
	}
	return nil
}

func (t *Thresholds) validate() error {
	if t == nil {
		return nil
	}
	for name, v := range map[string]*float64{"routing": t.Routing, "rule_hit": t.RuleHit, "passage_recall": t.PassageRecall,
		"tools": t.Tools, "contains": t.Contains, "faithfulness": t.Faithfulness, "fact_coverage": t.FactCoverage} {
		if v != nil && (*v < 0 || *v > 1) {
			return fmt.Errorf("%s: %g is not a fraction between 0 and 1", name, *v)
		}
	}
	return nil
}

func (e Expect) empty() bool {
	return e.Skill == "" && len(e.Rules) == 0 && len(e.RuleText) == 0 && len(e.Passages) == 0 && len(e.Tools) == 0 &&
		len(e.NotTools) == 0 && len(e.Form) == 0 && len(e.Facts) == 0 && len(e.Contains) == 0
}

func (e Expect) validate() error {
	for i, p := range e.Passages {
		if p.Source == "" && p.Heading == "" && p.Text == "" {
			return fmt.Errorf("passages[%d]: give source, heading or text", i)
		}
	}
	for i, t := range e.Tools {
		if t.Name == "" {
			return fmt.Errorf("tools[%d].name is required", i)
		}
	}
	for i, r := range e.Rules {
		if strings.TrimSpace(r) == "" {
			return fmt.Errorf("rules[%d] is empty", i)
		}
	}
	if e.Skill == None && (len(e.Rules) > 0 || len(e.RuleText) > 0 || len(e.Passages) > 0) {
		return errors.New("skill: none expects no skill, so rules and passages cannot be checked: remove them")
	}
	return nil
}

// turns returns the case as turns (a one-question case is one turn), with
// the file's default skill filled in.
func (c Case) turns(defSkill string) []Turn {
	ts := c.Turns
	if len(ts) == 0 {
		ts = []Turn{{User: c.Question, Expect: c.Expect}}
	}
	out := make([]Turn, len(ts))
	for i, t := range ts {
		if t.Skill == "" && defSkill != "" && (len(t.Rules) > 0 || len(t.RuleText) > 0 || len(t.Passages) > 0 || len(t.Tools) > 0) {
			t.Skill = defSkill
		}
		out[i] = t
	}
	return out
}
