// Package websearchtest is a fake SearXNG instance for tests: it answers
// /search?format=json from a table of queries, and records what it was
// asked. Nothing leaves the machine.
package websearchtest

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// Hit is one result the fake answers.
type Hit struct {
	URL, Title, Content, PublishedDate string
}

// Server is a fake SearXNG.
type Server struct {
	*httptest.Server
	mu      sync.Mutex
	answers map[string][]Hit
	asked   []Asked
}

// Asked is a query the fake received.
type Asked struct {
	Query, TimeRange, Language string
}

// NewSearXNG starts a fake SearXNG answering each query in answers (any
// other query gets no results); it is closed when the test ends.
func NewSearXNG(t testing.TB, answers map[string][]Hit) *Server {
	s := &Server{answers: answers}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

// Set replaces the results of one query.
func (s *Server) Set(query string, hits []Hit) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.answers == nil {
		s.answers = map[string][]Hit{}
	}
	s.answers[query] = hits
}

// Asked lists the queries received, in order.
func (s *Server) Asked() []Asked {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Asked(nil), s.asked...)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/search" {
		http.NotFound(w, r)
		return
	}
	q := r.URL.Query()
	if q.Get("format") != "json" {
		http.Error(w, "only format=json here", http.StatusForbidden)
		return
	}
	s.mu.Lock()
	s.asked = append(s.asked, Asked{Query: q.Get("q"), TimeRange: q.Get("time_range"), Language: q.Get("language")})
	hits := s.answers[q.Get("q")]
	s.mu.Unlock()
	type result struct {
		URL           string `json:"url"`
		Title         string `json:"title"`
		Content       string `json:"content"`
		PublishedDate string `json:"publishedDate,omitempty"`
		Engine        string `json:"engine"`
	}
	out := struct {
		Query   string   `json:"query"`
		Results []result `json:"results"`
	}{Query: q.Get("q"), Results: []result{}}
	for _, h := range hits {
		out.Results = append(out.Results, result{URL: h.URL, Title: h.Title, Content: h.Content, PublishedDate: h.PublishedDate, Engine: "fake"})
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(out)
}
