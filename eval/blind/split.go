// Package blind holds the project's blind test material (issue 28): eval files for themes built
// from sources the project never tuned on, each split into a dev half that may be tuned on and a
// test half that never is. The sources themselves are not in the repository (see each theme's
// SOURCES.md); this package only knows how the cases are split, so that the split can be checked
// and reproduced without them.
package blind

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
	"strings"

	"github.com/vibelife/vibe/eval/agenteval"
)

// Seed is the seed of every theme's split. Changing it reshuffles every theme, so it never
// changes once a test half has been scored.
const Seed = "vibe-blind-2026-11-27"

// Languages are the language tags a blind case may carry; exactly one is required.
var Languages = []string{"zh", "en", "es"}

// Kinds are the kind tags a blind case may carry; exactly one is required: a question answered
// by a passage, one answered by a rule (it also names a passage), one no skill should take, and
// a scripted dialogue.
var Kinds = []string{"passage", "rule", "off-topic", "dialogue"}

// Stratum returns the case's "language/kind" from its tags, checking that the kind tag says what
// the case is (rule_text for a rule, skill none for off-topic, turns for a dialogue).
func Stratum(c agenteval.Case) (string, error) {
	lang, err := oneTag(c, Languages)
	if err != nil {
		return "", err
	}
	kind, err := oneTag(c, Kinds)
	if err != nil {
		return "", err
	}
	want := "passage"
	switch {
	case len(c.Turns) > 0:
		want = "dialogue"
	case c.Skill == agenteval.None:
		want = "off-topic"
	case len(c.RuleText) > 0 || len(c.Rules) > 0:
		want = "rule"
	}
	if kind != want {
		return "", fmt.Errorf("case %s: tagged %q but it is a %s case", c.ID, kind, want)
	}
	return lang + "/" + kind, nil
}

func oneTag(c agenteval.Case, from []string) (string, error) {
	var got []string
	for _, t := range c.Tags {
		for _, f := range from {
			if t == f {
				got = append(got, t)
			}
		}
	}
	if len(got) != 1 {
		return "", fmt.Errorf("case %s: want exactly one tag of %s, got %v", c.ID, strings.Join(from, ", "), got)
	}
	return got[0], nil
}

// Split divides cases into the dev and test halves, stratified by kind and language. The cases
// are put in order of kind, then language, then the hex SHA-256 of seed + "\x00" + id (a seeded
// shuffle any language can redo), and dealt alternately to dev and test along that order. So
// each kind, and each language within a kind, splits into halves that differ by at most one
// case, and the result depends only on the ids, their strata and the seed, not on the order of
// the cases.
func Split(cases []agenteval.Case, seed string) (dev, test []string, err error) {
	type item struct{ kind, lang, key, id string }
	var items []item
	for _, c := range cases {
		s, err := Stratum(c)
		if err != nil {
			return nil, nil, err
		}
		lang, kind, _ := strings.Cut(s, "/")
		items = append(items, item{kind, lang, shuffleKey(seed, c.ID), c.ID})
	}
	sort.Slice(items, func(i, j int) bool {
		a, b := items[i], items[j]
		if a.kind != b.kind {
			return a.kind < b.kind
		}
		if a.lang != b.lang {
			return a.lang < b.lang
		}
		return a.key < b.key
	})
	for i, it := range items {
		if i%2 == 0 {
			dev = append(dev, it.id)
		} else {
			test = append(test, it.id)
		}
	}
	return dev, test, nil
}

func shuffleKey(seed, id string) string {
	h := sha256.Sum256([]byte(seed + "\x00" + id))
	return hex.EncodeToString(h[:])
}
