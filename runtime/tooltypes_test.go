package runtime

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/vibelife/vibe/chunk"
	"github.com/vibelife/vibe/knowledge"
	"github.com/vibelife/vibe/llm"
	"github.com/vibelife/vibe/skills"
)

const oracleSkill = "---\nname: oracle\ndescription: draws, forms, questionnaires and searches\n---\nuse the tools"

const oracleTools = `tools:
  - name: draw_cards
    type: random
    description: draws tarot cards
    parameters:
      - {name: question, type: string}
      - {name: count, type: integer, minimum: 1, maximum: 5}
    draw:
      items: [The Fool, The Magician, The High Priestess, The Empress, The Emperor, The Lovers, The Chariot, Strength]
      count: 3
      reversed: true
  - name: roll_dice
    type: random
    description: rolls two dice
    draw: {items: [1, 2, 3, 4, 5, 6], count: 2, repeat: true}
  - name: ask_question
    type: collect
    description: asks what the reading is about
    prompt: What would you like the reading to be about?
    form:
      - {name: question, type: string, required: true, description: your question}
      - {name: area, type: string, enum: [love, work, health]}
  - name: search_classics
    type: retrieve
    description: searches one book
    sources: [b.md]
  - name: intake
    type: flow
    description: a three-question intake
    steps:
      - id: mood
        prompt: How do you feel today?
        field: {type: string, enum: [calm, anxious]}
        branches: {calm: done_q}
      - id: worry
        prompt: What worries you, from 1 to 9?
        field: {name: worry_level, type: integer, minimum: 1, maximum: 9}
      - id: done_q
        prompt: Anything else?
        field: {type: string}
`

// twoBookSearcher answers every query with a passage of a.md and one of b.md.
type twoBookSearcher struct{ asked *atomic.Int32 }

func (s twoBookSearcher) Search(ctx context.Context, q knowledge.Query) ([]knowledge.Hit, error) {
	if s.asked != nil {
		s.asked.Add(1)
	}
	return []knowledge.Hit{
		{Score: 2, Chunk: chunk.Chunk{ID: "a#1", Doc: "converted/a.md", Source: "books/a.md", Text: "from a"}},
		{Score: 1, Chunk: chunk.Chunk{ID: "b#1", Doc: "converted/b.md", Source: "books/b.md", Text: "from b"}},
	}, nil
}

func oracleAgent(t *testing.T, m Model) (*Agent, *MemStore) {
	t.Helper()
	root := writeSkills(t, "", map[string]string{"oracle/SKILL.md": oracleSkill, "oracle/tools/tools.yaml": oracleTools})
	mem := NewMemStore()
	a := agentOver(t, root, m, func(c *Config) { c.Memory = mem; c.Searcher = twoBookSearcher{} })
	return a, mem
}

func drawsOf(t *testing.T, c *collect, tool string) (seed, turnSeed float64, draws []any) {
	t.Helper()
	r := toolResult(t, c, tool)
	if r["_is_error"] == true {
		t.Fatalf("%s failed: %v", tool, r)
	}
	return r["seed"].(float64), r["turn_seed"].(float64), r["draws"].([]any)
}

func TestRandomToolReplaysWithTheRecordedSeed(t *testing.T) {
	script := func() *fakeModel {
		return &fakeModel{script: []step{
			{calls: []llm.ToolCall{call("1", "draw_cards", `{"question":"work?"}`), call("2", "roll_dice", `{}`)}},
			{text: []string{"read"}},
		}}
	}
	a, mem := oracleAgent(t, script())
	var c1 collect
	if _, err := a.Turn(context.Background(), TurnRequest{UserID: "u", ConversationID: "c1", Skill: "oracle", Message: "draw"}, c1.emit); err != nil {
		t.Fatal(err)
	}
	s1, ts1, cards := drawsOf(t, &c1, "draw_cards")
	_, _, dice := drawsOf(t, &c1, "roll_dice")
	if len(cards) != 3 || len(dice) != 2 {
		t.Fatalf("cards %v, dice %v", cards, dice)
	}
	seen := map[any]bool{}
	for _, d := range cards {
		item := d.(map[string]any)["item"]
		if seen[item] {
			t.Fatalf("card %v drawn twice without repeat: %v", item, cards)
		}
		seen[item] = true
	}
	for _, d := range dice {
		if n := d.(map[string]any)["item"].(float64); n < 1 || n > 6 {
			t.Fatalf("die %v", n)
		}
	}
	done := c1.of(EventDone)
	if len(done) != 1 || done[0].Seed == nil || float64(*done[0].Seed) != ts1 {
		t.Fatalf("done event seed %+v, turn_seed %v", done, ts1)
	}
	// The draws are stored with the turn.
	msgs, _ := mem.Messages(context.Background(), "u", "c1", 0)
	var stored []string
	for _, m := range msgs {
		if m.Role == roleDraw {
			stored = append(stored, m.Content)
		}
	}
	if len(stored) != 2 || !strings.Contains(strings.Join(stored, ""), fmt.Sprintf(`"seed":%d`, int64(s1))) {
		t.Fatalf("stored draws %v", stored)
	}

	// Replayed with the recorded turn seed: the same draws.
	a2, _ := oracleAgent(t, script())
	seed := int64(ts1)
	var c2 collect
	if _, err := a2.Turn(context.Background(), TurnRequest{UserID: "v", ConversationID: "c2", Skill: "oracle", Message: "draw", Seed: &seed}, c2.emit); err != nil {
		t.Fatal(err)
	}
	s2, _, cards2 := drawsOf(t, &c2, "draw_cards")
	_, _, dice2 := drawsOf(t, &c2, "roll_dice")
	if s1 != s2 || !reflect.DeepEqual(cards, cards2) || !reflect.DeepEqual(dice, dice2) {
		t.Fatalf("replay drew %v %v, recorded %v %v", cards2, dice2, cards, dice)
	}
	// Another seed: other draws (8*7*6*8 orientations make a clash unlikely).
	other := seed ^ 1
	var c3 collect
	a3, _ := oracleAgent(t, script())
	if _, err := a3.Turn(context.Background(), TurnRequest{UserID: "w", Skill: "oracle", Message: "draw", Seed: &other}, c3.emit); err != nil {
		t.Fatal(err)
	}
	if _, _, cards3 := drawsOf(t, &c3, "draw_cards"); reflect.DeepEqual(cards, cards3) {
		t.Fatalf("seeds %d and %d drew the same %v", seed, other, cards3)
	}
}

func TestDrawItemsIsUniform(t *testing.T) {
	// Each of 6 faces about 1/6 of 60000 rolls; a seed gives a fixed draw.
	counts := map[any]int{}
	items := []any{1, 2, 3, 4, 5, 6}
	for s := int64(0); s < 30000; s++ {
		for _, d := range drawItems(items, 2, true, false, drawSeed(s, 0)) {
			counts[d.Item]++
		}
	}
	for _, it := range items {
		if n := counts[it]; n < 9500 || n > 10500 {
			t.Fatalf("face %v came %d times of 60000: %v", it, n, counts)
		}
	}
	if a, b := drawItems(items, 3, false, true, 42), drawItems(items, 3, false, true, 42); !reflect.DeepEqual(a, b) {
		t.Fatalf("same seed, different draws: %v %v", a, b)
	}
}

func TestCollectToolShowsItsFormAndEndsTheTurn(t *testing.T) {
	m := &fakeModel{script: []step{{calls: []llm.ToolCall{call("1", "ask_question", `{"reason":"to focus the reading"}`)}}}}
	a, _ := oracleAgent(t, m)
	var c collect
	if _, err := a.Turn(context.Background(), TurnRequest{UserID: "u", Skill: "oracle", Message: "read for me"}, c.emit); err != nil {
		t.Fatal(err)
	}
	forms := c.of(EventForm)
	if len(forms) != 1 {
		t.Fatalf("forms %+v", c.events)
	}
	var form struct {
		Tool   string           `json:"tool"`
		Reason string           `json:"reason"`
		Fields []map[string]any `json:"fields"`
	}
	if err := json.Unmarshal(forms[0].Form, &form); err != nil {
		t.Fatal(err)
	}
	if form.Tool != "ask_question" || form.Reason != "to focus the reading" || len(form.Fields) != 2 || form.Fields[0]["required"] != true || form.Fields[1]["enum"] == nil {
		t.Fatalf("form %+v", form)
	}
	if d := c.of(EventDone); len(d) != 1 || d[0].Reason != "form" {
		t.Fatalf("done %+v", d)
	}
	// An undeclared argument is refused before the form shows.
	m2 := &fakeModel{script: []step{{calls: []llm.ToolCall{call("1", "ask_question", `{"colour":"red"}`)}}, {text: []string{"ok"}}}}
	a2, _ := oracleAgent(t, m2)
	var c2 collect
	if _, err := a2.Turn(context.Background(), TurnRequest{UserID: "u", Skill: "oracle", Message: "x"}, c2.emit); err != nil {
		t.Fatal(err)
	}
	if r := toolResult(t, &c2, "ask_question"); r["_is_error"] != true || !strings.Contains(fmt.Sprint(r["error"]), "undeclared colour") {
		t.Fatalf("result %v", r)
	}
}

func TestRetrieveToolSearchesItsSources(t *testing.T) {
	m := &fakeModel{script: []step{{calls: []llm.ToolCall{call("1", "search_classics", `{"query":"anything"}`)}}, {text: []string{"ok"}}}}
	a, _ := oracleAgent(t, m)
	var c collect
	if _, err := a.Turn(context.Background(), TurnRequest{UserID: "u", Skill: "oracle", Message: "search"}, c.emit); err != nil {
		t.Fatal(err)
	}
	r := toolResult(t, &c, "search_classics")
	ps, _ := r["passages"].([]any)
	if len(ps) != 1 || ps[0].(map[string]any)["chunk_id"] != "b#1" {
		t.Fatalf("passages %v", r)
	}
	if cs := c.of(EventCitations); len(cs) != 1 || len(cs[0].Citations) != 1 || cs[0].Citations[0].ChunkID != "b#1" {
		t.Fatalf("citations %+v", cs)
	}
}

func TestFlowToolKeepsItsStateInSkillData(t *testing.T) {
	m := &fakeModel{}
	a, mem := oracleAgent(t, m)
	run := func(args string) map[string]any {
		t.Helper()
		m.mu.Lock()
		m.script = []step{{calls: []llm.ToolCall{call("1", "intake", args)}}, {text: []string{"ok"}}}
		m.mu.Unlock()
		var c collect
		if _, err := a.Turn(context.Background(), TurnRequest{UserID: "u", ConversationID: "f", Skill: "oracle", Message: "go"}, c.emit); err != nil {
			t.Fatal(err)
		}
		return toolResult(t, &c, "intake")
	}
	if r := run(`{"action":"status"}`); r["started"] != false {
		t.Fatalf("status before start: %v", r)
	}
	if r := run(`{"action":"answer","answer":"calm"}`); r["_is_error"] != true {
		t.Fatalf("answer before start: %v", r)
	}
	if r := run(`{"action":"start"}`); r["step"] != "mood" || r["prompt"] != "How do you feel today?" {
		t.Fatalf("start: %v", r)
	}
	if r := run(`{"action":"answer","answer":"sad"}`); r["_is_error"] != true || !strings.Contains(fmt.Sprint(r["error"]), "not one of calm, anxious") {
		t.Fatalf("bad answer: %v", r)
	}
	if r := run(`{"action":"answer","answer":"anxious"}`); r["step"] != "worry" {
		t.Fatalf("after anxious: %v", r)
	}
	// A restart (a new agent over the same store) resumes where it was.
	a, _ = oracleAgent(t, m)
	a.cfg.Memory = mem
	if r := run(`{"action":"answer","answer":"12"}`); r["_is_error"] != true || !strings.Contains(fmt.Sprint(r["error"]), "above the maximum 9") {
		t.Fatalf("out of range: %v", r)
	}
	if r := run(`{"action":"answer","answer":"7"}`); r["step"] != "done_q" {
		t.Fatalf("after worry: %v", r)
	}
	r := run(`{"action":"answer","answer":"no"}`)
	want := map[string]any{"mood": "anxious", "worry_level": float64(7), "done_q": "no"}
	if r["done"] != true || !reflect.DeepEqual(r["answers"], want) {
		t.Fatalf("finished: %v", r)
	}
	prof, _ := mem.Profile(context.Background(), "u")
	if !strings.Contains(string(prof), `"flows":{"intake":{"step":"done_q","answers":{"done_q":"no","mood":"anxious","worry_level":7},"done":true}}`) {
		t.Fatalf("profile %s", prof)
	}
	// The branch: calm skips the worry question.
	run(`{"action":"start"}`)
	if r := run(`{"action":"answer","answer":"calm"}`); r["step"] != "done_q" {
		t.Fatalf("calm branch: %v", r)
	}
}

func TestComputeResultsAreCached(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		var in struct {
			Input map[string]float64 `json:"input"`
		}
		_ = json.NewDecoder(r.Body).Decode(&in)
		fmt.Fprintf(w, `{"result":{"sum":%v}}`, in.Input["a"]+in.Input["b"])
	}))
	defer srv.Close()
	root := writeSkills(t, "", map[string]string{"calc/SKILL.md": calcSkill, "calc/tools/tools.yaml": calcTools(srv.URL, "5s")})
	a := agentOver(t, root, &fakeModel{}, func(c *Config) { c.ToolCacheSize = 2 })
	exec := func(args string) string {
		t.Helper()
		out, err := a.ExecuteTool(context.Background(), "u", "calc", "add", json.RawMessage(args), nil)
		if err != nil {
			t.Fatal(err)
		}
		return string(out)
	}
	first := exec(`{"a":1,"b":2}`)
	if again := exec(`{"b":2,"a":1}`); again != first || calls.Load() != 1 {
		t.Fatalf("same arguments in another order: %s vs %s, %d plugin calls", again, first, calls.Load())
	}
	exec(`{"a":1,"b":3}`)
	exec(`{"a":1,"b":4}`) // evicts {1,2}, the least recently used
	if calls.Load() != 3 || a.cache.len() != 2 {
		t.Fatalf("%d plugin calls, %d cached", calls.Load(), a.cache.len())
	}
	exec(`{"a":1,"b":2}`)
	if calls.Load() != 4 {
		t.Fatalf("evicted entry not recomputed: %d calls", calls.Load())
	}
	// A new version of the tool misses.
	writeSkills(t, root, map[string]string{"calc/tools/tools.yaml": strings.Replace(calcTools(srv.URL, "5s"), "    type: compute\n", "    type: compute\n    version: \"2\"\n", 1)})
	set := a.cfg.Skills
	if err := set.Refresh(); err != nil {
		t.Fatal(err)
	}
	b := agentOver(t, root, &fakeModel{}, nil)
	b.cache = a.cache
	if _, err := b.ExecuteTool(context.Background(), "u", "calc", "add", json.RawMessage(`{"a":1,"b":2}`), nil); err != nil {
		t.Fatal(err)
	}
	if calls.Load() != 5 {
		t.Fatalf("version 2 served from version 1's cache: %d calls", calls.Load())
	}
	// Off: every call runs.
	c := agentOver(t, root, &fakeModel{}, func(c *Config) { c.ToolCacheSize = -1 })
	for range 2 {
		if _, err := c.ExecuteTool(context.Background(), "u", "calc", "add", json.RawMessage(`{"a":1,"b":2}`), nil); err != nil {
			t.Fatal(err)
		}
	}
	if calls.Load() != 7 {
		t.Fatalf("cache off: %d calls", calls.Load())
	}
}

func TestRandomFlowCollectAreNeverCached(t *testing.T) {
	a, _ := oracleAgent(t, &fakeModel{})
	for range 2 {
		if _, err := a.ExecuteTool(context.Background(), "u", "oracle", "roll_dice", nil, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := a.ExecuteTool(context.Background(), "u", "oracle", "intake", json.RawMessage(`{"action":"start"}`), nil); err != nil {
			t.Fatal(err)
		}
		if _, err := a.ExecuteTool(context.Background(), "u", "oracle", "ask_question", nil, nil); err != nil {
			t.Fatal(err)
		}
	}
	if a.cache.len() != 0 || a.cache.hits+a.cache.misses != 0 {
		t.Fatalf("cache used: %d entries, %d lookups", a.cache.len(), a.cache.hits+a.cache.misses)
	}
}

// TestCompletionsSeedReplaysTheDraw: OpenAI's seed on /v1/chat/completions
// seeds the turn's draws, stored with the turn.
func TestCompletionsSeedReplaysTheDraw(t *testing.T) {
	m := &fakeModel{}
	a, mem := oracleAgent(t, m)
	keys := &Keys{}
	if err := ParseKeysEnv("ka:alice", keys); err != nil {
		t.Fatal(err)
	}
	s, err := NewServer(a, ServerOptions{Keys: keys})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s)
	defer ts.Close()
	drawn := func(conv string) string {
		t.Helper()
		m.mu.Lock()
		m.script = []step{{calls: []llm.ToolCall{call("1", "draw_cards", `{}`)}}, {text: []string{"read"}}}
		m.mu.Unlock()
		req, _ := http.NewRequest("POST", ts.URL+"/v1/chat/completions", strings.NewReader(`{"model":"vibe/oracle","seed":12345,"messages":[{"role":"user","content":"draw"}]}`))
		req.Header.Set("Authorization", "Bearer ka")
		req.Header.Set("X-Conversation-ID", conv)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("status %d", resp.StatusCode)
		}
		msgs, _ := mem.Messages(context.Background(), "alice", conv, 0)
		for _, m := range msgs {
			if m.Role == roleDraw {
				var r map[string]any
				_ = json.Unmarshal([]byte(m.Content), &r)
				if r["turn_seed"] != float64(12345) {
					t.Fatalf("turn seed %v", r["turn_seed"])
				}
				b, _ := json.Marshal(r["draws"])
				return string(b)
			}
		}
		t.Fatalf("no draw stored in %v", msgs)
		return ""
	}
	if a, b := drawn("s-1"), drawn("s-2"); a != b {
		t.Fatalf("the same seed drew %s and %s", a, b)
	}
}

// BenchmarkComputeTool measures a compute call through ExecuteTool with the
// result cache (hits after the first call) and without (every call reaches
// the HTTP plugin).
func BenchmarkComputeTool(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var in struct {
			Input map[string]float64 `json:"input"`
		}
		_ = json.NewDecoder(r.Body).Decode(&in)
		fmt.Fprintf(w, `{"result":{"sum":%v}}`, in.Input["a"]+in.Input["b"])
	}))
	defer srv.Close()
	for _, bc := range []struct {
		name string
		size int
	}{{"cached", 0}, {"uncached", -1}} {
		b.Run(bc.name, func(b *testing.B) {
			root := b.TempDir()
			for rel, content := range map[string]string{"calc/SKILL.md": calcSkill, "calc/tools/tools.yaml": calcTools(srv.URL, "5s")} {
				p := root + "/" + rel
				_ = os.MkdirAll(p[:strings.LastIndex(p, "/")], 0o755)
				_ = os.WriteFile(p, []byte(content), 0o644)
			}
			set, err := skills.Open(root, skills.Options{})
			if err != nil {
				b.Fatal(err)
			}
			a, err := New(Config{Skills: set, Model: &fakeModel{}, Memory: NewMemStore(), ToolCacheSize: bc.size})
			if err != nil {
				b.Fatal(err)
			}
			args := json.RawMessage(`{"a":1,"b":2}`)
			b.ResetTimer()
			for range b.N {
				if _, err := a.ExecuteTool(context.Background(), "u", "calc", "add", args, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func TestExecuteToolSeed(t *testing.T) {
	a, _ := oracleAgent(t, &fakeModel{})
	s, err := NewServer(a, ServerOptions{Insecure: true})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s)
	defer ts.Close()
	exec := func(body string) map[string]any {
		t.Helper()
		resp := do(t, "POST", ts.URL+"/api/tools/execute", "", body)
		defer resp.Body.Close()
		var out struct {
			Result map[string]any `json:"result"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != 200 {
			t.Fatalf("status %d, %v", resp.StatusCode, err)
		}
		return out.Result
	}
	first := exec(`{"skill":"oracle","tool":"draw_cards","args":{}}`)
	again := exec(fmt.Sprintf(`{"skill":"oracle","tool":"draw_cards","args":{},"seed":%d}`, int64(first["turn_seed"].(float64))))
	if !reflect.DeepEqual(first["draws"], again["draws"]) {
		t.Fatalf("replayed %v, first %v", again["draws"], first["draws"])
	}
}
