package main

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/vibelife/vibe/internal/iostreams"
	"github.com/vibelife/vibe/knowledge/sqlite"
	"github.com/vibelife/vibe/llm"
	"github.com/vibelife/vibe/llm/llmtest"
	"github.com/vibelife/vibe/runtime"
)

// demoRepo is the repository root seen from this package.
const demoRepo = "../.."

var (
	demoOnce sync.Once
	demoDir  string
	demoErr  error
)

// demoWorkspace builds the demo workspace the way scripts/demo.sh does, once
// per test binary: the shipped corpus and examples/demo/theme/ files, the
// brew plugin built with go build, and `vibe build demo` run in-process with
// the offline defaults. Tests must not change it.
func demoWorkspace(t testing.TB) string {
	t.Helper()
	demoOnce.Do(func() {
		dir, err := os.MkdirTemp("", "vibe-demo-")
		if err != nil {
			demoErr = err
			return
		}
		demoDir, demoErr = dir, buildDemo(dir)
	})
	if demoErr != nil {
		t.Fatalf("build the demo workspace: %v", demoErr)
	}
	return demoDir
}

func buildDemo(ws string) error {
	src := filepath.Join(demoRepo, "examples", "demo")
	books := filepath.Join(ws, "books")
	kdir := filepath.Join(ws, "knowledge", "demo")
	for _, d := range []string{books, kdir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	copyFile := func(from, to string) error {
		b, err := os.ReadFile(from)
		if err != nil {
			return err
		}
		return os.WriteFile(to, b, 0o644)
	}
	entries, err := os.ReadDir(src)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if e.IsDir() || !strings.Contains(e.Name(), ".") || e.Name() == "README.md" {
			continue
		}
		if err := copyFile(filepath.Join(src, e.Name()), filepath.Join(books, e.Name())); err != nil {
			return err
		}
	}
	for _, f := range []string{"curate.yaml", "tools.yaml", "glossary.yaml", "eval.yaml"} {
		if err := copyFile(filepath.Join(src, "theme", f), filepath.Join(kdir, f)); err != nil {
			return err
		}
	}
	gobin := filepath.Join(goruntime.GOROOT(), "bin", "go")
	cmd := exec.Command(gobin, "build", "-o", filepath.Join(ws, "plugins", "brew-calc"), "./examples/demo/plugins/brew")
	cmd.Dir = demoRepo
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build the brew plugin: %v: %s", err, out)
	}
	ios, _, _, errOut := iostreams.Test()
	if code := run(context.Background(), ios, []string{"--workspace", ws, "--quiet", "build", "demo"}, func(string) string { return "" }); code != 0 {
		return fmt.Errorf("vibe build demo: exit %d: %s", code, errOut.String())
	}
	return nil
}

func TestMain(m *testing.M) {
	if args := os.Getenv(childArgsEnv); args != "" {
		// Re-executed by a crash or lock test as a vibe process of its own.
		os.Exit(childMain(args))
	}
	code := m.Run()
	// The workspaces built once per test binary go with it.
	for _, dir := range []string{demoDir, baziDir, bareDir} {
		if dir != "" {
			os.RemoveAll(dir)
		}
	}
	if childBin != "" {
		os.RemoveAll(filepath.Dir(childBin))
	}
	os.Exit(code)
}

// demoServer starts vibe serve's handler over the demo workspace with env as
// the environment; keys "ka" (alice) and "kb" (bob).
func demoServer(t *testing.T, env map[string]string) *httptest.Server {
	t.Helper()
	ws := demoWorkspace(t)
	env["VIBE_API_KEYS"] = "ka:alice,kb:bob"
	ios, _, _, errOut := iostreams.Test()
	a := &app{io: ios, getenv: func(k string) string { return env[k] }, now: time.Now, workspaceDir: ws}
	srv, _, closeServer, err := a.newServer(context.Background(), &ServeOptions{IO: ios})
	if err != nil {
		t.Fatalf("%v: %s", err, errOut.String())
	}
	ts := httptest.NewServer(srv)
	t.Cleanup(func() { ts.Close(); closeServer() })
	return ts
}

func post(t *testing.T, url, key, body string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func get(t *testing.T, url, key string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func sseEvents(t *testing.T, r io.Reader) []runtime.Event {
	t.Helper()
	var out []runtime.Event
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			var e runtime.Event
			if err := json.Unmarshal([]byte(d), &e); err != nil {
				t.Fatalf("bad event %q: %v", d, err)
			}
			out = append(out, e)
		}
	}
	return out
}

// passage is a search_knowledge result as the model receives it.
type passage struct {
	ChunkID     string   `json:"chunk_id"`
	Source      string   `json:"source"`
	Doc         string   `json:"doc"`
	HeadingPath []string `json:"heading_path"`
	Start       int      `json:"start"`
	End         int      `json:"end"`
	Text        string   `json:"text"`
}

// toolMessages returns the tool results of the turn the request carries
// (those after its last user message), by tool name.
func toolMessages(req llmtest.Request) map[string]string {
	last := 0
	for i, m := range req.Messages {
		if m.Role == llm.RoleUser {
			last = i
		}
	}
	names := map[string]string{}
	for _, m := range req.Messages[last:] {
		for _, c := range m.ToolCalls {
			names[c.ID] = c.Name
		}
	}
	out := map[string]string{}
	for _, m := range req.Messages[last:] {
		if m.Role == llm.RoleTool {
			out[names[m.ToolCallID]] = m.Content
		}
	}
	return out
}

// brewAgent is the scripted model: like a real one it decides each step
// from what the request carries. It activates the skill (unless the system
// prompt says it is active), retrieves rules and passages in one step, calls
// the brew plugin, shows the card with the plugin's figures and the cited
// chunk, and answers citing the passage it found.
func brewAgent(t *testing.T) func(llmtest.Request) llmtest.Reply {
	return func(req llmtest.Request) llmtest.Reply {
		tools := toolMessages(req)
		calls := func(cs ...llm.ToolCall) llmtest.Reply { return llmtest.Reply{ToolCalls: cs} }
		switch {
		case tools["use_skill"] == "" && !strings.Contains(req.Messages[0].Content, "active skill: demo"):
			return calls(llm.ToolCall{ID: "c1", Name: "use_skill", Arguments: `{"name":"demo"}`})
		case tools["search_knowledge"] == "":
			return calls(
				llm.ToolCall{ID: "c2", Name: "get_rules", Arguments: `{"question":"water temperature for green tea"}`},
				llm.ToolCall{ID: "c3", Name: "search_knowledge", Arguments: `{"query":"green tea water temperature °C","k":5}`},
			)
		case tools["calc_brew"] == "":
			return calls(llm.ToolCall{ID: "c4", Name: "calc_brew", Arguments: `{"tea":"green","vessel_ml":300}`})
		case tools["show_brew_card"] == "":
			return brewCardCall(t, tools)
		default:
			p := temperaturePassage(t, tools["search_knowledge"])
			return llmtest.Text(fmt.Sprintf("For 300 ml of green tea use 6 g of leaves and water at 80 °C, never at a rolling boil; "+
				"spring buds want 75 to 80 °C [%s, %s].", p.ChunkID, strings.Join(p.HeadingPath, " > ")))
		}
	}
}

// brewCardCall is the scripted model's show_brew_card call: the figures of
// the calc_brew result and the chunk of the passage on green tea's water
// temperatures.
func brewCardCall(t *testing.T, tools map[string]string) llmtest.Reply {
	var calc struct {
		Result struct {
			Grams      float64 `json:"grams"`
			WaterTempC int     `json:"water_temp_c"`
			SteepsS    []int   `json:"steeps_s"`
			Method     string  `json:"method"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(tools["calc_brew"]), &calc); err != nil {
		return llmtest.Text("calc_brew result unreadable: " + err.Error())
	}
	props, _ := json.Marshal(map[string]any{"tea": "green", "vessel_ml": 300, "grams": calc.Result.Grams,
		"water_temp_c": calc.Result.WaterTempC, "steeps_s": calc.Result.SteepsS, "method": calc.Result.Method,
		"citations": []string{temperaturePassage(t, tools["search_knowledge"]).ChunkID}})
	return llmtest.Reply{ToolCalls: []llm.ToolCall{{ID: "c5", Name: "show_brew_card", Arguments: string(props)}}}
}

// temperaturePassage is the passage of the search result that states green
// tea's water temperatures.
// The result is the tool_result event's JSON, or the text the model reads
// (passages wrapped in <knowledge> blocks).
func temperaturePassage(t *testing.T, result string) passage {
	var r struct {
		Passages []passage `json:"passages"`
	}
	if strings.HasPrefix(result, "search_knowledge:") {
		for _, p := range runtime.ParseKnowledge(result) {
			r.Passages = append(r.Passages, passage{ChunkID: p.ChunkID, Source: p.Source, Doc: p.Doc, HeadingPath: p.HeadingPath, Start: p.Start, End: p.End, Text: p.Text})
		}
	} else if err := json.Unmarshal([]byte(result), &r); err != nil {
		t.Errorf("search result %q: %v", result, err)
		return passage{}
	}
	for _, p := range r.Passages {
		if strings.Contains(p.Text, "75 to 80 °C") {
			return p
		}
	}
	t.Errorf("no passage with the green tea temperatures among %d: %s", len(r.Passages), result)
	return passage{}
}

// TestServeDemoEndToEnd: vibe serve over the demo workspace built by the
// real pipeline, with a scripted OpenAI-compatible model, answers through
// both APIs: the skill activated, cited rules and passages retrieved from the
// built store, the compute plugin run, a validated card emitted, and an
// answer citing a passage.
func TestServeDemoEndToEnd(t *testing.T) {
	ws := demoWorkspace(t)
	fake := llmtest.New(t)
	fake.SetFallback(brewAgent(t))
	ts := demoServer(t, map[string]string{"OPENAI_BASE_URL": fake.URL, "OPENAI_API_KEY": "test"})

	resp := post(t, ts.URL+"/api/chat", "ka", `{"message":"How do I brew green tea in a 300 ml glass?","conversation_id":"demo-1"}`)
	evs := sseEvents(t, resp.Body)
	resp.Body.Close()
	var seq []string
	results := map[string]json.RawMessage{}
	var card *runtime.Event
	var answer strings.Builder
	for i, e := range evs {
		switch e.Type {
		case runtime.EventToolCall:
			seq = append(seq, "call:"+e.Tool)
		case runtime.EventToolResult:
			if e.IsError {
				t.Fatalf("tool %s failed: %s", e.Tool, e.Result)
			}
			results[e.Tool] = e.Result
		case runtime.EventCard:
			card = &evs[i]
		case runtime.EventContent:
			answer.WriteString(e.Content)
		case runtime.EventError:
			t.Fatalf("error event: %s", e.Error)
		}
	}
	// get_rules and search_knowledge are one step's calls, run in parallel:
	// their events come in either order.
	if len(seq) == 5 && seq[1] > seq[2] {
		seq[1], seq[2] = seq[2], seq[1]
	}
	want := "call:use_skill,call:get_rules,call:search_knowledge,call:calc_brew,call:show_brew_card"
	if got := strings.Join(seq, ","); got != want {
		t.Fatalf("tool calls = %s, want %s", got, want)
	}
	if last := evs[len(evs)-1]; last.Type != runtime.EventDone || last.Reason != "stop" || last.Skill != "demo" {
		t.Fatalf("last event = %+v", last)
	}

	// get_rules: retrieved rules, each citing a chunk of the built store.
	var rules struct {
		Rules []struct {
			ID       string `json:"id"`
			Tier     string `json:"tier"`
			Evidence []struct {
				Chunk string `json:"chunk"`
			} `json:"evidence"`
		} `json:"rules"`
	}
	if err := json.Unmarshal(results["get_rules"], &rules); err != nil || len(rules.Rules) == 0 || len(rules.Rules) > 5 {
		t.Fatalf("get_rules = %s (%v)", results["get_rules"], err)
	}
	for _, r := range rules.Rules {
		if len(r.Evidence) == 0 || !strings.HasPrefix(r.Evidence[0].Chunk, "c_") || !strings.HasPrefix(r.Tier, "tier") {
			t.Errorf("rule %s: tier %q, evidence %v", r.ID, r.Tier, r.Evidence)
		}
	}
	// search_knowledge: real passages whose citation resolves to the exact
	// span of the converted file.
	var found struct {
		Skill    string    `json:"skill"`
		Passages []passage `json:"passages"`
	}
	if err := json.Unmarshal(results["search_knowledge"], &found); err != nil || found.Skill != "demo" || len(found.Passages) == 0 {
		t.Fatalf("search_knowledge = %s (%v)", results["search_knowledge"], err)
	}
	for _, p := range found.Passages {
		if p.ChunkID == "" || p.Source == "" || len(p.HeadingPath) == 0 || p.End <= p.Start {
			t.Errorf("passage without a full citation: %+v", p)
			continue
		}
		doc, err := os.ReadFile(filepath.Join(ws, filepath.FromSlash(p.Doc)))
		if err != nil {
			t.Fatalf("passage %s: %v", p.ChunkID, err)
		}
		if r := []rune(string(doc)); p.End > len(r) || string(r[p.Start:p.End]) != p.Text {
			t.Errorf("passage %s: offsets %d-%d do not give its text in %s", p.ChunkID, p.Start, p.End, p.Doc)
		}
	}
	cited := temperaturePassage(t, string(results["search_knowledge"]))
	if cited.Source != "knowledge/demo/source/green-tea.md" {
		t.Errorf("temperature passage from %s", cited.Source)
	}
	// The compute plugin ran with the corpus's figures, in the unified shape.
	var calc struct {
		Result struct {
			Grams      float64 `json:"grams"`
			WaterTempC int     `json:"water_temp_c"`
		} `json:"result"`
		Confidence float64        `json:"confidence"`
		Meta       map[string]any `json:"meta"`
	}
	if err := json.Unmarshal(results["calc_brew"], &calc); err != nil || calc.Result.Grams != 6 || calc.Result.WaterTempC != 80 || calc.Confidence != 0.9 || calc.Meta["plugin"] != "brew-calc" {
		t.Fatalf("calc_brew = %s (%v)", results["calc_brew"], err)
	}
	// The display tool emitted a card with the declared props.
	if card == nil || card.CardType != "brew_card" {
		t.Fatalf("card = %+v", card)
	}
	var props map[string]any
	if err := json.Unmarshal(card.Props, &props); err != nil || props["water_temp_c"] != 80.0 || props["tea"] != "green" || fmt.Sprint(props["citations"]) != "["+cited.ChunkID+"]" {
		t.Fatalf("card props = %s (%v)", card.Props, err)
	}
	if !strings.Contains(answer.String(), cited.ChunkID) || !strings.Contains(answer.String(), "80 °C") {
		t.Fatalf("answer does not cite the passage: %q", answer.String())
	}
	// The model saw the passages with their citations, and the skill's tools
	// only once the skill was active.
	reqs := fake.Requests()
	if len(reqs) != 5 || strings.Contains(string(reqs[0].Tools), "calc_brew") || !strings.Contains(string(reqs[1].Tools), "calc_brew") {
		t.Fatalf("%d requests; tools of the first: %s", len(reqs), reqs[0].Tools)
	}

	// The OpenAI-compatible endpoint, driven by openai-go: model vibe/demo
	// has the skill active from the start (no use_skill), not streaming.
	client := openai.NewClient(option.WithBaseURL(ts.URL+"/v1/"), option.WithAPIKey("kb"), option.WithMaxRetries(0))
	ctx := context.Background()
	before := fake.Count()
	res, err := client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{
		Model:    "vibe/demo",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Green tea for a 300 ml glass: how hot, how long?")},
	})
	if err != nil {
		t.Fatal(err)
	}
	text := res.Choices[0].Message.Content
	if !strings.Contains(text, "[card brew_card]") || !strings.Contains(text, cited.ChunkID) || res.Choices[0].FinishReason != "stop" {
		t.Fatalf("completion = %q", text)
	}
	if n := fake.Count() - before; n != 4 {
		t.Fatalf("vibe/demo took %d model requests, want 4 (no use_skill)", n)
	}
	// Streaming, model vibe: the agent activates the skill itself.
	stream := client.Chat.Completions.NewStreaming(ctx, openai.ChatCompletionNewParams{
		Model:    "vibe",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("How do I brew green tea? I have a 300 ml glass.")},
	})
	var sb strings.Builder
	chunks := 0
	for stream.Next() {
		if c := stream.Current(); len(c.Choices) > 0 {
			sb.WriteString(c.Choices[0].Delta.Content)
			chunks++
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	if s := sb.String(); !strings.Contains(s, "[card brew_card]") || !strings.Contains(s, cited.ChunkID) || chunks < 3 {
		t.Fatalf("stream (%d chunks) = %q", chunks, s)
	}

	// /api/status (the detail of /readyz) over the demo workspace: the
	// store holds the theme's documents.
	r := get(t, ts.URL+"/api/status", "ka")
	b, _ := io.ReadAll(r.Body)
	r.Body.Close()
	if r.StatusCode != 200 || !strings.Contains(string(b), `"documents":{"demo":5}`) || !strings.Contains(string(b), `"mode":"model"`) {
		t.Fatalf("readyz = %d %s", r.StatusCode, b)
	}
}

// TestServeDemoOffline: with no model configured the same workspace answers
// in the labelled retrieval-only mode, with cited rules and passages, through
// both APIs.
func TestServeDemoOffline(t *testing.T) {
	ts := demoServer(t, map[string]string{})
	resp := post(t, ts.URL+"/api/chat", "ka", `{"message":"How hot should the water be for green tea?"}`)
	evs := sseEvents(t, resp.Body)
	resp.Body.Close()
	if len(evs) != 3 || evs[0].Type != runtime.EventContent || evs[1].Type != runtime.EventCitations || evs[2].Reason != "offline" || evs[2].Skill != "demo" {
		t.Fatalf("events = %+v", evs)
	}
	// The rules and passages listed are the answer's structured citations.
	for _, c := range evs[1].Citations {
		if !strings.HasPrefix(c.ChunkID, "c_") || c.Source == "" || len(c.HeadingPath) == 0 || c.Quote == "" || !c.Cited {
			t.Errorf("citation %+v lacks its chunk, file, heading, quote or cited mark", c)
		}
	}
	text := evs[0].Content
	for _, want := range []string{runtime.OfflineLabel, "Skill: demo", "**Rules**", "**Passages**", "[c_", "knowledge/demo/source/green-tea.md", "Brewing Green Tea > Chapter"} {
		if !strings.Contains(text, want) {
			t.Errorf("offline answer lacks %q:\n%s", want, text)
		}
	}
	// The built skill's triggers match the plain question: the skill is
	// chosen by them, not as the only one there is.
	if strings.Contains(text, "no trigger matched") {
		t.Errorf("the demo's triggers do not match a question about green tea:\n%s", text)
	}
	client := openai.NewClient(option.WithBaseURL(ts.URL+"/v1/"), option.WithAPIKey("kb"), option.WithMaxRetries(0))
	res, err := client.Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{
		Model:    "vibe",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("普洱茶投茶多少？")},
	})
	if err != nil {
		t.Fatal(err)
	}
	if c := res.Choices[0].Message.Content; !strings.HasPrefix(c, runtime.OfflineLabelZH) || !strings.Contains(c, "普洱茶冲泡要略") || !strings.Contains(c, "[c_") || strings.Contains(c, "no trigger matched") {
		t.Fatalf("offline completion:\n%s", c)
	}
	r := get(t, ts.URL+"/api/status", "ka")
	b, _ := io.ReadAll(r.Body)
	r.Body.Close()
	if r.StatusCode != 200 || !strings.Contains(string(b), `"mode":"retrieval-only"`) {
		t.Fatalf("readyz = %d %s", r.StatusCode, b)
	}
}

// TestServeFlags: --insecure-dev warns (twice when the address is not
// loopback), the address comes from serve.addr (loopback by default), and
// cancelling the context shuts the server down cleanly.
func TestServeFlags(t *testing.T) {
	ws := t.TempDir()
	if err := os.CopyFS(filepath.Join(ws, "skills"), os.DirFS(filepath.Join("..", "..", "runtime", "testdata", "skills"))); err != nil {
		t.Fatal(err)
	}
	if !isLoopback(&net.TCPAddr{IP: net.ParseIP(strings.Split(defaultServeAddr(t), ":")[0])}) {
		t.Fatalf("default serve.addr %s is not loopback", defaultServeAddr(t))
	}
	tests := []struct {
		name      string
		env       map[string]string
		opts      ServeOptions
		wantWarn  []string
		notWarn   string
		wantLocal bool
	}{
		{"insecure on loopback", map[string]string{"VIBE_SERVE_ADDR": "127.0.0.1:0"}, ServeOptions{InsecureDev: true},
			[]string{"WARNING: --insecure-dev: authentication is OFF"}, "reachable from other machines", true},
		{"insecure on every interface", map[string]string{}, ServeOptions{InsecureDev: true, Addr: "0.0.0.0:0"},
			[]string{"authentication is OFF", "reachable from other machines"}, "", false},
		{"keys", map[string]string{"VIBE_SERVE_ADDR": "127.0.0.1:0", "VIBE_API_KEYS": "k:u"}, ServeOptions{},
			nil, "WARNING", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ios, _, _, errOut := iostreams.Test()
			a := &app{io: ios, getenv: func(k string) string { return tt.env[k] }, now: time.Now, workspaceDir: ws}
			addrc := make(chan net.Addr, 1)
			opts := tt.opts
			opts.IO = ios
			opts.listening = func(addr net.Addr) { addrc <- addr }
			ctx, stop := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- a.runServe(ctx, &opts) }()
			var addr net.Addr
			select {
			case addr = <-addrc:
			case err := <-done:
				t.Fatalf("serve ended: %v: %s", err, errOut.String())
			}
			if isLoopback(addr) != tt.wantLocal {
				t.Fatalf("listening on %s", addr)
			}
			port := addr.(*net.TCPAddr).Port
			r, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/readyz", port))
			if err != nil {
				t.Fatal(err)
			}
			r.Body.Close()
			if r.StatusCode != 200 {
				t.Fatalf("readyz = %d", r.StatusCode)
			}
			stop()
			if err := <-done; err != nil {
				t.Fatalf("serve = %v", err)
			}
			out := errOut.String()
			for _, w := range tt.wantWarn {
				if !strings.Contains(out, w) {
					t.Errorf("stderr lacks %q:\n%s", w, out)
				}
			}
			if tt.notWarn != "" && strings.Contains(out, tt.notWarn) {
				t.Errorf("stderr has %q:\n%s", tt.notWarn, out)
			}
			if !strings.Contains(out, "shutting down") || !strings.Contains(out, "stopped") {
				t.Errorf("no clean shutdown:\n%s", out)
			}
		})
	}
}

func defaultServeAddr(t *testing.T) string {
	code, out, errOut := runVibe(t, nil, "--workspace", t.TempDir(), "config")
	if code != 0 {
		t.Fatalf("vibe config: %s", errOut)
	}
	for _, line := range strings.Split(out, "\n") {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), ":"); ok && strings.TrimSpace(k) == "addr" {
			return strings.Trim(strings.TrimSpace(v), `"'`)
		}
	}
	t.Fatalf("no addr in vibe config:\n%s", out)
	return ""
}

// TestBuildScriptProgress runs scripts/build.sh (what make build runs) with
// a stand-in for go that compiles slowly: it says how long a build usually
// takes, prints a progress line while go build is silent, and names what it
// built; a failing build exits non-zero with go's errors.
func TestBuildScriptProgress(t *testing.T) {
	dir := t.TempDir()
	fakeGo := filepath.Join(dir, "go")
	os.WriteFile(fakeGo, []byte(`#!/bin/sh
case "$1" in
list) printf 'fmt\nexample.org/a\nexample.org/b\n' ;;
build)
  [ -n "$FAIL" ] && { echo "example.org/a"; echo "a.go:1: syntax error" >&2; exit 1; }
  echo "example.org/a" >&2; sleep 2; echo "example.org/b" >&2; sleep 1; : > "$4" ;;
esac
`), 0o755)
	out := filepath.Join(dir, "vibe")
	run := func(env ...string) (string, error) {
		cmd := exec.Command("bash", filepath.Join("scripts", "build.sh"), out)
		cmd.Dir = demoRepo
		cmd.Env = append(append(os.Environ(), "GO="+fakeGo, "BUILD_PROGRESS_EVERY=1"), env...)
		b, err := cmd.CombinedOutput()
		return string(b), err
	}
	text, err := run()
	if err != nil {
		t.Fatalf("build.sh: %v\n%s", err, text)
	}
	for _, want := range []string{"up to 3 packages", "2 to 4 minutes on an idle 2-core machine", " of at most 3 packages compiled (last: example.org/", "built " + out} {
		if !strings.Contains(text, want) {
			t.Errorf("build.sh output lacks %q:\n%s", want, text)
		}
	}
	if text, err := run("FAIL=1"); err == nil || !strings.Contains(text, "a.go:1: syntax error") {
		t.Errorf("a failing build: %v\n%s", err, text)
	}
}

// TestDemoScript runs scripts/demo.sh (what `make demo` runs) with a vibe
// binary built from this tree: it ends with the offline chat finding the
// skill by its triggers, then the check summary as the very last line.
func TestDemoScript(t *testing.T) {
	// The vibe the crash suite runs (built once, without -race);
	// scripts/build.sh, which make build runs, is TestBuildScriptProgress's.
	bin := unracedVibe(t)
	gobin := filepath.Join(goruntime.GOROOT(), "bin", "go")
	ws := filepath.Join(t.TempDir(), "demo")
	cmd := exec.Command("bash", filepath.Join("scripts", "demo.sh"), bin, ws)
	cmd.Dir = demoRepo
	cmd.Env = append(os.Environ(), "GO="+gobin)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("demo.sh: %v\n%s", err, out)
	}
	// The demo ends with the check summary, then the eval's table and
	// summary.
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	last := lines[len(lines)-1]
	if !strings.HasPrefix(last, "eval demo: pass (exit 0): every gated measure meets its threshold; 21 of 21 cases") {
		t.Errorf("the demo does not end with the eval summary; last line %q", last)
	}
	checked := false
	for _, l := range lines {
		checked = checked || strings.HasPrefix(l, "check demo: 0 errors,") && strings.Contains(l, "rules, citing")
	}
	if !checked {
		t.Errorf("the demo does not print the check summary:\n%s", out)
	}
	text := string(out)
	// Nothing a newcomer cannot act on: the demo's small corpus under the
	// design's tier targets is a note, and the build warns about nothing.
	for _, l := range lines {
		if strings.Contains(l, " warning VIBE") || strings.HasPrefix(l, "warning") || strings.HasPrefix(l, "WARNING") {
			t.Errorf("the demo prints a warning: %s", l)
		}
	}
	// The rebuild step shows the lines it checks and its verdict.
	for _, want := range []string{"    convert: 0 converted, 5 unchanged", "    ingest demo: 0 added, 0 updated, 5 unchanged", "    unchanged: skills/demo/knowledge", "    ok: nothing converted, embedded or extracted again"} {
		if !strings.Contains(text, want) {
			t.Errorf("the rebuild step does not show %q:\n%s", want, text)
		}
	}
	chat := strings.Index(text, "==> an offline chat")
	check := strings.Index(text, "==> check: vibe check demo")
	if chat < 0 || check < chat {
		t.Errorf("the check does not come after the chat:\n%s", text)
	}
	if !strings.Contains(text[chat:check], "Skill: demo") || strings.Contains(text, "no trigger matched") {
		t.Errorf("the offline chat did not pick the demo skill by its triggers:\n%s", text[chat:])
	}
}

// TestServeStopsWhenTheStoreCannotOpen: a store that cannot be opened (a
// connection string carrying a pool option pgx rejects; a SQLite path under
// a file) stops `vibe serve` with a non-zero exit naming the setting,
// instead of serving chat from a private in-memory memory.
func TestServeStopsWhenTheStoreCannotOpen(t *testing.T) {
	for _, tt := range []struct {
		name    string
		env     map[string]string
		yaml    string
		setting string
	}{
		{"postgres", map[string]string{"DATABASE_URL": "postgres://u:secret@127.0.0.1:1/db?pool_max_conns=lots"}, "", "DATABASE_URL"},
		{"sqlite", map[string]string{}, "store:\n  path: afile/vibe.db\n", "store.path"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ws := t.TempDir()
			if err := os.CopyFS(filepath.Join(ws, "skills"), os.DirFS(filepath.Join("..", "..", "runtime", "testdata", "skills"))); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(ws, "afile"), []byte("x"), 0o644); err != nil {
				t.Fatal(err)
			}
			if tt.yaml != "" {
				if err := os.WriteFile(filepath.Join(ws, "vibe.yaml"), []byte(tt.yaml), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			tt.env["VIBE_API_KEYS"] = "k:u"
			tt.env["VIBE_SERVE_ADDR"] = "127.0.0.1:0"
			code, _, errOut := runVibe(t, tt.env, "--workspace", ws, "serve")
			if code == 0 || !strings.Contains(errOut, "cannot be opened") || !strings.Contains(errOut, tt.setting) || strings.Contains(errOut, "listening") {
				t.Fatalf("exit %d:\n%s", code, errOut)
			}
			if strings.Contains(errOut, "secret") {
				t.Fatalf("the password is printed:\n%s", errOut)
			}
		})
	}
}

// TestServeSecuritySettings: vibe.yaml's serve.trusted_proxies and
// serve.command_plugins reach the server (issue 26): behind the trusted
// proxy (the test client, 127.0.0.1) each forwarded client has its own
// failed-login count and a valid key is never refused; a skill left out of
// command_plugins has its command plugin refused, naming the setting.
func TestServeSecuritySettings(t *testing.T) {
	ws := t.TempDir()
	if err := os.CopyFS(filepath.Join(ws, "skills"), os.DirFS(filepath.Join("..", "..", "runtime", "testdata", "skills"))); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name, config, wantPlugin string
	}{
		{"plugins of every skill", "serve:\n  trusted_proxies: [127.0.0.1]\n", "failed (exit status 3; its stderr is in the server log"},
		{"plugins of another skill only", "serve:\n  trusted_proxies: [127.0.0.1]\n  command_plugins: [tarot]\n", "refused by this server (serve.command_plugins)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if err := os.WriteFile(filepath.Join(ws, "vibe.yaml"), []byte(tt.config), 0o644); err != nil {
				t.Fatal(err)
			}
			env := map[string]string{"VIBE_SERVE_ADDR": "127.0.0.1:0", "VIBE_API_KEYS": "ka:alice"}
			ios, _, _, errOut := iostreams.Test()
			a := &app{io: ios, getenv: func(k string) string { return env[k] }, now: time.Now, workspaceDir: ws}
			addrc := make(chan net.Addr, 1)
			opts := ServeOptions{IO: ios, listening: func(addr net.Addr) { addrc <- addr }}
			ctx, stop := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- a.runServe(ctx, &opts) }()
			var base string
			select {
			case addr := <-addrc:
				base = fmt.Sprintf("http://127.0.0.1:%d", addr.(*net.TCPAddr).Port)
			case err := <-done:
				t.Fatalf("serve ended: %v: %s", err, errOut.String())
			}
			defer func() {
				stop()
				if err := <-done; err != nil {
					t.Errorf("serve = %v", err)
				}
			}()
			call := func(key, xff string) int {
				t.Helper()
				req, _ := http.NewRequest("GET", base+"/api/skills", nil)
				req.Header.Set("Authorization", "Bearer "+key)
				req.Header.Set("X-Forwarded-For", xff)
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				return resp.StatusCode
			}
			for i := range 20 {
				if code := call("wrong", "203.0.113.9"); code != 401 {
					t.Fatalf("wrong key %d = %d", i, code)
				}
			}
			if code := call("wrong", "203.0.113.9"); code != 429 {
				t.Errorf("21st wrong key from one client = %d, want 429", code)
			}
			if code := call("wrong", "198.51.100.7"); code != 401 {
				t.Errorf("another client behind the proxy = %d, want 401 (its own count)", code)
			}
			if code := call("ka", "203.0.113.9"); code != 200 {
				t.Errorf("a valid key from the locked-out client = %d, want 200", code)
			}
			resp := post(t, base+"/api/tools/execute", "ka", `{"skill":"bazi","tool":"broken_tool","args":{}}`)
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 422 || !strings.Contains(string(b), tt.wantPlugin) || strings.Contains(string(b), "boom") {
				t.Errorf("broken_tool = %d %s, want %q", resp.StatusCode, b, tt.wantPlugin)
			}
		})
	}
}

// TestCommandsRefuseANewerStore: a store a newer vibe migrated is refused
// by serve and search alike, naming the file, the versions and the fix
// (upgrade vibe), not a setting.
func TestCommandsRefuseANewerStore(t *testing.T) {
	ws := t.TempDir()
	if err := os.CopyFS(filepath.Join(ws, "skills"), os.DirFS(filepath.Join("..", "..", "runtime", "testdata", "skills"))); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(ws, ".vibe", "vibe.db")
	st, err := sqlite.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`INSERT INTO schema_migrations(version, name) VALUES (999, 'from a newer vibe')`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	env := map[string]string{"VIBE_API_KEYS": "k:u", "VIBE_SERVE_ADDR": "127.0.0.1:0"}
	for _, args := range [][]string{{"serve"}, {"search", "t", "q"}} {
		code, _, errOut := runVibe(t, env, append([]string{"--workspace", ws}, args...)...)
		if code == 0 || !strings.Contains(errOut, path) || !strings.Contains(errOut, "schema version 999") || !strings.Contains(errOut, "upgrade vibe") ||
			strings.Contains(errOut, "fix store.path") || strings.Contains(errOut, "listening") {
			t.Fatalf("vibe %v: exit %d:\n%s", args, code, errOut)
		}
	}
}
