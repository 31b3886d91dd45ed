package knowledge

import (
	"context"
	"encoding/json"
	"time"
)

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
// a conversation of another user is ErrNotFound.
type MemoryStore interface {
	// EnsureUser creates the user if needed.
	EnsureUser(ctx context.Context, userID string) error
	// Profile returns the user's profile JSON ({} when none).
	Profile(ctx context.Context, userID string) (json.RawMessage, error)
	// SaveProfile replaces the user's profile JSON.
	SaveProfile(ctx context.Context, userID string, profile json.RawMessage) error
	// Conversation returns the user's conversation, creating it when id is
	// new; ErrNotFound when it belongs to another user.
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
