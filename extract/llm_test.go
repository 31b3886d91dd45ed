package extract

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/vibelife/vibe/llm"
	"github.com/vibelife/vibe/llm/llmtest"
)

var chunkLine = regexp.MustCompile(`\[chunk ([^\]]+)\]\n`)

// fakeExtractor answers a map request with one rule per chunk quoting the
// chunk's first characters, plus one made-up quote that must be dropped.
func fakeExtractor(r llmtest.Request) llmtest.Reply {
	msg := r.LastUserMessage()
	type item = map[string]string
	rules, flags, pats, steps := []item{}, []item{}, []item{}, []item{}
	locs := chunkLine.FindAllStringSubmatchIndex(msg, -1)
	for i, m := range locs {
		id := msg[m[2]:m[3]]
		end := len(msg)
		if i+1 < len(locs) {
			end = locs[i+1][0]
		}
		text := strings.TrimSpace(msg[m[1]:end])
		runes := []rune(text)
		if len(runes) < 12 {
			continue
		}
		q := string(runes[:12])
		rules = append(rules, item{"tier": []string{"tier1", "tier2", "tier3"}[i%3], "condition": "条件" + q, "conclusion": "结论", "chunk": id, "quote": q})
		if i == 0 {
			flags = append(flags, item{"signal": "信号" + q, "severity": "warning", "action": "核查", "chunk": id, "quote": q})
			pats = append(pats, item{"name": "格" + q, "signature": q, "indication": "主", "chunk": id, "quote": q})
			steps = append(steps, item{"phase": "P4", "action": "看" + q, "chunk": id, "quote": q})
			rules = append(rules, item{"tier": "tier2", "condition": "编造", "conclusion": "x", "chunk": id, "quote": "这句话不在原文里"})
		}
	}
	b, _ := json.Marshal(map[string]any{"rules": rules, "patterns": pats, "red_flags": flags, "steps": steps})
	return llmtest.Text(string(b))
}

func TestLLMExtractResumeAndCache(t *testing.T) {
	chunks := loadCorpus(t, "bazi")
	chunks = chunks[:200] // a slice of the corpus keeps the test quick
	srv := llmtest.New(t)
	srv.SetFallback(fakeExtractor)
	cache := t.TempDir()
	newClient := func() *llm.Client {
		return llm.New(llm.Options{BaseURL: srv.URL, APIKey: "k", Model: "m", CacheDir: cache, MaxRetries: 1,
			Sleep: func(ctx context.Context, d time.Duration) error { return nil }})
	}
	// A first build "killed" half-way: only the first sections answered.
	half := len(sections(chunks)) / 2
	c1 := newClient()
	ctx, cancel := context.WithCancel(context.Background())
	n := 0
	counting := completerFunc(func(ctx context.Context, r llm.Request) (llm.Response, error) {
		if n == half {
			cancel()
			return llm.Response{}, context.Canceled
		}
		n++
		return c1.Chat(ctx, r)
	})
	if _, err := Run(ctx, Options{Theme: "bazi", Chunks: chunks, Completer: counting, Model: "m"}); err == nil {
		t.Fatal("killed build returned no error")
	}
	first := srv.Count()
	if first != half {
		t.Fatalf("killed build sent %d requests, want %d", first, half)
	}
	// Resume: only the missing sections are requested.
	c2 := newClient()
	res, err := Run(context.Background(), Options{Theme: "bazi", Chunks: chunks, Completer: c2, Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	total := len(sections(chunks))
	if srv.Count() != total {
		t.Errorf("requests after resume = %d (first run %d), want %d in all", srv.Count(), first, total)
	}
	if res.Counts.Dropped != 0 {
		t.Errorf("dropped %d after verification, want 0 (bad quotes are filtered at map time)", res.Counts.Dropped)
	}
	validate(t, res.Files)
	if res.Counts.Tier1 == 0 || res.Counts.Tier2 == 0 || res.Counts.Tier3 == 0 || res.Counts.RedFlags == 0 || res.Counts.Patterns == 0 {
		t.Errorf("counts %+v", res.Counts)
	}
	for _, r := range res.Files.Rules.Rules.All() {
		if r.Condition == "编造" {
			t.Errorf("rule with a made-up quote survived: %+v", r)
		}
	}
	// Unchanged rebuild: zero requests, same ids.
	before := srv.Count()
	c3 := newClient()
	res2, err := Run(context.Background(), Options{Theme: "bazi", Chunks: chunks, Completer: c3, Model: "m", Previous: &res.Files})
	if err != nil {
		t.Fatal(err)
	}
	if srv.Count() != before {
		t.Errorf("unchanged rebuild sent %d requests", srv.Count()-before)
	}
	if res2.Files.Rules.Rules.Tier2[0].ID != res.Files.Rules.Rules.Tier2[0].ID {
		t.Error("ids changed on an unchanged rebuild")
	}
	u := c2.Usage()["extract.map"]
	sent := u.PromptTokens
	t.Logf("sections %d, requests %d, prompt tokens %d, completion tokens %d, source tokens %d, sent/source %.2f",
		res.LLM.Sections, srv.Count(), sent, u.CompletionTokens, res.LLM.SourceTokens, float64(sent)/float64(res.LLM.SourceTokens))
}

type completerFunc func(context.Context, llm.Request) (llm.Response, error)

func (f completerFunc) Chat(ctx context.Context, r llm.Request) (llm.Response, error) {
	return f(ctx, r)
}

// TestLLMTokenRatio measures, for the whole bazi corpus against the fake
// server, the tokens sent per source token (estimated with the same
// tokenizer on both sides). The figures go in docs/extract.md.
func TestLLMTokenRatio(t *testing.T) {
	chunks := loadCorpus(t, "bazi")
	srv := llmtest.New(t)
	srv.SetFallback(fakeExtractor)
	c := llm.New(llm.Options{BaseURL: srv.URL, APIKey: "k", Model: "m", MaxConcurrency: 2})
	res, err := Run(context.Background(), Options{Theme: "bazi", Chunks: chunks, Completer: c, Model: "m", Concurrency: 2})
	if err != nil {
		t.Fatal(err)
	}
	sent := 0
	for _, r := range srv.Requests() {
		for _, m := range r.Messages {
			sent += llm.EstimateTokens(m.Content)
		}
	}
	u := c.Usage()["extract.map"]
	ratio := float64(sent) / float64(res.LLM.SourceTokens)
	t.Logf("bazi: sections %d, requests %d, prompt tokens sent %d (server-reported %d), completion tokens %d, source tokens %d, sent/source %.2f",
		res.LLM.Sections, srv.Count(), sent, u.PromptTokens, u.CompletionTokens, res.LLM.SourceTokens, ratio)
	if ratio > 1.5 {
		t.Errorf("sent/source = %.2f, want under 1.5", ratio)
	}
	validate(t, res.Files)
}
