package runtime

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/vibelife/vibe/knowledge"
	"github.com/vibelife/vibe/llm"
)

// OfflineLabel starts every retrieval-only answer.
const OfflineLabel = "【离线检索模式 / retrieval-only mode: no model configured; these are retrieved rules and passages, not a generated answer】"

// offlineTurn answers without a model: the skill the router finds the
// message is about (skills.Set.Match: triggers, glossary, rules' wording),
// else the active ones (all of them when several are), the relevant rules
// and passages with citations.
func (a *Agent) offlineTurn(ctx context.Context, t *turn, msg string, recs []knowledge.StoredMessage) (string, error) {
	skill := primarySkill(t.active)
	answering := []string{skill}
	if m := a.cfg.Skills.Match(msg); m != "" {
		skill, answering = m, []string{m}
	} else if act := splitSkills(t.active); len(act) > 1 {
		answering = act
	}
	var sb strings.Builder
	var form json.RawMessage
	sb.WriteString(OfflineLabel + "\n")
	if hs := a.cfg.Skills.Headers(); skill == "" && len(hs) == 1 {
		// No trigger matched, but there is only one skill to ask.
		skill = hs[0].Name
		sb.WriteString("（没有技能与问题相符，使用唯一的技能 / no skill fits the question; using the only skill）\n")
	}
	if len(answering) <= 1 {
		answering = []string{skill}
	}
	if skill == "" {
		sb.WriteString("没有技能与问题相符。可用技能 / no skill fits the question; available: " + names(a.cfg.Skills.Headers()) + "\n")
	} else {
		newly := skill != primarySkill(t.active)
		if newly {
			recs = append(recs, knowledge.StoredMessage{Role: roleSkill, Content: skill})
			t.active = skill
		}
		fmt.Fprintf(&sb, "技能 / skill: %s\n", strings.Join(answering, ", "))
		if need := a.needBirthInfo(ctx, t.userID, []string{skill}); newly && len(need) > 0 && needsChart(msg) {
			// The collect step, once the skill is chosen: it reads
			// birth data the profile lacks.
			form = birthInfoForm(need)
			sb.WriteString("（本技能需要出生信息，请填写表单 / this skill needs your birth data: please fill in the form）\n")
		}
		nrules := 0
		for _, sn := range answering {
			rules, err := a.rulesFor(sn, msg, 5, minContextScore)
			if err != nil {
				return "", err
			}
			label := ""
			if len(answering) > 1 {
				label = sn
			}
			t.addCitations(a.ruleCitations(ctx, label, rules))
			if len(rules) > 0 && nrules == 0 {
				sb.WriteString("\n相关规则 / rules:\n")
			}
			nrules += len(rules)
			for _, r := range rules {
				if label != "" {
					fmt.Fprintf(&sb, "- [%s] %s\n", label, ruleLine(r))
				} else {
					fmt.Fprintf(&sb, "- %s\n", ruleLine(r))
				}
			}
		}
		if a.cfg.Searcher != nil {
			res, err := a.searchAcross(ctx, answering, "", msg, 4)
			ps := res.Passages
			if len(answering) == 1 {
				for i := range ps {
					ps[i].Skill = ""
				}
			}
			if err == nil {
				t.addCitations(passageCitations(ps))
			}
			if err == nil && res.Unbridged {
				fmt.Fprintf(&sb, "\n（问题与原文语言不同，且未能转换为原文用语，以下段落仅按字面匹配，可能不相关 / the question is in %s and the sources in %s; it names no glossary term and no model is configured to rewrite it, so these passages match its words only and may not answer it）\n", LanguageName(res.QueryLang), LanguageName(res.SourceLang))
			}
			if err == nil && len(ps) > 0 {
				sb.WriteString("\n相关原文 / passages:\n")
				for _, p := range ps {
					text := []rune(strings.Join(strings.Fields(p.Text), " "))
					if len(text) > 200 {
						text = append(text[:200], '…')
					}
					note := ""
					if len(knowledge.GraveTerms(string(text))) > 0 {
						// The book's grave verdict, not the answer's.
						note = "（典籍的说法，非确定预言 / the book's verdict, not a certain prediction）"
						a.metrics.guard(guardVerdictCaveat)
					}
					fmt.Fprintf(&sb, "- [%s] %s (%s, %d-%d): %s%s\n", p.ChunkID, strings.Join(p.HeadingPath, " > "), p.Source, p.Start, p.End, string(text), note)
				}
			}
		}
		if nrules == 0 && a.cfg.Searcher == nil {
			sb.WriteString("（没有找到相关规则 / no relevant rule found）\n")
		}
	}
	if d := Disclaimer(msg); d != "" {
		a.metrics.guard(guardDisclaimer)
		sb.WriteString(d + "\n")
	}
	answer := sb.String()
	if err := t.send(Event{Type: EventContent, Content: answer}); err != nil {
		return answer, err
	}
	if form != nil {
		if err := t.send(Event{Type: EventForm, Form: form}); err != nil {
			return answer, err
		}
	}
	cites := t.answerCitations(answer)
	recs = append(recs, knowledge.StoredMessage{Role: llm.RoleUser, Content: msg}, t.answerRecord(answer, cites))
	if err := a.persist(ctx, t, recs); err != nil {
		statsFrom(ctx).setErr(errKindStore)
		return answer, fmt.Errorf("runtime: save conversation: %w", err)
	}
	if err := t.sendCitations(cites); err != nil {
		return answer, err
	}
	return answer, t.send(Event{Type: EventDone, Reason: "offline", ConversationID: t.convID, Skill: t.active})
}
