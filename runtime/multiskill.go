package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"unicode"

	"github.com/pkoukk/tiktoken-go"
	tiktoken_loader "github.com/pkoukk/tiktoken-go-loader"

	"github.com/vibelife/vibe/knowledge"
	"github.com/vibelife/vibe/llm"
	"github.com/vibelife/vibe/skills"
)

// Several skills can be active at once (use_skill(skills=[...], topic),
// skill-spec-v5 and the design's multi-skill fusion such as bazi + career):
// the turn's state and the stored skill record hold their names joined by
// skillSep, the first being the primary skill. The prompt stacks their
// instructions within the tier-2 budget, get_rules and search_knowledge
// search all of them, and their tools are all offered.

// skillSep joins the names of the active skills (skill names hold no
// commas).
const skillSep = ","

// roleTopic is the stored record of the topic use_skill was given ("" once
// a later use_skill gives none).
const roleTopic = "topic"

// DefaultSkillTokens is the tier-2 budget of the active skills'
// instructions (skill-spec-v5: under 3000 tokens; check.max_skill_tokens).
const DefaultSkillTokens = 3000

// splitSkills returns the names of a joined active set.
func splitSkills(s string) []string {
	var out []string
	for _, n := range strings.Split(s, skillSep) {
		if n = strings.TrimSpace(n); n != "" {
			out = append(out, n)
		}
	}
	return out
}

// primarySkill is the first name of a joined active set.
func primarySkill(s string) string {
	if n := splitSkills(s); len(n) > 0 {
		return n[0]
	}
	return ""
}

func (t *turn) activeTopic() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.topic
}

// skillNamesArg reads use_skill's skill names: skills (a list, or one name),
// else the older single name (or skill).
func skillNamesArg(args map[string]any) []string {
	var out []string
	switch v := args["skills"].(type) {
	case []any:
		for _, x := range v {
			if s, ok := x.(string); ok && strings.TrimSpace(s) != "" {
				out = append(out, strings.TrimSpace(s))
			}
		}
	case string:
		out = splitSkills(v)
	}
	if len(out) == 0 {
		for _, k := range []string{"name", "skill"} {
			if s := strings.TrimSpace(str(args, k)); s != "" {
				out = append(out, s)
				break
			}
		}
	}
	return out
}

// useSkill activates one or several skills (with the skills they require)
// for the rest of the conversation.
func (a *Agent) useSkill(t *turn, args map[string]any) (json.RawMessage, error) {
	asked := skillNamesArg(args)
	if len(asked) == 0 {
		return nil, fmt.Errorf("use_skill: give skills (a list of skill names) or name; available: %s%s", names(a.cfg.Skills.Headers()), a.candidatesNote(t.question))
	}
	var unknown []string
	for _, n := range asked {
		if sk, err := a.cfg.Skills.Get(n); err != nil || sk.Name == skills.CoreName {
			unknown = append(unknown, fmt.Sprintf("%q", n))
		}
	}
	if len(unknown) > 0 {
		return nil, fmt.Errorf("use_skill: unknown skill %s; available: %s%s", strings.Join(unknown, ", "), names(a.cfg.Skills.Headers()), a.candidatesNote(t.question))
	}
	active := a.cfg.Skills.WithRequired(asked)
	topic := strings.TrimSpace(str(args, "topic"))
	t.mu.Lock()
	t.active = strings.Join(active, skillSep)
	t.topic = topic
	t.mu.Unlock()
	var sks []*skills.Skill
	for _, n := range active {
		if sk, err := a.cfg.Skills.Get(n); err == nil {
			sks = append(sks, sk)
		}
	}
	if t.inTurn {
		// In a model turn the next system prompt carries the
		// instructions: the result only confirms.
		var list []string
		for _, sk := range sks {
			list = append(list, sk.Name)
		}
		res := map[string]any{"skill": list[0], "active": list, "status": "active; the instructions are in the system prompt from now on"}
		var tools []string
		for _, sk := range sks {
			tools = append(tools, toolNames(sk)...)
		}
		if len(tools) > 0 {
			res["tools"] = tools
		}
		if topic != "" {
			res["topic"] = topic
		}
		if len(sks) > 1 {
			if _, cut := a.stackInstructions(sks); len(cut) > 0 {
				res["cut"] = cut
			}
		}
		return jsonOf(res)
	}
	if len(sks) == 1 {
		sk := sks[0]
		res := map[string]any{"skill": sk.Name, "instructions": a.safeInstructionsOf(sks, sk.Instructions()), "tools": toolNames(sk), "resources": sk.Resources()}
		addMeta(res, sk.Header)
		if topic != "" {
			res["topic"] = topic
		}
		return jsonOf(res)
	}
	text, cut := a.stackInstructions(sks)
	var list []map[string]any
	for _, sk := range sks {
		m := map[string]any{"skill": sk.Name, "tools": toolNames(sk)}
		addMeta(m, sk.Header)
		if len(sk.Requires) > 0 {
			m["requires"] = sk.Requires
		}
		list = append(list, m)
	}
	res := map[string]any{"skills": list, "instructions": a.safeInstructionsOf(sks, text)}
	if topic != "" {
		res["topic"] = topic
	}
	if len(cut) > 0 {
		res["cut"] = cut
	}
	return jsonOf(res)
}

func addMeta(m map[string]any, h skills.Header) {
	if h.DisplayName != "" {
		m["display_name"] = h.DisplayName
	}
	if h.Version != "" {
		m["version"] = h.Version
	}
}

func toolNames(sk *skills.Skill) []string {
	var out []string
	for _, tl := range sk.OfferedTools() {
		out = append(out, tl.Name)
	}
	return out
}

// candidatesNote is the router's ranked candidates for the message, for an
// error or a tool description ("" when none fits).
func (a *Agent) candidatesNote(msg string) string {
	if msg == "" {
		return ""
	}
	var fit []string
	for _, c := range a.cfg.Skills.Route(msg) {
		if c.Fits() && len(fit) < 3 {
			fit = append(fit, fmt.Sprintf("%s (%.2f)", c.Name, c.Score))
		}
	}
	if len(fit) == 0 {
		return "; router: " + routeAdvice(a.routeCandidates(msg), a.otherLanguage(msg))
	}
	return "; the router's candidates for this message, best first: " + strings.Join(fit, ", ")
}

// turnTools lists the tools of a model step in state st: the core tools
// callable now (offeredCore) and those of the active skills, with
// use_skill's names limited to the installed skills (the router's
// candidates for the message are in the system prompt).
func (a *Agent) turnTools(st stepState, msg string) []llm.Tool {
	var sks []*skills.Skill
	var instr strings.Builder
	for _, n := range splitSkills(st.active) {
		if sk, err := a.cfg.Skills.Get(n); err == nil {
			sks = append(sks, sk)
			instr.WriteString(sk.Instructions())
		}
	}
	st.instructions = instr.String()
	var installed []string
	for _, h := range a.cfg.Skills.Headers() {
		installed = append(installed, h.Name)
	}
	st.installed = len(installed)
	out := offeredCore(st, sks)
	if a.cfg.WebSearch != nil && st.active != "" {
		// The web is for what an active skill's knowledge lacks.
		out = append(out, webSearchTool)
	}
	out = append(out, a.skillTools(st.active)...)
	if len(installed) == 0 {
		return out
	}
	for i, tl := range out {
		if tl.Name != "use_skill" {
			continue
		}
		enum, _ := json.Marshal(installed)
		// The router's candidates are in the system prompt (routeHint);
		// the older "name" form is still accepted but not offered.
		out[i].Parameters = json.RawMessage(fmt.Sprintf(`{"type":"object","properties":{"skills":{"type":"array","items":{"type":"string","enum":%s},"description":"primary first"},"topic":{"type":"string"}},"required":["skills"]}`, enum))
	}
	return out
}

// stackInstructions lays out the instructions of several skills for the
// prompt within the tier-2 budget (Config.SkillTokens). When they do not
// fit, sections (## headings) are dropped from the end of the last skill
// first, then a skill is reduced to its description, the primary skill last;
// cut says what was left out and how to read it.
func (a *Agent) stackInstructions(sks []*skills.Skill) (string, []string) {
	type part struct {
		sk       *skills.Skill
		head     string
		sections []string
		short    bool // reduced to its description
		dropped  []string
	}
	parts := make([]*part, len(sks))
	for i, sk := range sks {
		head, secs := splitSections(sk.Instructions())
		parts[i] = &part{sk: sk, head: head, sections: secs}
	}
	render := func(p *part) string {
		var sb strings.Builder
		fmt.Fprintf(&sb, "## %s", p.sk.Name)
		if p.sk.DisplayName != "" {
			fmt.Fprintf(&sb, " — %s", p.sk.DisplayName)
		}
		if p.sk.Version != "" {
			fmt.Fprintf(&sb, " (v%s)", strings.TrimPrefix(p.sk.Version, "v"))
		}
		sb.WriteString("\n\n")
		if p.short {
			sb.WriteString(p.sk.Summary() + "\n")
		} else {
			sb.WriteString(p.head)
			for _, s := range p.sections {
				sb.WriteString("\n\n" + s)
			}
			sb.WriteString("\n")
		}
		if tn := toolNames(p.sk); len(tn) > 0 {
			sb.WriteString("\n本技能的工具 / skill tools: " + strings.Join(tn, ", ") + "\n")
		}
		return sb.String()
	}
	total := func() int {
		n := 0
		for _, p := range parts {
			n += a.countTokens(render(p))
		}
		return n
	}
	budget := a.cfg.SkillTokens
	for total() > budget {
		// The last skill that still has something to give, primary last.
		var victim *part
		for i := len(parts) - 1; i >= 0 && victim == nil; i-- {
			if !parts[i].short && (i > 0 || len(parts[i].sections) > 0) {
				victim = parts[i]
			}
		}
		if victim == nil {
			break
		}
		if n := len(victim.sections); n > 0 {
			victim.dropped = append([]string{firstLine(victim.sections[n-1])}, victim.dropped...)
			victim.sections = victim.sections[:n-1]
		} else {
			victim.short = true
		}
	}
	var sb strings.Builder
	var cut []string
	for _, p := range parts {
		sb.WriteString(render(p) + "\n")
		switch {
		case p.short:
			cut = append(cut, fmt.Sprintf("%s: instructions (only its description is given)", p.sk.Name))
		case len(p.dropped) > 0:
			cut = append(cut, fmt.Sprintf("%s: %s", p.sk.Name, strings.Join(p.dropped, "; ")))
		}
	}
	if len(cut) > 0 {
		fmt.Fprintf(&sb, "（为不超出 %d token 的技能说明预算，以下内容未载入 / left out to keep the skills' instructions within %d tokens: %s. 需要时用 read_skill_resource {\"skill\":…, \"path\":\"SKILL.md\"} 读取 / read them with read_skill_resource.）\n",
			budget, budget, strings.Join(cut, " | "))
	}
	return strings.TrimRight(sb.String(), "\n") + "\n", cut
}

// splitSections splits instructions into the text before the first "## "
// heading and the sections it starts.
func splitSections(s string) (string, []string) {
	lines := strings.Split(s, "\n")
	var head []string
	var secs []string
	var cur []string
	for _, l := range lines {
		if strings.HasPrefix(l, "## ") {
			if cur != nil {
				secs = append(secs, strings.TrimSpace(strings.Join(cur, "\n")))
			}
			cur = []string{l}
			continue
		}
		if cur != nil {
			cur = append(cur, l)
		} else {
			head = append(head, l)
		}
	}
	if cur != nil {
		secs = append(secs, strings.TrimSpace(strings.Join(cur, "\n")))
	}
	return strings.TrimSpace(strings.Join(head, "\n")), secs
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return fmt.Sprintf("%q", strings.TrimSpace(l))
}

// countTokens counts tokens as the budget's check does (cl100k_base), or
// estimates them (a Han character a token, four other bytes a token) when
// the encoding cannot be loaded.
func (a *Agent) countTokens(s string) int {
	a.tkOnce.Do(func() {
		tiktoken.SetBpeLoader(tiktoken_loader.NewOfflineLoader())
		a.tk, _ = tiktoken.GetEncoding("cl100k_base")
	})
	if a.tk != nil {
		return len(a.tk.Encode(s, nil, nil))
	}
	n, other := 0, 0
	for _, r := range s {
		if unicode.Is(unicode.Han, r) {
			n++
		} else {
			other++
		}
	}
	return n + (other+3)/4
}

// skillRule is a rule with the skill it comes from.
type skillRule struct {
	knowledge.TieredRule
	Skill string `json:"skill,omitempty"`
}

type scoredSkillRule struct {
	skillRule
	score float64
}

// searchAcross runs search_knowledge over the themes of the active skills
// (or only skill, when given): each skill's best passage first, then the
// rest by score, k in all. How the query was carried over to the sources'
// language is the first bridged skill's; the result is unbridged only when
// no searched skill could carry it over.
func (a *Agent) searchAcross(ctx context.Context, active []string, only, query string, k int) (searchResult, error) {
	var res searchResult
	if only != "" {
		found := false
		for _, n := range active {
			found = found || n == only
		}
		if !found {
			return res, fmt.Errorf("search_knowledge: skill %q is not active (active: %s); call use_skill first", only, strings.Join(active, ", "))
		}
		active = []string{only}
	}
	var best, rest []Passage
	themes := map[string]bool{}
	var errs []error
	searched, unbridged := 0, 0
	for _, n := range active {
		sk, err := a.cfg.Skills.Get(n)
		if err != nil {
			return res, err
		}
		if themes[sk.Theme] {
			continue
		}
		themes[sk.Theme] = true
		r, err := a.searchFull(ctx, n, query, k)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		searched++
		if r.SearchedAs != "" && res.SearchedAs == "" {
			res.SearchedAs, res.BridgedBy = r.SearchedAs, r.BridgedBy
		}
		if res.QueryLang == "" {
			res.QueryLang, res.SourceLang = r.QueryLang, r.SourceLang
		}
		if r.Unbridged {
			unbridged++
			if res.Note == "" {
				res.Note, res.QueryLang, res.SourceLang = r.Note, r.QueryLang, r.SourceLang
			}
		}
		ps := r.Passages
		for i := range ps {
			ps[i].Skill = n
			if i == 0 && len(active) > 1 {
				best = append(best, ps[i])
			} else {
				rest = append(rest, ps[i])
			}
		}
	}
	if len(errs) == len(themes) && len(errs) > 0 {
		return res, errors.Join(errs...)
	}
	res.Unbridged = searched > 0 && unbridged == searched
	if !res.Unbridged {
		res.Note = ""
	}
	sort.SliceStable(best, func(i, j int) bool { return best[i].Score > best[j].Score })
	sort.SliceStable(rest, func(i, j int) bool { return rest[i].Score > rest[j].Score })
	out := append(best, rest...)
	if len(out) > k {
		out = out[:k]
	}
	res.Passages = out
	return res, nil
}

// recommendSkills ranks the installed skills for a question with the
// router that routes offline turns (skills.Set.Route). When the router finds
// none, what the skills' sources say is added as advice ("sources": each
// skill whose best passage holds two or more rare terms of the question,
// with the passage's heading; see routesources.go).
func (a *Agent) recommendSkills(ctx context.Context, question string, k int) (json.RawMessage, error) {
	if strings.TrimSpace(question) == "" {
		return nil, errors.New("recommend_skills: question is required")
	}
	type rec struct {
		Skill       string   `json:"skill"`
		DisplayName string   `json:"display_name,omitempty"`
		Description string   `json:"description"`
		Score       float64  `json:"score"`
		Coverage    float64  `json:"coverage"`
		Matched     []string `json:"matched,omitempty"`
		Glossary    []string `json:"glossary_terms,omitempty"`
		Bridged     []string `json:"terms_in_translation,omitempty"`
		Fits        bool     `json:"fits"`
	}
	var out []rec
	cs := a.routeCandidates(question)
	for _, c := range cs {
		if len(out) == k {
			break
		}
		sk, err := a.cfg.Skills.Get(c.Name)
		if err != nil {
			continue
		}
		out = append(out, rec{Skill: c.Name, DisplayName: sk.DisplayName, Description: sk.Summary(),
			Score: round2(c.Score), Coverage: round2(c.Coverage), Matched: c.Matched, Glossary: c.Glossary, Bridged: c.Bridged, Fits: c.Fits()})
	}
	res := map[string]any{"question": question, "candidates": out}
	if m := skills.Pick(cs); m != "" {
		res["best"] = m
	} else {
		res["best"] = nil
		res["note"] = routeAdvice(cs, a.otherLanguage(question))
		var ev []map[string]any
		for _, e := range a.sourceEvidence(ctx, question) {
			if len(e.Terms) >= minEvidenceTerms && len(ev) < 2 {
				ev = append(ev, map[string]any{"skill": e.Skill, "passage": e.Heading, "terms": e.Terms, "share": round2(e.Share), "clear": e.Clear()})
			}
		}
		if len(ev) > 0 {
			res["sources"] = ev
			res["sources_note"] = "the passages of these skills' sources hold rare words of the question: advice, not a verdict; activate one if the question is about what its passage tells of"
		}
	}
	return jsonOf(res)
}

func round2(f float64) float64 { return float64(int(f*100+0.5)) / 100 }

// otherLanguage returns the installed skills whose sources are written in
// another language than msg (themeLanguage), in name order.
func (a *Agent) otherLanguage(msg string) []string {
	ql := QueryLanguage(msg)
	var out []string
	for _, h := range a.cfg.Skills.Headers() {
		sk, err := a.cfg.Skills.Get(h.Name)
		if err != nil {
			continue
		}
		if a.themeLanguage(sk, msg) != ql {
			out = append(out, h.Name)
		}
	}
	return out
}
