package extract

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/vibelife/vibe/knowledge"
)

// phaseSpec is one of the design's generic phases (section 4.2), with the
// core tool bound to it (section 4.3) and the words that find supporting
// text in the sources.
type phaseSpec struct {
	id, zhName, enName, zhDesc, enDesc string
	zhEntry, enEntry, zhExit, enExit   string
	zhAction, enAction                 string
	zhOutput, enOutput                 string
	tool                               string
	find                               *regexp.Regexp
}

var phaseSpecs = []phaseSpec{
	{"P1", "收集", "Collect", "确定需要什么信息，通过工具或对话收集，确认信息完整。", "Decide what information is needed, collect it through tools or dialogue, confirm it is complete.",
		"用户提出问题", "the user asks a question", "必要信息齐全", "the required information is complete",
		"收集分析所需的基本信息", "collect the basic information the analysis needs", "完整的输入信息", "complete input",
		"collect_info", regexp.MustCompile(`(?i)生辰|年月日时|出生|八字|收集|准备|询问|information|birth|data|gather|collect|prepare|choos`)},
	{"P2", "计算", "Compute", "调用计算型工具，生成基础数据。", "Call the compute tools and produce the base data.",
		"输入信息完整", "the input is complete", "基础数据已生成", "the base data exists",
		"排出基础数据（如命盘）", "compute the base data", "基础数据", "base data",
		"", regexp.MustCompile(`(?i)排|起例|推算|计算|称|量|calculat|comput|measur|weigh|\bgrams?\b|ratio`)},
	{"P3", "扫描", "Scan", "匹配已知模式，检查红旗信号，确定分析方向。", "Match known patterns, check red flags, choose the direction of analysis.",
		"计算完成", "the computation is done", "已确定格局与风险信号", "patterns and red flags are identified",
		"对照模式库与红旗信号快速识别", "match the quick patterns and red flags", "命中的模式与红旗", "matched patterns and red flags",
		"get_rules", regexp.MustCompile(`(?i)格局|成格|破格|观|察|pattern|sign|look|watch|notice`)},
	{"P4", "分析", "Analyze", "检索相关规则，应用规则推理，检索相似案例。", "Retrieve the relevant rules, reason with them, retrieve similar cases.",
		"用户有具体问题", "the user has a specific question", "结论有规则与原文支撑", "every conclusion is backed by rules and sources",
		"检索原典与规则并推理", "search the sources and rules and reason", "带出处的分析结论", "cited conclusions",
		"search_knowledge", regexp.MustCompile(`(?i)用神|旺衰|喜忌|强弱|判断|analy|judg|if .+ then`)},
	{"P5", "输出", "Output", "调用展示工具，生成个性化表达，准备追问应答。", "Call the display tools, phrase the answer for the user, prepare for follow-ups.",
		"分析完成", "the analysis is done", "用户得到答复", "the user has the answer",
		"展示报告并准备追问", "show the report and prepare follow-ups", "报告", "report",
		"show_report", regexp.MustCompile(`(?i)断|岁运|大运|流年|饮|report|conclu|serve|drink|result`)},
}

// buildSOP fills the generic phases with evidence from the sources and adds
// the enumerated procedures found under method headings to the analysis
// phase.
func buildSOP(theme string, zh bool, sents []sentence) knowledge.SOP {
	sop := knowledge.SOP{Name: theme + " expert SOP", Description: "Generic expert procedure (collect, compute, scan, analyse, output) filled from the sources by the offline heuristic."}
	if zh {
		sop.Name = theme + " 专家工作流程"
		sop.Description = "通用专家流程（收集、计算、扫描、分析、输出），由离线启发式从原典中填充。"
	}
	// Evidence per phase: the first short sentence matching its words.
	evFor := make([][]knowledge.Evidence, len(phaseSpecs))
	for _, s := range sents {
		n := runeLen(s.Text)
		if n < 6 || n > 80 {
			continue
		}
		done := true
		for i, p := range phaseSpecs {
			if evFor[i] == nil && p.find.MatchString(s.Text) {
				evFor[i] = []knowledge.Evidence{{Chunk: s.Chunk.ID, Quote: s.Text}}
			}
			done = done && evFor[i] != nil
		}
		if done {
			break
		}
	}
	method := methodSteps(sents)
	for i, p := range phaseSpecs {
		ph := knowledge.Phase{ID: p.id, Name: p.enName, Description: p.enDesc, EntryCondition: p.enEntry, ExitCondition: p.enExit}
		st := knowledge.Step{ID: p.id + ".1", Action: p.enAction, Tool: p.tool, Output: p.enOutput, Evidence: evFor[i]}
		if zh {
			ph.Name, ph.Description, ph.EntryCondition, ph.ExitCondition = p.zhName, p.zhDesc, p.zhEntry, p.zhExit
			st.Action, st.Output = p.zhAction, p.zhOutput
		}
		// A template step no source sentence supports is left out: every
		// item in the knowledge files cites its evidence. The phase itself
		// (its conditions and hand-off) still frames the procedure.
		ph.Steps = []knowledge.Step{}
		if st.Evidence != nil {
			ph.Steps = append(ph.Steps, st)
		}
		if p.id == "P4" {
			for j, m := range method {
				out := "该步骤的判断"
				if !zh {
					out = "the judgement of this step"
				}
				ph.Steps = append(ph.Steps, knowledge.Step{
					ID: fmt.Sprintf("%s.%d", p.id, j+2), Action: m.action, Tool: "search_knowledge", Output: out,
					Evidence: []knowledge.Evidence{{Chunk: m.s.Chunk.ID, Quote: m.s.Text}},
				})
			}
		}
		if i+1 < len(phaseSpecs) {
			ph.NextPhase = phaseSpecs[i+1].id
		}
		sop.Phases = append(sop.Phases, ph)
	}
	return sop
}

type methodStep struct {
	s      sentence
	action string
}

// methodSteps finds enumerated lines in chunks under a method heading.
func methodSteps(sents []sentence) []methodStep {
	var out []methodStep
	seen := map[string]bool{}
	for _, s := range sents {
		hp := s.Chunk.HeadingPath
		if len(hp) == 0 || !methodH.MatchString(hp[len(hp)-1]) {
			continue
		}
		// The sentence must start an enumerated line in the chunk: only the
		// enumerator ("1. ", "一、", "- ") may stand before it on its line.
		idx := strings.Index(s.Chunk.Text, s.Text)
		if idx < 0 {
			continue
		}
		lineStart := strings.LastIndex(s.Chunk.Text[:idx], "\n") + 1
		prefix := s.Chunk.Text[lineStart:idx]
		if !enumLine.MatchString(prefix+s.Text) || strings.TrimSpace(enumLine.ReplaceAllString(prefix, "")) != "" {
			continue
		}
		action := trimPunct(enumLine.ReplaceAllString(s.Text, ""))
		if runeLen(action) < 4 || runeLen(action) > 80 || seen[action] {
			continue
		}
		seen[action] = true
		out = append(out, methodStep{s, action})
		if len(out) == maxMethod {
			break
		}
	}
	return out
}
