package curate

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"net/url"
	"path"
	"path/filepath"
	"strings"
	"unicode"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// CredibilityVersion names the way grades are computed; it is recorded with
// each grade and keys the cached agreements.
const CredibilityVersion = "credibility/1"

// Grades, best first, and the scores they start at.
var grades = []struct {
	name string
	min  float64
}{{"A", 0.85}, {"B", 0.70}, {"C", 0.50}, {"D", 0}}

// gradeRank is 0 for A ... 3 for D, -1 for anything else.
func gradeRank(g string) int {
	for i, x := range grades {
		if strings.EqualFold(g, x.name) {
			return i
		}
	}
	return -1
}

// GradeBelow reports whether grade g is worse than floor (both A-D).
func GradeBelow(g, floor string) bool {
	return gradeRank(g) > gradeRank(floor) && gradeRank(floor) >= 0
}

func gradeFor(score float64) string {
	for _, g := range grades {
		if score >= g.min {
			return g.name
		}
	}
	return "D"
}

// sameWorkSimilarity is the estimated Jaccard similarity at or above which
// two texts are taken for the same work, and their passages compared. A
// truncated or noisy edition of a book stays well above it; different books
// on one subject stay below 0.1.
const sameWorkSimilarity = 0.2

// Extracted is a document's text with what its converter noted about it.
type Extracted struct {
	Text string
	// Warnings are the converter's notes (pages without a text layer, a
	// damaged file cut short, a broken encoding).
	Warnings []string
	// NeedsOCR, Partial and Garbled are the converter's verdicts.
	NeedsOCR, Partial, Garbled bool
	// Meta is what the file's own metadata says of the work (an EPUB's
	// package document: dc:title, dc:creator, dc:publisher, dc:date).
	Meta WorkMeta
}

// WorkMeta is what a file's own metadata says of the work; curate.yaml and
// a Markdown file's front matter win over it.
type WorkMeta struct {
	Title     string `json:"title,omitempty"`
	Author    string `json:"author,omitempty"`
	Publisher string `json:"publisher,omitempty"`
	Published string `json:"published,omitempty"`
}

// withWorkMeta fills what curate.yaml and the front matter left empty with
// what the file's metadata says.
func withWorkMeta(p Provenance, m WorkMeta) Provenance {
	for _, f := range []struct {
		dst *string
		v   string
	}{{&p.Title, m.Title}, {&p.Author, m.Author}, {&p.Publisher, m.Publisher}, {&p.Published, m.Published}} {
		if *f.dst == "" {
			*f.dst = f.v
		}
	}
	return p
}

// ExtractDocFunc returns the text of the document at path with the
// converter's notes.
type ExtractDocFunc func(ctx context.Context, path string) (Extracted, error)

// Credibility is the grade of a kept source with the reasons for it.
type Credibility struct {
	// Grade is A (sound) to D (do not rely on it); Score in [0,1] gives it:
	// A at 0.85 and above, B at 0.70, C at 0.50, D below.
	Grade string  `json:"grade"`
	Score float64 `json:"score"`
	// Reasons say, one finding each, what the grade rests on: provenance,
	// text quality, agreement with the other sources of the same work and,
	// with a model, its judgement.
	Reasons []string `json:"reasons"`
	// Agreement is the comparison with each other source of the same work.
	Agreement []Agreement `json:"agreement,omitempty"`
	// Judged is a model's grade; Unjudged says why there is none.
	Judged   *Judgement `json:"judged,omitempty"`
	Unjudged string     `json:"unjudged,omitempty"`
	// Version is [CredibilityVersion].
	Version string `json:"version"`
}

// Agreement compares a source with another source of the same work.
type Agreement struct {
	// With is the other source's origin.
	With string `json:"with"`
	// Compared counts the characters (letters and digits) of aligned
	// passages; Differ those that differ; Blamed those where this source's
	// reading is the less likely.
	Compared int `json:"compared"`
	Differ   int `json:"differ"`
	Blamed   int `json:"blamed"`
	// Examples quote this source's less likely readings.
	Examples []string `json:"examples,omitempty"`
	// Truncated is set when this source stops where the other goes on;
	// Coverage is then how much of the other it covers.
	Truncated bool    `json:"truncated,omitempty"`
	Coverage  float64 `json:"coverage,omitempty"`
}

// Judgement is a model's grade of a source.
type Judgement struct {
	Grade         string `json:"grade"`
	Reason        string `json:"reason"`
	Model         string `json:"model,omitempty"`
	PromptVersion string `json:"prompt_version,omitempty"`
}

// JudgeInput is what a model is shown of a source.
type JudgeInput struct {
	Origin     string
	Provenance Provenance
	// Findings are the measured reasons so far.
	Findings []string
	// Excerpts are passages from the beginning, middle and end.
	Excerpts []string
}

// JudgeFunc asks a model to grade a source.
type JudgeFunc func(ctx context.Context, in JudgeInput) (Judgement, error)

// textSignals are a text's own quality signals and its converter's notes;
// the cache keeps them with the text's statistics.
type textSignals struct {
	// Letters counts letters and digits; Noise the characters that look
	// like OCR noise (a Latin letter or a stray symbol inside Chinese, a
	// digit inside a word, replacement characters).
	Letters       int      `json:"letters"`
	Noise         int      `json:"noise"`
	NoiseExamples []string `json:"noise_examples,omitempty"`
	// CutOff is the end of the last line when that line is a long one that
	// stops mid-sentence.
	CutOff   string   `json:"cut_off,omitempty"`
	Warnings []string `json:"warnings,omitempty"`
	NeedsOCR bool     `json:"needs_ocr,omitempty"`
	Partial  bool     `json:"partial,omitempty"`
	Garbled  bool     `json:"garbled,omitempty"`
}

func isHan(r rune) bool { return unicode.Is(unicode.Han, r) }

func isASCIILetter(r rune) bool { return r < 0x80 && unicode.IsLetter(r) }

// strayMarks are symbols that turn up in OCR output but not in prose.
const strayMarks = "|~^`\\_{}<>¦"

// inspect measures what the text itself says about its quality.
func inspect(x Extracted) textSignals {
	s := textSignals{Warnings: x.Warnings, NeedsOCR: x.NeedsOCR, Partial: x.Partial, Garbled: x.Garbled}
	r := []rune(x.Text)
	for i, c := range r {
		if unicode.IsLetter(c) || unicode.IsDigit(c) {
			s.Letters++
		}
		var prev, next rune
		if i > 0 {
			prev = r[i-1]
		}
		if i+1 < len(r) {
			next = r[i+1]
		}
		noisy := false
		switch {
		case c == utf8.RuneError || unicode.Is(unicode.Co, c):
			noisy = true
		case isHan(prev) && isHan(next) && (isASCIILetter(c) || strings.ContainsRune(strayMarks, c)):
			// 甲l木, 参|天: no Chinese text puts these between characters.
			noisy = true
		case isASCIILetter(prev) && isASCIILetter(next) && (c == '0' || c == '1' || c == '5' || c == '|' || c == '~'):
			// c0de, l1ke, wo|rd.
			noisy = true
		}
		if noisy {
			s.Noise++
			if len(s.NoiseExamples) < 3 {
				lo, hi := max(0, i-3), min(len(r), i+4)
				s.NoiseExamples = append(s.NoiseExamples, strings.Join(strings.Fields(string(r[lo:hi])), " "))
			}
		}
	}
	text := strings.TrimRight(x.Text, " \t\r\n\u3000")
	last := text[strings.LastIndexByte(text, '\n')+1:]
	last = strings.TrimSpace(strings.TrimLeft(last, "\u3000"))
	if lr := []rune(last); len(lr) >= 30 {
		end := lr[len(lr)-1]
		if !strings.ContainsRune("。！？…」』”’）》】.!?\"')]>*:：；;—-|", end) {
			s.CutOff = string(lr[len(lr)-20:])
		}
	}
	return s
}

// withFrontMatter adds what a Markdown file's YAML front matter says of the
// work (title, author, publisher, edition, published or date, url or
// source) to what curate.yaml said; curate.yaml wins.
func withFrontMatter(p Provenance, data []byte, ext string) Provenance {
	if ext != ".md" || !bytes.HasPrefix(data, []byte("---\n")) {
		return p
	}
	end := bytes.Index(data[4:], []byte("\n---"))
	if end < 0 {
		return p
	}
	var fm map[string]any
	if yaml.Unmarshal(data[4:4+end], &fm) != nil {
		return p
	}
	get := func(keys ...string) string {
		for _, k := range keys {
			if v, ok := fm[k]; ok && v != nil {
				if s := strings.TrimSpace(fmt.Sprint(v)); s != "" {
					return s
				}
			}
		}
		return ""
	}
	set := func(dst *string, keys ...string) {
		if *dst == "" {
			*dst = get(keys...)
		}
	}
	set(&p.Title, "title")
	set(&p.Author, "author", "authors")
	set(&p.Publisher, "publisher")
	set(&p.Edition, "edition")
	set(&p.Published, "published", "date")
	set(&p.URL, "url", "source_url")
	return p
}

// gradeItem is a source to grade, or a near-duplicate dropped for one
// (a witness for the others' agreement, graded only when the one it was
// dropped for is kept out by the floor).
type gradeItem struct {
	entry   int // index in the run's entries
	witness bool
	c       candidate
	data    []byte // only when there is no path to read again
	ext     string
	sha     string
	info    textInfo
	hasText bool
	text    string
	norm    *normText
}

// grader grades the kept sources of a run.
type grader struct {
	opts   *Options
	items  []gradeItem
	budget int // bytes of text still allowed in memory
}

func newGrader(opts *Options) *grader { return &grader{opts: opts, budget: 64 << 20} }

// add records a kept source or a witness (a near-duplicate dropped for
// one); entry is its index in the run's entries. Its text is kept in memory
// within a budget, else read again when a comparison needs it.
func (g *grader) add(entry int, witness bool, c candidate, data []byte, ext, sha string, info textInfo, text string, hasText bool) {
	it := gradeItem{entry: entry, witness: witness, c: c, ext: ext, sha: sha, info: info, hasText: hasText}
	if c.path == "" {
		it.data = data
	}
	if len(text) <= g.budget {
		it.text, g.budget = text, g.budget-len(text)
	}
	g.items = append(g.items, it)
}

// textOf returns an item's text, reading it again when it was not kept.
func (g *grader) textOf(ctx context.Context, it *gradeItem) (string, error) {
	if it.text != "" {
		return it.text, nil
	}
	x, ok, err := extractDoc(ctx, g.opts, it.c, it.data, it.ext)
	if err != nil || !ok {
		return "", err
	}
	return x.Text, nil
}

func (g *grader) normOf(ctx context.Context, it *gradeItem) (normText, error) {
	if it.norm != nil {
		return *it.norm, nil
	}
	t, err := g.textOf(ctx, it)
	if err != nil {
		return normText{}, err
	}
	n := normalize(t)
	it.norm = &n
	return n, nil
}

// agreement compares two items, through the cache.
func (g *grader) agreement(ctx context.Context, a, b *gradeItem) (pairResult, error) {
	swap := a.sha > b.sha
	if swap {
		a, b = b, a
	}
	k := kFor(a.info.script)
	h := sha256.Sum256([]byte(fmt.Sprintf("%s|%s|%s|%d|%s", CredibilityVersion, a.sha, b.sha, k, g.opts.ExtractVersion)))
	name := "agree-" + hex.EncodeToString(h[:12]) + ".json"
	var r pairResult
	if !cacheGet(g.opts, name, &r) {
		na, err := g.normOf(ctx, a)
		if err != nil {
			return r, err
		}
		nb, err := g.normOf(ctx, b)
		if err != nil {
			return r, err
		}
		r = align(na, nb, k)
		cachePut(g.opts, name, r)
	}
	if swap {
		r = pairResult{Compared: r.Compared, Differ: r.Differ, BlameA: r.BlameB, BlameB: r.BlameA,
			ExamplesA: r.ExamplesB, ExamplesB: r.ExamplesA, EndA: r.EndB, EndB: r.EndA, LenA: r.LenB, LenB: r.LenA}
	}
	return r, nil
}

// sameTitle reports whether two sources are named as the same work: equal
// titles, or a file name that holds the other (子平真诠.md, 子平真诠-1935.pdf),
// unless that name is a naming scheme rather than a title (generic: held
// by, or holding, more than maxNamesakes other sources' names).
func sameTitle(a, b gradeItem, generic map[string]bool) bool {
	if a.c.prov.Title != "" && a.c.prov.Title == b.c.prov.Title {
		return true
	}
	na, nb := titleKey(a.c.name), titleKey(b.c.name)
	if utf8.RuneCountInString(na) < 2 || utf8.RuneCountInString(nb) < 2 || generic[na] || generic[nb] {
		return false
	}
	return strings.Contains(na, nb) || strings.Contains(nb, na)
}

// pairs returns the pairs of items (x < y, in order) to compare for their
// agreement: both with text, not both near-duplicates dropped, not the same
// bytes, and alike (similarity at least sameWorkSimilarity) or named alike
// (sameTitle). They are found through the signatures' and the names'
// indexes (candidates.go), never by going through every pair.
func (g *grader) pairs() [][2]int32 {
	sigs := make([]*signature, len(g.items))
	byTitle := map[string][]int32{}
	keys := make([]string, len(g.items))
	for i := range g.items {
		it := &g.items[i]
		if !it.hasText {
			continue
		}
		if it.info.HasSig {
			sigs[i] = &it.info.Sig
		}
		if t := it.c.prov.Title; t != "" {
			byTitle[t] = append(byTitle[t], int32(i))
		}
		keys[i] = titleKey(it.c.name)
	}
	cand := similarPairs(sigs, sameWorkSimilarity)
	for _, grp := range byTitle {
		for i := range grp {
			for j := i + 1; j < len(grp); j++ {
				cand = append(cand, [2]int32{grp[i], grp[j]})
			}
		}
	}
	named, generic := namePairs(keys, func(i int) bool { return g.items[i].hasText })
	cand = sortPairs(append(cand, named...))
	out := cand[:0]
	for _, xy := range cand {
		a, b := &g.items[xy[0]], &g.items[xy[1]]
		if !a.hasText || !b.hasText || (a.witness && b.witness) || a.sha == b.sha {
			continue
		}
		sim := 0.0
		if a.info.HasSig && b.info.HasSig {
			sim = similarity(a.info.Sig, b.info.Sig)
		}
		if sim < sameWorkSimilarity && !sameTitle(*a, *b, generic) {
			continue
		}
		out = append(out, xy)
	}
	return out
}

func titleKey(name string) string {
	base := strings.TrimSuffix(path.Base(filepath.ToSlash(name)), path.Ext(name))
	var b strings.Builder
	for _, r := range strings.ToLower(base) {
		if unicode.IsLetter(r) {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// grade sets the credibility of every kept entry it was given and returns
// the indices of those below opts.CredibilityFloor (their reason set) and of
// the near-duplicates to keep in their place: for each source kept out, the
// first near-duplicate dropped for it that passes the floor (graded now).
func (g *grader) grade(ctx context.Context, entries []Entry, gits []GitSource) (out, promote []int, err error) {
	agreements := make([][]Agreement, len(g.items))
	pairs := g.pairs()
	// An item's normalised text is dropped after its last comparison, so
	// the texts held at once are those of the pairs in progress.
	last := make([]int, len(g.items))
	for p, xy := range pairs {
		last[xy[0]], last[xy[1]] = p, p
	}
	for p, xy := range pairs {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		x, y := int(xy[0]), int(xy[1])
		a, b := &g.items[x], &g.items[y]
		r, err := g.agreement(ctx, a, b)
		if last[x] == p {
			a.norm = nil
		}
		if last[y] == p {
			b.norm = nil
		}
		if err != nil {
			// A text that cannot be read again is judged without
			// this comparison.
			continue
		}
		if r.Compared == 0 {
			continue
		}
		agreements[x] = append(agreements[x], agreementOf(r, false, b.c.origin))
		agreements[y] = append(agreements[y], agreementOf(r, true, a.c.origin))
	}
	keptOut := map[string]bool{}
	for x := range g.items {
		it := &g.items[x]
		if it.witness {
			continue
		}
		e := &entries[it.entry]
		cr := g.score(*it, *e, agreements[x], gits)
		if err := g.judge(ctx, it, e, cr); err != nil {
			return nil, nil, err
		}
		e.Credibility = cr
		if GradeBelow(cr.Grade, g.opts.CredibilityFloor) {
			e.Reason = fmt.Sprintf("credibility %s is below the floor %s (curate.yaml credibility.floor): %s",
				cr.Grade, strings.ToUpper(g.opts.CredibilityFloor), strings.Join(cr.Reasons, "; "))
			out = append(out, it.entry)
			keptOut[e.Origin] = true
		}
	}
	// A near-duplicate dropped for a source now kept out takes its place
	// when it passes the floor itself.
	replaced := map[string]bool{}
	for x := range g.items {
		it := &g.items[x]
		if !it.witness {
			continue
		}
		e := &entries[it.entry]
		of, ok := nearDuplicateOf(e.Reason)
		if !ok || !keptOut[of] || replaced[of] {
			continue
		}
		cr := g.score(*it, *e, agreements[x], gits)
		if err := g.judge(ctx, it, e, cr); err != nil {
			return nil, nil, err
		}
		if GradeBelow(cr.Grade, g.opts.CredibilityFloor) {
			continue
		}
		cr.Reasons = append(cr.Reasons, fmt.Sprintf("kept in place of its near-duplicate %s, which is below the credibility floor", of))
		e.Credibility = cr
		replaced[of] = true
		promote = append(promote, it.entry)
	}
	return out, promote, nil
}

// nearDuplicatePrefix starts the reason of a near-duplicate's drop.
const nearDuplicatePrefix = "near-duplicate of "

// nearDuplicateOf returns the origin a near-duplicate was dropped for.
func nearDuplicateOf(reason string) (string, bool) {
	rest, ok := strings.CutPrefix(reason, nearDuplicatePrefix)
	if !ok {
		return "", false
	}
	i := strings.LastIndex(rest, " (")
	if i < 0 {
		return "", false
	}
	return rest[:i], true
}

// item returns the item recorded for an entry index.
func (g *grader) item(entry int) *gradeItem {
	for i := range g.items {
		if g.items[i].entry == entry {
			return &g.items[i]
		}
	}
	return nil
}

// agreementOf is the agreement from one side of a pair: a's side, or b's
// when flip.
func agreementOf(r pairResult, flip bool, with string) Agreement {
	blamed, ex, end, length, oEnd, oLen := r.BlameA, r.ExamplesA, r.EndA, r.LenA, r.EndB, r.LenB
	if flip {
		blamed, ex, end, length, oEnd, oLen = r.BlameB, r.ExamplesB, r.EndB, r.LenB, r.EndA, r.LenA
	}
	a := Agreement{With: with, Compared: r.Compared, Differ: r.Differ, Blamed: blamed, Examples: ex}
	// This one ends where the aligned text ends, the other goes on well past it.
	if r.Compared >= 200 && length-end <= max(20, length/50) && oLen-oEnd > max(200, oLen/10) {
		a.Truncated = true
		a.Coverage = math.Round(100*float64(oEnd)/float64(oLen)) / 100
	}
	return a
}

// score grades an item from its provenance, its text and its agreements.
func (g *grader) score(it gradeItem, e Entry, agree []Agreement, gits []GitSource) *Credibility {
	cr := &Credibility{Version: CredibilityVersion, Agreement: agree, Unjudged: g.opts.JudgeNote}
	if g.opts.Judge != nil {
		cr.Unjudged = ""
	}
	score := 1.0
	note := func(penalty float64, format string, args ...any) {
		score -= penalty
		cr.Reasons = append(cr.Reasons, fmt.Sprintf(format, args...))
	}

	// Provenance.
	p := e.Provenance
	switch {
	case p.Repository != "":
		commit := ""
		for _, gs := range gits {
			if gs.Repository == p.Repository {
				commit = gs.Commit
			}
		}
		note(0, "from repository %s at commit %s (%s)", p.Repository, shortHash(commit), p.Path)
	case p.URL != "" || isURL(e.Origin):
		u := p.URL
		if u == "" {
			u = e.Origin
		}
		if pu, err := url.Parse(u); err == nil && pu.Scheme == "http" {
			note(0.05, "downloaded from %s without TLS (http)", pu.Hostname())
		} else if err == nil {
			note(0, "downloaded from %s", pu.Hostname())
		}
	case it.c.inPlace:
		note(0.05, "put into source/ by hand: where it came from is not recorded")
	}
	if p.Query != "" {
		on := ""
		if p.Retrieved != "" {
			on = " on " + p.Retrieved
		}
		note(0, "found by the web search «%s»%s", p.Query, on)
	}
	var what []string
	for _, kv := range [][2]string{{"title", p.Title}, {"author", p.Author}, {"publisher", p.Publisher}, {"edition", p.Edition}, {"published", p.Published}} {
		if kv[1] != "" {
			what = append(what, kv[0]+" "+kv[1])
		}
	}
	if len(what) > 0 {
		note(0, "%s", strings.Join(what, ", "))
	} else if p.Repository == "" {
		note(0.05, "no title, author, publisher or edition recorded (say them in curate.yaml)")
	}

	// The text.
	if !it.hasText {
		note(0.05, "its text was not read (no extractor for %s), so its quality is unknown", it.ext)
	} else {
		s := it.info.Signals
		if s.Letters > 0 && s.Noise >= 3 {
			rate := float64(s.Noise) / float64(s.Letters)
			if rate >= 0.0005 {
				ex := ""
				if len(s.NoiseExamples) > 0 {
					ex = " (e.g. 「" + strings.Join(s.NoiseExamples, "」, 「") + "」)"
				}
				note(math.Min(0.3, rate*40), "OCR-like noise: %d stray characters, %.1f per 1,000%s", s.Noise, 1000*rate, ex)
			}
		}
		if gr := it.info.garbled; gr > 0.01 {
			note(math.Min(0.3, gr*5), "%.1f%% garbled characters (replacement, control or private-use)", 100*gr)
		}
		if s.CutOff != "" {
			note(0.05, "ends mid-sentence: «…%s»", s.CutOff)
		}
		switch {
		case s.Partial:
			note(0.25, "the converter recovered only part of it")
		case s.Garbled:
			note(0.3, "the converter found the text garbled")
		case s.NeedsOCR:
			note(0.15, "the converter found pages without a text layer (needs OCR)")
		}
		other := 0.0
		for _, w := range s.Warnings {
			if s.Partial && strings.HasPrefix(w, "partial") || s.NeedsOCR && strings.HasPrefix(w, "needs OCR") || s.Garbled && strings.HasPrefix(w, "garbled") {
				continue
			}
			pen := 0.0
			if other < 0.06 {
				pen = 0.02
				other += pen
			}
			note(pen, "the converter noted: %s", w)
		}
	}

	// Agreement with the other sources of the same work.
	worst, truncated := 0.0, false
	for _, a := range agree {
		if a.Compared < 200 {
			continue
		}
		rate := float64(a.Blamed) / float64(a.Compared)
		switch {
		case a.Blamed > 0 && rate >= 0.001:
			ex := ""
			if len(a.Examples) > 0 {
				ex = " (e.g. " + strings.Join(a.Examples, "; ") + ")"
			}
			pen := math.Min(0.4, rate*10)
			cr.Reasons = append(cr.Reasons, fmt.Sprintf("disagrees with %s in %d of %d compared characters (%.1f%%); in %d its reading is the less likely%s",
				a.With, a.Differ, a.Compared, 100*float64(a.Differ)/float64(a.Compared), a.Blamed, ex))
			worst = math.Max(worst, pen)
		case a.Differ == 0:
			cr.Reasons = append(cr.Reasons, fmt.Sprintf("agrees with %s in all %d compared characters", a.With, a.Compared))
		default:
			cr.Reasons = append(cr.Reasons, fmt.Sprintf("agrees with %s except %d of %d compared characters, its reading the less likely in %d",
				a.With, a.Differ, a.Compared, a.Blamed))
		}
		if a.Truncated && !truncated {
			truncated = true
			note(0.2, "truncated: stops at %.0f%% of %s", 100*a.Coverage, a.With)
		}
	}
	score -= worst
	cr.Score = math.Max(0, math.Round(100*score)/100)
	cr.Grade = gradeFor(cr.Score)
	return cr
}

// judge asks the model, through the cache, and folds its grade in: the
// measured score counts three parts, the model's one.
func (g *grader) judge(ctx context.Context, it *gradeItem, e *Entry, cr *Credibility) error {
	if g.opts.Judge == nil {
		return nil
	}
	h := sha256.Sum256([]byte(g.opts.JudgeVersion + "|" + it.sha + "|" + g.opts.ExtractVersion))
	name := "judge-" + hex.EncodeToString(h[:12]) + ".json"
	var j Judgement
	if !cacheGet(g.opts, name, &j) {
		text, err := g.textOf(ctx, it)
		if err != nil || text == "" {
			cr.Unjudged = "not judged: its text could not be read"
			return nil
		}
		j, err = g.opts.Judge(ctx, JudgeInput{Origin: e.Origin, Provenance: e.Provenance, Findings: cr.Reasons, Excerpts: excerpts(text, 600)})
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			cr.Unjudged = "not judged: " + err.Error()
			return nil
		}
		if gradeRank(j.Grade) < 0 {
			cr.Unjudged = fmt.Sprintf("not judged: the model answered grade %q", j.Grade)
			return nil
		}
		cachePut(g.opts, name, j)
	}
	cr.Judged = &j
	js := map[string]float64{"A": 0.95, "B": 0.8, "C": 0.6, "D": 0.3}[strings.ToUpper(j.Grade)]
	cr.Score = math.Round(100*(0.75*cr.Score+0.25*js)) / 100
	cr.Grade = gradeFor(cr.Score)
	cr.Reasons = append(cr.Reasons, fmt.Sprintf("a model judged it %s: %s", strings.ToUpper(j.Grade), j.Reason))
	return nil
}

// excerpts takes n runes from the beginning, the middle and the end.
func excerpts(text string, n int) []string {
	r := []rune(strings.TrimSpace(text))
	if len(r) <= 3*n {
		return []string{string(r)}
	}
	mid := len(r)/2 - n/2
	return []string{string(r[:n]), string(r[mid : mid+n]), string(r[len(r)-n:])}
}
