package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/vibelife/vibe/knowledge"
	"github.com/vibelife/vibe/llm"
	"github.com/vibelife/vibe/skills"
)

// Model is the chat model the runtime needs (llm.Client satisfies it).
type Model interface {
	Stream(ctx context.Context, req llm.Request, fn func(llm.Delta) error) (llm.Response, error)
}

// Searcher is the knowledge search the runtime needs (knowledge.Store
// satisfies it).
type Searcher interface {
	Search(ctx context.Context, q knowledge.Query) ([]knowledge.Hit, error)
}

// QueryEmbedder embeds a query for the vector side of hybrid search.
type QueryEmbedder interface {
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// Event types streamed to clients.
const (
	EventContent    = "content"
	EventToolCall   = "tool_call"
	EventToolResult = "tool_result"
	EventCard       = "card"
	EventForm       = "form"
	EventDone       = "done"
	EventError      = "error"
)

// Event is one streamed event of a turn.
type Event struct {
	Type    string          `json:"type"`
	Content string          `json:"content,omitempty"`
	Tool    string          `json:"tool,omitempty"`
	CallID  string          `json:"call_id,omitempty"`
	Args    json.RawMessage `json:"args,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	IsError bool            `json:"is_error,omitempty"`
	// CardType and Props describe a card event.
	CardType string          `json:"card_type,omitempty"`
	Props    json.RawMessage `json:"props,omitempty"`
	// Form is a collect_info form definition.
	Form json.RawMessage `json:"form,omitempty"`
	// Reason ends a turn on a done event: stop, form, max_steps, offline.
	Reason         string `json:"reason,omitempty"`
	ConversationID string `json:"conversation_id,omitempty"`
	Skill          string `json:"skill,omitempty"`
	Error          string `json:"error,omitempty"`
}

// Config configures an Agent.
type Config struct {
	Skills *skills.Set
	// Model is nil in offline (retrieval-only) mode.
	Model    Model
	Searcher Searcher
	Embedder QueryEmbedder
	Memory   knowledge.MemoryStore
	// ModelName is passed in requests (empty: the client's default).
	ModelName     string
	MaxSteps      int
	MaxInputChars int
	// SummaryEvery asks the model for a rolling summary every N user turns.
	SummaryEvery int
	// History is the window of past messages (default 10; doubled during a protocol).
	History     int
	ToolTimeout time.Duration
	HTTPClient  *http.Client
	Now         func() time.Time
}

// Agent runs conversations.
type Agent struct {
	cfg Config
}

// New returns an Agent; cfg.Skills and cfg.Memory are required.
func New(cfg Config) (*Agent, error) {
	if cfg.Skills == nil || cfg.Memory == nil {
		return nil, errors.New("runtime: Skills and Memory are required")
	}
	if cfg.MaxSteps <= 0 {
		cfg.MaxSteps = 8
	}
	if cfg.MaxInputChars <= 0 {
		cfg.MaxInputChars = 8000
	}
	if cfg.SummaryEvery <= 0 {
		cfg.SummaryEvery = 10
	}
	if cfg.History <= 0 {
		cfg.History = 10
	}
	if cfg.ToolTimeout <= 0 {
		cfg.ToolTimeout = 30 * time.Second
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{}
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Agent{cfg: cfg}, nil
}

// Skills returns the agent's skill set.
func (a *Agent) Skills() *skills.Set { return a.cfg.Skills }

// Offline reports whether the agent runs without a model.
func (a *Agent) Offline() bool { return a.cfg.Model == nil }

// TurnRequest is one user message.
type TurnRequest struct {
	// UserID always comes from authentication, never from a request body.
	UserID         string
	ConversationID string
	Message        string
	// Skill, when set, is activated before the turn.
	Skill string
}

// Role names of persisted non-chat records.
const roleSkill = "skill"

// turn is the state of one running turn.
type turn struct {
	a      *Agent
	userID string
	convID string
	emit   func(Event) error
	emitMu sync.Mutex

	mu       sync.Mutex
	active   string
	computed []string
	formSent bool
}

func (t *turn) send(ev Event) error {
	t.emitMu.Lock()
	defer t.emitMu.Unlock()
	return t.emit(ev)
}

func (t *turn) activeSkill() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.active
}

// Turn runs one user turn, streaming events through emit. It returns the
// final answer text. Errors of the model end the turn with an error event and
// are returned; tool errors go back to the model as results.
func (a *Agent) Turn(ctx context.Context, req TurnRequest, emit func(Event) error) (string, error) {
	if req.UserID == "" {
		return "", errors.New("runtime: a user id is required")
	}
	msg, err := CheckInput(req.Message, a.cfg.MaxInputChars)
	if err != nil {
		return "", err
	}
	if err := a.cfg.Skills.Refresh(); err != nil {
		return "", err
	}
	if req.ConversationID == "" {
		req.ConversationID = fmt.Sprintf("c%d", a.cfg.Now().UnixNano())
	}
	if err := a.cfg.Memory.EnsureUser(ctx, req.UserID); err != nil {
		return "", fmt.Errorf("runtime: user %s: %w", req.UserID, err)
	}
	if _, err := a.cfg.Memory.Conversation(ctx, req.UserID, req.ConversationID); err != nil {
		return "", fmt.Errorf("runtime: %w", err)
	}
	t := &turn{a: a, userID: req.UserID, convID: req.ConversationID, emit: emit}
	all, err := a.cfg.Memory.Messages(ctx, req.UserID, req.ConversationID, 0)
	if err != nil {
		return "", fmt.Errorf("runtime: history: %w", err)
	}
	for _, m := range all {
		if m.Role == roleSkill {
			t.active = m.Content
		}
	}
	var newRecords []knowledge.StoredMessage
	if req.Skill != "" && req.Skill != t.active {
		if _, err := a.cfg.Skills.Get(req.Skill); err != nil {
			return "", err
		}
		t.active = req.Skill
		newRecords = append(newRecords, knowledge.StoredMessage{Role: roleSkill, Content: req.Skill})
	}
	if a.Offline() {
		return a.offlineTurn(ctx, t, msg, newRecords)
	}
	return a.modelTurn(ctx, t, msg, all, newRecords)
}

func (a *Agent) persist(ctx context.Context, t *turn, recs []knowledge.StoredMessage) error {
	if len(recs) == 0 {
		return nil
	}
	_, err := a.cfg.Memory.AppendMessages(context.WithoutCancel(ctx), t.userID, t.convID, recs)
	return err
}

func (a *Agent) modelTurn(ctx context.Context, t *turn, msg string, all []knowledge.StoredMessage, recs []knowledge.StoredMessage) (string, error) {
	startActive := t.active
	protocol := a.matchProtocol(t.active, msg, all)
	window := a.cfg.History
	if protocol != nil {
		window *= 2
	}
	var history []llm.Message
	for _, m := range all {
		if m.Role == llm.RoleUser || m.Role == llm.RoleAssistant {
			history = append(history, llm.Message{Role: m.Role, Content: m.Content})
		}
	}
	if len(history) > window {
		history = history[len(history)-window:]
	}
	conv := append(history, llm.Message{Role: llm.RoleUser, Content: msg})
	recs = append(recs, knowledge.StoredMessage{Role: llm.RoleUser, Content: msg})

	var answer strings.Builder
	reason := "stop"
	step := 0
	for ; step < a.cfg.MaxSteps; step++ {
		sys, err := a.systemPrompt(ctx, t, msg, all, protocol)
		if err != nil {
			return "", err
		}
		req := llm.Request{
			Stage:    "serve",
			Model:    a.cfg.ModelName,
			Messages: append([]llm.Message{{Role: llm.RoleSystem, Content: sys}}, conv...),
			Tools:    a.toolsFor(t.activeSkill()),
			NoCache:  true,
		}
		g := newOutputGuard()
		var stepText strings.Builder
		resp, err := a.cfg.Model.Stream(ctx, req, func(d llm.Delta) error {
			if d.Content == "" {
				return nil
			}
			out := g.Write(d.Content)
			stepText.WriteString(out)
			if out == "" {
				return nil
			}
			return t.send(Event{Type: EventContent, Content: out})
		})
		if rest := g.Flush(); rest != "" {
			stepText.WriteString(rest)
			_ = t.send(Event{Type: EventContent, Content: rest})
		}
		if err != nil {
			_ = a.persist(ctx, t, recs)
			_ = t.send(Event{Type: EventError, Error: err.Error()})
			return answer.String(), fmt.Errorf("runtime: model: %w", err)
		}
		answer.WriteString(stepText.String())
		if len(resp.ToolCalls) == 0 {
			break
		}
		conv = append(conv, llm.Message{Role: llm.RoleAssistant, Content: stepText.String(), ToolCalls: resp.ToolCalls})
		results := a.runCalls(ctx, t, resp.ToolCalls)
		for i, c := range resp.ToolCalls {
			conv = append(conv, llm.Message{Role: llm.RoleTool, ToolCallID: c.ID, Name: c.Name, Content: results[i]})
		}
		if t.formSent {
			reason = "form"
			break
		}
	}
	if step == a.cfg.MaxSteps {
		reason = "max_steps"
		note := fmt.Sprintf("\n（已达到单轮最多 %d 步的上限 serve.max_steps，回答可能不完整。）", a.cfg.MaxSteps)
		answer.WriteString(note)
		_ = t.send(Event{Type: EventContent, Content: note})
	}
	if d := Disclaimer(msg, answer.String()); d != "" && reason != "form" {
		d = "\n" + d
		answer.WriteString(d)
		_ = t.send(Event{Type: EventContent, Content: d})
	}
	if act := t.activeSkill(); act != startActive {
		recs = append(recs, knowledge.StoredMessage{Role: roleSkill, Content: act})
	}
	recs = append(recs, knowledge.StoredMessage{Role: llm.RoleAssistant, Content: answer.String()})
	if err := a.persist(ctx, t, recs); err != nil {
		return answer.String(), fmt.Errorf("runtime: save conversation: %w", err)
	}
	a.maybeSummarize(ctx, t, all, msg, answer.String())
	return answer.String(), t.send(Event{Type: EventDone, Reason: reason, ConversationID: t.convID, Skill: t.activeSkill()})
}

// runCalls executes a step's tool calls in parallel, emitting events, and
// returns the results as JSON text in call order.
func (a *Agent) runCalls(ctx context.Context, t *turn, calls []llm.ToolCall) []string {
	results := make([]string, len(calls))
	var wg sync.WaitGroup
	// use_skill changes the state the other calls see: run it first.
	order := func(first bool) {
		for i, c := range calls {
			if (c.Name == "use_skill") != first {
				continue
			}
			wg.Add(1)
			go func(i int, c llm.ToolCall) {
				defer wg.Done()
				_ = t.send(Event{Type: EventToolCall, Tool: c.Name, CallID: c.ID, Args: rawOrNull(c.Arguments)})
				res, err := a.execTool(ctx, t, c.Name, json.RawMessage(c.Arguments))
				var out json.RawMessage
				isErr := err != nil
				if err != nil {
					out, _ = json.Marshal(map[string]string{"error": err.Error()})
				} else {
					out = res
				}
				results[i] = string(out)
				_ = t.send(Event{Type: EventToolResult, Tool: c.Name, CallID: c.ID, Result: out, IsError: isErr})
			}(i, c)
		}
		wg.Wait()
	}
	order(true)
	order(false)
	return results
}

func rawOrNull(s string) json.RawMessage {
	if json.Valid([]byte(s)) {
		return json.RawMessage(s)
	}
	b, _ := json.Marshal(s)
	return b
}

// matchProtocol returns the protocol of the active skill that the
// conversation triggers (in this message or the recent history).
func (a *Agent) matchProtocol(active, msg string, all []knowledge.StoredMessage) *skills.Protocol {
	if active == "" {
		return nil
	}
	sk, err := a.cfg.Skills.Get(active)
	if err != nil {
		return nil
	}
	texts := []string{msg}
	for i := len(all) - 1; i >= 0 && len(texts) < 6; i-- {
		if all[i].Role == llm.RoleUser {
			texts = append(texts, all[i].Content)
		}
	}
	for i := range sk.Protocols {
		p := &sk.Protocols[i]
		for _, tr := range p.Triggers {
			for _, x := range texts {
				if tr != "" && strings.Contains(strings.ToLower(x), strings.ToLower(tr)) {
					return p
				}
			}
		}
	}
	return nil
}

// maybeSummarize asks the model for a rolling summary every SummaryEvery
// user turns. Failures leave the previous summary in place.
func (a *Agent) maybeSummarize(ctx context.Context, t *turn, all []knowledge.StoredMessage, msg, answer string) {
	users := 1
	for _, m := range all {
		if m.Role == llm.RoleUser {
			users++
		}
	}
	if users%a.cfg.SummaryEvery != 0 {
		return
	}
	ctx = context.WithoutCancel(ctx)
	prev, _ := a.cfg.Memory.Summary(ctx, t.userID, t.convID)
	var sb strings.Builder
	if prev.Text != "" {
		sb.WriteString("之前的摘要 / previous summary:\n" + prev.Text + "\n\n")
	}
	for _, m := range all {
		if m.Seq > prev.UpTo && (m.Role == llm.RoleUser || m.Role == llm.RoleAssistant) {
			fmt.Fprintf(&sb, "%s: %s\n", m.Role, m.Content)
		}
	}
	fmt.Fprintf(&sb, "user: %s\nassistant: %s\n", msg, answer)
	resp, err := a.cfg.Model.Stream(ctx, llm.Request{
		Stage: "serve.summary", Model: a.cfg.ModelName, NoCache: true,
		Messages: []llm.Message{
			{Role: llm.RoleSystem, Content: "用不超过200字总结这段对话中用户的情况、诉求与已得出的结论。Summarize the conversation in under 200 words: the user's situation, requests and conclusions so far."},
			{Role: llm.RoleUser, Content: sb.String()},
		},
	}, func(llm.Delta) error { return nil })
	if err != nil || strings.TrimSpace(resp.Content) == "" {
		return
	}
	msgs, err := a.cfg.Memory.Messages(ctx, t.userID, t.convID, 1)
	upTo := prev.UpTo
	if err == nil && len(msgs) == 1 {
		upTo = msgs[0].Seq
	}
	_ = a.cfg.Memory.SaveSummary(ctx, t.userID, knowledge.Summary{ConversationID: t.convID, UpTo: upTo, Text: strings.TrimSpace(resp.Content), UpdatedAt: a.cfg.Now()})
}
