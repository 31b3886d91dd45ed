package runtime

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/vibelife/vibe/chunk"
	"github.com/vibelife/vibe/knowledge"
	"github.com/vibelife/vibe/llm"
)

// chunkSearcher is fakeSearcher that can also return a chunk by id, as
// knowledge stores do.
type chunkSearcher struct{ fakeSearcher }

func (chunkSearcher) Chunk(ctx context.Context, id string) (chunk.Chunk, error) {
	if id != "knowledge/bazi/converted/a.md#1" {
		return chunk.Chunk{}, knowledge.ErrNotFound
	}
	return chunk.Chunk{ID: id, Doc: "knowledge/bazi/converted/a.md", Source: "knowledge/bazi/source/a.pdf", HeadingPath: []string{"卷一", "论日主"}, Start: 120, End: 180}, nil
}

// citedTurn scripts a model that asks get_rules and search_knowledge and
// answers naming rule r2 and the passage's chunk.
func citedTurn() *fakeModel {
	return &fakeModel{script: []step{
		{calls: []llm.ToolCall{
			call("1", "get_rules", `{"question":"日主甲木生于寅月","k":2}`),
			call("2", "search_knowledge", `{"query":"甲木寅月"}`),
		}},
		{text: []string{"日主得令，身强（r2，", "knowledge/bazi/converted/a.md#1）。"}},
	}}
}

// citationServer serves an agent over m whose searcher finds the test
// chunks, to alice (key ka) and bob (kb); opts change its configuration.
func citationServer(t *testing.T, m *fakeModel, opts ...func(*Config)) *httptest.Server {
	t.Helper()
	a, _ := newTestAgent(t, m, func(c *Config) {
		c.Searcher = chunkSearcher{}
		for _, o := range opts {
			o(c)
		}
	})
	keys := &Keys{}
	if err := ParseKeysEnv("ka:alice,kb:bob", keys); err != nil {
		t.Fatal(err)
	}
	s, err := NewServer(a, ServerOptions{Keys: keys})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	return ts
}

// checkCitations checks the citations of citedTurn's answer: rule r2 with
// its evidence quote and, through the store, its passage's file, heading
// path and offsets; the passage search_knowledge returned; both marked as
// cited by the answer.
func checkCitations(t *testing.T, cs []Citation) {
	t.Helper()
	var rule, passage *Citation
	for i, c := range cs {
		switch {
		case c.Kind == "rule" && c.RuleID == "r2":
			rule = &cs[i]
		case c.Kind == "passage" && c.ChunkID == "knowledge/bazi/converted/a.md#1":
			passage = &cs[i]
		}
	}
	if rule == nil || passage == nil {
		t.Fatalf("citations %+v: want rule r2 and the passage a.md#1", cs)
	}
	if rule.ChunkID != "knowledge/bazi/converted/a.md#1" || rule.Quote != "甲木寅月得令" || rule.Source != "knowledge/bazi/source/a.pdf" ||
		len(rule.HeadingPath) != 2 || rule.HeadingPath[1] != "论日主" || rule.Start != 120 || rule.End != 180 || !rule.Cited {
		t.Errorf("rule citation = %+v", *rule)
	}
	if passage.Source != "knowledge/bazi/source/a.pdf" || passage.Doc != "knowledge/bazi/converted/a.md" || len(passage.HeadingPath) != 1 ||
		passage.Start != 120 || passage.End != 180 || passage.Quote != "甲木生于寅月，得令而旺。" || !passage.Cited {
		t.Errorf("passage citation = %+v", *passage)
	}
	for _, c := range cs {
		if c.RuleID == "r3" && c.Cited {
			t.Errorf("r3 marked cited, but the answer does not name it: %+v", c)
		}
	}
}

// Both APIs carry the answer's sources as structured citations: a
// citations event on the native SSE API, and on the OpenAI-compatible one
// a citations field of the message (or of the last delta when streaming),
// read here through the official client's extra fields.
func TestCitationsOnBothAPIs(t *testing.T) {
	ctx := context.Background()

	// Native SSE.
	ts := citationServer(t, citedTurn())
	resp := do(t, "POST", ts.URL+"/api/chat", "ka", `{"message":"日主甲木生于寅月怎么样","skill":"bazi"}`)
	evs := readSSE(t, resp.Body)
	resp.Body.Close()
	var got []Citation
	n := 0
	for i, e := range evs {
		if e.Type == EventCitations {
			n++
			got = e.Citations
			if i+1 >= len(evs) || evs[i+1].Type != EventDone {
				t.Errorf("citations event at %d is not right before done: %+v", i, evs)
			}
		}
	}
	if n != 1 {
		t.Fatalf("%d citations events, want 1: %+v", n, evs)
	}
	checkCitations(t, got)

	// OpenAI-compatible, not streaming.
	ts = citationServer(t, citedTurn())
	client := openai.NewClient(option.WithBaseURL(ts.URL+"/v1/"), option.WithAPIKey("ka"), option.WithMaxRetries(0))
	res, err := client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{
		Model: "vibe/bazi", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("日主甲木生于寅月怎么样")},
	})
	if err != nil {
		t.Fatal(err)
	}
	f, ok := res.Choices[0].Message.JSON.ExtraFields["citations"]
	if !ok {
		t.Fatalf("message has no citations field: %s", res.RawJSON())
	}
	got = nil
	if err := json.Unmarshal([]byte(f.Raw()), &got); err != nil {
		t.Fatal(err)
	}
	checkCitations(t, got)

	// OpenAI-compatible, streaming.
	ts = citationServer(t, citedTurn())
	client = openai.NewClient(option.WithBaseURL(ts.URL+"/v1/"), option.WithAPIKey("ka"), option.WithMaxRetries(0))
	stream := client.Chat.Completions.NewStreaming(ctx, openai.ChatCompletionNewParams{
		Model: "vibe/bazi", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("日主甲木生于寅月怎么样")},
	})
	got = nil
	for stream.Next() {
		c := stream.Current()
		if len(c.Choices) == 0 {
			continue
		}
		if f, ok := c.Choices[0].Delta.JSON.ExtraFields["citations"]; ok {
			if err := json.Unmarshal([]byte(f.Raw()), &got); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	checkCitations(t, got)
}

// The retrieval-only answer carries the rules and passages it lists as
// citations too.
func TestOfflineAnswerCitations(t *testing.T) {
	a, _ := newTestAgent(t, nil, func(c *Config) { c.Searcher = chunkSearcher{} })
	c := &collect{}
	if _, err := a.Turn(context.Background(), TurnRequest{UserID: "u", Message: "我的八字日主甲木生于寅月", Skill: "bazi"}, c.emit); err != nil {
		t.Fatal(err)
	}
	evs := c.of(EventCitations)
	if len(evs) != 1 {
		t.Fatalf("%d citations events", len(evs))
	}
	checkCitations(t, evs[0].Citations)
}

// With a model, before any skill is active, the prompt offers the router's
// ranked candidates for the message, or says, as advice, that it found none.
func TestPromptOffersTheRoutedSkill(t *testing.T) {
	for _, tt := range []struct{ msg, want string }{
		{"帮我看看命盘，日主甲木", "skills that fit this message, best first: bazi ("},
		{"write a poem about cats", "the router found no skill sharing words with this message"},
	} {
		m := &fakeModel{}
		a, _ := newTestAgent(t, m, nil)
		if _, err := a.Turn(context.Background(), TurnRequest{UserID: "u", Message: tt.msg}, func(Event) error { return nil }); err != nil {
			t.Fatal(err)
		}
		if len(m.requests) == 0 || !strings.Contains(m.requests[0].Messages[0].Content, tt.want) {
			t.Errorf("%q: system prompt lacks %q", tt.msg, tt.want)
		}
	}
}
