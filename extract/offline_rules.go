package extract

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/vibelife/vibe/chunk"
)

// ruleParse is a sentence read as an IF-THEN rule. Cond and Concl are whole
// clauses of the sentence (or, for an English imperative or "must"
// sentence, the situation it applies to and the whole instruction).
type ruleParse struct {
	Cond, Concl string
	// Reason is what an English instruction says follows from ignoring
	// it, after its colon or dash ("Never seal the jar airtight: the gas
	// can crack the glass"): a tier-1 rule's conclusion, its instruction
	// being the action.
	Reason string
	// Tier is 1 (a prohibition or obligation), 2 (a judgement) or 3 (an
	// exception to a general rule).
	Tier       int
	Priority   string // tier 1
	Confidence string // tiers 2 and 3
	Note       string // tier 3: what makes it an exception
	Zh         bool
	score      float64
	// General is set for a rule opened by 凡 (凡投茶，必先润茶): a general
	// statement, whose condition may be a bare term.
	General bool
	// Subject is what a Chinese rule is about when the sentence names it
	// in a clause before the condition (伤官用官，…，若…，则…): the rule
	// carries it (ruleCondition).
	Subject string
	// maxim is set for a Chinese rule stated as a maxim: no opening word,
	// the condition one short clause relating two things (伤官见官，为祸百端;
	// 官逢财生，则…), the classical form of a rule (ruleRanker).
	maxim bool
}

// parseRule reads s as a rule in Chinese (zh) or English.
func parseRule(s string, zh bool) (ruleParse, bool) {
	s = joinLines(s)
	n := len(s) // bytes: a cheap bound before counting runes
	if n < 6 || n > 480 {
		return ruleParse{}, false
	}
	if zh {
		// A rule has two clauses or a 则.
		if !strings.ContainsAny(s, "，,则") {
			return ruleParse{}, false
		}
		if r := runeLen(s); r < 6 || r > 120 || hasCorruption(s) {
			return ruleParse{}, false
		}
		return whole(zhRule(s))
	}
	if r := runeLen(s); r < 6 || r > enMaxRunes || hasCorruption(s) {
		return ruleParse{}, false
	}
	if p, ok := whole(enStatedRule(s)); ok {
		return p, true
	}
	if p, ok := whole(enPrinciple(s)); ok {
		return p, true
	}
	p, ok := whole(enRule(s))
	p.Cond, p.Concl, p.Reason = unemphasise(p.Cond), unemphasise(p.Concl), unemphasise(p.Reason)
	return p, ok
}

// enMaxRunes is the longest English sentence read as a rule. (240 let in
// "Pawn moves always create weaknesses, either by leaving …" but also a
// chess book's long commentary on its games: "White can exchange this
// Knight later on, and thus make P-K5 possible as soon as …".)
const enMaxRunes = 160

// enEmphasis is a span of a sentence the author set in italics or bold
// (Markdown _…_, *…*, **…**).
var enEmphasis = regexp.MustCompile(`(?:^|[\s(“"'])(?:_([^_]{20,400})_|\*\*([^*]{20,400})\*\*|\*([^*]{20,400})\*)`)

// enGenericSubject are subjects that name no topic: "The principle is to
// drive the opposing King to the last line" is about driving the King.
var enGenericSubject = regexp.MustCompile(`(?i)^(?:the|a|an|one|our|my) (?:main |chief |first |great |general |important |essential )?(?:principle|rule|object|objective|point|thing|idea|aim|secret|purpose|task|goal)$`)

func unemphasise(s string) string {
	if !strings.ContainsAny(s, "_*") {
		return s
	}
	return strings.TrimSpace(strings.NewReplacer("**", "", "__", "", "_", "", "*", "").Replace(s))
}

// enRuleIs opens a sentence that states its rule by name: "The rule is,
// not to besiege walled cities if it can possibly be avoided", "The first
// principle is to secure the flanks".
var enRuleIs = regexp.MustCompile(`(?i)^(?:the|a|our|one) (?:(?:general|golden|first|second|great|main|chief|cardinal|fundamental|only|best|old|safest|usual) )?(?:rule|principle|maxim|precept)s? (?:is|was|here is)[,:]?\s+(.{12,})$`)

// enStatedRule reads a sentence that names itself a rule, the author's
// own word for it, as a maxim: its condition the situation the rule
// governs (besieging walled cities), its conclusion the rule as stated;
// tier 1 when it forbids.
func enStatedRule(s string) (ruleParse, bool) {
	m := enRuleIs.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return ruleParse{}, false
	}
	stated := trimClause(strings.TrimRight(m[1], ".;:! "))
	w := strings.Fields(stated)
	neg := false
	if len(w) > 1 && (strings.EqualFold(w[0], "not") || strings.EqualFold(w[0], "never")) {
		neg, w = true, w[1:]
	}
	if len(w) > 1 && strings.EqualFold(w[0], "to") {
		w = w[1:]
	} else {
		return ruleParse{}, false // "The rule is that …": a statement, read by enRule
	}
	cond := situation("", strings.Join(w, " "))
	if cond == "" || !enPhraseOK(stated, 3) {
		return ruleParse{}, false
	}
	p := ruleParse{Cond: cond, Concl: stated, Tier: 2, Confidence: "high", score: 2, maxim: true}
	if neg {
		p.Tier, p.Priority = 1, "high"
	}
	return p, true
}

// enPrinciple reads a statement the author set in italics or bold — how
// English textbooks mark their principles ("_a passed Pawn increases in
// strength as the number of pieces on the board diminishes_", "viz.,
// _bring out the Knights before bringing out the Bishops_") — as a rule of
// the maxim form: its condition the statement's subject (or, for an
// instruction, the situation it governs), its conclusion the statement.
func enPrinciple(s string) (ruleParse, bool) {
	var span string
	for _, m := range enEmphasis.FindAllStringSubmatch(s, -1) {
		t := strings.TrimSpace(m[1] + m[2] + m[3])
		if len(strings.Fields(t)) >= 5 && !strings.Contains(t, "?") {
			span = strings.TrimRight(t, ".!;:, ")
			break
		}
	}
	if span == "" {
		return ruleParse{}, false
	}
	if p, ok := whole(enRule(span)); ok {
		p.maxim, p.score = true, p.score+1
		return p, true
	}
	p := ruleParse{Concl: span, Tier: 2, Confidence: "medium", score: 1, maxim: true}
	w := strings.Fields(span)
	first := strings.Trim(w[0], ",.;:()\"'")
	switch subj := enStatementSubject(span); {
	case unicode.IsLower([]rune(first)[0]) && !strings.ContainsAny(w[0], ",;:") && !enDeterminer[first] && !enPronoun[first] && !enReader.MatchString(first) && subj == "":
		p.Cond = situation("", strings.Join(w, " ")) // an instruction
	case enGenericSubject.MatchString(subj):
		rest := strings.Fields(span[len(subj):])
		if len(rest) >= 3 && (rest[0] == "is" || rest[0] == "was") && rest[1] == "to" {
			p.Cond = situation("", strings.Join(rest[2:], " "))
		}
	case subj != "" && enSubjectOK(subj):
		p.Cond = lowerFirst(subj)
	}
	if p.Cond == "" || !enPhraseOK(p.Cond, 1) {
		return ruleParse{}, false
	}
	if enCertain.MatchString(span) && !enHedge.MatchString(span) {
		p.Confidence = "high"
	}
	return p, true
}

// joinLines reads the line breaks of a sentence that runs over lines of its
// paragraph as spaces (and despaceHan takes them out between Han
// characters), so no rule field holds a line break.
func joinLines(s string) string {
	if !strings.ContainsAny(s, "\n\r") {
		return s
	}
	return strings.Join(strings.Fields(s), " ")
}

// whole refuses a parse with an empty side: a rule needs a condition and a
// conclusion.
func whole(p ruleParse, ok bool) (ruleParse, bool) {
	if !ok || p.Cond == "" || p.Concl == "" {
		return ruleParse{}, false
	}
	return p, true
}

// clause is a piece of a sentence between clause punctuation, with its byte
// range in the sentence.
type clause struct {
	Text       string
	Start, End int
}

// clausesOf cuts s at commas and colons outside brackets.
func clausesOf(s string) []clause {
	var out []clause
	start := 0
	add := func(a, b int) {
		t := s[a:b]
		lead := len(t) - len(strings.TrimLeft(t, " 　"))
		t = strings.TrimSpace(strings.Trim(t, " 　"))
		if t != "" {
			out = append(out, clause{Text: t, Start: a + lead, End: a + lead + len(t)})
		}
	}
	outsideBrackets(s, func(i int, r rune) bool {
		if strings.ContainsRune("，,：:", r) {
			add(start, i)
			start = i + utf8.RuneLen(r)
		}
		return true
	})
	add(start, len(s))
	return out
}

// ---- Chinese ----

var (
	// zhLead are discourse words that open a sentence without changing its
	// sense (又, 故, 盖 ...), and quotation openings (书云：, 经曰：).
	zhLead    = []string{"是以", "所以", "是故", "大抵", "至于", "况且", "又", "故", "盖", "夫", "且", "而", "况"}
	zhQuoteIn = regexp.MustCompile(`^[^，。：]{0,4}[曰云][：:，,]`)
	// zhExcept open an exception to a general rule.
	zhExcept = []string{"然而", "但是", "惟有", "唯有", "除非", "然", "但", "惟", "唯"}
	// zhOpen open a condition.
	zhOpen = []string{"倘若", "如若", "假如", "假若", "假令", "设若", "若是", "如果", "若使", "若为", "如为", "大凡", "凡是", "凡", "若", "如", "苟", "倘", "设", "或"}
	// zhConseq open a consequent clause.
	zhConseq = []string{"此为", "此乃", "此是", "此谓", "切不可", "切忌", "大忌", "切勿", "不可", "不宜", "不能", "不得", "务必", "必须", "必", "宜", "忌", "勿", "莫", "毋", "须", "当", "主", "乃", "便", "即", "方", "定", "决", "皆", "亦", "反", "却", "断", "为", "是", "可", "难", "终", "不"}
	// zhJudgement are one-character conclusions that are whole judgements.
	zhJudgement = "吉凶贵贱富贫寿夭成败"
	// zhNotThen are words in which 则 is not "then".
	zhNotThen = []string{"否则", "法则", "原则", "规则", "准则", "细则", "总则", "通则", "一则", "二则", "三则"}
	zhPronoun = "此其是彼斯之该"
	// zhProhibit mark a prohibition: the rule is a must-know.
	zhProhibit = regexp.MustCompile(`切不可|切忌|大忌|切勿|不可|不宜|不得|勿|莫|毋|忌`)
	// zhIdioms hold 不可/不得 without forbidding anything: 贵不可言
	// (inexpressibly noble), 不可遏 (unstoppable), 不得不 (cannot but).
	zhIdioms   = strings.NewReplacer("不可言", "", "不可胜", "", "不可量", "", "不可测", "", "不可遏", "", "不可御", "", "不可当", "", "不可及", "", "不可救", "", "不可思议", "", "不得不", "", "不可不", "", "不得已", "", "不为忌", "", "不以为忌", "", "无所忌", "", "亦不忌", "")
	zhOblige   = regexp.MustCompile(`^(?:务必|必须|必先|必用)`)
	zhCritical = regexp.MustCompile(`切不可|切忌|大忌|切勿|必死|死|夭|大凶|霉|毒`)
	zhCertain  = regexp.MustCompile(`必|定|决|断然`)
	zhHedge    = regexp.MustCompile(`或许|或恐|恐|似|未必|不一定|多为|大抵|间有|或可`)
	zhReverse  = regexp.MustCompile(`^(?:反|却|倒)|不作此论|不在此论|不以此论|别论|例外|不拘此`)
	// zhCondVerbs are the verbs that make a "……者" subject a situation
	// (身弱而财多者) rather than a term being defined (太乙者).
	zhCondVerbs = "见逢遇有无多少旺衰弱强透藏克合冲刑破得失犯坐会化值行喜忌过"
	zhBackRef   = regexp.MustCompile(`^(?:反是|反此|亦然|同此|仿此|准此|同论|不然|不在此论|不作此论|不以此论|亦如之)$`)
	// zhParticle are sentence-final particles dropped from a conclusion.
	zhParticle = "也矣焉耳哉"
)

// zhOnly reports that the opening word p of s is 但 'only', part of the
// clause it opens, not 'but': a short first clause saying "only X, not Y"
// (但热不寒, 但满而不痛者, 但结胸无大热者) or naming a case with 者. 但 before a
// time, a person or a long clause (但刮后须十二时不饮水, 但古人治法良多) is 'but'.
func zhOnly(s, p string) bool {
	if p != "但" {
		return false
	}
	first := s[len(p):]
	if i := strings.IndexAny(first, "，,：；。"); i >= 0 {
		first = first[:i]
	}
	n := runeLen(first)
	return n >= 2 && n <= 6 && (strings.ContainsAny(first, "不无") || strings.HasSuffix(first, "者"))
}

func hasPrefixAny(s string, list []string) string {
	for _, p := range list {
		if strings.HasPrefix(s, p) {
			return p
		}
	}
	return ""
}

// zhRule reads a Chinese sentence as a rule: a conditional opening
// (凡/若/如/苟/倘 ...) or a "……者，……" subject, and a consequent that starts
// at 则 or at a clause opening with a consequent word (必/宜/忌/不可/主 ...).
// The cut is always at 则 or at a clause boundary, never inside a word.
func zhRule(s string) (ruleParse, bool) {
	body := strings.TrimRight(s, "。！；;!.　 ")
	if last, _ := utf8.DecodeLastRuneInString(body); strings.ContainsAny(body, "？?何岂") || strings.ContainsRune("乎哉耶欤", last) {
		return ruleParse{}, false // a question, or a rhetorical one
	}
	rest, exc, subject := body, "", ""
	for changed := true; changed; {
		changed = false
		if p := hasPrefixAny(rest, zhLead); p != "" && !strings.HasPrefix(rest, "而后") {
			rest, changed = trimLeadPunct(rest[len(p):]), true
		}
		if m := listNumber(rest, true); m != "" {
			// 十、若下之，则死: an item's number is not part of it.
			rest, changed = trimLeadPunct(rest[len(m):]), true
		}
		if m := zhQuoteIn.FindString(rest); m != "" {
			rest, changed = trimLeadPunct(rest[len(m):]), true
		}
		if p := hasPrefixAny(rest, zhExcept); p != "" && exc == "" && !strings.HasPrefix(rest, "然后") && !strings.HasPrefix(rest, "然则") && !zhOnly(rest, p) {
			rest, exc, changed = trimLeadPunct(rest[len(p):]), p, true
		}
	}
	// A line label ("陈香之象：……") names what follows; it is not part of
	// the condition.
	if i := strings.Index(rest, "："); i > 0 && runeLen(rest[:i]) <= 10 && !strings.ContainsAny(rest[:i], "，,") && hasPrefixAny(rest, zhOpen) == "" {
		rest = rest[i+len("："):]
	}
	// 属性：1．太阳病，…: the item's number after its label is list
	// numbering, not part of the condition.
	if m := listNumber(rest, true); m != "" && m != rest {
		rest = trimLeadPunct(rest[len(m):])
	}
	open := hasPrefixAny(rest, zhOpen)
	if open == "" {
		// "X，若Y，则Z": the rule is the conditional part.
		// X, the first clause, is what the rule is about when it is a
		// short name (伤官用官，运喜财印，不利食伤，若局中官露而财印两旺，则…).
		if cl := clausesOf(rest); len(cl) > 1 {
			for _, c := range cl[1:] {
				if o := hasPrefixAny(c.Text, zhOpen); o != "" && o != "或" && o != "如" {
					subject = zhSubject(cl[0].Text)
					rest, open = rest[c.Start:], o
					break
				}
			}
		}
	}
	after := rest[len(open):]
	cond, concl, how := zhSplit(after, open != "")
	if how == "" {
		return ruleParse{}, false
	}
	if open == "" && exc == "" && how != "zhe" && runeLen(body) > 60 {
		// Without an opening word only a short sentence reads as one rule.
		return ruleParse{}, false
	}
	cond = trimClause(strings.TrimSuffix(trimClause(cond), "者"))
	if p := hasPrefixAny(cond, []string{"或", "又", "而"}); p != "" {
		cond = trimClause(cond[len(p):]) // 若或无金: "if (perhaps) there is no metal"
	}
	concl = trimClause(strings.TrimRight(trimClause(concl), zhParticle))
	if how == "then" {
		// 不贫则夭, 非孤则贫: "if not X then Y" is one verdict, "X or Y"; cut
		// at 则 it would read "IF 不贫 THEN 夭". The negated clause belongs
		// to the consequent.
		if cl := clausesOf(cond); len(cl) > 1 {
			last := cl[len(cl)-1]
			if hasPrefixAny(last.Text, []string{"不", "非", "未", "无"}) != "" && runeLen(last.Text) <= 3 {
				concl = last.Text + "则" + concl
				cond = trimClause(cond[:last.Start])
			}
		}
	}
	cond, concl = despaceHan(cond), despaceHan(concl)
	if !zhCondClean(cond) || strings.HasSuffix(cond, "论之") || strings.HasSuffix(cond, "言之") || strings.HasSuffix(cond, "观之") {
		// 以五行而统论之: a point of view, not a condition.
		return ruleParse{}, false
	}
	if runeLen(concl) == 1 && strings.Contains(zhJudgement, concl) && how == "then" {
		// 则吉: a one-character judgement keeps its 则, so it reads (and
		// can be found in the source) as a phrase.
		concl = "则" + concl
	}
	if how != "then" && strings.HasPrefix(concl, "是") && hasPrefixAny(concl, []string{"是以", "是故", "是为"}) == "" {
		// 终以月令为主，然后寻用，是建禄月劫之格: a 是 clause says what
		// something is, it judges nothing.
		return ruleParse{}, false
	}
	if ganzhiPairs(cond, 1) > 0 && ganzhiPairs(concl, 1) > 0 || strings.Contains(body, "之类") || strings.HasPrefix(cond, "论") {
		// 如甲子人，以前三辰为引，则丙寅、丁卯为引: a worked example of a
		// rule stated elsewhere, not the rule; so is a consequent ending
		// 之类是也 (…以冲二申之类是也); 论生克，则不察喜忌…: a point of
		// view, not a condition.
		return ruleParse{}, false
	}
	if !zhCondOK(cond) || !zhConclOK(concl) || open == "" && runeLen(cond) < 3 {
		return ruleParse{}, false
	}
	byZhe := how == "zhe"
	if byZhe && open == "" && (!strings.ContainsAny(cond, zhCondVerbs) || strings.Contains(concl, "犹") || strings.Contains(concl, "谓")) {
		// "太乙者，数之始也", "长生者，犹人之初生也": a definition, not a
		// judgement.
		return ruleParse{}, false
	}
	p := ruleParse{Cond: cond, Concl: concl, Zh: true, Tier: 2, Confidence: "medium", Subject: subject, General: strings.HasPrefix(open, "凡") || open == "大凡"}
	// Rules with an opening word and 则 are the clearest; shorter ones read
	// better.
	if open != "" {
		p.score++
	}
	if zhThen(after) > 0 {
		p.score++
	}
	p.maxim = open == "" && exc == "" && (how == "word" || how == "then") && zhMaxim(cond)
	p.score -= float64(max(0, runeLen(cond)-16)+max(0, runeLen(concl)-24)) / 12
	if hasPrefixAny(cond, []string{"遇", "见", "逢", "向", "不见"}) != "" && runeLen(cond) <= 6 {
		// 见官星, 遇火盛: whose 官星, whose fire the sentence before says;
		// read alone the rule is thin.
		p.score -= 1.5
	}
	switch {
	case exc != "" || zhReverse.MatchString(concl):
		p.Tier = 3
		if exc != "" {
			p.Note = "例外：原文以「" + exc + "」引出，限定一般规则"
		} else {
			p.Note = "例外：结论与通常的判断相反"
		}
	case zhFlagHit(zhProhibit, zhIdioms.Replace(concl)) || zhOblige.MatchString(concl):
		p.Tier, p.Priority = 1, "high"
		if zhCritical.MatchString(concl) {
			p.Priority = "critical"
		}
	}
	switch {
	case zhHedge.MatchString(concl):
		p.Confidence = "low"
	case zhCertain.MatchString(concl):
		p.Confidence = "high"
	}
	return p, true
}

// zhRelation are the verbs by which a maxim's condition relates two things:
// 伤官见官, 官逢财生, 伤官佩印, 食神制杀.
const zhRelation = "见逢遇带佩用生制合化透会坐犯"

// zhMaxim reports that cond, the condition of a sentence without an opening
// word, is a maxim's: one clause of three to eight characters with a
// relation verb after its subject (伤官见官), not a bare 见官星 whose subject
// is in the sentence before.
func zhMaxim(cond string) bool {
	n := runeLen(cond)
	if n < 3 || n > 8 || strings.ContainsAny(cond, "，,：:、") {
		return false
	}
	rs := []rune(cond)
	for i := 1; i < len(rs)-1; i++ {
		if strings.ContainsRune(zhRelation, rs[i]) {
			return true
		}
	}
	return false
}

// zhSplit cuts the text after a conditional opening into condition and
// consequent: at 则, else before the first clause opening with a consequent
// word, else after a "……者" clause, else (opened, two clauses) between them.
// how says which ("then", "word", "zhe", "pair"; "" when none applies).
func zhSplit(after string, opened bool) (cond, concl, how string) {
	if i := zhThen(after); i > 0 {
		// 若酒客病，不可与桂枝汤，得汤则呕: the verdict comes before the 则,
		// which only gives its reason; cut at 则, the condition would hold
		// a verdict (zhCondClean) and the rule be lost. Only after an
		// opening word: without one (喜木生扶，不宜过旺，旺则火炎) the first
		// clause leans on the text before for its subject.
		for k, c := range clausesOf(after[:i]) {
			if opened && k > 0 && hasPrefixAny(c.Text, zhCondVerdict) != "" {
				return after[:c.Start], after[c.Start:], "word"
			}
		}
		cond, concl = after[:i], after[i+len("则"):]
		last := strings.TrimRight(cond, " 　")
		if r, _ := utf8.DecodeLastRuneInString(last); !strings.ContainsRune("，,：:", r) {
			// 则 inside a clause ("逢卯则冲，而……"): the consequent is the
			// rest of that clause, the clauses after it say something else,
			// and the words before 则 in the clause must say something.
			if cl := clausesOf(cond); len(cl) > 0 && runeLen(strings.TrimLeft(cl[len(cl)-1].Text, "而且又乃")) < 2 {
				return "", "", ""
			}
			if cl := clausesOf(concl); len(cl) > 0 {
				concl = concl[:cl[0].End]
			}
		}
		return cond, concl, "then"
	}
	cl := clausesOf(after)
	for k := 1; k < len(cl); k++ {
		if w := hasPrefixAny(cl[k].Text, zhConseq); w != "" {
			// 或一派壬癸，不得寅时，又无庚金，必主穷困: 不得 here is "does not
			// get", still the condition; the verdict is the later 必 clause.
			if w == "不得" || w == "不" {
				for j := k + 1; j < len(cl); j++ {
					if hasPrefixAny(cl[j].Text, []string{"必", "主", "定", "决", "断", "乃"}) != "" {
						k = j
						break
					}
				}
			}
			return after[:cl[k].Start], after[cl[k].Start:], "word"
		}
	}
	switch {
	case len(cl) >= 2 && strings.HasSuffix(cl[0].Text, "者"):
		return after[:cl[0].End], after[cl[1].Start:], "zhe"
	case opened && len(cl) == 2:
		return after[:cl[1].Start], after[cl[1].Start:], "pair"
	case len(cl) >= 2 && hasSuffixAny(strings.TrimRight(cl[len(cl)-1].Text, zhParticle), zhPrescribe) != "":
		// 太阳病，头痛发热，汗出恶风者，桂枝汤主之; 喘家作桂枝汤，加厚朴杏子佳:
		// the last clause prescribes, the clauses before are the case.
		last := cl[len(cl)-1]
		return after[:last.Start], after[last.Start:], "end"
	}
	return "", "", ""
}

// zhCondVerdict open a clause that gives a verdict: not part of a condition
// (zhCondClean).
var zhCondVerdict = []string{"不宜", "不可", "切忌", "忌", "宜", "必", "须", "切"}

// zhPrescribe end a clause that prescribes what to do in the case the
// clauses before it state: 桂枝汤主之, 加厚朴杏子佳, 宜之.
var zhPrescribe = []string{"主之", "宜之", "佳"}

func hasSuffixAny(s string, list []string) string {
	for _, p := range list {
		if strings.HasSuffix(s, p) {
			return p
		}
	}
	return ""
}

// zhThen returns the byte index of the 则 that starts the consequent of s,
// or -1: not inside brackets, not in 否则/法则 and the like, and not first.
func zhThen(s string) int {
	at := -1
	outsideBrackets(s, func(i int, r rune) bool {
		if r != '则' || i == 0 {
			return true
		}
		for _, w := range zhNotThen {
			if j := i + len("则") - len(w); j >= 0 && strings.HasPrefix(s[j:], w) {
				return true
			}
		}
		at = i
		return false
	})
	return at
}

func trimLeadPunct(s string) string {
	return strings.TrimLeft(s, "，,：: 　")
}

// ganzhiPairs counts the sexagenary pairs (甲子, 丙寅) in s, up to limit:
// three or more in a condition make it an example chart, not a general rule.
func ganzhiPairs(s string, limit int) int {
	n := 0
	var prev rune
	for _, r := range s {
		if strings.ContainsRune("子丑寅卯辰巳午未申酉戌亥", r) && prev != 0 && strings.ContainsRune("甲乙丙丁戊己庚辛壬癸", prev) {
			if n++; n == limit {
				return n
			}
		}
		prev = r
	}
	return n
}

func zhCondOK(cond string) bool {
	n := runeLen(cond)
	if last, _ := utf8.DecodeLastRuneInString(cond); n < 2 || n > 40 || strings.ContainsRune("也矣焉", last) {
		return false // 刚柔不一也: a statement, not a condition
	}
	first, _ := utf8.DecodeRuneInString(cond)
	// 此/其/反此: the condition points back at text the rule does not quote.
	if strings.ContainsRune(zhPronoun, first) || first == '反' || strings.Contains(cond, "此") || strings.Contains(cond, "反是") || !isHan(cond) {
		return false
	}
	// 如甲子、丙寅……: an example chart, not a rule.
	if ganzhiPairs(cond, 3) >= 3 {
		return false
	}
	if strings.Contains(cond, "一命") || strings.Contains(cond, "此造") || strings.Contains(cond, "某") {
		return false
	}
	return true
}

func zhConclOK(concl string) bool {
	n := runeLen(concl)
	if n < 2 || n > 60 {
		return false
	}
	if n == 2 && strings.HasPrefix(concl, "则") {
		return true
	}
	first, _ := utf8.DecodeRuneInString(concl)
	if strings.ContainsRune("则者也或若如凡", first) || strings.HasPrefix(concl, "犹") || strings.HasPrefix(concl, "谓") {
		return false
	}
	// 反是, 亦然, 不在此论 alone point back at another rule; three
	// sexagenary pairs make an example chart.
	return !zhBackRef.MatchString(concl) && ganzhiPairs(concl, 3) < 3
}

// ---- English ----

var (
	enOpen = regexp.MustCompile(`(?i)^(if|when|whenever|unless|once)\s+`)
	// enModal is "S must/should/never ... " with S a short noun phrase.
	enModal = regexp.MustCompile(`(?i)^(.{2,60}?)\s+(must not|mustn't|must|should not|shouldn't|should|never|always|ought to|needs? to|has to|have to)\s+(?:(always|never|only|first|also|not)\s+)?(.+)$`)
	// enImperative opens an instruction given without a subject.
	enImperative = regexp.MustCompile(`(?i)^(never|always|do not|don't|avoid)\s+(.+)$`)
	enMeans      = regexp.MustCompile(`(?i)^(.{3,90}?)\s+(means|indicates|signals|shows that|suggests|is a sign (?:of|that)|are a sign (?:of|that))\s+(.+)$`)
	enTrailingIf = regexp.MustCompile(`(?i)^([A-Z][^,:;]{8,80}?)\s+(if|unless|when)\s+([^,:;]{6,})$`)
	enPronoun    = map[string]bool{"they": true, "it": true, "this": true, "these": true, "those": true, "he": true, "she": true, "its": true, "their": true, "them": true, "that": true, "such": true}
	// enSubordinate words make a "subject" a clause, not a noun phrase.
	enSubordinate = regexp.MustCompile(`(?i)\b(so|that|because|which|who|whom|whose|while|until|unless|if|when|as|after|before|once|since|though|although|and then)\b|[,:;]`)
	enProhibit    = regexp.MustCompile(`(?i)\b(never|must not|mustn't|do not|don't|should not|shouldn't|avoid)\b`)
	enCritical    = regexp.MustCompile(`(?i)\b(danger\w*|fatal|poison\w*|toxic|unsafe|mou?ld\w*|harmful)\b`)
	enCertain     = regexp.MustCompile(`(?i)\b(always|must|will|certainly|invariably)\b`)
	enHedge       = regexp.MustCompile(`(?i)\b(may|might|can|could|often|usually|probably|sometimes|perhaps|likely|tends? to)\b`)
	enExcept      = regexp.MustCompile(`(?i)^(however|but|except)\b,?\s*`)
	// enMainEnd ends the main clause of an instruction: a colon, a dash.
	enMainEnd = regexp.MustCompile(`\s*(?::|\s[—–-]\s)`)
	// enBefore are the words that end a verb's object in a situation phrase.
	enBefore = regexp.MustCompile(`(?i)^(with|at|in|on|for|into|onto|over|under|before|after|until|from|to|by|without|within|so|because|while|when|if|unless|than|and|or|but|as)$`)
)

// enMeansNoun reports that "means" after before is the noun ("maintained by
// means of", "as a means of"), not the verb linking an observation to what
// it tells.
func enMeansNoun(before, verb string) bool {
	if !strings.EqualFold(verb, "means") {
		return false
	}
	f := strings.Fields(before)
	switch strings.ToLower(f[len(f)-1]) {
	case "by", "a", "an", "the", "of", "no", "any", "some", "its", "his", "her", "their", "our", "your", "my", "this", "that", "these", "those", "every", "all", "such", "other", "same", "best", "only", "sole", "main", "whose", "what", "which", "whatever":
		return true
	}
	return false
}

// enRule reads an English sentence as a rule:
//   - "If/When X, (then) Y" and "Y if X": condition X, conclusion Y;
//   - "X means/indicates Y": an observation and what it tells;
//   - "Never/Always/Do not V O ...": the situation "V-ing O" and the whole
//     instruction;
//   - "S must/should/never ... ": the situation (for "S must be V-ed", "V-ing
//     S"; otherwise S) and the whole statement, never cut at the modal.
func enRule(s string) (ruleParse, bool) {
	body := strings.TrimRight(s, ".!; ")
	if strings.ContainsAny(body, "?") || !strings.ContainsRune(body, ' ') {
		return ruleParse{}, false
	}
	exc := ""
	if m := enExcept.FindStringSubmatch(body); m != nil {
		exc, body = strings.ToLower(m[1]), body[len(m[0]):]
	}
	p, ok := enForms(body)
	if !ok {
		return ruleParse{}, false
	}
	if exc == "" && strings.EqualFold(firstWord(p.Cond), "unless") {
		exc = "unless"
	}
	p.Confidence = "medium"
	switch {
	case exc != "":
		p.Tier, p.Note = 3, "exception (introduced by “"+exc+"”)"
	case p.Tier == 1:
		p.Priority = "high"
		if enCritical.MatchString(body) {
			p.Priority = "critical"
		}
	}
	switch {
	case enHedge.MatchString(p.Concl):
		p.Confidence = "low"
	case enCertain.MatchString(p.Concl):
		p.Confidence = "high"
	}
	p.score -= float64(max(0, len(strings.Fields(p.Cond))-12)+max(0, len(strings.Fields(p.Concl))-20)) / 6
	return p, true
}

func enForms(body string) (ruleParse, bool) {
	main, reason := body, ""
	if loc := enMainEnd.FindStringIndex(body); loc != nil {
		main = body[:loc[0]]
		if r := trimClause(body[loc[1]:]); enPhraseOK(r, 3) {
			reason = r
		}
	}
	if m := enOpen.FindStringSubmatchIndex(body); m != nil {
		op := strings.ToLower(body[m[2]:m[3]])
		rest := body[m[1]:]
		i, j := enThenSplit(rest)
		if i < 0 {
			// "If a player having the move touches one of his pieces he
			// is under compulsion to move it": no comma, the consequent
			// opens with its pronoun subject.
			if i = enPronounSplit(rest); i < 0 {
				return ruleParse{}, false
			}
			j = i
		}
		cond, concl := trimClause(rest[:i]), trimClause(rest[j:])
		if op == "unless" || op == "once" {
			cond = body[m[2]:m[3]] + " " + cond
		}
		if !enPhraseOK(cond, 2) || !enPhraseOK(concl, 2) || enPronoun[strings.ToLower(firstWord(strings.TrimPrefix(strings.TrimPrefix(cond, "unless "), "once ")))] {
			return ruleParse{}, false
		}
		if op != "if" && op != "unless" && enPast(cond) && enPast(concl) {
			// "When Lionel Giles began his translation of Sun Tzu's ART
			// OF WAR, the work was virtually unknown in Europe": what
			// happened once, told in the past, is no rule.
			return ruleParse{}, false
		}
		p := ruleParse{Cond: cond, Concl: concl, Tier: 2, score: 2}
		if enProhibit.MatchString(concl) {
			p.Tier = 1
		}
		return p, true
	}
	if m := enMeans.FindStringSubmatch(main); m != nil && !strings.ContainsAny(m[1], ",:;") && !enOpen.MatchString(m[1]) && !enMeansNoun(m[1], m[2]) {
		cond := trimClause(m[1])
		concl := trimClause(m[3])
		if strings.HasPrefix(strings.ToLower(m[2]), "is a sign") || strings.HasPrefix(strings.ToLower(m[2]), "are a sign") {
			concl = trimClause(m[2][strings.Index(m[2], "a sign"):] + " " + m[3])
		}
		if enPhraseOK(cond, 2) && enPhraseOK(concl, 2) && !enPronoun[strings.ToLower(firstWord(cond))] {
			return ruleParse{Cond: cond, Concl: concl, Tier: 2, score: 1}, true
		}
	}
	if m := enImperative.FindStringSubmatch(main); m != nil {
		sit := situation(m[1], m[2])
		if sit == "" {
			return ruleParse{}, false
		}
		p := ruleParse{Cond: sit, Concl: trimClause(main), Reason: reason, Tier: 1, score: 1}
		if strings.EqualFold(m[1], "always") {
			p.Tier = 2
			if enProhibit.MatchString(main) {
				p.Tier = 1
			}
		}
		return p, true
	}
	if m := enModal.FindStringSubmatch(main); m != nil {
		// A statement that fails as "S must ..." (its subject a clause,
		// the reader or a pronoun) may still be "Y if X": "Castling is not
		// permitted if the King in castling must pass over a square ...".
		subj := strings.TrimSpace(enDiscourseLead.ReplaceAllString(strings.TrimSpace(m[1]), ""))
		modal := strings.ToLower(m[2])
		if enSubjectOK(subj) && !enNarration.MatchString(m[4]) {
			if sit := modalSituation(subj, m[4]); sit != "" {
				p := ruleParse{Cond: sit, Concl: trimClause(main), Reason: reason, Tier: 2, score: 0.5}
				if modal != "should" && modal != "ought to" && modal != "always" || enProhibit.MatchString(modal) {
					p.Tier = 1
				}
				return p, true
			}
		}
	}
	if m := enTrailingIf.FindStringSubmatch(enReasonTail.ReplaceAllString(main, "")); m != nil {
		concl, cond := trimClause(m[1]), trimClause(m[3])
		op := strings.ToLower(m[2])
		if op == "unless" {
			cond = "unless " + cond
		}
		if op == "when" && enPhraseOK(cond, 1) && !enPhraseOK(cond, 3) {
			// "Doubled pawns are weak when ISOLATED": the condition keeps
			// the statement's subject.
			if subj := enStatementSubject(concl); subj != "" {
				cond = lowerFirst(subj) + " when " + cond
			}
		}
		if subj := enStatementSubject(concl); enPhraseOK(cond, 2) && enPhraseOK(concl, 3) && (subj == "" || enSubjectOK(subj)) {
			p := ruleParse{Cond: cond, Concl: concl, Tier: 2}
			if enProhibit.MatchString(concl) {
				p.Tier = 1
			}
			return p, true
		}
	}
	return enDeontic(main)
}

var (
	// enPermitted is a policy's statement of what is allowed, required or
	// forbidden: "Teleworking from locations outside the U.S. while on
	// personal travel is not allowed".
	enPermitted = regexp.MustCompile(`(?i)^(.{3,120}?)\s+(?:is|are)\s+(not\s+|never\s+|only\s+)?(allowed|permitted|required|prohibited|forbidden|eligible|entitled|reimbursable|reimbursed|covered|mandatory|authori[sz]ed)\b(.*)$`)
	// enMay is "S may/can/cannot V ...": what S is allowed or able to do
	// ("Supervisors may be reimbursed for up to half the cost of ...").
	enMay = regexp.MustCompile(`(?i)^(.{3,60}?)\s+(may not|may|can not|cannot|can't|can)\s+(.+)$`)
)

// enDeontic reads a policy's statement of what is allowed, required or
// forbidden, or what a subject may or can do, as a rule: the subject (a
// situation or a party, never the reader) is the condition, the whole
// statement the conclusion. A negated one is a prohibition (tier 1).
func enDeontic(main string) (ruleParse, bool) {
	if m := enPermitted.FindStringSubmatch(main); m != nil {
		subj := strings.TrimSpace(enDiscourseLead.ReplaceAllString(m[1], ""))
		w := strings.Fields(subj)
		if len(w) >= 1 && len(w) <= 14 && (unicode.IsUpper([]rune(w[0])[0]) || enDeterminer[strings.ToLower(w[0])]) && !enReader.MatchString(subj) && !enPronoun[strings.ToLower(firstWord(subj))] && !enAux.MatchString(subj) && !enSubjectPronounIn(w) {
			p := ruleParse{Cond: lowerFirst(subj), Concl: trimClause(main), Tier: 2, score: 0.5}
			if neg := strings.ToLower(strings.TrimSpace(m[2])); neg == "not" || neg == "never" || strings.EqualFold(m[3], "prohibited") || strings.EqualFold(m[3], "forbidden") {
				p.Tier, p.Priority = 1, "high"
			}
			return p, true
		}
	}
	if m := enMay.FindStringSubmatch(main); m != nil {
		subj := strings.TrimSpace(enDiscourseLead.ReplaceAllString(m[1], ""))
		if enSubjectOK(subj) && !enNarration.MatchString(m[3]) && len(strings.Fields(m[3])) >= 2 {
			sit := modalSituation(subj, m[3])
			if sit == "" {
				sit = lowerFirst(subj)
			}
			p := ruleParse{Cond: sit, Concl: trimClause(main), Tier: 2}
			if strings.Contains(strings.ToLower(m[2]), "not") || strings.Contains(strings.ToLower(m[2]), "'t") {
				p.Tier, p.Priority = 1, "high"
			}
			return p, true
		}
	}
	return ruleParse{}, false
}

// enPastIrregular are common English verbs in the simple past that do not
// end in -ed.
var enPastIrregular = map[string]bool{"was": true, "were": true, "had": true, "did": true, "began": true, "became": true, "came": true, "went": true, "took": true,
	"made": true, "said": true, "wrote": true, "found": true, "saw": true, "gave": true, "knew": true, "thought": true, "left": true, "told": true, "got": true,
	"stood": true, "fell": true, "brought": true, "sent": true, "spoke": true, "rose": true, "ran": true, "won": true, "lost": true, "met": true, "held": true, "led": true}

// enPast reports whether a clause is told in the past: its verb, among its
// first five words, a simple past (was, began, reached), and no present or
// modal verb before it (is, are, must, can, will).
func enPast(clause string) bool {
	for k, w := range strings.Fields(clause) {
		if k == 5 {
			break
		}
		t := strings.ToLower(strings.Trim(w, ",.;:\"'()"))
		switch {
		case enPastIrregular[t]:
			return true
		case k > 0 && strings.HasSuffix(t, "ed") && len(t) > 4 && !enDeterminer[t]:
			return true
		case enFiniteAux[t] && t != "was" && t != "were" || enAux.MatchString(t) || t == "has" || t == "have":
			return false
		}
	}
	return false
}

func enSubjectPronounIn(w []string) bool {
	for _, x := range w {
		if enSubjectPronoun[strings.ToLower(strings.Trim(x, ",.;:\"'"))] {
			return true
		}
	}
	return false
}

var (
	// enReader are subjects that are the reader, the writer or a pronoun:
	// "The student should carefully study this example", "You will need
	// to request the hour in HR Links", "He cannot win by 1 P-Kt5" exhort
	// or narrate; a rule's subject is what it is about.
	enReader = regexp.MustCompile(`(?i)^(?:you|we|i|one|he|she|it|they|this|that|these|those|there|here|whoever|whatever|anyone|anybody|someone|everyone|everybody|nobody|(?:the|our|my|your|a|every|each) (?:student|reader|beginner|learner|pupil|author|writer|amateur)s?)$`)
	// enAux in a subject makes it a question or an inversion ("Should you
	// need to rebook ...", "You will need to ...").
	enAux = regexp.MustCompile(`(?i)\b(?:will|would|shall|should|can|could|may|might|must|do|does|did|don['’]t|doesn['’]t|didn['’]t|can['’]t|won['’]t)\b`)
	// enDiscourseLead open a sentence without being part of its subject.
	enDiscourseLead = regexp.MustCompile(`(?i)^(?:(?:and|but|so|thus|hence|therefore|consequently|of course|incidentally|now|then|again|also|moreover|furthermore|finally|besides|indeed|in that case|in this case)\b,?\s*)+`)
	// enNarration after a modal tells a step of one line of play or one
	// case ("The opposing King must then give the way ..."), not a rule.
	enNarration = regexp.MustCompile(`(?i)^(?:then|now|therefore|next|again)\b`)
	// enReasonTail is a reason given after the statement (", for they
	// cannot support each other"), left out of "Y when X".
	enReasonTail = regexp.MustCompile(`(?i),\s*(?:for|because|since|as)\s+.*$`)
	// enVerbAfter ends the subject of a statement: an auxiliary, an
	// adverb of frequency, or a verb in the third person.
	enVerbAfter = regexp.MustCompile(`(?i)^(?:is|are|was|were|be|can|cannot|may|might|must|should|will|would|has|have|had|always|never|only|often|usually|generally|invariably|need|needs|do|does)$`)
)

// enSubjectOK reports whether subj, the subject of an English statement,
// is what a rule can be about: a short noun phrase of content words, not
// the reader, a pronoun, a clause or an inversion.
func enSubjectOK(subj string) bool {
	subj = strings.TrimSpace(strings.Trim(enDiscourseLead.ReplaceAllString(strings.TrimLeft(subj, "(\"'“‘_*"), ""), "_*"))
	w := strings.Fields(subj)
	if len(w) == 0 || len(w) > 6 || enSubordinate.MatchString(subj) || enAux.MatchString(subj) {
		return false
	}
	if strings.ContainsAny(subj, "()") || enReader.MatchString(subj) || enPronoun[strings.ToLower(firstWord(subj))] {
		return false
	}
	for _, x := range w {
		// "Here's what you", "EXAMPLE 39.--In this example we": a
		// pronoun inside, or a subject ending in a function word ("all
		// the"), is no noun phrase.
		if t := strings.ToLower(strings.Trim(x, ",.;:\"'")); enSubjectPronoun[t] || t == "i" || strings.ContainsAny(t, "0123456789") && strings.Contains(t, "--") {
			return false
		}
	}
	if last := strings.ToLower(strings.Trim(w[len(w)-1], ",.;:\"'")); enStop[last] || enDeterminer[last] {
		return false
	}
	// A lower-case opening word that is no article starts a fragment
	// ("and White will finally ...").
	if f := w[0]; unicode.IsLower([]rune(f)[0]) && !enDeterminer[strings.ToLower(f)] {
		return false
	}
	return true
}

var enDeterminer = map[string]bool{"the": true, "a": true, "an": true, "every": true, "each": true, "any": true, "all": true, "no": true, "two": true, "three": true, "most": true, "some": true, "many": true}

// enPronounSplit returns where the consequent of a condition written
// without a comma starts: at a subject pronoun (he, she, they, it, you,
// we) after the third word, followed by a verb-like word; -1 when none.
func enPronounSplit(s string) int {
	w := strings.Fields(s)
	pos := 0
	for k, t := range w {
		at := strings.Index(s[pos:], t) + pos
		pos = at + len(t)
		if k < 3 || k+1 >= len(w) || !enSubjectPronoun[t] {
			continue
		}
		// A verb follows the subject; "it to", "it in" is an object.
		if next := strings.ToLower(w[k+1]); !enStop[next] || enFiniteAux[next] {
			return at
		}
	}
	return -1
}

var enFiniteAux = map[string]bool{"is": true, "are": true, "was": true, "were": true, "will": true, "can": true}

var enSubjectPronoun = map[string]bool{"he": true, "she": true, "they": true, "it": true, "you": true, "we": true}

// enStatementSubject returns the words of an English statement before its
// verb (enVerbAfter, or a lower-case word in -s after a noun: "a passed
// Pawn increases ..."), or "" when none is found in the first six words.
func enStatementSubject(s string) string {
	w := strings.Fields(s)
	word := func(i int) string { return strings.Trim(w[i], ",.;:()\"'_*") }
	// An auxiliary first ("Direct and violent attacks against the King
	// must ..."), else a verb in -s ("a passed Pawn increases ...").
	for i := 1; i < len(w) && i <= 7; i++ {
		if enVerbAfter.MatchString(word(i)) {
			return strings.Join(w[:i], " ")
		}
		if strings.ContainsAny(w[i], ",;:") {
			break
		}
	}
	for i := 2; i < len(w) && i <= 6; i++ {
		if t := word(i); len(t) >= 4 && unicode.IsLower([]rune(t)[0]) && strings.HasSuffix(t, "s") && !strings.HasSuffix(t, "ss") && !strings.HasSuffix(t, "us") && !strings.HasSuffix(t, "is") && !enStop[t] {
			return strings.Join(w[:i], " ")
		}
	}
	return ""
}

// enThenSplit finds where the condition of "X, then Y" / "X, Y" ends (i) and
// the consequent starts (j), at a comma outside brackets; -1 when none.
func enThenSplit(s string) (i, j int) {
	first, then, thenEnd := -1, -1, -1
	outsideBrackets(s, func(k int, r rune) bool {
		if r != ',' {
			return true
		}
		after := strings.TrimLeft(s[k+1:], " ")
		if strings.HasPrefix(strings.ToLower(after), "then ") {
			then, thenEnd = k, len(s)-len(after)+len("then ")
			return false
		}
		if first < 0 && len(strings.Fields(s[:k])) >= 2 {
			first = k
		}
		return true
	})
	switch {
	case then >= 0:
		return then, thenEnd
	case first >= 0:
		return first, first + 1
	}
	return -1, -1
}

func enPhraseOK(s string, minWords int) bool {
	w := strings.Fields(s)
	return len(w) >= minWords && len(w) <= 40
}

func firstWord(s string) string {
	if f := strings.Fields(s); len(f) > 0 {
		return strings.Trim(f[0], ",.;:()\"'")
	}
	return ""
}

// situation turns an instruction "Never brew green tea with water ..." into
// the situation it governs, "brewing green tea": the verb as a gerund and
// its object up to the first preposition (five words at most). A verb with
// no object names no situation ("" then): "Never mind." would be "minding",
// "never more to rise" "moring", words the source never wrote, which the
// check rightly refuses as unsupported (a novel's dialogue failed a first
// build that way).
func situation(lead, rest string) string {
	words := strings.Fields(rest)
	if len(words) == 0 {
		return ""
	}
	verb := strings.ToLower(strings.Trim(words[0], ",.;:"))
	if verb == "to" && len(words) > 1 && !strings.EqualFold(lead, "avoid") {
		// An infinitive after the adverb: "always to hope the best" is
		// hoping the best, not "toing hope the best".
		words = words[1:]
		verb = strings.ToLower(strings.Trim(words[0], ",.;:"))
	}
	if enStop[verb] && verb != "be" {
		return "" // "always the same", "never a …": no verb, no situation
	}
	var head string
	if strings.EqualFold(lead, "avoid") {
		head = verb // already a gerund or a noun: "Avoid boiling water"
	} else {
		if strings.ToLower(lead) == "do not" || strings.ToLower(lead) == "don't" {
			if verb == "ever" && len(words) > 1 {
				words = words[1:]
				verb = strings.ToLower(words[0])
			}
		}
		head = gerund(verb)
	}
	obj := objectPhrase(words[1:], 5)
	if obj == "" {
		return ""
	}
	return strings.TrimSpace(head + " " + obj)
}

// modalSituation turns "S must (always) be V-ed ..." into "V-ing S" and
// "S must V ..." into "V-ing S" when V is followed by a preposition
// ("Every brewing session must start with ..." -> "starting every brewing
// session"); otherwise S itself when it has two words or more.
func modalSituation(subj, rest string) string {
	words := strings.Fields(rest)
	np := lowerFirst(subj)
	if len(words) >= 2 && strings.EqualFold(words[0], "be") {
		if base := participleBase(strings.ToLower(strings.Trim(words[1], ",.;:"))); base != "" {
			g := gerund(base)
			if len(words) >= 3 && particles[strings.ToLower(words[2])] {
				g += " " + strings.ToLower(words[2])
			}
			return g + " " + np
		}
	}
	if len(words) >= 2 && enBefore.MatchString(strings.Trim(words[1], ",.;:")) && !strings.EqualFold(words[0], "be") {
		v := strings.ToLower(strings.Trim(words[0], ",.;:"))
		if isVerbish(v) {
			return gerund(v) + " " + np
		}
	}
	if len(strings.Fields(subj)) >= 2 {
		return np
	}
	return ""
}

var particles = map[string]bool{"out": true, "up": true, "off": true, "down": true, "away": true, "over": true, "back": true}

// isVerbish rejects words that cannot be the verb after a modal (an
// adjective after "be" is handled before).
func isVerbish(w string) bool {
	return w != "" && !strings.HasSuffix(w, "ly") && !enStop[w]
}

func objectPhrase(words []string, max int) string {
	var out []string
	for _, w := range words {
		t := strings.Trim(w, ",.;:()\"'")
		if t == "" || enBefore.MatchString(t) || len(out) == max {
			break
		}
		out = append(out, t)
		if strings.ContainsAny(w, ",.;:") {
			break
		}
	}
	return strings.Join(out, " ")
}

func lowerFirst(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	if n == 0 {
		return s
	}
	next, _ := utf8.DecodeRuneInString(s[n:])
	if next >= 'A' && next <= 'Z' { // an acronym
		return s
	}
	return strings.ToLower(string(r)) + s[n:]
}

// gerund returns the -ing form of an English base verb.
func gerund(v string) string {
	switch {
	case v == "be" || v == "see" || v == "flee" || v == "agree" || v == "free":
		return v + "ing"
	case strings.HasSuffix(v, "ie"):
		return v[:len(v)-2] + "ying"
	case strings.HasSuffix(v, "ee") || strings.HasSuffix(v, "ye") || strings.HasSuffix(v, "oe"):
		return v + "ing"
	case strings.HasSuffix(v, "e") && len(v) > 2:
		return v[:len(v)-1] + "ing"
	case doubles(v):
		return v + v[len(v)-1:] + "ing"
	}
	return v + "ing"
}

// doubles reports a one-syllable verb ending consonant-vowel-consonant
// (stop, stir, put), whose last letter doubles before -ing.
func doubles(v string) bool {
	n := len(v)
	if n < 3 || strings.ContainsAny(v[n-1:], "wxy") {
		return false
	}
	vowel := func(b byte) bool { return strings.IndexByte("aeiou", b) >= 0 }
	if vowel(v[n-1]) || !vowel(v[n-2]) || vowel(v[n-3]) {
		return false
	}
	groups := 0
	for i := 0; i < n; i++ {
		if vowel(v[i]) && (i == 0 || !vowel(v[i-1])) {
			groups++
		}
	}
	return groups == 1
}

var irregular = map[string]string{
	"made": "make", "kept": "keep", "left": "leave", "put": "put", "set": "set", "taken": "take",
	"given": "give", "done": "do", "held": "hold", "brought": "bring", "bought": "buy", "shaken": "shake",
	"drunk": "drink", "eaten": "eat", "seen": "see", "found": "find", "sold": "sell", "cut": "cut",
	"ground": "grind", "spent": "spend", "broken": "break", "chosen": "choose", "written": "write",
	"known": "know", "thrown": "throw", "drawn": "draw", "hidden": "hide", "laid": "lay", "paid": "pay",
	"read": "read", "sent": "send", "shut": "shut", "spread": "spread", "stood": "stand", "frozen": "freeze",
	"fed": "feed", "led": "lead", "let": "let", "lost": "lose", "run": "run", "told": "tell",
	"thought": "think", "understood": "understand", "stolen": "steal", "worn": "wear", "woken": "wake",
}

// participleBase returns the base verb of a past participle ("brewed" ->
// "brew"), or "" when w is not one.
func participleBase(w string) string {
	if b, ok := irregular[w]; ok {
		return b
	}
	switch {
	case len(w) < 4 || !strings.HasSuffix(w, "ed"):
		return ""
	case strings.HasSuffix(w, "ied"):
		return w[:len(w)-3] + "y"
	case strings.HasSuffix(w, "eed"):
		return w[:len(w)-1]
	}
	stem := w[:len(w)-2]
	n := len(stem)
	if n >= 2 && stem[n-1] == stem[n-2] && !strings.ContainsAny(stem[n-1:], "lsfz") {
		return stem[:n-1] // stopped -> stop
	}
	// A one-syllable verb ending consonant-vowel-consonant would have
	// doubled its consonant (stop -> stopped), so "stored" and "used" come
	// from "store" and "use". Other stems need no e: gerund drops it anyway
	// (rinsed -> rins -> rinsing).
	if doubles(stem) || n == 2 && strings.IndexByte("aeiou", stem[0]) >= 0 {
		return stem + "e"
	}
	return stem
}

// despaceHan drops the spaces the conversion left between Chinese
// characters (四 柱, 运北 地): they are layout, not text.
func despaceHan(s string) string {
	if !strings.ContainsAny(s, " 　") {
		return s
	}
	rs := []rune(s)
	var b strings.Builder
	for i, r := range rs {
		if r == ' ' || r == '　' {
			j := i + 1
			for j < len(rs) && (rs[j] == ' ' || rs[j] == '　') {
				j++
			}
			if i > 0 && j < len(rs) && hanOrPunct(rs[i-1]) && hanOrPunct(rs[j]) {
				continue
			}
		}
		b.WriteRune(r)
	}
	return b.String()
}

func hanOrPunct(r rune) bool {
	return unicode.Is(unicode.Han, r) || r >= 0x3000 && r <= 0x303f || r >= 0xff00 && r <= 0xff0f || r == '，' || r == '：' || r == '；'
}

// zhCondClean rejects a condition that is itself a statement: a clause
// giving a verdict of its own (运喜财官，不宜身旺，食伤则尤忌: the rule is
// about 食伤, 不宜身旺 is another verdict), or a clause that already holds
// a complete "X者Y" judgement (忌木而入土者脾病，忌火而入金则肺病: a list
// of parallel verdicts cut in the middle).
func zhCondClean(cond string) bool {
	for i, c := range clausesOf(cond) {
		if i > 0 && hasPrefixAny(c.Text, zhCondVerdict) != "" {
			return false
		}
		if j := strings.Index(c.Text, "者"); j > 0 && j+len("者") < len(c.Text) {
			return false
		}
	}
	return true
}

// zhSubject returns clause c when it can name what a rule is about: two to
// eight Han characters, not a pronoun, a discourse word or a statement of
// its own (no verdict, no 则/者/也).
func zhSubject(c string) string {
	c = despaceHan(trimClause(c))
	n := runeLen(c)
	if n < 2 || n > 8 || !isHan(c) || strings.ContainsAny(c, "则者也矣，,：:、此其之") {
		return ""
	}
	if first, _ := utf8.DecodeRuneInString(c); strings.ContainsRune(zhPronoun, first) || hasPrefixAny(c, zhLead) != "" || hasPrefixAny(c, zhOpen) != "" || hasPrefixAny(c, zhExcept) != "" {
		return ""
	}
	for _, v := range zhVerdict {
		if strings.Contains(c, v) {
			return ""
		}
	}
	return c
}

// zhHeadingTopic returns what a section heading names as its subject, for
// a rule of the section that does not name it: 三夏辛金, 论阳刃 → 阳刃,
// 正官论 → 正官, 论正官取运 → 正官, 6.29 甲申乙酉井泉水, 六乙日壬午时断 →
// 六乙日壬午时, 五行总论 → 五行; nothing for a volume (卷之一), a title of
// more than seven characters (论用神配气候得失) or a verse (阴命赋).
func zhHeadingTopic(h string) string {
	t := strings.TrimSpace(h)
	t = headingNumeral.ReplaceAllString(t, "")
	t = headingNumber.ReplaceAllString(t, "")
	t = chapterTitle(t)
	if i := strings.IndexAny(t, "（(－—-"); i > 0 {
		t = strings.TrimSpace(t[:i])
	}
	t = strings.TrimPrefix(strings.TrimPrefix(t, "附论"), "论")
	for _, suf := range []string{"取运", "总论", "论", "断"} {
		t = strings.TrimSuffix(t, suf)
	}
	n := runeLen(t)
	if n < 2 || n > maxTopic || !isHan(t) || strings.ContainsAny(t, "卷赋歌诀篇序目录诗") || strings.Contains(t, "独步") || strings.ContainsAny(t, "，。、") {
		return ""
	}
	return t
}

// maxTopic is the longest heading topic a rule carries, in characters: a
// term (三夏辛金, 阳刃, 用神变化), not a chapter title (论用神配气候得失).
const maxTopic = 5

// headingNumeral is a heading's decimal numbering: "2.11.2 ", "18 ".
var headingNumeral = regexp.MustCompile(`^\d+(?:\.\d+)*\.?\s+`)

// ruleCondition is the condition a Chinese rule is written with: its
// condition, after the subject the sentence names before it or, when the
// rule does not name it, its section's topic (三夏壬水：四柱多金得地), so the
// rule stands on its own.
//
// A rule names its topic when it names the term the heading is titled by,
// without the heading's 方/法/论 (statesTopic): 喘家作桂枝汤 → 加厚朴杏子佳
// under 桂枝汤方 is not written 桂枝汤方：喘家作桂枝汤.
func ruleCondition(p ruleParse, topic string) string {
	about := p.Subject
	if about == "" && topic != "" && !statesTopic(p.Cond+p.Concl, topic) {
		about = topic
	}
	if about == "" || strings.Contains(p.Cond, about) || p.Subject == "" && strings.Contains(p.Cond, "者") {
		// 偏财者，乃众人之财也…: the condition names its own subject.
		return p.Cond
	}
	return about + "：" + p.Cond
}

// statesTopic reports whether text names topic, a heading's topic, as the
// text names it: the term without the heading's trailing 方, 法 or 论
// (topicTerm), so 桂枝汤 names 桂枝汤方 and 辨脉 names 辨脉法.
func statesTopic(text, topic string) bool {
	return strings.Contains(text, topicTerm(topic))
}

// topicTerm is a heading topic without the word that makes it a heading
// (桂枝汤方 → 桂枝汤, 辨脉法 → 辨脉, 阴阳论 → 阴阳), when a term of two
// characters or more is left; the topic itself otherwise.
func topicTerm(t string) string {
	for _, suf := range []string{"方", "法", "论"} {
		if u := strings.TrimSuffix(t, suf); u != t && runeLen(u) >= 2 {
			return u
		}
	}
	return t
}

// zhThinCond reports a condition that does not say what it is about: a
// bare relation (见官星, 逢丙午) or a bare term (女命), whose subject is in
// the text before the sentence.
func zhThinCond(cond string) bool {
	return hasPrefixAny(cond, []string{"遇", "见", "逢", "向", "不见"}) != "" ||
		hasPrefixAny(cond, []string{"得", "无", "有", "行", "运"}) != "" && runeLen(cond) <= 6
}

// formulaTopic and seasonTopic are the kinds of heading topic that a
// section's text moves on from to another of their kind: a formula
// (麻黄汤方, whose text goes on to 大青龙汤主之) and a stem in a season
// (三春甲木).
var (
	formulaTopic = regexp.MustCompile(`^\p{Han}+[汤散丸饮]$`)
	seasonTopic  = regexp.MustCompile(`^三[春夏秋冬][甲乙丙丁戊己庚辛壬癸][木火土金水]$`)
)

// topicName is a heading topic as the text names it: 麻黄汤方 → 麻黄汤.
func topicName(t string) string { return strings.TrimSuffix(t, "方") }

// topicKind is the kind of term a heading topic is ("formula", "season"),
// or "" for a topic of no such kind (正官, 阳刃), which keeps its section's
// topic whatever its text names.
func topicKind(t string) string {
	switch n := topicName(t); {
	case formulaTopic.MatchString(n):
		return "formula"
	case seasonTopic.MatchString(n):
		return "season"
	}
	return ""
}

// headingTopicKinds returns the topics of a kind (topicKind) that the
// chunks' headings name, by the name the text uses: 大青龙汤 → formula.
func headingTopicKinds(chunks []chunk.Chunk) map[string]string {
	out := map[string]string{}
	for i := range chunks {
		for _, h := range chunks[i].HeadingPath {
			t := zhHeadingTopic(h)
			if k := topicKind(t); k != "" {
				out[topicName(t)] = k
			}
		}
	}
	return out
}

// sentenceTopic is the topic a sentence's rule is about, given its
// section's topic and its paragraph up to the sentence's end: the section's
// topic, unless the paragraph names another topic of its kind (known) and
// not the section's own, as 太阳中风…大青龙汤主之。若脉微弱，汗出恶风者，不可服
// under 麻黄汤方; then the one it names last (大青龙汤).
func sentenceTopic(topic, para string, known map[string]string) string {
	kind := topicKind(topic)
	if kind == "" || strings.Contains(para, topicName(topic)) {
		return topic
	}
	best, end := "", -1
	for name, k := range known {
		if k != kind {
			continue
		}
		i := strings.LastIndex(para, name)
		if i < 0 {
			continue
		}
		// The mention that ends last; of two ending there, the longer
		// (小柴胡汤, not 柴胡汤).
		if e := i + len(name); e > end || e == end && len(name) > len(best) {
			best, end = name, e
		}
	}
	if best == "" {
		return topic
	}
	return best
}

// paragraphTo is the text of a sentence's paragraph up to the sentence's end.
func paragraphTo(s sentence) string {
	t := s.Chunk.Text
	end := min(max(s.Off, 0)+len(s.Text), len(t))
	start := min(max(s.Off, 0), end)
	return t[strings.LastIndex(t[:start], "\n")+1 : end]
}
