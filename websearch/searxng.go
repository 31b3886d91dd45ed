package websearch

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// SearXNG asks a SearXNG instance's JSON API (GET /search?q=...&format=json).
// The instance must serve the json format (search.formats in its
// settings.yml); a 403 says it does not.
type SearXNG struct {
	BaseURL string
	Client  *http.Client
	Timeout time.Duration
}

var _ Provider = (*SearXNG)(nil)

// Name implements [Provider].
func (s *SearXNG) Name() string { return "searxng " + s.BaseURL }

type searxngAnswer struct {
	Results []struct {
		URL           string `json:"url"`
		Title         string `json:"title"`
		Content       string `json:"content"`
		PublishedDate string `json:"publishedDate"`
	} `json:"results"`
}

// Search implements [Provider]. SearXNG answers a page of about 20
// results; the first q.Max are kept.
func (s *SearXNG) Search(ctx context.Context, q Query) ([]Result, error) {
	if err := validRecent(q.Recent); err != nil {
		return nil, err
	}
	if strings.TrimSpace(q.Text) == "" {
		return nil, fmt.Errorf("%w: empty query", ErrSearch)
	}
	v := url.Values{"q": {q.Text}, "format": {"json"}}
	if q.Recent != "" {
		v.Set("time_range", q.Recent)
	}
	if q.Language != "" {
		v.Set("language", q.Language)
	}
	var a searxngAnswer
	if err := getJSON(ctx, s.Client, s.Timeout, s.Name(), s.BaseURL+"/search?"+v.Encode(), nil, &a); err != nil {
		return nil, err
	}
	rs := make([]Result, 0, len(a.Results))
	for _, r := range a.Results {
		rs = append(rs, Result{URL: r.URL, Title: r.Title, Snippet: r.Content, Published: day(r.PublishedDate)})
	}
	return clean(rs, maxOf(q)), nil
}
