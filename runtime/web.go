package runtime

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"io/fs"
	"net/http"
	"path"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/vibelife/vibe/knowledge"
)

// The chat page: static files embedded in the binary (no build step, no
// CDN), served with a strict Content-Security-Policy, and the endpoints it
// needs beyond the chat API: the user's conversations and their history,
// and the user's profile (read, write, clear). Every endpoint is behind the
// same authentication and per-user isolation as the API.

//go:embed web
var webFiles embed.FS

// pageCSP allows only this origin's script and style files: no inline
// script, no eval, no plugins, no framing, no form posts elsewhere.
const pageCSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
	"base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

func (s *Server) registerWeb() {
	sub, _ := fs.Sub(webFiles, "web")
	static := http.FileServerFS(sub)
	page := func(w http.ResponseWriter, r *http.Request) {
		// The other security headers are every response's (securityHeaders).
		h := w.Header()
		h.Set("Content-Security-Policy", pageCSP)
		h.Set("Cache-Control", "no-cache")
		switch {
		case r.URL.Path == "/":
			r2 := r.Clone(r.Context())
			r2.URL.Path = "/"
			static.ServeHTTP(w, r2)
		case r.URL.Path == "/favicon.ico":
			h.Set("Cache-Control", "max-age=86400")
			static.ServeHTTP(w, r)
		case strings.HasPrefix(r.URL.Path, "/ui/"):
			name := path.Base(r.URL.Path)
			if name == "index.html" {
				http.NotFound(w, r)
				return
			}
			r2 := r.Clone(r.Context())
			r2.URL.Path = "/" + name
			static.ServeHTTP(w, r2)
		default:
			http.NotFound(w, r)
		}
	}
	s.mux.HandleFunc("GET /{$}", page)
	s.mux.HandleFunc("GET /ui/", page)
	s.mux.HandleFunc("GET /favicon.ico", page)
	s.mux.HandleFunc("GET /api/profile", s.auth(s.getProfile))
	s.mux.HandleFunc("PUT /api/profile", s.auth(s.putProfile))
	s.mux.HandleFunc("DELETE /api/profile", s.auth(s.deleteProfile))
	s.mux.HandleFunc("GET /api/conversations", s.auth(s.listConversations))
	s.mux.HandleFunc("GET /api/conversations/{id}", s.auth(s.conversationHistory))
	s.mux.HandleFunc("POST /api/feedback", s.auth(s.postFeedback))
	s.mux.HandleFunc("GET /api/passage", s.auth(s.getPassage))
}

func (s *Server) getProfile(w http.ResponseWriter, r *http.Request) {
	p, err := s.agent.Profile(r.Context(), userOf(r))
	if err != nil {
		writeErr(w, http.StatusInternalServerError, "server_error", err.Error())
		return
	}
	writeJSON(w, 200, map[string]any{"profile": json.RawMessage(p)})
}

// ProfileRequest is the body of PUT /api/profile: dotted paths to values
// (null deletes a field).
type ProfileRequest struct {
	Fields map[string]any `json:"fields"`
}

func (s *Server) putProfile(w http.ResponseWriter, r *http.Request) {
	var req ProfileRequest
	if !s.decodeBody(w, r, &req) {
		return
	}
	res, err := s.agent.UpsertProfile(r.Context(), userOf(r), req.Fields)
	if err != nil {
		writeErr(w, http.StatusBadRequest, "invalid_request_error", err.Error())
		return
	}
	writeJSON(w, 200, json.RawMessage(res))
}

func (s *Server) deleteProfile(w http.ResponseWriter, r *http.Request) {
	if err := s.agent.ClearProfile(r.Context(), userOf(r)); err != nil {
		writeErr(w, http.StatusInternalServerError, "server_error", err.Error())
		return
	}
	writeJSON(w, 200, map[string]any{"profile": map[string]any{}})
}

// ConversationInfo is one entry of GET /api/conversations.
type ConversationInfo struct {
	ID    string `json:"id"`
	Title string `json:"title"`
	Skill string `json:"skill,omitempty"`
	// UpdatedAt is RFC 3339.
	UpdatedAt string `json:"updated_at"`
}

// ConversationLister is the memory store capability the conversation list
// needs: the user's conversations, most recently updated first.
type ConversationLister interface {
	Conversations(ctx context.Context, userID string, limit int) ([]knowledge.Conversation, error)
}

// maxListed bounds the conversation list.
const maxListed = 100

func (s *Server) listConversations(w http.ResponseWriter, r *http.Request) {
	cl, ok := s.agent.cfg.Memory.(ConversationLister)
	if !ok {
		writeErr(w, http.StatusNotImplemented, "not_implemented", "this memory store cannot list conversations")
		return
	}
	user := userOf(r)
	convs, err := cl.Conversations(r.Context(), user, maxListed)
	if err != nil {
		writeErr(w, http.StatusInternalServerError, "server_error", err.Error())
		return
	}
	out := make([]ConversationInfo, 0, len(convs))
	for _, c := range convs {
		if c.UserID != "" && c.UserID != user {
			continue // never another user's, whatever the store returned
		}
		title := c.ID
		msgs, err := s.agent.cfg.Memory.Messages(r.Context(), user, c.ID, 0)
		if err == nil {
			for _, m := range msgs {
				if m.Role == "user" {
					title = conversationTitle(m.Content)
					break
				}
			}
		}
		out = append(out, ConversationInfo{ID: c.ID, Title: title, Skill: c.Skill, UpdatedAt: c.UpdatedAt.UTC().Format("2006-01-02T15:04:05Z07:00")})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].UpdatedAt > out[j].UpdatedAt })
	writeJSON(w, 200, map[string]any{"conversations": out})
}

// conversationTitle is the first user message, shortened.
func conversationTitle(s string) string {
	s = strings.Join(strings.Fields(strings.TrimPrefix(s, FormMarker)), " ")
	if utf8.RuneCountInString(s) > 60 {
		r := []rune(s)
		s = string(r[:60]) + "…"
	}
	return s
}

// HistoryMessage is one message of GET /api/conversations/{id}.
type HistoryMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
	// Events, on an assistant message, are the events the chat stream
	// showed beside its text, shaped as the stream's: its card and form
	// events in order, then its citations event; absent when there were
	// none, and for answers stored before they were kept.
	Events json.RawMessage `json:"events,omitempty"`
	// Turn, on an assistant message, names it for POST /api/feedback;
	// Feedback is the user's verdict on it, when they gave one.
	Turn     int                 `json:"turn,omitempty"`
	Feedback *knowledge.Feedback `json:"feedback,omitempty"`
}

func (s *Server) conversationHistory(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	user := userOf(r)
	msgs, err := s.agent.conversationMessages(r.Context(), user, id)
	switch {
	case errors.Is(err, ErrConversationNotFound):
		writeErr(w, http.StatusNotFound, "not_found", "conversation not found")
		return
	case err != nil:
		writeErr(w, http.StatusInternalServerError, "server_error", err.Error())
		return
	}
	verdicts := map[int]knowledge.Feedback{}
	if fs, ok := s.agent.cfg.Memory.(knowledge.FeedbackStore); ok {
		fb, err := fs.ConversationFeedback(r.Context(), user, id)
		if err != nil {
			writeErr(w, http.StatusInternalServerError, "server_error", err.Error())
			return
		}
		for _, f := range fb {
			verdicts[f.Turn] = f
		}
	}
	out := []HistoryMessage{}
	for _, m := range msgs {
		switch m.Role {
		case "user":
			out = append(out, HistoryMessage{Role: m.Role, Content: m.Content})
		case "assistant":
			h := HistoryMessage{Role: m.Role, Content: m.Content, Events: m.Events, Turn: m.Seq}
			if f, ok := verdicts[m.Seq]; ok {
				h.Feedback = &f
			}
			out = append(out, h)
		}
	}
	writeJSON(w, 200, map[string]any{"id": id, "messages": out})
}

// conversationMessages returns the stored messages of the user's existing
// conversation; ErrConversationNotFound for an id the user has no
// conversation under (never creating one).
func (a *Agent) conversationMessages(ctx context.Context, userID, id string) ([]knowledge.StoredMessage, error) {
	if id == "" || len(id) > 200 {
		return nil, ErrConversationNotFound
	}
	if cl, ok := a.cfg.Memory.(ConversationLister); ok {
		convs, err := cl.Conversations(ctx, userID, 0)
		if err != nil {
			return nil, err
		}
		found := false
		for _, c := range convs {
			found = found || c.ID == id
		}
		if !found {
			return nil, ErrConversationNotFound
		}
	}
	msgs, err := a.cfg.Memory.Messages(ctx, userID, id, 0)
	return withoutRetracted(msgs), err
}
