package extract

import (
	"context"
	"path"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/vibelife/vibe/chunk"
	"github.com/vibelife/vibe/knowledge"
)

// Targets of the design (section 3.4): at most this many items per kind.
const (
	maxTier1    = 10
	maxTier2    = 50
	maxTier3    = 30
	maxPatterns = 20
	maxRedFlags = 10
	maxMethod   = 8
)

// sentence is one candidate span of a chunk: Text is a verbatim substring.
type sentence struct {
	Text  string
	Chunk *chunk.Chunk
	Doc   int // index of the document, for round-robin selection
	Seq   int // position in the corpus
}

var (
	// Chinese conditionals opening a clause, and the consequents after them.
	zhCond     = regexp.MustCompile(`^(?:[又故盖夫且而]?)(?:凡|若|如|苟|倘|倘若|如若|假如)`)
	zhConseq   = regexp.MustCompile(`切忌|大忌|切不可|则|必|宜|忌|不可`)
	zhExConseq = regexp.MustCompile(`切忌|大忌|则|必|宜|忌|不可|不|反|亦`)
	zhDefine   = regexp.MustCompile(`^(.{2,15}?)者[，,](.{2,80})也[。！]?$`)
	enCond     = regexp.MustCompile(`(?i)^(if|when|whenever|unless)\b(.{3,}?),\s*(?:then\s+)?(.{3,})$`)
	enModal    = regexp.MustCompile(`(?i)^(.{3,}?)\s+(must|should|never|must not|should not)\s+(.{3,})$`)
	strong     = regexp.MustCompile(`(?i)忌|不可|必|切勿|切不可|\bmust\b|\bnever\b|\bdo not\b`)
	except     = regexp.MustCompile(`(?i)^(?:然|但|惟|唯|独|unless\b|except\b|however\b|but\b)`)
	zhPat      = regexp.MustCompile(`^(?:[凡若如]?)(\p{Han}{1,6}[格局])(?:者|[，,：:])`)
	enPat      = regexp.MustCompile(`^(?:An?|The)\s+([A-Z][\w -]{2,40}?)\s+is\s+an?\s+(.{3,})$`)
	flagRe     = regexp.MustCompile(`(?i)大凶|凶|夭|必死|死无|灾|祸|危|残疾|danger|fatal|warning|beware|avoid`)
	critRe     = regexp.MustCompile(`(?i)大凶|夭|必死|死无|残疾|danger|fatal`)
	warnRe     = regexp.MustCompile(`(?i)凶|灾|祸|warning|beware`)
	methodH    = regexp.MustCompile(`(?i)法|步骤|method|procedure|steps`)
	enumLine   = regexp.MustCompile(`^\s*(?:\d+[.、)）]|[一二三四五六七八九十]+[、.]|[-*+]\s)\s*`)
	badPat     = "此其本是何入成破有无之为以于或合同又亦一二三四五六七八九十"
	badCond    = "此其是彼斯"
	// genericPairs are words naming good and bad fortune together (寿夭,
	// 吉凶): they are topics, not warnings.
	genericPairs = strings.NewReplacer("寿夭", "", "夭寿", "", "吉凶", "", "凶吉", "", "死生", "", "生死", "")
)

// splitSentences cuts a chunk's text into trimmed sentences that are
// verbatim substrings of it. Headings and blank lines are skipped.
func splitSentences(text string) []string {
	var out []string
	for _, line := range strings.Split(text, "\n") {
		t := strings.TrimSpace(line)
		if t == "" || strings.HasPrefix(t, "#") || strings.HasPrefix(t, "---") {
			continue
		}
		start := 0
		runes := t
		for i, r := range runes {
			end := -1
			switch r {
			case '。', '！', '？', '；', '!', '?', ';':
				end = i + utf8.RuneLen(r)
			case '.':
				if i+1 >= len(runes) || runes[i+1] == ' ' {
					end = i + 1
				}
			}
			if end > 0 {
				if s := cleanSentence(runes[start:end]); s != "" {
					out = append(out, s)
				}
				start = end
			}
		}
		if s := cleanSentence(runes[start:]); s != "" {
			out = append(out, s)
		}
	}
	return out
}

func cleanSentence(s string) string {
	s = strings.TrimSpace(s)
	s = strings.TrimLeft(s, "-*+>「『“\"' 　")
	s = strings.TrimSpace(s)
	return s
}

func runeLen(s string) int { return utf8.RuneCountInString(s) }

func trimPunct(s string) string {
	return strings.TrimFunc(s, func(r rune) bool { return unicode.IsPunct(r) || unicode.IsSpace(r) })
}

func isHan(s string) bool {
	han, all := 0, 0
	for _, r := range s {
		if unicode.IsLetter(r) {
			all++
			if unicode.Is(unicode.Han, r) {
				han++
			}
		}
	}
	return all > 0 && han*2 > all
}

// Offline runs the deterministic heuristic extractor. Ids are provisional;
// Run makes them stable with StableIDs.
func Offline(ctx context.Context, theme string, chunks []chunk.Chunk) (knowledge.Files, error) {
	docIdx := map[string]int{}
	var sents []sentence
	hanCount := 0
	for i := range chunks {
		if i%256 == 0 {
			if err := ctx.Err(); err != nil {
				return knowledge.Files{}, err
			}
		}
		c := &chunks[i]
		d, ok := docIdx[c.Doc]
		if !ok {
			d = len(docIdx)
			docIdx[c.Doc] = d
		}
		for _, s := range splitSentences(c.Text) {
			sents = append(sents, sentence{Text: s, Chunk: c, Doc: d, Seq: len(sents)})
			if len(sents) < 2000 && isHan(s) {
				hanCount++
			}
		}
	}
	zh := hanCount*2 > min(len(sents), 2000)
	meta := &knowledge.Meta{Theme: theme, Extractor: OfflineExtractor, Sources: sources(chunks)}

	var t1, t2, t3 []cand[knowledge.Rule]
	var pats []cand[knowledge.Pattern]
	var flags []cand[knowledge.RedFlag]
	patSeen := map[string]int{}
	seen := map[string]bool{}
	for _, s := range sents {
		n := runeLen(s.Text)
		key := normalise(s.Text)
		if seen[key] {
			continue
		}
		seen[key] = true
		ev := []knowledge.Evidence{{Chunk: s.Chunk.ID, Quote: s.Text}}
		if n >= 6 && n <= 120 {
			if cond, concl, ok := ruleParts(s.Text); ok {
				r := knowledge.Rule{Condition: cond, Source: sourceOf(s.Chunk), Evidence: ev}
				switch {
				case except.MatchString(s.Text):
					r.Conclusion, r.Confidence, r.Note = concl, "medium", noteFor(zh)
					t3 = append(t3, cand[knowledge.Rule]{s: s, v: r})
				case strong.MatchString(s.Text):
					r.Action, r.Priority = concl, "high"
					if strings.Contains(s.Text, "大忌") || strings.Contains(s.Text, "切") || strings.Contains(strings.ToLower(s.Text), "never") {
						r.Priority = "critical"
					}
					t1 = append(t1, cand[knowledge.Rule]{s: s, v: r})
				default:
					r.Conclusion, r.Confidence = concl, "medium"
					t2 = append(t2, cand[knowledge.Rule]{s: s, v: r})
				}
			}
		}
		if n >= 6 && n <= 150 {
			if name, ind, ok := patternParts(s.Text); ok {
				if i, dup := patSeen[name]; dup {
					pats[i].n++
				} else {
					patSeen[name] = len(pats)
					conf := "medium"
					pats = append(pats, cand[knowledge.Pattern]{s: s, v: knowledge.Pattern{Name: name, Signature: s.Text, Indication: ind, Confidence: conf, Evidence: ev}})
				}
			}
		}
		if n >= 6 && n <= 80 && flagRe.MatchString(genericPairs.Replace(s.Text)) && !strings.ContainsAny(s.Text, "\t0123456789") {
			sev := "notice"
			switch {
			case critRe.MatchString(s.Text):
				sev = "critical"
			case warnRe.MatchString(s.Text):
				sev = "warning"
			}
			act := "Check this first and warn the user before any further reading."
			if zh {
				act = "先行核查此信号，并在解读前明确提示风险。"
			}
			flags = append(flags, cand[knowledge.RedFlag]{s: s, v: knowledge.RedFlag{Signal: s.Text, Severity: sev, Action: act, Evidence: ev}})
		}
	}
	// Patterns named most often first, ties by first appearance.
	sortStable(pats, func(a, b cand[knowledge.Pattern]) bool { return a.n > b.n })
	for i := range pats {
		switch {
		case pats[i].n >= 3:
			pats[i].v.Confidence = "high"
		case pats[i].n == 0:
			pats[i].v.Confidence = "low"
		}
	}
	// Critical red flags first.
	sortStable(flags, func(a, b cand[knowledge.RedFlag]) bool { return sevRank(a.v.Severity) < sevRank(b.v.Severity) })
	sortStable(t1, func(a, b cand[knowledge.Rule]) bool { return a.v.Priority == "critical" && b.v.Priority != "critical" })

	files := knowledge.Files{
		SOP: knowledge.SOPFile{SOP: buildSOP(theme, zh, sents), Meta: meta},
		Patterns: knowledge.PatternsFile{Patterns: knowledge.Patterns{
			QuickPatterns: values(pick(pats, maxPatterns, false)),
			RedFlags:      values(pick(flags, maxRedFlags, true)),
		}, Meta: meta},
		Rules: knowledge.RulesFile{Rules: knowledge.Rules{
			Tier1: values(pick(t1, maxTier1, true)),
			Tier2: values(pick(t2, maxTier2, true)),
			Tier3: values(pick(t3, maxTier3, true)),
		}, Meta: meta},
	}
	if files.Patterns.Patterns.QuickPatterns == nil {
		files.Patterns.Patterns.QuickPatterns = []knowledge.Pattern{}
	}
	if files.Patterns.Patterns.RedFlags == nil {
		files.Patterns.Patterns.RedFlags = []knowledge.RedFlag{}
	}
	r := &files.Rules.Rules
	if r.Tier1 == nil {
		r.Tier1 = []knowledge.Rule{}
	}
	if r.Tier2 == nil {
		r.Tier2 = []knowledge.Rule{}
	}
	if r.Tier3 == nil {
		r.Tier3 = []knowledge.Rule{}
	}
	return files, nil
}

func noteFor(zh bool) string {
	if zh {
		return "例外情形（启发式抽取，请复核）"
	}
	return "exception (heuristic extraction; review)"
}

func sevRank(s string) int {
	switch s {
	case "critical":
		return 0
	case "warning":
		return 1
	}
	return 2
}

type cand[T any] struct {
	s sentence
	v T
	n int // extra occurrences, for patterns
}

func sortStable[T any](xs []cand[T], less func(a, b cand[T]) bool) {
	// insertion-free stable sort via sort.SliceStable semantics
	stableSort(len(xs), func(i, j int) bool { return less(xs[i], xs[j]) }, func(i, j int) { xs[i], xs[j] = xs[j], xs[i] })
}

// pick chooses up to max candidates. With roundRobin it takes them in turn
// from each document (in document order), so one long book does not crowd
// out the others; the result is in corpus order.
func pick[T any](xs []cand[T], max int, roundRobin bool) []cand[T] {
	if len(xs) <= max {
		return xs
	}
	if !roundRobin {
		return xs[:max]
	}
	byDoc := map[int][]cand[T]{}
	docs := []int{}
	for _, x := range xs {
		if _, ok := byDoc[x.s.Doc]; !ok {
			docs = append(docs, x.s.Doc)
		}
		byDoc[x.s.Doc] = append(byDoc[x.s.Doc], x)
	}
	var out []cand[T]
	for i := 0; len(out) < max; i++ {
		took := false
		for _, d := range docs {
			if i < len(byDoc[d]) && len(out) < max {
				out = append(out, byDoc[d][i])
				took = true
			}
		}
		if !took {
			break
		}
	}
	return out
}

func values[T any](xs []cand[T]) []T {
	if len(xs) == 0 {
		return nil
	}
	out := make([]T, len(xs))
	for i, x := range xs {
		out[i] = x.v
	}
	return out
}

// ruleParts splits a rule-like sentence into condition and conclusion.
func ruleParts(s string) (cond, concl string, ok bool) {
	if m := except.FindStringIndex(s); m != nil {
		// An exception: "然……则……", "惟……不……", "unless ..., ...".
		rest := s[m[1]:]
		if c, k, ok := ruleParts(strings.TrimLeft(rest, "，, ")); ok {
			return c, k, true
		}
		if idx := zhExConseq.FindStringIndex(rest); idx != nil && runeLen(rest[:idx[0]]) >= 2 {
			return trimPunct(s[:m[1]+idx[0]]), trimPunct(rest[idx[0]:]), true
		}
	}
	if m := zhCond.FindStringIndex(s); m != nil {
		rest := s[m[1]:]
		if idx := zhConseq.FindStringIndex(rest); idx != nil && idx[0] > 0 {
			cond = trimPunct(s[:m[1]+idx[0]])
			concl = trimPunct(rest[idx[0]:])
			if runeLen(cond) >= 2 && runeLen(concl) >= 1 {
				return cond, concl, true
			}
		}
	}
	if m := zhDefine.FindStringSubmatch(s); m != nil && !strings.ContainsRune(badCond, []rune(m[1])[0]) {
		return trimPunct(m[1]), trimPunct(m[2]), true
	}
	if m := enCond.FindStringSubmatch(s); m != nil {
		return trimPunct(m[1] + m[2]), trimPunct(m[3]), true
	}
	if m := enModal.FindStringSubmatch(s); m != nil && !strings.Contains(m[1], ",") {
		return trimPunct(m[1]), trimPunct(m[2] + " " + m[3]), true
	}
	return "", "", false
}

// patternParts recognises a named configuration ("...格者", "X is a ...").
func patternParts(s string) (name, indication string, ok bool) {
	if m := zhPat.FindStringSubmatchIndex(s); m != nil {
		name = s[m[2]:m[3]]
		first, _ := utf8.DecodeRuneInString(name)
		if runeLen(name) < 2 || strings.ContainsRune(badPat, first) {
			return "", "", false
		}
		ind := trimPunct(s[m[1]:])
		if ind == "" {
			return "", "", false
		}
		return name, ind, true
	}
	if m := enPat.FindStringSubmatch(s); m != nil {
		return strings.TrimSpace(m[1]), trimPunct(m[2]), true
	}
	return "", "", false
}

func sourceOf(c *chunk.Chunk) string {
	title := c.Title
	if title == "" {
		title = strings.TrimSuffix(path.Base(c.Doc), path.Ext(c.Doc))
	}
	if len(c.HeadingPath) > 0 {
		return title + " > " + strings.Join(c.HeadingPath, " > ")
	}
	return title
}
