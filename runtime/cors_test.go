package runtime

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// CORS is off unless configured; a configured origin gets the headers and
// its preflight, any other origin none.
func TestCORSOnlyForConfiguredOrigins(t *testing.T) {
	a := agentOver(t, writeSkills(t, "", map[string]string{"calc/SKILL.md": calcSkill}), nil, nil)
	for _, tc := range []struct {
		origins       []string
		origin, allow string
	}{
		{nil, "https://evil.example", ""},
		{[]string{"https://app.example.org/"}, "https://app.example.org", "https://app.example.org"},
		{[]string{"https://app.example.org"}, "https://evil.example", ""},
	} {
		srv, err := NewServer(a, ServerOptions{Insecure: true, CORSOrigins: tc.origins})
		if err != nil {
			t.Fatal(err)
		}
		req := httptest.NewRequest("GET", "/api/skills", nil)
		req.Header.Set("Origin", tc.origin)
		w := httptest.NewRecorder()
		srv.ServeHTTP(w, req)
		if got := w.Header().Get("Access-Control-Allow-Origin"); got != tc.allow || w.Code != 200 {
			t.Errorf("origins %v, Origin %s: allow %q (status %d), want %q", tc.origins, tc.origin, got, w.Code, tc.allow)
		}
		pre := httptest.NewRequest("OPTIONS", "/api/chat", nil)
		pre.Header.Set("Origin", tc.origin)
		pre.Header.Set("Access-Control-Request-Method", "POST")
		w = httptest.NewRecorder()
		srv.ServeHTTP(w, pre)
		if tc.allow != "" && (w.Code != http.StatusNoContent || w.Header().Get("Access-Control-Allow-Headers") == "") {
			t.Errorf("preflight from %s: %d %v", tc.origin, w.Code, w.Header())
		}
		if tc.allow == "" && w.Header().Get("Access-Control-Allow-Origin") != "" {
			t.Errorf("preflight from %s answered with CORS headers", tc.origin)
		}
	}
}
