package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vibelife/vibe/internal/iostreams"
	"github.com/vibelife/vibe/llm"
	"github.com/vibelife/vibe/llm/llmtest"
	"github.com/vibelife/vibe/runtime"
)

// TestTwoSkillTurnDemoAndSourdough: over the demo workspace with the
// sourdough example built beside it (both by the real offline pipeline), a
// question spanning both skills is answered through the scripted model with
// use_skill(skills=[demo, sourdough]): get_rules returns rules of both
// skills, the model cites one of each, and the answer's citations event
// carries both rule ids, cited, with their skills.
func TestTwoSkillTurnDemoAndSourdough(t *testing.T) {
	ws := copyWorkspace(t, demoWorkspace(t))
	env := map[string]string{"VIBE_LLM_PROVIDER": "offline"}
	repo := filepath.Join("..", "..")
	for _, args := range [][]string{
		{"curate", "sourdough", "--from", filepath.Join(repo, "examples", "sourdough", "pages")},
		{"build", "sourdough"},
	} {
		if args[0] == "build" {
			copyFile(t, filepath.Join(repo, "examples", "sourdough", "theme", "glossary.yaml"), filepath.Join(ws, "knowledge", "sourdough", "glossary.yaml"))
		}
		if code, _, errOut := runVibe(t, env, append([]string{"-w", ws, "--quiet"}, args...)...); code != 0 {
			t.Fatalf("vibe %s: exit %d:\n%s", strings.Join(args, " "), code, errOut)
		}
	}

	const question = "For a weekend brunch I bake sourdough and brew green tea: how hot should the tea water be, and how do I know the starter is ready?"
	fake := llmtest.New(t)
	var cited []string
	fake.SetFallback(func(req llmtest.Request) llmtest.Reply {
		tools := toolMessages(req)
		switch {
		case tools["use_skill"] == "":
			return llmtest.Reply{ToolCalls: []llm.ToolCall{{ID: "u1", Name: "use_skill", Arguments: `{"skills":["demo","sourdough"],"topic":"brunch"}`}}}
		case tools["get_rules"] == "":
			q, _ := json.Marshal(question)
			return llmtest.Reply{ToolCalls: []llm.ToolCall{{ID: "r1", Name: "get_rules", Arguments: `{"question":` + string(q) + `,"k":8}`}}}
		}
		var rules struct {
			Rules []struct {
				ID    string `json:"id"`
				Skill string `json:"skill"`
			} `json:"rules"`
			// Rules the prompt already carries: skill:id.
			InContext []string `json:"in_context"`
		}
		if err := json.Unmarshal([]byte(tools["get_rules"]), &rules); err != nil {
			return llmtest.Text("get_rules unreadable: " + err.Error())
		}
		for _, sid := range rules.InContext {
			sk, id, _ := strings.Cut(sid, ":")
			rules.Rules = append(rules.Rules, struct {
				ID    string `json:"id"`
				Skill string `json:"skill"`
			}{id, sk})
		}
		first := map[string]string{}
		for _, r := range rules.Rules {
			if first[r.Skill] == "" {
				first[r.Skill] = r.ID
			}
		}
		cited = []string{"demo:" + first["demo"], "sourdough:" + first["sourdough"]}
		return llmtest.Text(fmt.Sprintf("For the tea, keep the water off the boil [%s]; for the bread, feed the starter until it is ready [%s].", first["demo"], first["sourdough"]))
	})
	ios, _, _, errOut := iostreams.Test()
	a := &app{io: ios, now: time.Now, workspaceDir: ws, getenv: func(k string) string {
		return map[string]string{"VIBE_API_KEYS": "ka:alice", "OPENAI_BASE_URL": fake.URL, "OPENAI_API_KEY": "test"}[k]
	}}
	srv, _, closeServer, err := a.newServer(context.Background(), &ServeOptions{IO: ios})
	if err != nil {
		t.Fatalf("%v: %s", err, errOut.String())
	}
	ts := httptest.NewServer(srv)
	t.Cleanup(func() { ts.Close(); closeServer() })

	// /api/skills lists both, with their display names.
	list := getJSON(t, ts.URL+"/api/skills", "ka")
	names := map[string]string{}
	for _, s := range list["skills"].([]any) {
		s := s.(map[string]any)
		dn, _ := s["display_name"].(string)
		names[s["name"].(string)] = dn
	}
	if !strings.HasPrefix(names["demo"], "demo: ") || names["sourdough"] == "" {
		t.Fatalf("skills = %v", list)
	}

	q, _ := json.Marshal(question)
	resp := post(t, ts.URL+"/api/chat", "ka", `{"message":`+string(q)+`}`)
	evs := sseEvents(t, resp.Body)
	resp.Body.Close()
	got := map[string]bool{}
	var done runtime.Event
	for _, e := range evs {
		switch e.Type {
		case runtime.EventToolResult:
			if e.IsError {
				t.Fatalf("tool %s failed: %s", e.Tool, e.Result)
			}
		case runtime.EventCitations:
			for _, c := range e.Citations {
				if c.Kind == "rule" && c.Cited {
					got[c.Skill+":"+c.RuleID] = true
				}
			}
		case runtime.EventDone:
			done = e
		case runtime.EventError:
			t.Fatalf("error event: %s", e.Error)
		}
	}
	if len(cited) != 2 || strings.HasSuffix(cited[0], ":") || strings.HasSuffix(cited[1], ":") {
		t.Fatalf("get_rules did not return rules of both skills: %v", cited)
	}
	for _, c := range cited {
		if !got[c] {
			t.Errorf("citations lack %s (cited: %v)", c, got)
		}
	}
	if done.Skill != "demo,sourdough" || done.Reason != "stop" {
		t.Fatalf("done = %+v", done)
	}
	// The two skills' instructions were stacked in the prompt.
	reqs := fake.Requests()
	sys := reqs[len(reqs)-1].SystemMessage()
	if !strings.Contains(sys, "active skills: demo, sourdough") || !strings.Contains(sys, "## demo") || !strings.Contains(sys, "## sourdough") {
		t.Fatalf("system prompt:\n%s", sys)
	}
	if _, err := os.Stat(filepath.Join(ws, "skills", "sourdough", "SKILL.md")); err != nil {
		t.Fatal(err)
	}
	_, cut, _ := strings.Cut(sys, "left out to keep the skills' instructions within")
	cut, _, _ = strings.Cut(cut, "\n")
	t.Logf("cited %v; cut from the stacked instructions:%s", cited, cut)
}
