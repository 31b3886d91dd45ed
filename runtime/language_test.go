package runtime

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/vibelife/vibe/llm"
	"github.com/vibelife/vibe/llm/llmtest"
)

// QueryLanguage tells the Latin-script languages apart by their function
// words and letters; English questions citing a foreign word, and English
// rule statements full of "a", stay English.
func TestQueryLanguageLatin(t *testing.T) {
	for _, c := range []struct{ q, want string }{
		{"¿Cuántas horas de licencia por enfermedad acumulo en cada período de pago?", langES},
		{"¿Necesito recibos para las comidas?", langES},
		{"¿Tengo derecho a viáticos?", langES},
		{"Puedo usar la tarjeta de viaje para gastos personales", langES},
		{"Combien de jours de congé est-ce que je peux prendre pour un mariage ?", langFR},
		{"Wie viele Urlaubstage habe ich im Jahr?", langDE},
		{"Quantos dias de férias eu posso tirar por ano?", langPT},
		{"Quanti giorni di ferie posso prendere per il matrimonio?", langIT},
		{"How many hours of sick leave do I accrue each pay period?", langEN},
		{"What is the per diem for a trip to Madrid?", langEN},
		{"Is a de minimis gift allowed?", langEN},
		{"If a traveler takes a taxi, a receipt is needed", langEN},
		{"Award leave in a single fiscal year", langEN},
		{"HR Links shows some of my hours as \"use or lose\". What does that mean?", langEN},
		{"Use or Lose", langEN},
		{"身弱财多怎么办", langZH},
	} {
		if got := QueryLanguage(c.q); got != c.want {
			t.Errorf("QueryLanguage(%q) = %q, want %q", c.q, got, c.want)
		}
	}
	if got := TextLanguage("El empleado debe presentar los recibos de los gastos de viaje dentro de los cinco días"); got != langES {
		t.Errorf("TextLanguage of a Spanish rule = %q", got)
	}
	if LanguageName(langES) != "Spanish" || LanguageName("xx") != "English" {
		t.Errorf("LanguageName: %q %q", LanguageName(langES), LanguageName("xx"))
	}
}

const esQuestion = "¿Cuántas horas de licencia por enfermedad acumulo en cada período de pago?"

// With a model, a Spanish question over English sources is rewritten into
// English by the model (through the real client against the scripted
// server) and searched as the rewrite; the tool result names both
// languages and the rewrite.
func TestSpanishQuestionRewrittenIntoEnglish(t *testing.T) {
	fake := llmtest.New(t,
		llmtest.ToolCall("use_skill", `{"name":"leave"}`),
		llmtest.ToolCall("search_knowledge", `{"query":"`+esQuestion+`"}`),
		llmtest.Text("sick leave hours accrued per pay period"), // the rewrite
		llmtest.Text("Cuatro horas por período de pago."),
	)
	client := llm.New(llm.Options{BaseURL: fake.URL, APIKey: "k", Model: "m", MaxRetries: -1, Timeout: 10 * time.Second})
	rs := &recordingSearcher{}
	a := agentOver(t, writeSkills(t, "", leaveSkill), client, func(c *Config) { c.Searcher = rs })
	var result string
	emit := func(e Event) error {
		if e.Type == EventToolResult && e.Tool == "search_knowledge" {
			result = string(e.Result)
		}
		return nil
	}
	if _, err := a.Turn(context.Background(), TurnRequest{UserID: "u", ConversationID: "c", Message: esQuestion}, emit); err != nil {
		t.Fatal(err)
	}
	if fake.Remaining() != 0 {
		t.Fatalf("%d scripted replies left: the Spanish question was not rewritten", fake.Remaining())
	}
	rewrites := 0
	for _, r := range fake.Requests() {
		if strings.Contains(r.SystemMessage(), "search query") {
			rewrites++
			if r.LastUserMessage() != esQuestion || !strings.Contains(r.SystemMessage(), "English") {
				t.Errorf("rewrite request: system %q user %q", r.SystemMessage(), r.LastUserMessage())
			}
		}
	}
	if rewrites != 1 {
		t.Errorf("%d rewrite requests, want 1", rewrites)
	}
	if len(rs.texts) != 1 || !strings.HasSuffix(rs.texts[0], " sick leave hours accrued per pay period") {
		t.Errorf("searched texts = %q", rs.texts)
	}
	var res struct {
		SearchedAs       string `json:"searched_as"`
		BridgedBy        string `json:"bridged_by"`
		Unbridged        bool   `json:"unbridged"`
		QuestionLanguage string `json:"question_language"`
		SourceLanguage   string `json:"source_language"`
	}
	if err := json.Unmarshal([]byte(result), &res); err != nil || res.SearchedAs != "sick leave hours accrued per pay period" ||
		res.BridgedBy != "llm" || res.Unbridged || res.QuestionLanguage != "Spanish" || res.SourceLanguage != "English" {
		t.Errorf("tool result %s (%v)", result, err)
	}
}

// Offline, a Spanish question over English sources is no longer taken for
// English: search_knowledge and get_rules say it is Spanish, that the
// sources are English, and that it was searched by its own words.
func TestSpanishQuestionOfflineSaysWhatWasSearched(t *testing.T) {
	a := agentOver(t, writeSkills(t, "", leaveSkill), nil, func(c *Config) { c.Searcher = &recordingSearcher{} })
	ctx := context.Background()
	args, _ := json.Marshal(map[string]string{"query": esQuestion})
	out, err := a.ExecuteTool(ctx, "u", "leave", "search_knowledge", args, nil)
	if err != nil {
		t.Fatal(err)
	}
	var res struct {
		Unbridged        bool   `json:"unbridged"`
		Note             string `json:"note"`
		QuestionLanguage string `json:"question_language"`
		SourceLanguage   string `json:"source_language"`
	}
	if err := json.Unmarshal(out, &res); err != nil || !res.Unbridged || res.QuestionLanguage != "Spanish" || res.SourceLanguage != "English" ||
		!strings.Contains(res.Note, "Spanish") || !strings.Contains(res.Note, "words only") {
		t.Errorf("search_knowledge result %s (%v)", out, err)
	}
	raw, err := a.getRules(ctx, []string{"leave"}, esQuestion, 5)
	if err != nil {
		t.Fatal(err)
	}
	res = struct {
		Unbridged        bool   `json:"unbridged"`
		Note             string `json:"note"`
		QuestionLanguage string `json:"question_language"`
		SourceLanguage   string `json:"source_language"`
	}{}
	if err := json.Unmarshal(raw, &res); err != nil || !res.Unbridged || res.QuestionLanguage != "Spanish" ||
		!strings.Contains(res.Note, "in Spanish and the rules of a skill in English") || !strings.Contains(res.Note, "searched as: "+esQuestion) {
		t.Errorf("get_rules result %s (%v)", raw, err)
	}
	// An English question over the same sources names no language.
	out, err = a.ExecuteTool(ctx, "u", "leave", "search_knowledge", json.RawMessage(`{"query":"How many hours of sick leave do I accrue?"}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(out), "question_language") || strings.Contains(string(out), "unbridged") {
		t.Errorf("English question flagged: %s", out)
	}
}
