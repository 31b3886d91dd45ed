package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/vibelife/vibe/knowledge"
	"github.com/vibelife/vibe/llm"
)

// User memory across conversations (agent-backend overview §memory): each
// turn's skill-tool results and retrieved rules and passages are kept per
// user (bounded by Config.HistoryKeep) and read back through
// get_user_history; get_conversation_summary gives the user's summary across
// conversations, rebuilt lazily when the history has grown since: offline
// an extractive digest, with a model its summary of that digest.

// DefaultHistoryKeep is how many history entries a user keeps by default.
const DefaultHistoryKeep = 200

// maxHistoryResult bounds a stored tool result, in bytes.
const maxHistoryResult = 4 << 10

var historyTool = llm.Tool{Name: "get_user_history", Description: "The user's past tool results and retrieved rules and passages, across conversations, newest first.",
	Parameters: json.RawMessage(`{"type":"object","properties":{"limit":{"type":"integer","minimum":1,"maximum":50,"default":10},"offset":{"type":"integer","minimum":0},"tool":{"type":"string","description":"only this tool's results"},"skill":{"type":"string","description":"only this skill's"}}}`)}

var userSummaryTool = llm.Tool{Name: "get_conversation_summary", Description: "The summary of the user's past conversations: what they asked and what was concluded.",
	Parameters: json.RawMessage(`{"type":"object","properties":{}}`)}

func (a *Agent) historyStore() (knowledge.HistoryStore, bool) {
	h, ok := a.cfg.Memory.(knowledge.HistoryStore)
	return h, ok
}

// recordHistory keeps a successful result of a turn's skill tool or
// retrieval in the user's history; failures are logged, never fail the
// turn.
func (a *Agent) recordHistory(ctx context.Context, t *turn, tool string, args, res json.RawMessage) {
	hs, ok := a.historyStore()
	if !ok {
		return
	}
	kind := "tool"
	switch tool {
	case "search_knowledge", "get_rules":
		kind = "rag"
	default:
		for _, c := range coreTools {
			if c.Name == tool {
				return // profile reads, forms, cards of the core: not results
			}
		}
	}
	conv := t.convID
	if conv == "" {
		conv = t.stateConv
	}
	e := knowledge.HistoryEntry{ConversationID: conv, Skill: t.activeSkill(), Kind: kind, Tool: tool,
		Question: t.question, Args: compactJSON(args), Result: historyResult(tool, res), CreatedAt: a.cfg.Now()}
	if _, err := hs.AppendHistory(context.WithoutCancel(ctx), t.userID, e, a.cfg.HistoryKeep); err != nil {
		slog.Warn("user history not saved", "user", t.userID, "tool", tool, "err", err)
	}
}

func compactJSON(b json.RawMessage) json.RawMessage {
	if !json.Valid(b) {
		return nil
	}
	if len(b) > maxHistoryResult {
		out, _ := json.Marshal(map[string]any{"truncated": true, "text": strings.ToValidUTF8(string(b[:maxHistoryResult]), "")})
		return out
	}
	return b
}

// historyResult is what the history keeps of a result: the citations of
// retrieved rules and passages (ids, where, a short quote), a tool's result
// whole up to maxHistoryResult bytes.
func historyResult(tool string, res json.RawMessage) json.RawMessage {
	switch tool {
	case "get_rules":
		var out struct {
			Rules []skillRule `json:"rules"`
		}
		if json.Unmarshal(res, &out) == nil {
			type r struct {
				ID    string `json:"id"`
				Skill string `json:"skill,omitempty"`
				Then  string `json:"then"`
			}
			var rs []r
			for _, x := range out.Rules {
				rs = append(rs, r{x.ID, x.Skill, clipRunes(x.Condition+" → "+ruleThen(x.Rule), 160)})
			}
			b, _ := jsonOf(map[string]any{"rules": rs})
			return b
		}
	case "search_knowledge":
		var out struct {
			Passages []Passage `json:"passages"`
		}
		if json.Unmarshal(res, &out) == nil {
			type p struct {
				ChunkID     string   `json:"chunk_id"`
				Source      string   `json:"source"`
				HeadingPath []string `json:"heading_path,omitempty"`
				Quote       string   `json:"quote"`
			}
			var ps []p
			for _, x := range out.Passages {
				ps = append(ps, p{x.ChunkID, x.Source, x.HeadingPath, clipRunes(strings.Join(strings.Fields(x.Text), " "), 120)})
			}
			b, _ := jsonOf(map[string]any{"passages": ps})
			return b
		}
	}
	return compactJSON(res)
}

func clipRunes(s string, n int) string {
	r := []rune(s)
	if len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

// historyToolRun answers get_user_history.
func (a *Agent) historyToolRun(ctx context.Context, userID string, args map[string]any) (json.RawMessage, error) {
	hs, ok := a.historyStore()
	if !ok {
		return nil, errors.New("get_user_history: the memory store keeps no history; run `vibe serve` with a knowledge store (SQLite or PostgreSQL)")
	}
	limit := 10
	if f, ok := args["limit"].(float64); ok && f >= 1 {
		limit = min(int(f), 50)
	}
	offset := 0
	if f, ok := args["offset"].(float64); ok && f >= 0 {
		offset = int(f)
	}
	tool, skill := str(args, "tool"), str(args, "skill")
	var entries []knowledge.HistoryEntry
	var err error
	if tool == "" && skill == "" {
		entries, err = hs.History(ctx, userID, limit, offset)
	} else {
		// Filtered: the history is bounded, so read it whole.
		var all []knowledge.HistoryEntry
		all, err = hs.History(ctx, userID, 0, 0)
		for _, e := range all {
			if (tool == "" || e.Tool == tool) && (skill == "" || containsName(splitSkills(e.Skill), skill)) {
				entries = append(entries, e)
			}
		}
		entries = entries[min(offset, len(entries)):]
		entries = entries[:min(limit, len(entries))]
	}
	if err != nil {
		return nil, fmt.Errorf("get_user_history: %w", err)
	}
	if entries == nil {
		entries = []knowledge.HistoryEntry{}
	}
	return jsonOf(map[string]any{"entries": entries, "limit": limit, "offset": offset, "kept_per_user": a.cfg.HistoryKeep})
}

func containsName(list []string, n string) bool {
	for _, x := range list {
		if x == n {
			return true
		}
	}
	return false
}

// userSummaryToolRun answers get_conversation_summary: the stored summary,
// rebuilt first when the history holds entries it does not cover.
func (a *Agent) userSummaryToolRun(ctx context.Context, userID string) (json.RawMessage, error) {
	sum, err := a.UserSummary(ctx, userID)
	if err != nil {
		return nil, fmt.Errorf("get_conversation_summary: %w", err)
	}
	if sum.Text == "" {
		return jsonOf(map[string]any{"latest_summary": "", "note": "该用户还没有以往对话的记录 / no past conversations of this user are recorded yet"})
	}
	return jsonOf(map[string]any{"latest_summary": sum.Text, "updated_at": sum.UpdatedAt, "by": sum.By, "up_to": sum.UpTo})
}

// UserSummary returns the user's summary across conversations, rebuilt and
// stored when the history grew since it was made: an extractive digest of
// the history (and of the conversations' rolling summaries), which a
// configured model condenses.
func (a *Agent) UserSummary(ctx context.Context, userID string) (knowledge.UserSummary, error) {
	hs, ok := a.historyStore()
	if !ok {
		return knowledge.UserSummary{}, errors.New("the memory store keeps no history")
	}
	sum, err := hs.UserSummary(ctx, userID)
	if err != nil {
		return sum, err
	}
	entries, err := hs.History(ctx, userID, 0, 0)
	if err != nil {
		return sum, err
	}
	if len(entries) == 0 || entries[0].ID <= sum.UpTo {
		return sum, nil
	}
	digest := a.extractiveSummary(ctx, userID, entries)
	next := knowledge.UserSummary{Text: digest, UpTo: entries[0].ID, By: "extractive", UpdatedAt: a.cfg.Now()}
	if a.cfg.Model != nil {
		if text, err := a.modelSummary(ctx, sum.Text, digest); err == nil && text != "" {
			next.Text, next.By = text, "model"
		} else if err != nil {
			slog.Warn("user summary by the model failed; keeping the extractive one", "user", userID, "err", err)
		}
	}
	if err := hs.SaveUserSummary(ctx, userID, next); err != nil {
		return sum, err
	}
	return next, nil
}

// maxDigest bounds the extractive summary, in runes.
const maxDigest = 2000

// extractiveSummary lists the user's conversations, newest first: when,
// which skills, what was asked, and what answered it (rule ids, passages,
// tool results), with the conversation's rolling summary when there is
// one.
func (a *Agent) extractiveSummary(ctx context.Context, userID string, entries []knowledge.HistoryEntry) string {
	type conv struct {
		id, skill string
		when      time.Time
		questions []string
		used      []string
	}
	var order []*conv
	byID := map[string]*conv{}
	for _, e := range entries { // newest first
		c := byID[e.ConversationID]
		if c == nil {
			c = &conv{id: e.ConversationID, skill: e.Skill, when: e.CreatedAt}
			byID[e.ConversationID] = c
			order = append(order, c)
		}
		if e.Question != "" && !containsName(c.questions, e.Question) {
			c.questions = append(c.questions, e.Question)
		}
		c.used = append(c.used, usedLine(e))
	}
	var sb strings.Builder
	for i, c := range order {
		if i == 8 || len([]rune(sb.String())) > maxDigest {
			fmt.Fprintf(&sb, "（另有 %d 次更早的对话 / %d earlier conversations not listed）\n", len(order)-i, len(order)-i)
			break
		}
		fmt.Fprintf(&sb, "- %s", c.when.UTC().Format("2006-01-02"))
		if c.skill != "" {
			fmt.Fprintf(&sb, " [%s]", c.skill)
		}
		if len(c.questions) > 0 {
			qs := c.questions
			if len(qs) > 3 {
				qs = qs[:3]
			}
			for j := range qs {
				qs[j] = clipRunes(qs[j], 80)
			}
			fmt.Fprintf(&sb, " 问 / asked: %s", strings.Join(qs, " | "))
		}
		if s, err := a.cfg.Memory.Summary(ctx, userID, c.id); err == nil && s.Text != "" {
			fmt.Fprintf(&sb, "；摘要 / summary: %s", clipRunes(s.Text, 200))
		}
		used := c.used
		if len(used) > 4 {
			used = used[:4]
		}
		fmt.Fprintf(&sb, "；依据 / from: %s\n", strings.Join(used, "; "))
	}
	return strings.TrimSpace(sb.String())
}

// usedLine names what a history entry contributed: the rule ids, the
// passages' chunks, or the tool's result.
func usedLine(e knowledge.HistoryEntry) string {
	switch e.Tool {
	case "get_rules":
		var r struct {
			Rules []struct {
				ID string `json:"id"`
			} `json:"rules"`
		}
		_ = json.Unmarshal(e.Result, &r)
		var ids []string
		for _, x := range r.Rules {
			ids = append(ids, x.ID)
		}
		return "get_rules " + strings.Join(ids, ", ")
	case "search_knowledge":
		var r struct {
			Passages []struct {
				ChunkID     string   `json:"chunk_id"`
				HeadingPath []string `json:"heading_path"`
			} `json:"passages"`
		}
		_ = json.Unmarshal(e.Result, &r)
		var ps []string
		for i, x := range r.Passages {
			if i == 2 {
				break
			}
			ps = append(ps, fmt.Sprintf("%s (%s)", x.ChunkID, strings.Join(x.HeadingPath, " > ")))
		}
		return "search_knowledge " + strings.Join(ps, ", ")
	}
	return e.Tool + " → " + clipRunes(string(e.Result), 120)
}

// modelSummary asks the model to condense the digest, with the previous
// summary.
func (a *Agent) modelSummary(ctx context.Context, prev, digest string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	in := digest
	if prev != "" {
		in = "之前的摘要 / previous summary:\n" + prev + "\n\n最近的记录 / records:\n" + digest
	}
	resp, err := a.cfg.Model.Stream(ctx, llm.Request{
		Stage: "serve.user_summary", Model: a.cfg.ModelName, NoCache: true,
		Messages: []llm.Message{
			{Role: llm.RoleSystem, Content: "用不超过200字总结这位用户以往的对话：问过什么、用了哪些技能、得出了哪些结论（保留规则编号）。Summarize this user's past conversations in under 200 words: what they asked, which skills, what was concluded (keep rule ids)."},
			{Role: llm.RoleUser, Content: in},
		},
	}, func(llm.Delta) error { return nil })
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(resp.Content), nil
}
