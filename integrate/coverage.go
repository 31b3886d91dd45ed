package integrate

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/vibelife/vibe/chunk"
	"github.com/vibelife/vibe/extract"
	"github.com/vibelife/vibe/knowledge"
)

// Coverage says how much of what the sources state as rules the skill's
// rules cite, and where the gaps are. Rule-like passages are found with the
// cues the offline extractor reads rules by (see ruleSentences); a passage
// is covered when a rule quotes it or says the same thing.
type Coverage struct {
	// Passages is the number of distinct rule-like passages in the sources;
	// Covered of them are cited by a rule.
	Passages int `json:"rule_like_passages"`
	Covered  int `json:"covered_passages"`
	// Sections is the number of sections (document and heading path) that
	// state rules; CoveredSections of them have a rule citing them.
	Sections        int `json:"rule_sections"`
	CoveredSections int `json:"covered_sections"`
	// Gaps are the sections with uncovered passages, the most uncovered
	// first.
	Gaps []SectionGap `json:"gaps"`
}

// SectionGap is one section of the sources with rule-like passages no rule
// cites.
type SectionGap struct {
	// Section is "document › heading › heading".
	Section string `json:"section"`
	File    string `json:"file"`
	Line    int    `json:"line"`
	// Uncovered and Passages count the section's uncovered and all rule-like
	// passages; Cited is how many rules cite the section.
	Uncovered int `json:"uncovered"`
	Passages  int `json:"passages"`
	Cited     int `json:"rules_citing"`
	// Examples are the first uncovered passages.
	Examples []string `json:"examples"`
	// Chunks are the chunks holding the uncovered passages, in order.
	Chunks []string `json:"chunks"`
}

// rulePassage is a rule-like sentence found in a chunk.
type rulePassage struct {
	text     string // normalised
	chunk    *chunk.Chunk
	off      int // byte offset in the chunk text
	section  string
	covered  bool
	fileLine pos
}

func (c *checker) checkCoverage(rules []knowledge.TieredRule, rl *loaded, rep *Report) {
	chunks := c.chunks
	byID := map[string]*chunk.Chunk{}
	for i := range chunks {
		byID[chunks[i].ID] = &chunks[i]
	}
	type quote struct {
		text  string
		grams map[string]int
	}
	var quotes []quote
	citedSections := map[string]int{}
	for _, r := range rules {
		seen := map[string]bool{}
		for _, e := range r.Evidence {
			if q := normalizeSpace(e.Quote); q != "" {
				quotes = append(quotes, quote{q, grams(q)})
			}
			if ch, ok := byID[e.Chunk]; ok && !seen[sectionOf(ch)] {
				seen[sectionOf(ch)] = true
				citedSections[sectionOf(ch)]++
			}
		}
		quotes = append(quotes, quote{ruleText(r.Rule), grams(ruleText(r.Rule))})
	}

	// A story's conditionals are narration and dialogue (如果林冲看时，则不是
	// 别人…): they are not counted as passages a rule should cite, and a
	// note says so (extract.NarrativeDocuments; docs/offline-rules.md).
	story := map[string]bool{}
	for _, n := range extract.NarrativeDocuments(chunks) {
		story[n.Doc] = true
		c.add(SevNote, "VIBE020", "coverage.narrative", "", n.Doc, pos{1, 1},
			"%s reads as a story (%d %s, %.2f per 1,000): its dialogue and narration are not counted as rule-like passages", n.Doc, n.Count, map[bool]string{true: "speakers of attributed speeches", false: "quotations attributed after the quote"}[n.Zh], n.PerK)
	}

	// Distinct passages: overlapping chunks repeat sentences.
	var passages []*rulePassage
	seen := map[string]bool{}
	for i := range chunks {
		ch := &chunks[i]
		if story[ch.Doc] {
			continue
		}
		for _, s := range ruleSentences(ch.Text) {
			key := ch.Doc + "\x00" + s.text
			if seen[key] {
				continue
			}
			seen[key] = true
			passages = append(passages, &rulePassage{text: s.text, chunk: ch, off: s.off, section: sectionOf(ch)})
		}
	}
	cov := &Coverage{Passages: len(passages)}
	sections := map[string]*SectionGap{}
	var order []string
	lines := newLineIndex(c.opt.RelTo)
	for _, p := range passages {
		pg := grams(p.text)
		for _, q := range quotes {
			// The quote holds the passage (or the reverse), or the rule says
			// nearly the same words: one stem apart ("凡甲日…" and "凡乙日…")
			// is a different rule.
			if strings.Contains(p.text, q.text) || strings.Contains(q.text, p.text) || containmentOf(pg, q.grams) >= 0.8 {
				p.covered = true
				break
			}
		}
		g, ok := sections[p.section]
		if !ok {
			g = &SectionGap{Section: p.section, Cited: citedSections[p.section]}
			sections[p.section] = g
			order = append(order, p.section)
		}
		g.Passages++
		if p.covered {
			cov.Covered++
			continue
		}
		file, at := lines.locate(p.chunk, p.off)
		if g.Uncovered == 0 {
			g.File, g.Line = file, at.Line
		}
		g.Uncovered++
		if len(g.Examples) < 3 {
			g.Examples = append(g.Examples, clip(p.text, 80))
		}
		if n := len(g.Chunks); n == 0 || g.Chunks[n-1] != p.chunk.ID {
			g.Chunks = append(g.Chunks, p.chunk.ID)
		}
		where, wpos := rl.path, pos{1, 1}
		if file != "" {
			where, wpos = filepath.Join(c.opt.RelTo, filepath.FromSlash(file)), at
		}
		c.add(SevNote, "VIBE020", "coverage.missing-rule", p.chunk.ID, where, wpos,
			"possible missing rule in %s: %q (chunk %s) reads as a rule and no rule cites it", p.section, short(p.text), p.chunk.ID)
	}
	cov.Sections = len(order)
	for _, s := range order {
		g := sections[s]
		if g.Cited > 0 {
			cov.CoveredSections++
		}
		if g.Uncovered > 0 {
			cov.Gaps = append(cov.Gaps, *g)
		}
	}
	// Rank the gaps: sections no rule cites first (a whole part of the
	// sources unrepresented), then by how many passages are uncovered.
	sort.SliceStable(cov.Gaps, func(i, j int) bool {
		a, b := cov.Gaps[i], cov.Gaps[j]
		if (a.Cited == 0) != (b.Cited == 0) {
			return a.Cited == 0
		}
		return a.Uncovered > b.Uncovered
	})
	rep.Coverage = cov
	rep.Summary.RuleLike = cov.Passages
	rep.Summary.Uncovered = cov.Passages - cov.Covered
	rep.Summary.Sections, rep.Summary.CoveredSections = cov.Sections, cov.CoveredSections
	rep.Summary.Coverage = percent(cov.Covered, cov.Passages)
	rep.Summary.SectionCoverage = percent(cov.CoveredSections, cov.Sections)
	if min := c.opt.Config.MinSectionCoverage; min > 0 && cov.Sections > 0 && rep.Summary.SectionCoverage < min {
		c.add(SevWarning, "VIBE021", "coverage.low", "", rl.path, pos{1, 1},
			"low coverage: rules cite %.1f%% of the %d sections stating rules (check.min_section_coverage %.0f%%) and %.1f%% of %d rule-like passages: whole parts of the sources have no rule; the sections with the most uncovered passages are listed below",
			rep.Summary.SectionCoverage, cov.Sections, min, rep.Summary.Coverage, cov.Passages)
	}
}

func percent(n, of int) float64 {
	if of == 0 {
		return 100
	}
	return float64(int(1000*float64(n)/float64(of))) / 10
}

// sectionOf names a chunk's section: its document and heading path.
func sectionOf(ch *chunk.Chunk) string {
	title := ch.Title
	if title == "" {
		title = strings.TrimSuffix(filepath.Base(ch.Doc), filepath.Ext(ch.Doc))
	}
	parts := []string{title}
	for _, h := range ch.HeadingPath {
		if normalizeSpace(h) != normalizeSpace(title) {
			parts = append(parts, normalizeSpace(h))
		}
	}
	return strings.Join(parts, " › ")
}

// lineIndex turns chunk offsets into lines of the converted files.
type lineIndex struct {
	root  string
	files map[string][]int // rune offset of each line start; nil when unreadable
}

func newLineIndex(root string) *lineIndex {
	return &lineIndex{root: root, files: map[string][]int{}}
}

// locate returns the converted file (relative to the workspace) and the line
// and column of byte offset off in ch's text; "" when the file cannot be
// read or no longer matches the chunk.
func (l *lineIndex) locate(ch *chunk.Chunk, off int) (string, pos) {
	if l.root == "" || ch.Doc == "" {
		return "", pos{}
	}
	starts, ok := l.files[ch.Doc]
	if !ok {
		data, err := os.ReadFile(filepath.Join(l.root, filepath.FromSlash(ch.Doc)))
		if err == nil {
			starts = []int{0}
			i := 0
			for _, r := range string(data) {
				i++
				if r == '\n' {
					starts = append(starts, i)
				}
			}
			starts = append(starts, i+1) // sentinel: one past the end
		}
		l.files[ch.Doc] = starts
	}
	if starts == nil || off > len(ch.Text) {
		return "", pos{}
	}
	at := ch.Start + utf8.RuneCountInString(ch.Text[:off])
	if at >= starts[len(starts)-1] {
		return "", pos{}
	}
	line := sort.Search(len(starts), func(i int) bool { return starts[i] > at }) // first start after at
	return ch.Doc, pos{line, at - starts[line-1] + 1}
}

// sentence is a rule-like sentence of a chunk.
type sentence struct {
	text string // white space normalised
	off  int    // byte offset in the chunk text
}

var (
	sentenceEnd = regexp.MustCompile(`[。！？；!?;]|\.(\s|$)|\n`)
	// The cue families the offline extractor reads rules by.
	zhLeadWords = []string{"是以", "所以", "是故", "大抵", "至于", "况且", "又", "故", "盖", "夫", "且", "而", "况"}
	// zhExceptions open an exception, which reads as a rule at any length.
	zhExceptions = []string{"然而", "但是", "惟有", "唯有", "除非", "然", "但", "惟", "唯"}
	zhOpeners    = []string{"倘若", "如若", "假如", "假若", "假令", "设若", "若是", "如果", "若使", "若为", "如为", "大凡", "凡是", "凡", "若", "如", "苟", "倘", "设", "或"}
	zhConseqs    = []string{"此为", "此乃", "此是", "此谓", "切不可", "切忌", "大忌", "切勿", "不可", "不宜", "不能", "不得", "务必", "必须",
		"必", "宜", "忌", "勿", "莫", "毋", "须", "当", "主", "乃", "便", "即", "方", "定", "决", "皆", "亦", "反", "却", "断", "为", "是", "可", "难", "终", "不"}
	zhNotThen   = regexp.MustCompile(`否则|法则|原则|规则|准则|细则|总则|通则|然则`)
	zhCondVerb  = "见逢遇有无多少旺衰弱强透藏克合冲刑破得失犯坐会化值行喜忌过"
	zhVerdict   = "吉凶贵贱富贫寿夭"
	enOpeners   = regexp.MustCompile(`(?i)^(if|when|whenever|unless|once)\s+\S+.*(,|\bthen\b)\s*\S+`)
	enImper     = regexp.MustCompile(`(?i)^(never|always|do not|don't|avoid)\s+\S+\s+\S+`)
	enModals    = regexp.MustCompile(`(?i)^([\w'’-]+(?:\s+[\w'’-]+){0,5})\s+(must not|mustn't|must|should not|shouldn't|should|never|needs? to|has to|have to)\s+\S+`)
	enMeaning   = regexp.MustCompile(`(?i)^[^,:;]{3,90}?\s+(means|indicates|signals|shows that|suggests|is a sign of|are a sign of)\s+\S+`)
	enTrailIf   = regexp.MustCompile(`^[A-Z][^,:;]{8,80}?\s+(if|unless)\s+[^,:;]{6,}$`)
	enLead      = regexp.MustCompile(`(?i)^(however|but|so|thus|therefore|and)\b,?\s*`)
	enNoSubject = regexp.MustCompile(`(?i)^(it|this|that|these|those|they|he|she|which|who|you)\b`)
)

// ruleSentences returns the sentences of text that read as rules, by the
// cue families the offline extractor uses: a Chinese conditional opening
// (凡/若/如/苟 ...) with a consequent at 则 or at a clause opening with a
// consequent word (必/宜/忌/不可/主 ...), or a "……者" situation followed by a
// consequent; an English if/when … then, an imperative (never/always/do
// not/avoid), a "X must/should …" obligation, or "X means/indicates Y".
// Headings, table rows and questions are skipped; definitions ("太乙者，数之
// 始也") are not rules.
func ruleSentences(text string) []sentence {
	var out []sentence
	start := 0
	emit := func(a, b int) {
		raw := text[a:b]
		trimmed := strings.TrimLeft(raw, " \t　>*-")
		s := normalizeSpace(trimmed)
		if s == "" || strings.HasPrefix(s, "#") || strings.HasPrefix(s, "|") {
			return
		}
		if isRuleSentence(s) {
			out = append(out, sentence{text: s, off: a + len(raw) - len(trimmed)})
		}
	}
	for _, m := range sentenceEnd.FindAllStringIndex(text, -1) {
		switch text[m[0]] {
		case '\n':
			emit(start, m[0])
			start = m[1]
		case '.':
			emit(start, m[0]+1)
			start = m[0] + 1
		default:
			emit(start, m[1])
			start = m[1]
		}
	}
	if start < len(text) {
		emit(start, len(text))
	}
	return out
}

func isRuleSentence(s string) bool {
	n := utf8.RuneCountInString(s)
	han := 0
	for _, r := range s {
		if unicode.Is(unicode.Han, r) {
			han++
		}
	}
	if han*2 >= n {
		return n >= 6 && n <= 120 && zhRuleLike(s)
	}
	return n >= 12 && n <= 200 && len(strings.Fields(s)) >= 4 && enRuleLike(s)
}

func zhRuleLike(s string) bool {
	body := strings.TrimRight(s, "。！；;!.　 ")
	if last, _ := utf8.DecodeLastRuneInString(body); strings.ContainsAny(body, "？?何岂") || strings.ContainsRune("乎哉耶欤", last) {
		return false
	}
	exception := false
	for changed := true; changed; {
		changed = false
		for _, w := range zhLeadWords {
			if strings.HasPrefix(body, w) && !strings.HasPrefix(body, "而后") {
				body, changed = strings.TrimLeft(body[len(w):], "，,、 "), true
				break
			}
		}
		for _, w := range zhExceptions {
			if !exception && strings.HasPrefix(body, w) && !strings.HasPrefix(body, "然后") && !strings.HasPrefix(body, "然则") {
				body, changed, exception = strings.TrimLeft(body[len(w):], "，,、 "), true, true
				break
			}
		}
	}
	clauses := strings.FieldsFunc(body, func(r rune) bool { return strings.ContainsRune("，,：:", r) })
	if len(clauses) == 0 {
		return false
	}
	then := strings.Contains(zhNotThen.ReplaceAllString(body, ""), "则")
	conseq := false
	for _, cl := range clauses[1:] {
		conseq = conseq || hasPrefixIn(cl, zhConseqs)
	}
	opened := false
	for i, cl := range clauses {
		opened = opened || hasPrefixIn(cl, zhOpeners) && (i == 0 || !strings.HasPrefix(cl, "如") && !strings.HasPrefix(cl, "或"))
	}
	zhe := len(clauses) >= 2 && strings.HasSuffix(clauses[0], "者") && strings.ContainsAny(clauses[0], zhCondVerb)
	switch {
	case opened && len(clauses) >= 2:
		return true // 若A，B: the second clause is the consequent
	case !then && !conseq && !zhe:
		return false
	case opened, exception, zhe:
		return true
	}
	// Without an opening word the extractor takes short sentences too
	// ("喜水则不吉"); as possible missing rules they are mostly noise
	// ("观其立数之因，亦皆出乎自然"), so only a 则 sentence counts.
	return then && utf8.RuneCountInString(body) <= 40
}

func enRuleLike(s string) bool {
	if strings.Contains(s, "?") {
		return false
	}
	body := enLead.ReplaceAllString(s, "")
	switch {
	case enOpeners.MatchString(body), enImper.MatchString(body):
		return true
	case enNoSubject.MatchString(body):
		return false
	case enModals.MatchString(body), enMeaning.MatchString(body), enTrailIf.MatchString(strings.TrimRight(body, ".!; ")):
		return true
	}
	return false
}

func hasPrefixIn(s string, list []string) bool {
	for _, p := range list {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}
