package runtime

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/vibelife/vibe/knowledge"
)

// MemStore is an in-memory knowledge.MemoryStore, for tests and for
// `vibe serve` without a database. It is safe for concurrent use.
type MemStore struct {
	Now func() time.Time

	mu       sync.Mutex
	profiles map[string]json.RawMessage
	// Conversations, messages and summaries are keyed by convKey: ids are
	// scoped per user, so two users' "c1" are two conversations.
	convs     map[convKey]knowledge.Conversation
	messages  map[convKey][]knowledge.StoredMessage
	summaries map[convKey]knowledge.Summary
	history   map[string][]knowledge.HistoryEntry
	userSums  map[string]knowledge.UserSummary
	historyID int64
	feedback  map[feedbackKey]knowledge.Feedback
}

// convKey is a conversation id within its user.
type convKey struct{ user, id string }

// NewMemStore returns an empty MemStore.
func NewMemStore() *MemStore {
	return &MemStore{
		Now:       time.Now,
		profiles:  map[string]json.RawMessage{},
		convs:     map[convKey]knowledge.Conversation{},
		messages:  map[convKey][]knowledge.StoredMessage{},
		summaries: map[convKey]knowledge.Summary{},
		history:   map[string][]knowledge.HistoryEntry{},
		userSums:  map[string]knowledge.UserSummary{},
	}
}

var (
	_ knowledge.MemoryStore  = (*MemStore)(nil)
	_ knowledge.HistoryStore = (*MemStore)(nil)
)

// EnsureUser implements knowledge.MemoryStore.
func (m *MemStore) EnsureUser(ctx context.Context, userID string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.profiles[userID]; !ok {
		m.profiles[userID] = json.RawMessage(`{}`)
	}
	return nil
}

// Profile implements knowledge.MemoryStore.
func (m *MemStore) Profile(ctx context.Context, userID string) (json.RawMessage, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	p, ok := m.profiles[userID]
	if !ok {
		return json.RawMessage(`{}`), nil
	}
	return append(json.RawMessage(nil), p...), nil
}

// SaveProfile implements knowledge.MemoryStore.
func (m *MemStore) SaveProfile(ctx context.Context, userID string, p json.RawMessage) error {
	if !json.Valid(p) {
		return fmt.Errorf("save profile of %s: invalid JSON", userID)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.profiles[userID] = append(json.RawMessage(nil), p...)
	return nil
}

// UpdateProfile implements knowledge.MemoryStore.
func (m *MemStore) UpdateProfile(ctx context.Context, userID string, fn func(json.RawMessage) (json.RawMessage, error)) (json.RawMessage, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	cur, ok := m.profiles[userID]
	if !ok {
		cur = json.RawMessage(`{}`)
	}
	p, err := fn(append(json.RawMessage(nil), cur...))
	if err != nil {
		return nil, err
	}
	if !json.Valid(p) {
		return nil, fmt.Errorf("update profile of %s: invalid JSON", userID)
	}
	m.profiles[userID] = append(json.RawMessage(nil), p...)
	return p, nil
}

func (m *MemStore) conv(userID, id string) (knowledge.Conversation, error) {
	if err := knowledge.CheckConversationID(id); err != nil {
		return knowledge.Conversation{}, err
	}
	k := convKey{userID, id}
	c, ok := m.convs[k]
	if !ok {
		now := m.Now()
		c = knowledge.Conversation{ID: id, UserID: userID, CreatedAt: now, UpdatedAt: now}
		m.convs[k] = c
	}
	return c, nil
}

// Conversation implements knowledge.MemoryStore.
func (m *MemStore) Conversation(ctx context.Context, userID, id string) (knowledge.Conversation, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.conv(userID, id)
}

// AppendMessages implements knowledge.MemoryStore.
func (m *MemStore) AppendMessages(ctx context.Context, userID, convID string, msgs []knowledge.StoredMessage) ([]knowledge.StoredMessage, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	c, err := m.conv(userID, convID)
	if err != nil {
		return nil, err
	}
	for i, msg := range msgs {
		if len(msg.Events) > 0 && !json.Valid(msg.Events) {
			return nil, fmt.Errorf("append messages: message %d: events are not JSON", i)
		}
	}
	out := make([]knowledge.StoredMessage, len(msgs))
	for i, msg := range msgs {
		msg.ConversationID = convID
		if len(msg.Events) > 0 {
			msg.Events = append(json.RawMessage(nil), msg.Events...)
		}
		k := convKey{userID, convID}
		msg.Seq = len(m.messages[k]) + 1
		if msg.CreatedAt.IsZero() {
			msg.CreatedAt = m.Now()
		}
		m.messages[k] = append(m.messages[k], msg)
		out[i] = msg
	}
	c.UpdatedAt = m.Now()
	m.convs[convKey{userID, convID}] = c
	return out, nil
}

// Messages implements knowledge.MemoryStore.
func (m *MemStore) Messages(ctx context.Context, userID, convID string, n int) ([]knowledge.StoredMessage, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, err := m.conv(userID, convID); err != nil {
		return nil, err
	}
	all := m.messages[convKey{userID, convID}]
	if n > 0 && len(all) > n {
		all = all[len(all)-n:]
	}
	return append([]knowledge.StoredMessage(nil), all...), nil
}

// Summary implements knowledge.MemoryStore.
func (m *MemStore) Summary(ctx context.Context, userID, convID string) (knowledge.Summary, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, err := m.conv(userID, convID); err != nil {
		return knowledge.Summary{}, err
	}
	return m.summaries[convKey{userID, convID}], nil
}

// SaveSummary implements knowledge.MemoryStore.
func (m *MemStore) SaveSummary(ctx context.Context, userID string, s knowledge.Summary) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, err := m.conv(userID, s.ConversationID); err != nil {
		return err
	}
	m.summaries[convKey{userID, s.ConversationID}] = s
	return nil
}

// Conversations lists the user's conversations that hold messages, most
// recently updated first; limit <= 0 means all.
func (m *MemStore) Conversations(ctx context.Context, userID string, limit int) ([]knowledge.Conversation, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []knowledge.Conversation
	for k, c := range m.convs {
		if k.user == userID && len(m.messages[k]) > 0 {
			out = append(out, c)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].UpdatedAt.Equal(out[j].UpdatedAt) {
			return out[i].UpdatedAt.After(out[j].UpdatedAt)
		}
		return out[i].ID < out[j].ID
	})
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

// AppendHistory implements knowledge.HistoryStore.
func (m *MemStore) AppendHistory(ctx context.Context, userID string, e knowledge.HistoryEntry, keep int) (knowledge.HistoryEntry, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.historyID++
	e.ID = m.historyID
	if e.CreatedAt.IsZero() {
		e.CreatedAt = m.Now()
	}
	h := append(m.history[userID], e)
	if keep > 0 && len(h) > keep {
		h = append([]knowledge.HistoryEntry(nil), h[len(h)-keep:]...)
	}
	m.history[userID] = h
	return e, nil
}

// History implements knowledge.HistoryStore.
func (m *MemStore) History(ctx context.Context, userID string, limit, offset int) ([]knowledge.HistoryEntry, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	h := m.history[userID]
	var out []knowledge.HistoryEntry
	for i := len(h) - 1 - max(offset, 0); i >= 0 && (limit <= 0 || len(out) < limit); i-- {
		out = append(out, h[i])
	}
	return out, nil
}

// UserSummary implements knowledge.HistoryStore.
func (m *MemStore) UserSummary(ctx context.Context, userID string) (knowledge.UserSummary, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.userSums[userID], nil
}

// SaveUserSummary implements knowledge.HistoryStore.
func (m *MemStore) SaveUserSummary(ctx context.Context, userID string, s knowledge.UserSummary) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.userSums[userID] = s
	return nil
}
