package main

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vibelife/vibe/llm"
	"github.com/vibelife/vibe/llm/llmtest"
)

// replicaMetricsCheck, when set (by the /metrics work), is called at the end
// of TestTwoReplicasOnePostgres with the base URLs of the replicas still
// running and what the test did, to assert the turn, tool and token series.
var replicaMetricsCheck func(t *testing.T, replicas []string, turns, toolCalls int)

// replica is one `vibe serve` process of TestTwoReplicasOnePostgres.
type replica struct {
	cmd    *exec.Cmd
	url    string
	stderr *syncBuffer
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
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pipe)
		for sc.Scan() {
			line := sc.Text()
			r.stderr.add(line)
			if rest, ok := strings.CutPrefix(line, "vibe serve: listening on "); ok {
				addr <- strings.Fields(rest)[0]
			}
		}
		close(addr)
	}()
	select {
	case u, ok := <-addr:
		if !ok {
			t.Fatalf("vibe serve ended:\n%s", r.stderr)
		}
		r.url = u
	case <-time.After(60 * time.Second):
		t.Fatalf("vibe serve did not listen:\n%s", r.stderr)
	}
	return r
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
// in the profile, and B's next turn sees all of it.
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
	model.SetFallback(func(r llmtest.Request) llmtest.Reply {
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
	})
	env := map[string]string{"DATABASE_URL": url, "OPENAI_BASE_URL": model.URL, "OPENAI_API_KEY": "test",
		"VIBE_API_KEYS": "ka:alice", "VIBE_SERVE_ADDR": "127.0.0.1:0"}
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
	if replicaMetricsCheck != nil {
		replicaMetricsCheck(t, []string{b.url}, turns, toolCalls)
	}
}
