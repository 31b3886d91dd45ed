package runtime

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

func doAuth(t *testing.T, method, url, auth, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestAuthorizationHeaderSpellings: the scheme is case-insensitive and the
// token trimmed; a header without a token or with another scheme is 401.
func TestAuthorizationHeaderSpellings(t *testing.T) {
	ts, _ := newTestServer(t, &fakeModel{}, ServerOptions{FailedAuthPerMin: -1})
	for _, tt := range []struct {
		auth string
		want int
	}{
		{"Bearer ka", 200}, {"bearer ka", 200}, {"BEARER ka", 200}, {"Bearer  ka ", 200}, {"bearer\tka", 401},
		{"Basic ka", 401}, {"Bearer", 401}, {"Bearer ", 401}, {"ka", 401}, {"Bearerka", 401},
	} {
		if code, b := doAuth(t, "GET", ts.URL+"/api/skills", tt.auth, ""); code != tt.want {
			t.Errorf("Authorization %q = %d %s, want %d", tt.auth, code, b, tt.want)
		}
	}
}

// TestRateLimitIsPerUser: spellings of one key ("Bearer ␠KEY", "bearer
// KEY") share the user's bucket instead of getting 60 more requests each,
// and two keys of one user share it too.
func TestRateLimitIsPerUser(t *testing.T) {
	keys := &Keys{}
	if err := ParseKeysEnv("ka:alice,ka2:alice,kb:bob", keys); err != nil {
		t.Fatal(err)
	}
	ts, _ := newTestServer(t, &fakeModel{}, ServerOptions{Keys: keys, RequestsPerMin: 3})
	for i, auth := range []string{"Bearer ka", "Bearer  ka", "bearer ka"} {
		if code, _ := doAuth(t, "GET", ts.URL+"/api/skills", auth, ""); code != 200 {
			t.Fatalf("request %d = %d", i, code)
		}
	}
	for _, auth := range []string{"Bearer ka", "Bearer  ka", "bearer ka ", "Bearer ka2"} {
		if code, _ := doAuth(t, "GET", ts.URL+"/api/skills", auth, ""); code != http.StatusTooManyRequests {
			t.Errorf("%q after alice's 3 requests = %d, want 429", auth, code)
		}
	}
	if code, _ := doAuth(t, "GET", ts.URL+"/api/skills", "Bearer kb", ""); code != 200 {
		t.Errorf("bob = %d", code)
	}
}

// TestFailedLoginsAreLimited: after FailedAuthPerMin wrong keys an address
// gets 429, even for a right key, until its bucket refills.
func TestFailedLoginsAreLimited(t *testing.T) {
	var mu sync.Mutex
	now := time.Unix(1000, 0)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	ts, _ := newTestServer(t, &fakeModel{}, ServerOptions{FailedAuthPerMin: 5, Now: clock})
	for i := range 5 {
		if code, _ := doAuth(t, "GET", ts.URL+"/api/skills", fmt.Sprintf("Bearer guess%d", i), ""); code != 401 {
			t.Fatalf("guess %d = %d, want 401", i, code)
		}
	}
	for _, auth := range []string{"Bearer guess5", "", "Bearer ka"} {
		if code, b := doAuth(t, "GET", ts.URL+"/api/skills", auth, ""); code != http.StatusTooManyRequests || !strings.Contains(b, "wrong API key") {
			t.Errorf("%q after 5 failures = %d %s, want 429", auth, code, b)
		}
	}
	mu.Lock()
	now = now.Add(time.Minute)
	mu.Unlock()
	if code, _ := doAuth(t, "GET", ts.URL+"/api/skills", "Bearer ka", ""); code != 200 {
		t.Errorf("right key a minute later = %d", code)
	}
}

// TestIdleBucketsAreEvicted: the limiter forgets keys idle for a minute
// (their bucket would be full again), so the map does not grow forever.
func TestIdleBucketsAreEvicted(t *testing.T) {
	now := time.Unix(1000, 0)
	r := newRateLimiter(10, func() time.Time { return now })
	for i := range 1000 {
		r.allow(fmt.Sprint("k", i))
	}
	if r.size() != 1000 {
		t.Fatalf("size = %d", r.size())
	}
	now = now.Add(30 * time.Second)
	r.allow("fresh")
	now = now.Add(61 * time.Second)
	r.allow("fresh")
	if r.size() != 1 {
		t.Fatalf("after a minute idle: %d buckets, want 1 (fresh)", r.size())
	}
	for range 9 {
		r.allow("fresh")
	}
	if r.allow("fresh") {
		t.Fatal("the kept bucket lost its count")
	}
}

// TestTrailingDataAfterTheBody: a body with anything but white space after
// its JSON value is a 400 on every JSON endpoint.
func TestTrailingDataAfterTheBody(t *testing.T) {
	ts, _ := newTestServer(t, &fakeModel{}, ServerOptions{})
	for _, tt := range []struct{ path, body string }{
		{"/api/chat", `{"message":"hi"}{"message":"again"}`},
		{"/api/chat", `{"message":"hi"} x`},
		{"/api/chat", `{"message":"hi"}}`},
		{"/v1/chat/completions", `{"messages":[{"role":"user","content":"hi"}]} []`},
		{"/api/tools/execute", `{"tool":"get_rules","args":{}} 1`},
	} {
		code, b := doAuth(t, "POST", ts.URL+tt.path, "Bearer ka", tt.body)
		if code != 400 || !strings.Contains(b, "data after the JSON value") {
			t.Errorf("%s %s = %d %s", tt.path, tt.body, code, b)
		}
	}
	if code, b := doAuth(t, "POST", ts.URL+"/api/chat", "Bearer ka", "{\"message\":\"hi\"}\n\t "); code != 200 {
		t.Errorf("trailing white space = %d %s", code, b)
	}
}
