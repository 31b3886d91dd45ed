package extract

import (
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/vibelife/vibe/chunk"
	"github.com/vibelife/vibe/convert"
	"github.com/vibelife/vibe/internal/racetest"
	"github.com/vibelife/vibe/internal/testcorpus"
	"github.com/vibelife/vibe/knowledge"
	"github.com/vibelife/vibe/knowledge/schema"
)

// corpusDir finds ../shared/corpus/<theme> from the repository root.
func corpusDir(t testing.TB, theme string) string {
	return testcorpus.Dir(t, theme)
}

// splitMarkdown is a simple test splitter: a chunk per paragraph group of at
// most ~800 runes under the current heading path, with rune offsets.
func splitMarkdown(doc, text string) []chunk.Chunk {
	var out []chunk.Chunk
	var heads []string
	runes := []rune(text)
	start, pos := 0, 0
	flush := func(end int) {
		body := string(runes[start:end])
		if strings.TrimSpace(body) != "" {
			sum := sha256.Sum256([]byte(fmt.Sprintf("%s|%d|%s", doc, len(out), body)))
			out = append(out, chunk.Chunk{
				ID: fmt.Sprintf("%x", sum[:8]), Doc: doc, Title: strings.TrimSuffix(filepath.Base(doc), ".md"),
				HeadingPath: append([]string(nil), heads...), Start: start, End: end, Ordinal: len(out), Text: body,
			})
		}
		start = end
	}
	for _, line := range strings.SplitAfter(text, "\n") {
		n := len([]rune(line))
		if strings.HasPrefix(line, "#") {
			flush(pos)
			level := len(line) - len(strings.TrimLeft(line, "#"))
			if level > len(heads)+1 {
				level = len(heads) + 1
			}
			heads = append(heads[:level-1], strings.TrimSpace(strings.TrimLeft(line, "#")))
		} else if pos-start > 800 && strings.TrimSpace(line) == "" {
			flush(pos)
		}
		pos += n
	}
	flush(pos)
	return out
}

func loadCorpus(t testing.TB, theme string) []chunk.Chunk {
	dir := corpusDir(t, theme)
	names, err := filepath.Glob(filepath.Join(dir, "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(names)
	var chunks []chunk.Chunk
	for _, n := range names {
		b, err := os.ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		chunks = append(chunks, splitMarkdown("knowledge/"+theme+"/converted/"+filepath.Base(n), string(b))...)
	}
	return chunks
}

// loadConverted converts every source in dir (convert.Convert, then the
// chunk splitter with its defaults) and returns the chunks, with document
// ids as `vibe ingest` records them (knowledge/<theme>/converted/<name>.md).
func loadConverted(t testing.TB, theme, dir string, skip ...string) []chunk.Chunk {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	sp, err := chunk.New(chunk.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var chunks []chunk.Chunk
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || strings.EqualFold(name, "README.md") || name == "SOURCES.md" || slices.Contains(skip, name) {
			continue
		}
		src := filepath.Join(dir, name)
		doc, err := convert.Convert(ctx, src, convert.Options{SourceName: "knowledge/" + theme + "/source/" + name})
		if err != nil {
			t.Logf("convert %s: %v (skipped, as curate would drop it)", name, err)
			continue
		}
		data, err := convert.Render(doc)
		if err != nil {
			t.Fatal(err)
		}
		base := strings.TrimSuffix(name, filepath.Ext(name)) + ".md"
		cs, err := sp.SplitFile(ctx, "knowledge/"+theme+"/converted/"+base, data)
		if err != nil {
			t.Fatalf("split %s: %v", name, err)
		}
		chunks = append(chunks, cs...)
	}
	if len(chunks) == 0 {
		t.Fatalf("no chunks from %s", dir)
	}
	return chunks
}

func validate(t *testing.T, f knowledge.Files) {
	t.Helper()
	for kind, v := range map[string]any{schema.SOP: f.SOP, schema.Patterns: f.Patterns, schema.Rules: f.Rules} {
		data, err := knowledge.Encode(v)
		if err != nil {
			t.Fatal(err)
		}
		probs, err := schema.ValidateYAML(kind, data)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range probs {
			t.Errorf("%s.yaml: %v", kind, p)
		}
	}
}

// allEvidence lists every evidence of every item, labelled.
func allEvidence(f knowledge.Files) map[string][]knowledge.Evidence {
	out := map[string][]knowledge.Evidence{}
	for _, r := range f.Rules.Rules.All() {
		out["rule "+r.ID] = r.Evidence
	}
	for _, p := range f.Patterns.Patterns.QuickPatterns {
		out["pattern "+p.ID] = p.Evidence
	}
	for _, x := range f.Patterns.Patterns.RedFlags {
		out["red flag "+x.ID] = x.Evidence
	}
	for _, ph := range f.SOP.SOP.Phases {
		for _, s := range ph.Steps {
			if len(s.Evidence) > 0 {
				out["step "+s.ID] = s.Evidence
			}
		}
	}
	return out
}

// checkGrounded asserts what every offline item promises: it cites a chunk
// that exists and quotes text that is really in it, and a rule's condition
// and consequent are whole clauses of that quote.
func checkGrounded(t *testing.T, f knowledge.Files, chunks []chunk.Chunk) {
	t.Helper()
	byID := map[string]string{}
	for _, c := range chunks {
		byID[c.ID] = c.Text
	}
	for label, evs := range allEvidence(f) {
		if len(evs) == 0 {
			t.Errorf("%s has no evidence", label)
		}
		for _, e := range evs {
			text, ok := byID[e.Chunk]
			if !ok {
				t.Errorf("%s cites unknown chunk %s", label, e.Chunk)
				continue
			}
			if e.Quote == "" || !strings.Contains(text, e.Quote) {
				t.Errorf("%s quote %q not in chunk %s", label, e.Quote, e.Chunk)
			}
		}
	}
	for _, ph := range f.SOP.SOP.Phases {
		for _, st := range ph.Steps {
			if len(st.Evidence) == 0 {
				t.Errorf("step %s %q cites nothing", st.ID, st.Action)
			} else if !strings.Contains(st.Evidence[0].Quote, st.Action) {
				t.Errorf("step %s %q is not the text it quotes (%q)", st.ID, st.Action, st.Evidence[0].Quote)
			}
		}
	}
	for _, r := range f.Rules.Rules.All() {
		if msg := clauseProblem(r.Rule); msg != "" {
			t.Errorf("rule %s (%s): %s", r.ID, r.Tier, msg)
		}
		if parts := strings.Split(r.Source, " > "); len(parts) > 1 && parts[0] == parts[1] {
			t.Errorf("rule %s: source %q repeats the title", r.ID, r.Source)
		}
	}
	for _, p := range f.Patterns.Patterns.QuickPatterns {
		q := despaceHan(p.Evidence[0].Quote)
		if p.Signature == "" || p.Indication == "" || !strings.Contains(q, p.Signature) || !strings.Contains(q, p.Indication) {
			t.Errorf("pattern %s %q: signature %q / indication %q are not taken from its quote %q", p.ID, p.Name, p.Signature, p.Indication, q)
		}
	}
	for _, x := range f.Patterns.Patterns.RedFlags {
		if !strings.Contains(despaceHan(x.Evidence[0].Quote), x.Signal) || x.Action == "" {
			t.Errorf("red flag %s: signal %q not in its quote %q, or no action (%q)", x.ID, x.Signal, x.Evidence[0].Quote, x.Action)
		}
	}
}

// clauseProblem says how a rule's parts fail to be whole clauses of its
// quote, or "". A Chinese condition ends where its quote has 者, 则 or clause
// punctuation, and the consequent starts after 则 or clause punctuation; an
// English consequent starts after ", (then)" or is the whole statement.
func clauseProblem(r knowledge.Rule) string {
	// Parts are the quote's words without the layout spaces between Chinese
	// characters (四 柱 → 四柱).
	q := despaceHan(r.Evidence[0].Quote)
	if r.Action != "" && r.Conclusion != "" {
		// An instruction with what follows from ignoring it ("Never X: Y"):
		// both verbatim, the reason after the instruction.
		ai, ri := strings.Index(q, r.Action), strings.Index(q, r.Conclusion)
		if ai < 0 || ri < ai+len(r.Action) {
			return fmt.Sprintf("action %q and conclusion %q are not an instruction and the reason after it in %q", r.Action, r.Conclusion, q)
		}
		return ""
	}
	concl := r.Conclusion + r.Action
	if about, cond, ok := strings.Cut(r.Condition, "："); ok && hasHan(q) && !strings.Contains(q, r.Condition) {
		// A rule carries what it is about (issue 28): a short clause of
		// its sentence before the condition, or its section's heading,
		// which the rule then cites too.
		clause := strings.Contains(q, about+"，") || strings.Contains(q, about+",")
		heading := strings.Contains(despaceHan(r.Source), about) && (len(r.Evidence) == 1 || strings.Contains(r.Evidence[1].Quote, about))
		if !clause && !heading {
			return fmt.Sprintf("condition %q names %q, which is neither a clause of %q nor its section's heading (%s)", r.Condition, about, q, r.Source)
		}
		r.Condition = cond
	} else if hasHan(q) && (zhThinCond(r.Condition) || runeLen(r.Condition) <= 2 && !strings.Contains(q, "凡"+r.Condition)) {
		return fmt.Sprintf("condition %q does not say what it is about (its subject is in the text before %q)", r.Condition, q)
	}
	ci, ki := strings.Index(q, r.Condition), strings.Index(q, concl)
	if !hasHan(q) && strings.HasPrefix(q, concl) && ki == 0 {
		return "" // the whole statement, with the situation it governs
	}
	if ci < 0 || ki < 0 {
		return fmt.Sprintf("condition %q or consequent %q is not verbatim in %q", r.Condition, concl, q)
	}
	if hasHan(q) {
		after := strings.TrimPrefix(strings.TrimLeft(q[ci+len(r.Condition):], " "), "者")
		before := strings.TrimRight(q[:ki], " 　")
		if !startsWithAny(after, "，", ",", "：", "；", "则", "（") {
			return fmt.Sprintf("condition %q is cut inside a clause of %q", r.Condition, q)
		}
		if !endsWithAny(before, "，", ",", "：", "则", "；") && !strings.HasPrefix(concl, "则") {
			return fmt.Sprintf("consequent %q starts inside a clause of %q", concl, q)
		}
		return ""
	}
	// "X, (then) Y", "X means Y", "Y if X": only the linking words stand
	// between the two parts.
	var between string
	if ci < ki {
		between = q[ci+len(r.Condition) : ki]
	} else {
		between = q[ki+len(concl) : ci]
	}
	switch strings.ToLower(strings.TrimSpace(between)) {
	case ",", ", then", "means", "indicates", "signals", "suggests", "shows that", "is", "are", "if", "":
		return ""
	}
	return fmt.Sprintf("condition %q and consequent %q are cut around %q in %q", r.Condition, concl, between, q)
}

func startsWithAny(s string, ps ...string) bool {
	for _, p := range ps {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

func endsWithAny(s string, ps ...string) bool {
	for _, p := range ps {
		if strings.HasSuffix(s, p) {
			return true
		}
	}
	return false
}

// TestOfflineCorpus runs the offline extractor over the five bazi books as
// `vibe build bazi` does (the real converter and splitter) and checks the
// files against the schemas, the design's sizes, their citations and the
// shape of what they say.
func TestOfflineCorpus(t *testing.T) {
	racetest.SequentialOnly(t) // the offline extractor runs in one goroutine
	chunks := loadConverted(t, "bazi", corpusDir(t, "bazi"))
	res, err := Run(context.Background(), Options{Theme: "bazi", Chunks: chunks})
	if err != nil {
		t.Fatal(err)
	}
	validate(t, res.Files)
	c := res.Counts
	t.Logf("counts: %+v", c)
	checks := []struct {
		name     string
		got      int
		min, max int
	}{
		{"phases", c.Phases, 5, 7},
		{"steps", c.Steps, 4, 60},
		{"tier1", c.Tier1, 5, 10},
		{"tier2", c.Tier2, 30, knowledge.MaxOfflineTier2}, // sized to the sources (offlineTier2Cap)
		{"tier3", c.Tier3, 10, 30},
		{"patterns", c.Patterns, 10, 20},
		{"red flags", c.RedFlags, 5, 10},
	}
	for _, ck := range checks {
		if ck.got < ck.min || ck.got > ck.max {
			t.Errorf("%s = %d, want %d..%d", ck.name, ck.got, ck.min, ck.max)
		}
	}
	if c.Dropped != 0 {
		t.Errorf("%d items quoted text that is not in their chunk", c.Dropped)
	}
	checkGrounded(t, res.Files, chunks)
	f := res.Files
	checkHeadingOrderSOP(t, f.SOP.SOP, chunks)
	if f.Rules.Meta == nil || f.Rules.Meta.Extractor != OfflineExtractor || OfflineExtractor != "offline-heuristic/2" {
		t.Errorf("meta = %+v, want extractor offline-heuristic/2", f.Rules.Meta)
	}
	// Every book contributes rules: one long book does not crowd out the
	// others.
	byBook := map[string]int{}
	for _, r := range f.Rules.Rules.All() {
		byBook[strings.SplitN(r.Source, " > ", 2)[0]]++
	}
	if len(byBook) < 5 {
		t.Errorf("rules come from %d books (%v), want all five", len(byBook), byBook)
	}
	// Patterns are named configurations, not common terms or phrases.
	for _, p := range f.Patterns.Patterns.QuickPatterns {
		n := []rune(p.Name)
		last := string(n[len(n)-1])
		if len(n) < 3 && !strings.Contains("格局", last) || strings.ContainsAny(p.Name, "此其入遇") {
			t.Errorf("pattern %s %q is not a configuration's name", p.ID, p.Name)
		}
	}
	// Tier-1 rules forbid or oblige; generated text is Chinese like the
	// sources.
	for _, r := range f.Rules.Rules.Tier1 {
		if !zhFlagHit(zhProhibit, zhIdioms.Replace(r.Action)) && !zhOblige.MatchString(r.Action) {
			t.Errorf("tier-1 rule %s action %q neither forbids nor obliges", r.ID, r.Action)
		}
	}
	for _, r := range f.Rules.Rules.All() {
		if c := []rune(r.Conclusion + r.Action); len(c) < 2 || len(c) == 2 && c[0] == '则' {
			t.Errorf("rule %s: consequent %q is too thin to act on", r.ID, string(c))
		}
	}
	for _, r := range f.Rules.Rules.Tier3 {
		if r.Note == "" || !hasHan(r.Note) {
			t.Errorf("tier-3 rule %s: note %q", r.ID, r.Note)
		}
	}
	for _, x := range f.Patterns.Patterns.RedFlags {
		if !hasHan(x.Action) {
			t.Errorf("red flag %s: action %q is not Chinese", x.ID, x.Action)
		}
	}
	for _, ph := range f.SOP.SOP.Phases {
		if !hasHan(ph.Name + ph.Description + ph.EntryCondition) {
			t.Errorf("phase %s %q is not described in Chinese", ph.ID, ph.Name)
		}
	}
	// Deterministic: a second run gives the same bytes, and every id is kept.
	res2, err := Run(context.Background(), Options{Theme: "bazi", Chunks: chunks, Previous: &res.Files})
	if err != nil {
		t.Fatal(err)
	}
	for _, pair := range [][2]any{{f.Rules, res2.Files.Rules}, {f.Patterns, res2.Files.Patterns}, {f.SOP, res2.Files.SOP}} {
		a, _ := knowledge.Encode(pair[0])
		b, _ := knowledge.Encode(pair[1])
		if string(a) != string(b) {
			t.Errorf("second run over the same chunks changed a file:\n%s", firstDiff(string(a), string(b)))
		}
	}
}

func firstDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := 0; i < len(al) && i < len(bl); i++ {
		if al[i] != bl[i] {
			return fmt.Sprintf("line %d: %q vs %q", i+1, al[i], bl[i])
		}
	}
	return fmt.Sprintf("%d vs %d lines", len(al), len(bl))
}

// BenchmarkOfflineBazi times the offline extractor over the bazi corpus as
// `vibe build bazi` chunks it.
func BenchmarkOfflineBazi(b *testing.B) {
	chunks := loadConverted(b, "bazi", corpusDir(b, "bazi"))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := Run(context.Background(), Options{Theme: "bazi", Chunks: chunks}); err != nil {
			b.Fatal(err)
		}
	}
}

// TestOfflineDemo runs the offline extractor over the demo corpus (our own
// text on brewing tea, in English and Chinese, in five formats) as `make
// demo` builds it, and checks what a reader of its files would check.
func TestOfflineDemo(t *testing.T) {
	// curate drops these two (a near-duplicate and junk): see
	// examples/demo/README.md.
	chunks := loadConverted(t, "demo", filepath.Join("..", "examples", "demo"), "green-tea-copy.html", "scratch.txt")
	res, err := Run(context.Background(), Options{Theme: "demo", Chunks: chunks})
	if err != nil {
		t.Fatal(err)
	}
	f := res.Files
	validate(t, f)
	checkGrounded(t, f, chunks)
	t.Logf("counts: %+v", res.Counts)

	rules := map[string]knowledge.TieredRule{}
	for _, r := range f.Rules.Rules.All() {
		rules[r.Condition] = r
		if hasHan(r.Condition) != hasHan(r.Conclusion+r.Action) || r.Note != "" && hasHan(r.Note) != hasHan(r.Condition) {
			t.Errorf("rule %s mixes languages: %q / %q / %q", r.ID, r.Condition, r.Conclusion+r.Action, r.Note)
		}
	}
	// Imperative and "must" sentences: the situation and the whole
	// instruction, not halves cut at the modal verb.
	for cond, action := range map[string]string{
		"brewing black tea":              "Black tea must always be brewed with freshly boiled water",
		"brewing green tea":              "Never brew green tea with water at a rolling boil",
		"starting every brewing session": "Every brewing session must start with clean, odour-free vessels",
		"pouring out every infusion":     "Every infusion must be poured out completely before the next one starts",
	} {
		r, ok := rules[cond]
		if !ok || r.Tier != knowledge.Tier1 || r.Action != action {
			t.Errorf("want tier-1 rule %q -> %q, got %+v", cond, action, r)
		}
	}
	for cond := range rules {
		for _, bad := range []string{"Black tea", "Every brewing session", "Every infusion", "Pour every drop out of the pot after each infusion so the leaves", "they float for long"} {
			if strings.EqualFold(cond, bad) {
				t.Errorf("rule condition %q: a sentence cut at its modal verb, or a pronoun with nothing to point at", cond)
			}
		}
	}
	if r, ok := rules["the tea is a broken grade (fannings or dust)"]; !ok || r.Conclusion != "brew it for no more than three minutes" {
		t.Errorf("the broken-grade rule is cut inside its brackets: %+v", r)
	}
	if r, ok := rules["存放得宜"]; !ok || !strings.HasPrefix(r.Conclusion, "年份愈久") {
		t.Errorf("若存放得宜，则……: the cut belongs at 则, not inside 得宜: %+v", r)
	}

	// The demo's "Pattern:" sections and 陈香之象 are its quick patterns.
	pats := map[string]knowledge.Pattern{}
	for _, p := range f.Patterns.Patterns.QuickPatterns {
		pats[p.Name] = p
	}
	for name, sig := range map[string]string{
		"the sinking leaf": "most leaves sink within a minute",
		"the bitter edge":  "A bitter edge that appears only in the second infusion",
		"the cream-down":   "strong black tea cools and turns cloudy",
		"the opening leaf": "the balls have unfurled",
		"陈香之象":             "熟普汤色红浓，入口顺滑，带木香或枣香",
	} {
		if p, ok := pats[name]; !ok || p.Signature != sig {
			t.Errorf("pattern %q: want signature %q, got %+v (patterns %v)", name, sig, p, keys(pats))
		}
	}
	// Red flags say what to do, in the source's words.
	flags := map[string]string{}
	for _, x := range f.Patterns.Patterns.RedFlags {
		flags[x.Signal] = x.Action
	}
	if flags["茶叶表面生白霜而有霉味"] != "切勿饮用" || flags["汤色浑浊而有酸味"] != "宜弃之" {
		t.Errorf("red flags %v, want 霉味 -> 切勿饮用 and 浑浊酸味 -> 宜弃之", flags)
	}

	// The SOP: the demo's pages are on different teas, so no page's
	// chapter order speaks for the others: one phase per method the
	// sources list, named after its heading, each step citing its own line
	// of that method's section, in the source's order; no generic frame
	// phases around them (issue 28: no invented phases).
	methods := map[string]int{"Method: brewing in a glass": 5, "Method: Gongfu Brewing": 5, "Method: the Western Pot": 5, "冲泡之法": 5, "煮饮之法": 3}
	byID := map[string]chunk.Chunk{}
	for _, c := range chunks {
		byID[c.ID] = c
	}
	ph := f.SOP.SOP.Phases
	if len(ph) != 5 {
		t.Fatalf("want the five methods; got %d phases", len(ph))
	}
	for _, p := range ph {
		var method string
		for m := range methods {
			if strings.HasSuffix(p.Name, m) {
				method = m
			}
		}
		if method == "" || len(p.Steps) != methods[method] {
			t.Errorf("phase %q with %d steps is not one of the demo's methods %v", p.Name, len(p.Steps), methods)
			continue
		}
		prev := -1
		for _, st := range p.Steps {
			c := byID[st.Evidence[0].Chunk]
			if h := c.HeadingPath[len(c.HeadingPath)-1]; !strings.HasSuffix(h, method) {
				t.Errorf("step %s of %q cites a chunk under %q", st.ID, method, h)
			}
			at := strings.Index(c.Text, st.Evidence[0].Quote)
			if at <= prev {
				t.Errorf("step %s of %q is out of the source's order", st.ID, method)
			}
			prev = at
		}
	}
}

// checkHeadingOrderSOP checks the five books' offline SOP (issue 28): its
// phases follow 子平真诠's chapters in the book's order (each phase cites the
// heading lines of its chapters, later phases later chapters), none is an
// order a book gives in passing about one case (小儿之命, 残疾), no step is a
// remark on one case, and the description says an overall procedure needs a
// model.
func checkHeadingOrderSOP(t *testing.T, sop knowledge.SOP, chunks []chunk.Chunk) {
	t.Helper()
	pos := map[string]int{}
	for i, c := range chunks {
		pos[c.ID] = i
	}
	if !strings.Contains(sop.Description, "子平真诠") || !strings.Contains(sop.Description, "模型") {
		t.Errorf("SOP description %q: want 子平真诠's order and that an overall procedure needs a model", sop.Description)
	}
	prev := -1
	var names []string
	for _, ph := range sop.Phases {
		names = append(names, ph.Name)
		if strings.Contains(ph.Name+ph.EntryCondition, "小儿") || strings.Contains(ph.Name+ph.EntryCondition, "残疾") || strings.Contains(ph.Name, "《") {
			t.Errorf("phase %q is an order given in passing, not a chapter", ph.Name)
		}
		if len(ph.Evidence) == 0 || len(ph.Steps) == 0 {
			t.Errorf("phase %q cites no heading or has no steps", ph.Name)
			continue
		}
		for _, ev := range ph.Evidence {
			c := chunks[pos[ev.Chunk]]
			if c.Title != "子平真诠" && !strings.HasPrefix(c.Doc, "子平真诠") || !strings.Contains(c.Text, ev.Quote) {
				t.Errorf("phase %q cites %q of %s, not a heading of 子平真诠", ph.Name, ev.Quote, c.Doc)
			}
			if pos[ev.Chunk] < prev {
				t.Errorf("phase %q (%q) comes before a chapter of the phase before it", ph.Name, ev.Quote)
			}
			prev = pos[ev.Chunk]
		}
		for _, st := range ph.Steps {
			if oneCase(st.Action) {
				t.Errorf("step %s %q remarks on one case", st.ID, st.Action)
			}
		}
	}
	if len(names) == 0 || !strings.HasPrefix(names[0], "论十干十二支") || !strings.Contains(strings.Join(names, "|"), "论用神") {
		t.Errorf("phases %q: want 子平真诠's order from 论十干十二支, through 论用神", names)
	}
}
