package extract

import (
	"regexp"
	"sort"
	"strings"
	"unicode"
)

// ruleRanker scores the offline rule candidates for selection when there
// are more than the design's targets. Over two books or more a candidate
// ranks by its form (an opening word and 则, short) and by how much of it is
// the vocabulary the books share (salience), and the round robin over the
// books spreads the kept rules. Over one book there is no shared
// vocabulary: 伤官见官，为祸百端 scored 0 among 369 tier-2 candidates and
// ties went to the first chapters. There the signals read within the book
// stand in:
//
//   - maxim: the classical form of a rule, X见Y，为Z (zhMaxim);
//   - topic: the condition names a term of its section's heading (论伤官 →
//     伤官…): the book states the rule where it treats the subject;
//   - terms: the share of the condition that is the theme's glossary terms
//     (knowledge/<theme>/glossary.yaml), or without a glossary the book's
//     recurring terms (Han bigrams found in many of its sections);
//   - verdict: the consequent judges (吉凶, 贵贱, 祸福, 秀, 成败 …) rather than
//     describes;
//   - a bare term as condition (女命, 透印) is thin;
//
// and the kept rules are spread over the sections (sectionPicker).
type ruleRanker struct {
	sal salience
	// terms are the glossary's terms and aliases of two runes or more that
	// occur in the sources, longest first.
	terms []string
	// keys are the book's recurring terms, used without a glossary: Han
	// bigrams (no function characters) found in at least keyShare of the
	// sections of their document, and in three sections at least.
	keys map[uint64]bool
	// topics holds, per section, the terms its heading names.
	topics map[string][]string
}

// keyShare is the share of a document's sections a Han bigram must occur
// in to count as one of the book's recurring terms.
const keyShare = 0.15

// Weights of the one-book ranking signals, on the scale of the form score
// (0-2: an opening word, 则).
const (
	maximWeight   = 1.5
	topicWeight   = 1.0
	termsWeight   = 1.5
	verdictWeight = 0.5
	shortPenalty  = 1.0
	// sectionPenalty is taken off a candidate's score for each rule already
	// kept from its section (one book only).
	sectionPenalty = 0.5
)

// zhVerdict are characters and words by which a consequent judges.
var zhVerdict = []string{"吉", "凶", "贵", "贱", "富", "贫", "寿", "夭", "祸", "福", "灾", "秀", "美", "成格", "破格", "成局", "破局", "败", "孤", "荣", "损", "病", "死"}

// sectionKey names the section a sentence is in: its document and heading
// path.
func sectionKey(s sentence) string {
	return s.Chunk.Doc + "\x00" + strings.Join(s.Chunk.HeadingPath, "\x00")
}

func newRuleRanker(sents []sentence, docs int, glossary []string) *ruleRanker {
	rk := &ruleRanker{sal: newSalience(sents, docs), topics: map[string][]string{}}
	if rk.sal.han != nil {
		return rk // two books or more: form and salience only (score)
	}
	var text strings.Builder
	for _, s := range sents {
		if s.Zh {
			text.WriteString(s.Text)
		}
	}
	all := text.String()
	seen := map[string]bool{}
	for _, t := range glossary {
		t = strings.TrimSpace(t)
		if runeLen(t) >= 2 && isHan(t) && !seen[t] && strings.Contains(all, t) {
			seen[t] = true
			rk.terms = append(rk.terms, t)
		}
	}
	sort.SliceStable(rk.terms, func(i, j int) bool { return runeLen(rk.terms[i]) > runeLen(rk.terms[j]) })
	if len(rk.terms) == 0 {
		rk.keys = recurringBigrams(sents)
	}
	for _, s := range sents {
		k := sectionKey(s)
		if _, ok := rk.topics[k]; ok || len(s.Chunk.HeadingPath) == 0 {
			continue
		}
		title := chapterTitle(s.Chunk.HeadingPath[len(s.Chunk.HeadingPath)-1])
		var ts []string
		if len(rk.terms) > 0 {
			for _, t := range rk.terms {
				if strings.Contains(title, t) {
					ts = append(ts, t)
				}
			}
		} else {
			rs := []rune(title)
			for i := 0; i+1 < len(rs); i++ {
				if rk.keys[uint64(rs[i])<<32|uint64(rs[i+1])] {
					ts = append(ts, string(rs[i:i+2]))
				}
			}
		}
		rk.topics[k] = ts
	}
	return rk
}

// recurringBigrams returns the Han bigrams found in at least keyShare of
// the sections of their document (three at least).
func recurringBigrams(sents []sentence) map[uint64]bool {
	secs := map[int]map[string]bool{} // doc -> sections
	inSecs := map[int]map[uint64]int{}
	last := map[uint64]string{}
	for _, s := range sents {
		if !s.Zh {
			continue
		}
		k := sectionKey(s)
		if secs[s.Doc] == nil {
			secs[s.Doc], inSecs[s.Doc] = map[string]bool{}, map[uint64]int{}
		}
		secs[s.Doc][k] = true
		termKeys(s.Text, func(b uint64) {
			if last[b] != k {
				last[b] = k
				inSecs[s.Doc][b]++
			}
		}, func(string) {})
	}
	keys := map[uint64]bool{}
	for d, m := range inSecs {
		need := max(3, int(keyShare*float64(len(secs[d]))+0.5))
		for b, n := range m {
			if n >= need {
				keys[b] = true
			}
		}
	}
	return keys
}

// score ranks candidate p read from sentence s: higher is kept first. The
// form score and, over two books or more, the cross-book vocabulary
// (salience), as before; over one book, where there is no cross-book
// vocabulary, the signals read within the book stand in for it: the maxim
// form, the section's topic, the glossary's (or the book's recurring)
// terms, a verdict, and a penalty for a bare term as condition.
func (rk *ruleRanker) score(p ruleParse, s sentence) float64 {
	sc := p.score + rk.sal.of(p.Cond+p.Concl)
	if !p.Zh {
		return sc + enSignals(p, s)
	}
	if rk.sal.han != nil {
		return sc
	}
	if p.maxim {
		sc += maximWeight
	}
	if runeLen(p.Cond) <= 2 {
		// 女命, 透印: a bare term is what the rule is about, not the
		// situation it applies to; read alone the rule is thin.
		sc -= shortPenalty
	}
	for _, t := range rk.topics[sectionKey(s)] {
		if strings.Contains(p.Cond, t) {
			sc += topicWeight
			break
		}
	}
	sc += termsWeight * rk.coverage(p.Cond)
	for _, v := range zhVerdict {
		if strings.Contains(p.Concl, v) {
			sc += verdictWeight
			break
		}
	}
	return sc
}

// coverage returns the share of the Han characters of s that are in the
// glossary's terms (or, without a glossary, in the book's recurring
// bigrams).
func (rk *ruleRanker) coverage(s string) float64 {
	rs := []rune(s)
	in := make([]bool, len(rs))
	if len(rk.terms) > 0 {
		for _, t := range rk.terms {
			tr := []rune(t)
			for i := 0; i+len(tr) <= len(rs); i++ {
				if string(rs[i:i+len(tr)]) == t {
					for j := i; j < i+len(tr); j++ {
						in[j] = true
					}
				}
			}
		}
	} else {
		for i := 0; i+1 < len(rs); i++ {
			if rk.keys[uint64(rs[i])<<32|uint64(rs[i+1])] {
				in[i], in[i+1] = true, true
			}
		}
	}
	han, hit := 0, 0
	for i, r := range rs {
		if unicode.Is(unicode.Han, r) {
			han++
			if in[i] {
				hit++
			}
		}
	}
	if han == 0 {
		return 0
	}
	return float64(hit) / float64(han)
}

// sectionPicker hands out one document's candidates best first, where a
// candidate's score is lowered by penalty for each candidate already taken
// from its section: with a penalty the kept items spread over the sections
// instead of filling up from the sections that state the most rules and,
// through ties, from the first ones. Equal scores go in corpus order. With
// no penalty it is the plain ranking by score.
type sectionPicker[T any] struct {
	secs    [][]cand[T] // per section, best first
	next    []int
	taken   []int
	penalty float64
}

func newSectionPicker[T any](xs []cand[T], penalty float64) *sectionPicker[T] {
	p := &sectionPicker[T]{penalty: penalty}
	idx := map[string]int{}
	for _, x := range xs {
		k := ""
		if penalty > 0 {
			k = sectionKey(x.s)
		}
		i, ok := idx[k]
		if !ok {
			i = len(p.secs)
			idx[k] = i
			p.secs = append(p.secs, nil)
		}
		p.secs[i] = append(p.secs[i], x)
	}
	for _, l := range p.secs {
		sort.SliceStable(l, func(i, j int) bool { return l[i].score > l[j].score })
	}
	p.next, p.taken = make([]int, len(p.secs)), make([]int, len(p.secs))
	return p
}

// pop returns the best remaining candidate and its section.
func (p *sectionPicker[T]) pop() (cand[T], int, bool) {
	best, bestScore := -1, 0.0
	for i, l := range p.secs {
		if p.next[i] >= len(l) {
			continue
		}
		x := l[p.next[i]]
		sc := x.score - p.penalty*float64(p.taken[i])
		if best < 0 || sc > bestScore || sc == bestScore && x.s.Seq < p.secs[best][p.next[best]].s.Seq {
			best, bestScore = i, sc
		}
	}
	if best < 0 {
		var zero cand[T]
		return zero, -1, false
	}
	x := p.secs[best][p.next[best]]
	p.next[best]++
	return x, best, true
}

// enSignals are the ranking signals of an English rule read within its
// book: a principle the author set in italics (maxim) ranks first, a
// condition that names its section's topic (a rule under "Doubled Pawns"
// about doubled pawns) next; a condition that is mostly notation or
// figures ("2 P - B 7 ch", "2. PxP") states one case, not a rule.
func enSignals(p ruleParse, s sentence) float64 {
	sc := 0.0
	if p.maxim {
		sc += maximWeight
	}
	words, content, notation := 0, 0, false
	for _, w := range strings.Fields(p.Cond) {
		words++
		t := strings.Trim(w, ",.;:()\"'")
		if len(t) >= 3 && isLetters(t) {
			content++
		}
		// "P-K5", "KB4", "3.": a move, a square, a numbered step.
		notation = notation || strings.IndexFunc(t, unicode.IsDigit) >= 0 && (strings.IndexFunc(t, unicode.IsLetter) >= 0 || strings.HasSuffix(w, "."))
	}
	if words > 0 && 2*content < words || notation {
		sc -= shortPenalty
	}
	// "then the Rook moves away …", "now Black plays K-K1": a step of one
	// line of play; "… he can effect the intended protection", "it gets
	// lost": a consequent about someone or something the rule does not
	// name.
	if enStepCond.MatchString(p.Cond) {
		sc -= shortPenalty
	}
	if enBackConcl.MatchString(p.Concl) {
		sc -= shortPenalty
	}
	if len(s.Chunk.HeadingPath) > 0 {
		head := enContentWords(s.Chunk.HeadingPath[len(s.Chunk.HeadingPath)-1])
		for w := range enContentWords(p.Cond) {
			if head[w] {
				sc += topicWeight
				break
			}
		}
	}
	return sc
}

var (
	enStepCond  = regexp.MustCompile(`(?i)^(?:then|now|next|after that|here)\b`)
	enBackConcl = regexp.MustCompile(`(?i)^(?:and\s+|but\s+|or\s+)?(?:he|she|it|they|this|that|these|those|his|its|their)\b`)
)

func isLetters(s string) bool {
	for _, r := range s {
		if !unicode.IsLetter(r) && r != '\'' && r != '’' && r != '-' {
			return false
		}
	}
	return true
}

// enContentWords returns the lower-cased words of s of four letters or
// more that are no function words, a plural's final s dropped.
func enContentWords(s string) map[string]bool {
	out := map[string]bool{}
	for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) }) {
		if len(w) < 4 || enStop[w] || enPronoun[w] {
			continue
		}
		if strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") {
			w = w[:len(w)-1]
		}
		out[w] = true
	}
	return out
}
