package runtime

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/vibelife/vibe/chunk"
	"github.com/vibelife/vibe/knowledge"
)

// EventCitations carries, once per answer before its done event, the
// sources the answer rests on, so a client can show a source panel.
const EventCitations = "citations"

// Citation is one source an answer rests on: a rule (with the passage of
// its evidence) or a retrieved passage.
type Citation struct {
	// Kind is "rule", "passage" or "web" (a web_search result).
	Kind string `json:"kind"`
	// OutsideSkill marks a source that is not the skill's knowledge (a
	// web_search result); URL is its address.
	OutsideSkill bool   `json:"outside_skill,omitempty"`
	URL          string `json:"url,omitempty"`
	// Skill is the skill the source belongs to, when several are active.
	Skill string `json:"skill,omitempty"`
	// RuleID names the rule of a rule citation (R024).
	RuleID string `json:"rule_id,omitempty"`
	// ChunkID is the cited passage's chunk.
	ChunkID string `json:"chunk_id,omitempty"`
	// Source is the source file the passage comes from; Doc its converted
	// Markdown.
	Source string `json:"source,omitempty"`
	Doc    string `json:"doc,omitempty"`
	// HeadingPath locates the passage in its book (for a rule whose chunk
	// the store cannot give, the rule's own source path).
	HeadingPath []string `json:"heading_path,omitempty"`
	// Start and End are the passage's byte offsets in Doc.
	Start int `json:"start,omitempty"`
	End   int `json:"end,omitempty"`
	// Quote is the rule's evidence quote, or the start of the passage.
	Quote string `json:"quote"`
	// Text is a rule's statement (condition and what follows from it, a
	// grave verdict with its caveat).
	Text string `json:"text,omitempty"`
	// Cited is true when the answer names the rule or the chunk.
	Cited bool `json:"cited,omitempty"`
}

// chunkGetter is the optional capability of a Searcher to return one chunk
// by id (knowledge.Store has it); with it a rule's citation gets its
// passage's file, heading path and offsets.
type chunkGetter interface {
	Chunk(ctx context.Context, id string) (chunk.Chunk, error)
}

// maxQuote is the longest passage quote a citation carries, in runes.
const maxQuote = 300

func quoteOf(text string) string {
	r := []rune(strings.Join(strings.Fields(text), " "))
	if len(r) > maxQuote {
		return string(r[:maxQuote]) + "…"
	}
	return string(r)
}

// ruleCitations returns the citations of rules of a skill ("" when only
// one is active): one per evidence quote.
func (a *Agent) ruleCitations(ctx context.Context, skill string, rules []knowledge.TieredRule) []Citation {
	var out []Citation
	for _, r := range rules {
		c := Citation{Kind: "rule", Skill: skill, RuleID: r.ID, HeadingPath: splitSource(r.Source), Text: ruleText(r)}
		if len(r.Evidence) == 0 {
			c.Quote = r.Condition
			out = append(out, c)
			continue
		}
		for _, e := range r.Evidence {
			c := c
			c.ChunkID, c.Quote = e.Chunk, e.Quote
			if g, ok := a.cfg.Searcher.(chunkGetter); ok && e.Chunk != "" {
				if ch, err := g.Chunk(ctx, e.Chunk); err == nil {
					c.Source, c.Doc, c.Start, c.End = ch.Source, ch.Doc, ch.Start, ch.End
					if len(ch.HeadingPath) > 0 {
						c.HeadingPath = ch.HeadingPath
					}
				}
			}
			out = append(out, c)
		}
	}
	return out
}

// splitSource splits a rule's source ("子平真诠 > 四、论十干配合性情") into
// its path.
func splitSource(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ">") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func passageCitations(ps []Passage) []Citation {
	out := make([]Citation, 0, len(ps))
	for _, p := range ps {
		out = append(out, Citation{Kind: "passage", Skill: p.Skill, ChunkID: p.ChunkID, Source: p.Source, Doc: p.Doc,
			HeadingPath: p.HeadingPath, Start: p.Start, End: p.End, Quote: quoteOf(p.Text)})
	}
	return out
}

// toolCitations reads the citations of a tool's result: the rules of
// get_rules and the passages of search_knowledge; none for other tools.
func (a *Agent) toolCitations(ctx context.Context, tool string, res json.RawMessage) []Citation {
	switch tool {
	case "get_rules":
		var out struct {
			Skills []string    `json:"skills"`
			Rules  []skillRule `json:"rules"`
			// Partial rules reach the model too, which may cite them.
			Partial []skillRule `json:"partial"`
		}
		if json.Unmarshal(res, &out) == nil {
			var cs []Citation
			for _, r := range append(out.Rules, out.Partial...) {
				skill := ""
				if len(out.Skills) > 1 {
					skill = r.Skill
				}
				cs = append(cs, a.ruleCitations(ctx, skill, []knowledge.TieredRule{r.TieredRule})...)
			}
			return cs
		}
	case "web_search":
		return webCitations(res)
	default:
		// search_knowledge and the skills' retrieve tools answer passages.
		return passageCitations(passagesOf(res))
	}
	return nil
}

// addNamedRules adds to the turn's citations the rules of the active skills
// the answer names by id that the turn did not retrieve (a rule SKILL.md
// lists, which the model has from the system prompt): every rule an answer
// cites has its source.
func (a *Agent) addNamedRules(ctx context.Context, t *turn, answer string) {
	names := splitSkills(t.activeSkill())
	t.mu.Lock()
	have := map[string]bool{}
	for _, c := range t.citations {
		have[c.Skill+"|"+c.RuleID] = true
	}
	t.mu.Unlock()
	for _, n := range names {
		sk, err := a.cfg.Skills.Get(n)
		if err != nil {
			continue
		}
		idx, err := a.rules.get(sk)
		if err != nil {
			continue
		}
		label := ""
		if len(names) > 1 {
			label = n
		}
		for _, r := range idx.rules {
			if r.ID != "" && !have[label+"|"+r.ID] && namesID(answer, r.ID) {
				t.addCitations(a.ruleCitations(ctx, label, []knowledge.TieredRule{r}))
			}
		}
	}
}

// namesID reports whether text holds id as a whole token (R008, not R0081).
func namesID(text, id string) bool {
	isID := func(b byte) bool {
		return b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b == '_'
	}
	for from := 0; ; {
		i := strings.Index(text[from:], id)
		if i < 0 {
			return false
		}
		i += from
		end := i + len(id)
		if (i == 0 || !isID(text[i-1])) && (end == len(text) || !isID(text[end])) {
			return true
		}
		from = i + 1
	}
}

// addCitations records citations for the turn's answer, each source once.
func (t *turn) addCitations(cs []Citation) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.citeSeen == nil {
		t.citeSeen = map[string]bool{}
	}
	for _, c := range cs {
		k := c.Kind + "|" + c.Skill + "|" + c.RuleID + "|" + c.ChunkID + "|" + c.Quote
		if !t.citeSeen[k] {
			t.citeSeen[k] = true
			t.citations = append(t.citations, c)
		}
	}
}

// answerCitations returns the turn's citations, each marked when the
// answer names it (nil when the answer rests on no source).
func (t *turn) answerCitations(answer string) []Citation {
	t.mu.Lock()
	cs := append([]Citation(nil), t.citations...)
	t.mu.Unlock()
	if len(cs) == 0 {
		return nil
	}
	for i := range cs {
		cs[i].Cited = (cs[i].RuleID != "" && strings.Contains(answer, cs[i].RuleID)) ||
			(cs[i].ChunkID != "" && strings.Contains(answer, cs[i].ChunkID)) ||
			(cs[i].URL != "" && strings.Contains(answer, cs[i].URL))
	}
	return cs
}

// sendCitations sends the answer's citations as one event (nothing when
// there are none).
func (t *turn) sendCitations(cs []Citation) error {
	if len(cs) == 0 {
		return nil
	}
	return t.send(Event{Type: EventCitations, Citations: cs})
}
