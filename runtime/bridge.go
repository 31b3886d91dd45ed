package runtime

import (
	"context"
	"slices"
	"sort"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/vibelife/vibe/llm"
	"github.com/vibelife/vibe/skills"
)

// QueryLanguage returns the language of a question as search sees it:
// "zh" unless the question is written mostly in another script than Han;
// then, by its function words, the Latin-script language it is written in
// (latinLanguage: "es" for "¿Cuántas horas de licencia acumulo?"), "en"
// when no other language's profile claims it.
func QueryLanguage(q string) string {
	if foreignQuery(q) {
		return latinLanguage(q)
	}
	return langZH
}

// TextLanguage returns the language of a text written in it (a skill's
// SKILL.md, a sample of the converted sources): "zh" when Han characters
// weigh as much as a fifth of its words, else its Latin-script language
// (latinLanguage, "en" unless another language's words outnumber
// English's); "" when it holds no letter at all.
func TextLanguage(text string) string {
	han, letters := scripts(text)
	switch {
	case han == 0 && letters == 0:
		return ""
	case han*3 >= letters/5 && han > 0:
		return langZH
	}
	return latinLanguage(text)
}

// Glossary is a theme's term table (knowledge/glossary.yaml) prepared for
// carrying questions over to the sources' words: each term with its
// aliases, tokenised once. It is read-only and safe for concurrent use.
type Glossary struct {
	entries []glossEntry
	// charWords maps a word (phraseTokens) to the Han characters the
	// glossary's Characters name by it (the user's dictionary), each with
	// the place of the first gloss holding it: a term is named by as many
	// consecutive words, one per character.
	charWords map[string]map[rune]int
	// charOf maps a word to the characters whose first glosses
	// (primaryGlosses) are that one word: "winter" 冬, "tomb" 墓.
	charOf map[string][]rune
	// charPinyin maps a toneless syllable to the characters the
	// Characters table gives it as pinyin.
	charPinyin map[string]map[rune]bool
	// charPhrase maps a phrasal verb a gloss is ("give up", the verb in
	// charStem's form and its particle) to the characters it glosses,
	// each with the place of that gloss; phraseOf to those it is one of
	// the first glosses of (as charOf).
	charPhrase map[string]map[rune]int
	phraseOf   map[string][]rune
	// wholeTerms leaves out of Terms the single characters words are
	// carried over as, keeping the terms made of them (get_rules).
	wholeTerms bool
}

// primaryGlosses is how many of a character's first glosses name it alone
// (charOf): later ones are rarer senses.
const primaryGlosses = 3

// glossEntry is a glossary term with its phrases tokenised.
type glossEntry struct {
	skills.GlossaryTerm
	// names are the term, its aliases, English renderings and pinyin.
	names   []string
	phrases [][]string
	// weak[i] is set when phrases[i] is an English rendering of a mined
	// entry: a dictionary's gloss, not the field's translation (地位
	// "status"), which names the term less surely than the field's.
	weak []bool
	// forms are the phrases in matchForm, which a question is matched
	// against in Terms; formRank[i] is 1 for a weak phrase, else 0.
	forms    [][]string
	formRank []int
}

// NewGlossary prepares g for [Glossary.Terms].
func NewGlossary(g skills.Glossary) *Glossary {
	out := &Glossary{}
	for _, t := range g.Terms {
		e := glossEntry{GlossaryTerm: t, names: t.Names()}
		for _, p := range e.names {
			if tok := nameTokens(p); len(tok) > 0 {
				weak := t.From == skills.FromMined && slices.ContainsFunc(t.English, func(x string) bool { return strings.EqualFold(x, p) })
				e.phrases = append(e.phrases, tok)
				e.weak = append(e.weak, weak)
				rank := 0
				if weak {
					rank = 1
				}
				e.forms = append(e.forms, matchForms(tok))
				e.formRank = append(e.formRank, rank)
			}
		}
		out.entries = append(out.entries, e)
	}
	chars := make([]string, 0, len(g.Characters))
	for c := range g.Characters {
		chars = append(chars, c)
	}
	sort.Strings(chars)
	for _, c := range chars {
		r, n := utf8.DecodeRuneInString(c)
		if n != len(c) || !unicode.Is(unicode.Han, r) {
			continue
		}
		r = foldVariant(r)
		index := func(tok string, rank int) {
			if out.charWords == nil {
				out.charWords = map[string]map[rune]int{}
				out.charOf = map[string][]rune{}
				out.charPinyin = map[string]map[rune]bool{}
			}
			if out.charWords[tok] == nil {
				out.charWords[tok] = map[rune]int{}
			}
			if old, ok := out.charWords[tok][r]; !ok || rank < old {
				out.charWords[tok][r] = rank
			}
		}
		e := g.Characters[c]
		for rank, w := range e.English {
			var toks []string
			for _, tok := range phraseTokens(w) {
				if !hasHan(tok) && !charStopWords[tok] {
					toks = append(toks, charStem(tok))
				}
			}
			for _, tok := range toks {
				index(tok, rank)
				// A gloss's word counts by the word it derives from
				// too ("official" is office, as "officer" is), to
				// name a term word by word, never to carry a word
				// over as a character.
				for _, d := range derivedWords(tok, true) {
					index(d, rank)
				}
			}
			if len(toks) == 1 && len(phraseTokens(w)) == 1 && rank < primaryGlosses && !slices.Contains(out.charOf[toks[0]], r) {
				out.charOf[toks[0]] = append(out.charOf[toks[0]], r)
			}
			if key, ok := phrasalGloss(w); ok {
				if out.charPhrase == nil {
					out.charPhrase = map[string]map[rune]int{}
					out.phraseOf = map[string][]rune{}
				}
				if out.charPhrase[key] == nil {
					out.charPhrase[key] = map[rune]int{}
				}
				if old, ok := out.charPhrase[key][r]; !ok || rank < old {
					out.charPhrase[key][r] = rank
				}
				if rank < primaryGlosses && !slices.Contains(out.phraseOf[key], r) {
					out.phraseOf[key] = append(out.phraseOf[key], r)
				}
			}
		}
		for _, py := range e.Pinyin {
			if tok := strings.ToLower(strings.TrimSpace(py)); tok != "" {
				index(tok, primaryGlosses)
				if out.charPinyin[tok] == nil {
					out.charPinyin[tok] = map[rune]bool{}
				}
				out.charPinyin[tok][r] = true
			}
		}
	}
	return out
}

// charStem takes a word one step further than phraseTokens' stem for
// matching a character's glosses: "killings" and "killing" are "kill",
// "illnesses" "illness", and the irregular plurals of -man and child are
// their singulars ("noblemen" nobleman, "children" child).
func charStem(w string) string {
	switch {
	case w == "children":
		return "child"
	case w == "men" || len(w) >= 5 && strings.HasSuffix(w, "men"):
		return w[:len(w)-3] + "man"
	}
	w = skills.Stem(w)
	if strings.HasSuffix(w, "sse") {
		w = w[:len(w)-1]
	}
	return w
}

// minDerivedBase is the shortest word a derived word is taken back to
// (derivedWords): shorter ones are too often another word.
const minDerivedBase = 3

// derivedWords returns the words w (in charStem's form) may derive from
// by an English derivational suffix, with the -i/-y and the e the
// suffix took ("emptiness" empty, "weakness" weak, "nobility" noble,
// "purity" pure, "glorious" glory, "harmful" harm). With shifts, also the
// suffixes that make another kind of word of its base ("officer" and
// "official" office, "killer" kill, "combination" combine, "punishment"
// punish, "weakly" weak): those name a term word by word (as both the
// question's and the gloss's word), never a lone character. The
// words are candidates: only those a gloss holds are looked up.
func derivedWords(w string, shifts bool) []string {
	if hasHan(w) {
		return nil
	}
	var out []string
	add := func(b string) {
		if len(b) >= minDerivedBase && b != w && !slices.Contains(out, b) {
			out = append(out, b)
		}
	}
	// base adds the word before a suffix of n letters, with the forms
	// its end takes before it: empti- empty, nobil- noble, pur- pure.
	base := func(n int) {
		b := w[:len(w)-n]
		add(b)
		if strings.HasSuffix(b, "i") {
			add(b[:len(b)-1] + "y")
		}
		if strings.HasSuffix(b, "il") {
			add(b[:len(b)-2] + "le")
		}
		add(b + "e")
	}
	suffixes := []string{"ness", "ity", "ful", "ous"}
	if shifts {
		// -ly makes the adverbs of a question's frame ("really",
		// "usually"), no term's character.
		suffixes = append(suffixes, "ly", "er", "ial", "al", "ation", "ion", "ment")
	}
	for _, suf := range suffixes {
		if len(w) > len(suf)+minDerivedBase-1 && strings.HasSuffix(w, suf) {
			base(len(suf))
		}
	}
	return out
}

// phrasalParticles are the particles that make a verb before them a
// phrasal verb (phrasalAt). Not "back", "over" or "through": a question's
// "cold back" or "pain through to the back" holds nouns and prepositions,
// no phrasal verb.
var phrasalParticles = map[string]bool{"up": true, "down": true, "out": true, "off": true, "into": true, "onto": true, "away": true}

// phrasalGloss returns the key of a gloss that is a phrasal verb, a verb
// and one of phrasalParticles ("give up", "fall into"): the verb in
// charStem's form, a space and the particle.
func phrasalGloss(gloss string) (string, bool) {
	f := strings.Fields(strings.ToLower(gloss))
	if len(f) != 2 || !phrasalParticles[f[1]] || charStopWords[f[0]] || hasHan(f[0]) {
		return "", false
	}
	return charStem(f[0]) + " " + f[1], true
}

// phrasalAt returns the key of the phrasal verb tokens[k:k+2] are (the
// verb and one of phrasalParticles, as phrasalGloss keys a gloss), and
// whether they are one.
func phrasalAt(tokens []string, k int) (string, bool) {
	if k+1 >= len(tokens) || !phrasalParticles[tokens[k+1]] || bridgeParticles[tokens[k]] || charStopWords[tokens[k]] || hasHan(tokens[k]) {
		return "", false
	}
	return charStem(tokens[k]) + " " + tokens[k+1], true
}

// wordGloss is what one word of a question glosses (wordGlosses): the
// characters, each with the place of the gloss holding it, the word taken
// as it stands (charStem) or, when no gloss holds it, by the words it
// derives from (derivedWords, one place lower; loose is set); and, for a
// word no gloss holds, the closed compounds it splits into.
type wordGloss struct {
	chars  map[rune]int
	loose  bool
	halves []compoundHalves
}

// compoundHalves are the two words a closed compound splits into, each
// at least minDerivedBase letters, and the characters each glosses
// ("nobleman": noble, man).
type compoundHalves struct {
	left, right   string
	lefts, rights map[rune]int
}

// glossOf returns the characters the word w glosses (charWords), as it
// stands or, when no gloss holds it, by the words it derives from, one
// place lower (loose).
func (g *Glossary) glossOf(w string) (chars map[rune]int, loose bool) {
	w = charStem(w)
	if m := g.charWords[w]; m != nil || hasHan(w) {
		return m, false
	}
	for _, d := range derivedWords(w, true) {
		for r, k := range g.charWords[d] {
			if old, ok := chars[r]; !ok || k+1 < old {
				if chars == nil {
					chars = map[rune]int{}
				}
				chars[r] = k + 1
			}
		}
	}
	return chars, chars != nil
}

// wordGlosses returns what each of the question's tokens glosses, looked
// up once a question.
func (g *Glossary) wordGlosses(tokens []string) []wordGloss {
	out := make([]wordGloss, len(tokens))
	for j, tok := range tokens {
		out[j].chars, out[j].loose = g.glossOf(tok)
		w := charStem(tok)
		if g.charWords[w] != nil || hasHan(w) {
			continue
		}
		for p := minDerivedBase; p+minDerivedBase <= len(w); p++ {
			l, _ := g.glossOf(w[:p])
			if l == nil {
				continue
			}
			if r, _ := g.glossOf(w[p:]); r != nil {
				out[j].halves = append(out[j].halves, compoundHalves{w[:p], w[p:], l, r})
			}
		}
	}
	return out
}

// compoundChars returns whether a closed compound the word splits into
// (wordGloss.halves) glosses r1 and r2 in order ("nobleman" noble + man
// for 贵人), and the sum of the halves' places among the glosses. Halves
// in English only: a word that is pinyin joined ("shaoyin") names its
// term by its pinyin, not as a compound.
func (g *Glossary) compoundChars(wg wordGloss, r1, r2 rune) (bool, int) {
	best := -1
	for _, h := range wg.halves {
		if g.charPinyin[h.left][r1] || g.charPinyin[h.right][r2] {
			continue
		}
		k1, ok1 := h.lefts[r1]
		k2, ok2 := h.rights[r2]
		if ok1 && ok2 && (best < 0 || k1+k2 < best) {
			best = k1 + k2
		}
	}
	return best >= 0, best
}

// carriedChars returns the characters the question's word w is carried
// over as: those whose first glosses are the word (charOf), or, when none
// is, a word it derives from without changing its kind ("emptiness" 空 by
// empty, "weakness" 弱).
func (g *Glossary) carriedChars(w string) []rune {
	w = charStem(w)
	if rs := g.charOf[w]; len(rs) > 0 || g.charWords[w] != nil {
		return rs
	}
	for _, d := range derivedWords(w, false) {
		if rs := g.charOf[d]; len(rs) > 0 {
			return rs
		}
	}
	return nil
}

// charStopWords are English words that gloss a character in a sense no
// question means (弟 "I" in letters, 未 "not yet", 有 "have"): a question's
// frame, never a term's character; with them the words of its idioms,
// "what does it mean" (贱 "mean, low"), "what is it like" (喜 "like,
// love"), "what kind of" (种 "kind").
var charStopWords = map[string]bool{}

func init() {
	for _, w := range strings.Fields("i me my we us our you your he him his she her they them their it one all some any no not yet have has had will would shall should can could may might must do doe did make get so very too also then there here now just only more most much many such own same other be been being am was were mean meant like kind sort") {
		charStopWords[w] = true
	}
}

// matchForm is the form a word of a question and a word of a glossary
// name (both from phraseTokens) are compared in, so that a question's
// inflection of a rendering names it: the English endings stripped once
// more ("killings" and "killing" are "kill"), then a final e and a doubled
// final consonant ("travelling" and "traveling" are "travel", "combining"
// and "combine" "combin"), and the plurals of -man and child ("noblemen",
// "children"). Words of Han characters and pinyin are kept as they are.
func matchForm(w string) string {
	if w == "" || hasHan(w) {
		return w
	}
	switch {
	case w == "children":
		return "child"
	case len(w) >= 5 && strings.HasSuffix(w, "men"):
		return w[:len(w)-3] + "man"
	}
	w = skills.Stem(w)
	if n := len(w); n > 3 && w[n-1] == 'e' {
		w = w[:n-1]
	}
	if n := len(w); n > 3 && w[n-1] == w[n-2] && !strings.ContainsRune("aeiouy", rune(w[n-1])) {
		w = w[:n-1]
	}
	return w
}

// matchForms maps matchForm over the tokens.
func matchForms(tokens []string) []string {
	out := make([]string, len(tokens))
	for i, t := range tokens {
		out[i] = matchForm(t)
	}
	return out
}

// maxComposedRunes is the longest term named word by word (composedAt).
const maxComposedRunes = 4

// composedAt reports whether the words of tokens from s name the Han term,
// one word per character (charWords): "seven killings" is 七杀, "Jia wood"
// 甲木; and how far down the characters' glosses the words were found, the
// less the better ("eating god" is 食神 by 食's first gloss, not 用神 by
// 用's "eat or drink"). Terms of two to maxComposedRunes characters. A
// word may also stand for its character by the word it derives from
// (wordGlosses, glossOf), a closed compound for two characters (compoundChars:
// "nobleman" 贵人) and a phrasal verb for the one its gloss is
// (charPhrase: "giving up"); n is how many tokens the term took, and
// loose is set when one of those three named it.
func (g *Glossary) composedAt(tokens []string, wg []wordGloss, s int, term []rune) (ok bool, rank, n int, loose bool) {
	if len(term) < 2 || len(term) > maxComposedRunes || s >= len(tokens) {
		return false, 0, 0, false
	}
	j := s
	for i := 0; i < len(term); {
		if j >= len(tokens) {
			return false, 0, 0, false
		}
		r := foldVariant(term[i])
		if key, ok := phrasalAt(tokens, j); ok {
			if k, ok := g.charPhrase[key][r]; ok {
				rank += k
				i, j, loose = i+1, j+2, true
				continue
			}
		}
		if k, ok := wg[j].chars[r]; ok {
			rank += k
			loose = loose || wg[j].loose
			i, j = i+1, j+1
			continue
		}
		if i+1 < len(term) {
			if ok, k := g.compoundChars(wg[j], r, foldVariant(term[i+1])); ok {
				rank += k + 1
				i, j, loose = i+2, j+1, true
				continue
			}
		}
		return false, 0, 0, false
	}
	return true, rank, j - s, loose
}

// nameTokens are the tokens a glossary name is matched by (phraseTokens),
// none when small words left out would leave a phrase of several words
// one word: "ji you" (己酉's pinyin) is not "ji", which "Tai Ji" holds.
func nameTokens(name string) []string {
	tok := phraseTokens(name)
	if len(tok) == 1 && len(strings.Fields(name)) > 1 && !hasHan(name) {
		return nil
	}
	return tok
}

// Len is the number of terms; a nil Glossary has none.
func (g *Glossary) Len() int {
	if g == nil {
		return 0
	}
	return len(g.entries)
}

// Language returns the language of the sources the glossary was written
// for, read from its terms (each term as the sources write it): "zh" when
// at least half are Chinese, else "en"; "" for an empty glossary.
func (g *Glossary) Language() string {
	if g.Len() == 0 {
		return ""
	}
	han := 0
	for _, e := range g.entries {
		if hasHan(e.Term) {
			han++
		}
	}
	if 2*han >= len(g.entries) {
		return langZH
	}
	return langEN
}

// SourceLanguage returns the language of a theme's sources: the glossary's
// (Glossary.Language), else that of text written in it (TextLanguage: the
// skill's SKILL.md, a sample of the converted sources); "" when neither
// tells.
func SourceLanguage(g *Glossary, text string) string {
	if l := g.Language(); l != "" {
		return l
	}
	return TextLanguage(text)
}

// Bridged says how a question was carried over to the language of the
// sources before it was searched.
type Bridged struct {
	// SearchedAs is the text searched besides the question when the
	// question is in another language than the sources: the model's
	// rewrite, the glossary's terms, or the theme's words a Chinese
	// question's words gloss (reverseWords); BridgedBy says which ("llm",
	// "glossary", "words"). Both are empty when nothing was added.
	SearchedAs, BridgedBy string
	// Unbridged is set when the question is in another language than the
	// sources and could not be carried over (no model, or its rewrite
	// failed, and no glossary term it names): the search matches its own
	// words only.
	Unbridged bool
	// QueryLang and SourceLang are the languages of the question and of
	// the sources ("zh", "en"; SourceLang "" when unknown).
	QueryLang, SourceLang string
}

// Text returns the text to search for query: the question, followed by
// what it was carried over as.
func (b Bridged) Text(query string) string {
	if b.SearchedAs == "" {
		return query
	}
	return query + " " + b.SearchedAs
}

// Bridger carries a question over to the language of the sources it is
// searched in: with a model, the model's rewrite (cached per question and
// language); else the glossary's terms the question names; else it is
// flagged Unbridged. The runtime's search_knowledge and `vibe search` use
// it alike. A Bridger is safe for concurrent use; the zero value works
// offline (no Model).
type Bridger struct {
	// Model rewrites questions (nil: offline, the glossary only). A model
	// that also answers single requests from a response cache (llm.Client
	// with a cache directory: its Chat method) is asked that way, so a
	// question rewritten once costs no request in a later process either.
	Model Model
	// ModelName is passed in requests (empty: the client's default).
	ModelName string
	// Dictionary is Config.Dictionary: the user's dictionary's English
	// renderings of a Chinese word (nil: none).
	Dictionary func(word string) []string

	rewrites rewriteCache
}

// Bridge returns how query is to be searched in sources written in
// sourceLang, with glossary g (nil: none). A question in the sources'
// language, or sources of unknown language (""), are searched as they
// are. theme names the theme (or skill) searched: the glossary entry
// naming it ("in bazi" is 八字, with its aliases 命盘, 看命 …) is
// not carried over, since every passage of the theme is about it and its
// terms only pull passages about charts in general above the one asked
// about (docs/retrieval.md).
func (b *Bridger) Bridge(ctx context.Context, query, sourceLang string, g *Glossary, theme ...string) Bridged {
	res := Bridged{QueryLang: QueryLanguage(query), SourceLang: sourceLang}
	if sourceLang == "" || res.QueryLang == sourceLang {
		return res
	}
	if rw := b.rewrite(ctx, query, sourceLang); rw != "" {
		res.SearchedAs, res.BridgedBy = rw, "llm"
	} else if terms := g.Terms(query, sourceLang, theme...); len(terms) > 0 {
		res.SearchedAs, res.BridgedBy = strings.Join(terms, " "), "glossary"
	} else if words := b.glossedWords(query, res.QueryLang, sourceLang, g); len(words) > 0 {
		res.SearchedAs, res.BridgedBy = strings.Join(words, " "), bridgedByWords
	} else {
		res.Unbridged = true
	}
	return res
}

// glossedWords returns the glossary's words a Chinese question searched in
// English sources glosses (reverseWords, knownWords), and none for any
// other question or without a glossary, which is told before the
// question's characters are glossed: glossing them reads the user's
// dictionary and, once a process, the built-in table of glosses (about 20
// ms), which a question that cannot be carried over so need not pay.
func (b *Bridger) glossedWords(query, queryLang, sourceLang string, g *Glossary) []string {
	if queryLang != langZH || sourceLang != langEN || g.Len() == 0 {
		return nil
	}
	return g.knownWords(reverseWords(query, b.Dictionary))
}

// rewriteCache keeps the model's rewrites of questions into a theme's
// language, keyed by the language and the question, so a question asked
// again costs no request. Bounded: it is emptied when full.
type rewriteCache struct {
	mu sync.Mutex
	m  map[string]string
}

const rewriteCacheSize = 4096

func (c *rewriteCache) get(key string) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.m[key]
	return v, ok
}

func (c *rewriteCache) put(key, v string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= rewriteCacheSize {
		c.m = map[string]string{}
	}
	c.m[key] = v
}

// rewritePrompt asks for a search query, not an answer. %s is the
// sources' language.
const rewritePrompt = "You turn a user's question into a search query for a full-text index of books written in %s. " +
	"Reply with the query only, in %s, on one line: the technical terms of the field as those books write them " +
	"(a classical book's own terms, not a modern paraphrase), no explanation, no quotes."

// cachedModel is a model that answers a single request from a response
// cache when it can (llm.Client.Chat).
type cachedModel interface {
	Chat(ctx context.Context, req llm.Request) (llm.Response, error)
}

// rewrite asks the model to rewrite query into lang (the sources'
// language), once per query and language; "" without a model or when the
// request fails (the caller falls back to the glossary).
func (b *Bridger) rewrite(ctx context.Context, query, lang string) string {
	if b.Model == nil {
		return ""
	}
	key := lang + "\x00" + query
	if v, ok := b.rewrites.get(key); ok {
		return v
	}
	name := LanguageName(lang)
	if lang == langZH {
		name = "Chinese (简体中文)"
	}
	temp := 0.0
	req := llm.Request{
		Stage: "serve.rewrite", Model: b.ModelName, Temperature: &temp, MaxTokens: 200,
		Messages: []llm.Message{
			{Role: llm.RoleSystem, Content: strings.ReplaceAll(rewritePrompt, "%s", name)},
			{Role: llm.RoleUser, Content: query},
		},
	}
	var resp llm.Response
	var err error
	if m, ok := b.Model.(cachedModel); ok {
		resp, err = m.Chat(ctx, req)
	} else {
		resp, err = b.Model.Stream(ctx, req, func(llm.Delta) error { return nil })
	}
	if err != nil {
		return ""
	}
	rw := strings.TrimSpace(strings.Trim(strings.TrimSpace(resp.Content), "\"“”'`"))
	if i := strings.IndexByte(rw, '\n'); i >= 0 {
		rw = strings.TrimSpace(rw[:i])
	}
	if r := []rune(rw); len(r) > 200 {
		rw = string(r[:200])
	}
	// A rewrite still in the question's language is no rewrite.
	if rw == "" || QueryLanguage(rw) != lang {
		return ""
	}
	b.rewrites.put(key, rw)
	return rw
}

// themeLanguage is the language a question is searched in for a skill's
// sources: the question's own when the skill's rules (quoted from the
// sources) are written in it often enough (a theme of English and Chinese
// books answers either language as asked, with no rewrite), else the
// sources' language read from what the build wrote in it: the glossary's
// terms, else what the rules state, else SKILL.md. SKILL.md comes last: its
// template carries bilingual labels (核心 / Core), so an English skill's
// SKILL.md can hold enough Han characters to read as Chinese.
func (a *Agent) themeLanguage(sk *skills.Skill, query string) string {
	var g *Glossary
	var shares map[string]float64
	if idx, err := a.rules.get(sk); err == nil {
		g = idx.glossary
		shares = idx.langShares
	}
	if query != "" && shares[QueryLanguage(query)] >= mixedThemeShare {
		return QueryLanguage(query)
	}
	best, bestShare := "", 0.0
	for l, sh := range shares {
		if sh > bestShare || (sh == bestShare && l < best) {
			best, bestShare = l, sh
		}
	}
	if l := g.Language(); l != "" {
		// The glossary tells Han from Latin script only: Latin-script
		// rules mostly in another language than English (Spanish
		// sources) say which.
		if l == langEN && best != "" && best != langZH {
			return best
		}
		return l
	}
	if best != "" {
		return best
	}
	if l := TextLanguage(sk.Description + sk.Body); l != "" {
		return l
	}
	return langEN
}

// mixedThemeShare is the share of a skill's rules written in a language
// from which the skill counts as written in it too.
const mixedThemeShare = 0.15

// foreignQuery reports whether a query is written mostly in another script
// than Han: a letter run is about five letters a word, and a word weighs as
// much as a character or two of Chinese.
func foreignQuery(query string) bool {
	han, letters := scripts(query)
	return letters > 0 && han*3 < letters/5
}

// scripts counts the Han characters of s and its other letters.
func scripts(s string) (han, letters int) {
	for _, r := range s {
		switch {
		case unicode.Is(unicode.Han, r):
			han++
		case unicode.IsLetter(r):
			letters++
		}
	}
	return han, letters
}

// Terms returns the terms a question names through the glossary, in the
// sources' language lang: each named entry's Chinese term and aliases
// ("zh"), or its English ones. Where phrases overlap the longest wins
// ("four pillars of destiny" is 四柱, not also 命格 for "destiny"; "hurting
// officer meets officer" is 伤官见官, not also 伤官 and 正官). A Chinese
// term made of the named terms, in order, is named too (食神 + 制 + 杀
// names 食神制杀), as the classics write a relation between two terms as
// one. A name matches the question's words in any inflection (matchForm:
// "hurting officers" names Hurt Officer), and a relation's rendering also
// worded with another verb (relationSpans), less surely than the name
// itself. Words rendering several entries as surely name each, the
// shorter terms first, but for a term holding one named
// (maxSharedRendering). Entries whose term or an alias is one of omit (case-insensitive)
// are left out. None for a nil glossary or a question that names no term.
func (g *Glossary) Terms(text, lang string, omit ...string) []string {
	return g.terms(text, lang, nil, omit...)
}

// namedSpan is an entry a question names by words of its own (not a
// compound of named terms, nor a carried character): the entry, where the
// words naming it start among the question's tokens (phraseTokens) and
// how many they are, and how surely (0: by one of its own names; more: a
// dictionary's rendering, a relation worded otherwise, or 1 plus the
// places of the characters' glosses the words were found at).
type namedSpan struct {
	entry              *glossEntry
	start, words, rank int
}

// terms is Terms, telling spans (when not nil) of each entry the question
// names by its own words.
func (g *Glossary) terms(text, lang string, spans func(namedSpan), omit ...string) []string {
	if g.Len() == 0 {
		return nil
	}
	han := lang == langZH
	tokens := phraseTokens(text)
	forms := matchForms(tokens)
	// loose is set for a term composed by a derived word, a closed
	// compound or a phrasal verb (composedAt): the router does not
	// take it (spans).
	type match struct {
		entry, start, n, rank int
		loose                 bool
	}
	var ms []match
	var wg []wordGloss
	if han && len(g.charWords) > 0 {
		wg = g.wordGlosses(tokens)
	}
	for i, e := range g.entries {
		if namesOneOf(e, omit) {
			continue
		}
		for k, p := range e.forms {
			for s := 0; s+len(p) <= len(forms); s++ {
				if equalTokens(forms[s:s+len(p)], p) {
					ms = append(ms, match{entry: i, start: s, n: len(p), rank: e.formRank[k]})
				}
			}
			for _, sp := range relationSpans(forms, p) {
				ms = append(ms, match{entry: i, start: sp[0], n: sp[1], rank: e.formRank[k] + 2})
			}
		}
		if han && len(g.charWords) > 0 {
			for _, n := range e.names {
				if !isHanOnly(n) {
					continue
				}
				term := []rune(n)
				for s := range tokens {
					if ok, rank, n, loose := g.composedAt(tokens, wg, s, term); ok {
						ms = append(ms, match{i, s, n, 1 + rank, loose})
					}
				}
			}
		}
	}
	sort.SliceStable(ms, func(i, j int) bool {
		// A term composed loosely comes after every other match, so
		// that it never takes the words of a name ("shaoyin disease"
		// is not 少阴病 by shao + yin over 少阴 by its own pinyin).
		if ms[i].loose != ms[j].loose {
			return !ms[i].loose
		}
		if ms[i].n != ms[j].n {
			return ms[i].n > ms[j].n
		}
		if ms[i].start != ms[j].start {
			return ms[i].start < ms[j].start
		}
		if ms[i].rank != ms[j].rank {
			return ms[i].rank < ms[j].rank
		}
		// The same words naming two entries as surely: the shorter term
		// first, the term itself before a heading about it (食神, 论食神).
		return utf8.RuneCountInString(g.entries[ms[i].entry].Term) < utf8.RuneCountInString(g.entries[ms[j].entry].Term)
	})
	covered := make([]bool, len(tokens))
	var named []match
	// shared lists the entries a span's words ({start, n}) name by one of
	// their own names (rank 0): a rendering the field gives several terms
	// names each of them, up to maxSharedRendering (a woman's chart is 女命
	// and 妇人总诀), since it does not tell which is meant; not a term
	// holding one named (论五行, 五行总 beside 五行), a heading about it
	// whose names would only outweigh the question's other terms.
	shared := map[[2]int][]int{}
	holdsNamed := func(e int, es []int) bool {
		t := foldText(g.entries[e].Term)
		return slices.ContainsFunc(es, func(o int) bool { return strings.Contains(t, foldText(g.entries[o].Term)) })
	}
	for _, m := range ms {
		free := true
		for k := m.start; k < m.start+m.n; k++ {
			free = free && !covered[k]
		}
		span := [2]int{m.start, m.n}
		if !free {
			if es, ok := shared[span]; ok && m.rank == 0 && len(es) < maxSharedRendering && !slices.Contains(es, m.entry) && !holdsNamed(m.entry, es) {
				shared[span] = append(es, m.entry)
				named = append(named, m)
			}
			continue
		}
		if m.rank == 0 {
			shared[span] = []int{m.entry}
		}
		for k := m.start; k < m.start+m.n; k++ {
			covered[k] = true
		}
		named = append(named, m)
	}
	sort.SliceStable(named, func(i, j int) bool { return named[i].start < named[j].start })
	var out []string
	seen := map[string]bool{}
	add := func(e glossEntry) {
		for _, p := range e.names {
			if hasHan(p) == han && !seen[p] {
				seen[p] = true
				out = append(out, p)
			}
		}
	}
	chosen := map[int]bool{}
	for _, m := range named {
		if !chosen[m.entry] {
			chosen[m.entry] = true
			add(g.entries[m.entry])
		}
		if spans != nil && !m.loose {
			spans(namedSpan{entry: &g.entries[m.entry], start: m.start, words: m.n, rank: m.rank})
		}
	}
	// The Chinese forms named so far, to build compound terms from.
	var pieces []string
	for _, p := range out {
		if utf8.RuneCountInString(p) >= 1 && isHanOnly(p) {
			pieces = append(pieces, foldText(p))
		}
	}
	for i, e := range g.entries {
		if !han {
			break
		}
		if chosen[i] || !isHanOnly(e.Term) || utf8.RuneCountInString(e.Term) < 3 {
			continue
		}
		if composedOf(foldText(e.Term), pieces, 0) >= 2 {
			chosen[i] = true
			add(e)
		}
	}
	// A word no term takes whose first glosses name a character of the
	// glossary's terms is carried over as that character ("winter" 冬,
	// "tomb" 墓, "father" 父), after the terms: the passages on a term
	// written with it (三冬丙火) come up among those on the term. Not when
	// the question names a term by one of its names: the glossary's
	// renderings say what it asks about better than single characters
	// (a dictionary's rendering of a mined term does not count).
	rendered := slices.ContainsFunc(named, func(m match) bool { return m.rank == 0 })
	if han && len(g.charOf) > 0 && !rendered {
		for k := 0; k < len(tokens); k++ {
			if covered[k] {
				continue
			}
			rs := g.carriedChars(tokens[k])
			// A phrasal verb is carried over as the character its
			// gloss is ("give up"), or not at all: its verb alone
			// means something else ("falls into" is not 秋, fall).
			if key, ok := phrasalAt(tokens, k); ok && !covered[k+1] {
				rs = g.phraseOf[key]
				k++
			}
			for _, r := range rs {
				if c := string(r); !seen[c] {
					seen[c] = true
					out = append(out, c)
				}
			}
		}
		// A term of the glossary holding a named term and the carried
		// characters, all its characters but one (三冬丙火 for 丙火 and
		// 冬: "Bing fire born in winter"), is named too.
		var whole, chars []string
		for _, p := range out {
			if !isHanOnly(p) {
				continue
			}
			if utf8.RuneCountInString(p) == 1 {
				chars = append(chars, p)
			} else {
				whole = append(whole, foldText(p))
			}
		}
		for i, e := range g.entries {
			if len(chars) == 0 || chosen[i] || !isHanOnly(e.Term) || utf8.RuneCountInString(e.Term) < 3 {
				continue
			}
			t := foldText(e.Term)
			for _, w := range whole {
				if !strings.Contains(t, w) {
					continue
				}
				rest := strings.Replace(t, w, "", 1)
				left := utf8.RuneCountInString(rest)
				for _, c := range chars {
					if strings.Contains(rest, c) {
						left--
					}
				}
				if left <= 1 && left < utf8.RuneCountInString(rest) {
					chosen[i] = true
					add(e)
					break
				}
			}
		}
		if g.wholeTerms {
			out = slices.DeleteFunc(out, func(p string) bool {
				return slices.Contains(chars, p)
			})
		}
	}
	return out
}

// maxSharedRendering is how many entries one rendering names at most
// (Terms).
const maxSharedRendering = 3

// maxRelationGap is how many words a question may put between the two
// parts of a relation's rendering (relationSpans).
const maxRelationGap = 3

// relationSpans returns the spans ({start, length}) of forms where the
// rendering p of a relation between two terms is worded with another verb
// or none: its words before one word and after it, each part found in
// order with up to maxRelationGap words between ("Hurting Officer meets
// Direct Officer" in "a hurting officer chart runs into the direct
// officer"), or with nothing left out of p and words put between. Only
// English renderings whose two parts hold two words each at least, so
// that each part names a term ("Day Master sitting on Wealth" is not
// "my day master is weak but there is a lot of wealth"); the exact phrase
// is not one of them.
func relationSpans(forms, p []string) [][2]int {
	if len(p) < 4 || slices.ContainsFunc(p, hasHan) {
		return nil
	}
	var out [][2]int
	for i := 1; i < len(p); i++ {
		for j := i; j <= i+1 && j < len(p); j++ {
			left, right := p[:i], p[j:]
			if min(len(left), len(right)) < 2 {
				continue
			}
			for s := 0; s+len(left) <= len(forms); s++ {
				if !equalTokens(forms[s:s+len(left)], left) {
					continue
				}
				for gap := 0; gap <= maxRelationGap; gap++ {
					t := s + len(left) + gap
					if t+len(right) > len(forms) {
						break
					}
					if gap == j-i && equalTokens(forms[s+len(left):t], p[i:j]) {
						continue // the exact phrase
					}
					if equalTokens(forms[t:t+len(right)], right) {
						out = append(out, [2]int{s, t + len(right) - s})
						break
					}
				}
			}
		}
	}
	return out
}

// namesOneOf reports whether e's term or one of its aliases is one of omit,
// ignoring case.
func namesOneOf(e glossEntry, omit []string) bool {
	for _, o := range omit {
		if o == "" {
			continue
		}
		for _, a := range e.names {
			if strings.EqualFold(a, o) {
				return true
			}
		}
	}
	return false
}

func equalTokens(a, b []string) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return len(a) == len(b)
}

// isHanOnly reports whether s is Han characters only.
func isHanOnly(s string) bool {
	for _, r := range s {
		if !unicode.Is(unicode.Han, r) {
			return false
		}
	}
	return s != ""
}

// foldText folds the variant characters of s (foldVariant).
func foldText(s string) string {
	return strings.Map(foldVariant, s)
}

// composedOf returns into how many of pieces s splits (at least one piece
// per part, tried longest first), or 0 when it does not.
func composedOf(s string, pieces []string, depth int) int {
	if s == "" {
		return depth
	}
	best := 0
	for _, p := range pieces {
		if strings.HasPrefix(s, p) && (depth > 0 || p != s) {
			if n := composedOf(s[len(p):], pieces, depth+1); n > 0 && (best == 0 || n < best) {
				best = n
			}
		}
	}
	return best
}
