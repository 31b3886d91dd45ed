package runtime

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/vibelife/vibe/knowledge"
	"github.com/vibelife/vibe/llm"
	"github.com/vibelife/vibe/skills"
)

// systemPrompt assembles the system prompt in the design's order: the core
// skill; the user context as narrative sentences; the active skill (tier 2)
// or the list of skills (tier 1); the runtime context (computed data,
// retrieved rules, protocol and progress, history summary).
func (a *Agent) systemPrompt(ctx context.Context, t *turn, msg string, all []knowledge.StoredMessage, protocol *skills.Protocol) (string, error) {
	t.resetPrompt()
	var sb strings.Builder
	core, err := a.cfg.Skills.Get(skills.CoreName)
	if err != nil {
		return "", err
	}
	sb.WriteString(core.Instructions())
	t.mu.Lock()
	user, userOK := t.user, t.userOK
	t.mu.Unlock()
	if !userOK {
		prof, err := a.cfg.Memory.Profile(ctx, t.userID)
		if err != nil {
			return "", fmt.Errorf("runtime: profile: %w", err)
		}
		user = Narrative(prof)
		t.mu.Lock()
		t.user, t.userOK = user, true
		t.mu.Unlock()
	}
	if user != noProfile {
		// Nothing known, nothing said (the profile tools say what is
		// missing when the question is about the user).
		sb.WriteString("\n\n# 用户 / User\n" + user)
	}

	activeSet := t.activeSkill()
	active := primarySkill(activeSet)
	names := splitSkills(activeSet)
	sb.WriteString("\n\n# 技能 / Skills\n")
	if len(names) > 1 {
		var sks []*skills.Skill
		for _, n := range names {
			if sk, err := a.cfg.Skills.Get(n); err == nil {
				sks = append(sks, sk)
			}
		}
		fmt.Fprintf(&sb, "当前激活的技能 / active skills: %s\n", strings.Join(names, ", "))
		if top := t.activeTopic(); top != "" {
			fmt.Fprintf(&sb, "话题 / topic: %s\n", top)
		}
		sb.WriteString("结合各技能的规则作答，并注明每条结论出自哪个技能 / combine the skills' rules and say which skill each judgement comes from.\n\n")
		text, _ := a.stackInstructions(sks)
		sb.WriteString(a.safeInstructionsOf(sks, text))
		sb.WriteString(a.verdictGuidance(names))
		sb.WriteString(otherFits(a.cfg.Skills.Route(msg), names))
	} else if active != "" {
		if sk, err := a.cfg.Skills.Get(active); err == nil {
			fmt.Fprintf(&sb, "当前激活的技能 / active skill: %s\n", sk.Name)
			if top := t.activeTopic(); top != "" {
				fmt.Fprintf(&sb, "话题 / topic: %s\n", top)
			}
			fmt.Fprintf(&sb, "\n%s\n", a.safeInstructionsOf([]*skills.Skill{sk}, sk.Instructions()))
			t.noteInContext(sk.Name, listedRules(sk.Instructions())...)
			if tn := toolNames(sk); len(tn) > 0 {
				sb.WriteString("\n本技能的工具 / skill tools: " + strings.Join(tn, ", ") + "\n")
			}
			sb.WriteString(a.verdictGuidance(names))
		}
		sb.WriteString(otherFits(a.cfg.Skills.Route(msg), names))
	} else {
		sb.WriteString("可用技能（用 use_skill 激活）/ available skills (activate with use_skill):\n")
		for _, h := range a.cfg.Skills.Headers() {
			fmt.Fprintf(&sb, "- %s: %s\n", h.Name, h.Summary())
		}
		cs := a.routeCandidates(msg)
		sb.WriteString(routeHint(cs, a.otherLanguage(msg)))
		if !anyFits(cs) {
			// The router's vocabulary found nothing strong: what the
			// sources say, as advice.
			// Asked once a turn: every step rebuilds the prompt.
			t.sourcesOnce.Do(func() { t.sourcesAdvice = sourcesAdvice(a.sourceEvidence(ctx, msg)) })
			sb.WriteString(t.sourcesAdvice)
		}
	}

	// The runtime context, left out when there is none.
	var rc strings.Builder
	t.mu.Lock()
	computed := append([]string(nil), t.computed...)
	t.mu.Unlock()
	for _, c := range computed {
		fmt.Fprintf(&rc, "计算结果 / computed: %s\n", c)
	}
	if len(names) > 0 {
		chat := all
		if t.transcript != nil {
			chat = chatRecords(t.transcript)
		}
		k := 3
		if len(names) > 1 {
			k = 2
		}
		head := false
		for _, n := range names {
			rules, err := a.contextRules(n, msg, chat, all, protocol, k)
			if err != nil || len(rules) == 0 {
				continue
			}
			if !head {
				rc.WriteString("相关规则 / relevant rules:\n")
				head = true
			}
			skill := ""
			if len(names) > 1 {
				skill = n
			}
			t.addCitations(a.ruleCitations(ctx, skill, rules))
			for _, r := range rules {
				t.noteInContext(n, r.ID)
				t.noteRule(r)
				if skill != "" {
					fmt.Fprintf(&rc, "- [%s] %s\n", skill, ruleLine(r))
				} else {
					fmt.Fprintf(&rc, "- %s\n", ruleLine(r))
				}
			}
		}
	}
	form := a.birthInfoStep(ctx, t, msg, names)
	rc.WriteString(form)
	t.mu.Lock()
	t.collect = form != "" || protocol != nil
	t.mu.Unlock()
	if protocol != nil {
		fmt.Fprintf(&rc, "\n## 进行中的协议 / protocol in progress: %s\n%s\n", protocol.Name, protocol.Body)
		if len(protocol.Steps) > 0 {
			done, next := progress(protocol, protocolRun(all, protocol))
			if next == "" {
				next = "（全部完成 / all done）"
			}
			fmt.Fprintf(&rc, "已完成 / done: %s；下一步 / next: %s\n", strings.Join(done, "、"), next)
		} else {
			rc.WriteString("从对话历史判断进度，继续未完成的部分。/ Read the progress from the conversation and continue where it stopped.\n")
		}
	}
	sum, err := a.summaryOf(ctx, t)
	if err != nil {
		return "", err
	}
	if sum.Text != "" {
		fmt.Fprintf(&rc, "\n对话摘要 / conversation summary: %s\n", sum.Text)
	}
	if rc.Len() > 0 {
		sb.WriteString("\n# 运行时上下文 / Runtime context\n")
		sb.WriteString(rc.String())
	}
	return sb.String(), nil
}

// verdictGuidance is the prompt's guidance for skills that read a
// person's fate: "" unless one of the active skills does (readsFate), so
// a travel-policy or a chess skill gets a theme-neutral core prompt.
func (a *Agent) verdictGuidance(active []string) string {
	var fate []string
	for _, n := range active {
		if sk, err := a.cfg.Skills.Get(n); err == nil && a.readsFate(sk) {
			fate = append(fate, n)
		}
	}
	if len(fate) == 0 {
		return ""
	}
	return fmt.Sprintf("\n## 断语 / Verdicts (%s)\n"+
		"关于死亡、灾祸、离婚、破败等的断语只是典籍的说法，不是确定的预言：以典籍的说法转述并注明出处；"+
		"涉及个人的判断先有其出生信息，不凭空推断。/ "+
		"Verdicts of death, disaster, divorce or ruin are what the books say, never a certain prediction: relay them as the tradition's, with their source; "+
		"a reading of a person needs their birth data first, never a guess.\n", strings.Join(fate, ", "))
}

// readsFate reports whether a skill reads a person's fate, the skills the
// core prompt's verdict guidance and every verdict caveat are for: it
// needs the user's birth data (requires_birth_info, which integrate sets
// when its SOP collects it), or its rules read fortunes
// (knowledge.ReadsFortunes). A skill that merely names death, disaster or
// ruin (a travel policy, a philosopher, a novel) does not.
func (a *Agent) readsFate(sk *skills.Skill) bool {
	if sk.RequiresBirthInfo {
		return true
	}
	idx, err := a.rules.get(sk)
	return err == nil && idx.fate
}

// progress reads a protocol's progress from the assistant messages given:
// a step is done once its marker appeared; next is the first step not done
// ("" when every step is).
func progress(p *skills.Protocol, msgs []knowledge.StoredMessage) (done []string, next string) {
	var hist strings.Builder
	for _, m := range msgs {
		if m.Role == llm.RoleAssistant {
			hist.WriteString(m.Content)
		}
	}
	h := hist.String()
	for _, s := range p.Steps {
		if strings.Contains(h, s) {
			done = append(done, s)
		} else if next == "" {
			next = s
		}
	}
	return done, next
}

// ruleThen is what a rule says follows from its condition: its conclusion,
// its action (a tier-1 rule's instruction), or both ("the gas can crack
// the glass; action: never seal the jar airtight").
func ruleThen(r knowledge.Rule) string {
	switch {
	case r.Action == "":
		return r.Conclusion
	case r.Conclusion == "":
		return r.Action
	case hasHan(r.Conclusion + r.Action):
		return r.Conclusion + "；应当：" + r.Action
	}
	return upperFirst(r.Conclusion) + "; action: " + r.Action
}

// ruleText is a rule's statement without its id, tier and source: "如果…，
// 则…" or "Condition → conclusion".
func ruleText(r knowledge.TieredRule) string {
	r = safeRule(r)
	then := ruleThen(r.Rule)
	if subjectOnly(r.Condition, then) {
		return upperFirst(then)
	}
	if hasHan(r.Condition + then) {
		return fmt.Sprintf("如果%s，则%s", r.Condition, then)
	}
	return fmt.Sprintf("%s → %s", upperFirst(r.Condition), upperFirst(then))
}

func ruleLine(r knowledge.TieredRule) string {
	r = safeRule(r)
	then := ruleThen(r.Rule)
	cite := ""
	if len(r.Evidence) > 0 {
		cite = " [" + r.Evidence[0].Chunk + "]"
	}
	if subjectOnly(r.Condition, then) {
		return fmt.Sprintf("%s (%s): %s (%s)%s", r.ID, r.Tier, upperFirst(then), r.Source, cite)
	}
	if hasHan(r.Condition + then) {
		return fmt.Sprintf("%s (%s): 如果%s，则%s（%s）%s", r.ID, r.Tier, r.Condition, then, r.Source, cite)
	}
	// English conditions and conclusions are quoted from the sources with
	// their own capitals ("Never brew…", "A bitter edge…"), so they cannot be
	// set inside "if …, then …"; an arrow reads right whatever they start with.
	return fmt.Sprintf("%s (%s): %s → %s (%s)%s", r.ID, r.Tier, upperFirst(r.Condition), upperFirst(then), r.Source, cite)
}

// subjectOnly reports whether a rule's condition is only the subject its
// statement opens with ("The standing trustee" → "The standing trustee must
// deposit …", as offline extraction keeps a rule with no if-clause): the
// statement alone says it, and "X → X must …" would say the subject twice.
func subjectOnly(cond, then string) bool {
	c := strings.TrimSpace(cond)
	return c != "" && len(then) > len(c) && strings.EqualFold(then[:len(c)], c)
}

// upperFirst capitalises the first letter of s.
func upperFirst(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	if n == 0 || !unicode.IsLower(r) {
		return s
	}
	return string(unicode.ToUpper(r)) + s[n:]
}

func hasHan(s string) bool {
	for _, r := range s {
		if unicode.Is(unicode.Han, r) {
			return true
		}
	}
	return false
}

// noProfile is the narrative of an empty profile.
const noProfile = "尚无该用户的资料。/ Nothing is known about the user yet.\n"

// Narrative renders a profile JSON as sentences rather than JSON.
func Narrative(profile json.RawMessage) string {
	var m map[string]any
	if err := json.Unmarshal(profile, &m); err != nil || len(m) == 0 {
		return noProfile
	}
	var lines []string
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		switch x := v.(type) {
		case map[string]any:
			keys := make([]string, 0, len(x))
			for k := range x {
				if k != "_meta" {
					keys = append(keys, k)
				}
			}
			sort.Strings(keys)
			for _, k := range keys {
				p := k
				if prefix != "" {
					p = prefix + "." + k
				}
				walk(p, x[k])
			}
		default:
			b, _ := json.Marshal(x)
			s := strings.Trim(string(b), `"`)
			lines = append(lines, fmt.Sprintf("用户的 %s 是 %s。", label(prefix), s))
		}
	}
	walk("", m)
	if len(lines) > 30 {
		lines = append(lines[:30], fmt.Sprintf("（另有 %d 项资料，可用 get_user_profile 读取。）", len(lines)-30))
	}
	return strings.Join(lines, "\n") + "\n"
}

var labels = map[string]string{
	"identity.name":       "姓名",
	"identity.gender":     "性别",
	"identity.birth_info": "出生信息",
}

func label(p string) string {
	if l, ok := labels[p]; ok {
		return l
	}
	return p
}

// otherFits tells the model, while skills are active, of other installed
// skills the router finds fitting the message, so it can add one with
// use_skill(skills=[...]); "" when none.
func otherFits(cs []skills.Candidate, active []string) string {
	var fit []string
	for _, c := range cs {
		in := false
		for _, n := range active {
			in = in || n == c.Name
		}
		if !in && c.Fits() && len(fit) < 3 {
			fit = append(fit, fmt.Sprintf("%s (%.2f)", c.Name, c.Score))
		}
	}
	if len(fit) == 0 {
		return ""
	}
	return "路由 / router: 这条消息也与其他技能相符 / other skills also fit this message: " + strings.Join(fit, ", ") +
		"；需要时用 use_skill(skills=[…]) 一并激活 / add them with use_skill(skills=[...]) when the question spans them.\n"
}

// routeHint offers the model the router's ranked candidates for the
// message, so that its use_skill choice starts from the same scores the
// offline mode routes by. They are advice: when no candidate is strong it
// says so and leaves the choice to the model (routeAdvice).
func routeHint(cs []skills.Candidate, across []string) string {
	var fit []skills.Candidate
	for _, c := range cs {
		if c.Fits() {
			fit = append(fit, c)
		}
	}
	if len(fit) == 0 {
		return "路由 / router: " + routeAdvice(cs, across) + "\n"
	}
	var sb strings.Builder
	sb.WriteString("路由 / router: 与这条消息最相符的技能 / skills that fit this message, best first:")
	for i, c := range fit {
		if i == 3 {
			break
		}
		fmt.Fprintf(&sb, " %s (%.2f", c.Name, c.Score)
		if len(c.Matched) > 0 {
			m := c.Matched
			if len(m) > 4 {
				m = m[:4]
			}
			sb.WriteString("; " + strings.Join(m, ", "))
		}
		sb.WriteString(")")
	}
	sb.WriteString("\n")
	return sb.String()
}

// routeAdvice says what the router makes of a message no candidate fits
// strongly. It never says that no skill fits while the message names a
// term of an installed skill's glossary in any language (skills.Named): it
// names those skills and the terms. Nor while the message is written in
// another language than a skill's sources (across): the router matches
// words, and a term in translation it has no rendering of is no word the
// skill knows ("peach blossom" is 桃花), so it names those skills and says
// the router cannot match a term in translation to them. Weak candidates
// are listed as advice; the model chooses.
func routeAdvice(cs []skills.Candidate, across []string) string {
	list := func(cs []skills.Candidate, terms bool) string {
		var parts []string
		for i, c := range cs {
			if i == 3 {
				break
			}
			p := fmt.Sprintf("%s (%.2f", c.Name, c.Score)
			if m := append(slices.Clip(c.Glossary), c.Bridged...); terms && len(m) > 0 {
				if len(m) > 4 {
					m = m[:4]
				}
				p += "; " + strings.Join(m, ", ")
			}
			parts = append(parts, p+")")
		}
		return strings.Join(parts, ", ")
	}
	if named := skills.Named(cs); len(named) > 0 {
		return "这条消息提到了技能术语，匹配较弱 / the match is weak, but this message names terms of " + list(named, true) +
			"; 若问题与之相关请用 use_skill 激活 / activate it with use_skill if the question is about them (the router's scores are advice; you choose)"
	}
	var weak []skills.Candidate
	for _, c := range cs {
		if c.Score > 0 {
			weak = append(weak, c)
		}
	}
	// A skill whose sources are in another language than the message
	// shares no word with a term in translation: named, not judged.
	xl := ""
	if len(across) > 0 {
		xl = "; 技能 " + strings.Join(across, ", ") + " 的原文与消息语言不同 / the sources of " + strings.Join(across, ", ") +
			" are in another language than this message, so the router cannot match a term given in translation: activate it if the question is about its topic"
	}
	if len(weak) > 0 {
		return "没有强匹配的技能 / no candidate is strong; the weak ones, best first: " + list(weak, false) +
			"; 仅作参考，由你判断 / they are advice: activate one if the question is about its topic, else answer without one" + xl
	}
	return "路由没有找到与这条消息共用词语的技能 / the router found no skill sharing words with this message; 若问题属于某技能的主题仍可激活 / activate one only if the question is about its topic" + xl
}
