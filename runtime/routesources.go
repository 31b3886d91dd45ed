package runtime

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strings"
	"unicode/utf8"

	"go.opentelemetry.io/otel/attribute"

	"github.com/vibelife/vibe/knowledge"
	"github.com/vibelife/vibe/knowledge/lexical"
	"github.com/vibelife/vibe/skills"
)

// Routing by what the sources say. The router (skills.Set.Route) reads a
// skill's vocabulary: its triggers, glossary, rules and the headings of its
// sources, never the passages' text. A message about something the books
// tell of in passing ("How is blubber tried out into oil on a whaler?" to a
// skill holding Moby-Dick, whose chapter is "The Try-Works") shares one
// word with that vocabulary, or none. When the router finds no skill, the
// sources are asked: one bounded lexical search of the message over each
// installed skill's store, and a skill is chosen when one of its passages
// holds most of the message's rare terms, several of them, clearly more of
// them than any other skill's passages do.
const (
	// evidenceK is the number of passages read per skill.
	evidenceK = 3
	// rareShare is the share of a theme's chunks a token may be held by
	// and still be rare there (a term of that theme's subject, not of
	// every page of its books).
	rareShare = 0.05
	// minEvidenceTerms is the number of distinct rare terms of the
	// message a passage must hold (one word the books share with the
	// message is chance); a CJK bigram counts, a lone character does not.
	minEvidenceTerms = 2
	// minEvidenceShare is the share of the message's weight (each token
	// by its rarity in that theme, a token the theme never holds at the
	// most) the passage must hold.
	minEvidenceShare = 0.55
	// minEvidenceShareMany is the share a passage holding three rare
	// terms or more must hold: more distinct rare terms together are
	// more evidence (关羽, 斩华, 华雄 of 关羽温酒斩华雄, whose other bigrams,
	// 羽温 and 酒斩, straddle words no book writes).
	minEvidenceShareMany = 0.45
	// evidenceLead is how much the best skill's share must exceed the
	// second's.
	evidenceLead = 1.25
)

// SourceEvidence is what one skill's sources say to a message: its best
// passage and how much of the message that passage holds.
type SourceEvidence struct {
	Skill string `json:"skill"`
	// Share is the share of the message's weight the passage holds: each
	// token of the message (lexical.QueryTokens) weighs its inverse
	// document frequency among the theme's chunks, a token no chunk holds
	// the most; 1 when the passage holds them all.
	Share float64 `json:"share"`
	// Terms are the message's rare terms (words, Han bigrams held by at
	// most rareShare of the theme's chunks) the passage holds.
	Terms []string `json:"terms,omitempty"`
	// Passage is the chunk's id, Heading its book and heading path.
	Passage string `json:"passage,omitempty"`
	Heading string `json:"heading,omitempty"`
}

// Clear reports whether the passage answers the message clearly enough to
// route to its skill on that alone.
func (e SourceEvidence) Clear() bool {
	switch {
	case len(e.Terms) >= minEvidenceTerms+1:
		return e.Share >= minEvidenceShareMany
	case len(e.Terms) >= minEvidenceTerms:
		return e.Share >= minEvidenceShare
	}
	return false
}

// String says what the evidence is, for a route's reason and the model's
// advice: `mixed: "Moby-Dick › CHAPTER 96. The Try-Works" holds blubber,
// oil, whaler (0.81 of the message)`.
func (e SourceEvidence) String() string {
	return fmt.Sprintf("%s: %q holds %s (%.2f of the message)", e.Skill, e.Heading, strings.Join(e.Terms, ", "), e.Share)
}

// sourceEvidence asks each installed skill's sources about msg (one
// lexical search of evidenceK passages per skill, and the theme's counts
// of the message's tokens), best first. It returns nil when the store
// cannot count terms (knowledge.TermCounter) or there is no store.
func (a *Agent) sourceEvidence(ctx context.Context, msg string) []SourceEvidence {
	tc, ok := a.cfg.Searcher.(knowledge.TermCounter)
	if !ok || a.cfg.Searcher == nil {
		return nil
	}
	toks := lexical.QueryTokens(msg)
	if len(toks) == 0 {
		return nil
	}
	var out []SourceEvidence
	for _, h := range a.cfg.Skills.Headers() {
		theme := h.Theme
		if theme == "" {
			theme = h.Name
		}
		e, err := evidenceIn(ctx, a.cfg.Searcher, tc, theme, msg, toks)
		if err != nil || e.Passage == "" {
			continue
		}
		e.Skill = h.Name
		out = append(out, e)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Share > out[j].Share })
	return out
}

// evidenceIn scores the best of a theme's evidenceK passages for msg.
func evidenceIn(ctx context.Context, s Searcher, tc knowledge.TermCounter, theme, msg string, toks []string) (SourceEvidence, error) {
	var best SourceEvidence
	counts, err := tc.TermCounts(ctx, theme, toks)
	if err != nil || counts.Chunks == 0 {
		return best, err
	}
	hits, err := s.Search(ctx, knowledge.Query{Theme: theme, Text: msg, K: evidenceK, Mode: knowledge.SearchLexical})
	if err != nil {
		return best, err
	}
	n := float64(counts.Chunks)
	weight := make([]float64, len(toks))
	total := 0.0
	for i := range toks {
		// A token no chunk holds weighs as one held by half a chunk.
		df := math.Max(float64(counts.DF[i]), 0.5)
		weight[i] = math.Log(1 + n/df)
		total += weight[i]
	}
	for _, h := range hits {
		held := map[string]bool{}
		for _, t := range lexical.ChunkTokens(h.Chunk) {
			held[t] = true
		}
		e := SourceEvidence{Passage: h.Chunk.ID, Heading: strings.Join(append([]string{h.Chunk.Title}, h.Chunk.HeadingPath...), " › ")}
		for i, t := range toks {
			if !held[t] {
				continue
			}
			e.Share += weight[i] / total
			if df := counts.DF[i]; df > 0 && float64(df) <= rareShare*n && isTerm(t) {
				e.Terms = append(e.Terms, t)
			}
		}
		if e.Share > best.Share {
			best = e
		}
	}
	return best, nil
}

// isTerm reports whether a token can name a subject on its own: a word, or
// a CJK bigram (a lone Han character is too often part of other words).
func isTerm(t string) bool {
	r, _ := utf8.DecodeRuneInString(t)
	if lexical.IsCJK(r) {
		return utf8.RuneCountInString(t) >= 2
	}
	return len(t) > 2
}

// sourcesReason starts the reason of a route the sources chose.
const sourcesReason = "sources: "

// routeBySources returns the skill whose sources clearly answer msg and why,
// "" when none does clearly or two do about as well.
func routeBySources(ev []SourceEvidence) (string, string) {
	if len(ev) == 0 || !ev[0].Clear() {
		return "", ""
	}
	if len(ev) > 1 && ev[0].Share < evidenceLead*ev[1].Share {
		return "", ""
	}
	return ev[0].Skill, sourcesReason + ev[0].String()
}

// A router choice on prose alone gives way to another skill's sources
// when one of their passages holds minEvidenceTerms rare terms of the
// message, at least outweighShare of it, and outweighLead times the share
// the chosen skill's best passage holds: the sources must say clearly
// more than the router's words did.
const (
	outweighShare = 0.3
	outweighLead  = 2.0
)

// outweighedBySources returns the skill whose sources clearly outweigh
// the router's choice pick, one made on words of prose alone, and why; ""
// when none does. "What is the fifty-move rule and when does the count
// start again?" shares "rule", "count" and "again" with a travel handbook's
// prose, and nothing with a chess skill's vocabulary, while a chess book's
// passage holds fifty and rule (0.48 of the message) against the
// handbook's best, count (0.15).
func outweighedBySources(pick string, ev []SourceEvidence) (string, string) {
	if len(ev) == 0 || ev[0].Skill == pick {
		return "", ""
	}
	mine := 0.0
	for _, e := range ev {
		if e.Skill == pick {
			mine = e.Share
		}
	}
	best := ev[0]
	if len(best.Terms) < minEvidenceTerms || best.Share < outweighShare || best.Share < outweighLead*mine {
		return "", ""
	}
	return best.Skill, sourcesReason + best.String() + fmt.Sprintf("; the router's %s shared words of prose only (its sources: %.2f)", pick, mine)
}

// route is the skill a message goes to without a model, and why: the
// router's choice (skills.Set.Match), unless it rests on words of prose
// alone and another skill's sources clearly hold more of the message
// (outweighedBySources); else, when the router found none, the skill whose
// sources clearly answer the message (routeBySources). The choice and its
// reason go on the turn's trace.
func (a *Agent) route(ctx context.Context, msg string) (string, string) {
	_, span := a.tracer.Start(ctx, "vibe.route")
	defer span.End()
	skill, reason := a.routeReason(ctx, msg)
	span.SetAttributes(attribute.String("vibe.skill", skill), attribute.String("vibe.route_reason", reason))
	return skill, reason
}

func (a *Agent) routeReason(ctx context.Context, msg string) (string, string) {
	cs := a.routeCandidates(msg)
	if m := skills.Pick(cs); m != "" {
		for _, c := range cs {
			if c.Name == m {
				if c.ProseOnly() && len(a.cfg.Skills.Headers()) > 1 {
					if s, why := outweighedBySources(m, a.sourceEvidence(ctx, msg)); s != "" {
						return s, why
					}
				}
				return m, "router: " + candidateReason(c)
			}
		}
		return m, "router"
	}
	if len(a.cfg.Skills.Headers()) < 2 {
		// The only skill answers anyway (the offline mode's only-skill
		// path): no question to ask the sources.
		return "", ""
	}
	if s, why := routeBySources(a.sourceEvidence(ctx, msg)); s != "" {
		return s, why
	}
	return "", ""
}

// candidateReason says why the router chose a candidate.
func candidateReason(c skills.Candidate) string {
	var parts []string
	if len(c.Matched) > 0 {
		m := c.Matched
		if len(m) > 4 {
			m = m[:4]
		}
		parts = append(parts, "terms "+strings.Join(m, ", "))
	}
	if len(c.Sections) > 0 {
		parts = append(parts, "sections "+strings.Join(c.Sections, ", "))
	}
	if len(c.Bridged) > 0 {
		parts = append(parts, "terms in translation "+strings.Join(c.Bridged, ", "))
	}
	s := fmt.Sprintf("%s (score %.2f, coverage %.2f", c.Name, c.Score, c.Coverage)
	if len(parts) > 0 {
		s += "; " + strings.Join(parts, "; ")
	}
	return s + ")"
}

// anyFits reports whether a router candidate fits strongly.
func anyFits(cs []skills.Candidate) bool {
	for _, c := range cs {
		if c.Fits() {
			return true
		}
	}
	return false
}

// sourcesAdvice tells the model, when no router candidate is strong, which
// skills' sources hold rare terms of the message, each with the passage's
// heading: advice, never a verdict ("" when no source holds two of them).
func sourcesAdvice(ev []SourceEvidence) string {
	var parts []string
	for _, e := range ev {
		if len(parts) == 2 {
			break
		}
		if len(e.Terms) < minEvidenceTerms {
			continue
		}
		strength := "weak"
		if e.Clear() {
			strength = "clear"
		}
		parts = append(parts, fmt.Sprintf("%s (%s: %q holds %s, %.2f of the message)", e.Skill, strength, e.Heading, strings.Join(e.Terms, ", "), e.Share))
	}
	if len(parts) == 0 {
		return ""
	}
	return "原文 / sources: 这些技能的原文含有消息中的词语 / the sources of these skills hold words of this message: " + strings.Join(parts, "; ") +
		"; 仅作参考，由你判断 / advice only: activate one if the question is about what that passage tells of\n"
}
