package integrate

import (
	"context"
	"strings"
	"testing"

	"github.com/vibelife/vibe/llm"
)

type fakeChat struct {
	answer string
	calls  int
	last   llm.Request
}

func (f *fakeChat) Chat(_ context.Context, req llm.Request) (llm.Response, error) {
	f.calls++
	f.last = req
	return llm.Response{Content: f.answer}, nil
}

type fakeEmbedder struct{ sim map[string]bool }

// Embed gives identical vectors to texts whose first text is in sim, orthogonal ones otherwise.
func (f fakeEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	if f.sim[texts[0]] {
		return [][]float32{{1, 0}, {1, 0}}, nil
	}
	return [][]float32{{1, 0}, {0, 1}}, nil
}

func TestGroundingFallbacks(t *testing.T) {
	const claim = "marriage will be happy within a year"
	tests := []struct {
		name      string
		opt       func(*Options)
		wantCheck string // "" = the weak claim passes
	}{
		{"lexical only", func(o *Options) {}, "grounding.weak-support"},
		{"embedding rescues", func(o *Options) { o.Embedder = fakeEmbedder{map[string]bool{claim: true}} }, ""},
		{"judge rejects", func(o *Options) {
			o.Judge = NewLLMJudge(&fakeChat{answer: `{"supported":false,"reason":"the source speaks of riches"}`}, "m")
		}, "grounding.not-entailed"},
		{"judge accepts", func(o *Options) {
			o.Judge = NewLLMJudge(&fakeChat{answer: `{"supported":true,"reason":"ok"}`}, "m")
		}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opt := Options{Theme: "demo", SkillDir: "testdata/faulty", Chunks: loadChunks(t), Config: checkCfg()}
			tt.opt(&opt)
			rep, err := Check(context.Background(), opt)
			if err != nil {
				t.Fatal(err)
			}
			var found string
			for _, f := range rep.Findings {
				if f.Item == "T3_003" && strings.HasPrefix(f.Check, "grounding.") {
					found = f.Check
				}
			}
			if found != tt.wantCheck {
				t.Errorf("T3_003 grounding finding %q, want %q", found, tt.wantCheck)
			}
		})
	}
}

func TestLLMJudgeRequest(t *testing.T) {
	fc := &fakeChat{answer: "not json"}
	_, _, err := NewLLMJudge(fc, "m")(context.Background(), "c", "s")
	if err == nil {
		t.Fatal("a malformed verdict must be an error")
	}
	if fc.last.Schema == nil || fc.last.PromptVersion != JudgePromptVersion || !strings.Contains(fc.last.Messages[1].Content, "CLAIM:\nc") {
		t.Errorf("request %+v", fc.last)
	}
}
