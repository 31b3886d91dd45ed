package extract

import (
	"context"
	"path"
	"regexp"
	"sort"
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

// dottedSectionOpen opens a Chinese sentence with a dotted section number
// ("2.6 己土…").
var dottedSectionOpen = regexp.MustCompile(`^\d+(?:\.\d+)+\s*\p{Han}`)

// offlineTier2Cap is how many tier-2 rules the heuristic extractor keeps
// from sources of n chunks: two a chunk, at least the design's maxTier2
// and at most knowledge.MaxOfflineTier2. The design's 30-50 is the size of
// a rule file a model curates, which can afford to merge; offline rules
// are quoted sentences, one fact each, and get_rules retrieves them by
// relevance (the prompt lists tier 1 only), so 50 of a new theme's few
// hundred rule-like sentences missed most of its questions (docs/blind.md:
// the answering rule was not in the file for 9 of travel-leave's 14 dev
// rule questions). One a chunk still left out the answer to 5 of its dev
// rule questions once its reader-addressed sentences were read
// (enSectionRule): a handbook states about two rules a chunk (travel-leave
// 197 candidates from 109 chunks; the shanghan books 2.4 a chunk, the
// chess books 0.5).
func offlineTier2Cap(n int) int {
	return min(max(maxTier2, 2*n), knowledge.MaxOfflineTier2)
}

// sentence is one candidate span of a chunk: Text is a verbatim substring of
// Chunk.Text starting at byte Off.
type sentence struct {
	Text  string
	Chunk *chunk.Chunk
	Doc   int // index of the document, for round-robin selection
	Seq   int // position in the corpus
	Off   int // byte offset of Text in Chunk.Text
	// Enum is set when the sentence opens an enumerated line ("1. ", "一、").
	Enum bool
	// Zh is set when most of its letters are Han characters.
	Zh bool
	// Cut is set when the sentence is broken off at a paragraph or chunk
	// break that the text goes on after (span.Cut): it makes no rule.
	Cut bool
}

// span is a piece of a chunk's text at byte offset Off.
type span struct {
	Text string
	Off  int
	Enum bool
	// Cut is set on the last sentence of a paragraph that the next
	// paragraph continues: it is not whole, and makes no rule.
	Cut bool
}

const (
	openers = "（([［【「『“《〈"
	closers = "）)]］】」』”》〉"
)

func isOpener(r rune) bool {
	switch r {
	case '（', '(', '[', '［', '【', '「', '『', '“', '《', '〈':
		return true
	}
	return false
}

func isCloser(r rune) bool {
	switch r {
	case '）', ')', ']', '］', '】', '」', '』', '”', '》', '〉':
		return true
	}
	return false
}

var (
	// enumPrefix is what may be an enumerator opening a line: "1. ", "2）",
	// "10．" (a fullwidth full stop), "１０．" (fullwidth digits), "一、",
	// "（三）", "- ". listNumber tells it from the sentence's own content.
	enumPrefix = regexp.MustCompile(`^(?:[\d０-９]{1,3}[.、)）．]\s*|[一二三四五六七八九十]{1,3}[、.．]\s*|[（(][一二三四五六七八九十\d０-９]{1,3}[）)]\s*|[①-⑳]\s*|[-*+•]\s+)`)
	// abbrevs end in a full stop that does not end the sentence.
	abbrevs = map[string]bool{"e.g": true, "i.e": true, "etc": true, "vs": true, "mr": true, "mrs": true, "dr": true, "st": true, "no": true, "cf": true, "approx": true, "fig": true}
)

// listNumber returns the list numbering that opens t ("1. ", "10．",
// "１０．", "一、", "四四、" (44, as 温病条辨 numbers its clauses), "（三）",
// "①", "- "), or "" when t opens with none or with a number that is part
// of what it says: a decimal or a time ("3.5 hours", "9.30"), a count of
// two numerals (二、三日病犹在肺: "on the second or third day", 七、八日;
// 一、二月), or, in a text naming a hexagram's lines (hexagram:
// namesHexagram), a line of the hexagram (九二、见龙在田).
func listNumber(t string, hexagram bool) string {
	m := enumPrefix.FindString(t)
	if m == "" {
		return ""
	}
	next, _ := utf8.DecodeRuneInString(t[len(m):])
	last, _ := utf8.DecodeLastRuneInString(m)
	first, _ := utf8.DecodeRuneInString(m)
	switch {
	case !strings.ContainsRune(".．、", last):
	case unicode.IsDigit(first) && unicode.IsDigit(next):
		return "" // 3.5 hours, 2.1.3
	case !unicode.IsDigit(first) && strings.ContainsRune(zhNumerals, next):
		return "" // 二、三日: a count (11．六畜肉 is an item)
	case hexagram && hexagramLine.MatchString(m):
		return "" // 九二、见龙在田: a line of a hexagram, not item 92
	}
	return m
}

// hexagramLine is the name of a line of a hexagram (九二 … 九五, 六二 …
// 六五), which a list numbered digit by digit also writes.
var hexagramLine = regexp.MustCompile(`^[六九][二三四五][、.．]`)

// namesHexagram reports whether text names the first line of a hexagram
// (初九, 初六): its 九二、 and 六五、 are the hexagram's lines.
func namesHexagram(text string) bool {
	return strings.Contains(text, "初九") || strings.Contains(text, "初六")
}

// zhAfter reports that s opens, after white space, with a Han character.
func zhAfter(s string) bool {
	r, _ := utf8.DecodeRuneInString(strings.TrimLeft(s, " \t　"))
	return unicode.Is(unicode.Han, r)
}

// zhNumerals are the Chinese numerals a count is written with.
const zhNumerals = "一二三四五六七八九十百千两〇零"

// splitSentences cuts a chunk's text into trimmed sentences that are
// verbatim substrings of it, with their byte offsets. Headings, table rows
// and rules are skipped; a sentence never ends inside brackets or quotes, and
// a line's enumerator ("1. ") is not part of its first sentence. The lines
// of a paragraph are read as one text (a hard-wrapped English paragraph is
// not cut at each line end), so a sentence may hold a line break; a list
// item or a heading starts a new paragraph. The last sentence of a paragraph
// that has no closing punctuation and is continued by the next paragraph
// (which opens in lower case, or after a comma) is marked Cut: a sentence
// broken at a paragraph break, such as a DOCX paragraph split mid-sentence.
func splitSentences(text string) []span {
	hex := namesHexagram(text)
	var out []span
	blockFrom, blockTo := -1, -1
	flush := func(next string) {
		if blockFrom < 0 {
			return
		}
		before := len(out)
		out = appendBlock(out, text, blockFrom, blockTo, hex)
		if len(out) > before && continuesAfter(out[len(out)-1].Text, next) {
			out[len(out)-1].Cut = true
		}
		blockFrom, blockTo = -1, -1
	}
	lineStart := 0
	for lineStart <= len(text) {
		end := strings.IndexByte(text[lineStart:], '\n')
		if end < 0 {
			end = len(text)
		} else {
			end += lineStart
		}
		line := text[lineStart:end]
		t := strings.TrimLeft(line, " \t　")
		switch {
		case strings.TrimSpace(t) == "":
			// A blank line ends the paragraph; whether the next one goes on
			// with it is read from the next text line.
			if blockFrom >= 0 {
				next := nextTextLine(text, end+1)
				flush(next)
			}
		case strings.HasPrefix(t, "#") || strings.HasPrefix(t, "|") || strings.HasPrefix(t, "---") || strings.HasPrefix(t, "```"):
			flush("")
		case listNumber(t, hex) != "" || blockFrom < 0:
			flush("")
			blockFrom, blockTo = lineStart, end
		default:
			blockTo = end
		}
		lineStart = end + 1
	}
	flush("")
	return out
}

// nextTextLine returns the first non-blank line of text from byte i,
// trimmed, or "" when a heading, table or rule comes first.
func nextTextLine(text string, i int) string {
	for i < len(text) {
		end := strings.IndexByte(text[i:], '\n')
		if end < 0 {
			end = len(text)
		} else {
			end += i
		}
		t := strings.TrimSpace(text[i:end])
		if t != "" {
			if strings.HasPrefix(t, "#") || strings.HasPrefix(t, "|") || strings.HasPrefix(t, "---") || strings.HasPrefix(t, "```") {
				return ""
			}
			return t
		}
		i = end + 1
	}
	return ""
}

// closingMarks are the marks a finished sentence (or a list item, a label)
// may end with.
const closingMarks = "。！？；.!?;:：…”’\"'）)」』】]"

// continuesAfter reports that a paragraph whose last sentence is last is
// continued by the paragraph opening with next: last has no closing
// punctuation and next opens in lower case, or last ends with a comma.
func continuesAfter(last, next string) bool {
	if last == "" {
		return false
	}
	r, _ := utf8.DecodeLastRuneInString(last)
	if strings.ContainsRune("，,、", r) {
		return true
	}
	if strings.ContainsRune(closingMarks, r) || next == "" {
		return false
	}
	n, _ := utf8.DecodeRuneInString(next)
	return unicode.IsLower(n) || zhRunsOn(last, next)
}

// zhRunsOn reports that a Chinese paragraph whose last sentence is last may
// go on in the paragraph opening with next: Chinese has no case, so a
// sentence of clauses (it holds a comma) that ends on a character with no
// closing mark, before a paragraph opening with a character that is not an
// item's number, is read as broken off: 金匮要略's hard-wrapped "…熏其面，
// 加大" ⏎ "黄以利之。", which the converter keeps as two paragraphs. Where a
// book leaves the mark off at a sentence's end (紫微斗数全书's "…主人极聪明" ⏎
// "威勇论。"), the sentence is dropped too: a whole rule lost, no cut one kept.
func zhRunsOn(last, next string) bool {
	r, _ := utf8.DecodeLastRuneInString(last)
	n, _ := utf8.DecodeRuneInString(next)
	return unicode.Is(unicode.Han, r) && unicode.Is(unicode.Han, n) && strings.ContainsAny(last, "，,") && listNumber(next, true) == ""
}

// zhOpenEnd are characters that cannot end a Chinese clause: they join it
// to what follows (而, 于, 乃, 所 ...).
const zhOpenEnd = "而于且若被把将乃即所其自"

// enClauseOpen are English words that cannot end a clause.
var enClauseOpen = map[string]bool{"the": true, "a": true, "an": true, "and": true, "or": true, "by": true, "must": true, "shall": true, "whose": true}

// openEnded reports that a rule's part s ends on a word that cannot end a
// clause (必为神所, "whether recent or", "maintained by"): it is cut.
func openEnded(s string) bool {
	s = strings.TrimSpace(s)
	if s == "" {
		return false
	}
	if r, _ := utf8.DecodeLastRuneInString(s); unicode.Is(unicode.Han, r) {
		return strings.ContainsRune(zhOpenEnd, r)
	}
	f := strings.Fields(s)
	return len(f) > 1 && enClauseOpen[strings.ToLower(strings.Trim(f[len(f)-1], ",;:"))]
}

// appendBlock splits the paragraph text[from:to] (one or more lines) into
// sentences; a line break inside it is white space.
func appendBlock(out []span, text string, from, to int, hex bool) []span {
	line := text[from:to]
	t := strings.TrimLeft(line, " \t　")
	start := from + len(line) - len(t)
	enum := false
	if m := listNumber(t, hex); m != "" {
		start += len(m)
		enum = true
	}
	return appendSentences(out, text, start, to, enum, hex)
}

// appendSentences splits text[start:to] into sentences, the first marked
// enum. An English sentence may end inside its closing quote or bracket
// (“Use or Lose.” Comp time expires…); an English aside in brackets that
// holds sentences of its own ("(The rule is that … fifty moves. However,
// … afresh.)") is read as those sentences.
func appendSentences(out []span, text string, start, to int, enum, hex bool) []span {
	add := func(a, b int) {
		s, off := cleanSpan(text, a, b)
		if m := listNumber(s, hex); m != "" && runeLen(s) > runeLen(m) && zhAfter(s[len(m):]) {
			// "…主之。11．下利…" on one line: the numbering opens the next
			// item; it is not part of its sentence. (Not in English: "1.
			// P-K4 P-K4 2. PxP" numbers a game's moves.)
			rest := s[len(m):]
			t := strings.TrimLeft(rest, " \t　")
			s, off, enum = t, off+len(m)+len(rest)-len(t), true
		}
		if s == "" {
			return
		}
		if inner, ok := bracketedSentences(s); ok {
			out = appendSentences(out, text, off+1, off+1+len(inner), enum, hex)
			enum = false
			return
		}
		out = append(out, span{Text: s, Off: off, Enum: enum})
		enum = false
	}
	seg := start
	depth := 0
	for i, r := range text[start:to] {
		i += start
		n := utf8.RuneLen(r)
		switch {
		case isOpener(r):
			depth++
		case isCloser(r):
			if depth == 0 {
				break
			}
			depth--
			if depth == 0 && (r == '”' || r == '’' || r == ')') && enSentenceEnd(text[seg:i]) && upperAfter(text[i+n:to]) {
				add(seg, i+n)
				seg = i + n
			}
		case depth > 0:
		case strings.ContainsRune("。！？；!?;", r):
			add(seg, i+n)
			seg = i + n
		case r == '.' && (i+1 >= to || text[i+1] == ' ' || text[i+1] == '\n' || text[i+1] == '\r') && !abbrevBefore(text[seg:i]):
			add(seg, i+1)
			seg = i + 1
		}
	}
	add(seg, to)
	return out
}

// enSentenceEnd reports that s, the text before a closing quote or
// bracket, ends an English sentence: a full stop (not an abbreviation's),
// a question or an exclamation mark.
func enSentenceEnd(s string) bool {
	r, _ := utf8.DecodeLastRuneInString(s)
	switch r {
	case '!', '?':
		return true
	case '.':
		return !abbrevBefore(s[:len(s)-1])
	}
	return false
}

// upperAfter reports that s opens with white space and then a capital
// Latin letter: the next English sentence.
func upperAfter(s string) bool {
	t := strings.TrimLeft(s, " \t\r\n")
	if len(t) == len(s) || t == "" {
		return false
	}
	return t[0] >= 'A' && t[0] <= 'Z'
}

// bracketedSentences returns the inside of s when s is one English aside
// in round brackets, "(…)" or "(…).", that holds more than one sentence.
func bracketedSentences(s string) (string, bool) {
	if !strings.HasPrefix(s, "(") {
		return "", false
	}
	body := strings.TrimSuffix(s, ".")
	if !strings.HasSuffix(body, ")") || isHan(body) {
		return "", false
	}
	inner := body[1 : len(body)-1]
	if unclosed(inner) >= 0 || !balanced(inner) {
		return "", false
	}
	for i := strings.Index(inner, ". "); i >= 0; {
		if upperAfter(inner[i+1:]) && !abbrevBefore(inner[:i]) {
			return inner, true
		}
		j := strings.Index(inner[i+2:], ". ")
		if j < 0 {
			break
		}
		i += 2 + j
	}
	return "", false
}

// outsideBrackets calls f with the byte index of each rune of s that is not
// inside brackets or quotation marks, until f returns false.
func outsideBrackets(s string, f func(i int, r rune) bool) {
	depth := 0
	for i, r := range s {
		switch {
		case isOpener(r):
			depth++
		case isCloser(r):
			if depth > 0 {
				depth--
			}
		case depth == 0:
			if !f(i, r) {
				return
			}
		}
	}
}

// abbrevBefore reports whether s ends in an abbreviation or a lone number
// ("e.g", "No", "2"), whose full stop does not end a sentence.
func abbrevBefore(s string) bool {
	i := strings.LastIndexAny(s, " (\n")
	w := strings.ToLower(s[i+1:])
	if w == "" {
		return true
	}
	if abbrevs[w] || len(w) == 1 || dottedInitials.MatchString(w) {
		return true
	}
	return false
}

// dottedInitials is an abbreviation of single letters with full stops
// ("U.S.", "a.m."): "locations outside the U.S. while on personal travel"
// is one sentence.
var dottedInitials = regexp.MustCompile(`^(?:\pL\.)+\pL$`)

// cleanSpan trims text[a:b] of white space and leading bullets, returning
// the trimmed text and its offset.
func cleanSpan(text string, a, b int) (string, int) {
	s := text[a:b]
	t := strings.TrimLeft(s, " \t\r\n　-*+>•")
	a += len(s) - len(t)
	t = strings.TrimRight(t, " \t\r\n　")
	return t, a
}

func runeLen(s string) int { return utf8.RuneCountInString(s) }

func trimPunct(s string) string {
	return strings.TrimFunc(s, func(r rune) bool { return unicode.IsPunct(r) || unicode.IsSpace(r) })
}

// trimClause trims white space and punctuation from both ends of s, keeping
// a closing bracket whose opening bracket is inside s, and drops a trailing
// bracketed aside or an unclosed bracket with what follows it.
func trimClause(s string) string {
	for {
		s = strings.TrimFunc(s, func(r rune) bool {
			return (unicode.IsPunct(r) || unicode.IsSpace(r) || r == '　') && !isOpener(r) && !isCloser(r)
		})
		// Leading closers and trailing openers never belong to a clause.
		s = strings.TrimLeft(s, closers)
		s = strings.TrimRight(s, openers)
		if cut := unclosed(s); cut >= 0 {
			s = s[:cut]
			continue
		}
		if last, _ := utf8.DecodeLastRuneInString(s); isCloser(last) {
			if i := asideStart(s); i > 0 {
				s = s[:i]
				continue
			}
		}
		// An unopened closer at the start or a stray closer at the end.
		if r, n := utf8.DecodeLastRuneInString(s); n > 0 && isCloser(r) && !balanced(s) {
			s = s[:len(s)-n]
			continue
		}
		return s
	}
}

// unclosed returns the byte index of the first bracket in s that is never
// closed, or -1.
func unclosed(s string) int {
	var stack []int
	for i, r := range s {
		switch {
		case isOpener(r):
			stack = append(stack, i)
		case isCloser(r):
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
		}
	}
	if len(stack) > 0 {
		return stack[0]
	}
	return -1
}

func balanced(s string) bool {
	d := 0
	for _, r := range s {
		switch {
		case isOpener(r):
			d++
		case isCloser(r):
			d--
			if d < 0 {
				return false
			}
		}
	}
	return d == 0
}

// asideStart returns where a trailing parenthetical aside of s starts (the
// opening bracket of the group that closes at the end of s), or -1 when s
// does not end in one or the aside is all of s. Brackets that are part of a
// name, such as “cream-down” or 《书名》, are not asides.
func asideStart(s string) int {
	r, _ := utf8.DecodeLastRuneInString(s)
	if r != '）' && r != ')' {
		return -1
	}
	d := 0
	for i := len(s); i > 0; {
		r, n := utf8.DecodeLastRuneInString(s[:i])
		i -= n
		switch {
		case isCloser(r):
			d++
		case isOpener(r):
			d--
			if d == 0 {
				// Keep a short English parenthesis inside a clause
				// ("(spring buds)"); drop commentary.
				if isHan(s[i:]) || runeLen(s[i:]) > 40 {
					return i
				}
				return -1
			}
		}
	}
	return -1
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

// hasCorruption reports text the converter could not decode.
func hasCorruption(s string) bool {
	return strings.ContainsAny(s, "□■\uFFFD�")
}

// Offline runs the deterministic heuristic extractor. Ids are provisional;
// Run makes them stable with StableIDs.
func Offline(ctx context.Context, theme string, chunks []chunk.Chunk, glossary []string) (knowledge.Files, error) {
	docIdx := map[string]int{}
	var sents []sentence
	hanCount, counted := 0, 0
	for i := range chunks {
		if i%256 == 0 {
			if err := ctx.Err(); err != nil {
				return knowledge.Files{}, err
			}
		}
		c := &chunks[i]
		if frontMatterChunk(c) {
			continue
		}
		d, ok := docIdx[c.Doc]
		if !ok {
			d = len(docIdx)
			docIdx[c.Doc] = d
		}
		spans := splitSentences(c.Text)
		if n := len(spans); n > 0 && i+1 < len(chunks) && chunks[i+1].Doc == c.Doc && strings.TrimSpace(c.Text[spans[n-1].Off+len(spans[n-1].Text):]) == "" {
			// The chunk ends in the middle of a paragraph the next chunk
			// goes on with.
			if continuesAfter(spans[n-1].Text, nextTextLine(chunks[i+1].Text, 0)) {
				spans[n-1].Cut = true
			}
		}
		for _, sp := range spans {
			han := isHan(sp.Text)
			sents = append(sents, sentence{Text: sp.Text, Chunk: c, Doc: d, Seq: len(sents), Off: sp.Off, Enum: sp.Enum, Zh: han, Cut: sp.Cut})
			if counted < 4000 {
				counted++
				if han {
					hanCount++
				}
			}
		}
	}
	zh := hanCount*2 > counted
	meta := &knowledge.Meta{Theme: theme, Extractor: OfflineExtractor, Sources: sources(chunks)}
	sal := newSalience(sents, len(docIdx))
	rank := newRuleRanker(sents, len(docIdx), glossary)
	narr := narrativeDocs(chunks, docIdx)

	var t1, t2, t3, bySection []cand[knowledge.Rule]
	topics := map[*chunk.Chunk]string{}
	topicKinds := headingTopicKinds(chunks)
	recurring := hanBigramSentences(sents)
	var flags []cand[knowledge.RedFlag]
	seen := map[string]bool{}
	for i, s := range sents {
		if i%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return knowledge.Files{}, err
			}
		}
		key := normalise(s.Text)
		if seen[key] {
			continue
		}
		seen[key] = true
		if s.Cut {
			// "The standing trustee must not deposit" + a paragraph break +
			// "any funds received into …": half a sentence is no rule.
			continue
		}
		if s.Zh && dottedSectionOpen.MatchString(s.Text) {
			// "2.6 己土己土卑湿…": a numbered heading run into the text
			// after a note mark ("故宜静。1."), so the sentence starts
			// inside another one; the text after the heading is a
			// candidate of its own where the book repeats it.
			continue
		}
		if s.Zh && continuedAfter(sents, i) {
			// 若伤官伤尽，四柱不留一点；又行旺运及印绶运，却为贵也: the verdict
			// is in the next sentence, so this one alone is a cut rule.
			continue
		}
		p, ok := parseRule(s.Text, s.Zh)
		sectionTopic := ""
		if !ok && !s.Zh && narr[s.Doc] == nil {
			// "You can receive 15 Military Leave days each year…" under
			// "Military leave": the subject is the section's
			// (enSectionRule).
			if q, needTopic, qok := enSectionRule(s.Text); qok && !needTopic {
				p, ok = q, true
			} else if qok {
				if t := enSectionTopic(s.Chunk); t != "" {
					q.Cond, sectionTopic = t, t
					p, ok = q, true
				}
			}
		}
		if !ok || openEnded(p.Cond) || openEnded(p.Concl) {
			// 必为神所, "whether recent or", "maintained by": a part
			// ending on a word that joins it to what follows is cut.
			continue
		}
		if n := narr[s.Doc]; n != nil && !narrativeRuleOK(n, p, s) {
			// A novel's conditionals are narration and dialogue: only a
			// rule stated in an explicit general form stands.
			continue
		}
		ev := []knowledge.Evidence{{Chunk: s.Chunk.ID, Quote: s.Text}}
		score := p.score + sal.of(p.Cond+p.Concl)
		if f, ok := redFlagOf(p, s.Text); ok && sectionTopic == "" {
			f.Evidence = ev
			flags = append(flags, cand[knowledge.RedFlag]{s: s, v: f, score: score - 2*float64(sevRank(f.Severity))})
		}
		if p.Zh && runeLen(p.Concl) == 2 && strings.HasPrefix(p.Concl, "则") {
			// 日主喜金则吉: too thin for a rule ("IF 日主喜金 THEN 则吉"), though
			// 食神逢枭则夭 still makes a red flag.
			continue
		}
		score = rank.score(p, s)
		cond := p.Cond
		if p.Zh {
			topic, ok := topics[s.Chunk]
			if !ok {
				for k := len(s.Chunk.HeadingPath) - 1; k >= 0 && topic == ""; k-- {
					topic = zhHeadingTopic(s.Chunk.HeadingPath[k])
					if rs := []rune(topic); len(rs) >= 2 && (recurring[uint64(rs[0])<<32|uint64(rs[1])] < minTopicSentences || recurring[uint64(rs[len(rs)-2])<<32|uint64(rs[len(rs)-1])] < minTopicSentences) {
						// 详解定真论, 神趣八法: a title, not a term the
						// books use (三夏辛金 is: 三夏 and 辛金 are).
						topic = ""
					}
				}
				topics[s.Chunk] = topic
			}
			// 麻黄汤方 whose text has moved on to 大青龙汤: the rule is
			// about the formula its paragraph names.
			cond = ruleCondition(p, sentenceTopic(topic, paragraphTo(s), topicKinds))
			if cond == p.Cond && (zhThinCond(p.Cond) || runeLen(p.Cond) <= 2 && !p.General) {
				// 见官星, 逢丙午、丁未天上水: whose, the text before says;
				// with no subject or topic to carry, the rule cannot
				// stand on its own.
				continue
			}
			if p.Tier == 1 {
				if oneCase(p.Cond) || oneCase(p.Subject) {
					// 逢丙午、丁未天上水, 甲人生亥子月中: a remark on one
					// case is no must-know rule, whatever it forbids.
					p.Tier, p.Confidence = 2, "medium"
					if zhCertain.MatchString(p.Concl) {
						p.Confidence = "high"
					}
					score += warningBonus
				} else {
					// What the books present as fundamental first: a
					// rule on its section's topic, a maxim.
					if topic != "" && statesTopic(p.Cond+p.Concl, topic) {
						score += fundamentalWeight
					}
					if p.maxim {
						score += fundamentalWeight
					}
				}
			}
		}
		r := knowledge.Rule{Condition: cond, Source: sourceOf(s.Chunk), Evidence: ev}
		if about, _, ok := strings.Cut(cond, "："); ok && p.Zh && cond != p.Cond && !strings.Contains(despaceHan(s.Chunk.Text), about) {
			// The topic is its section's heading, which this chunk does
			// not hold: the rule cites the heading too, so every word of
			// it is in what it cites.
			if h, ok := headingEvidence(chunks, s.Chunk, about); ok {
				r.Evidence = append([]knowledge.Evidence{ev[0]}, h)
			} else {
				r.Condition = p.Cond
			}
		}
		if sectionTopic != "" && !strings.Contains(s.Chunk.Text, sectionTopic) {
			// The topic is its section's heading, which this chunk does
			// not hold: the rule cites the heading too.
			h, ok := headingEvidence(chunks, s.Chunk, sectionTopic)
			if !ok {
				continue
			}
			r.Evidence = append(r.Evidence, h)
		}
		if sectionTopic != "" {
			// Its condition is the heading's, not the sentence's: an extra
			// rule get_rules finds, never a core or must-know one (the
			// core says what the skill is about; "QUEEN AGAINST ROOK →
			// The rule is that … fifty moves" in chess's core gave it the
			// words of a travel handbook's question).
			r.Conclusion, r.Confidence = p.Concl, p.Confidence
			if p.Tier == 1 {
				r.Confidence = "high"
			}
			bySection = append(bySection, cand[knowledge.Rule]{s: s, v: r, score: score})
			continue
		}
		switch p.Tier {
		case 1:
			// "Never seal the jar airtight: the gas can crack the glass":
			// what happens is the conclusion, the instruction the action
			// (without a reason the rule has the action alone).
			r.Action, r.Priority, r.Conclusion = p.Concl, p.Priority, p.Reason
			t1 = append(t1, cand[knowledge.Rule]{s: s, v: r, score: score})
		case 3:
			r.Conclusion, r.Confidence, r.Note = p.Concl, p.Confidence, p.Note
			t3 = append(t3, cand[knowledge.Rule]{s: s, v: r, score: score})
		default:
			r.Conclusion, r.Confidence = p.Concl, p.Confidence
			t2 = append(t2, cand[knowledge.Rule]{s: s, v: r, score: score})
		}
	}
	pats := findPatterns(sents, func(s sentence) bool {
		// A novel names its people, weapons and inns (名唤邹闰, 号轰天雷):
		// only a passage outside the story is read for patterns.
		n := narr[s.Doc]
		return n != nil && !narrativeStands(n, s)
	})

	// Over two books or more the round robin over the books spreads the
	// kept rules; one book's are spread over its sections.
	spread := 0.0
	if len(docIdx) < 2 {
		spread = sectionPenalty
	}
	ruleKey := func(r knowledge.Rule) string { return r.Condition + " " + r.Conclusion + r.Action }
	// Must-know candidates beyond the ten compete in tier 2 (issue 28:
	// a rule that forbids is core knowledge even when tier 1 is full),
	// their instruction as the conclusion; none goes to tier 3.
	kept1 := best(t1, maxTier1, spread, ruleKey)
	in1 := map[int]bool{}
	for _, c := range kept1 {
		in1[c.s.Seq] = true
	}
	var overflow1 []cand[knowledge.Rule]
	for _, c := range t1 {
		if in1[c.s.Seq] {
			continue
		}
		r := c.v
		r.Conclusion, r.Confidence = nonEmpty(r.Action, r.Conclusion), "medium"
		if zhCertain.MatchString(r.Conclusion) || enCertain.MatchString(r.Conclusion) {
			r.Confidence = "high"
		}
		r.Action, r.Priority = "", ""
		c.v = r
		overflow1 = append(overflow1, c)
	}
	// Tier 2 holds the design's maxTier2 core rules and, beyond them, one
	// rule a chunk marked Extra (offlineTier2Cap): best takes its picks in
	// the same order whatever its budget, so the first maxTier2 it takes
	// of the larger budget are the core rules a budget of maxTier2 keeps.
	t2all := append(t2, overflow1...)
	core := map[int]bool{}
	for _, c := range best(t2all, maxTier2, spread, ruleKey) {
		core[c.s.Seq] = true
	}
	kept2 := best(t2all, offlineTier2Cap(len(chunks)), spread, ruleKey)
	if room := offlineTier2Cap(len(chunks)) - len(kept2); room > 0 && len(bySection) > 0 {
		// The rules whose condition is their section's heading
		// (enSectionRule) fill what room the others leave.
		kept2 = append(kept2, best(bySection, room, spread, ruleKey)...)
		sort.SliceStable(kept2, func(i, j int) bool { return kept2[i].s.Seq < kept2[j].s.Seq })
	}
	tier2 := values(kept2)
	for i, c := range kept2 {
		tier2[i].Extra = !core[c.s.Seq]
	}
	files := knowledge.Files{
		SOP: knowledge.SOPFile{SOP: offlineSOP(theme, zh, sents, stepScorer(sents, rank, narr)), Meta: meta},
		Patterns: knowledge.PatternsFile{Patterns: knowledge.Patterns{
			QuickPatterns: orEmpty(values(pats)),
			RedFlags:      orEmpty(values(best(flags, maxRedFlags, 0, func(f knowledge.RedFlag) string { return f.Signal }))),
		}, Meta: meta},
		Rules: knowledge.RulesFile{Rules: knowledge.Rules{
			Tier1: orEmpty(values(kept1)),
			Tier2: orEmpty(tier2),
			Tier3: orEmpty(values(best(t3, maxTier3, spread, ruleKey))),
		}, Meta: meta},
	}
	// Critical red flags and tier-1 rules first, in corpus order otherwise.
	rf := files.Patterns.Patterns.RedFlags
	sort.SliceStable(rf, func(i, j int) bool { return sevRank(rf[i].Severity) < sevRank(rf[j].Severity) })
	t := files.Rules.Rules.Tier1
	sort.SliceStable(t, func(i, j int) bool { return t[i].Priority == "critical" && t[j].Priority != "critical" })
	return files, nil
}

// frontMatterRe is a heading of text that is not the expert's doctrine: a
// preface, a table of contents, an editor's note, an afterword. Both
// extractors leave such chunks out (frontMatterChunk).
var frontMatterRe = regexp.MustCompile(`(?i)^[#《》 ]*(?:序|.{0,8}[序叙]言?|自序|凡例|目录|目次|.{0,8}总目.{0,6}|提要|跋|前言|后记|後記|.{0,8}卷前|.{0,8}卷首|preface|foreword|contents|table of contents|acknowledg\w*|afterword|about (?:this|the) book)[《》 ]*$`)

// prefaceOpen opens a chunk that is a preface or a table of contents even
// where no heading says so: 补刻三命通会叙夫命岂易言哉, 三命通会总目卷之一,
// 目录：.
var prefaceOpen = regexp.MustCompile(`^(?:目录|目次)[：:]?|^(?:补刻|重刻|新刻|重订|增补|原)?\p{Han}{1,8}(?:叙|自序|序言|总目)`)

// frontMatterChunk reports that c is front matter — a preface, a table of
// contents, an editor's note — which is not mined: its sentences speak about
// the book, not the doctrine.
func frontMatterChunk(c *chunk.Chunk) bool {
	for _, h := range c.HeadingPath {
		if frontMatterRe.MatchString(strings.TrimSpace(h)) {
			return true
		}
	}
	return prefaceOpen.MatchString(strings.TrimLeft(c.Text, " \t\n　#"))
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
	s     sentence
	v     T
	n     int     // extra occurrences, for patterns
	score float64 // higher is kept first when over the cap
}

func sortStable[T any](xs []cand[T], less func(a, b cand[T]) bool) {
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
	sort.SliceStable(out, func(i, j int) bool { return out[i].s.Seq < out[j].s.Seq })
	return out
}

// best chooses up to max candidates: each document's candidates ranked by
// score (ties in corpus order), taken in turn from each document so one long
// book does not crowd out the others, skipping any whose text (key) nearly
// duplicates one already taken. Within a document a candidate's score is
// lowered by spread for each one already taken from its section
// (sectionPicker). The result is in corpus order.
func best[T any](xs []cand[T], max int, spread float64, key func(T) string) []cand[T] {
	byDoc := map[int][]cand[T]{}
	var docs []int
	for _, x := range xs {
		if _, ok := byDoc[x.s.Doc]; !ok {
			docs = append(docs, x.s.Doc)
		}
		byDoc[x.s.Doc] = append(byDoc[x.s.Doc], x)
	}
	sort.Ints(docs)
	pickers := make([]*sectionPicker[T], len(docs))
	for i, d := range docs {
		pickers[i] = newSectionPicker(byDoc[d], spread)
	}
	var taken []cand[T]
	var seen nearDups
	for len(taken) < max {
		took := false
		for _, p := range pickers {
			for len(taken) < max {
				x, sec, ok := p.pop()
				if !ok {
					break
				}
				if !seen.repeats(key(x.v)) {
					p.taken[sec]++
					taken, took = append(taken, x), true
					break
				}
			}
		}
		if !took {
			break
		}
	}
	sort.SliceStable(taken, func(i, j int) bool { return taken[i].s.Seq < taken[j].s.Seq })
	return taken
}

// nearDups remembers texts and tells whether a new one nearly repeats one
// of them (bigram Dice similarity 0.8 or more).
type nearDups struct{ grams []map[string]int }

// repeats reports whether text nearly repeats one seen before; if not, it
// remembers text.
func (n *nearDups) repeats(text string) bool {
	g := bigrams(text)
	for _, o := range n.grams {
		if dice(g, o) >= 0.8 {
			return true
		}
	}
	n.grams = append(n.grams, g)
	return false
}

// bigrams are the comparison units of s: character bigrams of runs of Han
// text, lower-cased words otherwise.
func bigrams(s string) map[string]int {
	out := map[string]int{}
	var prev rune
	word := strings.Builder{}
	flush := func() {
		if word.Len() > 0 {
			out[word.String()]++
			word.Reset()
		}
	}
	for _, r := range strings.ToLower(s) {
		switch {
		case unicode.Is(unicode.Han, r):
			flush()
			if prev != 0 {
				out[string([]rune{prev, r})]++
			}
			prev = r
			continue
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			word.WriteRune(r)
		default:
			flush()
		}
		prev = 0
	}
	flush()
	return out
}

func dice(a, b map[string]int) float64 {
	na, nb, inter := 0, 0, 0
	for g, n := range a {
		na += n
		inter += min(n, b[g])
	}
	for _, n := range b {
		nb += n
	}
	if na+nb == 0 {
		return 0
	}
	return 2 * float64(inter) / float64(na+nb)
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

// salience scores text by how much of it is the theme's vocabulary: Han
// bigrams (or English words) that occur in at least half of the documents
// (two at least) and are not function words. A rule in the domain's terms
// ranks above a general remark.
type salience struct {
	han   map[uint64]bool
	words map[string]bool
}

var enStop = map[string]bool{"the": true, "a": true, "an": true, "of": true, "and": true, "or": true, "to": true, "in": true, "on": true, "at": true, "for": true, "with": true, "is": true, "are": true, "be": true, "it": true, "this": true, "that": true, "if": true, "when": true, "then": true, "by": true, "as": true, "from": true, "not": true, "no": true, "its": true, "was": true, "were": true, "will": true, "can": true, "your": true, "you": true}

func isFunctionChar(r rune) bool {
	switch r {
	case '之', '其', '而', '以', '也', '者', '为', '于', '则', '若', '如', '不', '有', '无', '此', '是', '所', '乃', '与', '及', '或', '又', '亦', '且', '故', '曰', '云', '矣', '焉', '乎', '哉', '一', '二', '三', '四', '五', '六', '七', '八', '九', '十', '人', '我', '尔', '汝', '彼':
		return true
	}
	return false
}

// termKeys calls han for each pair of adjacent Han characters of s that are
// not function words, and word for each lower-cased English word of three
// letters or more that is not a stop word.
func termKeys(s string, han func(uint64), word func(string)) {
	var prev rune
	start := -1
	for i, r := range s {
		switch {
		case r >= 0x3400 && unicode.Is(unicode.Han, r):
			if start >= 0 {
				emitWord(s[start:i], word)
				start = -1
			}
			if isFunctionChar(r) {
				prev = 0
				continue
			}
			if prev != 0 {
				han(uint64(prev)<<32 | uint64(r))
			}
			prev = r
			continue
		case r < 0x3000 && (unicode.IsLetter(r) || unicode.IsDigit(r)):
			if start < 0 {
				start = i
			}
		default:
			if start >= 0 {
				emitWord(s[start:i], word)
				start = -1
			}
		}
		prev = 0
	}
	if start >= 0 {
		emitWord(s[start:], word)
	}
}

func emitWord(w string, word func(string)) {
	if len(w) < 3 {
		return
	}
	w = strings.ToLower(w)
	if !enStop[w] {
		word(w)
	}
}

func newSalience(sents []sentence, docs int) salience {
	if docs < 2 {
		return salience{}
	}
	need := max(2, (docs+1)/2)
	hanDocs, hanLast := map[uint64]int{}, map[uint64]int{}
	wordDocs, wordLast := map[string]int{}, map[string]int{}
	for _, s := range sents {
		d := s.Doc + 1
		termKeys(s.Text, func(k uint64) {
			if hanLast[k] != d {
				hanLast[k] = d
				hanDocs[k]++
			}
		}, func(w string) {
			if wordLast[w] != d {
				wordLast[w] = d
				wordDocs[w]++
			}
		})
	}
	sl := salience{han: map[uint64]bool{}, words: map[string]bool{}}
	for k, n := range hanDocs {
		if n >= need {
			sl.han[k] = true
		}
	}
	for w, n := range wordDocs {
		if n >= need {
			sl.words[w] = true
		}
	}
	return sl
}

// of returns the share of s's terms that are theme vocabulary, scaled to 0..2.
func (sl salience) of(s string) float64 {
	if sl.han == nil {
		return 0
	}
	hit, all := 0, 0
	termKeys(s, func(k uint64) {
		all++
		if sl.han[k] {
			hit++
		}
	}, func(w string) {
		all++
		if sl.words[w] {
			hit++
		}
	})
	if all == 0 {
		return 0
	}
	return 2 * float64(hit) / float64(all)
}

// sourceOf names where a chunk sits: its document title and heading path,
// without repeating the title when the path starts with it.
func sourceOf(c *chunk.Chunk) string {
	title := c.Title
	if title == "" {
		title = strings.TrimSuffix(path.Base(c.Doc), path.Ext(c.Doc))
	}
	hp := c.HeadingPath
	for len(hp) > 0 && normalise(hp[0]) == normalise(title) {
		hp = hp[1:]
	}
	if len(hp) > 0 {
		return title + " > " + strings.Join(hp, " > ")
	}
	return title
}

func orEmpty[T any](xs []T) []T {
	if xs == nil {
		return []T{}
	}
	return xs
}

// zhContinue open a sentence that goes on with the one before it (又,
// 却, 方 ...): after a "；" the previous sentence has not given its verdict.
var zhContinue = []string{"又", "却", "方", "乃", "则", "而", "亦", "便", "即", "必", "然后", "始", "才"}

// continuedAfter reports that sentence i ends with a semicolon and the next
// sentence of the same chunk continues it.
func continuedAfter(sents []sentence, i int) bool {
	s := sents[i]
	if !strings.HasSuffix(s.Text, "；") && !strings.HasSuffix(s.Text, ";") {
		return false
	}
	if i+1 >= len(sents) || sents[i+1].Chunk != s.Chunk {
		return false
	}
	return hasPrefixAny(sents[i+1].Text, zhContinue) != ""
}

// warningBonus ranks up, among the tier-2 candidates, a rule that forbids
// or obliges but is no must-know rule because it remarks on one case
// (甲人生亥子月中，水为印，忌火伤官): the books' warnings are core knowledge.
const warningBonus = 0.5

// fundamentalWeight ranks a must-know candidate up for each sign that the
// books present it as fundamental: it states its section's topic (or names
// its subject), it is a maxim.
const fundamentalWeight = 1.5

// oneCase reports a condition about one case rather than a rule: it names
// a sexagenary pair (逢丙午、丁未天上水), one day stem's birth month (甲人生亥子
// 月, 丙生子月), one day stem (戊日刃在午) or one month (五月丁火).
func oneCase(cond string) bool {
	return ganzhiPairs(cond, 1) >= 1 || oneStemCase.MatchString(cond) || oneDayOrMonth.MatchString(cond)
}

// oneDayOrMonth names one day stem (戊日) or one month (五月, 十月).
var oneDayOrMonth = regexp.MustCompile(`[甲乙丙丁戊己庚辛壬癸]日|(?:^|[^一二三四五六七八九十])(?:正|[一二三四五六七八九十]|十[一二])月`)

var oneStemCase = regexp.MustCompile(`[甲乙丙丁戊己庚辛壬癸][木火土金水]?(?:人|日)?生(?:居|于|在|逢)?[子丑寅卯辰巳午未申酉戌亥春夏秋冬正一二三四五六七八九十]`)

// headingEvidence returns evidence quoting the heading of c's section that
// names topic: the line in the first chunk of the same document and heading
// path that holds it.
func headingEvidence(chunks []chunk.Chunk, c *chunk.Chunk, topic string) (knowledge.Evidence, bool) {
	for i := range chunks {
		h := &chunks[i]
		if h.Doc != c.Doc || len(h.HeadingPath) < len(c.HeadingPath) || strings.Join(h.HeadingPath[:len(c.HeadingPath)], "\x00") != strings.Join(c.HeadingPath, "\x00") {
			continue
		}
		for _, line := range strings.Split(h.Text, "\n") {
			if t := strings.TrimSpace(strings.TrimLeft(line, "# ")); strings.HasPrefix(strings.TrimSpace(line), "#") && strings.Contains(t, topic) {
				return knowledge.Evidence{Chunk: h.ID, Quote: t}, true
			}
		}
	}
	return knowledge.Evidence{}, false
}

// minTopicSentences is how many sentences must use the first and the last
// two characters of a heading's topic (三夏 and 辛金 of 三夏辛金, 正官) for
// it to be a term of the books rather than a title.
const minTopicSentences = 5

// hanBigramSentences counts, for each pair of adjacent Han characters, the
// Chinese sentences it occurs in.
func hanBigramSentences(sents []sentence) map[uint64]int {
	out := map[uint64]int{}
	seen := map[uint64]bool{}
	for _, s := range sents {
		if !s.Zh {
			continue
		}
		clear(seen)
		var prev rune
		for _, r := range s.Text {
			if r >= 0x3400 && unicode.Is(unicode.Han, r) {
				if prev != 0 {
					k := uint64(prev)<<32 | uint64(r)
					if !seen[k] {
						seen[k] = true
						out[k]++
					}
				}
				prev = r
				continue
			}
			prev = 0
		}
	}
	return out
}

// stepScorer scores a sentence as an SOP step: a whole rule (not cut, not
// continued in the next sentence, not a remark on one case) by the rule
// ranker; headings and statements are no steps.
func stepScorer(sents []sentence, rank *ruleRanker, narr map[int]*narrative) stepScore {
	return func(i int) (float64, bool) {
		s := sents[i]
		if s.Cut || strings.HasPrefix(s.Text, "#") || s.Zh && continuedAfter(sents, i) {
			return 0, false
		}
		p, ok := parseRule(s.Text, s.Zh)
		if ok && narr[s.Doc] != nil && !narrativeRuleOK(narr[s.Doc], p, s) {
			return 0, false
		}
		if !ok || p.Zh && (oneCase(p.Cond) || oneCase(p.Subject) || zhThinCond(p.Cond) || zhLeansBack.MatchString(p.Cond) || runeLen(p.Cond) <= 2 && !p.General) {
			// 若又死绝，无所望矣: what dies, the text before says.
			return 0, false
		}
		return rank.score(p, s), true
	}
}

// zhLeansBack opens a condition that refers to the text before it (又, 亦,
// 此, 其, 彼): alone it says nothing.
var zhLeansBack = regexp.MustCompile(`^(?:又|亦|此|其|彼|然则|至于)`)
