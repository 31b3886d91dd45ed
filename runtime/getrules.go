package runtime

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/vibelife/vibe/skills"
)

// minRuleScore is the relevance a rule needs to be returned by get_rules
// (and to be listed in the retrieval-only answer; the prompt's automatic
// rules need minContextScore besides), together with stating a term of the
// question (ruleIndex.relevant): the share of the question's weight it
// holds. The rules that answer the project's bazi questions score 0.09
// (a long question over 子平真诠's model-built rules) to 1.3.
const minRuleScore = 0.05

// minContextScore is the relevance a rule needs to be put in the prompt
// unasked, besides get_rules' cut-off: about a third of the message's
// weight matched in the rule (less when the message holds part of its
// condition verbatim).
const minContextScore = 0.3

// rulesAnswer is what get_rules found for a question in the active skills.
type rulesAnswer struct {
	// Rules answer the question, best first.
	Rules []skillRule
	// Partial are rules that pass the cut-off but leave out what the
	// question asks about (Missing): no rule states it.
	Partial []skillRule
	Missing []string
	// SearchedAs and BridgedBy say how the question was carried over to
	// the rules' language (Bridged).
	SearchedAs, BridgedBy string
	Unbridged             bool
	// QueryLang and SourceLang are the languages of the question and of
	// the rules it was carried over to (Bridged): the first skill's, or
	// the first unbridged one's.
	QueryLang, SourceLang string
}

// getRules runs get_rules: the k rules of the active skills most relevant
// to the question, bridged to the rules' language like search_knowledge,
// above the relevance cut-off (minRuleScore); when the question asks about
// a term of the theme no rule states, the rules that touch the rest of it
// are returned apart as partial; when none is left, a note says so and what
// was searched.
func (a *Agent) getRules(ctx context.Context, active []string, question string, k int) (json.RawMessage, error) {
	ans, err := a.rulesAcross(ctx, active, question, k)
	if err != nil {
		return nil, err
	}
	// Grave verdicts go out as the tradition's, with a caveat (verdicts.go).
	res := map[string]any{"skill": active[0], "question": question, "rules": nonNilRules(safeSkillRules(ans.Rules))}
	if len(active) > 1 {
		res["skills"] = active
	}
	searched := question
	if ans.SearchedAs != "" {
		res["searched_as"] = ans.SearchedAs
		res["bridged_by"] = ans.BridgedBy
		searched = question + " / " + ans.SearchedAs
	}
	addLanguages(res, ans.QueryLang, ans.SourceLang)
	switch {
	case len(ans.Partial) > 0:
		res["partial"] = safeSkillRules(ans.Partial)
		res["note"] = fmt.Sprintf("没有规则论及 %s；以下规则只涉及问题的其他部分，不能直接作答 / no rule states %s, which the question asks about; the partial rules touch only the rest of it and do not answer it: say so, and answer from search_knowledge passages if they do (searched as: %s)",
			strings.Join(ans.Missing, "、"), strings.Join(ans.Missing, ", "), searched)
	case len(ans.Rules) == 0:
		res["note"] = fmt.Sprintf("没有与问题相关的规则 / no rule matched the question well enough (searched as: %s); do not cite rules for it: answer from search_knowledge passages, or say the skill's rules do not cover it", searched)
	}
	if ans.Unbridged {
		res["unbridged"] = true
		note, _ := res["note"].(string)
		res["note"] = strings.TrimSpace(note + fmt.Sprintf(" The question is in %s and the rules of a skill in %s, and it could not be carried over (no model to rewrite it, no glossary term it names): the rules match its own words only.", LanguageName(ans.QueryLang), LanguageName(ans.SourceLang)))
	}
	return jsonOf(res)
}

func nonNilRules(rs []skillRule) []skillRule {
	if rs == nil {
		return []skillRule{}
	}
	return rs
}

// rulesAcross returns the k rules of the active skills most relevant to
// the question (each skill's question bridged to its rules' language):
// each skill's best rule first (so a two-skill question gets both), then
// the rest by score.
func (a *Agent) rulesAcross(ctx context.Context, active []string, question string, k int) (rulesAnswer, error) {
	var ans rulesAnswer
	// best holds each skill's first rule (when several skills are active);
	// rest and partial the others, a list a skill, in its answer's order.
	var best []scoredSkillRule
	var rest, partial [][]scoredSkillRule
	type skillAnswer struct {
		name    string
		rules   []scoredRule
		missing []string
	}
	var per []skillAnswer
	for _, n := range active {
		sk, err := a.cfg.Skills.Get(n)
		if err != nil {
			return ans, err
		}
		idx, err := a.rules.get(sk)
		if err != nil {
			return ans, err
		}
		br := a.bridger.Bridge(ctx, question, a.themeLanguage(sk, question), idx.glossary, sk.Name, sk.Theme)
		if br.BridgedBy == bridgedByWords {
			// Words a question's characters gloss find a passage worth
			// reading, but a rule holding one ("king") is filler, where
			// get_rules must answer or say it cannot (as 2f944dc keeps
			// carried characters out of its bridge).
			br = Bridged{QueryLang: br.QueryLang, SourceLang: br.SourceLang, Unbridged: true}
		}
		if br.SearchedAs != "" && ans.SearchedAs == "" {
			ans.SearchedAs, ans.BridgedBy = br.SearchedAs, br.BridgedBy
		}
		// The languages named are the first skill's, or the first
		// unbridged one's, which the note is about.
		if ans.QueryLang == "" || (br.Unbridged && !ans.Unbridged) {
			ans.QueryLang, ans.SourceLang = br.QueryLang, br.SourceLang
		}
		ans.Unbridged = ans.Unbridged || br.Unbridged
		rules, missing := idx.answer(question, br, k)
		per = append(per, skillAnswer{n, rules, missing})
	}
	// A question spanning several active skills names terms of each: a
	// term one skill lacks but another answers (sourdough for the tea
	// skill, green tea for the bread one) leaves no gap.
	answered := func(term string, except int) bool {
		for j, o := range per {
			if j != except && len(o.rules) > 0 && !slices.Contains(o.missing, term) {
				return true
			}
		}
		return false
	}
	for i := range per {
		var still []string
		for _, m := range per[i].missing {
			if !answered(m, i) {
				still = append(still, m)
			}
		}
		per[i].missing = still
	}
	for _, p := range per {
		n, rules, missing := p.name, p.rules, p.missing
		var more []scoredSkillRule
		for i, r := range rules {
			sr := scoredSkillRule{skillRule{r.TieredRule, n}, r.Score}
			if i == 0 && len(missing) == 0 && len(active) > 1 {
				best = append(best, sr)
				continue
			}
			more = append(more, sr)
		}
		if len(missing) > 0 {
			partial = append(partial, more)
		} else {
			rest = append(rest, more)
		}
		ans.Missing = append(ans.Missing, missing...)
	}
	sort.SliceStable(best, func(i, j int) bool { return best[i].score > best[j].score })
	for _, r := range best[:min(k, len(best))] {
		ans.Rules = append(ans.Rules, r.skillRule)
	}
	ans.Rules = append(ans.Rules, mergeRanked(rest, k-len(ans.Rules))...)
	if len(ans.Rules) == 0 {
		ans.Partial = mergeRanked(partial, k)
	} else {
		ans.Missing = nil
	}
	return ans, nil
}

// mergeRanked returns the first k rules of lists, the skills' answers,
// taken by score and each list in its own order: a skill's answer places
// an extra rule among its core's by the whole file's score (withExtras),
// which the rules' own scores (a core rule's from the core alone) do not
// show, so sorting one skill's rules again by them would undo it, and
// get_rules would rank otherwise than [Agent.Rules] and the evals measure.
func mergeRanked(lists [][]scoredSkillRule, k int) []skillRule {
	var out []skillRule
	at := make([]int, len(lists))
	for len(out) < k {
		pick := -1
		for i, l := range lists {
			if at[i] == len(l) {
				continue
			}
			if pick < 0 || l[at[i]].score > lists[pick][at[pick]].score {
				pick = i
			}
		}
		if pick < 0 {
			break
		}
		out = append(out, lists[pick][at[pick]].skillRule)
		at[pick]++
	}
	return out
}

// answer ranks the rules for a question bridged as br: the question, and
// what it was carried over as by the model (the glossary's terms stand in
// for an English question already, in rank), above minRuleScore. When the
// question's subject is a term no rule states in its condition, conclusion
// or action, missing lists that term and the rules are only partial
// (subjectGap): the only term the question names (日贵 in "Which four days
// are the Day Noble (Ri Gui) days?", whatever the score; when the question
// is bridged by a model, the only term both the question and the model's
// rewrite name, which tells "Ri Gui" 日贵 from 日癸), or, when the best rule
// matches only weakly (below strongRuleScore), a compound term it names
// (财多身弱 in "身弱财多怎么办", 四吉神 of the rewrite of "Can the four
// auspicious gods ruin a structure?"). Then, after a weak match, a rule that
// holds little of the question when the question names a term no rule
// states is not about it (柱中多庚 → 富贵人 for 德秀贵人, by 贵人): it is left
// out (aboutSubject), and when none is left the rules are partial too.
//
// A file with extra rules (an offline tier 2 of one rule a chunk) answers
// from its core rules so, and adds the extra rules about what the question
// names (withExtras).
//
// Whatever k, a rule stating less than minHeldOfBest of what the best
// rule states of the question is left out (heldOfBest): a request for ten
// rules returns fewer when fewer answer.
func (idx *ruleIndex) answer(question string, br Bridged, k int) ([]scoredRule, []string) {
	parts := answerParts(question, br)
	rules, missing := idx.answerRanked(question, br, parts, k)
	return idx.heldOfBest(parts, rules), missing
}

// answerParts are the parts a question is ranked by: the question, what
// a model carried it over as, and for a question in two scripts each
// script's part at half weight.
func answerParts(question string, br Bridged) []weighted {
	parts := []weighted{{question, 1}}
	if br.BridgedBy == "llm" {
		parts = append(parts, weighted{br.SearchedAs, 1})
	}
	// A question written in two scripts is also asked in each: its part
	// in the rules' language is what they can state.
	if han, other := splitScripts(question); han != "" && other != "" {
		parts = append(parts, weighted{han, 0.5}, weighted{other, 0.5})
	}
	return parts
}

// minHeldOfBest is the share of the best rule's hold on the question a
// rule of the answer needs (heldOfBest): minExtraShare, the bar an extra
// rule or a core rule beside an answering one has to clear.
const minHeldOfBest = minExtraShare

// heldOfBest leaves out of rules those that state less than minHeldOfBest
// of what the rule stating most of the question states (held): the filler
// behind the answer that shares one weak word with the question ("you
// leave GSA → your comp time will be paid out" for "Is there leave for
// getting a COVID booster…", 0.04 of it, where the answering rule states
// 0.81; "you were reimbursed to your bank account…" for "As a supervisor,
// can I get reimbursed for professional liability insurance?"). Every
// floor of rank is absolute (a term in common, minRuleScore,
// matchedEnough), so filler passes them, and with k = 3 only the rank
// kept it out of sight; the order of the rules kept is unchanged.
func (idx *ruleIndex) heldOfBest(parts []weighted, rules []scoredRule) []scoredRule {
	if len(rules) < 2 {
		return rules
	}
	qs := idx.standIns(parts)
	held := make([]float64, len(rules))
	best := 0.0
	for j, r := range rules {
		i, ok := idx.pos[r.ID]
		if !ok || r.ID == "" {
			return rules // rules without ids (never a built skill's)
		}
		held[j] = idx.held(i, qs)
		best = max(best, held[j])
	}
	if best == 0 {
		return rules
	}
	out := rules[:0:0]
	for j, r := range rules {
		if held[j] >= minHeldOfBest*best {
			out = append(out, r)
		}
	}
	return out
}

// standIns are the queries a question's parts are ranked by, without the
// glossary's expansion: each part, or for a part none of whose words any
// rule holds, the glossary's terms it names in the rules' language (rank).
func (idx *ruleIndex) standIns(parts []weighted) []query {
	var qs []query
	for _, p := range parts {
		q := idx.prepare(p.text)
		if !idx.reaches(q) {
			other := idx.otherLanguage(QueryLanguage(p.text))
			if t := idx.termGlossary.Terms(p.text, other); len(t) > 0 {
				q = idx.prepare(strings.Join(t, " "))
			}
		}
		qs = append(qs, q)
	}
	return qs
}

// held is the largest share of a query's weight rule i states in its
// condition, conclusion or action, or its source's headings (matched).
func (idx *ruleIndex) held(i int, qs []query) float64 {
	h := 0.0
	for _, q := range qs {
		if q.mass > 0 {
			h = max(h, idx.matched(i, q)/q.mass)
		}
	}
	return h
}

// answerRanked is answer before heldOfBest.
func (idx *ruleIndex) answerRanked(question string, br Bridged, parts []weighted, k int) ([]scoredRule, []string) {
	if idx.core != nil {
		rules, missing := idx.core.answerRanked(question, br, parts, k)
		return idx.withExtras(question, parts, rules, missing, k, minRuleScore)
	}
	rules := idx.rank(parts, k, minRuleScore)
	if len(rules) == 0 {
		return rules, nil
	}
	strong := rules[0].Score >= strongRuleScore
	missing := idx.subjectGap(question, strong)
	if br.BridgedBy == "llm" && len(missing) == 0 {
		missing = idx.confirmedGap(question, br.SearchedAs)
	}
	if br.BridgedBy == "llm" && len(missing) == 0 {
		missing = idx.subjectGap(br.SearchedAs, strong, strings.Fields(br.SearchedAs)...)
	}
	if len(missing) == 0 && !strong {
		texts := []string{question}
		if br.BridgedBy == "llm" {
			texts = append(texts, br.SearchedAs)
		}
		kept, off := idx.aboutSubject(rules, texts...)
		if len(kept) == 0 {
			return rules, off
		}
		rules = kept
	}
	return rules, missing
}

// confirmedGap returns the term a question bridged by a model asks about
// when the question and the model's rewrite name exactly one glossary term
// in common and no rule states it ("Ri Gui" names 日贵 and 日癸, the rewrite
// 日贵 丁酉 丁亥 癸巳 癸卯 confirms 日贵); none otherwise.
func (idx *ruleIndex) confirmedGap(question, rewrite string) []string {
	if len(idx.rules) == 0 {
		return nil
	}
	inRewrite := map[string]bool{}
	for _, e := range idx.glossary.namedEntries(rewrite) {
		inRewrite[e.Term] = true
	}
	var both []glossEntry
	for _, e := range idx.glossary.namedEntries(question) {
		if inRewrite[e.Term] {
			both = append(both, e)
		}
	}
	if len(both) != 1 || idx.statesAny(both[0].names) {
		return nil
	}
	return []string{both[0].Term}
}

// aboutSubject keeps the rules that are about the question's subject when
// it names terms of the glossary no rule states (of two Han characters or
// more): a rule that does not state such a term holds its rarest character
// (touches), or at least minSubjectCoverage of the question's content
// (subjectCoverage, of the question or of what it was carried over as), as
// 甲用辛官而透丙合辛 does of 甲日酉月透辛、时丙 without 酉月; 吉神有物，合去 shares
// only 神 and 去 with 命局里的闲神需要去掉吗. It returns the terms the rules left out missed.
func (idx *ruleIndex) aboutSubject(rules []scoredRule, texts ...string) ([]scoredRule, []string) {
	var unstated []glossEntry
	var qs []query
	for _, t := range texts {
		qs = append(qs, idx.prepare(t))
		for _, e := range idx.glossary.namedEntries(t) {
			if utf8.RuneCountInString(e.Term) >= minTermRunes && isHanOnly(e.Term) && !idx.statesAny(e.names) &&
				!slices.ContainsFunc(unstated, func(u glossEntry) bool { return u.Term == e.Term }) {
				unstated = append(unstated, e)
			}
		}
	}
	if len(unstated) == 0 {
		return rules, nil
	}
	var kept []scoredRule
	var off []string
	for _, r := range rules {
		cov := 0.0
		for _, q := range qs {
			cov = max(cov, idx.subjectCoverage(r.at, q))
		}
		if cov >= minSubjectCoverage || slices.ContainsFunc(unstated, func(u glossEntry) bool { return idx.touches(r.at, u) }) {
			kept = append(kept, r)
			continue
		}
		for _, u := range unstated {
			if !slices.Contains(off, u.Term) {
				off = append(off, u.Term)
			}
		}
	}
	return kept, off
}

// touches reports whether rule i states the rarest character among the
// rules of one of the entry's Han names (丙 of 丙火, 闲 of 闲神): it speaks
// of the term without naming it as the glossary does.
func (idx *ruleIndex) touches(i int, e glossEntry) bool {
	for _, n := range e.names {
		if !isHanOnly(n) {
			continue
		}
		rarest, most := "", -1.0
		for _, r := range plainText(n) {
			if w := idx.idf(string(r)); w > most {
				rarest, most = string(r), w
			}
		}
		if rarest != "" && strings.Contains(idx.statedText[i], rarest) {
			return true
		}
	}
	return false
}

// minSubjectCoverage is the share of a question's content a rule must
// state when the question names a term no rule states: the rules that
// answer the project's bazi questions hold 0.55 or more of them (甲人生亥子月中
// of 甲木日主生在亥月子月，以水为印，忌什么), filler 0.3 or less (柱中多庚 → 富贵人
// of 德秀贵人怎么看).
const minSubjectCoverage = 0.5

// minTermRunes is the shortest glossary term aboutSubject asks about: a
// single character is too common to tell.
const minTermRunes = 2

// statesAny reports whether a rule states one of the names of a glossary
// entry (its term and aliases): a Han name as states does, another as a
// phrase of the rule's words whatever their case ("Award leave is…" states
// award leave, "LWOP" states leave without pay when the entry lists it).
func (idx *ruleIndex) statesAny(names []string) bool {
	for _, n := range names {
		if isHanOnly(n) {
			if idx.states(n) {
				return true
			}
			continue
		}
		if hasHan(n) {
			continue
		}
		pt := nameTokens(n)
		if len(pt) == 0 {
			continue
		}
		for _, toks := range idx.statedTokens {
			if containsPhrase(toks, pt) {
				return true
			}
		}
	}
	return false
}

// strongRuleScore is a match trusted whatever the question names besides:
// the rules that answer the project's bazi questions and leave a term of
// theirs unstated score above it (春木逢火 → 为木为通明 for 木火通明, 0.58),
// a rule sharing only part of the question's subject below (身弱无制伏 → 为七杀
// for 身弱财多, 0.34).
const strongRuleScore = 0.5

// minGapRunes is the shortest term whose absence from the rules makes
// weakly matching rules partial: a compound (财多身弱, 官杀混杂), not a
// two-character term others are written around (酉月 in 甲日酉月透辛). A
// shorter term does when it is the only one the question names and a third
// of its content or more (魁罡 in "魁罡日生的人有什么特点", where 癸巳生人得戊寅日
// shares 日, 生 and 人; not 酉月 in 甲日酉月透辛、时丙).
const minGapRunes = 3

// subjectGap returns the most specific terms the text names (the
// longest, of minGapRunes characters or more, or the only one; after a
// strong match only the only one) when no rule states any of their Han
// names in its condition, conclusion or action; none when a rule does,
// when the text names no such term, or for a skill without rules. The
// terms are the glossary's the text names, and the extra ones (a model's
// rewrite lists the terms of the field it asks about: 四吉神 in 四吉神 财 官
// 印 食神 破格, which no glossary holds). The only term is the only
// glossary term the text names, when it is a third of its content or more.
func (idx *ruleIndex) subjectGap(text string, strong bool, extra ...string) []string {
	if len(idx.rules) == 0 {
		return nil
	}
	named := idx.glossary.namedEntries(text)
	glossaryTerms := len(named)
	named = append(named, idx.glossary.looselyNamed(text, named)...)
	for _, x := range extra {
		if utf8.RuneCountInString(x) >= minGapRunes && isHanOnly(x) && !slices.ContainsFunc(named, func(e glossEntry) bool { return e.Term == x }) {
			named = append(named, glossEntry{GlossaryTerm: skills.GlossaryTerm{Term: x}, names: []string{x}})
		}
	}
	longest := 0
	for _, e := range named {
		longest = max(longest, utf8.RuneCountInString(e.Term))
	}
	only := len(named) == 1 && glossaryTerms == 1 && 3*longest >= contentRunes(text)
	if strong && !only || longest < minGapRunes && !only {
		return nil
	}
	var gap []string
	for _, e := range named {
		if utf8.RuneCountInString(e.Term) != longest {
			continue
		}
		if idx.statesAny(e.names) {
			return nil
		}
		gap = append(gap, e.Term)
	}
	return gap
}

// states reports whether a rule's condition, conclusion or action holds
// the term (variants folded), or for a term of four Han characters its two
// halves swapped (财多身弱 is 身弱财多).
func (idx *ruleIndex) states(term string) bool {
	forms := []string{plainText(term)}
	if sw := swapHalves(forms[0]); sw != "" {
		forms = append(forms, sw)
	}
	for _, t := range idx.statedText {
		for _, f := range forms {
			if strings.Contains(t, f) {
				return true
			}
		}
	}
	return false
}

// splitScripts returns the Han runs of s and the rest, each joined by
// spaces.
func splitScripts(s string) (han, other string) {
	var h, o strings.Builder
	for _, r := range s {
		if isHanOnly(string(r)) {
			h.WriteRune(r)
			o.WriteByte(' ')
		} else {
			o.WriteRune(r)
			h.WriteByte(' ')
		}
	}
	han = strings.Join(strings.Fields(h.String()), " ")
	if _, letters := scripts(o.String()); letters == 0 {
		return han, ""
	}
	return han, strings.Join(strings.Fields(o.String()), " ")
}

// contentRunes counts the Han characters of text that are not of a
// question's frame (modernFunction).
func contentRunes(text string) int {
	n := 0
	for _, r := range text {
		if isHanOnly(string(r)) && !modernFunction[r] {
			n++
		}
	}
	return n
}

// swapHalves returns a four-character Han term with its halves swapped, ""
// for any other.
func swapHalves(s string) string {
	r := []rune(s)
	if len(r) != 4 || !isHanOnly(s) {
		return ""
	}
	return string(r[2:]) + string(r[:2])
}

// Named returns the terms of the glossary's entries the text names, in
// any of their names (a term, a synonym, an English rendering, pinyin):
// a Han name as a substring of the text, or for four characters with its
// halves swapped ("身弱财多" names 财多身弱); another name as a phrase of
// its words. Each term once, in the glossary's order.
func (g *Glossary) Named(text string) []string {
	var out []string
	for _, e := range g.namedEntries(text) {
		out = append(out, e.Term)
	}
	return out
}

func (g *Glossary) namedEntries(text string) []glossEntry {
	if g.Len() == 0 {
		return nil
	}
	plain := plainText(text)
	tokens := phraseTokens(text)
	var out []glossEntry
	for _, e := range g.entries {
		hit := false
		for _, n := range e.names {
			if isHanOnly(n) {
				p := plainText(n)
				hit = utf8.RuneCountInString(p) >= 2 && (strings.Contains(plain, p) || swapHalves(p) != "" && strings.Contains(plain, swapHalves(p)))
			} else if pt := nameTokens(n); len(pt) > 0 {
				hit = containsPhrase(tokens, pt)
			}
			if hit {
				break
			}
		}
		if hit {
			out = append(out, e)
		}
	}
	return out
}

// looselyNamed returns the glossary's terms of three Han characters or
// more the text names in parts: a term holding one the text names, whose
// other characters the text holds but one (春天出生的乙木日主 names 乙木 and
// holds 春 of 三春乙木). Not those named already. The part is the longest
// named term the glossary's term holds: 诸葛亮智 holds 诸葛 and 诸葛亮, and
// 诸葛亮草船借箭是怎么回事 names 诸葛亮 but not 智, so not 诸葛亮智 (through 诸葛,
// whose rest 亮智 the text held but one, it did).
func (g *Glossary) looselyNamed(text string, named []glossEntry) []glossEntry {
	if g.Len() == 0 || len(named) == 0 {
		return nil
	}
	plain := plainText(text)
	parts := make([]string, 0, len(named))
	for _, n := range named {
		if p := plainText(n.Term); p != "" {
			parts = append(parts, p)
		}
	}
	// Longest first, so that the first a term holds is the longest.
	slices.SortStableFunc(parts, func(a, b string) int {
		return utf8.RuneCountInString(b) - utf8.RuneCountInString(a)
	})
	var out []glossEntry
	for _, e := range g.entries {
		t := plainText(e.Term)
		if utf8.RuneCountInString(t) < 3 || !isHanOnly(e.Term) || slices.ContainsFunc(named, func(n glossEntry) bool { return n.Term == e.Term }) {
			continue
		}
		for _, p := range parts {
			if !strings.Contains(t, p) {
				continue
			}
			rest := []rune(strings.Replace(t, p, "", 1))
			missing := 0
			for _, r := range rest {
				if !strings.ContainsRune(plain, r) {
					missing++
				}
			}
			if missing <= 1 && missing < len(rest) {
				out = append(out, e)
			}
			break
		}
	}
	return out
}
