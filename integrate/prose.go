package integrate

import (
	"fmt"
	"strings"
	"unicode"

	"github.com/vibelife/vibe/knowledge"
	"github.com/vibelife/vibe/skills"
)

// Prose is the part of SKILL.md written in words rather than laid out from
// the knowledge: the model writes it when an LLM is configured, a template
// fills it offline. The SOP and the tool table are always laid out from the
// knowledge files.
type Prose struct {
	DisplayName string `json:"display_name"`
	Description string `json:"description"`
	// Identity is the expert identity in one sentence.
	Identity string `json:"identity"`
	// Scope lists what the skill covers (and what it does not).
	Scope []string `json:"scope"`
	// Style lists how to express answers.
	Style []string `json:"style"`
	// Forbidden lists forbidden behaviours.
	Forbidden []string `json:"forbidden"`
	// Triggers are the words a user would type when the skill is needed
	// (the model's, where one writes the prose); SKILL.md lists them first.
	Triggers []string `json:"triggers,omitempty"`
}

// labels are the fixed words of a SKILL.md in one language.
type labels struct {
	code                                    string // "zh" or "en"
	scope, principles, style, tools         string // the required section headings
	sopHeading, mustCheck, forbiddenHeading string
	otherRules                              string // %d rules
	when                                    string // (when: %s)
	toolHeader                              string
	coreRules, coreSearch, coreCollect      [3]string // intent, tool, do not
	avoid                                   map[string]string
	phaseStep                               string // %s phase, %s step
	say                                     phrases
}

// phrases are the template's sentences in one language. Verbs take the
// theme as %[1]s, the rule count as %[2]d and the sources as %[3]s.
type phrases struct {
	displaySep, listSep, end               string
	identity, identityNoWorks              string
	describe, describeNoWorks              string
	describeTopics, describeAny            string // %s topics; %s theme
	work, workOne                          string // %s name, %d rules
	sources, topics, patterns, procedure   string // prefixes of the scope items
	outOfScope                             string
	style                                  []string
	forbidden                              []string
	collectBirth, collectInfo, noDecisions string
	// noComputeTool replaces forbidden[1] when the skill offers no compute
	// tool: show cards with the tools, work the rest out showing the working.
	noComputeTool          string
	redFlag                string // %s signal, %s action
	signalClip, actionClip int
}

var zhLabels = labels{
	code: "zh", scope: "能力范围", principles: "分析原则", style: "表达方式", tools: "可用工具",
	sopHeading: "核心流程", mustCheck: "必查规则", forbiddenHeading: "禁止事项",
	otherRules:  "其余 %d 条规则按问题用 `get_rules` 检索，原文用 `search_knowledge` 查证。\n",
	when:        "（进入条件：%s）",
	toolHeader:  "| 用户意图 / 时机 | 必须调用的工具 | 不要 |\n|---|---|---|\n",
	coreRules:   [3]string{"需要判断依据时", "get_rules", "凭记忆背诵或自拟规则"},
	coreSearch:  [3]string{"需要原文出处，或规则没有覆盖时", "search_knowledge", "编造引文或出处"},
	coreCollect: [3]string{"分析所需的信息不全时", "collect_info", "猜测缺失的信息"},
	avoid: map[string]string{"display": "用文字代替卡片展示", "compute": "自行推算结果", "collect": "猜测缺失的信息",
		"retrieve": "凭记忆作答", "flow": "跳过流程步骤"},
	phaseStep: "%s阶段：%s",
	say: phrases{
		displaySep: "：", listSep: "、", end: "。",
		identity:        "你是 %[1]s 领域的专家，依据%[3]s整理出的 %[2]d 条规则按下面的流程分析问题，每个判断都注明所依据的规则或原文，典籍没有涉及的如实说明。",
		identityNoWorks: "本技能的知识库",
		describe:        "依据%[3]s的 %[2]d 条规则解答 %[1]s 问题", describeNoWorks: "知识库",
		describeTopics: "；用户问及%s等时使用", describeAny: "；用户问及 %s 时使用",
		work: "《%s》（%d 条规则）", workOne: "《%s》（%d 条规则）",
		sources: "依据典籍：", topics: "规则涉及的主题：", patterns: "一眼可辨的模式：", procedure: "分析流程：",
		outOfScope: "典籍没有涉及的问题不在范围内：如实说明，可用 `search_knowledge` 查证后再答。",
		style: []string{
			"先给结论，再给依据：规则编号（如 R001）与出处（书名 › 章节）。",
			"引用原文一字不改，并注明出处。",
			"用用户使用的语言作答，术语保留典籍原文。",
			"证据不足或规则彼此冲突时，说明不确定之处，不强作结论。",
		},
		forbidden: []string{
			"不编造知识库中没有的规则、出处或引文。",
			"需要计算或展示时调用「可用工具」中的工具，不用文字代替。",
		},
		noComputeTool: "需要展示时调用「可用工具」中的工具，不用文字代替；没有工具可算的结果，写出推算步骤与依据。",
		collectBirth:  "缺少出生信息时先调用 `collect_info` 收集，不猜测。",
		collectInfo:   "分析所需的信息不全时先调用 `collect_info` 收集，不猜测。",
		noDecisions:   "不把推断说成确定无疑的医疗、法律或财务决定。",
		redFlag:       "不可略过「%s」这一信号：%s", signalClip: 40, actionClip: 60,
	},
}

var enLabels = labels{
	code: "en", scope: "Scope", principles: "Principles", style: "Style", tools: "Tools",
	sopHeading: "Core procedure", mustCheck: "Rules to check first", forbiddenHeading: "Never",
	otherRules:  "Look up the other %d rules for the question with `get_rules`, and the sources with `search_knowledge`.\n",
	when:        " (when: %s)",
	toolHeader:  "| Intent / moment | Tool to call | Do not |\n|---|---|---|\n",
	coreRules:   [3]string{"a judgement needs its rule", "get_rules", "quote rules from memory or make them up"},
	coreSearch:  [3]string{"the source text is needed, or no rule covers the question", "search_knowledge", "invent quotations or sources"},
	coreCollect: [3]string{"information the analysis needs is missing", "collect_info", "guess the missing information"},
	avoid: map[string]string{"display": "describe the card in text instead", "compute": "work the result out yourself", "collect": "guess the missing information",
		"retrieve": "answer from memory", "flow": "skip steps of the procedure"},
	phaseStep: "%s phase: %s",
	say: phrases{
		displaySep: ": ", listSep: ", ", end: ".",
		identity:        "You are an expert in %[1]s who answers from %[2]d rules drawn from %[3]s, follows the procedure below, cites the rule or passage behind every judgement, and says so when the sources do not cover a question.",
		identityNoWorks: "the skill's knowledge base",
		describe:        "Answers %[1]s questions from %[2]d rules in %[3]s", describeNoWorks: "its knowledge base",
		describeTopics: "; use it for questions on %s", describeAny: "; use it whenever %s comes up",
		work: "%s (%d rules)", workOne: "%s (%d rule)",
		sources: "Sources: ", topics: "Topics the rules cover: ", patterns: "Patterns recognised at a glance: ", procedure: "Procedure: ",
		outOfScope: "Out of scope: questions the sources do not cover; say so, and check with `search_knowledge` before answering.",
		style: []string{
			"Give the conclusion first, then its grounds: the rule id (such as R001) and the source (work › section).",
			"Quote the sources word for word and say where the quotation comes from.",
			"Answer in the user's language; keep the sources' technical terms.",
			"When the evidence is thin or rules disagree, say what is uncertain instead of forcing a conclusion.",
		},
		forbidden: []string{
			"Never invent rules, sources or quotations the knowledge base does not contain.",
			"Never describe in words what a tool under Tools should compute or show.",
		},
		noComputeTool: "Never describe in words what a tool under Tools should show; work out what no tool computes step by step, showing the working.",
		collectBirth:  "Never guess missing birth data: collect it with `collect_info` first.",
		collectInfo:   "Never guess information the analysis needs: collect it with `collect_info` first.",
		noDecisions:   "Never present an inference as a certain medical, legal or financial decision.",
		redFlag:       "Never pass over the signal \"%s\": %s", signalClip: 60, actionClip: 80,
	},
}

// requiredSections are the SKILL.md sections the skill spec requires, in
// the two languages integrate writes; a skill needs each in either.
var requiredSections = [][2]string{
	{zhLabels.scope, enLabels.scope},
	{zhLabels.principles, enLabels.principles},
	{zhLabels.style, enLabels.style},
	{zhLabels.tools, enLabels.tools},
}

// scriptOf says whether s is mostly Chinese ("zh") or Latin ("en"); a Han
// character counts about as much as a short English word.
func scriptOf(s string) string {
	han, latin := 0, 0
	for _, r := range s {
		switch {
		case unicode.Is(unicode.Han, r):
			han++
		case r < 0x80 && unicode.IsLetter(r):
			latin++
		}
	}
	switch {
	case han == 0 && latin == 0:
		return ""
	case han*4 >= latin:
		return "zh"
	}
	return "en"
}

// corpusLanguage picks the language to write SKILL.md in: the language most
// rules, patterns and SOP steps are written in (Chinese or English). A mixed
// corpus gets one language, the majority's, throughout.
func corpusLanguage(ks *knowledgeSet) labels {
	zh, en := 0, 0
	vote := func(s string) {
		switch scriptOf(s) {
		case "zh":
			zh++
		case "en":
			en++
		}
	}
	for _, r := range ks.rules.Rules.Core() {
		vote(r.Condition + " " + r.Conclusion + r.Action)
	}
	for _, p := range ks.pats.Patterns.QuickPatterns {
		vote(p.Signature + " " + p.Indication)
	}
	for _, ph := range ks.sop.SOP.Phases {
		for _, st := range ph.Steps {
			vote(st.Action)
		}
	}
	if zh > en {
		return zhLabels
	}
	return enLabels
}

// work is one source work and how many rules cite it.
type work struct {
	name  string
	cites int
}

// citedWorks ranks the works the rules cite, most cited first.
func citedWorks(ks *knowledgeSet) []work {
	works, _ := citations(ks)
	var out []work
	for _, w := range works.sorted() {
		out = append(out, work{w, works.counts[w]})
	}
	return out
}

// facts are what the template (and the model's prompt) say about the
// knowledge: true and specific, from the extracted files.
type facts struct {
	theme    string
	works    []work
	topics   []string // section topics the rules cite, most cited first
	patterns []string // quick pattern names
	phases   []string
	rules    int
	birth    bool
	redFlags []knowledge.RedFlag // critical ones
	// english names the theme for users who write English when the
	// sources are Chinese: the theme's name (its pinyin when it is
	// Chinese) and the English renderings, else the pinyin, of its most
	// used terms; "" for English sources.
	english string
}

func gatherFacts(theme string, ks *knowledgeSet, L labels) facts {
	f := facts{theme: theme, works: citedWorks(ks), rules: len(ks.rules.Rules.All()), birth: needsBirth(ks)}
	if L.code == "zh" {
		f.english = englishName(theme, ks)
	}
	// Topics in the corpus language come first: a mixed corpus's skill reads
	// in one language.
	_, topics := citations(ks)
	var same, other []string
	for _, t := range topics.sorted() {
		if strings.EqualFold(t, theme) {
			continue
		}
		if scriptOf(t) == L.code {
			same = append(same, t)
		} else {
			other = append(other, t)
		}
	}
	f.topics = append(same, other...)
	for _, p := range ks.pats.Patterns.QuickPatterns {
		if n := cleanHeading(p.Name); n != "" {
			f.patterns = append(f.patterns, n)
		}
	}
	for _, p := range ks.sop.SOP.Phases {
		f.phases = append(f.phases, nonEmpty(p.Name, p.ID))
	}
	for _, rf := range ks.pats.Patterns.RedFlags {
		if rf.Severity == "critical" {
			f.redFlags = append(f.redFlags, rf)
		}
	}
	return f
}

// clip shortens s to at most n characters, marking the cut.
func clip(s string, n int) string {
	s = normalizeSpace(s)
	if r := []rune(s); len(r) > n {
		return strings.TrimSpace(string(r[:n-1])) + "…"
	}
	return s
}

func quoteWorks(L labels, ws []work, n int) string {
	var names []string
	for i, w := range ws {
		if i == n {
			break
		}
		if L.code == "zh" {
			names = append(names, "《"+w.name+"》")
		} else {
			names = append(names, w.name)
		}
	}
	if L.code == "zh" {
		s := strings.Join(names, "")
		if len(ws) > n {
			s += fmt.Sprintf("等 %d 部典籍", len(ws))
		}
		return s
	}
	switch {
	case len(ws) > n:
		return strings.Join(names, ", ") + fmt.Sprintf(" and %d more works", len(ws)-n)
	case len(names) > 1:
		return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
	}
	return strings.Join(names, "")
}

// templateProse fills the prose offline from the facts. count measures the
// metadata budget: the description is shortened until name and description
// fit maxMeta tokens.
func templateProse(f facts, L labels, count func(string) int, maxMeta int) Prose {
	say := L.say
	p := Prose{DisplayName: f.theme}
	if len(f.works) > 0 {
		p.DisplayName = clip(f.theme+say.displaySep+quoteWorks(L, f.works, 2), 60)
	}
	// The description: what, from which works, when to use it; shortened
	// until name and description take about 50 tokens (skill-spec-v5), and
	// never more than maxMeta.
	target := maxMeta
	if target <= 0 || target > 50 {
		target = 50
	}
	for nw, nt := min(3, len(f.works)), min(4, len(f.topics)); ; {
		p.Description = describe(f, L, nw, nt)
		if f.english != "" {
			p.Description += " " + f.english
		}
		if count(f.theme+"\n"+p.Description) <= target || (nw <= 1 && nt == 0) {
			break
		}
		if nw > 1 {
			nw--
		} else {
			nt--
		}
	}
	p.Description = clip(p.Description, 512)

	src := say.identityNoWorks
	if len(f.works) > 0 {
		src = quoteWorks(L, f.works, 2)
	}
	p.Identity = fmt.Sprintf(say.identity, f.theme, f.rules, src)

	var works []string
	for _, w := range f.works[:min(6, len(f.works))] {
		format := say.work
		if w.cites == 1 {
			format = say.workOne
		}
		works = append(works, fmt.Sprintf(format, w.name, w.cites))
	}
	for _, item := range []struct {
		prefix string
		list   []string
		sep    string
	}{
		{say.sources, works, say.listSep},
		{say.topics, f.topics[:min(10, len(f.topics))], say.listSep},
		{say.patterns, f.patterns[:min(6, len(f.patterns))], say.listSep},
		{say.procedure, f.phases, " → "},
	} {
		if len(item.list) > 0 {
			p.Scope = append(p.Scope, item.prefix+strings.Join(item.list, item.sep))
		}
	}
	p.Scope = append(p.Scope, say.outOfScope)
	p.Style = append([]string(nil), say.style...)
	p.Forbidden = append([]string(nil), say.forbidden...)
	if f.birth {
		p.Forbidden = append(p.Forbidden, say.collectBirth)
	} else {
		p.Forbidden = append(p.Forbidden, say.collectInfo)
	}
	p.Forbidden = append(p.Forbidden, say.noDecisions)
	for _, rf := range f.redFlags[:min(5, len(f.redFlags))] {
		p.Forbidden = append(p.Forbidden, fmt.Sprintf(say.redFlag, clip(rf.Signal, say.signalClip), clip(rf.Action, say.actionClip)))
	}
	return p
}

func describe(f facts, L labels, nWorks, nTopics int) string {
	say := L.say
	src := say.describeNoWorks
	if len(f.works) > 0 {
		src = quoteWorks(L, f.works, nWorks)
	}
	s := fmt.Sprintf(say.describe, f.theme, f.rules, src)
	if nTopics > 0 {
		s += fmt.Sprintf(say.describeTopics, strings.Join(f.topics[:min(nTopics, len(f.topics))], say.listSep))
	} else {
		s += fmt.Sprintf(say.describeAny, f.theme)
	}
	return s + say.end
}

// toolRows lays out the intent -> tool table: the core retrieval tools,
// every declared tool with its when_to_call, then core tools the SOP calls.
func toolRows(L labels, s knowledge.SOP, tools []skills.Tool) string {
	var b strings.Builder
	b.WriteString(L.toolHeader)
	row := func(intent, tool, avoid string) {
		fmt.Fprintf(&b, "| %s | `%s` | %s |\n", cell(clip(intent, 80)), tool, cell(avoid))
	}
	row(L.coreRules[0], L.coreRules[1], L.coreRules[2])
	row(L.coreSearch[0], L.coreSearch[1], L.coreSearch[2])
	seen := map[string]bool{"get_rules": true, "search_knowledge": true}
	for _, t := range tools {
		seen[t.Name] = true
		row(nonEmpty(t.WhenToCall, t.Description), t.Name, L.avoid[t.Type])
	}
	if !seen["collect_info"] {
		seen["collect_info"] = true
		row(L.coreCollect[0], L.coreCollect[1], L.coreCollect[2])
	}
	for _, p := range s.Phases {
		for _, st := range p.Steps {
			// Core tools only: a tool of the skill's own is listed above
			// when offered, and one not offered must not be named.
			if st.Tool != "" && !seen[st.Tool] && isCoreTool(st.Tool) {
				seen[st.Tool] = true
				row(fmt.Sprintf(L.phaseStep, nonEmpty(p.Name, p.ID), st.Action), st.Tool, L.avoid[toolType(st.Tool)])
			}
		}
	}
	return b.String()
}

func bullets(items []string) string {
	var b strings.Builder
	for _, it := range items {
		fmt.Fprintf(&b, "- %s\n", normalizeSpace(it))
	}
	return b.String()
}
