package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/vibelife/vibe/knowledge"
	"github.com/vibelife/vibe/llm"
)

// The profile's write path: upsert_user_profile (a tool), PUT /api/profile
// (the page) and a submitted form all set dotted fields, validated, merged
// into the stored profile, versioned in _meta like save_skill_data.

// Limits of one profile write.
const (
	maxProfileFields = 50
	maxProfileDepth  = 6
	maxProfileValue  = 4096 // bytes of one field's JSON value
)

var profileSegment = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_-]{0,63}$`)

// checkProfilePath validates one dotted path: identity.birth_info.date.
func checkProfilePath(p string) error {
	parts := strings.Split(p, ".")
	if len(parts) > maxProfileDepth {
		return fmt.Errorf("field %q: at most %d levels", p, maxProfileDepth)
	}
	for _, s := range parts {
		if !profileSegment.MatchString(s) {
			return fmt.Errorf("field %q: each part must start with a letter and hold only letters, digits, _ and - (at most 64)", p)
		}
	}
	switch parts[0] {
	case "skill_data", "skills":
		return fmt.Errorf("field %q: skill data is written with save_skill_data", p)
	}
	return nil
}

// UpsertProfile sets the dotted fields of the user's profile (a null value
// removes the field) and returns the paths written and the new version.
func (a *Agent) UpsertProfile(ctx context.Context, userID string, fields map[string]any) (json.RawMessage, error) {
	if len(fields) == 0 {
		return nil, errors.New("upsert_user_profile: fields must map dotted paths such as identity.birth_info.date to values")
	}
	if len(fields) > maxProfileFields {
		return nil, fmt.Errorf("upsert_user_profile: %d fields; at most %d at once", len(fields), maxProfileFields)
	}
	paths := make([]string, 0, len(fields))
	for p, v := range fields {
		if err := checkProfilePath(p); err != nil {
			return nil, fmt.Errorf("upsert_user_profile: %w", err)
		}
		if b, _ := json.Marshal(v); len(b) > maxProfileValue {
			return nil, fmt.Errorf("upsert_user_profile: field %q: value larger than %d bytes", p, maxProfileValue)
		}
		paths = append(paths, p)
	}
	sort.Strings(paths)
	// One atomic read-modify-write of the store: concurrent writes from
	// this process or another replica all land.
	var version float64
	_, err := a.cfg.Memory.UpdateProfile(ctx, userID, func(raw json.RawMessage) (json.RawMessage, error) {
		m, err := profileObject(userID, raw)
		if err != nil {
			return nil, err
		}
		for _, p := range paths {
			setPath(m, strings.Split(p, "."), fields[p])
		}
		version = 0
		if meta, ok := m["_meta"].(map[string]any); ok {
			version, _ = meta["version"].(float64)
		}
		m["_meta"] = map[string]any{"version": version + 1, "updated_at": a.cfg.Now().UTC().Format("2006-01-02T15:04:05Z07:00")}
		return json.Marshal(m)
	})
	if err != nil {
		return nil, fmt.Errorf("upsert_user_profile: %w", err)
	}
	return jsonOf(map[string]any{"updated": paths, "version": version + 1})
}

// setPath sets (or, for nil, deletes) the value at path, creating objects
// on the way and replacing a non-object in the way.
func setPath(m map[string]any, path []string, v any) {
	for _, k := range path[:len(path)-1] {
		next, ok := m[k].(map[string]any)
		if !ok {
			if v == nil {
				return
			}
			next = map[string]any{}
			m[k] = next
		}
		m = next
	}
	last := path[len(path)-1]
	if v == nil {
		delete(m, last)
		return
	}
	m[last] = v
}

// Profile returns what is stored about the user ({} when nothing).
func (a *Agent) Profile(ctx context.Context, userID string) (json.RawMessage, error) {
	m, err := a.loadProfile(ctx, userID)
	if err != nil {
		return nil, err
	}
	return json.Marshal(m)
}

// ClearProfile deletes everything stored in the user's profile, skill data
// included.
func (a *Agent) ClearProfile(ctx context.Context, userID string) error {
	_, err := a.cfg.Memory.UpdateProfile(ctx, userID, func(json.RawMessage) (json.RawMessage, error) {
		return json.RawMessage(`{}`), nil
	})
	return err
}

// FormResponse is a submitted collect_info form: its field values by
// field name. Names that are dotted profile paths (identity.birth_info.date)
// are saved to the profile; the whole answer reaches the model as JSON.
type FormResponse struct {
	Values map[string]any `json:"values"`
}

// formMessage saves the profile fields of a submitted form and returns the
// user message the turn carries: a marker and the values as JSON, so the
// model reads a structured answer, not prose.
func (a *Agent) formMessage(ctx context.Context, userID string, f *FormResponse) (string, error) {
	if len(f.Values) == 0 {
		return "", errors.New("form_response: values must hold the form's fields")
	}
	prof := map[string]any{}
	for k, v := range f.Values {
		if strings.Contains(k, ".") {
			if err := checkProfilePath(k); err != nil {
				return "", fmt.Errorf("form_response: %w", err)
			}
			if err := checkBirthValue(k, v); err != nil {
				return "", fmt.Errorf("form_response: %w", err)
			}
			prof[k] = v
		}
	}
	saved := []string{}
	if len(prof) > 0 {
		res, err := a.UpsertProfile(ctx, userID, prof)
		if err != nil {
			return "", err
		}
		var r struct {
			Updated []string `json:"updated"`
		}
		_ = json.Unmarshal(res, &r)
		saved = r.Updated
	}
	b, err := json.Marshal(map[string]any{"form_response": f.Values, "saved_to_profile": saved})
	if err != nil {
		return "", err
	}
	return FormMarker + string(b), nil
}

// ErrNoFormShown is a form_response for a conversation that shows no form
// waiting for an answer.
var ErrNoFormShown = errors.New("the conversation shows no form waiting for an answer")

// checkFormShown accepts a form_response only for the user's existing
// conversation whose answers showed a form (a collect tool's, collect_info)
// not answered since; it never creates the conversation. It returns
// ErrConversationNotFound or ErrNoFormShown (wrapped, naming the id).
func (a *Agent) checkFormShown(ctx context.Context, userID, convID string) error {
	if convID == "" {
		return fmt.Errorf("form_response: %w: give the conversation_id of the conversation that showed the form", ErrNoFormShown)
	}
	if err := CheckConversationID(convID); err != nil {
		return err
	}
	if cl, ok := a.cfg.Memory.(ConversationLister); ok {
		convs, err := cl.Conversations(ctx, userID, 0)
		if err != nil {
			return err
		}
		if !slices.ContainsFunc(convs, func(c knowledge.Conversation) bool { return c.ID == convID }) {
			return fmt.Errorf("conversation %q: %w", convID, ErrConversationNotFound)
		}
	}
	msgs, err := a.cfg.Memory.Messages(ctx, userID, convID, recentMessages)
	if err != nil {
		return err
	}
	for i := len(msgs) - 1; i >= 0; i-- {
		m := msgs[i]
		switch {
		case m.Role == llm.RoleUser && strings.HasPrefix(m.Content, FormMarker):
			return fmt.Errorf("form_response: conversation %q: %w (the last form was answered already); send a message instead", convID, ErrNoFormShown)
		case m.Role == llm.RoleAssistant && showsForm(m.Events):
			return nil
		}
	}
	return fmt.Errorf("form_response: conversation %q: %w (no answer of it showed a form); send a message instead", convID, ErrNoFormShown)
}

// showsForm reports whether stored answer events hold a form.
func showsForm(events json.RawMessage) bool {
	var evs []struct {
		Type string `json:"type"`
	}
	if json.Unmarshal(events, &evs) != nil {
		return false
	}
	return slices.ContainsFunc(evs, func(e struct {
		Type string `json:"type"`
	}) bool {
		return e.Type == EventForm
	})
}

// FormMarker starts the user message of a submitted form.
const FormMarker = "[form_response] "
