package runtime

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/vibelife/vibe/llm"
)

// blockingModel streams one piece, then waits for the turn's context.
type blockingModel struct {
	started  chan struct{}
	canceled chan error
}

func (b *blockingModel) Stream(ctx context.Context, req llm.Request, fn func(llm.Delta) error) (llm.Response, error) {
	_ = fn(llm.Delta{Content: "partial "})
	close(b.started)
	<-ctx.Done()
	b.canceled <- ctx.Err()
	return llm.Response{}, ctx.Err()
}

func TestClientDisconnectCancelsTurn(t *testing.T) {
	m := &blockingModel{started: make(chan struct{}), canceled: make(chan error, 1)}
	ts, _ := newTestServer(t, m, ServerOptions{Insecure: true})
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "POST", ts.URL+"/api/chat", strings.NewReader(`{"message":"hi"}`))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	<-m.started
	cancel()
	resp.Body.Close()
	if err := <-m.canceled; err == nil {
		t.Fatal("turn not canceled")
	}
}
