package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/vibelife/vibe/llm"
	"github.com/vibelife/vibe/llm/llmtest"
	"github.com/vibelife/vibe/runtime"
)

// everyToolAgent is the scripted model of the tool-type conversation over
// the demo theme, which declares one tool of every type. Like brewAgent it
// decides each step from what the request carries:
//
//	"Pick a tea for me"   -> use_skill, pick_tea (random), collect_brew_setup (collect: the turn ends on the form)
//	the form's answer      -> calc_brew (compute), show_brew_card (display), search_puer (retrieve), tasting_notes start (flow)
//	"answer: X"            -> tasting_notes answer X (flow, one step a turn)
func everyToolAgent(t *testing.T) func(llmtest.Request) llmtest.Reply {
	return func(req llmtest.Request) llmtest.Reply {
		tools := toolMessages(req)
		calls := func(cs ...llm.ToolCall) llmtest.Reply { return llmtest.Reply{ToolCalls: cs} }
		msg := req.LastUserMessage()
		if tools["use_skill"] == "" && !strings.Contains(req.Messages[0].Content, "active skill: demo") {
			return calls(llm.ToolCall{ID: "u1", Name: "use_skill", Arguments: `{"name":"demo"}`})
		}
		switch {
		case strings.HasPrefix(msg, "Pick a tea"):
			if tools["pick_tea"] == "" {
				return calls(llm.ToolCall{ID: "r1", Name: "pick_tea", Arguments: `{"mood":"calm"}`})
			}
			return calls(llm.ToolCall{ID: "f1", Name: "collect_brew_setup", Arguments: `{"reason":"to work out your brew"}`})
		case strings.HasPrefix(msg, runtime.FormMarker):
			var form struct {
				Values struct {
					Tea      string `json:"tea"`
					VesselML int    `json:"vessel_ml"`
				} `json:"form_response"`
			}
			if err := json.Unmarshal([]byte(strings.TrimPrefix(msg, runtime.FormMarker)), &form); err != nil {
				return llmtest.Text("form unreadable: " + err.Error())
			}
			switch {
			case tools["calc_brew"] == "":
				return calls(llm.ToolCall{ID: "b1", Name: "calc_brew", Arguments: fmt.Sprintf(`{"tea":%q,"vessel_ml":%d}`, form.Values.Tea, form.Values.VesselML)})
			case tools["show_brew_card"] == "":
				var calc struct {
					Result struct {
						WaterTempC int   `json:"water_temp_c"`
						SteepsS    []int `json:"steeps_s"`
					} `json:"result"`
				}
				_ = json.Unmarshal([]byte(tools["calc_brew"]), &calc)
				props, _ := json.Marshal(map[string]any{"tea": form.Values.Tea, "water_temp_c": calc.Result.WaterTempC, "steeps_s": calc.Result.SteepsS})
				return calls(llm.ToolCall{ID: "d1", Name: "show_brew_card", Arguments: string(props)})
			case tools["search_puer"] == "":
				return calls(llm.ToolCall{ID: "s1", Name: "search_puer", Arguments: `{"query":"润茶 投茶 每一百毫升水投茶七克"}`})
			case tools["tasting_notes"] == "":
				return calls(llm.ToolCall{ID: "q1", Name: "tasting_notes", Arguments: `{"action":"start"}`})
			}
			return llmtest.Text("Here is your brew. How does the wet leaf smell?")
		case strings.HasPrefix(msg, "answer: "):
			if tools["tasting_notes"] == "" {
				return calls(llm.ToolCall{ID: "q2", Name: "tasting_notes", Arguments: fmt.Sprintf(`{"action":"answer","answer":%s}`, strings.TrimPrefix(msg, "answer: "))})
			}
			return llmtest.Text("Noted.")
		}
		t.Errorf("unscripted message %q", msg)
		return llmtest.Text("?")
	}
}

// turnEvents posts one chat turn and returns its events, failing on a tool
// error or an error event.
func turnEvents(t *testing.T, url, body string) []runtime.Event {
	t.Helper()
	resp := post(t, url+"/api/chat", "ka", body)
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("POST /api/chat %s: %d %s", body, resp.StatusCode, b)
	}
	evs := sseEvents(t, resp.Body)
	for _, e := range evs {
		if (e.Type == runtime.EventToolResult && e.IsError) || e.Type == runtime.EventError {
			t.Fatalf("turn %s: %s %s %s", body, e.Tool, e.Result, e.Error)
		}
	}
	return evs
}

func resultOf(t *testing.T, evs []runtime.Event, tool string) map[string]any {
	t.Helper()
	for _, e := range evs {
		if e.Type == runtime.EventToolResult && e.Tool == tool {
			var m map[string]any
			if err := json.Unmarshal(e.Result, &m); err != nil {
				t.Fatal(err)
			}
			return m
		}
	}
	t.Fatalf("no %s result among %d events", tool, len(evs))
	return nil
}

func doneOf(t *testing.T, evs []runtime.Event) runtime.Event {
	t.Helper()
	if last := evs[len(evs)-1]; last.Type == runtime.EventDone {
		return last
	}
	t.Fatalf("the turn did not end with done: %+v", evs[len(evs)-1])
	return runtime.Event{}
}

// TestServeDemoEveryToolType: the demo theme (built by the real pipeline,
// so its skill passes vibe check) declares one tool of every type; a
// scripted conversation runs each through vibe serve, and replaying the
// first turn with its recorded seed draws the same tea.
func TestServeDemoEveryToolType(t *testing.T) {
	fake := llmtest.New(t)
	fake.SetFallback(everyToolAgent(t))
	env := map[string]string{"OPENAI_BASE_URL": fake.URL, "OPENAI_API_KEY": "test"}
	ts := demoServer(t, env)

	// random, then collect: the turn ends on the form.
	evs := turnEvents(t, ts.URL, `{"message":"Pick a tea for me","conversation_id":"every-1"}`)
	pick := resultOf(t, evs, "pick_tea")
	draws, _ := pick["draws"].([]any)
	if len(draws) != 1 {
		t.Fatalf("pick_tea = %v", pick)
	}
	tea, _ := draws[0].(map[string]any)["item"].(string)
	if !strings.Contains("green black oolong puer white", tea) || tea == "" {
		t.Fatalf("drew %q", tea)
	}
	done := doneOf(t, evs)
	if done.Reason != "form" || done.Seed == nil || float64(*done.Seed) != pick["turn_seed"] {
		t.Fatalf("done %+v, pick_tea %v", done, pick)
	}
	var form struct {
		Tool   string `json:"tool"`
		Fields []struct {
			Name string `json:"name"`
			Enum []any  `json:"enum"`
		} `json:"fields"`
	}
	for _, e := range evs {
		if e.Type == runtime.EventForm {
			_ = json.Unmarshal(e.Form, &form)
		}
	}
	if form.Tool != "collect_brew_setup" || len(form.Fields) != 3 || form.Fields[0].Name != "tea" || len(form.Fields[0].Enum) != 5 {
		t.Fatalf("form %+v", form)
	}

	// The form's answer: compute, display, retrieve, and the flow starts.
	evs = turnEvents(t, ts.URL, fmt.Sprintf(`{"conversation_id":"every-1","form_response":{"values":{"tea":%q,"vessel_ml":300}}}`, tea))
	calc := resultOf(t, evs, "calc_brew")
	if res, _ := calc["result"].(map[string]any); res == nil || res["water_temp_c"] == nil {
		t.Fatalf("calc_brew = %v", calc)
	}
	card := false
	for _, e := range evs {
		card = card || (e.Type == runtime.EventCard && e.CardType == "brew_card")
	}
	if !card {
		t.Fatal("no brew_card card")
	}
	search := resultOf(t, evs, "search_puer")
	ps, _ := search["passages"].([]any)
	if len(ps) == 0 {
		t.Fatalf("search_puer found nothing: %v", search)
	}
	for _, p := range ps {
		src := p.(map[string]any)["source"].(string)
		if !strings.HasSuffix(src, "puer-gbk.txt") {
			t.Fatalf("search_puer returned a passage of %s, outside its source", src)
		}
	}
	if st := resultOf(t, evs, "tasting_notes"); st["step"] != "aroma" {
		t.Fatalf("tasting_notes start = %v", st)
	}

	// The flow, one answer a turn; a new server over the same workspace
	// (a restart) carries on where the last one stopped.
	steps := []struct{ answer, next string }{{`"floral"`, "strength"}, {`5`, "bitterness"}}
	for _, s := range steps {
		st := resultOf(t, turnEvents(t, ts.URL, fmt.Sprintf(`{"conversation_id":"every-1","message":"answer: %s"}`, strings.ReplaceAll(s.answer, `"`, `\"`))), "tasting_notes")
		if st["step"] != s.next {
			t.Fatalf("after %s: %v", s.answer, st)
		}
	}
	ts2 := demoServer(t, env)
	st := resultOf(t, turnEvents(t, ts2.URL, `{"conversation_id":"every-1","message":"answer: false"}`), "tasting_notes")
	if st["step"] != "again" {
		t.Fatalf("after a restart: %v", st)
	}
	st = resultOf(t, turnEvents(t, ts2.URL, `{"conversation_id":"every-1","message":"answer: true"}`), "tasting_notes")
	want := map[string]any{"aroma": "floral", "strength": float64(5), "bitterness": false, "again": true}
	if st["done"] != true || !reflect.DeepEqual(st["answers"], want) {
		t.Fatalf("finished flow = %v", st)
	}

	// Replayed with the recorded seed, in a new conversation: the same draw.
	seed := *done.Seed
	evs = turnEvents(t, ts2.URL, fmt.Sprintf(`{"message":"Pick a tea for me","conversation_id":"every-2","seed":%d}`, seed))
	again := resultOf(t, evs, "pick_tea")
	if !reflect.DeepEqual(again["draws"], pick["draws"]) || again["seed"] != pick["seed"] {
		t.Fatalf("replay drew %v (seed %v), recorded %v (seed %v)", again["draws"], again["seed"], pick["draws"], pick["seed"])
	}
}
