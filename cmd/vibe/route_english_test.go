package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vibelife/vibe/llm/llmtest"
	"github.com/vibelife/vibe/runtime"
)

// With a model, an English question naming a term of the theme (in pinyin
// or in translation) is never told that no skill fits: the router's line of
// the system prompt names bazi, as a candidate, as a skill whose terms the
// message names, or as a skill whose sources are in another language, which
// the router cannot match a term in translation against. The questions are the recorded relay questions in
// English and the project's English bazi questions (32), over the five
// books built offline without examples/bazi/glossary.yaml.
func TestEnglishQuestionsAreOfferedTheSkill(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "relay-bazi-chat.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rec relayChat
	if err := json.Unmarshal(b, &rec); err != nil {
		t.Fatal(err)
	}
	var qs []string
	for _, q := range rec.Questions {
		if runtime.QueryLanguage(q.Question) == "en" {
			qs = append(qs, q.Question)
		}
	}
	for _, q := range englishBaziQuestions {
		qs = append(qs, q.q)
	}
	if len(qs) < 20 {
		t.Fatalf("%d English questions, want at least 20", len(qs))
	}
	srv := llmtest.New(t)
	srv.SetFallback(func(r llmtest.Request) llmtest.Reply { return llmtest.Text("ok") })
	ws := copyWorkspace(t, bareBaziWorkspace(t))
	env := map[string]string{"OPENAI_BASE_URL": srv.URL, "OPENAI_API_KEY": "k"}
	offered := 0
	for n, q := range qs {
		before := srv.Count()
		// In the vibe built without -race under it: these chats over the
		// five books' SQLite took 276 s in-process under the detector at
		// load 30, one goroutine's work it has nothing to find in.
		if code, out, errOut := runVibeUnraced(t, env, "-w", ws, "--quiet", "chat", "--user", fmt.Sprintf("e%02d", n+1), q); code != 0 {
			t.Fatalf("%q: exit %d\n%s\n%s", q, code, out, errOut)
		}
		var told string
		for _, r := range srv.Requests()[before:] {
			if strings.Contains(r.SystemMessage(), "search query") {
				continue
			}
			told = r.SystemMessage() + "\n" + useSkillDescription(r)
			break
		}
		for _, no := range []string{"no skill fits", "finds no skill"} {
			if strings.Contains(told, no) {
				t.Errorf("%q: the model is told %q", q, no)
			}
		}
		_, router, _ := strings.Cut(told, "路由 / router:")
		router, _, _ = strings.Cut(router, "\n")
		if strings.Contains(router, "bazi") {
			offered++
		} else {
			t.Errorf("%q: the router does not offer bazi: %q", q, router)
		}
	}
	t.Logf("%d of %d English questions offered bazi", offered, len(qs))
}
