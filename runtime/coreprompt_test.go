package runtime

import (
	"context"
	"strings"
	"testing"

	"github.com/vibelife/vibe/skills"
)

// systemPromptFor runs one turn with skill active and returns the system
// prompt the model was sent.
func systemPromptFor(t *testing.T, a *Agent, m *fakeModel, skill, msg string) string {
	t.Helper()
	if _, err := a.Turn(context.Background(), TurnRequest{UserID: "u", ConversationID: "c-" + skill, Skill: skill, Message: msg}, func(Event) error { return nil }); err != nil {
		t.Fatal(err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for i := len(m.requests) - 1; i >= 0; i-- {
		if ms := m.requests[i].Messages; len(ms) > 0 && strings.HasPrefix(ms[0].Content, "# 核心 / Core") {
			return ms[0].Content
		}
	}
	t.Fatal("no turn request sent to the model")
	return ""
}

// fateWords are what the core prompt says only to skills that read a
// person's fate.
var fateWords = []string{"断语", "死亡", "预言", "出生信息", "birth data", "prediction", "抽签", "卡片"}

// The core prompt is theme-neutral: a travel-policy skill's prompt speaks
// of no verdicts, predictions or birth data; a bazi skill gets the verdict
// guidance, whether it says so by requires_birth_info or only by its
// rules' grave verdicts (the rules a strong model extracted from 子平真诠).
func TestCorePromptIsThemeNeutral(t *testing.T) {
	core := skills.Core()
	for _, w := range fateWords {
		if strings.Contains(core.Instructions(), w) {
			t.Errorf("the core skill speaks of %q to every skill:\n%s", w, core.Instructions())
		}
	}

	m := &fakeModel{}
	files := map[string]string{
		"bazi/SKILL.md": "---\nname: bazi\ndescription: 八字命理 / BaZi chart reading\nrequires_birth_info: true\n---\n# 八字\n",
	}
	for k, v := range leaveSkill {
		files[k] = v
	}
	a := agentOver(t, writeSkills(t, "", files), m, nil)
	leave := systemPromptFor(t, a, m, "leave", "How much award leave can I get in a year?")
	for _, w := range fateWords {
		if strings.Contains(leave, w) {
			t.Errorf("travel-policy prompt speaks of %q:\n%s", w, leave)
		}
	}
	if !strings.Contains(leave, "active skill: leave") {
		t.Errorf("the leave skill is not active in its prompt:\n%s", leave)
	}
	bazi := systemPromptFor(t, a, m, "bazi", "我的八字怎么样？")
	if !strings.Contains(bazi, "## 断语 / Verdicts (bazi)") || !strings.Contains(bazi, "not a certain prediction") && !strings.Contains(bazi, "never a certain prediction") {
		t.Errorf("bazi prompt (requires_birth_info) has no verdict guidance:\n%s", bazi)
	}

	zp := zpAgent(t)
	zm := &fakeModel{}
	zp.cfg.Model = zm
	idx, err := zp.rules.get(mustSkill(t, zp, "zp"))
	if err != nil || !idx.grave {
		t.Fatalf("zp's rules hold no grave verdict (%v)", err)
	}
	p := systemPromptFor(t, zp, zm, "zp", "伤官见官会怎样？")
	if !strings.Contains(p, "## 断语 / Verdicts (zp)") {
		t.Errorf("zp prompt (grave rules) has no verdict guidance:\n%s", p)
	}
}

func mustSkill(t *testing.T, a *Agent, name string) *skills.Skill {
	t.Helper()
	sk, err := a.cfg.Skills.Get(name)
	if err != nil {
		t.Fatal(err)
	}
	return sk
}
