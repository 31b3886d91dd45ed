package extract

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/vibelife/vibe/chunk"
)

// A narrative document (a novel: 水浒传, Moby-Dick) tells what people did
// and said; its conditionals are narration ("如果林冲看时，则不是别人，却是
// 小旋风柴进", "When at last the twelve rods were made, Ahab tried them"),
// not rules. The offline extractor measures, per document, how much of it
// is dialogue attributed to many speakers, and in a narrative document
// takes only rules stated in an explicit general form, outside dialogue
// and narration (narrativeRuleOK). Expository books — the bazi classics,
// the medical classics, a handbook, a commentary quoting 子曰 — attribute
// few quotations to few speakers and are read as before.

// zhSpeechVerbs are the verbs of an attributed speech in vernacular or
// classical fiction.
const zhSpeechVerbs = "道说曰问叫喝骂答"

// zhSpeakers counts in speakers the speakers of the speeches text
// attributes: the two Han characters before a speech verb, a colon and an
// opening quote (宋江道：“, 玄德曰：“, 行者笑道："; the speaker of the last
// is 者笑, which names no one but is never in a rule either). A scan, not a
// regular expression: it runs over every chunk of every book.
func zhSpeakers(text string, speakers map[string]int) {
	for i := 0; i < len(text); {
		j := strings.IndexAny(text[i:], "：:")
		if j < 0 {
			return
		}
		at := i + j
		_, n := utf8.DecodeRuneInString(text[at:])
		i = at + n
		q, _ := utf8.DecodeRuneInString(strings.TrimLeft(text[i:], " 　"))
		if !strings.ContainsRune("“「『\"", q) {
			continue
		}
		v, vn := utf8.DecodeLastRuneInString(text[:at])
		if !strings.ContainsRune(zhSpeechVerbs, v) {
			continue
		}
		b, bn := utf8.DecodeLastRuneInString(text[:at-vn])
		a, an := utf8.DecodeLastRuneInString(text[:at-vn-bn])
		if unicode.Is(unicode.Han, a) && unicode.Is(unicode.Han, b) {
			speakers[text[at-vn-bn-an:at-vn]]++
		}
	}
}

var (
	// enSpeechAfter and enSpeechBefore are an English quotation attributed
	// to its speaker: ”…,” said Stubb / Ahab cried, “….
	enSpeechAfter  = regexp.MustCompile(`[,!?—-]\s*["”]\s*(?:said|asked|replied|cried|answered|shouted|exclaimed|whispered|muttered|roared|rejoined)\s+(\p{Lu}\p{L}+|he|she|I|they)\b`)
	enSpeechBefore = regexp.MustCompile(`\b(\p{Lu}\p{L}+|he|she|I|they)\s+(?:said|asked|replied|cried|answered|shouted|exclaimed|whispered|muttered|roared|rejoined)\b[,:]?\s*["“]`)
)

// Thresholds of narrativeDocs, per 1,000 Han characters or English words.
// Measured on the raw books (docs/offline-rules.md): distinct Chinese
// speakers 2.6 (水浒传), 3.0 (西游记), 4.5 (三国演义) against at most 0.21
// (周易王弼注's 子曰, 象曰) for expository books; English quotations
// attributed after the quote (“…,” said Stubb) 1.13 (Moby-Dick) against
// 0.05 (The Art of War, whose commentators speak the other way round:
// Tu Mu says: “…”; counting both forms it read 0.46).
const (
	zhMinSpeakers       = 12
	zhSpeakersPerK      = 0.8
	enMinAttributions   = 12
	enAttributionsPerK  = 0.4
	narrativeNameMinUse = 3
)

// narrative is what narrativeDocs found in a narrative document: the
// names of its speakers, which a rule stated generally never names.
type narrative struct {
	names map[string]bool
	// lead holds, by chunk ID, the last paragraph of the chunk before it in
	// the document: a chunk may open inside a paragraph (史文恭…劝道：'…
	// 令贼无心恋战，必欲退兵急奔回山。'), whose speech marks are there.
	lead map[string]string
	// is says the document is narrative: count (distinct speakers in
	// Chinese, attributed quotations in English) and perK (the same per
	// 1,000 Han characters or words) are over the thresholds.
	is    bool
	zh    bool
	count int
	perK  float64
}

// NarrativeDoc is a document the offline extractor read as narrative (a
// novel): only rules stated generally, outside its dialogue and narration,
// are taken from it. Count is, in Chinese, the distinct speakers of its
// attributed speeches, in English its quotations attributed after the
// quote; PerK the same per 1,000 Han characters or words.
type NarrativeDoc struct {
	Doc   string  `json:"doc"`
	Zh    bool    `json:"zh"`
	Count int     `json:"count"`
	PerK  float64 `json:"per_1000"`
}

// NarrativeDocuments lists the narrative documents of chunks, in the order
// of their first chunk, so that a build can say why a novel gives few
// rules offline.
func NarrativeDocuments(chunks []chunk.Chunk) []NarrativeDoc {
	idx := map[string]int{}
	var docs []string
	for _, c := range chunks {
		if _, ok := idx[c.Doc]; !ok {
			idx[c.Doc] = len(docs)
			docs = append(docs, c.Doc)
		}
	}
	var out []NarrativeDoc
	m := measureNarrative(chunks, idx)
	for d, doc := range docs {
		if n := m[d]; n != nil && n.is {
			out = append(out, NarrativeDoc{Doc: doc, Zh: n.zh, Count: n.count, PerK: n.perK})
		}
	}
	return out
}

// narrativeDocs returns the narrative documents of chunks by document
// index, as Offline numbers them (docIdx).
func narrativeDocs(chunks []chunk.Chunk, docIdx map[string]int) map[int]*narrative {
	out := map[int]*narrative{}
	for d, n := range measureNarrative(chunks, docIdx) {
		if n.is {
			out[d] = n
		}
	}
	return out
}

// measureNarrative measures each document of chunks (front matter left
// out): in Chinese the distinct speakers of its attributed speeches, in
// English its attributed quotations, each per 1,000 Han characters or
// words.
func measureNarrative(chunks []chunk.Chunk, docIdx map[string]int) map[int]*narrative {
	type stats struct {
		han, words, attrib int
		speakers           map[string]int
	}
	by := map[int]*stats{}
	lead := map[string]string{}
	for i := range chunks {
		c := &chunks[i]
		d, ok := docIdx[c.Doc]
		if !ok || frontMatterChunk(c) {
			continue
		}
		if i > 0 && chunks[i-1].Doc == c.Doc {
			prev := chunks[i-1].Text
			lead[c.ID] = prev[strings.LastIndex(prev, "\n\n")+1:]
		}
		st := by[d]
		if st == nil {
			st = &stats{speakers: map[string]int{}}
			by[d] = st
		}
		han := 0
		for _, r := range c.Text {
			if r >= 0x2E80 && unicode.Is(unicode.Han, r) {
				han++
			}
		}
		words := len(strings.Fields(c.Text))
		st.han += han
		st.words += words
		if han*2 > words {
			zhSpeakers(c.Text, st.speakers)
			continue
		}
		for _, re := range []*regexp.Regexp{enSpeechAfter, enSpeechBefore} {
			for _, m := range re.FindAllStringSubmatch(c.Text, -1) {
				if re == enSpeechAfter {
					// Fiction's convention (“…,” said Stubb); a treatise
					// cites its authorities the other way round (Tu Mu
					// says: “…”).
					st.attrib++
				}
				if unicode.IsUpper([]rune(m[1])[0]) && m[1] != "I" {
					st.speakers[m[1]]++
				}
			}
		}
	}
	out := map[int]*narrative{}
	for d, st := range by {
		nv := &narrative{names: map[string]bool{}, lead: lead}
		if nv.zh = st.han*2 > st.words; nv.zh {
			nv.count = len(st.speakers)
			nv.perK = float64(nv.count) * 1000 / float64(max(st.han, 1))
			nv.is = nv.count >= zhMinSpeakers && nv.perK >= zhSpeakersPerK
		} else {
			nv.count = st.attrib
			nv.perK = float64(nv.count) * 1000 / float64(max(st.words, 1))
			nv.is = nv.count >= enMinAttributions && nv.perK >= enAttributionsPerK
		}
		for name, k := range st.speakers {
			if k >= narrativeNameMinUse {
				nv.names[name] = true
			}
		}
		out[d] = nv
	}
	return out
}

var (
	// zhNarration marks a Chinese sentence as narration or dialogue:
	// quotes, a speech verb, the storyteller's formulas, perfective 了,
	// persons.
	zhNarration = regexp.MustCompile(`[“”「」『』"']|[道说曰][：:]|只见|但见|却说|且说|话说|当下|次日|看时|了[，。！；、]|了$|[他她你我俺咱朕汝尔吾]|洒家|小人|哥哥|兄弟`)
	// enNarration marks an English sentence as dialogue or narration:
	// quotes, the persons of a story, a speech verb.
	enNarrationMark = regexp.MustCompile(`["“”]|‘[^’]*’|\b(?:I|me|my|we|us|our|you|your|he|she|him|her|his|they|them|their)\b|\b(?:said|asked|replied|cried)\b`)
	// zhSpeechMark and enSpeechMark are speech or a quotation in a
	// paragraph.
	zhSpeechMark = regexp.MustCompile(`[“”「」『』"']|[道说曰][：:]`)
	enSpeechMark = regexp.MustCompile(`["“”]|\b(?:said|asked|replied|cried)\b`)
	// enInference is a modal of inference about what happened ("must have
	// alarmed the whale", "never yet upheld", "has never figured"), not a
	// rule.
	enInference = regexp.MustCompile(`(?i)\b(?:must|should|could|would|might|may)(?: not| never| at last| all)? have\b|\bnever yet\b|\b(?:has|have|had) (?:never|always)\b`)
	// enExplicit is an English rule's explicit general form.
	enExplicit = regexp.MustCompile(`(?i)\b(?:always|never|must|should|ought to|shall not|do not|don't|avoid)\b`)
)

// narrativeRuleOK reports whether the rule p read from sentence s of a
// narrative document n is stated in an explicit general form, outside
// dialogue (never inside a quotation of its paragraph) and narration: in Chinese opened by 凡 or forbidding, obliging
// or concluding 必 (若…必…); in English with always/never/must/should;
// and never quoted, attributed, told in the past (了, said), about a
// person (他, he, you) or naming one of the story's speakers.
func narrativeRuleOK(n *narrative, p ruleParse, s sentence) bool {
	if p.Zh {
		if !(p.General || p.Tier == 1 || strings.HasPrefix(p.Concl, "必")) {
			return false
		}
	} else if text := joinLines(s.Text); !enExplicit.MatchString(text) || enInference.MatchString(text) || enPast(p.Cond) || enPast(p.Concl) {
		// "the casks below must have sprung a bad leak": an inference
		// about the story.
		return false
	}
	return narrativeStands(n, s)
}

// narrativeStands reports whether sentence s of a narrative document n
// stands outside the story: no quotation, speech, storyteller's formula,
// perfective 了 or person in it (an English one opens a sentence, not the
// fragment after a semicolon), and no quotation, speech or speaker of the
// story in its paragraph (施恩道："…望兄长在意，切不可轻敌。"; 号令军将，
// 毋得动扰乡民 told of 宋江).
func narrativeStands(n *narrative, s sentence) bool {
	text := joinLines(s.Text)
	if s.Zh {
		if zhNarration.MatchString(text) || zhVerse(text) {
			return false
		}
	} else if first, _ := utf8.DecodeRuneInString(text); enNarrationMark.MatchString(text) || unicode.IsLower(first) {
		return false
	}
	if s.Chunk == nil {
		return !n.namesIn(text)
	}
	text, off := s.Chunk.Text, s.Off
	if !strings.Contains(text[:off], "\n\n") {
		// The chunk's first paragraph may have begun in the chunk before.
		text, off = n.lead[s.Chunk.ID]+text, off+len(n.lead[s.Chunk.ID])
	}
	para := paragraphAt(text, off, len(s.Text))
	return !inQuotes(text, off, s.Zh) && !n.namesIn(para) && !zhSpeechMark.MatchString(para) && (s.Zh || !enSpeechMark.MatchString(para))
}

// namesIn reports whether text names one of the story's speakers.
func (n *narrative) namesIn(text string) bool {
	for name := range n.names {
		if strings.Contains(text, name) {
			return true
		}
	}
	return false
}

// paragraphAt returns the paragraph of text (between blank lines) holding
// the n bytes at off.
func paragraphAt(text string, off, n int) string {
	from := strings.LastIndex(text[:off], "\n\n") + 1
	to := len(text)
	if i := strings.Index(text[off+n:], "\n\n"); i >= 0 {
		to = off + n + i
	}
	return text[from:to]
}

// inQuotes reports whether byte off of text lies inside a quotation opened
// earlier in its paragraph: curly quotes and corner brackets nest, a
// straight double quote opens and closes in turn (水浒传's 施恩道："…。…。"),
// and so does a straight single quote in Chinese text (劝道：'…'), where it
// is no apostrophe.
func inQuotes(text string, off int, zh bool) bool {
	from := strings.LastIndex(text[:off], "\n") + 1
	depth, straight, single := 0, false, false
	for _, r := range text[from:off] {
		switch r {
		case '“', '「', '『':
			depth++
		case '”', '」', '』':
			depth = max(0, depth-1)
		case '"':
			straight = !straight
		case '\'':
			single = single != zh
		}
	}
	return depth > 0 || straight || single
}

// zhVerse reports a line of verse: two clauses or more, all of five or all
// of seven characters (凡鸟偏从末世来，都知爱慕此生才; 边关多荷戟，宜瑞不宜多). A
// novel's poems are no rules; an expository book's verse (滴天髓) is never
// asked.
func zhVerse(s string) bool {
	cl := clausesOf(strings.TrimRight(s, "。！；;!.　 "))
	if len(cl) < 2 {
		return false
	}
	n := runeLen(trimClause(cl[0].Text))
	if n != 5 && n != 7 {
		return false
	}
	for _, c := range cl[1:] {
		if runeLen(trimClause(c.Text)) != n {
			return false
		}
	}
	return true
}
