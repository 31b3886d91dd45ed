package extract

import (
	"context"
	"regexp"
	"sort"
	"strings"
)

// Gap pass tuning.
const (
	// gapShare bounds the source text the gap pass re-reads, as a share of
	// all source tokens: the build's tokens sent per source token stay
	// under 1.5 whatever the map found.
	gapShare = 0.15
	// minRuleLike is how many rule-like sentences a heading group needs to
	// be worth a second reading.
	minRuleLike = 2
)

var (
	// ruleLikeZh and ruleLikeEn find sentences that read like rules:
	// conditionals with a consequent, ……者……也 definitions, modal
	// judgements.
	ruleLikeZh  = regexp.MustCompile(`(?:凡|若|如|苟|倘|假如|如若).{1,40}?(?:则|必|宜|忌|不可|主|为)|^.{2,15}者[，,].{2,80}也|切忌|大忌|不可不`)
	ruleLikeEn  = regexp.MustCompile(`(?i)\b(?:if|when|whenever|unless)\b.{3,}?,|\b(?:must|should|never)\b`)
	sentenceEnd = regexp.MustCompile(`[。！？；!?;\n]+|\.\s`)
)

// ruleLike counts the rule-like sentences of a heading group.
func ruleLike(g group) int {
	n := 0
	for _, c := range g.chunks {
		for _, s := range sentenceEnd.Split(c.Text, -1) {
			s = strings.TrimSpace(s)
			if s == "" || strings.HasPrefix(s, "#") {
				continue
			}
			if ruleLikeZh.MatchString(s) || ruleLikeEn.MatchString(s) {
				n++
			}
		}
	}
	return n
}

// gapPass re-reads the heading groups with rule-like content that no map
// candidate cites, most rule-like first, within gapShare of the source
// tokens, with the gap prompt. It runs before the reduce, so its
// candidates are reviewed with the map's in the same requests. Candidates
// repeating a map candidate verbatim add their evidence to it; the others
// are returned, numbered g1, g2, ...
func (x *llmRun) gapPass(ctx context.Context, cands []*item) ([]*item, error) {
	if x.pending {
		return nil, nil
	}
	x.ran[StageGap] = true
	cited := map[string]bool{}
	for _, it := range cands {
		for _, e := range it.ev {
			cited[e.Chunk] = true
		}
	}
	type gap struct {
		g             group
		score, tokens int
		idx           int
	}
	var gaps []gap
	for i, g := range groups(x.opt.Chunks) {
		covered, tokens := false, 0
		for _, c := range g.chunks {
			covered = covered || cited[c.ID]
			tokens += x.tokens[x.seq[c.ID]]
		}
		if covered {
			continue
		}
		if n := ruleLike(g); n >= minRuleLike {
			gaps = append(gaps, gap{g, n, tokens, i})
		}
	}
	sort.SliceStable(gaps, func(i, j int) bool { return gaps[i].score > gaps[j].score })
	budget := int(gapShare * float64(x.st.SourceTokens))
	var chosen []gap
	used := 0
	for _, g := range gaps {
		if used+g.tokens > budget {
			continue
		}
		used += g.tokens
		chosen = append(chosen, g)
	}
	sort.Slice(chosen, func(i, j int) bool { return chosen[i].idx < chosen[j].idx })
	gs := make([]group, len(chosen))
	for i, g := range chosen {
		gs[i] = g.g
	}
	x.st.GapSections = len(gs)
	secs := pack(gs)
	x.st.GapRequests = len(secs)
	items, err := x.read(ctx, StageGap, gapPrompt, "extract_gap", secs, "g")
	if err != nil {
		return nil, err
	}
	known := map[string]*item{}
	for _, it := range cands {
		known[it.key()] = it
	}
	var found []*item
	for _, it := range items {
		if k, ok := known[it.key()]; ok {
			k.addEvidence(it.ev)
			x.st.Merged++
			continue
		}
		found = append(found, it)
	}
	found = x.dedupe(found)
	x.st.GapCandidates = len(found)
	return found, nil
}
