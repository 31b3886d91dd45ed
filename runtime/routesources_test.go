package runtime

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vibelife/vibe/chunk"
	"github.com/vibelife/vibe/knowledge"
	"github.com/vibelife/vibe/knowledge/sqlite"
	"github.com/vibelife/vibe/llm"
)

// storeWith opens a SQLite store holding, per theme, one document of the
// given passages (heading -> text).
func storeWith(t *testing.T, themes map[string][][2]string) *sqlite.Store {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "vibe.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	for theme, ps := range themes {
		doc := "knowledge/" + theme + "/converted/book.md"
		var cs []chunk.Chunk
		for i, p := range ps {
			cs = append(cs, chunk.Chunk{ID: fmt.Sprintf("c_%s_%d", theme, i), Doc: doc, Source: "knowledge/" + theme + "/source/book.md",
				Title: "Book of " + theme, HeadingPath: []string{p[0]}, Ordinal: i, Text: p[1], Tokens: len(p[1]) / 4})
		}
		if err := st.ReplaceDocument(ctx, knowledge.Document{ID: doc, Theme: theme, ContentHash: theme}, cs, nil, knowledge.EmbeddingInfo{}); err != nil {
			t.Fatal(err)
		}
	}
	return st
}

// whalingAndLaw are the passages of two skills: a book of a bankruptcy
// trustee's duties that tells of whaling in one chapter, and a book of tea.
func whalingAndLaw() map[string][][2]string {
	law := [][2]string{{"Chapter 96. The Try-Works", "The blubber is cut and tried out in the try-works on deck: the pots boil it into oil, and the whaler's crew stows the oil below."}}
	for i := 0; i < 40; i++ {
		law = append(law, [2]string{fmt.Sprintf("Section %d. Trustee duties", i),
			fmt.Sprintf("The standing trustee reviews plan %d, the debtor's payments and the creditors' claims filed with the court; the trustee deposits funds in a designated account.", i)})
	}
	tea := [][2]string{}
	for i := 0; i < 40; i++ {
		tea = append(tea, [2]string{fmt.Sprintf("Brewing %d", i),
			fmt.Sprintf("Steep the green leaves %d minutes in water below boiling; oolong takes several infusions and black tea a longer steep.", i%5+1)})
	}
	return map[string][][2]string{"trustee": law, "tea": tea}
}

// The router knows a skill by its vocabulary (triggers, glossary, rules,
// the sources' headings), not by what its passages say. A message it finds
// no skill for goes, offline, to the skill whose sources clearly answer it,
// with the passage that did named; a message no source answers clearly
// goes to none; and with a model the evidence is advice in the prompt.
func TestRouteBySourcesWhenTheRouterFindsNone(t *testing.T) {
	root := writeSkills(t, "", map[string]string{
		"trustee/SKILL.md": "---\nname: trustee\ndescription: Chapter 13 standing trustee handbook.\ntriggers: [chapter 13]\n---\n# trustee\n",
		"tea/SKILL.md":     "---\nname: tea\ndescription: Brewing green, black and oolong tea.\ntriggers: [green tea]\n---\n# tea\n",
	})
	st := storeWith(t, whalingAndLaw())
	m := &fakeModel{script: []step{{text: []string{"ok"}}}}
	ctx := context.Background()
	a, _ := newAgentAt(t, root, nil, func(c *Config) { c.Searcher = st; c.Model = nil })
	const blubber = "How is blubber tried out into oil on a whaler?"
	if got := a.cfg.Skills.Match(blubber); got != "" {
		t.Fatalf("the router alone sends %q to %q; the test needs a message it finds no skill for", blubber, got)
	}
	skill, why := a.RouteReason(ctx, blubber)
	if skill != "trustee" || !strings.Contains(why, "Try-Works") || !strings.Contains(why, "blubber") {
		t.Fatalf("RouteReason(%q) = %q, %q; want trustee, naming the passage and its terms", blubber, skill, why)
	}
	if got := a.Route(blubber); got != "trustee" {
		t.Errorf("Route(%q) = %q, want trustee (what vibe eval measures)", blubber, got)
	}
	c := &collect{}
	answer, err := a.Turn(ctx, TurnRequest{UserID: "u", ConversationID: "c1", Message: blubber}, c.emit)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(answer, "Skill: trustee") || !strings.Contains(answer, "chosen by what its sources say") || !strings.Contains(answer, "Try-Works") {
		t.Errorf("offline answer does not say the sources chose the skill:\n%s", answer)
	}
	// The router's own choice is unchanged, and so is its reason.
	if skill, why := a.RouteReason(ctx, "how long to steep green tea"); skill != "tea" || !strings.HasPrefix(why, "router: tea") {
		t.Errorf("green tea: %q, %q; want tea by the router", skill, why)
	}
	// Messages no source answers clearly reach none: one rare word in
	// common is chance, and words the sources never hold weigh against.
	for _, q := range []string{"What's the weather like in Chicago tomorrow?", "Which oil should I use to fry fish?", "一斤猪肉多少钱", "write a poem about the court"} {
		if skill, why := a.RouteReason(ctx, q); skill != "" {
			t.Errorf("RouteReason(%q) = %q (%s), want none", q, skill, why)
		}
	}

	// With a model the evidence is advice, never a verdict: the prompt
	// names the skill and the passage's heading and leaves the choice.
	am, _ := newAgentAt(t, root, m, func(c *Config) { c.Searcher = st })
	if _, err := am.Turn(ctx, TurnRequest{UserID: "u", ConversationID: "c2", Message: blubber}, func(Event) error { return nil }); err != nil {
		t.Fatal(err)
	}
	sys := m.requests[0].Messages[0]
	if sys.Role != llm.RoleSystem || !strings.Contains(sys.Content, "the sources of these skills hold words of this message: trustee (") ||
		!strings.Contains(sys.Content, "Try-Works") || !strings.Contains(sys.Content, "advice only") {
		t.Errorf("system prompt lacks the sources' advice:\n%s", sys.Content)
	}
	// recommend_skills carries it too, beside the router's candidates.
	rec, err := am.recommendSkills(ctx, blubber, 5)
	if err != nil {
		t.Fatal(err)
	}
	var res struct {
		Best    *string `json:"best"`
		Sources []struct {
			Skill, Passage string
			Clear          bool
		} `json:"sources"`
	}
	if err := json.Unmarshal(rec, &res); err != nil {
		t.Fatal(err)
	}
	if res.Best != nil || len(res.Sources) == 0 || res.Sources[0].Skill != "trustee" || !strings.Contains(res.Sources[0].Passage, "Try-Works") || !res.Sources[0].Clear {
		t.Errorf("recommend_skills = %s; want no best and the trustee passage as advice", rec)
	}
}

// A store that cannot count terms (no knowledge.TermCounter) leaves the
// router's choice alone.
func TestRouteBySourcesNeedsTermCounts(t *testing.T) {
	root := writeSkills(t, "", map[string]string{
		"bazi/SKILL.md": "---\nname: bazi\ndescription: 八字\n---\n# bazi\n",
		"tea/SKILL.md":  "---\nname: tea\ndescription: tea\n---\n# tea\n",
	})
	a, _ := newAgentAt(t, root, nil, nil) // themeSearcher counts nothing
	if skill, why := a.RouteReason(context.Background(), "How is blubber tried out into oil on a whaler?"); skill != "" || why != "" {
		t.Fatalf("RouteReason = %q, %q; want none", skill, why)
	}
}

// A router choice made on words of prose alone gives way, offline, to the
// skill whose sources clearly hold more of the message; one backed by a
// whole term of the skill, or by its own sources, stands.
func TestSourcesOutweighAProseOnlyRoute(t *testing.T) {
	root := writeSkills(t, "", map[string]string{
		"travel/SKILL.md": "---\nname: travel\ndescription: Travel and leave handbook.\ntriggers: [per diem]\n---\n# travel\n\nThe rule is to count the days of travel again when a trip starts.\n",
		"chess/SKILL.md":  "---\nname: chess\ndescription: Chess endings.\ntriggers: [checkmate]\n---\n# chess\n",
	})
	var travel, chess [][2]string
	for i := 0; i < 40; i++ {
		travel = append(travel, [2]string{fmt.Sprintf("Leave %d", i), fmt.Sprintf("Count the hours of annual leave %d in each pay period; the supervisor approves the request.", i)})
		chess = append(chess, [2]string{fmt.Sprintf("Ending %d", i), fmt.Sprintf("The king and pawn ending %d: the opposition decides who wins.", i)})
	}
	chess = append(chess, [2]string{"Queen against rook", "With a queen against a rook you may demand that your opponent mate you within fifty moves; this rule protects the defender, and the count starts again after a capture."})
	st := storeWith(t, map[string][][2]string{"travel": travel, "chess": chess})
	a, _ := newAgentAt(t, root, nil, func(c *Config) { c.Searcher = st; c.Model = nil })
	ctx := context.Background()
	const q = "What is the fifty-move rule and when does the count start again?"
	cs := a.cfg.Skills.Route(q)
	if len(cs) == 0 || cs[0].Name != "travel" || !cs[0].ProseOnly() || a.cfg.Skills.Match(q) != "travel" {
		t.Fatalf("the fixture should make the router choose travel on prose alone: %+v", cs)
	}
	skill, why := a.RouteReason(ctx, q)
	if skill != "chess" || !strings.Contains(why, "Queen against rook") || !strings.Contains(why, "prose only") {
		t.Errorf("RouteReason = %q, %q; want chess, naming the passage and the router's prose-only choice", skill, why)
	}
	// A choice on a whole term stands, and so does one the router's own
	// skill's sources back.
	for _, q := range []string{"What is the per diem when the count starts again?", "When the pay period starts again, who approves the count of my annual leave hours?"} {
		if skill, why := a.RouteReason(ctx, q); skill != "travel" {
			t.Errorf("RouteReason(%q) = %q (%s), want travel", q, skill, why)
		}
	}
}
