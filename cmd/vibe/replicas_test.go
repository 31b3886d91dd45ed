package main

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/vibelife/vibe/llm"
	"github.com/vibelife/vibe/llm/llmtest"
)

// replica is one `vibe serve` process of TestTwoReplicasOnePostgres.
type replica struct {
	cmd     *exec.Cmd
	url     string
	metrics string // the metrics listener's /metrics URL
	stderr  *syncBuffer
}

func startReplica(t *testing.T, ws string, env map[string]string) *replica {
	t.Helper()
	cmd := childEnv(vibeChild(t, "--workspace", ws, "serve"), env)
	pipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r := &replica{cmd: cmd, stderr: &syncBuffer{}}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	// The API listens first, then the metrics listener (serve.metrics_addr).
	addr := make(chan string, 2)
	go func() {
		sc := bufio.NewScanner(pipe)
		for sc.Scan() {
			line := sc.Text()
			r.stderr.add(line)
			if rest, ok := strings.CutPrefix(line, "vibe serve: listening on "); ok {
				addr <- strings.Fields(rest)[0]
			}
			if rest, ok := strings.CutPrefix(line, "vibe serve: metrics on "); ok {
				addr <- strings.Fields(rest)[0]
			}
		}
		close(addr)
	}()
	for _, u := range []*string{&r.url, &r.metrics} {
		select {
		case got, ok := <-addr:
			if !ok {
				t.Fatalf("vibe serve ended:\n%s", r.stderr)
			}
			*u = got
		case <-time.After(60 * time.Second):
			t.Fatalf("vibe serve did not listen (API and metrics):\n%s", r.stderr)
		}
	}
	if !strings.HasSuffix(r.metrics, "/metrics") {
		t.Fatalf("vibe serve: metrics line names %q, API %q", r.metrics, r.url)
	}
	return r
}

// scrapeMetrics reads a replica's /metrics in the Prometheus text format and
// returns each counter and gauge series as name{label=value,...} (labels
// sorted) to its value.
func scrapeMetrics(t *testing.T, url string) map[string]float64 {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s = %d", url, resp.StatusCode)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parse %s: %v", url, err)
	}
	got := map[string]float64{}
	for name, f := range fams {
		for _, m := range f.GetMetric() {
			var ls []string
			for _, l := range m.GetLabel() {
				ls = append(ls, l.GetName()+"="+l.GetValue())
			}
			sort.Strings(ls)
			key := name + "{" + strings.Join(ls, ",") + "}"
			switch f.GetType() {
			case dto.MetricType_COUNTER:
				got[key] = m.GetCounter().GetValue()
			case dto.MetricType_GAUGE:
				got[key] = m.GetGauge().GetValue()
			}
		}
	}
	return got
}

// vibeSeries keeps the vibe_ series whose name starts with one of prefixes.
func vibeSeries(all map[string]float64, prefixes ...string) map[string]float64 {
	out := map[string]float64{}
	for k, v := range all {
		for _, p := range prefixes {
			if strings.HasPrefix(k, p+"{") {
				out[k] = v
			}
		}
	}
	return out
}

// checkSeries compares got (the series of the checked families) with want
// exactly: a wrong value, a missing series and an unexpected non-zero one
// are errors.
func checkSeries(t *testing.T, who string, got, want map[string]float64) {
	t.Helper()
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %s = %v, want %v", who, k, got[k], v)
		}
	}
	for k, v := range got {
		if _, ok := want[k]; !ok && v != 0 {
			t.Errorf("%s: unexpected %s = %v", who, k, v)
		}
	}
}

// chat posts one message of conversation conv and returns the SSE events'
// types and the content; with until set, it returns (leaving the stream
// open) as soon as an event of that type arrives.
func chat(t *testing.T, base, conv, msg, until string) ([]string, string, io.Closer) {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"message": msg, "conversation_id": conv})
	req, _ := http.NewRequest("POST", base+"/api/chat", strings.NewReader(string(body)))
	req.Header.Set("Authorization", "Bearer ka")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		t.Fatalf("chat %q on %s = %d %s", msg, base, resp.StatusCode, b)
	}
	var types []string
	var content strings.Builder
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var e struct {
			Type    string          `json:"type"`
			Content string          `json:"content"`
			Result  json.RawMessage `json:"result"`
		}
		if json.Unmarshal([]byte(data), &e) != nil {
			continue
		}
		types = append(types, e.Type)
		content.WriteString(e.Content)
		if e.Type == until {
			content.Write(e.Result)
			return types, content.String(), resp.Body
		}
	}
	resp.Body.Close()
	return types, content.String(), io.NopCloser(nil)
}

func replicaGet(t *testing.T, url string, v any) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	req.Header.Set("Authorization", "Bearer ka")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("GET %s = %d %s", url, resp.StatusCode, b)
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatal(err)
	}
}

// TestTwoReplicasOnePostgres: two `vibe serve` processes on the test
// PostgreSQL are stateless peers. A conversation alternates between them;
// replica A is killed (SIGKILL) mid-stream, after the turn's save_skill_data
// ran and while the answer streams; the client continues the conversation on
// B. History, profile and skill data are whole: every finished turn is there
// in order, the killed turn's message and its write are in the history as
// in the profile, and B's next turn sees all of it. Each replica's /metrics
// (its own listener) holds exactly the turns, tool calls and tokens it
// served; see the metrics part at the end for what the killed one counted.
func TestTwoReplicasOnePostgres(t *testing.T) {
	if testing.Short() {
		t.Skip("starts two vibe serve processes; skipped with -short")
	}
	url := testPostgresURL(t)
	ws := t.TempDir()
	if err := os.CopyFS(filepath.Join(ws, "skills"), os.DirFS(filepath.Join("..", "..", "runtime", "testdata", "skills"))); err != nil {
		t.Fatal(err)
	}
	model := llmtest.New(t)
	// Every model answer reports the same usage, so the token series count
	// the model calls each replica finished.
	// The usage the fake reports is above what vibe counts itself for these
	// short turns, so the metrics carry the endpoint's figures (vibe keeps
	// the larger of the two: TestUsageNotLowWhenEndpointEstimates).
	const inTok, outTok = 100000, 1000
	script := func(r llmtest.Request) llmtest.Reply {
		last := r.Messages[len(r.Messages)-1]
		user := r.LastUserMessage()
		afterTool := last.Role == llm.RoleTool
		switch {
		case user == "save two" && !afterTool:
			return llmtest.ToolCall("save_skill_data", `{"skill":"bazi","data":{"k2":2}}`)
		case user == "save three" && !afterTool:
			return llmtest.ToolCall("save_skill_data", `{"skill":"bazi","data":{"k3":3}}`)
		case user == "save three":
			return llmtest.Slow(5*time.Minute, llmtest.Text("never sent"))
		case user == "save four" && !afterTool:
			return llmtest.ToolCall("save_skill_data", `{"skill":"bazi","data":{"k4":4}}`)
		}
		return llmtest.Text("answer to " + user)
	}
	model.SetFallback(func(r llmtest.Request) llmtest.Reply {
		rep := script(r)
		rep.PromptTokens, rep.CompletionTokens = inTok, outTok
		return rep
	})
	env := map[string]string{"DATABASE_URL": url, "OPENAI_BASE_URL": model.URL, "OPENAI_API_KEY": "test",
		"VIBE_API_KEYS": "ka:alice", "VIBE_SERVE_ADDR": "127.0.0.1:0", "VIBE_SERVE_METRICS_ADDR": "127.0.0.1:0"}
	a, b := startReplica(t, ws, env), startReplica(t, ws, env)
	const conv = "replicas-1"
	turns, toolCalls := 0, 0
	for i, step := range []struct {
		on  *replica
		msg string
	}{{a, "hello"}, {b, "save two"}, {a, "how are you"}} {
		types, content, _ := chat(t, step.on.url, conv, step.msg, "")
		if types[len(types)-1] != "done" {
			t.Fatalf("turn %d: events %v %q", i+1, types, content)
		}
		turns++
	}
	toolCalls++
	// Turn 4 on A: save_skill_data runs, then A dies while the answer streams.
	types, _, body := chat(t, a.url, conv, "save three", "tool_result")
	if types[len(types)-1] != "tool_result" {
		t.Fatalf("killed turn: events %v", types)
	}
	// Kill only once A asked the model for the answer (the slow reply), so
	// the turn is mid-stream and the model's request count is known.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		n := 0
		for _, r := range model.Requests() {
			if r.LastUserMessage() == "save three" {
				n++
			}
		}
		if n == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("A never asked the model for the killed turn's answer (%d requests)", n)
		}
	}
	// A's counters die with it: scrape them now, with the turn in flight.
	// A finished "hello" and "how are you" (one model call each) and, of
	// the killed turn, the save_skill_data call and the model call asking
	// for it; the model call streaming the answer has no usage yet and the
	// turn has not ended, so neither is counted anywhere.
	aSeen := scrapeMetrics(t, a.metrics)
	if err := a.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = a.cmd.Wait()
	body.Close()
	toolCalls++
	// The client retries on B, and the conversation goes on.
	for _, msg := range []string{"save four", "after the crash"} {
		types, content, _ := chat(t, b.url, conv, msg, "")
		if types[len(types)-1] != "done" || !strings.Contains(content, "answer to "+msg) {
			t.Fatalf("%q on B: events %v %q", msg, types, content)
		}
		turns++
	}
	toolCalls++

	var hist struct {
		Messages []struct{ Role, Content string }
	}
	replicaGet(t, b.url+"/api/conversations/"+conv, &hist)
	var got []string
	for _, m := range hist.Messages {
		got = append(got, m.Role+":"+m.Content)
	}
	want := []string{"user:hello", "assistant:answer to hello", "user:save two", "assistant:answer to save two",
		"user:how are you", "assistant:answer to how are you", "user:save three",
		"user:save four", "assistant:answer to save four", "user:after the crash", "assistant:answer to after the crash"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("history on B:\n got %v\nwant %v", got, want)
	}
	var resp struct {
		Profile map[string]any `json:"profile"`
	}
	replicaGet(t, b.url+"/api/profile", &resp)
	prof := resp.Profile
	sd, _ := prof["skill_data"].(map[string]any)
	bazi, _ := sd["bazi"].(map[string]any)
	meta, _ := bazi["_meta"].(map[string]any)
	if bazi["k2"] != 2.0 || bazi["k3"] != 3.0 || bazi["k4"] != 4.0 || meta["version"] != 3.0 {
		t.Errorf("skill data on B = %v", prof)
	}
	// B's last turn saw the history written by both replicas, the killed
	// turn's message included.
	var lastReq llmtest.Request
	for _, r := range model.Requests() {
		if r.LastUserMessage() == "after the crash" {
			lastReq = r
		}
	}
	var prompt []string
	for _, m := range lastReq.Messages[1:] {
		prompt = append(prompt, m.Role+":"+m.Content)
	}
	for _, w := range []string{"user:hello", "assistant:answer to save two", "user:save three", "assistant:answer to save four"} {
		if !strings.Contains(strings.Join(prompt, "|"), w) {
			t.Errorf("B's prompt lacks %q: %v", w, prompt)
		}
	}

	// Metrics. Each replica counts what it served in a registry of its own;
	// nothing is shared through PostgreSQL, so the fleet's totals are the
	// sum over replicas. A was scraped just before SIGKILL (above); what it
	// did after that scrape is nothing the test can see, and nothing
	// happened: it was blocked in the 5-minute model answer. B is scraped
	// now, after "save two", "save four" and "after the crash".
	//
	// Model calls finished: A 3 (hello; how are you; save three's tool
	// step), B 5 (two steps each for save two and save four, one for after
	// the crash); the killed answer is the fake's 9th request.
	const aCalls, bCalls = 3, 5
	if n := model.Count(); n != aCalls+bCalls+1 {
		t.Errorf("the model served %d requests, want %d", n, aCalls+bCalls+1)
	}
	families := []string{"vibe_turns_total", "vibe_tool_calls_total", "vibe_model_tokens_total", "vibe_model_calls_total", "vibe_active_streams"}
	aGot, bGot := vibeSeries(aSeen, families...), vibeSeries(scrapeMetrics(t, b.metrics), families...)
	checkSeries(t, "replica A before the kill", aGot, map[string]float64{
		"vibe_turns_total{outcome=stop}":                         2,
		"vibe_tool_calls_total{outcome=ok,tool=save_skill_data}": 1,
		"vibe_model_calls_total{outcome=ok,stage=serve}":         aCalls,
		"vibe_model_tokens_total{direction=in,stage=serve}":      aCalls * inTok,
		"vibe_model_tokens_total{direction=out,stage=serve}":     aCalls * outTok,
		"vibe_active_streams{}":                                  1, // the killed turn
	})
	checkSeries(t, "replica B", bGot, map[string]float64{
		"vibe_turns_total{outcome=stop}":                         3,
		"vibe_tool_calls_total{outcome=ok,tool=save_skill_data}": 2,
		"vibe_model_calls_total{outcome=ok,stage=serve}":         bCalls,
		"vibe_model_tokens_total{direction=in,stage=serve}":      bCalls * inTok,
		"vibe_model_tokens_total{direction=out,stage=serve}":     bCalls * outTok,
		"vibe_active_streams{}":                                  0,
	})
	// Summed over the replicas: every turn that ended (the killed one never
	// did, on any replica) and every tool call, the killed turn's included.
	sum := func(k string) float64 { return aGot[k] + bGot[k] }
	if got := sum("vibe_turns_total{outcome=stop}"); got != float64(turns) {
		t.Errorf("turns over the replicas = %v, want %d", got, turns)
	}
	if got := sum("vibe_tool_calls_total{outcome=ok,tool=save_skill_data}"); got != float64(toolCalls) {
		t.Errorf("save_skill_data calls over the replicas = %v, want %d", got, toolCalls)
	}
	if got := sum("vibe_model_tokens_total{direction=in,stage=serve}") + sum("vibe_model_tokens_total{direction=out,stage=serve}"); got != (aCalls+bCalls)*(inTok+outTok) {
		t.Errorf("tokens over the replicas = %v, want %d", got, (aCalls+bCalls)*(inTok+outTok))
	}
}
