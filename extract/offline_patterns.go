package extract

import (
	"math"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/vibelife/vibe/knowledge"
)

var (
	// genericPairs are words naming good and bad fortune together (寿夭,
	// 吉凶): they are topics, not warnings.
	genericPairs = strings.NewReplacer("寿夭", "", "夭寿", "", "吉凶", "", "凶吉", "", "死生", "", "生死", "", "祸福", "", "灾祥", "")
	// zhStageTerms are the technical names of the twelve life stages and of
	// seasonal states (死绝, 病地, 休囚): not warnings.
	zhStageTerms = strings.NewReplacer("死绝", "", "死墓", "", "病死", "", "死地", "", "病地", "", "绝地", "", "墓绝", "", "囚死", "", "休囚", "", "死囚", "", "衰病", "", "病乡", "", "死乡", "", "死法", "", "活法", "", "所死", "", "所生", "", "为之死", "", "为之生", "")
	zhFlagCrit   = regexp.MustCompile(`死|夭|亡|残疾|大凶|横祸|霉|毒|变质`)
	zhFlagWarn   = regexp.MustCompile(`凶|灾|祸|刑伤|疾病|病|贫|孤|寡|破败|险|受潮|浑浊`)
	// zhFlagNeg before a warning word takes it back: 不凶, 无灾, 免祸, 化凶.
	zhFlagNeg = "不无免解化非未"
	zhDo      = regexp.MustCompile(`^(?:切勿|勿|切忌|忌|宜|须|当|应|不可|莫|弃|速)`)
	enFlag    = regexp.MustCompile(`(?i)\b(danger\w*|fatal|poison\w*|toxic|unsafe|mou?ld\w*|harmful|spoil\w*|rancid|contaminat\w*|discard|throw (?:it |them )?away)\b`)
	enDo      = regexp.MustCompile(`(?i)^(?:discard|throw|do not|don't|never|stop|avoid|check|call|see|seek|keep|remove|use)\b`)
)

// redFlagOf reads a rule as a red flag when its consequent warns of harm:
// the signal is the rule's condition, the action the instruction the source
// gives (切勿饮用, discard it) or, when it gives none, a check naming the
// harm the source predicts.
func redFlagOf(p ruleParse, text string) (knowledge.RedFlag, bool) {
	if p.Zh {
		concl := zhStageTerms.Replace(genericPairs.Replace(p.Concl))
		sev := ""
		switch {
		case zhFlagHit(zhFlagCrit, concl):
			sev = "critical"
		case zhFlagHit(zhFlagWarn, concl):
			sev = "warning"
		default:
			return knowledge.RedFlag{}, false
		}
		act, harm := "", ""
		for _, c := range clausesOf(p.Concl) {
			if act == "" && zhDo.MatchString(c.Text) {
				act = trimClause(p.Concl[c.Start:])
			}
			t := zhStageTerms.Replace(genericPairs.Replace(c.Text))
			if harm == "" && (zhFlagHit(zhFlagCrit, t) || sev == "warning" && zhFlagHit(zhFlagWarn, t)) {
				harm = strings.TrimPrefix(c.Text, "则")
			}
		}
		if act == "" {
			act = "原文断为「" + harm + "」：先核实确有此情形，再向用户说明此断语及其出处。"
		}
		return knowledge.RedFlag{Signal: p.Cond, Severity: sev, Action: act}, true
	}
	if !enFlag.MatchString(p.Concl) && !enFlag.MatchString(p.Cond) {
		return knowledge.RedFlag{}, false
	}
	sev := "warning"
	if enCritical.MatchString(text) {
		sev = "critical"
	}
	act := ""
	for _, part := range strings.Split(p.Concl, ",") {
		if t := strings.TrimSpace(part); enDo.MatchString(t) {
			act = trimClause(p.Concl[strings.Index(p.Concl, t):])
			break
		}
	}
	if act == "" {
		act = "The source warns: “" + p.Concl + "”. Confirm the signal is really present, then tell the user and cite the source."
	}
	return knowledge.RedFlag{Signal: p.Cond, Severity: sev, Action: act}, true
}

// zhFlagHit reports a warning word in s that is not taken back by a
// negation just before it (不凶, 无灾).
func zhFlagHit(re *regexp.Regexp, s string) bool {
	for _, m := range re.FindAllStringIndex(s, -1) {
		r, _ := utf8.DecodeLastRuneInString(s[:m[0]])
		if m[0] == 0 || !strings.ContainsRune(zhFlagNeg, r) {
			return true
		}
	}
	return false
}

var (
	// enPatHeading is a section declaring a pattern: "Pattern: the bitter
	// edge", "3.2 Sign: cloudy liquor".
	enPatHeading = regexp.MustCompile(`(?i)^(?:[\d.]+\s*)?(?:pattern|sign|symptom|telltale|tell-tale)s?\s*[:：\-–—]\s*(.{2,60})$`)
	// zhNamedLine opens a line with a name and a colon: "陈香之象：……".
	zhNamedLine = regexp.MustCompile(`^(\p{Han}{2,10}(?:之象|之征|之兆|格|局))[：:]`)
	// zhNamedHead opens a sentence with a named configuration: "伤官之格，",
	// "凡拱格，", "外格者，".
	zhNamedHead = regexp.MustCompile(`^(?:凡|若|如|夫|盖|又|况|至于)?(\p{Han}{2,7}[格局])(?:者)?[，,]`)
	// zhNaming is a clause that names what the clauses before it describe:
	// "名水泛木浮", "号为朱雀腾空", "谓之伤官见官", "此为白茶陈化之正常之象".
	zhNaming = regexp.MustCompile(`^(?:名曰|名为|名|号为|号曰|号|谓之|此名|此谓|此为|此乃|是为|乃为)(\p{Han}{2,10})$`)
	// zhIndicates open the indication of a pattern.
	zhIndicates = []string{"主", "为", "乃", "必", "定", "则", "多", "可", "方", "皆", "是", "此", "不", "非", "大", "最", "亦", "号", "名", "断"}
	enAfterMain = regexp.MustCompile(`(?i)^(.{8,}?),\s+(once|when|whenever|after|if)\s+(.{6,})$`)
	// zhBadNameFirst cannot open a pattern name.
	zhBadNameFirst = "此其本是何入成破有无之为以于或同又亦凡若如云曰况盖夫一二三四五六七八九十"
	// zhBadNameChars mark a phrase that is not a name: 命入贵格, 遇此格.
	zhBadNameChars = "入遇同在详徒然喜论看取此其何谓而曰云"
	// zhGenericFirst before 格/局 makes a category, not a configuration:
	// 贵格, 外格, 成格.
	zhGenericFirst = "成破入合外正杂此贵贱其本变真假上下中大小好清浊奇常俗两二三同一各诸别"
	zhNameFunc     = "之为曰也而与及"
)

// patternCand is a named configuration found in a sentence.
type patternCand struct {
	name, sig, ind string
	declared       bool // named by a section heading
}

// findPatterns collects named configurations — sections headed "Pattern:
// X", lines "X之象：……", sentences opening with "……格" or naming what they
// describe ("……，名水泛木浮，……") — with a signature and an indication taken
// from the same sentence, ranks them by how often the sources mention the
// name, and keeps up to maxPatterns.
func findPatterns(sents []sentence) []cand[knowledge.Pattern] {
	type group struct {
		c     cand[knowledge.Pattern]
		first int
	}
	byName := map[string]*group{}
	var order []string
	doneHeading := map[string]bool{}
	for _, s := range sents {
		pc, ok := patternIn(s, doneHeading)
		if !ok {
			continue
		}
		k := normalise(pc.name)
		if _, dup := byName[k]; dup {
			continue
		}
		ev := []knowledge.Evidence{{Chunk: s.Chunk.ID, Quote: s.Text}}
		byName[k] = &group{c: cand[knowledge.Pattern]{s: s, v: knowledge.Pattern{Name: pc.name, Signature: pc.sig, Indication: pc.ind, Evidence: ev}}, first: s.Seq}
		if pc.declared {
			byName[k].c.n = -1
		}
		order = append(order, pc.name)
	}
	if len(order) == 0 {
		return nil
	}
	mentions, docs := countMentions(sents, order)
	var cands []cand[knowledge.Pattern]
	for _, name := range order {
		g := byName[normalise(name)]
		m, d := mentions[name], docs[name]
		c := g.c
		switch {
		case c.n == -1 || d >= 2 || m >= 5:
			c.v.Confidence = "medium"
		default:
			c.v.Confidence = "low"
		}
		if d >= 3 {
			c.v.Confidence = "high"
		}
		c.score = float64(d) + math.Log1p(float64(m))
		if c.n == -1 {
			c.score += 3
		}
		cands = append(cands, c)
	}
	return best(cands, maxPatterns, func(p knowledge.Pattern) string { return p.Signature + p.Indication })
}

// patternIn reads one sentence as a named configuration.
func patternIn(s sentence, doneHeading map[string]bool) (patternCand, bool) {
	text := s.Text
	if hasCorruption(text) || runeLen(text) > 150 {
		return patternCand{}, false
	}
	if hp := s.Chunk.HeadingPath; len(hp) > 0 && !s.Zh {
		if m := enPatHeading.FindStringSubmatch(strings.TrimSpace(hp[len(hp)-1])); m != nil {
			key := s.Chunk.Doc + "\x00" + strings.Join(hp, "\x00")
			if doneHeading[key] {
				return patternCand{}, false
			}
			if sig, ind, ok := enSigInd(strings.TrimRight(text, ".!;")); ok {
				doneHeading[key] = true
				return patternCand{name: trimClause(m[1]), sig: sig, ind: ind, declared: true}, true
			}
			return patternCand{}, false
		}
	}
	if !s.Zh || !strings.ContainsAny(text, "，,") {
		return patternCand{}, false
	}
	body := strings.TrimRight(text, "。！；;")
	if !strings.ContainsAny(body, "：:格局名号谓为乃") {
		return patternCand{}, false
	}
	if m := zhNamedLine.FindStringSubmatchIndex(body); m != nil {
		name := body[m[2]:m[3]]
		if sig, ind, ok := zhSigInd(body[m[1]:]); ok && zhNameOK(name, true) {
			return patternCand{name: name, sig: sig, ind: ind, declared: true}, true
		}
	}
	if m := zhNamedHead.FindStringSubmatchIndex(body); m != nil && strings.ContainsAny(body, "格局") {
		name := body[m[2]:m[3]]
		if sig, ind, ok := zhSigInd(body[m[1]:]); ok && zhNameOK(name, true) {
			return patternCand{name: name, sig: sig, ind: ind}, true
		}
	}
	cl := clausesOf(body)
	for k := 1; k < len(cl); k++ {
		if r, _ := utf8.DecodeRuneInString(cl[k].Text); !strings.ContainsRune("名号谓此是乃", r) {
			continue
		}
		m := zhNaming.FindStringSubmatch(cl[k].Text)
		if m == nil || !zhNameOK(m[1], false) {
			continue
		}
		sig := zhSigStart(body[:cl[k-1].End])
		ind := ""
		if k+1 < len(cl) {
			ind = zhIndStart(body[cl[k+1].Start:])
		}
		first, _ := utf8.DecodeRuneInString(sig)
		if runeLen(sig) < 3 || runeLen(sig) > 40 || runeLen(ind) < 2 || runeLen(ind) > 40 || strings.ContainsRune(zhPronoun, first) || !zhIndOK(ind) {
			return patternCand{}, false
		}
		return patternCand{name: m[1], sig: sig, ind: ind}, true
	}
	return patternCand{}, false
}

// zhSigInd splits the clauses after a pattern's name into its signature and
// its indication: at a "……者" clause, else at the first clause opening with
// an indication word (主/为/乃/必 ...), else before the last clause.
func zhSigInd(rest string) (sig, ind string, ok bool) {
	cl := clausesOf(rest)
	if len(cl) < 2 {
		return "", "", false
	}
	cut := -1
	for k := 0; k+1 < len(cl); k++ {
		if strings.HasSuffix(cl[k].Text, "者") {
			cut = k + 1
			break
		}
	}
	for k := 1; cut < 0 && k < len(cl); k++ {
		if hasPrefixAny(cl[k].Text, zhIndicates) != "" {
			cut = k
		}
	}
	if cut < 0 {
		cut = len(cl) - 1
	}
	sig = trimClause(strings.TrimSuffix(zhSigStart(rest[:cl[cut-1].End]), "者"))
	ind = zhIndStart(rest[cl[cut].Start:])
	if strings.ContainsAny(sig, "格局") {
		// Another configuration named inside the signature: a list of
		// several, not one pattern.
		return "", "", false
	}
	if runeLen(sig) < 2 || runeLen(ind) < 2 || runeLen(sig) > 40 || runeLen(ind) > 40 || !zhIndOK(ind) {
		return "", "", false
	}
	return sig, ind, true
}

// zhSigStart trims what opens a signature but is not part of it: a line
// label (化象者：), discourse words (盖, 况) and a conditional opening (假如).
func zhSigStart(sig string) string {
	sig = trimClause(sig)
	if i := strings.Index(sig, "："); i > 0 && runeLen(sig[:i]) <= 10 && !strings.ContainsAny(sig[:i], "，,") {
		sig = sig[i+len("："):]
	}
	for changed := true; changed; {
		changed = false
		for _, list := range [][]string{zhLead, zhOpen, {"乃"}} {
			if p := hasPrefixAny(sig, list); p != "" && runeLen(sig) > runeLen(p)+1 {
				sig, changed = trimLeadPunct(sig[len(p):]), true
			}
		}
	}
	return trimClause(sig)
}

// zhIndStart trims a leading 则 and the final particles of an indication.
func zhIndStart(ind string) string {
	ind = trimClause(strings.TrimRight(trimClause(ind), zhParticle))
	return trimClause(strings.TrimPrefix(ind, "则"))
}

// zhIndOK rejects an "indication" that opens a new condition (若……, 或……)
// instead of saying what the configuration means.
func zhIndOK(ind string) bool {
	first, _ := utf8.DecodeRuneInString(ind)
	return !strings.ContainsRune("若如或凡而", first)
}

// enSigInd reads an English pattern sentence: "When X, Y", "X means Y" or
// "Y, once X".
func enSigInd(s string) (sig, ind string, ok bool) {
	if m := enOpen.FindStringSubmatchIndex(s); m != nil {
		rest := s[m[1]:]
		if i, j := enThenSplit(rest); i > 0 {
			sig, ind = trimClause(rest[:i]), trimClause(rest[j:])
			return sig, ind, enPhraseOK(sig, 2) && enPhraseOK(ind, 2)
		}
		return "", "", false
	}
	if m := enMeans.FindStringSubmatch(s); m != nil && !strings.ContainsAny(m[1], ",:;") {
		sig, ind = trimClause(m[1]), trimClause(m[3])
		return sig, ind, enPhraseOK(sig, 2) && enPhraseOK(ind, 2)
	}
	if m := enAfterMain.FindStringSubmatch(s); m != nil {
		sig, ind = trimClause(m[3]), trimClause(m[1])
		return sig, ind, enPhraseOK(sig, 2) && enPhraseOK(ind, 2)
	}
	return "", "", false
}

// zhNameOK accepts a configuration's name: not a phrase with a verb (命入贵
// 格, 遇此格), not a category (贵格, 外格), not opening with a function word.
func zhNameOK(name string, suffixed bool) bool {
	n := runeLen(name)
	if n < 2 || n > 10 {
		return false
	}
	first, _ := utf8.DecodeRuneInString(name)
	if strings.ContainsRune(zhBadNameFirst, first) || strings.ContainsAny(name, zhBadNameChars) {
		return false
	}
	if suffixed && n == 2 && strings.ContainsRune(zhGenericFirst, first) {
		return false
	}
	if strings.HasSuffix(name, "格局") || strings.HasSuffix(name, "成格") || strings.HasSuffix(name, "破格") || strings.HasSuffix(name, "合格") || strings.HasSuffix(name, "入格") {
		return false
	}
	if !suffixed && (n < 3 || strings.ContainsAny(name, zhNameFunc) && !strings.HasSuffix(name, "之象")) {
		// A name given with 名/号/谓之 must be a name, not a common term
		// (官星, 大运): three characters at least.
		return false
	}
	return true
}

// countMentions counts, for each name, its occurrences in the sentences and
// the number of documents that mention it, in one pass over the text.
func countMentions(sents []sentence, names []string) (mentions, docs map[string]int) {
	mentions, docs = map[string]int{}, map[string]int{}
	set := map[string]bool{}
	firsts := map[rune]bool{}
	maxLen := 0
	for _, n := range names {
		set[n] = true
		r, _ := utf8.DecodeRuneInString(n)
		firsts[r] = true
		maxLen = max(maxLen, runeLen(n))
	}
	lastDoc := map[string]int{}
	for _, s := range sents {
		t := s.Text
		for i, r := range t {
			if !firsts[r] {
				continue
			}
			j := i
			for k := 0; k < maxLen && j < len(t); k++ {
				_, w := utf8.DecodeRuneInString(t[j:])
				j += w
				if set[t[i:j]] {
					name := t[i:j]
					mentions[name]++
					if d, ok := lastDoc[name]; !ok || d != s.Doc+1 {
						lastDoc[name] = s.Doc + 1
						docs[name]++
					}
				}
			}
		}
	}
	return mentions, docs
}
