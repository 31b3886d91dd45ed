package runtime

import (
	"context"
	"strings"
	"testing"

	"github.com/vibelife/vibe/skills"
)

// A skill described in Chinese only, whose glossary names 十恶大败 in
// English and pinyin, beside a tea skill.
var failOpenSkills = map[string]string{
	"mingli/SKILL.md": "---\nname: mingli\ndescription: 依据典籍解答命理问题\n---\n# 命理\n",
	"mingli/knowledge/glossary.yaml": "terms:\n  - term: 十恶大败\n    english: [ten evils and great defeat]\n    pinyin: [shi e da bai]\n" +
		"  - term: 魁罡\n    pinyin: [kuí gāng, kui gang, kuigang]\n",
	"tea/SKILL.md": "---\nname: tea\ndescription: Brewing green, white and oolong tea\ntriggers: [green tea, oolong]\n---\n# Tea\n",
}

// The router's candidates are advice. With a model, a message naming a
// term of an installed skill's glossary in any language (an English
// rendering, pinyin with or without tones) is never told that no skill
// fits, in the system prompt nor in use_skill's description: the prompt
// names the skill and the terms. A message naming nothing of any skill is
// told so as advice, and the model chooses.
func TestRoutingFailsOpen(t *testing.T) {
	root := writeSkills(t, "", failOpenSkills)
	for _, tt := range []struct{ msg, want string }{
		{"What are the Ten Evils and Great Defeat days?", "mingli ("},
		{"What kind of person is born on a Kui Gang day?", "kui gang"},
		{"Is kuí gāng lucky?", "kui gang"},
		{"write a poem about cats", "activate one only if the question is about its topic"},
	} {
		m := &fakeModel{}
		a := agentOver(t, root, m, nil)
		if _, err := a.Turn(context.Background(), TurnRequest{UserID: "u", Message: tt.msg}, func(Event) error { return nil }); err != nil {
			t.Fatal(err)
		}
		if len(m.requests) == 0 {
			t.Fatalf("%q: no request", tt.msg)
		}
		req := m.requests[0]
		sys := req.Messages[0].Content
		var useSkill string
		for _, tl := range req.Tools {
			if tl.Name == "use_skill" {
				useSkill = tl.Description + " " + string(tl.Parameters)
			}
		}
		for where, text := range map[string]string{"system prompt": sys, "use_skill": useSkill} {
			if strings.Contains(text, "no skill fits") || strings.Contains(text, "finds no skill") {
				t.Errorf("%q: the %s says no skill fits:\n%s", tt.msg, where, text)
			}
		}
		if !strings.Contains(sys, tt.want) {
			t.Errorf("%q: system prompt lacks %q:\n%s", tt.msg, tt.want, sys)
		}
		if tt.want != "activate one only if the question is about its topic" && !strings.Contains(useSkill, "mingli") {
			t.Errorf("%q: use_skill does not offer mingli: %s", tt.msg, useSkill)
		}
	}
	// Offline, the glossary path routes like the only-skill path: the
	// message naming mingli's term goes to mingli.
	a := agentOver(t, root, nil, nil)
	if got := a.Route("What are the Ten Evils and Great Defeat days?"); got != "mingli" {
		t.Errorf("offline route = %q, want mingli", got)
	}
}

// A pinyin name is matched whole: 己酉's "ji you" loses its small word
// "you" to the tokenizer, and what is left ("ji") must not name 己酉 in
// "What is the Tai Ji noble?".
func TestGlossaryPinyinIsMatchedWhole(t *testing.T) {
	g := NewGlossary(skills.Glossary{Terms: []skills.GlossaryTerm{
		{Term: "己酉", Pinyin: []string{"jǐ yǒu", "ji you", "jiyou"}},
		{Term: "太极贵", Pinyin: []string{"tai ji gui"}},
		{Term: "魁罡", Pinyin: []string{"kui gang"}},
	}})
	if got := g.Named("What is the Tai Ji noble (Supreme Ultimate noble)?"); len(got) != 0 {
		t.Errorf("named %v, want none", got)
	}
	if got := g.Terms("What is the Tai Ji noble?", langZH); len(got) != 0 {
		t.Errorf("bridged as %v, want nothing", got)
	}
	if got := g.Named("Is Kuí Gāng lucky?"); len(got) != 1 || got[0] != "魁罡" {
		t.Errorf("named %v, want 魁罡", got)
	}
}
