package runtime

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/vibelife/vibe/llm"
)

// The page's resources: a favicon (not a 404), the skills with the
// language each is written in, and /readyz saying when any key signs in.
func TestPageResources(t *testing.T) {
	ts, _ := newTestServer(t, &fakeModel{}, ServerOptions{Insecure: true})
	resp, err := http.Get(ts.URL + "/favicon.ico")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || len(b) < 22 || string(b[:4]) != "\x00\x00\x01\x00" {
		t.Fatalf("/favicon.ico: %d, %d bytes %q", resp.StatusCode, len(b), b[:min(4, len(b))])
	}
	resp = do(t, "GET", ts.URL+"/api/skills", "any", "")
	var sk struct{ Skills []SkillInfo }
	json.NewDecoder(resp.Body).Decode(&sk)
	resp.Body.Close()
	if len(sk.Skills) == 0 || sk.Skills[0].Name != "bazi" || sk.Skills[0].Language != "zh" {
		t.Fatalf("skills = %+v", sk.Skills)
	}
	var ready map[string]any
	resp, _ = http.Get(ts.URL + "/readyz")
	json.NewDecoder(resp.Body).Decode(&ready)
	resp.Body.Close()
	if ready["auth"] != "insecure-dev" {
		t.Errorf("/readyz under --insecure-dev: %v", ready)
	}
	keyed, _ := newTestServer(t, &fakeModel{}, ServerOptions{})
	resp, _ = http.Get(keyed.URL + "/readyz")
	ready = nil
	json.NewDecoder(resp.Body).Decode(&ready)
	resp.Body.Close()
	if _, ok := ready["auth"]; ok {
		t.Errorf("/readyz with keys says %v", ready["auth"])
	}
}

// The labels of a retrieval-only answer are in the question's language,
// and a passage's Markdown heading marks do not run into its excerpt.
func TestOfflineLabelsFollowTheQuestion(t *testing.T) {
	if got := plainExcerpt("## 论用神\n\n八字用神，专求月令。\n#hashtag stays"); got != "论用神 八字用神，专求月令。 #hashtag stays" {
		t.Errorf("plainExcerpt = %q", got)
	}
	a, _ := newTestAgent(t, nil, nil)
	for q, want := range map[string][]string{
		"甲木生于寅月，健康如何":                     {OfflineLabelZH, "技能：bazi"},
		"What about wood born in spring?": {OfflineLabel, "Skill: bazi"},
	} {
		answer, err := a.Turn(t.Context(), TurnRequest{UserID: "u", Message: q}, func(Event) error { return nil })
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range want {
			if !strings.Contains(answer, w) {
				t.Errorf("%q: the answer lacks %q:\n%s", q, w, answer)
			}
		}
		other := "技能："
		if want[0] == OfflineLabelZH {
			other = "Skill:"
		}
		if strings.Contains(answer, other) {
			t.Errorf("%q: the answer mixes languages:\n%s", q, answer)
		}
	}
}

// A collect tool's form shows the model's reason, else the tool's own
// prompt; never its description, which is written for the model.
func TestCollectFormShowsItsOwnPrompt(t *testing.T) {
	m := &fakeModel{script: []step{{calls: []llm.ToolCall{call("1", "ask_question", `{}`)}}}}
	a, _ := oracleAgent(t, m)
	var c collect
	if _, err := a.Turn(t.Context(), TurnRequest{UserID: "u", Skill: "oracle", Message: "read for me"}, c.emit); err != nil {
		t.Fatal(err)
	}
	forms := c.of(EventForm)
	if len(forms) != 1 {
		t.Fatalf("forms %+v", c.events)
	}
	var form struct{ Reason string }
	if err := json.Unmarshal(forms[0].Form, &form); err != nil {
		t.Fatal(err)
	}
	if form.Reason != "What would you like the reading to be about?" {
		t.Errorf("the form's prompt is %q", form.Reason)
	}
}
