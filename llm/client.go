package llm

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/shared"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/vibelife/vibe/internal/atomicfile"
)

// Sentinel errors.
var (
	// ErrBudgetExceeded stops a build before a request would overspend.
	ErrBudgetExceeded = errors.New("llm budget exceeded")
	// ErrInvalidOutput means the answer broke the schema even after the
	// repair round.
	ErrInvalidOutput = errors.New("llm answer does not match the schema")
	// ErrDryRun is returned for requests not sent in dry-run mode.
	ErrDryRun = errors.New("dry run: request not sent")
	// ErrStreamCut means a stream broke after text was already delivered.
	ErrStreamCut = errors.New("llm stream cut")
)

// Price is what a model costs per million tokens.
type Price struct {
	InputPerMTok  float64
	OutputPerMTok float64
}

// Options configure a Client.
type Options struct {
	BaseURL, APIKey string
	// Model is the default model.
	Model string
	// MaxConcurrency bounds requests in flight (default 4).
	MaxConcurrency int
	// Timeout bounds one attempt (default 2m).
	Timeout time.Duration
	// MaxRetries is how many times a failed attempt is retried (default 4).
	MaxRetries int
	// CacheDir holds one file per answer (.vibe/cache/llm); empty disables
	// the cache.
	CacheDir string
	// Prices per model, for dry-run estimates and the budget.
	Prices map[string]Price
	// Budget is the most the client may spend; 0 means no limit.
	Budget float64
	// DryRun counts requests and prompt tokens without sending anything.
	DryRun bool
	// CountTokens counts tokens; nil uses an estimate (a Han character is a
	// token, other text about 4 bytes a token). Every answered request's
	// prompt and answer are counted with it, and the larger of that count
	// and the endpoint's usage is recorded and charged (see Usage).
	CountTokens func(string) int
	// Tokenizer names CountTokens in usage reports (DescribeTokenizer);
	// empty with CountTokens set reads "custom counter".
	Tokenizer string
	// Sleep waits between retries; nil uses a timer honouring ctx. Tests
	// inject a recorder.
	Sleep func(ctx context.Context, d time.Duration) error
	// Jitter returns a number in [0,1) for backoff jitter; nil uses math/rand.
	Jitter func() float64
	// HTTPClient overrides the HTTP client.
	HTTPClient *http.Client
}

// StageUsage is the usage of one stage.
type StageUsage struct {
	Requests   int `json:"requests"`
	CachedHits int `json:"cached_hits"`
	Retries    int `json:"retries"`
	Repairs    int `json:"repairs"`
	// PromptTokens and CompletionTokens sum, request by request, the larger
	// of the endpoint's usage and vibe's count (see Usage); Cost and the
	// budget are computed from them.
	PromptTokens     int     `json:"prompt_tokens"`
	CompletionTokens int     `json:"completion_tokens"`
	Cost             float64 `json:"cost"`
	// SentPromptTokens and CountedCompletionTokens are vibe's count of the
	// answered requests' prompts and answers (Options.CountTokens).
	SentPromptTokens        int `json:"sent_prompt_tokens"`
	CountedCompletionTokens int `json:"counted_completion_tokens"`
	// EndpointPromptTokens and EndpointCompletionTokens are the usage the
	// endpoint returned for them.
	EndpointPromptTokens     int `json:"endpoint_prompt_tokens"`
	EndpointCompletionTokens int `json:"endpoint_completion_tokens"`
	// CountedLarger is how many requests were recorded with vibe's count
	// because it was above the endpoint's usage (or the endpoint returned
	// none); the others were recorded with the endpoint's.
	CountedLarger int `json:"counted_larger"`
	// Tokenizer names the counter (Options.Tokenizer).
	Tokenizer string `json:"tokenizer"`
	// DryRunRequests and DryRunPromptTokens count what would have been sent.
	DryRunRequests     int `json:"dry_run_requests,omitempty"`
	DryRunPromptTokens int `json:"dry_run_prompt_tokens,omitempty"`
}

// Client talks to an OpenAI-compatible endpoint. It is safe for concurrent use.
type Client struct {
	opt Options
	oa  openai.Client
	sem chan struct{}

	mu           sync.Mutex
	usage        map[string]*StageUsage
	spent        float64
	noJSONSchema bool
	schemas      map[string]*jsonschema.Schema
}

// New builds a client. openai-go's own retries are disabled: the retry
// policy is the client's.
func New(opt Options) *Client {
	if opt.MaxConcurrency <= 0 {
		opt.MaxConcurrency = 4
	}
	if opt.Timeout <= 0 {
		opt.Timeout = 2 * time.Minute
	}
	if opt.MaxRetries < 0 {
		opt.MaxRetries = 0
	} else if opt.MaxRetries == 0 {
		opt.MaxRetries = 4
	}
	if opt.CountTokens == nil {
		opt.CountTokens = EstimateTokens
		opt.Tokenizer = estimateTokenizer
	} else if opt.Tokenizer == "" {
		opt.Tokenizer = "custom counter"
	}
	if opt.Sleep == nil {
		opt.Sleep = sleepCtx
	}
	if opt.Jitter == nil {
		opt.Jitter = rand.Float64
	}
	ropts := []option.RequestOption{option.WithMaxRetries(0), option.WithAPIKey(opt.APIKey)}
	if opt.APIKey == "" {
		ropts[1] = option.WithAPIKey("none")
	}
	if opt.BaseURL != "" {
		ropts = append(ropts, option.WithBaseURL(opt.BaseURL))
	}
	if opt.HTTPClient != nil {
		ropts = append(ropts, option.WithHTTPClient(opt.HTTPClient))
	}
	return &Client{opt: opt, oa: openai.NewClient(ropts...), sem: make(chan struct{}, opt.MaxConcurrency),
		usage: map[string]*StageUsage{}, schemas: map[string]*jsonschema.Schema{}}
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Usage returns a copy of the usage per stage.
func (c *Client) Usage() map[string]StageUsage {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]StageUsage, len(c.usage))
	for k, v := range c.usage {
		out[k] = *v
	}
	return out
}

// Spent returns the estimated cost so far.
func (c *Client) Spent() float64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.spent
}

func (c *Client) stage(name string) *StageUsage {
	if name == "" {
		name = "default"
	}
	u := c.usage[name]
	if u == nil {
		u = &StageUsage{Tokenizer: c.opt.Tokenizer}
		c.usage[name] = u
	}
	return u
}

func (c *Client) model(req Request) string {
	if req.Model != "" {
		return req.Model
	}
	return c.opt.Model
}

func (c *Client) cost(model string, prompt, completion int) float64 {
	p := c.opt.Prices[model]
	return float64(prompt)*p.InputPerMTok/1e6 + float64(completion)*p.OutputPerMTok/1e6
}

// CacheKey is the sha256 of model, prompt version and the canonical request.
func (c *Client) CacheKey(req Request) string {
	canon := struct {
		Model         string    `json:"model"`
		PromptVersion string    `json:"prompt_version"`
		Messages      []Message `json:"messages"`
		Tools         []Tool    `json:"tools,omitempty"`
		Temperature   *float64  `json:"temperature,omitempty"`
		MaxTokens     int       `json:"max_tokens,omitempty"`
		Schema        string    `json:"schema,omitempty"`
	}{c.model(req), req.PromptVersion, req.Messages, req.Tools, req.Temperature, req.MaxTokens, ""}
	if req.Schema != nil {
		canon.Schema = req.Schema.Name + ":" + string(req.Schema.JSON)
	}
	b, _ := json.Marshal(canon)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

func (c *Client) cachePath(key string) string {
	return filepath.Join(c.opt.CacheDir, key[:2], key+".json")
}

func (c *Client) cacheGet(req Request) (Response, bool) {
	if c.opt.CacheDir == "" || req.NoCache {
		return Response{}, false
	}
	b, err := os.ReadFile(c.cachePath(c.CacheKey(req)))
	if err != nil {
		return Response{}, false
	}
	var r Response
	if json.Unmarshal(b, &r) != nil {
		return Response{}, false
	}
	r.Cached = true
	return r, true
}

// Cached reports whether the response cache holds an answer to req, so a
// dry run can tell the requests a build would send from those it would
// answer from the cache.
func (c *Client) Cached(req Request) bool {
	_, ok := c.cacheGet(req)
	return ok
}

func (c *Client) cachePut(req Request, r Response) error {
	if c.opt.CacheDir == "" || req.NoCache {
		return nil
	}
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	p := c.cachePath(c.CacheKey(req))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return fmt.Errorf("llm cache: %w", err)
	}
	return atomicfile.WriteFile(p, b, 0o644)
}

// CountTokens counts the tokens of s with the client's counter
// (Options.CountTokens, else an estimate).
func (c *Client) CountTokens(s string) int { return c.opt.CountTokens(s) }

// PromptTokens counts the prompt tokens req would send with the client's
// counter (Options.CountTokens).
func (c *Client) PromptTokens(req Request) int { return PromptTokens(req, c.opt.CountTokens) }

// admit checks the cache, dry run and budget before a request is sent. It
// returns the cached answer, or the prompt tokens of the request to send.
func (c *Client) admit(req Request) (Response, bool, int, error) {
	if r, ok := c.cacheGet(req); ok {
		c.mu.Lock()
		c.stage(req.Stage).CachedHits++
		c.mu.Unlock()
		return r, true, 0, nil
	}
	model := c.model(req)
	prompt := c.PromptTokens(req)
	c.mu.Lock()
	defer c.mu.Unlock()
	u := c.stage(req.Stage)
	if c.opt.DryRun {
		u.DryRunRequests++
		u.DryRunPromptTokens += prompt
		return Response{}, false, prompt, ErrDryRun
	}
	if c.opt.Budget > 0 {
		completion := req.MaxTokens
		if completion == 0 {
			completion = prompt / 2
		}
		est := c.cost(model, prompt, completion)
		if c.spent+est > c.opt.Budget {
			return Response{}, false, prompt, fmt.Errorf("%w: spent %.4f of %.4f, the next %s request would cost about %.4f (raise --budget or llm.budget)", ErrBudgetExceeded, c.spent, c.opt.Budget, stageName(req.Stage), est)
		}
	}
	return Response{}, false, prompt, nil
}

func stageName(s string) string {
	if s == "" {
		return "default"
	}
	return s
}

// Tokenizer names the client's token counter as usage reports do.
func (c *Client) Tokenizer() string { return c.opt.Tokenizer }

// settle completes an answer's usage: the endpoint's figures (as attempt
// set them) kept apart, vibe's count of the prompt (prompt) and of the
// answer added, and the larger of the two taken for each direction.
func (c *Client) settle(r *Response, prompt int) {
	u := &r.Usage
	u.EndpointPromptTokens, u.EndpointCompletionTokens = u.PromptTokens, u.CompletionTokens
	u.CountedPromptTokens = prompt
	u.CountedCompletionTokens = CompletionTokens(*r, c.opt.CountTokens)
	u.PromptTokens = max(u.EndpointPromptTokens, u.CountedPromptTokens)
	u.CompletionTokens = max(u.EndpointCompletionTokens, u.CountedCompletionTokens)
}

func (c *Client) record(req Request, r Response, prompt int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	u := c.stage(req.Stage)
	u.Requests++
	u.SentPromptTokens += prompt
	u.CountedCompletionTokens += r.Usage.CountedCompletionTokens
	u.EndpointPromptTokens += r.Usage.EndpointPromptTokens
	u.EndpointCompletionTokens += r.Usage.EndpointCompletionTokens
	if r.Usage.CountedLarger() {
		u.CountedLarger++
	}
	u.PromptTokens += r.Usage.PromptTokens
	u.CompletionTokens += r.Usage.CompletionTokens
	cost := c.cost(c.model(req), r.Usage.PromptTokens, r.Usage.CompletionTokens)
	u.Cost += cost
	c.spent += cost
}

// Chat sends one request (with retries) and returns the answer. With a
// Schema the answer is validated, with one repair round when it does not;
// an answer delivered as a function call instead of content is taken from
// the call's arguments. Answers are cached (see Options.CacheDir) once they
// validate, so an unchanged rebuild sends nothing and a killed build
// resumes with every answer it had received.
func (c *Client) Chat(ctx context.Context, req Request) (Response, error) {
	r, ok, prompt, err := c.admit(req)
	if ok || err != nil {
		return r, err
	}
	r, err = c.send(ctx, req, nil, prompt)
	if err != nil {
		return Response{}, err
	}
	if req.Schema != nil {
		r = answerFromToolCall(r)
		if verr := c.validate(req.Schema, r.Content); verr != nil {
			c.mu.Lock()
			c.stage(req.Stage).Repairs++
			c.mu.Unlock()
			repair := req
			repair.Messages = append(append([]Message(nil), req.Messages...),
				Message{Role: RoleAssistant, Content: r.Content},
				Message{Role: RoleUser, Content: "Your JSON does not match the schema: " + verr.Error() + "\nAnswer again with only the corrected JSON."})
			r2, err := c.send(ctx, repair, nil, c.PromptTokens(repair))
			if err != nil {
				return Response{}, err
			}
			r2 = answerFromToolCall(r2)
			if verr := c.validate(req.Schema, r2.Content); verr != nil {
				return Response{}, fmt.Errorf("%w (schema %s, after one repair round): %v", ErrInvalidOutput, req.Schema.Name, verr)
			}
			r2.Usage.Add(r.Usage)
			r = r2
		}
	}
	if err := c.cachePut(req, r); err != nil {
		return r, err
	}
	return r, nil
}

// answerFromToolCall takes a structured answer some endpoints deliver as a
// function call (the way they implement structured output) rather than as
// content: with no content and a call, the call's arguments are the answer.
func answerFromToolCall(r Response) Response {
	if strings.TrimSpace(r.Content) == "" && len(r.ToolCalls) > 0 {
		r.Content = r.ToolCalls[0].Arguments
		r.ToolCalls = nil
	}
	return r
}

// Stream sends one request and calls onDelta as text arrives. A stream that
// breaks before any text was delivered is retried; after that it fails
// with ErrStreamCut. Streamed answers are not cached.
func (c *Client) Stream(ctx context.Context, req Request, onDelta func(Delta) error) (Response, error) {
	req.NoCache = true
	_, _, prompt, err := c.admit(req)
	if err != nil {
		return Response{}, err
	}
	return c.send(ctx, req, onDelta, prompt)
}

func (c *Client) validate(s *Schema, content string) error {
	c.mu.Lock()
	sch, ok := c.schemas[string(s.JSON)]
	c.mu.Unlock()
	if !ok {
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(s.JSON))
		if err != nil {
			return fmt.Errorf("schema %s: %w", s.Name, err)
		}
		comp := jsonschema.NewCompiler()
		if err := comp.AddResource(s.Name+".json", doc); err != nil {
			return err
		}
		if sch, err = comp.Compile(s.Name + ".json"); err != nil {
			return fmt.Errorf("schema %s: %w", s.Name, err)
		}
		c.mu.Lock()
		c.schemas[string(s.JSON)] = sch
		c.mu.Unlock()
	}
	v, err := jsonschema.UnmarshalJSON(strings.NewReader(stripFence(content)))
	if err != nil {
		return fmt.Errorf("not JSON: %v", err)
	}
	return sch.Validate(v)
}

// stripFence removes a ```json fence some models wrap JSON in.
func stripFence(s string) string {
	t := strings.TrimSpace(s)
	if strings.HasPrefix(t, "```") {
		t = strings.TrimPrefix(t, "```json")
		t = strings.TrimPrefix(t, "```")
		t = strings.TrimSuffix(strings.TrimSpace(t), "```")
	}
	return t
}

// send runs the retry loop around one attempt; prompt is the request's
// counted prompt tokens, recorded with the answer.
func (c *Client) send(ctx context.Context, req Request, onDelta func(Delta) error, prompt int) (Response, error) {
	select {
	case c.sem <- struct{}{}:
	case <-ctx.Done():
		return Response{}, ctx.Err()
	}
	defer func() { <-c.sem }()
	var lastErr error
	for attempt := 0; ; attempt++ {
		delivered := false
		r, err := c.attempt(ctx, req, onDelta, &delivered)
		if err == nil {
			c.settle(&r, prompt)
			c.record(req, r, prompt)
			return r, nil
		}
		if ctx.Err() != nil {
			return Response{}, ctx.Err()
		}
		if c.isSchemaRejection(req, err) {
			attempt-- // switching to JSON mode is not a retry
			continue
		}
		wait, retry := retryable(err)
		if !retry {
			return Response{}, fmt.Errorf("llm %s: %w", stageName(req.Stage), err)
		}
		if delivered {
			return Response{}, fmt.Errorf("llm %s: %w: %v", stageName(req.Stage), ErrStreamCut, err)
		}
		lastErr = err
		if attempt >= c.opt.MaxRetries {
			return Response{}, fmt.Errorf("llm %s: giving up after %d attempts: %w", stageName(req.Stage), attempt+1, lastErr)
		}
		if wait == 0 {
			backoff := 500 * time.Millisecond * time.Duration(math.Pow(2, float64(attempt)))
			if backoff > 30*time.Second {
				backoff = 30 * time.Second
			}
			wait = backoff/2 + time.Duration(c.opt.Jitter()*float64(backoff/2))
		}
		c.mu.Lock()
		c.stage(req.Stage).Retries++
		c.mu.Unlock()
		if err := c.opt.Sleep(ctx, wait); err != nil {
			return Response{}, err
		}
	}
}

// isSchemaRejection notices a 400 about json_schema and switches the client
// to JSON mode for good.
func (c *Client) isSchemaRejection(req Request, err error) bool {
	var apiErr *openai.Error
	if req.Schema == nil || !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusBadRequest {
		return false
	}
	msg := strings.ToLower(apiErr.Message + apiErr.RawJSON())
	if !strings.Contains(msg, "json_schema") && !strings.Contains(msg, "response_format") {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.noJSONSchema {
		return false
	}
	c.noJSONSchema = true
	return true
}

// retryable says whether err is worth another attempt, and how long the
// server asked to wait.
func retryable(err error) (time.Duration, bool) {
	var apiErr *openai.Error
	if errors.As(err, &apiErr) {
		code := apiErr.StatusCode
		if code == http.StatusTooManyRequests || code == http.StatusRequestTimeout || code >= 500 {
			var wait time.Duration
			if apiErr.Response != nil {
				wait = parseRetryAfter(apiErr.Response.Header.Get("Retry-After"))
			}
			return wait, true
		}
		return 0, false
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return 0, true // the per-attempt timeout
	}
	if errors.Is(err, ErrDryRun) || errors.Is(err, ErrBudgetExceeded) {
		return 0, false
	}
	return 0, true // network errors, cut streams
}

func parseRetryAfter(v string) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil && s >= 0 {
		return time.Duration(s * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := time.Until(t); d > 0 {
			return d
		}
	}
	return 0
}

func (c *Client) params(req Request) openai.ChatCompletionNewParams {
	p := openai.ChatCompletionNewParams{Model: shared.ChatModel(c.model(req))}
	msgs := req.Messages
	c.mu.Lock()
	jsonMode := c.noJSONSchema
	c.mu.Unlock()
	if req.Schema != nil {
		if jsonMode {
			p.ResponseFormat.OfJSONObject = &shared.ResponseFormatJSONObjectParam{}
			msgs = append([]Message{{Role: RoleSystem, Content: "Answer with one JSON object matching this JSON Schema:\n" + string(req.Schema.JSON)}}, msgs...)
		} else {
			var schema any
			_ = json.Unmarshal(req.Schema.JSON, &schema)
			p.ResponseFormat.OfJSONSchema = &shared.ResponseFormatJSONSchemaParam{JSONSchema: shared.ResponseFormatJSONSchemaJSONSchemaParam{Name: req.Schema.Name, Schema: schema}}
		}
	}
	for _, m := range msgs {
		switch m.Role {
		case RoleSystem:
			p.Messages = append(p.Messages, openai.SystemMessage(m.Content))
		case RoleTool:
			p.Messages = append(p.Messages, openai.ToolMessage(m.Content, m.ToolCallID))
		case RoleAssistant:
			a := openai.ChatCompletionAssistantMessageParam{}
			if m.Content != "" {
				a.Content.OfString = param.NewOpt(m.Content)
			}
			for _, tc := range m.ToolCalls {
				a.ToolCalls = append(a.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
					ID: tc.ID, Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: tc.Name, Arguments: tc.Arguments}}})
			}
			p.Messages = append(p.Messages, openai.ChatCompletionMessageParamUnion{OfAssistant: &a})
		default:
			p.Messages = append(p.Messages, openai.UserMessage(m.Content))
		}
	}
	for _, t := range req.Tools {
		var params shared.FunctionParameters
		_ = json.Unmarshal(t.Parameters, &params)
		p.Tools = append(p.Tools, openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{Name: t.Name, Description: param.NewOpt(t.Description), Parameters: params}))
	}
	if req.Temperature != nil {
		p.Temperature = param.NewOpt(*req.Temperature)
	}
	if req.MaxTokens > 0 {
		p.MaxTokens = param.NewOpt(int64(req.MaxTokens))
	}
	return p
}

func (c *Client) attempt(ctx context.Context, req Request, onDelta func(Delta) error, delivered *bool) (Response, error) {
	actx, cancel := context.WithTimeout(ctx, c.opt.Timeout)
	defer cancel()
	p := c.params(req)
	if onDelta == nil {
		cc, err := c.oa.Chat.Completions.New(actx, p)
		if err != nil {
			return Response{}, err
		}
		if len(cc.Choices) == 0 {
			return Response{}, errors.New("answer has no choices")
		}
		ch := cc.Choices[0]
		r := Response{Content: ch.Message.Content, FinishReason: ch.FinishReason,
			Usage: Usage{PromptTokens: int(cc.Usage.PromptTokens), CompletionTokens: int(cc.Usage.CompletionTokens)}}
		for _, tc := range ch.Message.ToolCalls {
			r.ToolCalls = append(r.ToolCalls, ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments})
		}
		return r, nil
	}
	p.StreamOptions.IncludeUsage = param.NewOpt(true)
	st := c.oa.Chat.Completions.NewStreaming(actx, p)
	defer st.Close()
	acc := openai.ChatCompletionAccumulator{}
	var r Response
	for st.Next() {
		chunk := st.Current()
		acc.AddChunk(chunk)
		if len(chunk.Choices) > 0 && chunk.Choices[0].Delta.Content != "" {
			*delivered = true
			if err := onDelta(Delta{Content: chunk.Choices[0].Delta.Content}); err != nil {
				return Response{}, err
			}
		}
		if tc, ok := acc.JustFinishedToolCall(); ok {
			call := ToolCall{ID: tc.ID, Name: tc.Name, Arguments: tc.Arguments}
			*delivered = true
			if err := onDelta(Delta{ToolCall: &call}); err != nil {
				return Response{}, err
			}
		}
	}
	if err := st.Err(); err != nil {
		return Response{}, err
	}
	if len(acc.Choices) == 0 {
		return Response{}, errors.New("stream ended without an answer")
	}
	ch := acc.Choices[0]
	if ch.FinishReason == "" {
		return Response{}, errors.New("stream ended before the answer finished")
	}
	r.Content, r.FinishReason = ch.Message.Content, ch.FinishReason
	r.Usage = Usage{PromptTokens: int(acc.Usage.PromptTokens), CompletionTokens: int(acc.Usage.CompletionTokens)}
	for _, tc := range ch.Message.ToolCalls {
		r.ToolCalls = append(r.ToolCalls, ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments})
	}
	return r, nil
}
