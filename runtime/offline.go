package runtime

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/vibelife/vibe/knowledge"
	"github.com/vibelife/vibe/llm"
)

// OfflineLabel starts every retrieval-only answer of a skill written in
// English; OfflineLabelZH one of a skill written in Chinese. (The labels of
// an answer are in its skill's language: offlineText.)
var (
	OfflineLabel   = offlineText[langEN].mode
	OfflineLabelZH = offlineText[langZH].mode
)

// offlineTurn answers without a model: the skill the router finds the
// message is about (skills.Set.Match: triggers, glossary, rules' wording),
// else the active ones (all of them when several are), the relevant rules
// and passages with citations.
func (a *Agent) offlineTurn(ctx context.Context, t *turn, msg string, recs []knowledge.StoredMessage) (string, error) {
	skill := primarySkill(t.active)
	answering := []string{skill}
	m, why := a.route(ctx, msg)
	if m != "" {
		skill, answering = m, []string{m}
	} else if act := splitSkills(t.active); len(act) > 1 {
		answering = act
	}
	var sb strings.Builder
	var form json.RawMessage
	only := false
	if hs := a.cfg.Skills.Headers(); skill == "" && len(hs) == 1 {
		// No trigger matched, but there is only one skill to ask.
		skill, only = hs[0].Name, true
	}
	L := a.labelsFor(skill, msg)
	sb.WriteString(L.mode + "\n\n")
	if only {
		sb.WriteString(L.onlySkill + "\n")
	}
	if len(answering) <= 1 {
		answering = []string{skill}
	}
	if skill == "" {
		sb.WriteString(L.noSkill + names(a.cfg.Skills.Headers()) + "\n")
	} else {
		newly := skill != primarySkill(t.active)
		if newly {
			recs = append(recs, knowledge.StoredMessage{Role: roleSkill, Content: skill})
			t.active = skill
		}
		fmt.Fprintf(&sb, "%s%s\n", L.skill, strings.Join(answering, ", "))
		if strings.HasPrefix(why, sourcesReason) {
			// Not the router's vocabulary: say which passage chose it.
			fmt.Fprintf(&sb, L.bySources+"\n", strings.TrimPrefix(why, sourcesReason))
		}
		if need := a.needBirthInfo(ctx, t.userID, []string{skill}); newly && len(need) > 0 && needsChart(msg) {
			// The collect step, once the skill is chosen: it reads
			// birth data the profile lacks.
			form = birthInfoForm(need)
			sb.WriteString(L.needBirth + "\n")
		}
		nrules := 0
		for _, sn := range answering {
			rules, missing, err := a.rulesFor(sn, msg, 5, minContextScore)
			if err != nil {
				return "", err
			}
			if len(missing) > 0 {
				// get_rules' partial answer: said so, as its note
				// says it to a model.
				note := L.missing
				if len(rules) == 0 {
					note = L.missingNone
				}
				fmt.Fprintf(&sb, "\n"+note+"\n", strings.Join(missing, ", "))
			}
			label := ""
			if len(answering) > 1 {
				label = sn
			}
			t.addCitations(a.ruleCitations(ctx, label, rules))
			if len(rules) > 0 && nrules == 0 {
				sb.WriteString("\n**" + L.rules + "**\n\n")
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
				fmt.Fprintf(&sb, "\n"+L.unbridged+"\n", LanguageName(res.QueryLang), LanguageName(res.SourceLang))
			}
			if err == nil && len(ps) > 0 {
				fate := a.fateIn(strings.Join(answering, skillSep))
				sb.WriteString("\n**" + L.passages + "**\n\n")
				for _, p := range ps {
					text := []rune(plainExcerpt(p.Text))
					if len(text) > 200 {
						text = append(text[:200], '…')
					}
					note := ""
					if fate && len(knowledge.GraveTerms(string(text))) > 0 {
						// The book's grave verdict, not the answer's.
						note = "（典籍的说法，非确定预言 / the book's verdict, not a certain prediction）"
						a.metrics.guard(guardVerdictCaveat)
					}
					fmt.Fprintf(&sb, "- [%s] %s (%s, %d-%d): %s%s\n", p.ChunkID, strings.Join(p.HeadingPath, " > "), p.Source, p.Start, p.End, string(text), note)
				}
			}
		}
		if nrules == 0 && a.cfg.Searcher == nil {
			sb.WriteString(L.noRule + "\n")
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
