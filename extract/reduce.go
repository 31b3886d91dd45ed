package extract

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/vibelife/vibe/chunk"
	"github.com/vibelife/vibe/knowledge"
	"github.com/vibelife/vibe/llm"
)

// Kinds of items.
const (
	kindRule    = "rule"
	kindPattern = "pattern"
	kindFlag    = "red_flag"
	kindStep    = "step"
)

// item is a candidate of the map or gap pass, or an item the reduce made of
// several. Its evidence is only ever taken from verified candidates.
type item struct {
	id   string
	kind string
	// rules
	tier, condition, conclusion, priority, confidence, note string
	// patterns
	name, signature, indication string
	// red flags (action is shared with rules and steps)
	signal, severity string
	action           string
	// steps
	phase, output string
	// importance is the model's 1 (marginal) to 5 (essential); 0 unjudged.
	importance int
	ev         []knowledge.Evidence
	chunk      *chunk.Chunk // of the first evidence
	seq, doc   int          // corpus position and document of the first evidence
}

// key is the normalised text identical candidates share.
func (it *item) key() string {
	switch it.kind {
	case kindRule:
		return "r" + normalise(it.condition+"|"+it.conclusion)
	case kindPattern:
		return "p" + normalise(it.name)
	case kindFlag:
		return "f" + normalise(it.signal)
	}
	return "s" + normalise(it.action)
}

// text is what the embedder compares.
func (it *item) text() string {
	switch it.kind {
	case kindRule:
		return it.condition + " → " + it.conclusion
	case kindPattern:
		return it.name + ": " + it.signature
	case kindFlag:
		return it.signal
	}
	return it.action
}

// line is how the reduce and the tier pass show an item to the model.
func (it *item) line() string {
	switch it.kind {
	case kindRule:
		s := "IF " + oneLine(it.condition) + " THEN " + oneLine(it.conclusion)
		if it.action != "" && !actionRestates(it.action, it.condition+it.conclusion) {
			s += " (action: " + oneLine(it.action) + ")"
		}
		return s
	case kindPattern:
		return oneLine(it.name) + ": " + oneLine(it.signature) + " => " + oneLine(it.indication)
	case kindFlag:
		return oneLine(it.signal) + " => " + oneLine(it.action)
	}
	return oneLine(it.action)
}

// arrow is a rule as the reduce and the SOP request show it, a few tokens
// shorter than line: "condition → conclusion", and the action when it says
// more.
func (it *item) arrow() string {
	s := oneLine(it.condition) + " → " + oneLine(it.conclusion)
	if it.action != "" && !actionRestates(it.action, it.condition+it.conclusion) {
		s += " (action: " + oneLine(it.action) + ")"
	}
	return s
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// actionRestates reports whether a rule's action mostly says again what
// the rule says (half its bigrams are in the condition and conclusion):
// such an action only costs tokens where the rule is shown.
func actionRestates(action, rule string) bool {
	a, r := bigrams(action), bigrams(rule)
	if len(a) == 0 {
		return true
	}
	in := 0
	for g := range a {
		if r[g] > 0 {
			in++
		}
	}
	return 2*in >= len(a)
}

// addEvidence appends evidence not already there.
func (it *item) addEvidence(ev []knowledge.Evidence) {
	for _, e := range ev {
		dup := false
		for _, f := range it.ev {
			if f == e {
				dup = true
				break
			}
		}
		if !dup {
			it.ev = append(it.ev, e)
		}
	}
}

// Reduce tuning.
const (
	// defaultSimilarity groups candidates whose embeddings are at least
	// this close (cosine). The model then decides what really is one item,
	// so the threshold errs on grouping: with the local n-gram embedder
	// "若财多身弱，必忌再行财运" and "财多身弱 → 忌再行财运" score 0.89,
	// unrelated rules of the same book about 0.1.
	defaultSimilarity = 0.75
	// maxCluster bounds a group, so one vague candidate cannot pull a whole
	// topic together.
	maxCluster = 8
	// maxBatchItems and maxBatchTokens bound one reduce request.
	// One request holds the candidates of a short book: every request
	// repeats the system prompt and the schema (about 800 tokens), and an
	// answer to 240 candidates (about 50 tokens each) stays within 16k
	// output tokens.
	maxBatchItems  = 240
	maxBatchTokens = 10000
)

func (x *llmRun) threshold() float64 {
	if x.opt.SimilarityThreshold > 0 {
		return x.opt.SimilarityThreshold
	}
	return defaultSimilarity
}

// cluster groups pool into near-duplicates of one kind: each item joins the
// closest earlier group leader at or above the threshold (no chaining
// through members), or leads a group of its own. Groups are in order of
// their leaders.
func (x *llmRun) cluster(ctx context.Context, pool []*item) ([][]*item, error) {
	grams := make([]map[string]int, len(pool))
	for i, it := range pool {
		grams[i] = bigrams(it.text())
	}
	var vecs [][]float32
	if x.opt.Embedder != nil && len(pool) >= 2 {
		texts := make([]string, len(pool))
		for i, it := range pool {
			texts[i] = it.text()
		}
		var err error
		vecs, err = x.opt.Embedder.Embed(ctx, texts)
		if err != nil {
			return nil, fmt.Errorf("embed candidates: %w", err)
		}
		if len(vecs) != len(pool) {
			return nil, fmt.Errorf("embed candidates: %d vectors for %d texts", len(vecs), len(pool))
		}
		for _, v := range vecs {
			normalize(v)
		}
	}
	// A candidate joins the closest earlier leader of its kind by
	// embedding, or else the one whose wording it shares most (an embedder
	// that compares n-grams scores a paraphrase far below a threshold made
	// for a model's embeddings; bigram Dice finds 倒冲成格 → 要支中字多…运忌
	// 填实 and 倒冲格 → 运忌填实 alike at 0.53).
	th := float32(x.threshold())
	var out [][]*item
	leaders := map[string][]int{} // kind -> indexes into out
	lead := []int{}               // out index -> pool index of its leader
	for i, it := range pool {
		best, bestSim := -1, th
		for _, g := range leaders[it.kind] {
			if len(out[g]) < maxCluster && vecs != nil {
				if s := dot(vecs[i], vecs[lead[g]]); s >= bestSim {
					best, bestSim = g, s
				}
			}
		}
		if best < 0 {
			bestLex := lexicalSimilarity
			for _, g := range leaders[it.kind] {
				if len(out[g]) < maxCluster {
					if d := dice(grams[i], grams[lead[g]]); d >= bestLex {
						best, bestLex = g, d
					}
				}
			}
		}
		if best >= 0 {
			out[best] = append(out[best], it)
			continue
		}
		leaders[it.kind] = append(leaders[it.kind], len(out))
		out = append(out, []*item{it})
		lead = append(lead, i)
	}
	return out, nil
}

// lexicalSimilarity is the bigram Dice similarity of wording at which two
// candidates are shown to the reduce as one group; sameSimilarity the one
// at which two items reviewed in different batches are merged without the
// model (their wording is nearly the same).
const (
	lexicalSimilarity = 0.5
	sameSimilarity    = 0.8
)

// mergeAcross merges items of one kind that different reduce batches kept
// apart although they say the same: nearly the same wording, or a quote of
// one containing a quote of the other in the same chunk. The earlier item
// keeps its wording and takes the other's evidence and the higher
// importance and tier.
func (x *llmRun) mergeAcross(items []*item, batchOf map[*item]int) []*item {
	var out []*item
	for _, it := range items {
		var into *item
		for _, o := range out {
			if o.kind == it.kind && batchOf[o] != batchOf[it] && sameKnowledge(o, it) {
				into = o
				break
			}
		}
		if into == nil {
			out = append(out, it)
			continue
		}
		into.addEvidence(it.ev)
		into.importance = max(into.importance, it.importance)
		if it.kind == kindRule && it.tier != "" && (into.tier == "" || it.tier < into.tier) {
			into.tier = it.tier
		}
		x.st.Merged++
		x.st.MergedAcross++
	}
	return out
}

// sameKnowledge reports whether two items of one kind state the same:
// bigram Dice of their wording at least sameSimilarity, or a shared chunk
// where one quote contains the other.
func sameKnowledge(a, b *item) bool {
	if dice(bigrams(a.text()), bigrams(b.text())) >= sameSimilarity {
		return true
	}
	for _, e := range a.ev {
		for _, f := range b.ev {
			if e.Chunk == f.Chunk && len([]rune(e.Quote)) >= 8 && len([]rune(f.Quote)) >= 8 &&
				(strings.Contains(e.Quote, f.Quote) || strings.Contains(f.Quote, e.Quote)) {
				return true
			}
		}
	}
	return false
}

// embedPending reports whether err is a remote embedder declining to work
// in a dry run; the passes from there on are estimated.
func (x *llmRun) embedPending(err error) bool {
	if !errors.Is(err, llm.ErrDryRun) {
		return false
	}
	x.st.DryRun, x.noEmbed, x.pending = true, true, true
	return true
}

func normalize(v []float32) {
	var s float64
	for _, f := range v {
		s += float64(f) * float64(f)
	}
	if s == 0 {
		return
	}
	n := float32(1 / math.Sqrt(s))
	for i := range v {
		v[i] *= n
	}
}

func dot(a, b []float32) float32 {
	var s float32
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

const reduceSchema = `{
 "type":"object","additionalProperties":false,"required":["items","dropped"],
 "properties":{
  "items":{"type":"array","items":{"type":"object","required":["kind","members","importance"],"properties":{
    "kind":{"enum":["rule","pattern","red_flag"]},
    "members":{"type":"array","minItems":1,"items":{"type":"string"}},
    "tier":{"enum":["tier1","tier2","tier3"]},
    "condition":{"type":"string"},"conclusion":{"type":"string"},"action":{"type":"string"},
    "priority":{"enum":["critical","high","medium","low"]},"confidence":{"enum":["high","medium","low"]},"note":{"type":"string"},
    "name":{"type":"string"},"signature":{"type":"string"},"indication":{"type":"string"},
    "signal":{"type":"string"},"severity":{"enum":["critical","warning","notice"]},
    "importance":{"type":"integer","minimum":1,"maximum":5}}}},
  "dropped":{"type":"array","items":{"type":"object","required":["id","reason"],"properties":{
    "id":{"type":"string"},"reason":{"enum":["common_sense","too_vague","not_knowledge","off_topic"]},"why":{"type":"string"}}}}
 }}`

type reduceAnswer struct {
	Items []struct {
		Kind       string   `json:"kind"`
		Members    []string `json:"members"`
		Tier       string   `json:"tier"`
		Condition  string   `json:"condition"`
		Conclusion string   `json:"conclusion"`
		Action     string   `json:"action"`
		Priority   string   `json:"priority"`
		Confidence string   `json:"confidence"`
		Note       string   `json:"note"`
		Name       string   `json:"name"`
		Signature  string   `json:"signature"`
		Indication string   `json:"indication"`
		Signal     string   `json:"signal"`
		Severity   string   `json:"severity"`
		Importance int      `json:"importance"`
	} `json:"items"`
	Dropped []struct {
		ID     string `json:"id"`
		Reason string `json:"reason"`
		Why    string `json:"why"`
	} `json:"dropped"`
}

// reduce merges pool: groups near-duplicates by embedding, sends the groups
// (candidate items, never the sources) to the model in batches, and keeps
// what it merged and did not drop. The result is in corpus order, numbered
// m1, m2, ...
func (x *llmRun) reduce(ctx context.Context, pool []*item) ([]*item, error) {
	if x.pending {
		return nil, nil
	}
	send, err := x.cluster(ctx, pool)
	if x.embedPending(err) {
		return pool, nil
	}
	if err != nil {
		return nil, err
	}
	x.ran[StageReduce] = true
	var out []*item
	x.st.Clusters += len(send)
	batches := x.batches(send)
	reqs := make([]llm.Request, len(batches))
	names := make([]string, len(batches))
	for i, b := range batches {
		var sb strings.Builder
		fmt.Fprintf(&sb, "Theme: %s\n", x.opt.Theme)
		// Groups of near-duplicates under a heading each, then the single
		// candidates under one: a heading per single candidate cost about
		// a tenth of the pass.
		var singles [][]*item
		g := 0
		line := func(it *item) {
			switch it.kind {
			case kindRule:
				// Compact: "t1" for tier1, "→" for THEN (a few tokens a line).
				fmt.Fprintf(&sb, "%s rule %s | %s\n", it.id, strings.Replace(nonEmpty(it.tier, "tier2"), "tier", "t", 1), it.arrow())
			case kindFlag:
				fmt.Fprintf(&sb, "%s red_flag %s | %s\n", it.id, nonEmpty(it.severity, "notice"), it.line())
			default:
				fmt.Fprintf(&sb, "%s %s | %s\n", it.id, it.kind, it.line())
			}
		}
		for _, c := range b {
			if len(c) == 1 {
				singles = append(singles, c)
				continue
			}
			g++
			fmt.Fprintf(&sb, "\n## group %d\n", g)
			for _, it := range c {
				line(it)
			}
		}
		if len(singles) > 0 {
			sb.WriteString("\n## single\n")
		}
		for _, c := range singles {
			line(c[0])
		}
		reqs[i] = x.request(StageReduce, reducePrompt, "extract_reduce", reduceSchema, sb.String())
		names[i] = fmt.Sprintf("batch %d of %d", i+1, len(batches))
	}
	resps, err := x.send(ctx, StageReduce, reqs, names)
	if err != nil {
		return nil, err
	}
	batchOf := map[*item]int{}
	for i, r := range resps {
		var got []*item
		if r == nil {
			// Not answered (dry run) or broke the schema: keep the batch's
			// candidates as the map proposed them.
			for _, c := range batches[i] {
				got = append(got, c...)
			}
		} else {
			var ans reduceAnswer
			if err := json.Unmarshal([]byte(stripFenceJSON(r.Content)), &ans); err != nil {
				return nil, fmt.Errorf("%s %s: answer is not JSON: %w", StageReduce, names[i], err)
			}
			got = x.applyReduce(batches[i], ans)
		}
		for _, it := range got {
			batchOf[it] = i
		}
		out = append(out, got...)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].seq < out[j].seq })
	if !x.pending {
		out = x.mergeAcross(out, batchOf)
	}
	for i, it := range out {
		it.id = fmt.Sprintf("m%d", i+1)
		if it.importance == 0 {
			it.importance = 3
		}
	}
	return out, nil
}

func nonEmpty(s, def string) string {
	if strings.TrimSpace(s) == "" {
		return def
	}
	return s
}

// batches packs groups into requests, never splitting a group.
func (x *llmRun) batches(cs [][]*item) [][][]*item {
	var out [][][]*item
	var cur [][]*item
	n, tok := 0, 0
	for _, c := range cs {
		ct := 0
		for _, it := range c {
			ct += x.count(it.line()) + 6
		}
		if len(cur) > 0 && (n+len(c) > maxBatchItems || tok+ct > maxBatchTokens) {
			out = append(out, cur)
			cur, n, tok = nil, 0, 0
		}
		cur = append(cur, c)
		n += len(c)
		tok += ct
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}

// applyReduce turns a reduce answer into items. Members are only ever
// candidates of the batch, each used once and only with its own kind; the
// merged item's evidence is the union of its members'. Candidates the
// answer does not account for are kept as they were.
func (x *llmRun) applyReduce(batch [][]*item, ans reduceAnswer) []*item {
	byID := map[string]*item{}
	var order []*item
	for _, c := range batch {
		for _, it := range c {
			byID[it.id] = it
			order = append(order, it)
		}
	}
	used := map[string]bool{}
	var out []*item
	for _, a := range ans.Items {
		var mem []*item
		for _, id := range a.Members {
			it, ok := byID[strings.TrimSpace(id)]
			if !ok || used[it.id] || (len(mem) > 0 && it.kind != mem[0].kind) {
				continue
			}
			used[it.id] = true
			mem = append(mem, it)
		}
		if len(mem) == 0 {
			continue
		}
		sort.SliceStable(mem, func(i, j int) bool { return mem[i].seq < mem[j].seq })
		lead := mem[0]
		m := *lead
		m.ev = nil
		for _, it := range mem {
			m.addEvidence(it.ev)
		}
		x.st.Merged += len(mem) - 1
		m.importance = a.Importance
		switch m.kind {
		case kindRule:
			m.condition = nonEmpty(a.Condition, lead.condition)
			m.conclusion = nonEmpty(a.Conclusion, lead.conclusion)
			m.action = a.Action
			m.tier = oneOf(a.Tier, lead.tier, "tier1", "tier2", "tier3")
			m.priority, m.confidence, m.note = a.Priority, a.Confidence, a.Note
		case kindPattern:
			m.name = nonEmpty(a.Name, lead.name)
			m.signature = nonEmpty(a.Signature, lead.signature)
			m.indication = nonEmpty(a.Indication, lead.indication)
			m.confidence = a.Confidence
		case kindFlag:
			m.signal = nonEmpty(a.Signal, lead.signal)
			m.action = nonEmpty(a.Action, lead.action)
			m.severity = oneOf(a.Severity, lead.severity, "critical", "warning", "notice")
		}
		out = append(out, &m)
	}
	for _, d := range ans.Dropped {
		it, ok := byID[strings.TrimSpace(d.ID)]
		if !ok || used[it.id] {
			continue
		}
		used[it.id] = true
		x.st.Dropped = append(x.st.Dropped, DroppedItem{Kind: it.kind, Text: it.line(), Reason: d.Reason, Why: d.Why, Chunk: it.ev[0].Chunk})
	}
	for _, it := range order {
		if !used[it.id] {
			x.st.Unjudged++
			out = append(out, it)
		}
	}
	return out
}

// oneOf returns v if it is one of allowed, else def if it is, else the
// first allowed value.
func oneOf(v, def string, allowed ...string) string {
	for _, s := range []string{v, def} {
		for _, a := range allowed {
			if s == a {
				return s
			}
		}
	}
	return allowed[0]
}

// selection is what goes into the files.
type selection struct {
	t1, t2, t3, patterns, flags []*item
}

// byImportance orders items best first, then in corpus order.
func byImportance(xs []*item) []*item {
	out := append([]*item(nil), xs...)
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].importance != out[j].importance {
			return out[i].importance > out[j].importance
		}
		return out[i].seq < out[j].seq
	})
	return out
}

// chapter names the document and top-level heading of an item's first
// evidence.
func (it *item) chapter() string {
	k := fmt.Sprint(it.doc)
	if it.chunk != nil && len(it.chunk.HeadingPath) > 0 {
		k += "\x00" + it.chunk.HeadingPath[0]
	}
	return k
}

// top takes up to n of xs, most important first; among items of equal
// importance it takes them round-robin across the chapters, so one long
// book or chapter does not crowd out the others.
func top(xs []*item, n int) []*item {
	sorted := byImportance(xs)
	var out []*item
	for i := 0; i < len(sorted) && len(out) < n; {
		j := i
		for j < len(sorted) && sorted[j].importance == sorted[i].importance {
			j++
		}
		out = append(out, roundRobin(sorted[i:j], n-len(out))...)
		i = j
	}
	return out
}

// roundRobin takes up to n of xs, in turn from each chapter (a document's
// top-level heading, in order of first appearance), keeping each chapter's
// order, so ties spread across the books and their chapters.
func roundRobin(xs []*item, n int) []*item {
	if len(xs) <= n {
		return xs
	}
	byDoc := map[string][]*item{}
	var docs []string
	for _, it := range xs {
		k := it.chapter()
		if _, ok := byDoc[k]; !ok {
			docs = append(docs, k)
		}
		byDoc[k] = append(byDoc[k], it)
	}
	var out []*item
	for i := 0; len(out) < n; i++ {
		for _, d := range docs {
			if i < len(byDoc[d]) && len(out) < n {
				out = append(out, byDoc[d][i])
			}
		}
	}
	return out
}

// tiers fills the skill's tiers from the reviewed items, without another
// request: the reduce answer already gives each rule a tier and every item
// an importance. The tiers are by content: each tier holds only rules the
// model put there, its most important first (ties round-robin across
// chapters), up to its target. When a tier is full, its least important
// rules give way and are listed (LLMStats.GaveWay): the must-know rules
// that give way compete in tier 2 by importance with its own (a
// must-know rule is core knowledge; an essential one beyond the ten
// displaces a lesser core rule, which gives way in turn), and none goes on
// to tier 3: an edge case is no place for a core rule, and no rule gets a
// note it was not given. Patterns and red flags take the most important
// up to their targets.
func (x *llmRun) tiers(merged []*item) selection {
	var sel selection
	if x.pending {
		return sel
	}
	byTier := map[string][]*item{}
	var rules, pats, flags []*item
	for _, it := range merged {
		switch it.kind {
		case kindRule:
			byTier[it.tier] = append(byTier[it.tier], it)
			rules = append(rules, it)
		case kindPattern:
			pats = append(pats, it)
		case kindFlag:
			flags = append(flags, it)
		}
	}
	rest := func(pool, kept []*item) []*item {
		in := map[*item]bool{}
		for _, it := range kept {
			in[it] = true
		}
		var out []*item
		for _, it := range byImportance(pool) {
			if !in[it] {
				out = append(out, it)
			}
		}
		return out
	}
	sel.t1 = top(byTier["tier1"], maxTier1)
	sel.t2 = top(append(rest(byTier["tier1"], sel.t1), byTier["tier2"]...), maxTier2)
	sel.t3 = top(byTier["tier3"], maxTier3)
	sel.patterns = top(pats, maxPatterns)
	sel.flags = top(flags, maxRedFlags)
	x.overflow(&sel, rules, pats, flags)
	// What gave way, per tier, after the overflow settled.
	in := map[*item]string{}
	for _, t := range []struct {
		name string
		xs   []*item
	}{{knowledge.Tier1, sel.t1}, {knowledge.Tier2, sel.t2}, {knowledge.Tier3, sel.t3}} {
		for _, it := range t.xs {
			in[it] = t.name
		}
	}
	full := map[string]int{"tier1": maxTier1, "tier2": maxTier2, "tier3": maxTier3}
	names := map[string]string{"tier1": knowledge.Tier1, "tier2": knowledge.Tier2, "tier3": knowledge.Tier3}
	x.st.GaveWay = nil
	for _, tier := range []string{"tier1", "tier2", "tier3"} {
		for _, it := range byImportance(byTier[tier]) {
			to := in[it]
			if to == names[tier] {
				continue
			}
			g := GaveWayItem{Tier: names[tier], To: to, Text: it.line(), Importance: it.importance, Chunk: it.ev[0].Chunk}
			if to == "" {
				g.Reason = fmt.Sprintf("%s is full: its %d rules are at least as important", names[tier], full[tier])
			} else {
				g.Reason = fmt.Sprintf("%s is full: kept in %s, where it was among the most important", names[tier], to)
			}
			x.st.GaveWay = append(x.st.GaveWay, g)
		}
	}
	x.st.NotSelected = len(merged) - len(sel.t1) - len(sel.t2) - len(sel.t3) - len(sel.patterns) - len(sel.flags)
	return sel
}

// GaveWayItem is a rule that did not fit the tier the model gave it: kept
// in the room another tier had left (To), or left out (To empty).
type GaveWayItem struct {
	Tier       string `json:"tier"`
	To         string `json:"to,omitempty"`
	Text       string `json:"text"`
	Importance int    `json:"importance"`
	Reason     string `json:"reason"`
	Chunk      string `json:"chunk"`
}

// NotKeptItem is a reviewed item the skill does not carry, and why.
type NotKeptItem struct {
	Kind       string `json:"kind"`
	Text       string `json:"text"`
	Importance int    `json:"importance"`
	Reason     string `json:"reason"`
	Chunk      string `json:"chunk"`
}

// overflow completes the selection: an essential item (importance 5)
// left out takes the room left in its tier or, for a tier-1 rule, in tier
// 2, or the place of a chosen rule of importance 3 or less there (never in
// tier 3, which holds only the model's tier-3 rules); red flags restating a
// tier-1 rule give way to it; every item of importance 4 or 5 left out is
// named in NotKept with the reason.
func (x *llmRun) overflow(sel *selection, rules, pats, flags []*item) {
	in := map[*item]bool{}
	for _, xs := range [][]*item{sel.t1, sel.t2, sel.t3, sel.patterns, sel.flags} {
		for _, it := range xs {
			in[it] = true
		}
	}
	tiers := []*[]*item{&sel.t1, &sel.t2, &sel.t3}
	caps := []int{maxTier1, maxTier2, maxTier3}
	for _, it := range byImportance(rules) {
		if in[it] || it.importance < 5 {
			continue
		}
		// A tier-3 rule stays in tier 3; a must-know or core rule may go
		// down to tier 2, never to tier 3.
		start := map[string]int{"tier1": 0, "tier2": 1, "tier3": 2}[it.tier]
		last := max(start, 1)
		for t := start; t <= last && !in[it]; t++ {
			if len(*tiers[t]) < caps[t] {
				*tiers[t] = append(*tiers[t], it)
				in[it] = true
			}
		}
		// No room: it takes the place of the least important rule chosen
		// (importance 3 or less) in its tier or tier 2.
		for t := last; t >= start && !in[it]; t-- {
			xs := *tiers[t]
			w := -1
			for i, r := range xs {
				if r.importance <= 3 && (w < 0 || r.importance <= xs[w].importance) {
					w = i
				}
			}
			if w >= 0 {
				x.notKept(xs[w], "gave way to an essential rule (importance 5) the tier pass left out: "+oneLine(it.condition))
				delete(in, xs[w])
				xs[w] = it
				in[it] = true
			}
		}
	}
	for _, g := range []struct {
		xs  []*item
		to  *[]*item
		max int
	}{{pats, &sel.patterns, maxPatterns}, {flags, &sel.flags, maxRedFlags}} {
		for _, it := range byImportance(g.xs) {
			if !in[it] && it.importance >= 5 && len(*g.to) < g.max {
				*g.to = append(*g.to, it)
				in[it] = true
			}
		}
	}
	// A red flag restating a tier-1 rule says nothing the agent does not
	// check first anyway; the next red flags take its place.
	var keep []*item
	listed := map[*item]bool{}
	for _, f := range append(append([]*item(nil), sel.flags...), byImportance(flags)...) {
		if listed[f] || (in[f] && !containsItem(sel.flags, f)) || containsItem(keep, f) {
			continue
		}
		delete(in, f)
		if r := restates(f, sel.t1); r != nil {
			listed[f] = true
			x.notKept(f, "restates the tier-1 rule \""+oneLine(r.condition)+"\", which the agent checks first")
			continue
		}
		if len(keep) < maxRedFlags {
			keep = append(keep, f)
			in[f] = true
		}
	}
	sel.flags = keep
	for _, it := range append(append(append([]*item(nil), rules...), pats...), flags...) {
		if in[it] || listed[it] || it.importance < 4 {
			continue
		}
		reason := "its tier is full of rules at least as important (gave_way lists it)"
		if it.kind != kindRule {
			reason = "the " + it.kind + "s are full of items at least as important"
		}
		x.notKept(it, reason)
	}
}

func containsItem(xs []*item, it *item) bool {
	for _, x := range xs {
		if x == it {
			return true
		}
	}
	return false
}

func (x *llmRun) notKept(it *item, reason string) {
	x.st.NotKept = append(x.st.NotKept, NotKeptItem{Kind: it.kind, Text: it.line(), Importance: it.importance, Reason: reason, Chunk: it.ev[0].Chunk})
}

// restates returns the tier-1 rule a red flag says again (its signal
// shares most of its wording with the rule's condition), or nil.
func restates(f *item, t1 []*item) *item {
	fb := bigrams(f.signal)
	for _, r := range t1 {
		if dice(fb, bigrams(r.condition)) >= restateSimilarity || dice(fb, bigrams(r.condition+r.conclusion)) >= restateSimilarity {
			return r
		}
	}
	return nil
}

// restateSimilarity is the bigram Dice similarity at which a red flag's
// signal restates a rule.
const restateSimilarity = 0.6

// files turns the selection and the SOP into the knowledge files.
func (x *llmRun) files(sop knowledge.SOP, sel selection) knowledge.Files {
	rule := func(it *item, tier string) knowledge.Rule {
		r := knowledge.Rule{Condition: it.condition, Source: sourceOf(it.chunk), Evidence: it.ev}
		switch tier {
		case "tier1":
			// The knowledge stays (condition, conclusion, confidence);
			// the action says what the agent must do about it.
			r.Conclusion = it.conclusion
			r.Action = nonEmpty(it.action, it.conclusion)
			r.Priority = oneOf(it.priority, "high", "critical", "high", "medium", "low")
			r.Confidence = oneOf(it.confidence, "high", "high", "medium", "low")
		case "tier3":
			// The note is the model's, if it gave one: a rule is never
			// labelled an exception the model did not call one.
			r.Conclusion = it.conclusion
			r.Confidence = oneOf(it.confidence, "medium", "high", "medium", "low")
			r.Note = it.note
		default:
			r.Conclusion = it.conclusion
			r.Confidence = oneOf(it.confidence, "high", "high", "medium", "low")
		}
		return r
	}
	rules := func(xs []*item, tier string) []knowledge.Rule {
		out := []knowledge.Rule{}
		for _, it := range xs {
			out = append(out, rule(it, tier))
		}
		return out
	}
	pats := []knowledge.Pattern{}
	for _, it := range sel.patterns {
		pats = append(pats, knowledge.Pattern{Name: it.name, Signature: it.signature, Indication: it.indication,
			Confidence: oneOf(it.confidence, "medium", "high", "medium", "low"), Evidence: it.ev})
	}
	flags := []knowledge.RedFlag{}
	for _, it := range sel.flags {
		flags = append(flags, knowledge.RedFlag{Signal: it.signal, Severity: oneOf(it.severity, "notice", "critical", "warning", "notice"),
			Action: it.action, Evidence: it.ev})
	}
	meta := &knowledge.Meta{Theme: x.opt.Theme, Extractor: "llm:" + x.opt.Model, PromptVersion: PromptVersion, Sources: sources(x.opt.Chunks)}
	return knowledge.Files{
		SOP:      knowledge.SOPFile{SOP: sop, Meta: meta},
		Patterns: knowledge.PatternsFile{Patterns: knowledge.Patterns{QuickPatterns: pats, RedFlags: flags}, Meta: meta},
		Rules: knowledge.RulesFile{Rules: knowledge.Rules{Tier1: rules(sel.t1, "tier1"), Tier2: rules(sel.t2, "tier2"),
			Tier3: rules(sel.t3, "tier3")}, Meta: meta},
	}
}
