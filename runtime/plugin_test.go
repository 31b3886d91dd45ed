package runtime

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/vibelife/vibe/llm"
	"github.com/vibelife/vibe/skills"
)

// writeSkills writes files under root (a fresh directory when root is "")
// and returns root.
func writeSkills(t *testing.T, root string, files map[string]string) string {
	t.Helper()
	if root == "" {
		root = t.TempDir()
	}
	for rel, content := range files {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func agentOver(t *testing.T, root string, m Model, mutate func(*Config)) *Agent {
	t.Helper()
	set, err := skills.Open(root, skills.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Skills: set, Model: m, Memory: NewMemStore()}
	if mutate != nil {
		mutate(&cfg)
	}
	a, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

const calcSkill = "---\nname: calc\ndescription: a calculator\n---\nuse add"

func calcTools(url, timeout string) string {
	return fmt.Sprintf(`tools:
  - name: add
    type: compute
    description: adds two numbers
    parameters:
      - {name: a, type: number, required: true}
      - {name: b, type: number, required: true}
    plugin: {url: %q, timeout: %s}
  - name: show_sum
    type: display
    description: shows a sum
    card_type: sum_card
    card_props:
      - {name: sum, type: number, required: true}
      - {name: label, type: string}
`, url, timeout)
}

func TestHTTPPlugin(t *testing.T) {
	var mode string
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var in struct {
			Tool  string             `json:"tool"`
			Input map[string]float64 `json:"input"`
		}
		if err := json.NewDecoder(r.Body).Decode(&in); err != nil || in.Tool != "add" {
			http.Error(w, "bad request", 400)
			return
		}
		mu.Lock()
		m := mode
		mu.Unlock()
		switch m {
		case "ok":
			fmt.Fprintf(w, `{"result":{"sum":%v},"features":{"sign":"positive"},"confidence":1,"meta":{"plugin":"adder"}}`, in.Input["a"]+in.Input["b"])
		case "500":
			http.Error(w, "adder exploded", 500)
		case "shape":
			fmt.Fprint(w, `{"sum":3}`)
		case "confidence":
			fmt.Fprint(w, `{"result":{"sum":3},"confidence":1.5}`)
		case "slow":
			<-r.Context().Done()
		}
	}))
	defer srv.Close()
	root := writeSkills(t, "", map[string]string{"calc/SKILL.md": calcSkill, "calc/tools/tools.yaml": calcTools(srv.URL, "2s")})
	// 2 s, not less: on a loaded 2-core CI machine a 200 ms bound failed the
	// "ok" case (the slow case waits it out once).
	// The plugin answers the same arguments differently by mode: no cache.
	a := agentOver(t, root, &fakeModel{}, func(c *Config) { c.ToolCacheSize = -1 })
	tests := []struct {
		mode, args, want string
		wantErr          bool
	}{
		{"ok", `{"a":1,"b":2}`, `"sum":3`, false},
		{"ok", `{"a":1,"b":2,"c":3}`, "undeclared c (declared: a, b)", true},
		{"ok", `{"a":"1","b":2}`, "a must be number", true},
		{"500", `{"a":1,"b":2}`, "HTTP 500 (the server log has the response)", true},
		{"shape", `{"a":1,"b":2}`, "must be a JSON object {result", true},
		{"confidence", `{"a":1,"b":2}`, "confidence 1.5 is outside 0..1", true},
		{"slow", `{"a":1,"b":2}`, "timed out after 2s", true},
	}
	for _, tt := range tests {
		t.Run(tt.mode+tt.args, func(t *testing.T) {
			mu.Lock()
			mode = tt.mode
			mu.Unlock()
			res, err := a.ExecuteTool(context.Background(), "u", "calc", "add", json.RawMessage(tt.args), nil)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, res = %s", err, res)
			}
			got := string(res)
			if err != nil {
				got = err.Error()
			}
			if !strings.Contains(got, tt.want) {
				t.Fatalf("got %s, want %s", got, tt.want)
			}
		})
	}
	// The display tool validates the card props against card_props.
	var cards []Event
	emit := func(e Event) error { cards = append(cards, e); return nil }
	if _, err := a.ExecuteTool(context.Background(), "u", "calc", "show_sum", json.RawMessage(`{"sum":3,"colour":"red"}`), emit); err == nil || !strings.Contains(err.Error(), "undeclared colour") {
		t.Fatalf("undeclared prop: %v", err)
	}
	if _, err := a.ExecuteTool(context.Background(), "u", "calc", "show_sum", json.RawMessage(`{"sum":3,"label":"total"}`), emit); err != nil {
		t.Fatal(err)
	}
	if len(cards) != 1 || cards[0].CardType != "sum_card" || string(cards[0].Props) != `{"label":"total","sum":3}` {
		t.Fatalf("cards = %+v", cards)
	}
	// The schema the model sees forbids undeclared fields.
	for _, tl := range a.toolsFor("calc") {
		if tl.Name == "add" && !strings.Contains(string(tl.Parameters), `"additionalProperties":false`) {
			t.Fatalf("schema = %s", tl.Parameters)
		}
	}
}

// TestToolCallsOfAStepRunInParallel: the two plugin calls of one step only
// succeed if each sees the other arrive, which serial execution never does.
func TestToolCallsOfAStepRunInParallel(t *testing.T) {
	var arrived sync.WaitGroup
	arrived.Add(2)
	both := make(chan struct{})
	go func() { arrived.Wait(); close(both) }()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived.Done()
		select {
		case <-both:
			fmt.Fprint(w, `{"result":{"sum":0},"confidence":1}`)
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	root := writeSkills(t, "", map[string]string{"calc/SKILL.md": calcSkill, "calc/tools/tools.yaml": calcTools(srv.URL, "10s")})
	m := &fakeModel{script: []step{
		{calls: []llm.ToolCall{call("1", "add", `{"a":1,"b":2}`), call("2", "add", `{"a":3,"b":4}`)}},
		{text: []string{"done"}},
	}}
	a := agentOver(t, root, m, nil)
	c := &collect{}
	if _, err := a.Turn(context.Background(), TurnRequest{UserID: "u", Message: "add", Skill: "calc"}, c.emit); err != nil {
		t.Fatal(err)
	}
	res := c.of(EventToolResult)
	if len(res) != 2 || res[0].IsError || res[1].IsError {
		t.Fatalf("results = %+v", res)
	}
	// Results go back to the model in call order, whatever order they finished in.
	var ids []string
	for _, msg := range m.requests[1].Messages {
		if msg.Role == llm.RoleTool {
			ids = append(ids, msg.ToolCallID)
		}
	}
	if strings.Join(ids, ",") != "1,2" {
		t.Fatalf("tool messages = %v", ids)
	}
}

// TestRelativePluginCommand resolves plugins/x against PluginDir and runs it
// in its skill's directory.
func TestRelativePluginCommand(t *testing.T) {
	ws := t.TempDir()
	script := "#!/bin/sh\ncat >/dev/null\nprintf '{\"result\":{\"cwd\":\"%s\"},\"confidence\":0.5}' \"$(pwd)\"\n"
	if err := os.MkdirAll(filepath.Join(ws, "plugins"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "plugins", "where"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	root := writeSkills(t, "", map[string]string{
		"calc/SKILL.md":         calcSkill,
		"calc/tools/tools.yaml": "tools:\n  - name: where\n    type: compute\n    description: says where it runs\n    plugin: {command: [plugins/where]}\n",
	})
	a := agentOver(t, root, &fakeModel{}, func(c *Config) { c.PluginDir = ws })
	res, err := a.ExecuteTool(context.Background(), "u", "calc", "where", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	skillDir := filepath.Join(root, "calc")
	real, _ := filepath.EvalSymlinks(skillDir)
	if !strings.Contains(string(res), `"cwd":"`+real+`"`) && !strings.Contains(string(res), `"cwd":"`+skillDir+`"`) {
		t.Fatalf("res = %s, want cwd %s", res, skillDir)
	}
	// A relative PluginDir means the same directory.
	t.Chdir(filepath.Dir(ws))
	rel := agentOver(t, root, &fakeModel{}, func(c *Config) { c.PluginDir = filepath.Base(ws) })
	if res, err := rel.ExecuteTool(context.Background(), "u", "calc", "where", nil, nil); err != nil || !strings.Contains(string(res), `calc"`) {
		t.Fatalf("relative PluginDir: %s, %v", res, err)
	}
	// Without PluginDir the same command is looked up from the process's directory.
	b := agentOver(t, root, &fakeModel{}, nil)
	if _, err := b.ExecuteTool(context.Background(), "u", "calc", "where", nil, nil); err == nil || !strings.Contains(err.Error(), "plugins/where") {
		t.Fatalf("err = %v", err)
	}
}
