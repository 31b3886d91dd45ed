package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vibelife/vibe/eval/agenteval"
	"github.com/vibelife/vibe/internal/iostreams"
	"github.com/vibelife/vibe/llm/llmtest"
	"github.com/vibelife/vibe/runtime"
)

// TestEvalFromFeedback: a thumbs down given through vibe serve's API, with
// a comment, becomes a drafted case of knowledge/demo/eval.feedback.yaml:
// the question, the skill, the comment and the answer given; a thumbs up
// does not; eval.yaml is left as it was.
func TestEvalFromFeedback(t *testing.T) {
	fake := llmtest.New(t)
	fake.SetFallback(func(req llmtest.Request) llmtest.Reply {
		return llmtest.Text("Boiling water is always fine for green tea (" + req.LastUserMessage() + ").")
	})
	ts := demoServer(t, map[string]string{"OPENAI_BASE_URL": fake.URL, "OPENAI_API_KEY": "test"})
	ws := demoWorkspace(t)
	evalYAML := filepath.Join(ws, "knowledge", "demo", agenteval.FileName)
	before, err := os.ReadFile(evalYAML)
	if err != nil {
		t.Fatal(err)
	}
	ask := func(q string) runtime.Event {
		t.Helper()
		body, _ := json.Marshal(map[string]any{"message": q, "skill": "demo"})
		resp := post(t, ts.URL+"/api/chat", "ka", string(body))
		defer resp.Body.Close()
		for _, e := range sseEvents(t, resp.Body) {
			if e.Type == runtime.EventDone {
				return e
			}
		}
		t.Fatalf("%s: no done event", q)
		return runtime.Event{}
	}
	feedback := func(d runtime.Event, rating, comment string) {
		t.Helper()
		body, _ := json.Marshal(runtime.FeedbackRequest{ConversationID: d.ConversationID, Turn: d.Turn, Rating: rating, Comment: comment})
		resp := post(t, ts.URL+"/api/feedback", "ka", string(body))
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("feedback %s: %d", body, resp.StatusCode)
		}
	}
	bad := ask("Can I brew sencha with water at a rolling boil, feedback test?")
	good := ask("Is spring water good for green tea, feedback test?")
	feedback(bad, "down", "Wrong: the books say never at a rolling boil.")
	feedback(good, "up", "")

	ios, _, _, errOut := iostreams.Test()
	if code := run(context.Background(), ios, []string{"--workspace", ws, "eval", "--from-feedback", "demo"}, func(string) string { return "" }); code != 0 {
		t.Fatalf("vibe eval --from-feedback demo: exit %d: %s", code, errOut.String())
	}
	if !strings.Contains(errOut.String(), "eval.feedback.yaml") {
		t.Errorf("the command says %q", errOut.String())
	}
	draft, err := os.ReadFile(filepath.Join(ws, "knowledge", "demo", agenteval.FeedbackFileName))
	if err != nil {
		t.Fatal(err)
	}
	s := string(draft)
	for _, want := range []string{"question: Can I brew sencha with water at a rolling boil, feedback test?", "Wrong: the books say never at a rolling boil.",
		"the answer was: Boiling water is always fine", "skill: demo"} {
		if !strings.Contains(s, want) {
			t.Errorf("the draft lacks %q:\n%s", want, s)
		}
	}
	if strings.Contains(s, "Is spring water good") {
		t.Errorf("a thumbs-up answer was drafted:\n%s", s)
	}
	if after, _ := os.ReadFile(evalYAML); string(after) != string(before) {
		t.Errorf("eval.yaml changed")
	}
	if code := run(context.Background(), ios, []string{"--workspace", ws, "eval", "--from-feedback", "--generate", "demo"}, func(string) string { return "" }); code == 0 {
		t.Errorf("--from-feedback with --generate was accepted")
	}
}
