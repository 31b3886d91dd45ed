package runtime

import (
	"context"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/vibelife/vibe/llm"
)

// brokenModel streams part of an answer, then the endpoint fails.
type brokenModel struct{}

func (brokenModel) Stream(ctx context.Context, req llm.Request, fn func(llm.Delta) error) (llm.Response, error) {
	if req.Stage == "serve.summary" {
		return llm.Response{Content: "s"}, nil
	}
	if err := fn(llm.Delta{Content: "first part "}); err != nil {
		return llm.Response{}, err
	}
	return llm.Response{}, errors.New("upstream reset the stream")
}

// TestModelFailsMidStream: an endpoint that fails after part of an answer
// has streamed gets the client what streamed, then an error event naming
// the failure, and the turn is kept. The handler used to panic (slice
// bounds out of range) and the client lost the connection instead.
func TestModelFailsMidStream(t *testing.T) {
	a, mem := newTestAgent(t, brokenModel{}, nil)
	s, _ := NewServer(a, ServerOptions{Insecure: true})
	ts := httptest.NewServer(s)
	defer ts.Close()
	resp, err := ts.Client().Post(ts.URL+"/api/chat", "application/json", strings.NewReader(`{"message":"hi","conversation_id":"broken"}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	evs := readSSE(t, resp.Body)
	var text strings.Builder
	for _, e := range evs {
		if e.Type == EventContent {
			text.WriteString(e.Content)
		}
	}
	if text.String() != "first part " {
		t.Errorf("streamed %q, want the part the model sent", text.String())
	}
	if len(evs) == 0 || evs[len(evs)-1].Type != EventError || !strings.Contains(evs[len(evs)-1].Error, "upstream reset the stream") {
		t.Fatalf("events %+v, want an error event last naming the endpoint's failure", evs)
	}
	msgs, err := mem.Messages(context.Background(), "dev", "broken", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) == 0 || msgs[0].Content != "hi" {
		t.Errorf("stored %+v, want the user's message kept", msgs)
	}
}
