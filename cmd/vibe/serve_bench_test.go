package main

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/vibelife/vibe/internal/iostreams"
	"github.com/vibelife/vibe/internal/latency"
	"github.com/vibelife/vibe/llm"
	"github.com/vibelife/vibe/runtime"
)

// instantBrewModel answers instantly with the steps of a demo turn: rules
// and passages in one step, the brew card in the next, then the answer.
type instantBrewModel struct{}

func (instantBrewModel) Stream(ctx context.Context, req llm.Request, fn func(llm.Delta) error) (llm.Response, error) {
	n := 0
	for i := len(req.Messages) - 1; i >= 0 && req.Messages[i].Role != llm.RoleUser; i-- {
		if req.Messages[i].Role == llm.RoleAssistant {
			n++
		}
	}
	switch n {
	case 0:
		return llm.Response{ToolCalls: []llm.ToolCall{
			{ID: "1", Name: "get_rules", Arguments: `{"question":"water temperature for green tea"}`},
			{ID: "2", Name: "search_knowledge", Arguments: `{"query":"green tea water temperature"}`},
		}}, nil
	case 1:
		return llm.Response{ToolCalls: []llm.ToolCall{{ID: "3", Name: "show_brew_card", Arguments: `{"tea":"green","water_temp_c":80,"steeps_s":[120]}`}}}, nil
	}
	for _, piece := range []string{"Use water at ", "80 °C ", "[c_x]."} {
		if err := fn(llm.Delta{Content: piece}); err != nil {
			return llm.Response{}, err
		}
	}
	return llm.Response{Content: "Use water at 80 °C [c_x].", FinishReason: "stop"}, nil
}

// BenchmarkServeTurnDemo is the runtime's own work per turn over the built
// demo workspace, wired as vibe serve wires it (the embedded store for
// search and memory, the local embedder), with a model that answers
// instantly: three prompt assemblies, get_rules, a hybrid search of the
// store, a card, and the persistence of the turn. Target: p50 under 5 ms.
func BenchmarkServeTurnDemo(b *testing.B) {
	ws := demoWorkspace(b)
	ios, _, _, errOut := iostreams.Test()
	a := &app{io: ios, getenv: func(string) string { return "" }, now: time.Now, workspaceDir: ws, chatModel: instantBrewModel{}}
	ag, closer, err := a.newAgent(context.Background())
	if err != nil {
		b.Fatalf("%v: %s", err, errOut.String())
	}
	defer closer()
	user := fmt.Sprintf("bench-%d", time.Now().UnixNano()) // the workspace is shared: keep to our own rows
	rec := latency.Start()
	for i := 0; b.Loop(); i++ {
		err := rec.Time(func() error {
			_, err := ag.Turn(context.Background(), runtime.TurnRequest{UserID: user, ConversationID: fmt.Sprint(user, "-", i%50), Message: "How hot should the water be for green tea?", Skill: "demo"},
				func(ev runtime.Event) error {
					if ev.IsError {
						return fmt.Errorf("tool %s: %s", ev.Tool, ev.Result)
					}
					return nil
				})
			return err
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	rec.Report(b)
	ag.Wait()
}
