package extract

import (
	"context"
	"fmt"
	"testing"

	"github.com/vibelife/vibe/chunk"
	"github.com/vibelife/vibe/knowledge"
)

// An offline build keeps a tier 2 sized to its sources, two rules a chunk
// (at least the design's 50, at most knowledge.MaxOfflineTier2): a
// handbook of 120 sections, each with its own rule, keeps far more than 50
// of them (the design's 30-50 left the answering rule out for most of a
// new theme's questions; docs/blind.md).
func TestOfflineTier2SizedToTheSources(t *testing.T) {
	for _, c := range []struct{ n, want int }{{10, maxTier2}, {120, 240}, {5000, knowledge.MaxOfflineTier2}} {
		if got := offlineTier2Cap(c.n); got != c.want {
			t.Errorf("offlineTier2Cap(%d) = %d, want %d", c.n, got, c.want)
		}
	}
	// Words made of syllables, distinct for every section, so no two
	// rules nearly repeat each other.
	syll := []string{"ka", "lo", "mi", "ren", "tu", "vos", "pel", "dar", "qui", "sen", "bro", "fal"}
	word := func(i, k int) string {
		return syll[(i*7+k*3)%len(syll)] + syll[(i/3+k*5)%len(syll)] + syll[(i/11+k)%len(syll)]
	}
	var chunks []chunk.Chunk
	for i := range 120 {
		heading := word(i, 0) + " " + word(i, 1)
		text := fmt.Sprintf("If a traveler claims %s %s on a trip to %s, the traveler must keep an itemized %s receipt.",
			word(i, 0), word(i, 1), word(i, 2), word(i, 3))
		chunks = append(chunks, chunk.Chunk{ID: fmt.Sprintf("handbook.md#%d", i), Doc: "handbook.md", HeadingPath: []string{"Travel", heading}, Text: text})
	}
	files, err := Offline(context.Background(), "travel", chunks, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := files.Rules.Rules
	if n := len(r.Tier1) + len(r.Tier2); n <= maxTier1+maxTier2 {
		t.Errorf("kept %d tier-1 and tier-2 rules of 120 sections, want more than the design's %d", n, maxTier1+maxTier2)
	}
	if len(r.Tier2) > offlineTier2Cap(len(chunks)) {
		t.Errorf("tier 2 holds %d rules, over the cap %d", len(r.Tier2), offlineTier2Cap(len(chunks)))
	}
	// The design's 50 are the core, the rest marked extra: the skill's
	// vocabulary is mined from the core only (knowledge.Rules.Core).
	core := 0
	for _, x := range r.Tier2 {
		if !x.Extra {
			core++
		}
	}
	if core != maxTier2 {
		t.Errorf("%d of %d tier-2 rules are core, want the design's %d", core, len(r.Tier2), maxTier2)
	}
	if n := len(r.Core()); n != len(r.Tier1)+maxTier2+len(r.Tier3) {
		t.Errorf("Core() holds %d rules, want tiers 1 and 3 and the %d core tier-2 rules", n, maxTier2)
	}
}
