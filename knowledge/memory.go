package knowledge

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// MaxConversationIDLen is the longest conversation id accepted, in bytes.
const MaxConversationIDLen = 128

// CheckConversationID refuses a conversation id longer than
// MaxConversationIDLen bytes or holding control characters or invalid
// UTF-8 (ids are stored, and written into logs). Every MemoryStore checks
// it, so no caller can store a 100,000-character id.
func CheckConversationID(id string) error {
	if len(id) > MaxConversationIDLen {
		return fmt.Errorf("conversation id of %d bytes: at most %d are accepted; use a shorter id (e.g. a UUID)", len(id), MaxConversationIDLen)
	}
	if !utf8.ValidString(id) || strings.IndexFunc(id, unicode.IsControl) >= 0 {
		return fmt.Errorf("conversation id %q: control characters and invalid UTF-8 are not accepted", id)
	}
	return nil
}

// Conversation is one chat thread of a user.
type Conversation struct {
	ID        string    `json:"id"`
	UserID    string    `json:"user_id"`
	Skill     string    `json:"skill,omitempty"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// StoredMessage is one persisted message of a conversation.
type StoredMessage struct {
	ConversationID string    `json:"conversation_id"`
	Seq            int       `json:"seq"`
	Role           string    `json:"role"`
	Content        string    `json:"content"`
	CreatedAt      time.Time `json:"created_at"`
	// Events, on an assistant message, is what the chat stream showed
	// beside the text, as a JSON array of its events (cards, forms, the
	// citations), so a reloaded conversation shows them again; nil when
	// there was none (and for messages stored before it was kept).
	Events json.RawMessage `json:"events,omitempty"`
}

// Summary is the rolling summary of a conversation up to message UpTo.
type Summary struct {
	ConversationID string    `json:"conversation_id"`
	UpTo           int       `json:"up_to"`
	Text           string    `json:"text"`
	UpdatedAt      time.Time `json:"updated_at"`
}

// MemoryStore keeps users, profiles, conversations, messages and summaries
// in the same store as the knowledge. Every method is scoped by user id:
// conversation ids are per user, so the same id used by two users names two
// separate conversations and no user can read, append to or squat another
// user's conversation. An id failing CheckConversationID is an error.
type MemoryStore interface {
	// EnsureUser creates the user if needed.
	EnsureUser(ctx context.Context, userID string) error
	// Profile returns the user's profile JSON ({} when none).
	Profile(ctx context.Context, userID string) (json.RawMessage, error)
	// SaveProfile replaces the user's profile JSON.
	SaveProfile(ctx context.Context, userID string, profile json.RawMessage) error
	// UpdateProfile is an atomic read-modify-write of the user's profile:
	// it reads the profile ({} when none) under a lock that holds off every
	// other UpdateProfile of the user, in this process and in every other
	// process on the same store (a row lock in PostgreSQL, the write lock in
	// SQLite), calls fn, stores what fn returns and returns it. An error
	// from fn stores nothing. Concurrent updates all land.
	UpdateProfile(ctx context.Context, userID string, fn func(json.RawMessage) (json.RawMessage, error)) (json.RawMessage, error)
	// Conversation returns the user's conversation, creating it when id is
	// new for this user.
	Conversation(ctx context.Context, userID, id string) (Conversation, error)
	// AppendMessages adds messages to the user's conversation and returns
	// them with their sequence numbers.
	AppendMessages(ctx context.Context, userID, convID string, msgs []StoredMessage) ([]StoredMessage, error)
	// Messages returns the last n messages (all when n <= 0), oldest first.
	Messages(ctx context.Context, userID, convID string, n int) ([]StoredMessage, error)
	// Summary returns the rolling summary (zero value when none).
	Summary(ctx context.Context, userID, convID string) (Summary, error)
	// SaveSummary stores the rolling summary.
	SaveSummary(ctx context.Context, userID string, s Summary) error
}

// HistoryEntry is one tool or retrieval result of a user's turn, kept
// across conversations (agent-backend overview, divination_history): what
// was asked, which tool answered and what it returned.
type HistoryEntry struct {
	// ID orders a user's entries (assigned by the store, increasing).
	ID             int64  `json:"id"`
	ConversationID string `json:"conversation_id"`
	Skill          string `json:"skill,omitempty"`
	// Kind is "tool" (a skill tool's result) or "rag" (rules or passages
	// retrieved).
	Kind     string `json:"kind"`
	Tool     string `json:"tool"`
	Question string `json:"question,omitempty"`
	// Args and Result are JSON; Result may be shortened by the caller.
	Args      json.RawMessage `json:"args,omitempty"`
	Result    json.RawMessage `json:"result"`
	CreatedAt time.Time       `json:"created_at"`
}

// UserSummary is the summary of a user across their conversations, up to
// the history entry UpTo.
type UserSummary struct {
	Text string `json:"text"`
	UpTo int64  `json:"up_to"`
	// By says who wrote it: "extractive" (offline) or "model".
	By        string    `json:"by"`
	UpdatedAt time.Time `json:"updated_at"`
}

// HistoryStore is the optional capability of a MemoryStore to keep each
// user's history of results and cross-conversation summary. The stores of
// this module (memory, SQLite, PostgreSQL) have it.
type HistoryStore interface {
	// AppendHistory adds an entry to the user's history and keeps only
	// the newest keep entries (keep <= 0: all); it returns the entry with
	// its ID.
	AppendHistory(ctx context.Context, userID string, e HistoryEntry, keep int) (HistoryEntry, error)
	// History returns the user's entries newest first, skipping offset,
	// at most limit (limit <= 0: all).
	History(ctx context.Context, userID string, limit, offset int) ([]HistoryEntry, error)
	// UserSummary returns the user's summary (zero value when none).
	UserSummary(ctx context.Context, userID string) (UserSummary, error)
	// SaveUserSummary replaces the user's summary.
	SaveUserSummary(ctx context.Context, userID string, s UserSummary) error
}
