// Package websearch asks a web search service for pages about a question.
//
// Two providers are built in: SearXNG's JSON API (self-hostable, no key:
// https://docs.searxng.org/dev/search_api) and the Brave Search API
// (hosted, a subscription token). Both answer [Provider]; [New] picks one
// from the configuration. A provider only lists pages: fetching them is
// the caller's (curate downloads them within its URL limits).
package websearch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Provider searches the web.
//
// Search returns at most q.Max results, best first, each with an http(s)
// URL; an answer with none is an empty slice and a nil error. Errors wrap
// [ErrSearch] and say what to do (an unreachable service, a refused key,
// a format the instance does not serve).
type Provider interface {
	Search(ctx context.Context, q Query) ([]Result, error)
	// Name names the provider and where it asks ("searxng http://...").
	Name() string
}

// Query is one search.
type Query struct {
	// Text is what to search for.
	Text string
	// Max is the most results wanted (default 10).
	Max int
	// Recent keeps to pages of the last "day", "week", "month" or "year";
	// empty is any time.
	Recent string
	// Language, when set (zh, en, ...), prefers pages in it.
	Language string
}

// Result is one page a search found.
type Result struct {
	URL     string `json:"url"`
	Title   string `json:"title"`
	Snippet string `json:"snippet,omitempty"`
	// Published is the page's date as the service gives it (YYYY-MM-DD),
	// when it gives one.
	Published string `json:"published,omitempty"`
}

// ErrSearch is wrapped by every error a provider returns.
var ErrSearch = errors.New("web search")

// Recency values of [Query.Recent].
var Recency = []string{"day", "week", "month", "year"}

// Config selects and configures a provider (vibe.yaml search:).
type Config struct {
	// Provider is "searxng" or "brave"; empty means none is configured.
	Provider string
	// URL is the SearXNG instance (http://localhost:8888), or for Brave an
	// endpoint other than the public one (a proxy, a test server).
	URL string
	// APIKey is Brave's subscription token.
	APIKey string
	// Timeout bounds one search (default 30s).
	Timeout time.Duration
	// Client makes the requests; nil means a default client.
	Client *http.Client
}

// ErrNotConfigured is returned by [New] when no provider is configured.
var ErrNotConfigured = errors.New("websearch: no search provider configured")

// New returns the configured provider.
func New(c Config) (Provider, error) {
	if c.Client == nil {
		c.Client = &http.Client{}
	}
	if c.Timeout == 0 {
		c.Timeout = 30 * time.Second
	}
	switch c.Provider {
	case "":
		return nil, ErrNotConfigured
	case "searxng":
		if c.URL == "" {
			return nil, fmt.Errorf("search.provider is searxng but search.url is empty: give the instance's address, e.g. http://localhost:8888 (its settings.yml must list json under search.formats)")
		}
		if _, err := parseHTTP(c.URL); err != nil {
			return nil, fmt.Errorf("search.url %q: %v", c.URL, err)
		}
		return &SearXNG{BaseURL: strings.TrimRight(c.URL, "/"), Client: c.Client, Timeout: c.Timeout}, nil
	case "brave":
		if c.APIKey == "" {
			return nil, fmt.Errorf("search.provider is brave but no API key is set: export BRAVE_API_KEY (or VIBE_SEARCH_API_KEY) with a Brave Search API subscription token")
		}
		ep := c.URL
		if ep == "" {
			ep = BraveEndpoint
		}
		if _, err := parseHTTP(ep); err != nil {
			return nil, fmt.Errorf("search.url %q: %v", c.URL, err)
		}
		return &Brave{Endpoint: ep, APIKey: c.APIKey, Client: c.Client, Timeout: c.Timeout}, nil
	}
	return nil, fmt.Errorf("search.provider %q: use searxng (self-hosted, search.url) or brave (BRAVE_API_KEY)", c.Provider)
}

func parseHTTP(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, err
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, errors.New("want an http(s) address such as http://localhost:8888")
	}
	return u, nil
}

// maxAnswerBytes bounds a search service's answer.
const maxAnswerBytes = 8 << 20

// getJSON GETs u with the headers and decodes the JSON answer into v.
func getJSON(ctx context.Context, client *http.Client, timeout time.Duration, name, u string, header http.Header, v any) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return fmt.Errorf("%w: %s: %v", ErrSearch, name, err)
	}
	for k, vs := range header {
		req.Header[k] = vs
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "vibe-curate/1")
	resp, err := client.Do(req)
	if err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return fmt.Errorf("%w: %s gave no answer within %s", ErrSearch, name, timeout)
		}
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return fmt.Errorf("%w: cannot reach %s: %v", ErrSearch, name, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswerBytes+1))
	if err != nil {
		return fmt.Errorf("%w: %s: %v", ErrSearch, name, err)
	}
	if len(body) > maxAnswerBytes {
		return fmt.Errorf("%w: %s answered more than %d bytes", ErrSearch, name, maxAnswerBytes)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%w: %s answered HTTP %s%s", ErrSearch, name, resp.Status, statusHint(name, resp.StatusCode, body))
	}
	if err := json.Unmarshal(body, v); err != nil {
		return fmt.Errorf("%w: %s did not answer JSON (%v): is search.url the service's address?", ErrSearch, name, err)
	}
	return nil
}

// statusHint says what an HTTP error of a search service means.
func statusHint(name string, code int, body []byte) string {
	msg := strings.TrimSpace(string(body))
	if len(msg) > 200 {
		msg = msg[:200] + "..."
	}
	switch {
	case strings.HasPrefix(name, "searxng") && code == http.StatusForbidden:
		return ": the instance does not serve JSON; add json to search.formats in its settings.yml"
	case code == http.StatusUnauthorized || code == http.StatusForbidden:
		return ": the API key was refused; check BRAVE_API_KEY (or VIBE_SEARCH_API_KEY)"
	case code == http.StatusTooManyRequests:
		return ": rate limited; wait and run again"
	case msg != "":
		return ": " + msg
	}
	return ""
}

// clean keeps the results with an http(s) URL, each URL once, at most max.
func clean(rs []Result, max int) []Result {
	out := make([]Result, 0, len(rs))
	seen := map[string]bool{}
	for _, r := range rs {
		r.URL = strings.TrimSpace(r.URL)
		u, err := url.Parse(r.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || seen[r.URL] {
			continue
		}
		seen[r.URL] = true
		r.Title = strings.TrimSpace(r.Title)
		r.Snippet = strings.TrimSpace(r.Snippet)
		out = append(out, r)
		if len(out) == max {
			break
		}
	}
	return out
}

// day turns a service's date (RFC 3339, "2006-01-02 15:04:05", a plain
// date) into YYYY-MM-DD; anything else gives "".
func day(s string) string {
	s = strings.TrimSpace(s)
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02 15:04:05", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.Format("2006-01-02")
		}
	}
	return ""
}

func maxOf(q Query) int {
	if q.Max <= 0 {
		return 10
	}
	return q.Max
}

func validRecent(r string) error {
	if r == "" {
		return nil
	}
	for _, v := range Recency {
		if r == v {
			return nil
		}
	}
	return fmt.Errorf("%w: recent %q: use day, week, month, year or nothing (any time)", ErrSearch, r)
}
