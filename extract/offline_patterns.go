package extract

import (
	"math"
	"regexp"
	"slices"
	"sort"
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
	// zhHarmUndone is harm that the sentence removes, not predicts: 化金之毒
	// (water dissolves metal's poison, 金白水清), 解凶, 去病, 制其祸.
	zhHarmUndone = regexp.MustCompile(`[化解去除制救消][^，,。；]{0,3}?(?:之)?(?:毒|凶|灾|祸|病)`)
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
		concl := zhHarmUndone.ReplaceAllString(zhStageTerms.Replace(genericPairs.Replace(p.Concl)), "")
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
		for k, c := range clausesOf(p.Concl) {
			if k > 0 && hasPrefixAny(c.Text, zhOpen) != "" && harm == "" {
				// 则要助子，……，若午之党多，或……必凶: the harm hangs on a new
				// condition the signal does not state.
				return knowledge.RedFlag{}, false
			}
			if act == "" && zhDo.MatchString(c.Text) {
				act = trimClause(p.Concl[c.Start:])
			}
			t := zhHarmUndone.ReplaceAllString(zhStageTerms.Replace(genericPairs.Replace(c.Text)), "")
			if harm == "" && (zhFlagHit(zhFlagCrit, t) || sev == "warning" && zhFlagHit(zhFlagWarn, t)) {
				harm = strings.TrimPrefix(c.Text, "则")
			}
		}
		if harm == "" && act == "" {
			return knowledge.RedFlag{}, false
		}
		switch {
		case act == "" && len(knowledge.GraveTerms(harm)) > 0:
			// Death, disaster, divorce, ruin: the book's verdict, never
			// a certainty (knowledge.GraveTerms).
			act = "原文断为「" + harm + "」：先核实确有此情形，再以典籍的说法转述此断语及其出处，并说明这不是确定的预言。"
		case act == "":
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
	switch {
	case act == "" && len(knowledge.GraveTerms(p.Concl)) > 0:
		act = "The source warns: “" + p.Concl + "”. Confirm the signal is really present, then relay it only as what the source says, with the caveat that it is not a certain prediction."
	case act == "":
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
	chapter        bool // a chapter of its own treats it ("论正官")
}

// findPatterns collects named configurations — sections headed "Pattern:
// X", lines "X之象：……", sentences opening with "……格" or naming what they
// describe ("……，名水泛木浮，……") — with a signature and an indication taken
// from the same sentence, ranks them by how often the sources mention the
// name, and keeps up to maxPatterns.
//
// A sentence for which skip is true is not read (a novel's narration).
func findPatterns(sents []sentence, skip func(sentence) bool) []cand[knowledge.Pattern] {
	type group struct {
		c     cand[knowledge.Pattern]
		first int
	}
	byName := map[string]*group{}
	var order []string
	doneHeading := map[string]bool{}
	chapters := chapterPatterns(sents)
	for _, s := range sents {
		if skip != nil && skip(s) {
			continue
		}
		pc, ok := patternIn(s, doneHeading)
		if !ok {
			if pc, ok = chapters.in(s); !ok {
				continue
			}
		}
		k := patternKey(pc.name)
		if g, dup := byName[k]; dup && (!pc.chapter || g.c.n == -2) {
			continue
		} else if dup {
			// The chapter that treats the pattern speaks for it, not an
			// earlier sentence that merely names it.
			delete(byName, k)
			order = slices.DeleteFunc(order, func(n string) bool { return patternKey(n) == k })
		}
		ev := []knowledge.Evidence{{Chunk: s.Chunk.ID, Quote: s.Text}}
		byName[k] = &group{c: cand[knowledge.Pattern]{s: s, v: knowledge.Pattern{Name: pc.name, Signature: pc.sig, Indication: pc.ind, Evidence: ev}}, first: s.Seq}
		if pc.declared {
			byName[k].c.n = -1
		}
		if pc.chapter {
			byName[k].c.n = -2
		}
		order = append(order, pc.name)
	}
	if len(order) == 0 {
		return nil
	}
	mentions, docs := countMentions(sents, order)
	var cands, chapter []cand[knowledge.Pattern]
	for _, name := range order {
		g := byName[patternKey(name)]
		m, d := mentions[name], docs[name]
		c := g.c
		switch {
		case c.n < 0 || d >= 2 || m >= 5:
			c.v.Confidence = "medium"
		default:
			c.v.Confidence = "low"
		}
		if d >= 3 {
			c.v.Confidence = "high"
		}
		c.score = float64(d) + math.Log1p(float64(m))
		switch c.n {
		case -1:
			c.score += 3
		case -2:
			// A pattern a book gives a chapter of its own is one of its
			// main ones: kept before any a sentence merely names.
			c.score += 20
		}
		if c.n == -2 {
			chapter = append(chapter, c)
			continue
		}
		cands = append(cands, c)
	}
	// A book's own chapter patterns are all kept (子平真诠's eight 正格);
	// the rest are taken in turn from each book.
	chapter = chapter[:min(len(chapter), maxPatterns/2)]
	out := append(chapter, best(cands, maxPatterns-len(chapter), 0, func(p knowledge.Pattern) string { return p.Signature + p.Indication })...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].s.Seq < out[j].s.Seq })
	return out
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
			return patternCand{name: name, sig: despaceHan(sig), ind: despaceHan(ind), declared: true}, true
		}
	}
	if m := zhNamedHead.FindStringSubmatchIndex(body); m != nil && strings.ContainsAny(body, "格局") {
		name := body[m[2]:m[3]]
		if sig, ind, ok := zhSigInd(body[m[1]:]); ok && zhNameOK(name, true) {
			return patternCand{name: name, sig: despaceHan(sig), ind: despaceHan(ind)}, true
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
		return patternCand{name: m[1], sig: despaceHan(sig), ind: despaceHan(ind)}, true
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

// patternKey is the name under which two spellings of one pattern meet:
// 官印双全 and 官印两全, 阳刃之格 and 阳刃格.
func patternKey(name string) string {
	k := normalise(name)
	k = strings.NewReplacer("两", "双", "之格", "格", "之局", "局", "煞", "杀").Replace(k)
	if n := runeLen(k); n > 2 {
		k = strings.TrimSuffix(strings.TrimSuffix(k, "格"), "局")
	}
	return k
}

// zhChapterNum is the number opening a chapter title: "三十一、", "一．".
var zhChapterNum = regexp.MustCompile(`^[一二三四五六七八九十百零\d]+\s*[、．.]\s*`)

// chapterTitle returns a heading without its number and spaces.
func chapterTitle(h string) string {
	return despaceHan(strings.TrimSpace(zhChapterNum.ReplaceAllString(strings.TrimSpace(h), "")))
}

// chapters maps a chapter title "论X" (document and title) to the pattern
// it treats: a book that has a chapter "论X" and a chapter "论X取运" (how a
// chart of that pattern fares in the luck cycles) names X as one of its
// patterns — 子平真诠's eight 正格 论正官 … 论建禄月劫.
type chapters struct {
	names map[string]string // doc + "\x00" + title -> pattern name
	done  map[string]bool
}

func chapterPatterns(sents []sentence) chapters {
	titles := map[string]bool{}
	for _, s := range sents {
		if !s.Zh || len(s.Chunk.HeadingPath) == 0 {
			continue
		}
		titles[s.Chunk.Doc+"\x00"+chapterTitle(s.Chunk.HeadingPath[len(s.Chunk.HeadingPath)-1])] = true
	}
	c := chapters{names: map[string]string{}, done: map[string]bool{}}
	for k := range titles {
		doc, t, _ := strings.Cut(k, "\x00")
		x, ok := strings.CutPrefix(t, "论")
		if !ok || runeLen(x) < 1 || runeLen(x) > 4 || !titles[doc+"\x00论"+x+"取运"] {
			continue
		}
		name := x
		if !strings.HasSuffix(x, "格") {
			name += "格"
		}
		c.names[k] = name
	}
	return c
}

// in reads the first sentence of a "论X" chapter that parses as a rule as
// the signature and indication of pattern X.
func (c chapters) in(s sentence) (patternCand, bool) {
	if len(c.names) == 0 || !s.Zh || len(s.Chunk.HeadingPath) == 0 {
		return patternCand{}, false
	}
	k := s.Chunk.Doc + "\x00" + chapterTitle(s.Chunk.HeadingPath[len(s.Chunk.HeadingPath)-1])
	name, ok := c.names[k]
	if !ok || c.done[k] {
		return patternCand{}, false
	}
	// The sentence must speak of the pattern: its name, its first two
	// characters (建禄 of 建禄月劫) or its last (官 of 正官, 煞 of 偏官's
	// 七煞 is not caught, and that chapter waits for a sentence naming 官).
	term := []rune(strings.TrimSuffix(name, "格"))
	body := strings.TrimRight(s.Text, "。！；;")
	if !strings.Contains(body, string(term[:min(2, len(term))])) && !strings.ContainsRune(body, term[len(term)-1]) || strings.ContainsAny(body, "？?何岂") || hasCorruption(body) || runeLen(body) > 120 {
		return patternCand{}, false
	}
	sig, ind, ok := zhSigInd(body)
	if !ok {
		// The chapter's first statement about its pattern: its first
		// clause describes it, the rest says what it means (阳刃者，劫我正财
		// 之神，乃正财之七煞也).
		cl := clausesOf(body)
		if len(cl) < 2 {
			return patternCand{}, false
		}
		sig = trimClause(strings.TrimSuffix(trimClause(body[:cl[0].End]), "者"))
		ind = zhIndStart(body[cl[1].Start:])
		if runeLen(sig) < 2 || runeLen(ind) < 2 || runeLen(ind) > 60 {
			return patternCand{}, false
		}
	}
	c.done[k] = true
	return patternCand{name: name, sig: despaceHan(sig), ind: despaceHan(ind), declared: true, chapter: true}, true
}
