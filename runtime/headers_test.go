package runtime

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestSecurityHeadersOnEveryResponse is the regression test of issue 26's
// finding that CSP and X-Frame-Options were set on the page only: every
// response carries them, and nosniff and the referrer policy, whatever
// answers it: an API handler's JSON, /healthz, /readyz, the mux's 404, 405
// and 307, the failed-login 429, a 401 and the chat page (which keeps its
// own CSP).
func TestSecurityHeadersOnEveryResponse(t *testing.T) {
	a, _ := newTestAgent(t, &fakeModel{}, func(c *Config) { c.Searcher = listingSearcher{docs: 1} })
	keys := &Keys{}
	keys.Add("ka", "alice")
	s, err := NewServer(a, ServerOptions{Keys: keys, FailedAuthPerMin: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		method, path, key string
		code              int
		csp               string
	}{
		{"GET", "/api/skills", "ka", 200, apiCSP},
		{"POST", "/api/tools/execute", "ka", 400, apiCSP},
		{"GET", "/healthz", "", 200, apiCSP},
		{"GET", "/readyz", "", 200, apiCSP},
		{"GET", "/no/such/page", "", 404, apiCSP},
		{"DELETE", "/healthz", "", 405, apiCSP},
		{"GET", "/ui", "", 307, apiCSP},
		{"GET", "/api//skills", "ka", 307, apiCSP},
		{"GET", "/api/skills", "wrong", 401, apiCSP},
		{"GET", "/api/skills", "wrong-again", 429, apiCSP},
		{"GET", "/", "", 200, pageCSP},
	} {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(tt.method, tt.path, strings.NewReader("{"))
		if tt.key != "" {
			req.Header.Set("Authorization", "Bearer "+tt.key)
		}
		s.ServeHTTP(rec, req)
		name := tt.method + " " + tt.path
		if rec.Code != tt.code {
			t.Errorf("%s = %d, want %d", name, rec.Code, tt.code)
		}
		h := rec.Header()
		for k, want := range map[string]string{
			"Content-Security-Policy": tt.csp,
			"X-Frame-Options":         "DENY",
			"X-Content-Type-Options":  "nosniff",
			"Referrer-Policy":         "no-referrer",
		} {
			if got := h.Values(k); len(got) != 1 || got[0] != want {
				t.Errorf("%s (%d): %s = %q, want %q", name, rec.Code, k, got, want)
			}
		}
	}
	// Over a real connection too (the server's own 400 for a bad request
	// line aside, which no handler sees).
	ts := httptest.NewServer(s)
	defer ts.Close()
	resp, err := http.Get(ts.URL + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.Header.Get("X-Frame-Options") != "DENY" || resp.Header.Get("Content-Security-Policy") != apiCSP {
		t.Errorf("headers over HTTP: %v", resp.Header)
	}
}
