package runtime

import (
	"fmt"
	"io"
	"net/http"
	"net/netip"
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
// gets 429 for a wrong or missing key until its bucket refills; a right key
// from the same address is never refused (issue 26: twenty wrong keys
// locked out everyone behind a load balancer).
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
	for _, auth := range []string{"Bearer guess5", ""} {
		if code, b := doAuth(t, "GET", ts.URL+"/api/skills", auth, ""); code != http.StatusTooManyRequests || !strings.Contains(b, "wrong API key") {
			t.Errorf("%q after 5 failures = %d %s, want 429", auth, code, b)
		}
	}
	if code, b := doAuth(t, "GET", ts.URL+"/api/skills", "Bearer ka", ""); code != 200 {
		t.Errorf("right key after 5 failures from its address = %d %s, want 200", code, b)
	}
	mu.Lock()
	now = now.Add(time.Minute)
	mu.Unlock()
	if code, _ := doAuth(t, "GET", ts.URL+"/api/skills", "Bearer guess6", ""); code != 401 {
		t.Errorf("wrong key a minute later = %d, want 401", code)
	}
}

// TestFailedLoginsBehindAProxy: behind a trusted proxy each client's
// failures count against its own address (X-Forwarded-For); from an
// untrusted peer X-Forwarded-For is ignored, so a client cannot spread its
// guesses over made-up addresses.
func TestFailedLoginsBehindAProxy(t *testing.T) {
	get := func(t *testing.T, url, key, xff string) int {
		t.Helper()
		req, _ := http.NewRequest("GET", url+"/api/skills", nil)
		if key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		if xff != "" {
			req.Header.Set("X-Forwarded-For", xff)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	t.Run("trusted", func(t *testing.T) {
		// The test client connects from 127.0.0.1: the proxy.
		ts, _ := newTestServer(t, &fakeModel{}, ServerOptions{FailedAuthPerMin: 3, TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}})
		for i := range 3 {
			if code := get(t, ts.URL, "wrong", "203.0.113.9"); code != 401 {
				t.Fatalf("attacker guess %d = %d", i, code)
			}
		}
		if code := get(t, ts.URL, "wrong", "203.0.113.9"); code != 429 {
			t.Errorf("attacker's 4th guess = %d, want 429", code)
		}
		// The attacker cannot escape by writing another address on the left.
		if code := get(t, ts.URL, "wrong", "198.51.100.1, 203.0.113.9"); code != 429 {
			t.Errorf("attacker with a forged left hop = %d, want 429", code)
		}
		// Another user behind the same proxy is not affected, with a
		// mistyped key or the right one.
		if code := get(t, ts.URL, "typo", "198.51.100.7"); code != 401 {
			t.Errorf("other user's typo = %d, want 401", code)
		}
		if code := get(t, ts.URL, "ka", "198.51.100.7"); code != 200 {
			t.Errorf("other user's key = %d, want 200", code)
		}
		if code := get(t, ts.URL, "ka", "203.0.113.9"); code != 200 {
			t.Errorf("the attacker's address with a valid key = %d, want 200", code)
		}
	})
	t.Run("untrusted", func(t *testing.T) {
		ts, _ := newTestServer(t, &fakeModel{}, ServerOptions{FailedAuthPerMin: 3, TrustedProxies: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}})
		for i := range 3 {
			if code := get(t, ts.URL, "wrong", fmt.Sprintf("203.0.113.%d", i)); code != 401 {
				t.Fatalf("guess %d = %d", i, code)
			}
		}
		if code := get(t, ts.URL, "wrong", "203.0.113.200"); code != 429 {
			t.Errorf("4th guess under a new made-up address = %d, want 429", code)
		}
	})
}

func TestClientAddr(t *testing.T) {
	s := &Server{opts: ServerOptions{TrustedProxies: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("192.168.1.1/32")}}}
	for _, tt := range []struct {
		remote string
		xff    []string
		want   string
	}{
		{"203.0.113.1:5555", []string{"1.2.3.4"}, "203.0.113.1"},
		{"10.0.0.2:5555", nil, "10.0.0.2"},
		{"10.0.0.2:5555", []string{"1.2.3.4"}, "1.2.3.4"},
		{"10.0.0.2:5555", []string{"6.6.6.6, 1.2.3.4"}, "1.2.3.4"},
		{"10.0.0.2:5555", []string{"1.2.3.4, 192.168.1.1"}, "1.2.3.4"},
		{"10.0.0.2:5555", []string{"6.6.6.6", "1.2.3.4, 10.9.9.9"}, "1.2.3.4"},
		{"10.0.0.2:5555", []string{"10.1.1.1, 10.2.2.2"}, "10.1.1.1"},
		{"10.0.0.2:5555", []string{"1.2.3.4, garbage"}, "10.0.0.2"},
		{"10.0.0.2:5555", []string{"garbage, 1.2.3.4"}, "1.2.3.4"},
		{"[::ffff:10.0.0.2]:5555", []string{"2001:db8::1"}, "2001:db8::1"},
		{"[2001:db8::9]:5555", []string{"1.2.3.4"}, "2001:db8::9"},
	} {
		r, _ := http.NewRequest("GET", "/", nil)
		r.RemoteAddr = tt.remote
		for _, v := range tt.xff {
			r.Header.Add("X-Forwarded-For", v)
		}
		if got := s.clientAddr(r); got != tt.want {
			t.Errorf("clientAddr(%s, %q) = %s, want %s", tt.remote, tt.xff, got, tt.want)
		}
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
