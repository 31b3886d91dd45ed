package agenteval

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The draft from thumbs-down answers is an eval file vibe eval would load
// once moved: one case per question (the same question twice is one case,
// with both comments), the skill expected, the users' comments and the
// answers given above each case, at most max cases.
func TestEncodeFeedbackDraft(t *testing.T) {
	at := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
	turns := []FeedbackTurn{
		{ConversationID: "c-AB12", Turn: 4, Question: "伤官见官会怎样？", Answer: "必有灾祸。\n\n[R002]", Comment: "说得太绝对", At: at},
		{ConversationID: "c-9", Turn: 2, Question: "How hot for green tea?", Answer: strings.Repeat("boil ", 100), At: at},
		{ConversationID: "c-7", Turn: 6, Question: " 伤官见官会怎样？", Answer: "不知道", Comment: "no answer at all", At: at},
		{ConversationID: "c-8", Turn: 2, Question: "third question", Answer: "x", At: at},
	}
	b, n, err := EncodeFeedbackDraft("bazi", "bazi", turns, 2)
	if err != nil {
		t.Fatal(err)
	}
	if n != 2 {
		t.Fatalf("%d cases, want 2 (max)", n)
	}
	s := string(b)
	for _, want := range []string{"vibe eval --from-feedback bazi", "# 2026-11-27, conversation c-AB12, turn 4: thumbs down: 说得太绝对",
		"# 2026-11-27, conversation c-7, turn 6: thumbs down: no answer at all", "#   the answer was: 必有灾祸。 [R002]", "boil boil", "…",
		"id: feedback-c-ab12-4", "id: feedback-c-9-2", "skill: bazi", "- feedback"} {
		if !strings.Contains(s, want) {
			t.Errorf("the draft lacks %q:\n%s", want, s)
		}
	}
	if strings.Contains(s, "third question") {
		t.Errorf("more than max cases:\n%s", s)
	}
	p := filepath.Join(t.TempDir(), FileName)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := Load(p)
	if err != nil {
		t.Fatalf("the draft does not load as an eval file: %v\n%s", err, s)
	}
	if len(f.Cases) != 2 || f.Cases[0].Question != "伤官见官会怎样？" || f.Cases[0].Skill != "bazi" || f.Cases[1].Question != "How hot for green tea?" {
		t.Errorf("cases = %+v", f.Cases)
	}
}
