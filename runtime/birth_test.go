package runtime

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// A question about the theme needs no chart; one about a person, or giving
// birth data, does.
func TestNeedsChart(t *testing.T) {
	for _, q := range []string{"甲木参天是什么意思", "伤官见官会怎样", "What is the Yang Blade, and what should restrain it?",
		"春天出生的乙木日主，用神取什么？", "What kind of person is born on a Kui Gang day?", "我想知道魁罡是什么", "Tell me what Hua Gai means"} {
		if needsChart(q) {
			t.Errorf("%q: asks about the theme, not a person, yet needs a chart", q)
		}
	}
	for _, q := range []string{"帮我看看八字", "我1990年5月1日早上8点出生，财运如何", "看看我老公的命", "What does my chart say about my career?",
		"Born 1988-02-14 at noon: am I a strong day master?", "排盘", "Read my horoscope"} {
		if !needsChart(q) {
			t.Errorf("%q: about a person, yet needs no chart", q)
		}
	}
}

// The collect step (and collect_info among the tools) comes only with a
// question that needs a chart, with a model and offline; the form asks for
// the gender as a choice, the calendar and the time zone.
func TestBirthStepOnlyWhenTheQuestionNeedsAChart(t *testing.T) {
	ctx := context.Background()
	m := &fakeModel{}
	a, _ := newAgentAt(t, birthRoot(t), m, nil)
	if _, err := a.Turn(ctx, TurnRequest{UserID: "u", Message: "伤官见官会怎样", Skill: "bazi"}, (&collect{}).emit); err != nil {
		t.Fatal(err)
	}
	req := m.requests[len(m.requests)-1]
	if sys := req.Messages[0].Content; strings.Contains(sys, "collect step") || strings.Contains(sys, "collect_info with") || hasTool(req.Tools, "collect_info") {
		t.Fatalf("a conceptual question got the collect step:\n%s", sys)
	}
	if _, err := a.Turn(ctx, TurnRequest{UserID: "u", Message: "帮我看看我的八字", Skill: "bazi"}, (&collect{}).emit); err != nil {
		t.Fatal(err)
	}
	req = m.requests[len(m.requests)-1]
	sys := req.Messages[0].Content
	if !strings.Contains(sys, "collect step") || !hasTool(req.Tools, "collect_info") {
		t.Fatalf("a personal question lacks the collect step:\n%s", sys)
	}
	var form struct {
		Fields []struct {
			Name string   `json:"name"`
			Enum []string `json:"enum"`
		} `json:"fields"`
	}
	if err := json.Unmarshal(birthInfoForm([]string{"bazi"}), &form); err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	for _, f := range form.Fields {
		got[f.Name] = f.Enum
	}
	if strings.Join(got["identity.gender"], ",") != "male,female" || strings.Join(got["identity.birth_info.calendar"], ",") != "solar,lunar" {
		t.Fatalf("form fields = %+v", form.Fields)
	}
	if _, ok := got["identity.birth_info.timezone"]; !ok {
		t.Fatalf("no time zone field: %+v", form.Fields)
	}

	// Offline: no form under a conceptual question, a form under a
	// personal one.
	off, _ := newAgentAt(t, birthRoot(t), nil, nil)
	c := &collect{}
	if _, err := off.Turn(ctx, TurnRequest{UserID: "v", ConversationID: "o1", Message: "八字 伤官见官会怎样"}, c.emit); err != nil {
		t.Fatal(err)
	}
	if len(c.of(EventForm)) != 0 {
		t.Fatalf("offline form under a conceptual question: %+v", c.events)
	}
	c = &collect{}
	if _, err := off.Turn(ctx, TurnRequest{UserID: "w", ConversationID: "o2", Message: "帮我看看我的八字"}, c.emit); err != nil {
		t.Fatal(err)
	}
	if len(c.of(EventForm)) != 1 {
		t.Fatalf("offline personal question without the form: %+v", c.events)
	}
}

// A submitted birth form is checked field by field, the error naming the
// field and the expected form; good values are saved.
func TestBirthFormValuesChecked(t *testing.T) {
	ctx := context.Background()
	a, _ := newAgentAt(t, birthRoot(t), nil, nil)
	for _, tt := range []struct {
		field string
		value any
		want  string
	}{
		{"identity.birth_info.date", "1990/5/1", "not a date as YYYY-MM-DD"},
		{"identity.birth_info.time", "8am", "not a time as HH:MM"},
		{"identity.birth_info.calendar", "julian", "not one of solar, lunar"},
		{"identity.gender", "m", "not one of male, female"},
		{"identity.birth_info.timezone", "Mars/Olympus", "neither a time zone name"},
		{"identity.birth_info.timezone", "UTC+25", "neither a time zone name"},
	} {
		_, err := a.formMessage(ctx, "x", &FormResponse{Values: map[string]any{tt.field: tt.value}})
		if err == nil || !strings.Contains(err.Error(), tt.field) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s=%v: err %v, want one naming the field and %q", tt.field, tt.value, err, tt.want)
		}
	}
	good := map[string]any{"identity.birth_info.date": "1990-05-01", "identity.birth_info.time": "08:30", "identity.birth_info.calendar": "lunar",
		"identity.birth_info.timezone": "Asia/Shanghai", "identity.gender": "female", "identity.birth_info.place": "杭州"}
	msg, err := a.formMessage(ctx, "x", &FormResponse{Values: good})
	if err != nil || !strings.Contains(msg, "identity.birth_info.calendar") {
		t.Fatalf("good values: %q %v", msg, err)
	}
	for _, tz := range []string{"UTC+8", "GMT-03:30", "+05:45", "UTC", "Europe/Paris"} {
		if err := checkBirthValue("identity.birth_info.timezone", tz); err != nil {
			t.Errorf("%s: %v", tz, err)
		}
	}
}
