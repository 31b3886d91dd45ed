// Command serveload is the load half of bench/serve-replicas.sh: a fake
// OpenAI-compatible model, and a load generator that keeps N streaming
// conversations going against one or more vibe serve replicas.
//
//	serveload model -addr 127.0.0.1:0 -addr-file F
//	serveload load -targets http://A,http://B -streams 200 -duration 30s -skill demo
//
// The model answers every chat request as a two-step turn: when the last
// message is the user's, it asks for get_rules and search_knowledge; once the
// tool results are in, it streams a short answer citing nothing. Responses
// stream in the OpenAI chunk format with a usage chunk.
//
// The load generator runs -streams clients at once for -duration; each keeps
// its own conversation and sends every turn to the next replica in turn, so
// every conversation moves between replicas at every turn (the state must
// come from the shared store). A turn fails on an HTTP error, an error event,
// a tool error or a stream without its done event. It prints the turns, the
// failures (with the first), the turns a second and the p50/p90/p99/max of a
// turn as one JSON object, and exits 1 when any turn failed.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: serveload model|load [flags]")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "model":
		err = runModel(os.Args[2:])
	case "load":
		err = runLoad(os.Args[2:])
	default:
		err = fmt.Errorf("unknown command %q: use model or load", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "serveload:", err)
		os.Exit(1)
	}
}

func runModel(args []string) error {
	fs := flag.NewFlagSet("model", flag.ExitOnError)
	addr := fs.String("addr", "127.0.0.1:0", "listen address")
	addrFile := fs.String("addr-file", "", "write the address listened on to this file")
	_ = fs.Parse(args)
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	if *addrFile != "" {
		if err := os.WriteFile(*addrFile, []byte(ln.Addr().String()), 0o644); err != nil {
			return err
		}
	}
	fmt.Fprintf(os.Stderr, "serveload model: http://%s/v1\n", ln.Addr())
	return http.Serve(ln, http.HandlerFunc(fakeModel))
}

// fakeModel answers /v1/chat/completions (streaming) as described above.
func fakeModel(w http.ResponseWriter, r *http.Request) {
	if !strings.HasSuffix(r.URL.Path, "/chat/completions") {
		http.Error(w, "only /v1/chat/completions", http.StatusNotFound)
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	var req struct {
		Model    string `json:"model"`
		Stream   bool   `json:"stream"`
		Messages []struct {
			Role string `json:"role"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &req); err != nil || !req.Stream || len(req.Messages) == 0 {
		http.Error(w, "want a streaming chat request", http.StatusBadRequest)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	fl, _ := w.(http.Flusher)
	send := func(v any) {
		b, _ := json.Marshal(v)
		fmt.Fprintf(w, "data: %s\n\n", b)
		if fl != nil {
			fl.Flush()
		}
	}
	chunk := func(delta map[string]any, finish any) map[string]any {
		return map[string]any{"id": "chatcmpl-load", "object": "chat.completion.chunk", "created": 1700000000, "model": req.Model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}}
	}
	send(chunk(map[string]any{"role": "assistant", "content": ""}, nil))
	finish, completion := "stop", 0
	if req.Messages[len(req.Messages)-1].Role == "user" {
		finish, completion = "tool_calls", 24
		send(chunk(map[string]any{"tool_calls": []any{
			map[string]any{"index": 0, "id": "call_1", "type": "function", "function": map[string]any{"name": "get_rules", "arguments": `{"question":"water temperature for green tea"}`}},
			map[string]any{"index": 1, "id": "call_2", "type": "function", "function": map[string]any{"name": "search_knowledge", "arguments": `{"query":"green tea water temperature"}`}},
		}}, nil))
	} else {
		for _, p := range []string{"Use water ", "at about ", "80 °C for ", "green tea."} {
			send(chunk(map[string]any{"content": p}, nil))
			completion += 3
		}
	}
	send(chunk(map[string]any{}, finish))
	prompt := len(body) / 4
	send(map[string]any{"id": "chatcmpl-load", "object": "chat.completion.chunk", "created": 1700000000, "model": req.Model, "choices": []any{},
		"usage": map[string]any{"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}})
	fmt.Fprint(w, "data: [DONE]\n\n")
	if fl != nil {
		fl.Flush()
	}
}

type event struct {
	Type    string `json:"type"`
	Tool    string `json:"tool"`
	IsError bool   `json:"is_error"`
	Error   string `json:"error"`
}

func runLoad(args []string) error {
	fs := flag.NewFlagSet("load", flag.ExitOnError)
	targets := fs.String("targets", "", "comma-separated base URLs of the replicas")
	streams := fs.Int("streams", 200, "concurrent conversations")
	duration := fs.Duration("duration", 30*time.Second, "how long to keep them going")
	skill := fs.String("skill", "demo", "skill of every turn")
	_ = fs.Parse(args)
	urls := strings.Split(*targets, ",")
	if *targets == "" || len(urls) == 0 {
		return errors.New("-targets: give the replicas' base URLs")
	}
	tr := &http.Transport{MaxIdleConnsPerHost: *streams, MaxConnsPerHost: *streams}
	cl := &http.Client{Transport: tr, Timeout: 2 * time.Minute}
	ctx, cancel := context.WithTimeout(context.Background(), *duration)
	defer cancel()
	run := fmt.Sprint(time.Now().UnixNano())

	var (
		failed   atomic.Int64
		firstErr atomic.Value
		mu       sync.Mutex
		all      []time.Duration
		perHost  = make([]int, len(urls))
		wg       sync.WaitGroup
	)
	start := time.Now()
	for c := 0; c < *streams; c++ {
		wg.Add(1)
		go func(c int) {
			defer wg.Done()
			conv := fmt.Sprintf("load-%s-%d", run, c)
			var ds []time.Duration
			hosts := make([]int, len(urls))
			for i := 0; ctx.Err() == nil; i++ {
				h := (c + i) % len(urls)
				t0 := time.Now()
				err := turn(cl, urls[h], conv, *skill, i)
				if err != nil {
					failed.Add(1)
					firstErr.CompareAndSwap(nil, fmt.Errorf("%s turn %d on %s: %w", conv, i, urls[h], err))
					continue
				}
				ds = append(ds, time.Since(t0))
				hosts[h]++
			}
			mu.Lock()
			all = append(all, ds...)
			for h, n := range hosts {
				perHost[h] += n
			}
			mu.Unlock()
		}(c)
	}
	wg.Wait()
	elapsed := time.Since(start)
	slices.Sort(all)
	pct := func(q float64) float64 {
		if len(all) == 0 {
			return 0
		}
		return float64(all[int(q*float64(len(all)-1))].Microseconds()) / 1000
	}
	out := map[string]any{
		"streams": *streams, "duration_s": elapsed.Seconds(), "turns": len(all), "errors": failed.Load(),
		"turns_per_s": float64(len(all)) / elapsed.Seconds(), "turns_per_replica": perHost,
		"p50_ms": pct(0.50), "p90_ms": pct(0.90), "p99_ms": pct(0.99), "max_ms": pct(1),
	}
	if e := firstErr.Load(); e != nil {
		out["first_error"] = e.(error).Error()
	}
	b, _ := json.MarshalIndent(out, "", "  ")
	fmt.Println(string(b))
	if failed.Load() > 0 {
		return fmt.Errorf("%d turns failed", failed.Load())
	}
	return nil
}

// turn sends one chat turn and reads its stream to the end. The turn is not
// cut by the run's deadline: a turn started is finished.
func turn(cl *http.Client, base, conv, skill string, i int) error {
	body := fmt.Sprintf(`{"message":"How hot should the water be for green tea? (%d)","conversation_id":%q,"skill":%q}`, i, conv, skill)
	resp, err := cl.Post(base+"/api/chat", "application/json", strings.NewReader(body))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return fmt.Errorf("HTTP %d: %s", resp.StatusCode, b)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	var last event
	for sc.Scan() {
		d, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var e event
		if err := json.Unmarshal([]byte(d), &e); err != nil {
			return fmt.Errorf("bad event %q: %v", d, err)
		}
		if e.Type == "error" || e.IsError {
			return fmt.Errorf("%s event: %s %s", e.Type, e.Tool, e.Error)
		}
		last = e
	}
	if err := sc.Err(); err != nil {
		return err
	}
	if last.Type != "done" {
		return fmt.Errorf("stream ended without done (last event %q)", last.Type)
	}
	return nil
}
