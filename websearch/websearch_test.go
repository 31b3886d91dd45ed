package websearch

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/vibelife/vibe/websearch/websearchtest"
)

func TestSearXNGAgainstFake(t *testing.T) {
	srv := websearchtest.NewSearXNG(t, map[string][]websearchtest.Hit{
		"子平真诠 沈孝瞻": {
			{URL: "https://ctext.example/ziping", Title: " 子平真诠 ", Content: "卷一", PublishedDate: "2024-03-05T10:00:00"},
			{URL: "ftp://old.example/x", Title: "not http"},
			{URL: "https://ctext.example/ziping", Title: "the same again"},
			{URL: "http://b.example/2", Title: "second", PublishedDate: "garbage"},
			{URL: "http://b.example/3", Title: "third"},
		},
	})
	p, err := New(Config{Provider: "searxng", URL: srv.URL + "/"})
	if err != nil {
		t.Fatal(err)
	}
	got, err := p.Search(context.Background(), Query{Text: "子平真诠 沈孝瞻", Max: 2, Recent: "year", Language: "zh"})
	if err != nil {
		t.Fatal(err)
	}
	want := []Result{{URL: "https://ctext.example/ziping", Title: "子平真诠", Snippet: "卷一", Published: "2024-03-05"}, {URL: "http://b.example/2", Title: "second"}}
	if len(got) != len(want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("result %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	asked := srv.Asked()
	if len(asked) != 1 || asked[0].TimeRange != "year" || asked[0].Language != "zh" {
		t.Errorf("asked %+v, want one query with time_range=year language=zh", asked)
	}
	// A query nobody answers: no results, no error.
	none, err := p.Search(context.Background(), Query{Text: "nothing"})
	if err != nil || len(none) != 0 {
		t.Errorf("unknown query: %v, %v; want no results", none, err)
	}
}

func TestSearXNGErrorsSayWhatToDo(t *testing.T) {
	forbidden := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "Forbidden", http.StatusForbidden)
	}))
	defer forbidden.Close()
	html := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("<html>a search page</html>"))
	}))
	defer html.Close()
	gone := httptest.NewServer(http.NotFoundHandler())
	gone.Close()
	for _, tc := range []struct {
		url, want string
	}{
		{forbidden.URL, "add json to search.formats"},
		{html.URL, "did not answer JSON"},
		{gone.URL, "cannot reach searxng"},
	} {
		p, err := New(Config{Provider: "searxng", URL: tc.url})
		if err != nil {
			t.Fatal(err)
		}
		_, err = p.Search(context.Background(), Query{Text: "x"})
		if !errors.Is(err, ErrSearch) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want ErrSearch saying %q", tc.url, err, tc.want)
		}
	}
}

func TestBraveAgainstFake(t *testing.T) {
	var gotQuery, gotToken string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotQuery, gotToken = r.URL.RawQuery, r.Header.Get("X-Subscription-Token")
		if gotToken != "tok" {
			w.WriteHeader(http.StatusUnauthorized)
			w.Write([]byte(`{"type":"ErrorResponse","error":{"code":"SUBSCRIPTION_TOKEN_INVALID"}}`))
			return
		}
		w.Write([]byte(`{"type":"search","web":{"type":"search","results":[
			{"title":"<strong>Tea</strong> brewing study","url":"https://tea.example/study","description":"A 2024 <strong>study</strong>","page_age":"2024-11-02T08:00:00","age":"November 2, 2024"},
			{"title":"Second","url":"https://tea.example/2","description":""}]}}`))
	}))
	defer srv.Close()
	p, err := New(Config{Provider: "brave", URL: srv.URL, APIKey: "tok"})
	if err != nil {
		t.Fatal(err)
	}
	got, err := p.Search(context.Background(), Query{Text: "tea brewing", Max: 5, Recent: "month", Language: "zh"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0] != (Result{URL: "https://tea.example/study", Title: "Tea brewing study", Snippet: "A 2024 study", Published: "2024-11-02"}) {
		t.Errorf("got %+v", got)
	}
	for _, want := range []string{"q=tea+brewing", "count=5", "freshness=pm", "search_lang=zh-hans"} {
		if !strings.Contains(gotQuery, want) {
			t.Errorf("query %q lacks %s", gotQuery, want)
		}
	}
	bad, _ := New(Config{Provider: "brave", URL: srv.URL, APIKey: "wrong"})
	if _, err := bad.Search(context.Background(), Query{Text: "x"}); err == nil || !strings.Contains(err.Error(), "BRAVE_API_KEY") {
		t.Errorf("refused key: %v, want a hint naming BRAVE_API_KEY", err)
	}
}

func TestNewRefusesIncompleteConfig(t *testing.T) {
	for _, tc := range []struct {
		c    Config
		want string
	}{
		{Config{}, "no search provider"},
		{Config{Provider: "searxng"}, "search.url is empty"},
		{Config{Provider: "searxng", URL: "localhost:8888"}, "http(s) address"},
		{Config{Provider: "brave"}, "BRAVE_API_KEY"},
		{Config{Provider: "google"}, "use searxng"},
	} {
		if _, err := New(tc.c); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("New(%+v) = %v, want an error saying %q", tc.c, err, tc.want)
		}
	}
	p, _ := New(Config{Provider: "searxng", URL: "http://x"})
	if _, err := p.Search(context.Background(), Query{Text: "x", Recent: "decade"}); err == nil || !strings.Contains(err.Error(), "day, week, month, year") {
		t.Errorf("recent decade: %v", err)
	}
}
