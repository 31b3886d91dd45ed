package knowledge

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// Ratings of an answer.
const (
	FeedbackUp   = "up"
	FeedbackDown = "down"
)

// MaxFeedbackComment is the longest feedback comment kept, in characters.
const MaxFeedbackComment = 2000

// Feedback is a user's verdict on one answer: thumbs up or down, with an
// optional comment. The answer is named by its conversation and its stored
// sequence number (Turn, the done event's turn).
type Feedback struct {
	UserID         string    `json:"user_id,omitempty"`
	ConversationID string    `json:"conversation_id"`
	Turn           int       `json:"turn"`
	Rating         string    `json:"rating"`
	Comment        string    `json:"comment,omitempty"`
	CreatedAt      time.Time `json:"created_at"`
}

// Check refuses feedback a store should not keep: no conversation or turn,
// a rating other than up or down, an over-long or invalid comment.
func (f Feedback) Check() error {
	switch {
	case f.ConversationID == "":
		return fmt.Errorf("conversation_id: name the conversation of the answer")
	case f.Turn <= 0:
		return fmt.Errorf("turn: give the answer's turn (the done event's turn), a positive number")
	case f.Rating != FeedbackUp && f.Rating != FeedbackDown:
		return fmt.Errorf("rating %q: use %q or %q", f.Rating, FeedbackUp, FeedbackDown)
	case !utf8.ValidString(f.Comment):
		return fmt.Errorf("comment: not valid UTF-8")
	case utf8.RuneCountInString(f.Comment) > MaxFeedbackComment:
		return fmt.Errorf("comment: %d characters; at most %d are kept: shorten it", utf8.RuneCountInString(f.Comment), MaxFeedbackComment)
	}
	if strings.TrimSpace(f.Comment) != f.Comment {
		return fmt.Errorf("comment: trim the surrounding white space")
	}
	return CheckConversationID(f.ConversationID)
}

// FeedbackStore is the optional capability of a MemoryStore to keep the
// feedback on answers, stored with the answer it judges: one verdict per
// user and answer (a new one replaces the earlier). The stores of this
// module (memory, SQLite, PostgreSQL) have it.
type FeedbackStore interface {
	// SaveFeedback stores f (its UserID, ConversationID and Turn name the
	// answer), replacing the user's earlier verdict on it.
	SaveFeedback(ctx context.Context, f Feedback) error
	// ConversationFeedback returns the user's verdicts on the answers of a
	// conversation, by turn.
	ConversationFeedback(ctx context.Context, userID, convID string) ([]Feedback, error)
	// ListFeedback returns the verdicts of every user with the rating
	// ("" for both), newest first, at most limit (<= 0: all).
	ListFeedback(ctx context.Context, rating string, limit int) ([]Feedback, error)
}
