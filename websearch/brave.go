package websearch

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// BraveEndpoint is the Brave Search API's web search.
const BraveEndpoint = "https://api.search.brave.com/res/v1/web/search"

// Brave asks the Brave Search API (GET ?q=...&count=..., the subscription
// token in the X-Subscription-Token header).
type Brave struct {
	Endpoint string
	APIKey   string
	Client   *http.Client
	Timeout  time.Duration
}

var _ Provider = (*Brave)(nil)

// Name implements [Provider].
func (b *Brave) Name() string {
	if b.Endpoint == BraveEndpoint {
		return "brave"
	}
	return "brave " + b.Endpoint
}

type braveAnswer struct {
	Web struct {
		Results []struct {
			URL         string `json:"url"`
			Title       string `json:"title"`
			Description string `json:"description"`
			PageAge     string `json:"page_age"`
		} `json:"results"`
	} `json:"web"`
}

// braveFreshness maps [Query.Recent] to Brave's freshness parameter.
var braveFreshness = map[string]string{"day": "pd", "week": "pw", "month": "pm", "year": "py"}

// Search implements [Provider]. Brave gives at most 20 results a request.
func (b *Brave) Search(ctx context.Context, q Query) ([]Result, error) {
	if err := validRecent(q.Recent); err != nil {
		return nil, err
	}
	if strings.TrimSpace(q.Text) == "" {
		return nil, fmt.Errorf("%w: empty query", ErrSearch)
	}
	n := min(maxOf(q), 20)
	v := url.Values{"q": {q.Text}, "count": {strconv.Itoa(n)}}
	if f := braveFreshness[q.Recent]; f != "" {
		v.Set("freshness", f)
	}
	if q.Language != "" {
		v.Set("search_lang", braveLang(q.Language))
	}
	sep := "?"
	if strings.Contains(b.Endpoint, "?") {
		sep = "&"
	}
	var a braveAnswer
	h := http.Header{"X-Subscription-Token": {b.APIKey}}
	if err := getJSON(ctx, b.Client, b.Timeout, b.Name(), b.Endpoint+sep+v.Encode(), h, &a); err != nil {
		return nil, err
	}
	rs := make([]Result, 0, len(a.Web.Results))
	for _, r := range a.Web.Results {
		rs = append(rs, Result{URL: r.URL, Title: stripTags(r.Title), Snippet: stripTags(r.Description), Published: day(r.PageAge)})
	}
	return clean(rs, n), nil
}

// stripTags removes the <strong> marks Brave puts around matched words.
func stripTags(s string) string {
	r := strings.NewReplacer("<strong>", "", "</strong>", "", "<b>", "", "</b>", "")
	return r.Replace(s)
}

// braveLang maps an ISO 639-1 code to Brave's search_lang, which names
// Chinese by script and Japanese as jp.
func braveLang(l string) string {
	switch strings.ToLower(l) {
	case "zh", "zh-cn", "zh-hans":
		return "zh-hans"
	case "zh-tw", "zh-hk", "zh-hant":
		return "zh-hant"
	case "ja":
		return "jp"
	}
	return strings.ToLower(l)
}
