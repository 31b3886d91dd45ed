package agenteval

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"

	"github.com/vibelife/vibe/internal/atomicfile"
	"github.com/vibelife/vibe/llm"
)

// Judge grades one answer.
type Judge interface {
	Judge(ctx context.Context, in JudgeInput) (Verdict, error)
}

// JudgeInput is what the judge sees: the question, the answer, the sources
// the runtime retrieves for the question, and the facts the answer must
// state.
type JudgeInput struct {
	Question string
	Answer   string
	Sources  []string
	Facts    []string
}

// Verdict is the judge's answer.
type Verdict struct {
	// Faithfulness is the share of the answer's claims the sources support
	// (0..1).
	Faithfulness float64       `json:"faithfulness"`
	Unsupported  []string      `json:"unsupported,omitempty"`
	Facts        []FactVerdict `json:"facts,omitempty"`
}

// FactVerdict says whether the answer states one expected fact.
type FactVerdict struct {
	Fact   string `json:"fact"`
	Stated bool   `json:"stated"`
}

// Chatter is the model call the judge needs (*llm.Client satisfies it; its
// response cache makes a rerun send nothing).
type Chatter interface {
	Chat(ctx context.Context, req llm.Request) (llm.Response, error)
}

// LLMJudge judges with a model, at temperature 0, with structured output.
type LLMJudge struct {
	Client Chatter
	Model  string
}

// judgePromptVersion is part of the cache key: bump it when the prompt or
// the schema changes.
const judgePromptVersion = "eval-judge-1"

const judgeSystem = `You grade an assistant's answer for an evaluation suite. Judge only against the SOURCES given, never against your own knowledge.
- faithfulness: the share (0 to 1) of the factual claims in the answer that the sources support. Claims the sources contradict or do not contain are unsupported; list each briefly in "unsupported". An answer that only says the sources do not cover the question has faithfulness 1.
- facts: for each expected fact, in the order given, "stated" is true when the answer states it (in any wording or language) and false when it is missing or contradicted. Copy each fact's text exactly.
Answer with the JSON object only.`

var judgeSchema = json.RawMessage(`{"type":"object","additionalProperties":false,"required":["faithfulness","unsupported","facts"],"properties":{"faithfulness":{"type":"number","minimum":0,"maximum":1},"unsupported":{"type":"array","items":{"type":"string"}},"facts":{"type":"array","items":{"type":"object","additionalProperties":false,"required":["fact","stated"],"properties":{"fact":{"type":"string"},"stated":{"type":"boolean"}}}}}}`)

// Judge sends one grading request.
func (j LLMJudge) Judge(ctx context.Context, in JudgeInput) (Verdict, error) {
	var sb strings.Builder
	fmt.Fprintf(&sb, "QUESTION:\n%s\n\nANSWER:\n%s\n\nSOURCES:\n", in.Question, in.Answer)
	if len(in.Sources) == 0 {
		sb.WriteString("(none retrieved)\n")
	}
	for i, s := range in.Sources {
		fmt.Fprintf(&sb, "[%d] %s\n", i+1, s)
	}
	sb.WriteString("\nEXPECTED FACTS:\n")
	for i, f := range in.Facts {
		fmt.Fprintf(&sb, "%d. %s\n", i+1, f)
	}
	zero := 0.0
	resp, err := j.Client.Chat(ctx, llm.Request{
		Stage: "eval.judge", Model: j.Model, Temperature: &zero, PromptVersion: judgePromptVersion,
		Messages: []llm.Message{{Role: llm.RoleSystem, Content: judgeSystem}, {Role: llm.RoleUser, Content: sb.String()}},
		Schema:   &llm.Schema{Name: "eval_verdict", JSON: judgeSchema},
	})
	if err != nil {
		return Verdict{}, err
	}
	var v Verdict
	if err := json.Unmarshal([]byte(resp.Content), &v); err != nil {
		return Verdict{}, fmt.Errorf("the judge's answer is not a verdict: %v", err)
	}
	if math.IsNaN(v.Faithfulness) || v.Faithfulness < 0 || v.Faithfulness > 1 {
		return Verdict{}, fmt.Errorf("the judge gave faithfulness %v, not a number between 0 and 1", v.Faithfulness)
	}
	v.Faithfulness = round4(v.Faithfulness)
	return v, nil
}

// StreamModel is the runtime's model interface (runtime.Model).
type StreamModel interface {
	Stream(ctx context.Context, req llm.Request, fn func(llm.Delta) error) (llm.Response, error)
}

// CachedModel answers a chat request it has seen before from a file in Dir
// instead of asking Inner, so a rerun of an eval sends nothing and gets the
// same answers. Calls counts the requests Inner received.
type CachedModel struct {
	Inner StreamModel
	Dir   string
	Calls atomic.Int64
}

// Stream replays a cached answer (its text as one delta) or asks Inner and
// keeps the answer.
func (m *CachedModel) Stream(ctx context.Context, req llm.Request, fn func(llm.Delta) error) (llm.Response, error) {
	key := requestKey(req)
	path := filepath.Join(m.Dir, key[:2], key+".json")
	if b, err := os.ReadFile(path); err == nil {
		var r llm.Response
		if json.Unmarshal(b, &r) == nil {
			if r.Content != "" {
				if err := fn(llm.Delta{Content: r.Content}); err != nil {
					return r, err
				}
			}
			r.Cached = true
			return r, nil
		}
	}
	m.Calls.Add(1)
	r, err := m.Inner.Stream(ctx, req, fn)
	if err != nil {
		return r, err
	}
	b, err := json.Marshal(r)
	if err != nil {
		return r, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return r, fmt.Errorf("eval cache: %w", err)
	}
	return r, atomicfile.WriteFile(path, b, 0o644)
}

func requestKey(req llm.Request) string {
	canon := struct {
		Model    string        `json:"model"`
		Messages []llm.Message `json:"messages"`
		Tools    []llm.Tool    `json:"tools,omitempty"`
	}{req.Model, req.Messages, req.Tools}
	b, _ := json.Marshal(canon)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
