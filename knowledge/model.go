package knowledge

// The YAML shapes below follow ../shared/design/expert-system-2.0.md section 8
// exactly, plus `evidence` on every item and a `meta` block saying how the file
// was produced. JSON Schemas for the three files are in knowledge/schema.

// Evidence ties an item to the source text that supports it.
type Evidence struct {
	// Chunk is the id of a chunk in the store.
	Chunk string `yaml:"chunk" json:"chunk"`
	// Quote is a verbatim span of that chunk's text.
	Quote string `yaml:"quote" json:"quote"`
}

// Meta says how a knowledge file was produced.
type Meta struct {
	// Theme the file belongs to.
	Theme string `yaml:"theme" json:"theme"`
	// Extractor names what produced the file, e.g. "offline-heuristic/1" or
	// "llm:gpt-4o-mini". Offline files say so here.
	Extractor string `yaml:"extractor" json:"extractor"`
	// PromptVersion is the version of the prompts used, for LLM extraction.
	PromptVersion string `yaml:"prompt_version,omitempty" json:"prompt_version,omitempty"`
	// Sources lists the converted documents the items were drawn from.
	Sources []string `yaml:"sources,omitempty" json:"sources,omitempty"`
}

// SOPFile is the content of sop.yaml.
type SOPFile struct {
	SOP  SOP   `yaml:"sop" json:"sop"`
	Meta *Meta `yaml:"meta,omitempty" json:"meta,omitempty"`
}

// SOP is the expert's standard procedure: phases in order.
type SOP struct {
	Name        string  `yaml:"name" json:"name"`
	Description string  `yaml:"description" json:"description"`
	Phases      []Phase `yaml:"phases" json:"phases"`
}

// Phase is one phase of the SOP (P1 collect, P2 compute, P3 scan, P4
// analyse, P5 output in the design).
type Phase struct {
	ID             string     `yaml:"id" json:"id"`
	Name           string     `yaml:"name" json:"name"`
	Description    string     `yaml:"description" json:"description"`
	EntryCondition string     `yaml:"entry_condition" json:"entry_condition"`
	Steps          []Step     `yaml:"steps" json:"steps"`
	ExitCondition  string     `yaml:"exit_condition" json:"exit_condition"`
	NextPhase      string     `yaml:"next_phase,omitempty" json:"next_phase,omitempty"`
	Evidence       []Evidence `yaml:"evidence,omitempty" json:"evidence,omitempty"`
}

// Step is one action within a phase, optionally bound to a tool.
type Step struct {
	ID       string     `yaml:"id" json:"id"`
	Action   string     `yaml:"action" json:"action"`
	Tool     string     `yaml:"tool,omitempty" json:"tool,omitempty"`
	Output   string     `yaml:"output" json:"output"`
	Evidence []Evidence `yaml:"evidence" json:"evidence"`
}

// PatternsFile is the content of patterns.yaml.
type PatternsFile struct {
	Patterns Patterns `yaml:"patterns" json:"patterns"`
	Meta     *Meta    `yaml:"meta,omitempty" json:"meta,omitempty"`
}

// Patterns holds the quick-recognition patterns and red flags.
type Patterns struct {
	QuickPatterns []Pattern `yaml:"quick_patterns" json:"quick_patterns"`
	RedFlags      []RedFlag `yaml:"red_flags" json:"red_flags"`
}

// Pattern is a configuration an expert recognises at a glance.
type Pattern struct {
	ID         string     `yaml:"id" json:"id"`
	Name       string     `yaml:"name" json:"name"`
	Signature  string     `yaml:"signature" json:"signature"`
	Indication string     `yaml:"indication" json:"indication"`
	Confidence string     `yaml:"confidence" json:"confidence"` // high|medium|low
	Evidence   []Evidence `yaml:"evidence" json:"evidence"`
}

// RedFlag is a signal that needs attention first.
type RedFlag struct {
	ID       string `yaml:"id" json:"id"`
	Signal   string `yaml:"signal" json:"signal"`
	Severity string `yaml:"severity" json:"severity"` // critical|warning|notice
	Action   string `yaml:"action" json:"action"`
	// Rule is the id of the rule the red flag restates (the same condition
	// or the same quote), when the skill carries it.
	Rule string `yaml:"rule,omitempty" json:"rule,omitempty"`
	// Grave marks a red flag whose verdict predicts death, disaster,
	// divorce or ruin (see Rule.Grave).
	Grave    bool       `yaml:"grave,omitempty" json:"grave,omitempty"`
	Evidence []Evidence `yaml:"evidence" json:"evidence"`
}

// RulesFile is the content of rules.yaml.
type RulesFile struct {
	Rules Rules `yaml:"rules" json:"rules"`
	Meta  *Meta `yaml:"meta,omitempty" json:"meta,omitempty"`
}

// Rules are IF-THEN judgements in three tiers.
type Rules struct {
	// Tier1 are red-flag rules, checked first (condition + action, priority).
	Tier1 []Rule `yaml:"tier1_must_know" json:"tier1_must_know"`
	// Tier2 are the core rules (condition + conclusion, confidence).
	Tier2 []Rule `yaml:"tier2_core" json:"tier2_core"`
	// Tier3 are edge cases (condition + conclusion, note).
	Tier3 []Rule `yaml:"tier3_edge" json:"tier3_edge"`
}

// Rule is one IF-THEN judgement. Tier 1 rules use Action and Priority; tiers
// 2 and 3 use Conclusion and Confidence; tier 3 adds Note.
type Rule struct {
	ID         string `yaml:"id" json:"id"`
	Condition  string `yaml:"condition" json:"condition"`
	Action     string `yaml:"action,omitempty" json:"action,omitempty"`
	Conclusion string `yaml:"conclusion,omitempty" json:"conclusion,omitempty"`
	Priority   string `yaml:"priority,omitempty" json:"priority,omitempty"`     // critical|high|medium|low
	Confidence string `yaml:"confidence,omitempty" json:"confidence,omitempty"` // high|medium|low
	Note       string `yaml:"note,omitempty" json:"note,omitempty"`
	// SourceGrade is set when every source the rule's evidence quotes was
	// graded below B by curate's credibility check: the best of their
	// grades (C or D). The rule rests on low-grade sources only; weigh it
	// accordingly.
	SourceGrade string `yaml:"source_grade,omitempty" json:"source_grade,omitempty"`
	// Grave marks a rule whose verdict predicts death, disaster, divorce
	// or ruin (GraveTerms): it is relayed only as what the tradition
	// says, with a caveat, never as a certainty.
	Grave bool `yaml:"grave,omitempty" json:"grave,omitempty"`
	// Extra marks an offline tier-2 rule kept beyond the design's 50 core
	// rules (an offline tier 2 holds one rule a chunk: MaxOfflineTier2).
	// get_rules retrieves it like any rule, but the skill's triggers,
	// glossary and description are mined from the core rules only
	// ([Rules.Core]), so a long book's many quoted sentences do not
	// crowd its vocabulary.
	Extra    bool       `yaml:"extra,omitempty" json:"extra,omitempty"`
	Source   string     `yaml:"source" json:"source"`
	Evidence []Evidence `yaml:"evidence" json:"evidence"`
}

// Tier names, as the keys of rules.yaml.
const (
	Tier1 = "tier1_must_know"
	Tier2 = "tier2_core"
	Tier3 = "tier3_edge"
)

// MaxOfflineTier2 is the most tier-2 rules an offline (heuristic) build
// keeps, however long its sources: extract keeps one a chunk, at least the
// design's 50, and `vibe check` takes up to this many as the size an
// offline tier 2 may have (it compares rules in pairs and with every
// rule-like passage, so the bound keeps a build of long books quick).
const MaxOfflineTier2 = 600

// TieredRule is a rule with the tier it sits in. It serialises as the
// rule's fields with "tier" beside them.
type TieredRule struct {
	Tier string `json:"tier"`
	Rule
}

// Core returns the rules with their tier, tier 1 first, but for the
// extra tier-2 rules of an offline build (Rule.Extra): the rules a skill's
// vocabulary (triggers, glossary, description) is mined from.
func (r Rules) Core() []TieredRule {
	all := r.All()
	out := all[:0:0]
	for _, x := range all {
		if !x.Extra {
			out = append(out, x)
		}
	}
	return out
}

// All returns every rule with its tier, tier 1 first.
func (r Rules) All() []TieredRule {
	out := make([]TieredRule, 0, len(r.Tier1)+len(r.Tier2)+len(r.Tier3))
	for _, x := range r.Tier1 {
		out = append(out, TieredRule{Tier1, x})
	}
	for _, x := range r.Tier2 {
		out = append(out, TieredRule{Tier2, x})
	}
	for _, x := range r.Tier3 {
		out = append(out, TieredRule{Tier3, x})
	}
	return out
}
