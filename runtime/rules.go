package runtime

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"sync"
	"unicode"

	"gopkg.in/yaml.v3"

	"github.com/vibelife/vibe/knowledge"
	"github.com/vibelife/vibe/llm"
	"github.com/vibelife/vibe/skills"
)

// ruleIndex is a skill's knowledge/rules.yaml parsed once, with the grams of
// each rule (its text, and apart the heading path of its source, which names
// the topic) and their document frequencies.
type ruleIndex struct {
	rules  []knowledge.TieredRule
	text   []map[string]bool
	source []map[string]bool
	df     map[string]int
	// textIDF is the summed IDF of each rule's own grams.
	textIDF []float64
}

// ruleCache keeps the rule index of each skill until the skill reloads
// (a reload gives a new *skills.Skill). It is safe for concurrent use.
type ruleCache struct {
	mu sync.Mutex
	m  map[string]ruleCacheEntry
}

type ruleCacheEntry struct {
	sk  *skills.Skill
	idx *ruleIndex
	err error
}

func (c *ruleCache) get(sk *skills.Skill) (*ruleIndex, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.m[sk.Name]; ok && e.sk == sk {
		return e.idx, e.err
	}
	idx, err := buildRuleIndex(sk)
	if c.m == nil {
		c.m = map[string]ruleCacheEntry{}
	}
	c.m[sk.Name] = ruleCacheEntry{sk: sk, idx: idx, err: err}
	return idx, err
}

func buildRuleIndex(sk *skills.Skill) (*ruleIndex, error) {
	idx := &ruleIndex{}
	b, err := sk.ReadResource("knowledge/rules.yaml")
	if err != nil {
		return idx, nil // a skill without rules has none to retrieve
	}
	var rf knowledge.RulesFile
	if err := yaml.Unmarshal(b, &rf); err != nil {
		return nil, fmt.Errorf("get_rules: skill %s knowledge/rules.yaml: %w", sk.Name, err)
	}
	idx.rules = rf.Rules.All()
	idx.df = map[string]int{}
	for _, r := range idx.rules {
		tg := grams(r.Condition + " " + r.Conclusion + " " + r.Action + " " + r.Note)
		sg := grams(r.Source)
		idx.text = append(idx.text, tg)
		idx.source = append(idx.source, sg)
		seen := map[string]bool{}
		for _, m := range []map[string]bool{tg, sg} {
			for g := range m {
				if !seen[g] {
					seen[g] = true
					idx.df[g]++
				}
			}
		}
	}
	for _, tg := range idx.text {
		sum := 0.0
		for g := range tg {
			sum += idx.idf(g)
		}
		idx.textIDF = append(idx.textIDF, sum)
	}
	return idx, nil
}

// sourceWeight discounts a match in the rule's source heading path against
// one in the rule itself.
const sourceWeight = 0.4

// idf is the inverse document frequency of a gram among the rules.
func (idx *ruleIndex) idf(g string) float64 {
	n, df := float64(len(idx.rules)), float64(idx.df[g])
	return math.Log(1 + (n-df+0.5)/(df+0.5))
}

// score is how much of rule i the query grams q cover, each gram weighted
// by its rarity among the rules (so "茶" or "tea" counts for little and
// "temperature" for much), a gram found only in the rule's source heading
// path at sourceWeight: the IDF of the grams matched over the IDF of the
// rule's own grams. On the demo's rules and 18 questions this finds a right
// rule in the top 3 for 16 (the two misses ask in English about rules
// written in Chinese), against 14 without the source and IDF and 14 with
// BM25, which lets one rare word outweigh the rest.
func (idx *ruleIndex) score(i int, q map[string]bool) float64 {
	num := 0.0
	for g := range q {
		switch {
		case idx.text[i][g]:
			num += idx.idf(g)
		case idx.source[i][g]:
			num += sourceWeight * idx.idf(g)
		}
	}
	if num == 0 {
		return 0
	}
	return num / (idx.textIDF[i] + 1)
}

// weighted is one part of a rule query with its weight.
type weighted struct {
	text   string
	weight float64
}

// rank returns the k rules most relevant to the query parts: each part's
// score of the rule, times the part's weight, summed. Ties keep the
// file's order (tier 1 first). Never the whole file: a rule no part touches
// is left out.
func (idx *ruleIndex) rank(parts []weighted, k int) []knowledge.TieredRule {
	type scored struct {
		i int
		s float64
	}
	qs := make([]map[string]bool, len(parts))
	for i, p := range parts {
		qs[i] = grams(p.text)
	}
	var all []scored
	for i := range idx.rules {
		s := 0.0
		for j, q := range qs {
			s += parts[j].weight * idx.score(i, q)
		}
		if s > 0 {
			all = append(all, scored{i, s})
		}
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].s > all[j].s })
	out := []knowledge.TieredRule{}
	for i := 0; i < len(all) && i < k; i++ {
		out = append(out, idx.rules[all[i].i])
	}
	return out
}

// rulesFor returns the k rules of a skill most relevant to one question
// (get_rules and the offline mode).
func (a *Agent) rulesFor(skill, question string, k int) ([]knowledge.TieredRule, error) {
	sk, err := a.cfg.Skills.Get(skill)
	if err != nil {
		return nil, err
	}
	idx, err := a.rules.get(sk)
	if err != nil {
		return nil, err
	}
	return idx.rank([]weighted{{question, 1}}, k), nil
}

// contextRules returns the rules the system prompt carries for this step:
// relevant to the conversation, not only to the last message. The current
// message weighs most; the user's earlier turns (most recent first), the
// last answer and the protocol in progress (its name and next step) add
// to it, so a follow-up such as "and then?" keeps the rules of the topic.
//
// chat holds the earlier messages (the stored ones, or the client's
// transcript); all is the stored history the protocol's progress is read
// from.
func (a *Agent) contextRules(skill, msg string, chat, all []knowledge.StoredMessage, p *skills.Protocol, k int) ([]knowledge.TieredRule, error) {
	sk, err := a.cfg.Skills.Get(skill)
	if err != nil {
		return nil, err
	}
	idx, err := a.rules.get(sk)
	if err != nil || len(idx.rules) == 0 {
		return nil, err
	}
	parts := []weighted{{msg, 1}}
	userW, answered := 0.5, false
	for i := len(chat) - 1; i >= 0 && userW > 0.1; i-- {
		switch chat[i].Role {
		case llm.RoleUser:
			parts = append(parts, weighted{chat[i].Content, userW})
			userW /= 2
		case llm.RoleAssistant:
			if !answered {
				parts = append(parts, weighted{chat[i].Content, 0.25})
				answered = true
			}
		}
	}
	if p != nil {
		q := p.Name + " " + strings.Join(p.Triggers, " ")
		if len(p.Steps) > 0 {
			if _, next := progress(p, protocolRun(all, p)); next != "" {
				q += " " + next
			}
		}
		parts = append(parts, weighted{q, 0.5})
	}
	return idx.rank(parts, k), nil
}

// stopWords are English words too common to tell rules apart.
var stopWords = map[string]bool{
	"the": true, "an": true, "of": true, "to": true, "is": true, "are": true, "be": true, "and": true,
	"or": true, "for": true, "in": true, "on": true, "at": true, "it": true, "its": true, "with": true,
	"as": true, "by": true, "from": true, "that": true, "this": true, "what": true, "how": true,
	"should": true, "do": true, "does": true, "my": true, "me": true, "you": true, "your": true,
	"can": true, "when": true, "if": true, "then": true, "not": true, "no": true, "so": true,
	"was": true, "were": true, "will": true, "which": true, "there": true, "they": true, "them": true,
}

// grams returns the lower-cased word tokens (stop words left out) and CJK
// characters and character bigrams of s.
func grams(s string) map[string]bool {
	out := map[string]bool{}
	var word []rune
	var prev rune
	flush := func() {
		if w := string(word); len(word) > 1 && !stopWords[w] {
			out[w] = true
		}
		word = word[:0]
	}
	for _, r := range strings.ToLower(s) {
		switch {
		case unicode.Is(unicode.Han, r):
			flush()
			out[string(r)] = true
			if prev != 0 {
				out[string([]rune{prev, r})] = true
			}
			prev = r
			continue
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			word = append(word, r)
		default:
			flush()
		}
		prev = 0
	}
	flush()
	return out
}
