package extract

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/vibelife/vibe/knowledge"
)

// phaseSpec is one of the design's generic phases (section 4.2), with the
// core tool bound to it (section 4.3).
type phaseSpec struct {
	id, zhName, enName, zhDesc, enDesc string
	zhEntry, enEntry, zhExit, enExit   string
	tool                               string
}

var phaseSpecs = []phaseSpec{
	{"P1", "收集", "Collect", "确定需要什么信息，通过工具或对话收集，确认信息完整。", "Decide what information is needed, collect it through tools or dialogue, confirm it is complete.",
		"用户提出问题", "the user asks a question", "必要信息齐全", "the required information is complete", "collect_info"},
	{"P2", "计算", "Compute", "调用计算型工具，生成基础数据。", "Call the compute tools and produce the base data.",
		"输入信息完整", "the input is complete", "基础数据已生成", "the base data exists", ""},
	{"P3", "扫描", "Scan", "匹配已知模式，检查红旗信号，确定分析方向。", "Match known patterns, check red flags, choose the direction of analysis.",
		"计算完成", "the computation is done", "已确定格局与风险信号", "patterns and red flags are identified", "get_rules"},
	{"P4", "分析", "Analyze", "检索相关规则，应用规则推理，检索相似案例。", "Retrieve the relevant rules, reason with them, retrieve similar cases.",
		"用户有具体问题", "the user has a specific question", "结论有规则与原文支撑", "every conclusion is backed by rules and sources", "search_knowledge"},
	{"P5", "输出", "Output", "调用展示工具，生成个性化表达，准备追问应答。", "Call the display tools, phrase the answer for the user, prepare for follow-ups.",
		"分析完成", "the analysis is done", "用户得到答复", "the user has the answer", "show_report"},
}

// buildSOP returns the design's five generic phases (section 4.2) with no
// steps, for a path that fills them itself (the LLM map step). sents is not
// read.
func buildSOP(theme string, zh bool, _ []sentence) knowledge.SOP {
	sop := knowledge.SOP{Name: theme + " expert SOP", Description: "Generic expert procedure (collect, compute, scan, analyse, output)."}
	if zh {
		sop.Name = theme + " 专家工作流程"
		sop.Description = "通用专家流程（收集、计算、扫描、分析、输出）。"
	}
	for i, p := range phaseSpecs {
		ph := knowledge.Phase{ID: p.id, Name: p.enName, Description: p.enDesc, EntryCondition: p.enEntry, ExitCondition: p.enExit, Steps: []knowledge.Step{}}
		if zh {
			ph.Name, ph.Description, ph.EntryCondition, ph.ExitCondition = p.zhName, p.zhDesc, p.zhEntry, p.zhExit
		}
		if i+1 < len(phaseSpecs) {
			ph.NextPhase = phaseSpecs[i+1].id
		}
		sop.Phases = append(sop.Phases, ph)
	}
	return sop
}

// maxProcedures bounds the procedure phases: with the collect and output
// phases around them the SOP keeps the design's 5-7 phases.
const maxProcedures = 5

// maxSteps bounds the steps of one procedure.
const maxSteps = 12

var (
	// methodH is a heading over a procedure.
	methodH = regexp.MustCompile(`(?i)法$|之法|步骤|流程|程序|做法|method|procedure|steps|how to|instructions|directions|recipe`)
	// headingNumber is the numbering in front of a heading.
	headingNumber = regexp.MustCompile(`^(?:第[一二三四五六七八九十百零\d]+[章节篇卷回]\s*|[一二三四五六七八九十]+[、.．]\s*|(?i:chapter|section|part|step)\s+[\dIVXivx]+[.:]?\s*|\d+(?:\.\d+)*[.、]?\s+)`)
	// zhFirst opens the first step of a sequence (先看, 先论 ...); zhNext the
	// following ones (次看, 再论, 然后, 方可 ...).
	zhFirst = regexp.MustCompile(`^(?:须|当|宜)?先[看论观察取定推以用审明查]`)
	zhNext  = regexp.MustCompile(`^(?:又次|其次|然后|次|再|后|方|乃|终|末)`)
	zhSaid  = regexp.MustCompile(`^[^，]{0,4}[曰云]$`)
	enFirst = regexp.MustCompile(`^(?:First(?:ly)?|To begin|Start by)\b`)
	enNext  = regexp.MustCompile(`^(?:Then|Next|After that|Afterwards|Second(?:ly)?|Third(?:ly)?|Finally|Lastly)\b`)
)

// procedure is a sequence of steps a source describes.
type procedure struct {
	name, title string // the heading or topic, the document title
	heading     bool   // under a method heading (an enumerated list)
	zh          bool
	steps       []procStep
	first       sentence
}

type procStep struct {
	action string
	ev     knowledge.Evidence
}

// offlineSOP builds the SOP in the order the books themselves proceed: the
// main line of a principal book's headings (headingSOP). Without one, the
// procedures the sources list under method headings are the phases; with
// neither, the SOP says plainly that a procedure needs a model, and has one
// phase without steps. An order given in passing (小儿之命，先看关煞，次看格局)
// is about one case and is never a phase.
func offlineSOP(theme string, zh bool, sents []sentence, score stepScore) knowledge.SOP {
	if sop, ok := headingSOP(theme, zh, sents, score); ok {
		return sop
	}
	var procs []procedure
	for _, p := range findProcedures(sents) {
		if p.heading {
			procs = append(procs, p)
		}
	}
	if len(procs) == 0 {
		sop := knowledge.SOP{Name: theme,
			Description: "The sources give no order of their own (no chapters that follow one another, no listed method): an overall procedure needs a model (set OPENAI_BASE_URL and rebuild). Until then, answer from the rules and cite the sources (offline heuristic).",
			Phases: []knowledge.Phase{{ID: "P1", Name: "Answer from the rules", Steps: []knowledge.Step{},
				Description:    "No procedure: the sources state none, and the offline extractor does not make one up.",
				EntryCondition: "the user asks a question", ExitCondition: "the user has an answer citing the sources"}}}
		if zh {
			sop.Description = "原典未给出自身的次序（既无前后相承的章节，也无成文的方法步骤）：总流程需用模型归纳（设置 OPENAI_BASE_URL 后重建）。在此之前，依规则作答并注明出处（离线启发式）。"
			sop.Phases[0].Name, sop.Phases[0].Description = "依规则作答", "无流程：原典未述，离线提取不作编造。"
			sop.Phases[0].EntryCondition, sop.Phases[0].ExitCondition = "用户提出问题", "用户得到注明出处的答复"
		}
		return sop
	}
	sop := knowledge.SOP{Name: theme}
	sop.Description = fmt.Sprintf("The %d procedures the sources list under method headings, each a phase with its steps in the source's order: use the one the question concerns (offline heuristic).", len(procs))
	if len(procs) == 1 {
		sop.Description = "The procedure the sources list under a method heading, its steps in the source's order (offline heuristic)."
	}
	if zh {
		sop.Description = fmt.Sprintf("原典在方法类标题下列出的 %d 个操作流程，各为一个阶段，步骤按原文次序：按问题选用（离线启发式）。", len(procs))
	}
	for i, p := range procs {
		id := fmt.Sprintf("P%d", i+1)
		ph := knowledge.Phase{ID: id, Name: p.phaseName()}
		if i+1 < len(procs) {
			ph.NextPhase = fmt.Sprintf("P%d", i+2)
		}
		if p.zh {
			ph.EntryCondition = "问题涉及「" + p.name + "」"
			ph.ExitCondition = "各步骤已完成"
			ph.Description = "《" + p.title + "》「" + p.name + "」所列步骤，按原文次序。"
		} else {
			ph.EntryCondition = "the question concerns “" + p.name + "”"
			ph.ExitCondition = "every step is done"
			ph.Description = "The steps " + p.title + " gives under “" + p.name + "”, in its order."
		}
		for j, st := range p.steps {
			ph.Steps = append(ph.Steps, knowledge.Step{ID: fmt.Sprintf("%s.%d", id, j+1), Action: st.action, Evidence: []knowledge.Evidence{st.ev}})
		}
		sop.Phases = append(sop.Phases, ph)
	}
	return sop
}

func (p procedure) phaseName() string {
	if p.title == "" || strings.Contains(normalise(p.name), normalise(p.title)) {
		return p.name
	}
	if p.zh {
		return "《" + p.title + "》" + p.name
	}
	return p.title + " — " + p.name
}

// findProcedures finds enumerated lists under method headings, Chinese
// sequences (先看……，次看……，方……) and English ones (First …. Then ….
// Finally …), and keeps up to maxProcedures: lists under method headings
// first, then the longest; in corpus order.
func findProcedures(sents []sentence) []procedure {
	var out []procedure
	var cur *procedure
	curKey := ""
	for i := 0; i < len(sents); i++ {
		s := sents[i]
		hp := s.Chunk.HeadingPath
		key := s.Chunk.Doc + "\x00" + strings.Join(hp, "\x00")
		if cur != nil && key != curKey {
			out = appendProc(out, cur)
			cur = nil
		}
		if s.Enum && len(hp) > 0 && methodH.MatchString(hp[len(hp)-1]) {
			if cur == nil {
				h := strings.TrimSpace(headingNumber.ReplaceAllString(strings.TrimSpace(hp[len(hp)-1]), ""))
				cur, curKey = &procedure{name: h, title: titleOf(s), heading: true, zh: isHan(h + s.Text), first: s}, key
			}
			line := lineFrom(s)
			action := trimClause(strings.TrimRight(line, "。.;；"))
			if runeLen(action) >= 4 && len(cur.steps) < maxSteps {
				cur.steps = append(cur.steps, procStep{action: action, ev: knowledge.Evidence{Chunk: s.Chunk.ID, Quote: line}})
			}
			continue
		}
		if p, ok := zhSequence(sents, i); ok {
			out = appendProc(out, &p)
			continue
		}
		if p, n, ok := enSequence(sents, i); ok {
			out = appendProc(out, &p)
			i += n - 1
		}
	}
	if cur != nil {
		out = appendProc(out, cur)
	}
	// Drop a procedure whose steps repeat one kept before (books quote each
	// other), then keep the best.
	var kept []procedure
	var seen nearDups
	for _, p := range out {
		var b strings.Builder
		for _, st := range p.steps {
			b.WriteString(st.action)
		}
		if !seen.repeats(b.String()) {
			kept = append(kept, p)
		}
	}
	ranked := append([]procedure(nil), kept...)
	sort.SliceStable(ranked, func(i, j int) bool {
		if ranked[i].heading != ranked[j].heading {
			return ranked[i].heading
		}
		return len(ranked[i].steps) > len(ranked[j].steps)
	})
	if len(ranked) > maxProcedures {
		ranked = ranked[:maxProcedures]
	}
	sort.SliceStable(ranked, func(i, j int) bool { return ranked[i].first.Seq < ranked[j].first.Seq })
	// Two procedures under one name (a book gives two orders for 看命) are
	// told apart by their first step.
	count := map[string]int{}
	for _, p := range ranked {
		count[p.phaseName()]++
	}
	for i, p := range ranked {
		if count[p.phaseName()] > 1 {
			sep := "："
			if !p.zh {
				sep = ": "
			}
			ranked[i].name = p.name + sep + p.steps[0].action
		}
	}
	return ranked
}

func appendProc(out []procedure, p *procedure) []procedure {
	if len(p.steps) >= 2 && p.name != "" {
		return append(out, *p)
	}
	return out
}

func titleOf(s sentence) string {
	if s.Chunk.Title != "" {
		return s.Chunk.Title
	}
	src := sourceOf(s.Chunk)
	if i := strings.Index(src, " > "); i >= 0 {
		return src[:i]
	}
	return src
}

// lineFrom returns the rest of the line a sentence starts, verbatim from its
// chunk: an enumerated item is one step even when it holds two sentences.
func lineFrom(s sentence) string {
	t := s.Chunk.Text[s.Off:]
	if i := strings.IndexByte(t, '\n'); i >= 0 {
		t = t[:i]
	}
	return strings.TrimRight(t, " \t　")
}

// zhSequence reads sents[i] as a Chinese sequence: a clause opening with 先看
// (先论, 先取 ...) and later clauses opening with 次/再/然后/方 ...; the topic
// is the clause before the sequence (小儿之命，……先看关煞，次看格局).
func zhSequence(sents []sentence, i int) (procedure, bool) {
	s := sents[i]
	if !s.Zh || !strings.Contains(s.Text, "先") || hasCorruption(s.Text) {
		return procedure{}, false
	}
	body := strings.TrimRight(s.Text, "。！；;")
	cl := clausesOf(body)
	start := -1
	for k, c := range cl {
		if zhFirst.MatchString(c.Text) {
			start = k
			break
		}
	}
	if start < 0 {
		return procedure{}, false
	}
	var steps []procStep
	var from, to int
	flush := func() {
		if to > from {
			q := body[from:to]
			steps = append(steps, procStep{action: trimClause(q), ev: knowledge.Evidence{Chunk: s.Chunk.ID, Quote: q}})
		}
	}
	from, to = cl[start].Start, cl[start].End
	for k := start + 1; k < len(cl); k++ {
		if zhNext.MatchString(cl[k].Text) {
			flush()
			from = cl[k].Start
		}
		to = cl[k].End
	}
	flush()
	if len(steps) < 2 {
		return procedure{}, false
	}
	// The topic is the first clause before the sequence that is not a
	// quotation's opening (又曰, 书云); a sequence that opens its sentence
	// takes it from the sentence before when only a ； divides them.
	var before []clause
	if start > 0 {
		before = cl[:start]
	} else if i > 0 && sents[i-1].Chunk == s.Chunk && strings.HasSuffix(sents[i-1].Text, "；") {
		before = clausesOf(sents[i-1].Text)
	}
	topic := ""
	for _, c := range before {
		if !zhSaid.MatchString(c.Text) {
			topic = c.Text
			break
		}
	}
	// 育吾山人著看命口诀大凡看命: a heading run into the text; the topic is
	// what follows 凡.
	if i := strings.LastIndex(topic, "凡"); i >= 0 {
		topic = topic[i+len("凡"):]
	}
	for _, p := range []string{"又曰", "又云", "若", "如"} {
		topic = strings.TrimPrefix(topic, p)
	}
	topic = trimClause(topic)
	if runeLen(topic) < 2 || runeLen(topic) > 12 {
		hp := s.Chunk.HeadingPath
		if len(hp) == 0 {
			return procedure{}, false
		}
		topic = strings.TrimSpace(headingNumber.ReplaceAllString(hp[len(hp)-1], ""))
	}
	return procedure{name: topic, title: titleOf(s), zh: true, steps: steps, first: s}, true
}

// enSequence reads sents[i:] as an English sequence in one chunk: a sentence
// opening with "First" and the following ones opening with "Then", "Next",
// "Finally" ...; it returns how many sentences it used.
func enSequence(sents []sentence, i int) (procedure, int, bool) {
	s := sents[i]
	if s.Zh || !enFirst.MatchString(s.Text) {
		return procedure{}, 0, false
	}
	steps := []procStep{{action: trimClause(s.Text), ev: knowledge.Evidence{Chunk: s.Chunk.ID, Quote: s.Text}}}
	n := 1
	for j := i + 1; j < len(sents) && sents[j].Chunk == s.Chunk && enNext.MatchString(sents[j].Text) && len(steps) < maxSteps; j++ {
		steps = append(steps, procStep{action: trimClause(sents[j].Text), ev: knowledge.Evidence{Chunk: sents[j].Chunk.ID, Quote: sents[j].Text}})
		n++
	}
	hp := s.Chunk.HeadingPath
	if len(steps) < 2 || len(hp) == 0 {
		return procedure{}, 0, false
	}
	name := strings.TrimSpace(headingNumber.ReplaceAllString(hp[len(hp)-1], ""))
	return procedure{name: name, title: titleOf(s), steps: steps, first: s}, n, true
}
