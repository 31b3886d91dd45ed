package extract

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"

	"github.com/vibelife/vibe/knowledge"
)

// Id prefixes of the items that get numbered ids.
const (
	rulePrefix    = "R"
	patternPrefix = "PAT"
	redFlagPrefix = "RF"
)

// normalise folds text for matching: lower case, no spaces or punctuation.
func normalise(s string) string {
	var b strings.Builder
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			b.WriteRune(unicode.ToLower(r))
		}
	}
	return b.String()
}

func evKey(ev []knowledge.Evidence) string {
	if len(ev) == 0 {
		return ""
	}
	return ev[0].Chunk + "\x00" + normalise(ev[0].Quote)
}

// idAllocator hands out ids: an item matching a previous one by content or
// by evidence keeps its id; others get fresh numbers above every previous
// one, so old ids are never renumbered.
type idAllocator struct {
	prefix string
	byText map[string]string
	byEv   map[string]string
	used   map[string]bool
	next   int
	kept   int
}

func newAllocator(prefix string) *idAllocator {
	return &idAllocator{prefix: prefix, byText: map[string]string{}, byEv: map[string]string{}, used: map[string]bool{}, next: 1}
}

func (a *idAllocator) remember(id, text string, ev []knowledge.Evidence) {
	if t := normalise(text); t != "" {
		if _, ok := a.byText[t]; !ok {
			a.byText[t] = id
		}
	}
	if k := evKey(ev); k != "" {
		if _, ok := a.byEv[k]; !ok {
			a.byEv[k] = id
		}
	}
	if n, err := strconv.Atoi(strings.TrimPrefix(id, a.prefix)); err == nil && strings.HasPrefix(id, a.prefix) && n >= a.next {
		a.next = n + 1
	}
}

func (a *idAllocator) assign(text string, ev []knowledge.Evidence) string {
	for _, id := range []string{a.byText[normalise(text)], a.byEv[evKey(ev)]} {
		if id != "" && !a.used[id] {
			a.used[id] = true
			a.kept++
			return id
		}
	}
	for {
		id := fmt.Sprintf("%s%03d", a.prefix, a.next)
		a.next++
		if !a.used[id] {
			a.used[id] = true
			return id
		}
	}
}

func ruleText(r knowledge.Rule) string {
	return r.Condition + "|" + r.Conclusion + r.Action
}

// StableIDs gives the items of f their ids, re-using those of prev for
// items whose content (or evidence) did not change. It returns how many ids
// were kept. prev may be nil.
func StableIDs(f *knowledge.Files, prev *knowledge.Files) int {
	rules, pats, flags := newAllocator(rulePrefix), newAllocator(patternPrefix), newAllocator(redFlagPrefix)
	if prev != nil {
		for _, r := range prev.Rules.Rules.All() {
			rules.remember(r.ID, ruleText(r.Rule), r.Evidence)
		}
		for _, p := range prev.Patterns.Patterns.QuickPatterns {
			pats.remember(p.ID, p.Name, p.Evidence)
		}
		for _, x := range prev.Patterns.Patterns.RedFlags {
			flags.remember(x.ID, x.Signal, x.Evidence)
		}
	}
	// Match every item by content first, so an unchanged item is never
	// robbed of its id by an earlier changed one matching its evidence.
	tiers := []*[]knowledge.Rule{&f.Rules.Rules.Tier1, &f.Rules.Rules.Tier2, &f.Rules.Rules.Tier3}
	for _, t := range tiers {
		for i := range *t {
			(*t)[i].ID = ""
			r := &(*t)[i]
			if id := rules.byText[normalise(ruleText(*r))]; id != "" && !rules.used[id] {
				rules.used[id], r.ID = true, id
				rules.kept++
			}
		}
	}
	for _, t := range tiers {
		for i := range *t {
			if r := &(*t)[i]; r.ID == "" {
				r.ID = rules.assign(ruleText(*r), r.Evidence)
			}
		}
	}
	qp := f.Patterns.Patterns.QuickPatterns
	for i := range qp {
		qp[i].ID = pats.assign(qp[i].Name, qp[i].Evidence)
	}
	rf := f.Patterns.Patterns.RedFlags
	for i := range rf {
		rf[i].ID = flags.assign(rf[i].Signal, rf[i].Evidence)
	}
	return rules.kept + pats.kept + flags.kept
}
