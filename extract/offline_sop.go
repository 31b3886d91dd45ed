package extract

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/vibelife/vibe/knowledge"
)

// The offline SOP follows the order in which the books proceed: the main
// line of a principal book's heading tree (子平真诠: 论十干十二支 → 论阴阳生克 →
// … → 论用神 → … → 论正官 …; a handbook's chapters), each phase citing the
// rules its sections state. An order a book gives in passing (小儿之命，先看关
// 煞，次看格局) is about one case and makes no phase.

const (
	// minMainLine is the fewest sections a main line needs to be an order.
	minMainLine = 3
	// maxHeadingPhases bounds the phases: more sections are grouped into
	// this many runs of consecutive sections, in the book's order.
	maxHeadingPhases = 7
	// maxPhaseSteps bounds the steps of one phase.
	maxPhaseSteps = 3
)

// faqHeading is a heading that asks a question: a page of FAQs is no order.
var faqHeading = regexp.MustCompile(`(?i)[?？]\s*$|^(?:how|what|why|when|can|do|does|is|are|should|where|which|who)\b|[吗么呢]$|如何|怎样|为什么|什么`)

// verseHeading titles a verse or a compilation piece (赋, 歌, 诀, 诗, 篇,
// 独步, 集说), not a discussion (论…).
var verseHeading = regexp.MustCompile(`[赋歌诀诗篇]|独步|集说|口诀`)

// bookSection is one node of a document's main line: its heading, the chunk
// holding the heading line, and its sentences (of its subsections too).
type bookSection struct {
	doc     int
	heading string // without numbering
	raw     string // as in the heading path
	topic   string // what it treats: 论正官取运 -> 正官; "" for a title
	hchunk  string // the chunk whose text holds the heading line
	hline   string // that line, verbatim without the #
	sents   []int  // indices into sents
	method  bool   // a method heading over an enumerated list
}

// stepScore scores a sentence as a phase step; ok is false when it states
// no rule (a heading, a cut sentence, a worked example).
type stepScore func(i int) (score float64, ok bool)

// mainLines returns each document's main line: its top-level sections, a
// single top node (the title) or fewer than minMainLine nodes being opened
// into their children until the line has minMainLine sections or more.
func mainLines(sents []sentence) map[int][]*bookSection {
	type node struct {
		sec      *bookSection
		children []*node
		path     string
	}
	out := map[int][]*bookSection{}
	roots := map[int][]*node{}
	byPath := map[string]*node{}
	var docs []int
	for i, s := range sents {
		hp := s.Chunk.HeadingPath
		if len(hp) == 0 {
			continue
		}
		if _, ok := roots[s.Doc]; !ok {
			docs = append(docs, s.Doc)
			roots[s.Doc] = nil
		}
		var parent *node
		for k := range hp {
			key := fmt.Sprint(s.Doc) + "\x00" + strings.Join(hp[:k+1], "\x00")
			n := byPath[key]
			if n == nil {
				h := cleanHeading(hp[k])
				n = &node{sec: &bookSection{doc: s.Doc, heading: h, raw: hp[k], method: methodH.MatchString(h)}, path: key}
				n.sec.topic = headingTopic(hp[k])
				byPath[key] = n
				if parent == nil {
					roots[s.Doc] = append(roots[s.Doc], n)
				} else {
					parent.children = append(parent.children, n)
				}
			}
			if n.sec.hchunk == "" {
				if line, ok := headingLine(s.Chunk.Text, hp[k]); ok {
					n.sec.hchunk, n.sec.hline = s.Chunk.ID, line
				}
			}
			n.sec.sents = append(n.sec.sents, i)
			parent = n
		}
	}
	for _, d := range docs {
		line := roots[d]
		for len(line) < minMainLine {
			var next []*node
			opened := false
			for _, n := range line {
				if len(n.children) > 0 {
					next = append(next, n.children...)
					opened = true
				} else {
					next = append(next, n)
				}
			}
			if !opened {
				break
			}
			line = next
		}
		for _, n := range line {
			out[d] = append(out[d], n.sec)
		}
	}
	return out
}

// headingLine finds the line of text that is heading h ("# 八、论用神").
func headingLine(text, h string) (string, bool) {
	h = strings.TrimSpace(h)
	for _, line := range strings.Split(text, "\n") {
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, "#") && strings.TrimSpace(strings.TrimLeft(t, "# ")) == h {
			return strings.TrimSpace(strings.TrimLeft(t, "# ")), true
		}
	}
	return "", false
}

// usable reports whether a main line is an order: minMainLine sections or
// more that state rules, most of them not questions (a page of FAQs) and
// not volume numbers (卷一, 卷二: a topic or an English heading names what
// a section treats).
func usable(line []*bookSection, ok func(i int) bool) (int, bool) {
	withRules, named, asks := 0, 0, 0
	for _, s := range line {
		if faqHeading.MatchString(s.heading) {
			asks++
		}
		if s.topic != "" {
			named++
		}
		for _, i := range s.sents {
			if ok(i) {
				withRules++
				break
			}
		}
	}
	return named, withRules >= minMainLine && named*2 > len(line) && asks*2 <= len(line)
}

// headingSOP builds the SOP from the main line of the principal book: the
// book whose sections' topics the other books treat most (the shared
// doctrine), and of those the one with most sections. It returns false when
// no book's main line is an order.
func headingSOP(theme string, zh bool, sents []sentence, score stepScore) (knowledge.SOP, bool) {
	lines := mainLines(sents)
	ok := func(i int) bool { _, ok := score(i); return ok }
	// The topics each book treats anywhere in its tree.
	treats := map[int]map[string]bool{}
	var docs []int
	for _, s := range sents {
		if treats[s.Doc] == nil {
			treats[s.Doc] = map[string]bool{}
			docs = append(docs, s.Doc)
		}
		for _, h := range s.Chunk.HeadingPath {
			if t := headingTopic(h); t != "" {
				treats[s.Doc][t] = true
			}
		}
	}
	best, bestShared, bestNamed := -1, -1, -1
	for _, d := range docs {
		line, has := lines[d]
		if !has {
			continue
		}
		named, good := usable(line, ok)
		if !good {
			continue
		}
		verse := 0
		for _, s := range line {
			if verseHeading.MatchString(s.heading) {
				verse++
			}
		}
		if verse*4 > len(line) {
			// 渊海子平's second half, 阴命赋 … 五言独步: a compilation of
			// verses and essays is no order to proceed by.
			continue
		}
		shared := 0
		for _, s := range line {
			if s.topic == "" {
				continue
			}
			for o, ts := range treats {
				if o != d && ts[s.topic] {
					shared++
					break
				}
			}
		}
		if len(lines) > 1 && (shared < minMainLine || shared*3 <= named || isHan(titleOf(sents[line[0].sents[0]])) != zh) {
			// Pages on different subjects (a green-tea handbook, an
			// oolong page, a 普洱 page in a mostly English corpus): no
			// book's order speaks for the others; a principal book
			// treats topics the others treat too.
			continue
		}
		// The book whose sections cover most of the doctrine the books
		// share; ties go to the book with more named sections.
		if best < 0 || shared > bestShared || shared == bestShared && named > bestNamed {
			best, bestShared, bestNamed = d, shared, named
		}
	}
	if best < 0 {
		return knowledge.SOP{}, false
	}
	line := lines[best]
	title := titleOf(sents[line[0].sents[0]])
	var heads strings.Builder
	for _, s := range line {
		heads.WriteString(s.heading)
	}
	zh = isHan(title + heads.String())

	// Consecutive sections on one subject are one phase (论用神, 论用神成败救应,
	// 论用神变化 …; 论正官, 论正官取运; 论时说拘泥格局, 论时说以讹传讹).
	var phases [][]*bookSection
	for _, s := range line {
		if n := len(phases); n > 0 && sameTopic(subjectOf(phases[n-1][0].heading), subjectOf(s.heading)) {
			phases[n-1] = append(phases[n-1], s)
			continue
		}
		phases = append(phases, []*bookSection{s})
	}
	// Over maxHeadingPhases, the two neighbouring phases whose headings
	// share most (论四吉神能破格, 论四凶神能成格: 神能) are merged, the smaller
	// pair first: runs of consecutive sections, in the book's order.
	for len(phases) > maxHeadingPhases {
		bi, bShare, bSize := 0, -1, 0
		for i := 0; i+1 < len(phases); i++ {
			share := sharedBigrams(phases[i], phases[i+1])
			size := len(phases[i]) + len(phases[i+1])
			if share > bShare || share == bShare && size < bSize {
				bi, bShare, bSize = i, share, size
			}
		}
		phases[bi] = append(phases[bi], phases[bi+1]...)
		phases = append(phases[:bi+1], phases[bi+2:]...)
	}
	// Sections of the other books on a phase's topic add their rules.
	others := map[string][]*bookSection{}
	for _, d := range docs {
		l := lines[d]
		if d == best {
			continue
		}
		for _, s := range l {
			if s.topic != "" {
				others[s.topic] = append(others[s.topic], s)
			}
		}
	}

	sop := knowledge.SOP{Name: theme}
	zhOthers, enOthers := "及其他各书同题章节", " (and the other books' sections on the same topic)"
	if len(lines) < 2 {
		zhOthers, enOthers = "", ""
	}
	if zh {
		sop.Description = fmt.Sprintf("按《%s》本身的章节次序（%d 章，依次归为 %d 个阶段）；各阶段的步骤是该章%s所述的规则，引原文。原典未成文给出一套问答流程：按问题选用阶段；如需归纳总流程，请用模型重建（设置 OPENAI_BASE_URL）（离线启发式）。", title, len(line), len(phases), zhOthers)
	} else {
		sop.Description = fmt.Sprintf("The order in which %s proceeds: its %d sections, in its order, as %d phases; each phase's steps are the rules that section%s states, quoted. The sources state no question-answering procedure of their own: use the phase the question concerns; an overall procedure needs a model (set OPENAI_BASE_URL and rebuild) (offline heuristic).", title, len(line), len(phases), enOthers)
	}
	var seen nearDups
	for pi, run := range phases {
		id := fmt.Sprintf("P%d", pi+1)
		var names []string
		for _, s := range run {
			names = append(names, s.heading)
		}
		ph := knowledge.Phase{ID: id, Name: phaseTitle(names, zh), Steps: []knowledge.Step{}}
		if pi+1 < len(phases) {
			ph.NextPhase = fmt.Sprintf("P%d", pi+2)
		}
		if zh {
			ph.Description = "《" + title + "》" + strings.Join(names, "、") + "：按原书次序，引各章所述规则。"
			ph.EntryCondition = "问题涉及" + strings.Join(names, "、")
			ph.ExitCondition = "已按本阶段各条规则判断"
			if pi > 0 {
				ph.EntryCondition += "，或前一阶段已完成"
			}
		} else {
			ph.Description = title + ": " + strings.Join(names, "; ") + ", in the book's order, with the rules they state."
			ph.EntryCondition = "the question concerns " + strings.Join(names, "; ")
			ph.ExitCondition = "the rules of this phase are applied"
			if pi > 0 {
				ph.EntryCondition += ", or the phase before is done"
			}
		}
		for _, s := range run {
			if s.hchunk != "" {
				ph.Evidence = append(ph.Evidence, knowledge.Evidence{Chunk: s.hchunk, Quote: s.hline})
			}
		}
		steps := phaseSteps(run, others, sents, score, &seen)
		for j, st := range steps {
			ph.Steps = append(ph.Steps, knowledge.Step{ID: fmt.Sprintf("%s.%d", id, j+1), Action: st.action, Evidence: []knowledge.Evidence{st.ev}})
		}
		sop.Phases = append(sop.Phases, ph)
	}
	return sop, true
}

// subjectOf is a heading without 论: 论用神变化 -> 用神变化, 正官论 -> 正官.
func subjectOf(h string) string {
	h = strings.TrimPrefix(strings.TrimPrefix(h, "附论"), "论")
	return strings.TrimSuffix(h, "论")
}

// sharedBigrams counts the pairs of adjacent characters (words, in
// English) the headings of two runs of sections share.
func sharedBigrams(a, b []*bookSection) int {
	grams := func(ss []*bookSection) map[string]bool {
		out := map[string]bool{}
		for _, s := range ss {
			h := subjectOf(s.heading)
			if !isHan(h) {
				for _, w := range strings.Fields(strings.ToLower(h)) {
					if len(w) > 3 {
						out[w] = true
					}
				}
				continue
			}
			rs := []rune(h)
			for i := 0; i+1 < len(rs); i++ {
				out[string(rs[i:i+2])] = true
			}
		}
		return out
	}
	ga, n := grams(a), 0
	for g := range grams(b) {
		if ga[g] {
			n++
		}
	}
	return n
}

// sameTopic reports two section topics that are one subject: one opens
// the other (用神, 用神变化; 正官, 正官取运 → 正官) or both open with the same
// two-character term (十干配合性情, 十干合而不合).
func sameTopic(a, b string) bool {
	if a == "" || b == "" {
		return false
	}
	if strings.HasPrefix(a, b) || strings.HasPrefix(b, a) {
		return true
	}
	ra, rb := []rune(a), []rune(b)
	return len(ra) >= 3 && len(rb) >= 3 && string(ra[:2]) == string(rb[:2]) && isHan(a)
}

// phaseTitle names a phase after its sections: one, or the first and the
// last of a run (论正官 … 论财取运).
func phaseTitle(names []string, zh bool) string {
	switch len(names) {
	case 1:
		return names[0]
	case 2:
		if zh {
			return names[0] + "、" + names[1]
		}
		return names[0] + "; " + names[1]
	}
	return names[0] + " … " + names[len(names)-1]
}

// phaseSteps picks a phase's steps: a method section's enumerated lines,
// else the best rules of each section (at least one each while there is
// room), then the rules of the other books' sections on the same topics;
// in the books' order, none repeating one kept before.
func phaseSteps(run []*bookSection, others map[string][]*bookSection, sents []sentence, score stepScore, seen *nearDups) []procStep {
	var out []procStep
	all := run
	add := func(i int, whole bool) bool {
		if len(out) >= maxPhaseSteps && !whole {
			return false
		}
		s := sents[i]
		quote := s.Text
		if whole {
			quote = lineFrom(s)
		}
		action := trimClause(strings.TrimRight(quote, "。.;；"))
		if runeLen(action) < 4 || seen.repeats(action) {
			return false
		}
		out = append(out, procStep{action: action, ev: knowledge.Evidence{Chunk: s.Chunk.ID, Quote: quote}})
		return true
	}
	per := max(1, maxPhaseSteps/len(run))
	if len(run) > maxPhaseSteps {
		// More chapters than steps (论正官 … 论建禄月劫取运): the best rule
		// of each, the best chapters' first, in the book's order.
		type c struct {
			i int
			v float64
		}
		var cs []c
		for _, sec := range run {
			for _, i := range bestOf(sec, sents, score, 1) {
				v, _ := score(i)
				if sec.topic != "" && strings.Contains(sents[i].Text, sec.topic) {
					v += fundamentalWeight
				}
				cs = append(cs, c{i, v})
			}
		}
		sort.SliceStable(cs, func(a, b int) bool { return cs[a].v > cs[b].v })
		cs = cs[:min(len(cs), maxPhaseSteps+2)]
		sort.SliceStable(cs, func(a, b int) bool { return cs[a].i < cs[b].i })
		for _, x := range cs {
			add(x.i, false)
		}
		run = nil
	}
	for _, sec := range run {
		if sec.method {
			n := 0
			for _, i := range sec.sents {
				// A list right under the method heading, not one in a
				// subsection of a chapter whose title says "procedures".
				hp := sents[i].Chunk.HeadingPath
				if sents[i].Enum && hp[len(hp)-1] == sec.raw && n < maxSteps && add(i, true) {
					n++
				}
			}
			if n > 0 {
				continue
			}
		}
		for _, i := range bestOf(sec, sents, score, per) {
			add(i, false)
		}
	}
	for _, sec := range all {
		if sec.topic == "" {
			continue
		}
		for _, o := range others[sec.topic] {
			for _, i := range bestOf(o, sents, score, 1) {
				add(i, false)
			}
		}
	}
	return out
}

// bestOf returns up to n of a section's rule sentences, the best scored
// (a rule on the section's topic first, never one case), in text order.
func bestOf(sec *bookSection, sents []sentence, score stepScore, n int) []int {
	type c struct {
		i int
		v float64
	}
	var cs []c
	for _, i := range sec.sents {
		v, ok := score(i)
		if !ok {
			continue
		}
		if sec.topic != "" && strings.Contains(sents[i].Text, sec.topic) {
			v += fundamentalWeight
		}
		cs = append(cs, c{i, v})
	}
	sort.SliceStable(cs, func(a, b int) bool { return cs[a].v > cs[b].v })
	if len(cs) > n {
		cs = cs[:n]
	}
	sort.SliceStable(cs, func(a, b int) bool { return cs[a].i < cs[b].i })
	out := make([]int, len(cs))
	for k, x := range cs {
		out[k] = x.i
	}
	return out
}

// headingTopic is what a heading's section treats: 论正官取运 -> 正官
// (zhHeadingTopic); an English heading without its numbering, lowercased.
func headingTopic(h string) string {
	if isHan(h) {
		return zhHeadingTopic(h)
	}
	return strings.ToLower(cleanHeading(h))
}

// cleanHeading is a heading without its numbering and the dash after it:
// "CHAPTER 1 – INTRODUCTION" -> "INTRODUCTION", "八、论用神" -> "论用神".
func cleanHeading(h string) string {
	h = strings.TrimSpace(headingNumber.ReplaceAllString(strings.TrimSpace(h), ""))
	h = strings.TrimSpace(headingNumeral.ReplaceAllString(h, ""))
	return strings.TrimSpace(strings.TrimLeft(h, "-–—:：.．、 "))
}
