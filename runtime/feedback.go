package runtime

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"

	"github.com/vibelife/vibe/knowledge"
	"github.com/vibelife/vibe/llm"
)

var _ knowledge.FeedbackStore = (*MemStore)(nil)

// SaveFeedback implements knowledge.FeedbackStore.
func (m *MemStore) SaveFeedback(ctx context.Context, f knowledge.Feedback) error {
	if f.CreatedAt.IsZero() {
		f.CreatedAt = m.Now()
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.feedback == nil {
		m.feedback = map[feedbackKey]knowledge.Feedback{}
	}
	m.feedback[feedbackKey{convKey{f.UserID, f.ConversationID}, f.Turn}] = f
	return nil
}

// ConversationFeedback implements knowledge.FeedbackStore.
func (m *MemStore) ConversationFeedback(ctx context.Context, userID, convID string) ([]knowledge.Feedback, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []knowledge.Feedback
	for k, f := range m.feedback {
		if k.conv == (convKey{userID, convID}) {
			out = append(out, f)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Turn < out[j].Turn })
	return out, nil
}

// ListFeedback implements knowledge.FeedbackStore.
func (m *MemStore) ListFeedback(ctx context.Context, rating string, limit int) ([]knowledge.Feedback, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []knowledge.Feedback
	for _, f := range m.feedback {
		if rating == "" || f.Rating == rating {
			out = append(out, f)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].CreatedAt.Equal(out[j].CreatedAt) {
			return out[i].CreatedAt.After(out[j].CreatedAt)
		}
		return out[i].Turn > out[j].Turn
	})
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

// feedbackKey is an answer: its conversation and turn.
type feedbackKey struct {
	conv convKey
	turn int
}

// FeedbackRequest is the body of POST /api/feedback: the answer (its
// conversation and the done event's turn), up or down, and a comment.
type FeedbackRequest struct {
	ConversationID string `json:"conversation_id"`
	Turn           int    `json:"turn"`
	Rating         string `json:"rating"`
	Comment        string `json:"comment,omitempty"`
}

// ErrNoSuchAnswer is feedback on a turn that is not an answer of the
// user's conversation.
var ErrNoSuchAnswer = errors.New("no such answer")

// ErrNoFeedbackStore is feedback given to a server whose memory store
// keeps none.
var ErrNoFeedbackStore = errors.New("this memory store keeps no feedback (the memory, SQLite and PostgreSQL stores do)")

// SaveFeedback stores the user's verdict on an answer of theirs, replacing
// an earlier one, and counts it in /metrics.
func (a *Agent) SaveFeedback(ctx context.Context, f knowledge.Feedback) error {
	f.Comment = strings.TrimSpace(f.Comment)
	if err := f.Check(); err != nil {
		return err
	}
	fs, ok := a.cfg.Memory.(knowledge.FeedbackStore)
	if !ok {
		return ErrNoFeedbackStore
	}
	msgs, err := a.conversationMessages(ctx, f.UserID, f.ConversationID)
	if err != nil {
		return fmt.Errorf("conversation %q: %w", f.ConversationID, ErrNoSuchAnswer)
	}
	found := false
	for _, m := range msgs {
		found = found || (m.Seq == f.Turn && m.Role == llm.RoleAssistant)
	}
	if !found {
		return fmt.Errorf("turn %d of conversation %q: %w (the done event's turn names an answer)", f.Turn, f.ConversationID, ErrNoSuchAnswer)
	}
	if f.CreatedAt.IsZero() {
		f.CreatedAt = a.cfg.Now()
	}
	if err := fs.SaveFeedback(ctx, f); err != nil {
		return fmt.Errorf("runtime: save feedback: %w", err)
	}
	a.metrics.feedbackGiven(f.Rating, f.Comment != "")
	return nil
}

func (s *Server) postFeedback(w http.ResponseWriter, r *http.Request) {
	var req FeedbackRequest
	if !s.decodeBody(w, r, &req) {
		return
	}
	f := knowledge.Feedback{UserID: userOf(r), ConversationID: req.ConversationID, Turn: req.Turn, Rating: req.Rating, Comment: req.Comment}
	err := s.agent.SaveFeedback(r.Context(), f)
	switch {
	case err == nil:
		writeJSON(w, 200, map[string]any{"ok": true})
	case errors.Is(err, ErrNoFeedbackStore):
		writeErr(w, http.StatusNotImplemented, "not_implemented", err.Error())
	case errors.Is(err, ErrNoSuchAnswer):
		writeErr(w, http.StatusNotFound, "not_found", err.Error())
	case strings.HasPrefix(err.Error(), "runtime:"):
		writeErr(w, http.StatusInternalServerError, "server_error", err.Error())
	default:
		writeErr(w, http.StatusBadRequest, "invalid_request_error", err.Error())
	}
}

// AnswerContext returns, from a conversation's stored messages, the answer
// whose sequence number is turn, the question it answered (the user
// message before it) and the skills active then; ok is false when turn is
// not an answer. A question made from a form is returned as stored (it
// starts with FormMarker).
func AnswerContext(msgs []knowledge.StoredMessage, turn int) (question, answer string, skills []string, ok bool) {
	at := -1
	for i, m := range msgs {
		if m.Seq == turn && m.Role == llm.RoleAssistant {
			at = i
		}
	}
	if at < 0 {
		return "", "", nil, false
	}
	for i := at - 1; i >= 0 && question == ""; i-- {
		if msgs[i].Role == llm.RoleUser {
			question = msgs[i].Content
		}
	}
	for i := at - 1; i >= 0; i-- {
		if msgs[i].Role == roleSkill {
			skills = splitSkills(msgs[i].Content)
			break
		}
	}
	return question, msgs[at].Content, skills, true
}
