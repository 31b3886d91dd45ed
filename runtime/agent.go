package runtime

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/pkoukk/tiktoken-go"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/vibelife/vibe/knowledge"
	"github.com/vibelife/vibe/llm"
	"github.com/vibelife/vibe/skills"
	"github.com/vibelife/vibe/websearch"
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
	// EventCorrection replaces the answer streamed so far (Content: the
	// whole corrected answer) when the judge found claims its sources do
	// not support or verdicts that must not be stated as certain.
	EventCorrection = "correction"
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
	// CardType and Props describe a card event; Template, when the skill
	// ships one for the card (skills.CardTemplate), is how the page lays it
	// out.
	CardType string               `json:"card_type,omitempty"`
	Props    json.RawMessage      `json:"props,omitempty"`
	Template *skills.CardTemplate `json:"template,omitempty"`
	// Form is a collect_info form definition.
	Form json.RawMessage `json:"form,omitempty"`
	// Reason ends a turn on a done event: stop, form, max_steps, offline.
	Reason         string `json:"reason,omitempty"`
	ConversationID string `json:"conversation_id,omitempty"`
	Skill          string `json:"skill,omitempty"`
	Error          string `json:"error,omitempty"`
	// Usage, on a done event, adds up the tokens of the model calls the turn
	// made (none in retrieval-only mode).
	Usage *Usage `json:"usage,omitempty"`
	// Citations, on a citations event, are the sources of the answer.
	Citations []Citation `json:"citations,omitempty"`
	// Judge, on a judge event, is what the judge found in the draft.
	Judge *Judgement `json:"judge,omitempty"`
	// Seed, on a done event, is the seed of the turn's random draws (set
	// when the turn drew): pass it as the request's seed to replay them.
	Seed *int64 `json:"seed,omitempty"`
	// Turn, on a done event, is the stored answer's sequence number in its
	// conversation: POST /api/feedback names the answer by it.
	Turn int `json:"turn,omitempty"`
}

// Usage counts the tokens of a turn's model calls: per call the larger of
// the endpoint's usage and vibe's count with the model's tokenizer (see
// llm.Usage).
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

func (u *Usage) add(r llm.Usage) {
	u.PromptTokens += r.PromptTokens
	u.CompletionTokens += r.CompletionTokens
	u.TotalTokens = u.PromptTokens + u.CompletionTokens
}

// Config configures an Agent.
type Config struct {
	Skills *skills.Set
	// Model is nil in offline (retrieval-only) mode.
	Model Model
	// Dictionary gives the English renderings of a Chinese word or
	// character from the user's dictionary (vibe.yaml glossary.dictionary,
	// CC-CEDICT), none for one it lacks; nil: the built-in table of the
	// characters' glosses alone. A Chinese question over English sources
	// is searched with them offline (the reverse bridge, reverseWords).
	Dictionary func(word string) []string
	Searcher   Searcher
	Embedder   QueryEmbedder
	Memory     knowledge.MemoryStore
	// ModelName is passed in requests (empty: the client's default).
	ModelName     string
	MaxSteps      int
	MaxInputChars int
	// SummaryEvery asks the model for a rolling summary every N user turns.
	SummaryEvery int
	// History is the window of past messages (default 10; doubled during a protocol).
	History     int
	ToolTimeout time.Duration
	// PluginDir is the directory relative plugin commands are resolved
	// against (the workspace root; "" keeps the process's). A command
	// plugin runs in its skill's directory (PluginDir for a skill without
	// one).
	PluginDir string
	// PluginOutputBytes bounds what a plugin may write on stdout and on
	// stderr, each, and an HTTP plugin's body (0: DefaultPluginOutputBytes).
	PluginOutputBytes int64
	// CommandPluginSkills, when not nil, names the skills whose command
	// plugins run ("*": every skill); a command plugin of another skill is
	// refused (HTTP plugins are not affected). nil runs them all.
	CommandPluginSkills []string
	// Getenv reads the server's environment for the variables a command
	// plugin declares in plugin.env (nil: os.Getenv).
	Getenv func(string) string
	// Logger receives what the caller is not shown: a plugin's stderr,
	// error bodies and unusable output (nil: slog.Default()).
	Logger *slog.Logger
	// ModelEndpoint names the model's base URL in /readyz (informational).
	ModelEndpoint string
	HTTPClient    *http.Client
	Now           func() time.Time
	// Metrics receive the agent's counts (nil: a new set, see
	// Agent.Metrics).
	Metrics *Metrics
	// TracerProvider makes the spans of turns, model calls, tool calls and
	// searches (nil: none are recorded).
	TracerProvider trace.TracerProvider
	// ToolCacheSize bounds the cache of compute-tool results (0: 256;
	// negative: no cache).
	ToolCacheSize int
	// SkillTokens is the tier-2 budget the instructions of several active
	// skills are stacked within (default DefaultSkillTokens).
	SkillTokens int
	// HistoryKeep bounds the user history kept per user (default
	// DefaultHistoryKeep).
	HistoryKeep int
	// Judge is when an answer is judged before it is streamed: JudgeAuto
	// (""; the skills whose rules carry grave verdicts), JudgeOn, JudgeOff.
	Judge string
	// WebSearch, when set, offers the web_search tool (serve.web_search):
	// the agent may search the web when the skill's knowledge has nothing;
	// the results are marked outside the skill in the answer and its
	// citations. nil (the default) offers no such tool.
	WebSearch websearch.Provider
}

// Agent runs conversations. It is safe for concurrent use.
type Agent struct {
	cfg     Config
	rules   ruleCache
	metrics *Metrics
	tracer  trace.Tracer
	// cache holds deterministic tools' results (nil: none).
	cache *toolCache
	// bridger carries questions over to the sources' language for search
	// (the model's rewrites, cached; the glossary).
	bridger *Bridger
	// bg tracks work that outlives a turn (rolling summaries).
	bg sync.WaitGroup
	// graveSkills caches, per loaded skill, whether its rules carry grave
	// verdicts (judgeFor).
	graveSkills sync.Map
	// tk counts tokens for the tier-2 budget, loaded once.
	tkOnce sync.Once
	tk     *tiktoken.Tiktoken
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
	if cfg.PluginDir != "" {
		// exec resolves a relative program against the command's Dir, so
		// both must be absolute for plugins/x to mean PluginDir/plugins/x.
		abs, err := filepath.Abs(cfg.PluginDir)
		if err != nil {
			return nil, fmt.Errorf("runtime: plugin directory %s: %w", cfg.PluginDir, err)
		}
		cfg.PluginDir = abs
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.PluginOutputBytes <= 0 {
		cfg.PluginOutputBytes = DefaultPluginOutputBytes
	}
	if cfg.Getenv == nil {
		cfg.Getenv = os.Getenv
	}
	if cfg.SkillTokens <= 0 {
		cfg.SkillTokens = DefaultSkillTokens
	}
	if cfg.HistoryKeep <= 0 {
		cfg.HistoryKeep = DefaultHistoryKeep
	}
	switch cfg.Judge {
	case "":
		cfg.Judge = JudgeAuto
	case JudgeAuto, JudgeOn, JudgeOff:
	default:
		return nil, fmt.Errorf("runtime: serve.judge %q: use auto (judge the skills whose rules carry grave verdicts), on or off", cfg.Judge)
	}
	if cfg.Metrics == nil {
		cfg.Metrics = NewMetrics()
	}
	if cfg.TracerProvider == nil {
		cfg.TracerProvider = noop.NewTracerProvider()
	}
	size := cfg.ToolCacheSize
	if size == 0 {
		size = DefaultToolCacheSize
	}
	a := &Agent{cfg: cfg, metrics: cfg.Metrics, tracer: cfg.TracerProvider.Tracer(tracerName), cache: newToolCache(size)}
	if cfg.Model != nil {
		a.cfg.Model = observedModel{Model: cfg.Model, m: a.metrics, tracer: a.tracer}
	}
	a.bridger = &Bridger{Model: a.cfg.Model, ModelName: a.cfg.ModelName, Dictionary: cfg.Dictionary}
	return a, nil
}

// logger is where detail the caller is not shown goes.
func (a *Agent) logger() *slog.Logger {
	if a.cfg.Logger != nil {
		return a.cfg.Logger
	}
	return slog.Default()
}

// Metrics returns the agent's metrics.
func (a *Agent) Metrics() *Metrics { return a.metrics }

// Wait blocks until the background work started by finished turns (rolling
// summaries) is done; call it before closing the memory store.
func (a *Agent) Wait() { a.bg.Wait() }

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
	// Skill, when set, is activated before the turn (several skills:
	// names joined by commas).
	Skill string
	// Form, when set, is a submitted collect_info form: the turn's message
	// is made from it (Message is then ignored) and its dotted fields are
	// saved to the profile.
	Form *FormResponse
	// Transcript, when not nil, is the conversation so far as the client
	// holds it (the OpenAI-compatible endpoint resends it on every request,
	// and front-ends edit and regenerate it): the prompt's history window is
	// taken from it instead of the stored messages. The stored conversation
	// still supplies the active skill, the protocol state and the summary,
	// and records the turn.
	Transcript []llm.Message
	// TranscriptScope, when set, keys the state a conversation keeps
	// between turns by the client's transcript instead of a ConversationID
	// (which is then ignored): the OpenAI-compatible endpoint without
	// X-Conversation-ID passes the model the client asked for. See
	// transcriptNode: the turn starts from the state (active skill, protocol
	// in progress, summary) stored under the transcript so far (none for
	// its first message) and stores the state it ends with, together with
	// the turn, under the transcript that follows: this one, the message
	// and the answer as the client receives it (EventText). So the state of
	// a chat follows its own transcript: chats that open alike share
	// nothing once their messages or answers differ, and an edited message
	// starts from the state before it. A client that alters the answers it
	// resends gets no state from the turns before.
	TranscriptScope string
	// Seed, when set, seeds the turn's random draws: the done event and
	// each draw's result give the seed a turn used, and a turn replayed
	// with it (the same tool calls in the same order) draws the same items.
	Seed *int64
	// ReplaceLast makes the turn replace the conversation's last question
	// and its answer (the page's regenerate and edit): they leave the
	// history the model and the page see, and Message is asked in their
	// place. It needs a ConversationID with a question in it.
	ReplaceLast bool
}

// Role names of persisted non-chat records: the active skill, and the
// protocol in progress ("" once it is finished).
const (
	roleSkill    = "skill"
	roleProtocol = "protocol"
)

// randomID returns prefix and 24 random hex digits (conversation ids "c-…").
func randomID(prefix string) string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}

// turn is the state of one running turn.
type turn struct {
	a      *Agent
	userID string
	convID string
	// stateConv is the conversation the turn's starting state was read
	// from: convID, or the transcript's node ("" for none).
	stateConv string
	// transcript is the client's history when it holds one (nil: the
	// stored messages are the history).
	transcript []llm.Message
	// nodes is set for a turn keyed by its transcript (TranscriptScope,
	// the scope); message is the message as the client sent it and
	// rendered the answer as the client receives it, which with the
	// transcript name the conversation the turn is stored in.
	nodes    bool
	scope    string
	message  string
	rendered strings.Builder
	// sourcesAdvice is what the skills' sources say of the message, asked
	// once a turn however many steps rebuild the prompt (routesources.go).
	sourcesOnce   sync.Once
	sourcesAdvice string
	emit          func(Event) error
	emitMu        sync.Mutex
	// shown are the turn's card and form events, in order, kept with its
	// answer (with the citations) so a reloaded conversation shows them.
	shown []Event
	// answerSeq is the sequence number of the stored answer (0 until it is
	// stored), which the done event carries.
	answerSeq int

	mu sync.Mutex
	// active is the active skills joined by skillSep, primary first;
	// topic is what use_skill was asked to focus on.
	active   string
	topic    string
	question string
	computed []string
	formSent bool
	// seed seeds the turn's random draws (set on first use unless the
	// request gave one); calls counts the turn's tool calls; draws are the
	// results of its random tools, stored with the turn.
	seed   int64
	seeded bool
	calls  int
	draws  []string
	// user is the narrative of the profile, read once per turn and again
	// after save_skill_data changed it; summary is read once per turn.
	user    string
	userOK  bool
	summary *knowledge.Summary
	// citations are the sources the turn consulted (rules given to the
	// model or returned by get_rules, passages of search_knowledge), sent
	// as a citations event before done.
	citations []Citation
	citeSeen  map[string]bool
	// inTurn is set for a model turn (not the tools API): use_skill then
	// answers with a confirmation, its instructions being in the prompt.
	inTurn bool
	// inPrompt are the rules (skill|id) the system prompt of the turn's
	// current step carries, set anew each time it is built; given are
	// those get_rules returned earlier in this turn. Both are the turn's:
	// what the model of this conversation has, never another's.
	inPrompt map[string]bool
	given    map[string]bool
	// collect is set when the step's prompt offers a collect step.
	collect bool
	// sources are the full texts of the sources the turn consulted, by
	// chunk or rule id (the judge's and the check's).
	sources map[string]string
	// judgement is the judge's, for the stored answer.
	judgement *Judgement
}

// turnSeed returns the seed of the turn's draws, choosing one on first use.
func (t *turn) turnSeed() int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.seeded {
		t.seed, t.seeded = newSeed(), true
	}
	return t.seed
}

// usedSeed returns the turn's seed when it drew.
func (t *turn) usedSeed() (int64, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.seed, len(t.draws) > 0
}

func (t *turn) send(ev Event) error {
	t.emitMu.Lock()
	defer t.emitMu.Unlock()
	if t.nodes {
		t.rendered.WriteString(EventText(ev))
	}
	if ev.Type == EventCard || ev.Type == EventForm {
		t.shown = append(t.shown, ev)
	}
	if ev.Type == EventDone && ev.Turn == 0 {
		ev.Turn = t.answerSeq
	}
	return t.emit(ev)
}

// answerRecord is the stored assistant message of the turn: the answer,
// and the events shown beside it (the cards and forms, then the citations
// cs) for a client reloading the conversation (GET
// /api/conversations/{id}).
func (t *turn) answerRecord(answer string, cs []Citation) knowledge.StoredMessage {
	t.emitMu.Lock()
	evs := append([]Event(nil), t.shown...)
	t.emitMu.Unlock()
	t.mu.Lock()
	if t.judgement != nil {
		evs = append(evs, Event{Type: EventJudge, Judge: t.judgement})
	}
	t.mu.Unlock()
	if len(cs) > 0 {
		evs = append(evs, Event{Type: EventCitations, Citations: cs})
	}
	rec := knowledge.StoredMessage{Role: llm.RoleAssistant, Content: answer}
	if len(evs) > 0 {
		if b, err := json.Marshal(evs); err == nil {
			rec.Events = b
		}
	}
	return rec
}

// EventText is an event as text for a plain chat client: the content, and
// cards and forms as text blocks; "" for the other events.
func EventText(ev Event) string {
	switch ev.Type {
	case EventContent:
		return ev.Content
	case EventCard:
		return fmt.Sprintf("\n\n[card %s] %s\n\n", ev.CardType, ev.Props)
	case EventForm:
		return fmt.Sprintf("\n\n[form] %s\n\n", ev.Form)
	case EventCorrection:
		// A stream cannot take back what it sent: the corrected answer
		// follows, marked.
		return "\n\n（更正 / corrected）\n" + ev.Content
	}
	return ""
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
	start := time.Now()
	st := &turnStats{}
	ctx = context.WithValue(ctx, turnStatsKey{}, st)
	ctx, span := a.tracer.Start(ctx, "vibe.turn", trace.WithAttributes(attribute.String("vibe.request_id", RequestID(ctx)),
		attribute.String("vibe.user", req.UserID), attribute.String("vibe.conversation_id", req.ConversationID)))
	defer span.End()
	info := TurnInfo{ConversationID: req.ConversationID, Skill: req.Skill, Message: req.Message}
	answer, err := a.turn(ctx, req, func(ev Event) error {
		switch ev.Type {
		case EventDone:
			info.Outcome, info.ConversationID, info.Skill = ev.Reason, ev.ConversationID, ev.Skill
			if ev.Usage != nil {
				info.Usage = *ev.Usage
			}
		case EventToolResult:
			st.toolCalls.Add(1)
		}
		return emit(ev)
	}, st)
	info.Duration = time.Since(start)
	info.Answer = answer
	info.ModelCalls, info.ToolCalls = int(st.modelCalls.Load()), int(st.toolCalls.Load())
	info.Outcome, info.ErrorKind = turnOutcome(ctx, info.Outcome, err, st)
	m := a.metrics
	m.turns.WithLabelValues(info.Outcome).Inc()
	m.turnSeconds.WithLabelValues(info.Outcome).Observe(info.Duration.Seconds())
	m.turnToolCalls.Observe(float64(info.ToolCalls))
	if !a.Offline() {
		m.turnTokens.Observe(float64(info.Usage.TotalTokens))
	}
	m.classifySearches(st, answer)
	switch info.ErrorKind {
	case "", errKindModel, errKindTool, errKindSearch:
		// counted where they happened
	default:
		m.fail(info.ErrorKind)
	}
	if info.Outcome == "rejected" {
		m.guard(guardInputRejected)
	}
	span.SetAttributes(attribute.String("vibe.outcome", info.Outcome), attribute.String("vibe.skill", info.Skill),
		attribute.String("vibe.conversation_id", info.ConversationID), attribute.Int("vibe.model_calls", info.ModelCalls),
		attribute.Int("vibe.tool_calls", info.ToolCalls), attribute.Int("gen_ai.usage.input_tokens", info.Usage.PromptTokens),
		attribute.Int("gen_ai.usage.output_tokens", info.Usage.CompletionTokens))
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
	}
	if ri := requestInfoFrom(ctx); ri != nil {
		ri.mu.Lock()
		ri.turn = &info
		ri.mu.Unlock()
	}
	return answer, err
}

// turn runs Turn's turn; st collects what the metrics need.
func (a *Agent) turn(ctx context.Context, req TurnRequest, emit func(Event) error, st *turnStats) (string, error) {
	if req.UserID == "" {
		return "", errors.New("runtime: a user id is required")
	}
	text := req.Message
	if req.Form != nil {
		// Only for a form the conversation showed: checked before the
		// form's fields reach the profile.
		if err := a.checkFormShown(ctx, req.UserID, req.ConversationID); err != nil {
			return "", err
		}
		var err error
		if text, err = a.formMessage(ctx, req.UserID, req.Form); err != nil {
			return "", err
		}
	}
	msg, err := CheckInput(text, a.cfg.MaxInputChars)
	if err != nil {
		return "", err
	}
	if err := a.cfg.Skills.Refresh(); err != nil {
		return "", err
	}
	t := &turn{a: a, userID: req.UserID, convID: req.ConversationID, stateConv: req.ConversationID, transcript: req.Transcript, emit: emit}
	if req.Seed != nil {
		if *req.Seed < 0 || *req.Seed > maxSeed {
			return "", fmt.Errorf("runtime: seed %d is outside 0..2^53-1", *req.Seed)
		}
		t.seed, t.seeded = *req.Seed, true
	}
	if req.TranscriptScope != "" {
		// The conversation is named once the answer is known (persist).
		t.nodes, t.scope, t.message = true, req.TranscriptScope, req.Message
		t.convID, t.stateConv = "", transcriptNode(req.UserID, req.TranscriptScope, req.Transcript)
		if err := a.cfg.Memory.EnsureUser(ctx, req.UserID); err != nil {
			st.setErr(errKindStore)
			return "", fmt.Errorf("runtime: user %s: %w", req.UserID, err)
		}
	} else {
		if t.convID == "" {
			t.convID = randomID("c-")
		}
		if err := a.OpenConversation(ctx, req.UserID, t.convID); err != nil {
			if !errors.Is(err, ErrConversationNotFound) {
				st.setErr(errKindStore)
			}
			return "", err
		}
		t.stateConv = t.convID
	}
	var all []knowledge.StoredMessage
	refreshed := false
	if t.stateConv != "" {
		var err error
		if all, refreshed, err = a.history(ctx, req.UserID, t.stateConv); err != nil {
			st.setErr(errKindStore)
			return "", err
		}
	}
	if req.ReplaceLast {
		if t.nodes || !hasQuestion(all) {
			return "", ErrNothingToReplace
		}
		all = withoutRetracted(append(all, knowledge.StoredMessage{Role: roleRetract}))
	}
	for _, m := range all {
		switch m.Role {
		case roleSkill:
			t.active = m.Content
		case roleTopic:
			t.topic = m.Content
		}
	}
	var newRecords []knowledge.StoredMessage
	if t.nodes {
		// The transcript's next node starts with the state this one ended with.
		newRecords = carried(all)
	} else if refreshed {
		// Record the skill again, so the next turns find it among the
		// recent messages. (A protocol is not re-recorded: its progress
		// counts from its start record. One still unfinished after
		// recentMessages messages is dropped.)
		newRecords = append(newRecords, knowledge.StoredMessage{Role: roleSkill, Content: t.active})
	}
	if req.ReplaceLast {
		newRecords = append(newRecords, knowledge.StoredMessage{Role: roleRetract})
	}
	if req.Skill != "" && req.Skill != t.active {
		for _, n := range splitSkills(req.Skill) {
			if _, err := a.cfg.Skills.Get(n); err != nil {
				return "", err
			}
		}
		t.active = strings.Join(a.cfg.Skills.WithRequired(splitSkills(req.Skill)), skillSep)
		newRecords = append(newRecords, knowledge.StoredMessage{Role: roleSkill, Content: req.Skill})
	}
	if a.Offline() {
		return a.offlineTurn(ctx, t, msg, newRecords)
	}
	// A turn that starts judged (its skill's rules carry grave verdicts, or
	// serve.judge: on) has its message classified too: the input guardrail
	// as a classifier request, the phrase list its fallback.
	if a.judgeFor(t.active) && a.cfg.Judge != JudgeOff && (t.active != "" || a.cfg.Judge == JudgeOn) {
		if err := a.classifyInput(ctx, msg); err != nil {
			return "", err
		}
	}
	return a.modelTurn(ctx, t, msg, all, newRecords)
}

// ErrConversationNotFound is returned for a conversation id the user has
// no conversation under (ids are per user, so another user's id is simply
// not the user's). Callers answer it as not found.
var ErrConversationNotFound = errors.New("conversation not found")

// OpenConversation makes sure the user exists and may continue the
// conversation id, creating the conversation when the id is new for this
// user (ids are per user: another user's id names a separate conversation).
// The HTTP API calls it before a response starts, so a refusal is a status
// code.
func (a *Agent) OpenConversation(ctx context.Context, userID, convID string) error {
	if err := CheckConversationID(convID); err != nil {
		return err
	}
	if err := a.cfg.Memory.EnsureUser(ctx, userID); err != nil {
		return fmt.Errorf("runtime: user %s: %w", userID, err)
	}
	if _, err := a.cfg.Memory.Conversation(ctx, userID, convID); err != nil {
		if errors.Is(err, knowledge.ErrNotFound) {
			return fmt.Errorf("conversation %q: %w", convID, ErrConversationNotFound)
		}
		return fmt.Errorf("runtime: conversation %s: %w", convID, err)
	}
	return nil
}

// recentMessages is how many stored messages a turn reads: more than the
// doubled history window, enough to hold the records of the skill and the
// protocol in progress.
const recentMessages = 200

// history returns the recent messages of a conversation. When they hold no
// skill record (a long conversation whose skill was chosen long ago) it reads
// the whole conversation and says so, and the turn records the state again.
func (a *Agent) history(ctx context.Context, userID, convID string) ([]knowledge.StoredMessage, bool, error) {
	all, err := a.cfg.Memory.Messages(ctx, userID, convID, recentMessages)
	if err != nil {
		return nil, false, fmt.Errorf("runtime: history: %w", err)
	}
	if len(all) < recentMessages {
		return withoutRetracted(all), false, nil
	}
	for _, m := range all {
		if m.Role == roleSkill {
			return withoutRetracted(all), false, nil
		}
	}
	all, err = a.cfg.Memory.Messages(ctx, userID, convID, 0)
	if err != nil {
		return nil, false, fmt.Errorf("runtime: history: %w", err)
	}
	return withoutRetracted(all), true, nil
}

func (a *Agent) persist(ctx context.Context, t *turn, recs []knowledge.StoredMessage) error {
	if len(recs) == 0 {
		return nil
	}
	ctx = context.WithoutCancel(ctx)
	if t.nodes {
		t.emitMu.Lock()
		answer := t.rendered.String()
		t.emitMu.Unlock()
		next := append(append([]llm.Message(nil), t.transcript...), llm.Message{Role: llm.RoleUser, Content: t.message}, llm.Message{Role: llm.RoleAssistant, Content: answer})
		t.convID = transcriptNode(t.userID, t.scope, next)
		if err := a.OpenConversation(ctx, t.userID, t.convID); err != nil {
			return err
		}
	}
	stored, err := a.cfg.Memory.AppendMessages(ctx, t.userID, t.convID, recs)
	if err != nil {
		return err
	}
	for _, m := range stored {
		if m.Role == llm.RoleAssistant {
			t.emitMu.Lock()
			t.answerSeq = m.Seq
			t.emitMu.Unlock()
		}
	}
	if t.nodes {
		// A transcript node carries its parent's summary too (a summary
		// due after this turn replaces it).
		sum, err := a.summaryOf(ctx, t)
		if err != nil || sum.Text == "" {
			return err
		}
		sum.ConversationID = t.convID
		return a.cfg.Memory.SaveSummary(ctx, t.userID, sum)
	}
	return nil
}

// summaryOf returns the summary the turn started with, read once.
func (a *Agent) summaryOf(ctx context.Context, t *turn) (knowledge.Summary, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.summary == nil {
		var sum knowledge.Summary
		if t.stateConv != "" {
			var err error
			if sum, err = a.cfg.Memory.Summary(ctx, t.userID, t.stateConv); err != nil {
				return sum, fmt.Errorf("runtime: summary: %w", err)
			}
		}
		t.summary = &sum
	}
	return *t.summary, nil
}

// chatHistory returns the last n user and assistant messages of the stored
// conversation.
func chatHistory(all []knowledge.StoredMessage, n int) []llm.Message {
	var h []llm.Message
	for _, m := range all {
		if m.Role == llm.RoleUser || m.Role == llm.RoleAssistant {
			h = append(h, llm.Message{Role: m.Role, Content: m.Content})
		}
	}
	return lastChat(h, n)
}

// lastChat returns the last n user and assistant messages of h, each
// through the input guardrail when it is the user's (a client-held
// transcript is user input too); messages the guardrail refuses are left out.
func lastChat(h []llm.Message, n int) []llm.Message {
	var out []llm.Message
	for _, m := range h {
		switch m.Role {
		case llm.RoleUser:
			if c, err := CheckInput(m.Content, 0); err == nil {
				out = append(out, llm.Message{Role: m.Role, Content: c})
			}
		case llm.RoleAssistant:
			out = append(out, llm.Message{Role: m.Role, Content: m.Content})
		}
	}
	if len(out) > n {
		out = out[len(out)-n:]
	}
	return out
}

func (a *Agent) modelTurn(ctx context.Context, t *turn, msg string, all []knowledge.StoredMessage, recs []knowledge.StoredMessage) (string, error) {
	transcript := t.transcript
	t.inTurn = true
	startActive, startTopic := t.active, t.topic
	t.question = msg
	startProtocol := recordedProtocol(all)
	recs = append(recs, knowledge.StoredMessage{Role: llm.RoleUser, Content: msg})
	// flushed are the records of this turn already stored (see memoryWrites).
	var flushed []knowledge.StoredMessage
	// stepMsgs are this turn's assistant tool-call and tool messages.
	var stepMsgs []llm.Message
	var answer strings.Builder
	// sent is how much of answer has been streamed: a judged step's text
	// is held back until the judge has read the whole answer.
	sent := 0
	judged := false
	var protocol *skills.Protocol
	var usage Usage
	reason := "stop"
	step := 0
	for ; step < a.cfg.MaxSteps; step++ {
		// The skill may have changed in the previous step (use_skill), and
		// with it the protocol, the window, the rules and the tools.
		active := t.activeSkill()
		protocol = a.protocolFor(active, msg, all)
		window := a.cfg.History
		if protocol != nil {
			window *= 2
		}
		sys, err := a.systemPrompt(ctx, t, msg, all, protocol)
		if err != nil {
			return "", err
		}
		msgs := make([]llm.Message, 0, window+2+len(stepMsgs))
		msgs = append(msgs, llm.Message{Role: llm.RoleSystem, Content: sys})
		if transcript != nil {
			msgs = append(msgs, lastChat(transcript, window)...)
		} else {
			msgs = append(msgs, chatHistory(all, window)...)
		}
		msgs = append(msgs, llm.Message{Role: llm.RoleUser, Content: msg})
		msgs = append(msgs, stepMsgs...)
		req := llm.Request{
			Stage:    "serve",
			Model:    a.cfg.ModelName,
			Messages: msgs,
			Tools:    a.turnTools(a.stepState(t, active, all), msg),
			NoCache:  true,
		}
		g := newOutputGuard()
		var stepText strings.Builder
		// Once a step is judged, the rest of the turn is held too.
		judged = judged || a.judgeFor(active)
		resp, err := a.cfg.Model.Stream(ctx, req, func(d llm.Delta) error {
			if d.Content == "" {
				return nil
			}
			out := g.Write(d.Content)
			stepText.WriteString(out)
			if out == "" || judged {
				return nil
			}
			return t.send(Event{Type: EventContent, Content: out})
		})
		usage.add(resp.Usage)
		if rest := g.Flush(); rest != "" {
			stepText.WriteString(rest)
			if !judged {
				_ = t.send(Event{Type: EventContent, Content: rest})
			}
		}
		if !judged {
			sent = answer.Len() + stepText.Len()
		}
		if g.softened > 0 {
			a.metrics.guardrails.WithLabelValues(guardOutputSoftened).Add(float64(g.softened))
		}
		if err != nil {
			statsFrom(ctx).setErr(errKindModel)
			// A judged turn held its text back (sent <= answer.Len()); an
			// unjudged step's text has streamed already and sent counts it.
			if judged {
				if held := answer.String()[sent:] + stepText.String(); held != "" {
					// The turn failed: what the model said is not judged.
					_ = t.send(Event{Type: EventContent, Content: held})
				}
			}
			_ = a.persist(ctx, t, recs)
			_ = t.send(Event{Type: EventError, Error: err.Error()})
			return answer.String(), fmt.Errorf("runtime: model: %w", err)
		}
		answer.WriteString(stepText.String())
		if len(resp.ToolCalls) == 0 {
			break
		}
		stepMsgs = append(stepMsgs, llm.Message{Role: llm.RoleAssistant, Content: stepText.String(), ToolCalls: resp.ToolCalls})
		// A step that writes the profile stores the turn's records so far
		// (its user message) before the write and the write's record right
		// after: a replica killed at any point leaves a history that shows
		// the turn whose write the profile holds.
		writes := !t.nodes && writesMemory(resp.ToolCalls)
		if writes && len(recs) > 0 {
			if err := a.persist(ctx, t, recs); err == nil {
				flushed, recs = append(flushed, recs...), nil
			}
		}
		results := a.runCalls(ctx, t, resp.ToolCalls)
		for i, c := range resp.ToolCalls {
			stepMsgs = append(stepMsgs, llm.Message{Role: llm.RoleTool, ToolCallID: c.ID, Name: c.Name, Content: results[i]})
		}
		if effects := memoryWrites(resp.ToolCalls, results); writes && len(effects) > 0 {
			batch := append(recs, effects...)
			if err := a.persist(ctx, t, batch); err == nil {
				flushed, recs = append(flushed, batch...), nil
			}
		}
		if t.formSent {
			reason = "form"
			break
		}
	}
	if judged || sent < answer.Len() {
		// The held text: judged (not a form's request), then streamed;
		// when the judge changed what was already streamed, a correction
		// event carries the whole answer.
		final := answer.String()
		if judged && reason != "form" && strings.TrimSpace(final) != "" {
			var j Judgement
			final, j = a.judge(ctx, t, msg, final)
			t.mu.Lock()
			t.judgement = &j
			t.mu.Unlock()
		}
		if strings.HasPrefix(final, answer.String()[:sent]) {
			if rest := final[sent:]; rest != "" {
				_ = t.send(Event{Type: EventContent, Content: rest})
			}
		} else {
			_ = t.send(Event{Type: EventCorrection, Content: final})
		}
		answer.Reset()
		answer.WriteString(final)
		t.mu.Lock()
		j := t.judgement
		t.mu.Unlock()
		if j != nil {
			_ = t.send(Event{Type: EventJudge, Judge: j})
		}
	}
	if step == a.cfg.MaxSteps {
		a.metrics.guard(guardMaxSteps)
		reason = "max_steps"
		note := fmt.Sprintf("\n（已达到单轮最多 %d 步的上限 serve.max_steps，回答可能不完整。）", a.cfg.MaxSteps)
		answer.WriteString(note)
		_ = t.send(Event{Type: EventContent, Content: note})
	}
	if c := verdictCaveat(answer.String()); c != "" && a.fateIn(t.activeSkill()) {
		a.metrics.guard(guardVerdictCaveat)
		c = "\n" + c
		answer.WriteString(c)
		_ = t.send(Event{Type: EventContent, Content: c})
	}
	if d := Disclaimer(msg, answer.String()); d != "" && reason != "form" {
		a.metrics.guard(guardDisclaimer)
		d = "\n" + d
		answer.WriteString(d)
		_ = t.send(Event{Type: EventContent, Content: d})
	}
	if note := webNote(t.answerCitations(answer.String())); note != "" {
		// Web results are outside the skill: the answer says so.
		answer.WriteString(note)
		_ = t.send(Event{Type: EventContent, Content: note})
	}
	if act := t.activeSkill(); act != startActive {
		recs = append(recs, knowledge.StoredMessage{Role: roleSkill, Content: act})
	}
	if top := t.activeTopic(); top != startTopic {
		recs = append(recs, knowledge.StoredMessage{Role: roleTopic, Content: top})
	}
	if protocol != nil && protocol.Name != startProtocol {
		recs = append(recs, knowledge.StoredMessage{Role: roleProtocol, Content: protocol.Name})
	}
	t.mu.Lock()
	for _, d := range t.draws {
		recs = append(recs, knowledge.StoredMessage{Role: roleDraw, Content: d})
	}
	t.mu.Unlock()
	a.addNamedRules(ctx, t, answer.String())
	cites := t.answerCitations(answer.String())
	recs = append(recs, t.answerRecord(answer.String(), cites))
	if protocol != nil && len(protocol.Steps) > 0 {
		// Finished with this answer: record the end, so a later trigger
		// starts the protocol afresh.
		run := append(append(append([]knowledge.StoredMessage(nil), protocolRun(all, protocol)...), flushed...), recs...)
		if _, next := progress(protocol, run); next == "" {
			recs = append(recs, knowledge.StoredMessage{Role: roleProtocol, Content: ""})
		}
	}
	if err := a.persist(ctx, t, recs); err != nil {
		statsFrom(ctx).setErr(errKindStore)
		return answer.String(), fmt.Errorf("runtime: save conversation: %w", err)
	}
	if err := t.sendCitations(cites); err != nil {
		return answer.String(), err
	}
	if a.summaryDue(t, all) {
		a.bg.Add(1)
		go func() {
			defer a.bg.Done()
			a.summarize(context.WithoutCancel(ctx), t, all, msg, answer.String())
		}()
	}
	done := Event{Type: EventDone, Reason: reason, ConversationID: t.convID, Skill: t.activeSkill(), Usage: &usage}
	if seed, ok := t.usedSeed(); ok {
		done.Seed = &seed
	}
	return answer.String(), t.send(done)
}

// roleEffect records a profile write a turn made (the tool and its result),
// stored as soon as it is made together with the turn's user message.
const roleEffect = "effect"

// writesMemory reports whether a step's calls include a profile write.
func writesMemory(calls []llm.ToolCall) bool {
	for _, c := range calls {
		if c.Name == "save_skill_data" || c.Name == "upsert_user_profile" {
			return true
		}
	}
	return false
}

// memoryWrites returns the records of the step's successful profile writes
// (save_skill_data, upsert_user_profile).
func memoryWrites(calls []llm.ToolCall, results []string) []knowledge.StoredMessage {
	var out []knowledge.StoredMessage
	for i, c := range calls {
		if (c.Name == "save_skill_data" || c.Name == "upsert_user_profile") && !strings.HasPrefix(results[i], `{"error"`) {
			out = append(out, knowledge.StoredMessage{Role: roleEffect, Content: c.Name + " " + results[i]})
		}
	}
	return out
}

// runCalls executes a step's tool calls in parallel, emitting events, and
// returns the results as JSON text in call order.
func (a *Agent) runCalls(ctx context.Context, t *turn, calls []llm.ToolCall) []string {
	results := make([]string, len(calls))
	t.mu.Lock()
	base := t.calls
	t.calls += len(calls)
	t.mu.Unlock()
	var wg sync.WaitGroup
	// The calls are announced in the order the model made them, before any
	// runs (they run in parallel, and their results arrive as they finish).
	for _, c := range calls {
		_ = t.send(Event{Type: EventToolCall, Tool: c.Name, CallID: c.ID, Args: rawOrNull(c.Arguments)})
	}
	// use_skill changes the state the other calls see: run it first.
	order := func(first bool) {
		for i, c := range calls {
			if (c.Name == "use_skill") != first {
				continue
			}
			wg.Add(1)
			go func(i int, c llm.ToolCall) {
				defer wg.Done()
				res, err := a.runTool(withCallSeq(ctx, base+i), t, c.Name, json.RawMessage(c.Arguments))
				var out json.RawMessage
				isErr := err != nil
				if err != nil {
					out, _ = json.Marshal(map[string]string{"error": err.Error()})
					results[i] = string(out)
				} else {
					out = res
					// Passages reach the model wrapped (wrap.go); the
					// event keeps the JSON.
					results[i] = modelResult(c.Name, out)
					t.noteToolSources(c.Name, out)
					if c.Name == "get_rules" && t.inTurn {
						results[i] = t.leanRules(out)
					}
					t.addCitations(a.toolCitations(ctx, c.Name, out))
					a.recordHistory(ctx, t, c.Name, json.RawMessage(c.Arguments), out)
				}
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

// recordedProtocol returns the protocol the history says is in progress
// ("" when none).
func recordedProtocol(all []knowledge.StoredMessage) string {
	for i := len(all) - 1; i >= 0; i-- {
		if all[i].Role == roleProtocol {
			return all[i].Content
		}
	}
	return ""
}

// since returns the messages after the last record starting the named
// protocol (all of them when there is none).
func since(all []knowledge.StoredMessage, name string) []knowledge.StoredMessage {
	for i := len(all) - 1; i >= 0; i-- {
		if all[i].Role == roleProtocol && all[i].Content == name {
			return all[i+1:]
		}
	}
	return all
}

// protocolRun returns the messages of the run of p in progress: those since
// its start record, or none when the history records no run of it in
// progress (it starts with this turn).
func protocolRun(all []knowledge.StoredMessage, p *skills.Protocol) []knowledge.StoredMessage {
	if recordedProtocol(all) != p.Name {
		return nil
	}
	return since(all, p.Name)
}

// protocolFor returns the protocol of the active skill in progress, as
// coreagent-refactor.md describes: one the message triggers (skills.MatchTrigger), else the one the
// history recorded, as long as it is not finished. A protocol with steps is
// finished once every step marker appeared in the assistant's messages since
// it started; one without steps stays in progress while its start is within
// the doubled history window.
func (a *Agent) protocolFor(active, msg string, all []knowledge.StoredMessage) *skills.Protocol {
	for _, n := range splitSkills(active) {
		if p := a.skillProtocol(n, msg, all); p != nil {
			return p
		}
	}
	return nil
}

// skillProtocol is protocolFor for one of the active skills.
func (a *Agent) skillProtocol(active, msg string, all []knowledge.StoredMessage) *skills.Protocol {
	sk, err := a.cfg.Skills.Get(active)
	if err != nil || len(sk.Protocols) == 0 {
		return nil
	}
	for i := range sk.Protocols {
		for _, tr := range sk.Protocols[i].Triggers {
			if skills.MatchTrigger(msg, tr) {
				return &sk.Protocols[i]
			}
		}
	}
	name := recordedProtocol(all)
	if name == "" {
		return nil
	}
	for i := range sk.Protocols {
		p := &sk.Protocols[i]
		if p.Name != name {
			continue
		}
		after := protocolRun(all, p)
		if len(p.Steps) > 0 {
			if _, next := progress(p, after); next == "" {
				return nil
			}
			return p
		}
		n := 0
		for _, m := range after {
			if m.Role == llm.RoleUser || m.Role == llm.RoleAssistant {
				n++
			}
		}
		if n < 2*a.cfg.History {
			return p
		}
	}
	return nil
}

// summaryDue reports whether this turn is the SummaryEvery-th user turn of
// the conversation: counted in the history all, or in the client's
// transcript for a transcript node (whose stored history is one turn).
func (a *Agent) summaryDue(t *turn, all []knowledge.StoredMessage) bool {
	users := 1
	if t.nodes {
		for _, m := range t.transcript {
			if m.Role == llm.RoleUser {
				users++
			}
		}
	} else {
		for _, m := range all {
			if m.Role == llm.RoleUser {
				users++
			}
		}
	}
	return users%a.cfg.SummaryEvery == 0
}

// chatOf returns the user and assistant messages of a transcript.
func chatOf(h []llm.Message) []llm.Message {
	var out []llm.Message
	for _, m := range h {
		if m.Role == llm.RoleUser || m.Role == llm.RoleAssistant {
			out = append(out, m)
		}
	}
	return out
}

// summarize asks the model for the rolling summary of the conversation: the
// previous summary plus the messages since. Failures leave the previous
// summary in place. A stored conversation's summary covers its messages up
// to a sequence number; a transcript node's covers the transcript's first
// UpTo messages.
func (a *Agent) summarize(ctx context.Context, t *turn, all []knowledge.StoredMessage, msg, answer string) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	prev, _ := a.summaryOf(ctx, t)
	var sb strings.Builder
	if prev.Text != "" {
		sb.WriteString("之前的摘要 / previous summary:\n" + prev.Text + "\n\n")
	}
	var chat []llm.Message
	if t.nodes {
		chat = chatOf(t.transcript)
		for _, m := range chat[min(prev.UpTo, len(chat)):] {
			fmt.Fprintf(&sb, "%s: %s\n", m.Role, m.Content)
		}
	} else {
		for _, m := range all {
			if m.Seq > prev.UpTo && (m.Role == llm.RoleUser || m.Role == llm.RoleAssistant) {
				fmt.Fprintf(&sb, "%s: %s\n", m.Role, m.Content)
			}
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
	upTo := prev.UpTo
	if t.nodes {
		upTo = len(chat) + 2
	} else if msgs, err := a.cfg.Memory.Messages(ctx, t.userID, t.convID, 1); err == nil && len(msgs) == 1 {
		upTo = msgs[0].Seq
	}
	_ = a.cfg.Memory.SaveSummary(ctx, t.userID, knowledge.Summary{ConversationID: t.convID, UpTo: upTo, Text: strings.TrimSpace(resp.Content), UpdatedAt: a.cfg.Now()})
}
