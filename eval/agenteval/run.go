package agenteval

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"

	"github.com/vibelife/vibe/knowledge"
	"github.com/vibelife/vibe/runtime"
)

// Agent is what a run needs of the runtime; *runtime.Agent satisfies it, so
// an eval measures the very code `vibe serve` runs.
type Agent interface {
	Turn(ctx context.Context, req runtime.TurnRequest, emit func(runtime.Event) error) (string, error)
	Offline() bool
	Rules(skill, question string, k int) ([]knowledge.TieredRule, error)
	Passages(ctx context.Context, skill, query string, k int) ([]runtime.Passage, error)
	CheckToolArgs(skill, name string, args json.RawMessage) error
	// Route is the skill the router picks for a message on its own ("" for
	// none), without the only-skill fallback.
	Route(msg string) string
}

// Options tune a run.
type Options struct {
	// Theme names the run in reports.
	Theme string
	// RulesK and PassagesK are the k of rule hit@k and passage recall@k
	// (defaults 3 and 5). MRR is taken over the top 10.
	RulesK, PassagesK int
	// Thresholds are the gates below the eval file's own (vibe.yaml and
	// the defaults); Over are those above it (the environment and flags).
	// A run gates on Thresholds, then the file's thresholds:, then Over.
	Thresholds Thresholds
	Over       Thresholds
	// Judge grades answers for faithfulness and facts; nil skips those
	// measures (they are reported as skipped).
	Judge Judge
}

// mrrDepth is how deep reciprocal ranks look.
const mrrDepth = 10

// Measure names, in report order.
const (
	MRouting       = "routing"
	MRuleHit       = "rule_hit"
	MRuleMRR       = "rule_mrr"
	MPassageRecall = "passage_recall"
	MPassageMRR    = "passage_mrr"
	MTools         = "tools"
	MContains      = "contains"
	MFaithfulness  = "faithfulness"
	MFactCoverage  = "fact_coverage"
)

var measureOrder = []string{MRouting, MRuleHit, MRuleMRR, MPassageRecall, MPassageMRR, MTools, MContains, MFaithfulness, MFactCoverage}

// Report is the outcome of a run. Its JSON holds no time or random value:
// the same skill, sources and file give the same bytes.
type Report struct {
	Theme     string `json:"theme"`
	File      string `json:"file"`
	Mode      string `json:"mode"`
	RulesK    int    `json:"rules_k"`
	PassagesK int    `json:"passages_k"`
	// Skipped says which parts did not run and why.
	Skipped  []string     `json:"skipped,omitempty"`
	Measures []Measure    `json:"measures"`
	Cases    []CaseResult `json:"cases"`
	// Failed lists the failed cases' ids; Regressions what --baseline found.
	Failed      []string `json:"failed"`
	Regressions []string `json:"regressions,omitempty"`
	Pass        bool     `json:"pass"`
}

// Measure is one aggregated figure.
type Measure struct {
	Name string `json:"name"`
	// Value is the fraction passed (or the mean score) over N checks.
	Value     float64  `json:"value"`
	N         int      `json:"n"`
	Threshold *float64 `json:"threshold,omitempty"`
	Pass      bool     `json:"pass"`
	sum       float64
}

// CaseResult is one case's outcome.
type CaseResult struct {
	ID       string   `json:"id"`
	Line     int      `json:"line,omitempty"`
	Pass     bool     `json:"pass"`
	Failures []string `json:"failures,omitempty"`
	// Missed names the measures the case fell short in; Gating is set when
	// one of them is below its threshold, so the case is part of why the
	// run fails. A failed case that is not gating fell short only in
	// measures that still meet their thresholds (or have none).
	Missed []string     `json:"missed,omitempty"`
	Gating bool         `json:"gating,omitempty"`
	Turns  []TurnResult `json:"turns"`
}

// TurnResult is what one turn showed.
type TurnResult struct {
	User string `json:"user"`
	// Skill is the skill active after the turn ("" for none).
	Skill     string   `json:"skill"`
	Rules     []string `json:"rules,omitempty"`
	Passages  []string `json:"passages,omitempty"`
	ToolCalls []string `json:"tool_calls,omitempty"`
	Form      []string `json:"form,omitempty"`
	Answer    string   `json:"answer"`
	Verdict   *Verdict `json:"verdict,omitempty"`
}

// Run runs every case of f against ag.
func Run(ctx context.Context, ag Agent, f *File, path string, opt Options) (*Report, error) {
	if opt.RulesK <= 0 {
		opt.RulesK = 3
	}
	if opt.PassagesK <= 0 {
		opt.PassagesK = 5
	}
	th := opt.Thresholds.Merge(f.Thresholds).Merge(&opt.Over)
	rep := &Report{Theme: opt.Theme, File: path, Mode: "model", RulesK: opt.RulesK, PassagesK: opt.PassagesK, Failed: []string{}}
	offline := ag.Offline()
	if offline {
		rep.Mode = "offline"
		rep.Skipped = append(rep.Skipped, "tool calls, forms and not_tools: no model, so nothing calls tools; checked instead that each expected tool is offered to the routed skill and accepts the expected arguments")
	}
	if opt.Judge == nil {
		rep.Skipped = append(rep.Skipped, "faithfulness and fact coverage: no judge model configured (set llm.provider: openai, or OPENAI_BASE_URL)")
	}
	ms := map[string]*Measure{}
	for _, n := range measureOrder {
		ms[n] = &Measure{Name: n}
	}
	var cr CaseResult // the case being run
	count := func(name string, ok bool) {
		m := ms[name]
		m.N++
		if ok {
			m.sum++
		} else if !slices.Contains(cr.Missed, name) {
			cr.Missed = append(cr.Missed, name)
		}
	}
	for _, c := range f.Cases {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		cr = CaseResult{ID: c.ID, Line: c.line, Pass: true}
		conv := "eval-" + c.ID
		routed := "" // offline: the skill the conversation is in
		for ti, t := range c.turns(f.Skill) {
			if offline {
				if r := ag.Route(t.User); r != "" {
					routed = r
				}
			}
			tr, fails, err := runTurn(ctx, ag, opt, conv, t, offline, routed, ms, count)
			if err != nil {
				return nil, fmt.Errorf("case %s, turn %d: %w", c.ID, ti+1, err)
			}
			cr.Turns = append(cr.Turns, tr)
			for _, f := range fails {
				if len(c.Turns) > 0 {
					f = fmt.Sprintf("turn %d: %s", ti+1, f)
				}
				cr.Failures = append(cr.Failures, f)
			}
		}
		if len(cr.Failures) > 0 {
			cr.Pass = false
			rep.Failed = append(rep.Failed, c.ID)
		}
		rep.Cases = append(rep.Cases, cr)
	}
	rep.Pass = true
	for _, n := range measureOrder {
		m := ms[n]
		if m.N == 0 {
			continue
		}
		m.Value = round4(m.sum / float64(m.N))
		m.Threshold = th.of(n)
		m.Pass = m.Threshold == nil || m.Value+1e-9 >= *m.Threshold
		if !m.Pass {
			rep.Pass = false
		}
		rep.Measures = append(rep.Measures, *m)
	}
	markGating(rep)
	return rep, nil
}

// markGating sets each failed case's Gating: it fell short in a measure
// below its threshold. A failed case that missed no counted measure (a
// judged score) gates when the run fails.
func markGating(rep *Report) {
	failed := map[string]bool{}
	for _, m := range rep.Measures {
		if !m.Pass {
			failed[m.Name] = true
		}
	}
	for i := range rep.Cases {
		c := &rep.Cases[i]
		c.Gating = false
		if c.Pass {
			continue
		}
		if len(c.Missed) == 0 {
			c.Gating = !rep.Pass
		}
		for _, n := range c.Missed {
			c.Gating = c.Gating || failed[n]
		}
	}
}

func (t Thresholds) of(measure string) *float64 {
	switch measure {
	case MRouting:
		return t.Routing
	case MRuleHit:
		return t.RuleHit
	case MPassageRecall:
		return t.PassageRecall
	case MTools:
		return t.Tools
	case MContains:
		return t.Contains
	case MFaithfulness:
		return t.Faithfulness
	case MFactCoverage:
		return t.FactCoverage
	}
	return nil // MRR figures are reported, not gated
}

func round4(v float64) float64 {
	return float64(int64(v*10000+0.5)) / 10000
}

type call struct {
	name string
	args json.RawMessage
}

// runTurn sends one user message and checks its expectations.
//
// routed is, offline, the skill the router put the conversation in: a
// message no trigger matches stays in the skill of the turn before. It is
// what routing is measured on offline, rather than the skill the offline
// answer used, because the offline mode falls back to the only installed
// skill, which would hide triggers that route nothing. With a model,
// routing is the skill the model activated.
func runTurn(ctx context.Context, ag Agent, opt Options, conv string, t Turn, offline bool, routed string, ms map[string]*Measure, count func(string, bool)) (TurnResult, []string, error) {
	tr := TurnResult{User: t.User}
	var calls []call
	var form []string
	var skill string
	answer, err := ag.Turn(ctx, runtime.TurnRequest{UserID: "eval", ConversationID: conv, Message: t.User}, func(ev runtime.Event) error {
		switch ev.Type {
		case runtime.EventToolCall:
			calls = append(calls, call{ev.Tool, ev.Args})
		case runtime.EventForm:
			form = formFields(ev.Form)
		case runtime.EventDone:
			skill = ev.Skill
		}
		return nil
	})
	if err != nil {
		return tr, nil, err
	}
	if offline {
		skill = routed
	}
	tr.Skill, tr.Answer, tr.Form = skill, answer, form
	for _, c := range calls {
		tr.ToolCalls = append(tr.ToolCalls, c.name+string(compactJSON(c.args)))
	}
	var fails []string
	fail := func(format string, a ...any) { fails = append(fails, fmt.Sprintf(format, a...)) }

	if t.Skill != "" {
		want := t.Skill
		if want == None {
			want = ""
		}
		ok := skill == want
		count(MRouting, ok)
		if !ok {
			fail("routing: want skill %s, got %s", orNone(want), orNone(skill))
		}
	}
	// Retrieval is measured in the skill the case expects (else the one
	// the turn routed to), so a routing miss is counted once, as routing.
	rskill := t.Skill
	if rskill == "" || rskill == None {
		rskill = skill
	}
	if len(t.Rules) > 0 || len(t.RuleText) > 0 {
		var got []knowledge.TieredRule
		if rskill != "" {
			got, err = ag.Rules(rskill, t.User, mrrDepth)
			if err != nil {
				return tr, nil, err
			}
		}
		rank := 0
		for i, r := range got {
			if i < opt.RulesK {
				tr.Rules = append(tr.Rules, r.ID)
			}
			if rank == 0 && (contains(t.Rules, r.ID) || containsAny(ruleText(r), t.RuleText)) {
				rank = i + 1
			}
		}
		hit := rank > 0 && rank <= opt.RulesK
		count(MRuleHit, hit)
		rr := 0.0
		if rank > 0 {
			rr = 1 / float64(rank)
		}
		ms[MRuleMRR].N++
		ms[MRuleMRR].sum += rr
		if !hit {
			where := "not in the top " + fmt.Sprint(mrrDepth)
			if rank > 0 {
				where = fmt.Sprintf("first at rank %d", rank)
			}
			want := append(append([]string(nil), t.Rules...), quoted(t.RuleText)...)
			fail("rules: none of %s in get_rules' top %d (%s; got %s)", strings.Join(want, ", "), opt.RulesK, where, orDash(tr.Rules))
		}
	}
	if len(t.Passages) > 0 {
		var got []runtime.Passage
		if rskill != "" {
			got, err = ag.Passages(ctx, rskill, t.User, mrrDepth)
			if err != nil {
				return tr, nil, err
			}
		}
		for i, p := range got {
			if i < opt.PassagesK {
				tr.Passages = append(tr.Passages, p.ChunkID+" "+strings.Join(p.HeadingPath, " > "))
			}
		}
		first := 0
		for _, want := range t.Passages {
			rank := 0
			for i, p := range got {
				if matches(want, p) {
					rank = i + 1
					break
				}
			}
			if rank > 0 && (first == 0 || rank < first) {
				first = rank
			}
			ok := rank > 0 && rank <= opt.PassagesK
			count(MPassageRecall, ok)
			if !ok {
				fail("passages: %s not in search_knowledge's top %d", want, opt.PassagesK)
			}
		}
		rr := 0.0
		if first > 0 {
			rr = 1 / float64(first)
		}
		ms[MPassageMRR].N++
		ms[MPassageMRR].sum += rr
	}
	for _, want := range t.Tools {
		if offline {
			args, _ := json.Marshal(want.Args)
			if want.Args == nil {
				args = []byte("{}")
			}
			tskill := skill
			if tskill == "" {
				tskill = rskill
			}
			err := ag.CheckToolArgs(tskill, want.Name, args)
			if err != nil && want.Args == nil && strings.Contains(err.Error(), "is required") {
				err = nil // offered; no arguments were given to check
			}
			count(MTools, err == nil)
			if err != nil {
				fail("tools: %s: %v", want.Name, err)
			}
			continue
		}
		ok := false
		for _, c := range calls {
			if c.name == want.Name && argsSubset(want.Args, c.args) {
				ok = true
				break
			}
		}
		count(MTools, ok)
		if !ok {
			fail("tools: %s%s was not called (calls: %s)", want.Name, argsText(want.Args), orDash(tr.ToolCalls))
		}
	}
	if !offline {
		for _, name := range t.NotTools {
			called := false
			for _, c := range calls {
				called = called || c.name == name
			}
			count(MTools, !called)
			if called {
				fail("tools: %s must not be called", name)
			}
		}
		if len(t.Form) > 0 {
			missing := []string{}
			for _, f := range t.Form {
				if !contains(form, f) {
					missing = append(missing, f)
				}
			}
			ok := len(missing) == 0
			count(MTools, ok)
			if !ok {
				fail("form: fields %s not asked (form: %s)", strings.Join(missing, ", "), orDash(form))
			}
		}
	}
	for _, s := range t.Contains {
		ok := strings.Contains(answer, s)
		count(MContains, ok)
		if !ok {
			fail("contains: the answer does not contain %q", s)
		}
	}
	if opt.Judge != nil && len(t.Facts) > 0 {
		v, err := judgeTurn(ctx, ag, opt, rskill, t, answer)
		if err != nil {
			return tr, nil, err
		}
		tr.Verdict = &v
		ms[MFaithfulness].N++
		ms[MFaithfulness].sum += v.Faithfulness
		if v.Faithfulness < 0.5 {
			fail("faithfulness: %.2f (unsupported: %s)", v.Faithfulness, orDash(v.Unsupported))
		}
		for _, f := range v.Facts {
			count(MFactCoverage, f.Stated)
			if !f.Stated {
				fail("facts: not stated: %s", f.Fact)
			}
		}
	}
	return tr, fails, nil
}

// judgeTurn asks the judge about one answer, with the sources the runtime
// retrieves for the question as the ground.
func judgeTurn(ctx context.Context, ag Agent, opt Options, skill string, t Turn, answer string) (Verdict, error) {
	in := JudgeInput{Question: t.User, Answer: answer, Facts: t.Facts}
	if skill != "" {
		rules, err := ag.Rules(skill, t.User, 5)
		if err != nil {
			return Verdict{}, err
		}
		for _, r := range rules {
			in.Sources = append(in.Sources, r.ID+": "+ruleText(r))
		}
		ps, err := ag.Passages(ctx, skill, t.User, 5)
		if err != nil {
			return Verdict{}, err
		}
		for _, p := range ps {
			in.Sources = append(in.Sources, p.ChunkID+": "+p.Text)
		}
	}
	v, err := opt.Judge.Judge(ctx, in)
	if err != nil {
		return Verdict{}, fmt.Errorf("judge: %w", err)
	}
	// The verdict must speak to every fact, in order; a judge that skips
	// one counts it as not stated rather than passing it.
	byFact := map[string]FactVerdict{}
	for _, f := range v.Facts {
		byFact[f.Fact] = f
	}
	v.Facts = v.Facts[:0]
	for _, f := range t.Facts {
		fv, ok := byFact[f]
		if !ok {
			fv = FactVerdict{Fact: f}
		}
		v.Facts = append(v.Facts, fv)
	}
	return v, nil
}

func ruleText(r knowledge.TieredRule) string {
	var parts []string
	for _, s := range []string{r.Condition, r.Action, r.Conclusion} {
		if s != "" {
			parts = append(parts, s)
		}
	}
	return strings.Join(parts, " → ")
}

func matches(want PassageRef, p runtime.Passage) bool {
	if want.Source != "" && !strings.Contains(strings.ToLower(p.Source+" "+p.Doc), strings.ToLower(want.Source)) {
		return false
	}
	if want.Heading != "" && !strings.Contains(strings.ToLower(strings.Join(p.HeadingPath, " > ")), strings.ToLower(want.Heading)) {
		return false
	}
	if want.Text != "" && !strings.Contains(strings.ToLower(strings.Join(strings.Fields(p.Text), " ")), strings.ToLower(want.Text)) {
		return false
	}
	return true
}

// argsSubset reports whether every wanted argument has the given value in
// the call's arguments (numbers compared as numbers).
func argsSubset(want map[string]any, raw json.RawMessage) bool {
	if len(want) == 0 {
		return true
	}
	var got map[string]any
	if json.Unmarshal(raw, &got) != nil {
		return false
	}
	for k, v := range want {
		wb, _ := json.Marshal(v)
		var wv any
		_ = json.Unmarshal(wb, &wv)
		if !reflect.DeepEqual(wv, got[k]) {
			return false
		}
	}
	return true
}

func argsText(m map[string]any) string {
	if len(m) == 0 {
		return ""
	}
	b, _ := json.Marshal(m)
	return string(b)
}

func compactJSON(raw json.RawMessage) []byte {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return raw
	}
	b, _ := json.Marshal(v)
	return b
}

func formFields(raw json.RawMessage) []string {
	var f struct {
		Fields []struct {
			Name string `json:"name"`
		} `json:"fields"`
	}
	_ = json.Unmarshal(raw, &f)
	var out []string
	for _, x := range f.Fields {
		out = append(out, x.Name)
	}
	sort.Strings(out)
	return out
}

func containsAny(s string, subs []string) bool {
	for _, x := range subs {
		if strings.Contains(s, x) {
			return true
		}
	}
	return false
}

func quoted(xs []string) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = fmt.Sprintf("a rule saying %q", x)
	}
	return out
}

func contains(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}

func orNone(s string) string {
	if s == "" {
		return None
	}
	return s
}

func orDash(xs []string) string {
	if len(xs) == 0 {
		return "none"
	}
	return strings.Join(xs, ", ")
}
