package main

import (
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vibelife/vibe/internal/iostreams"
	"github.com/vibelife/vibe/runtime"
)

func TestChatOfflineInProcess(t *testing.T) {
	ws := t.TempDir()
	if err := os.CopyFS(filepath.Join(ws, "skills"), os.DirFS(filepath.Join("..", "..", "runtime", "testdata", "skills"))); err != nil {
		t.Fatal(err)
	}
	ios, in, out, errOut := iostreams.Test()
	in.WriteString("八字 日主甲木生于寅月\n\n")
	code := run(context.Background(), ios, []string{"--workspace", ws, "chat"}, func(string) string { return "" })
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	// The bazi skill is written in Chinese: so is its retrieval-only label.
	for _, want := range []string{"离线检索模式", "r2", "knowledge/bazi/converted/a.md#1"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("chat output lacks %q:\n%s", want, out.String())
		}
	}
	if !strings.Contains(errOut.String(), "no model configured") {
		t.Errorf("offline mode not announced: %s", errOut.String())
	}
}

// A message given as an argument is answered once, without reading
// standard input or printing a prompt; an empty one is a usage error.
func TestChatOneMessageArgument(t *testing.T) {
	ws := t.TempDir()
	if err := os.CopyFS(filepath.Join(ws, "skills"), os.DirFS(filepath.Join("..", "..", "runtime", "testdata", "skills"))); err != nil {
		t.Fatal(err)
	}
	ios, in, out, errOut := iostreams.Test()
	in.WriteString("this line must not be read\n")
	code := run(context.Background(), ios, []string{"--workspace", ws, "chat", "--skill", "bazi", "八字 日主甲木生于寅月"}, func(string) string { return "" })
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	if !strings.Contains(out.String(), "r2") || strings.HasPrefix(out.String(), "> ") {
		t.Errorf("one answer without a prompt wanted:\n%s", out.String())
	}
	if in.Len() == 0 {
		t.Error("standard input was read")
	}
	ios, _, _, errOut = iostreams.Test()
	if code := run(context.Background(), ios, []string{"--workspace", ws, "chat", "  "}, func(string) string { return "" }); code != exitError || !strings.Contains(errOut.String(), "the message is empty") {
		t.Errorf("empty message: exit %d: %s", code, errOut.String())
	}
	// Against a server that is down, the one message fails with exit 1.
	closed := httptest.NewServer(nil)
	closed.Close()
	ios, _, _, errOut = iostreams.Test()
	if code := run(context.Background(), ios, []string{"--workspace", ws, "chat", "--server", closed.URL, "--key", "k", "hi"}, func(string) string { return "" }); code != exitFailure {
		t.Errorf("server down: exit %d: %s", code, errOut.String())
	}
}

func TestServeRequiresKeys(t *testing.T) {
	code, _, errOut := runVibe(t, nil, "--workspace", t.TempDir(), "serve")
	if code == 0 || !strings.Contains(errOut, "no API keys") || !strings.Contains(errOut, "--insecure-dev") {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	code, _, errOut = runVibe(t, nil, "--workspace", t.TempDir(), "serve", "--keys", "/nonexistent/keys.txt")
	if code == 0 || !strings.Contains(errOut, "keys file") {
		t.Fatalf("exit %d: %s", code, errOut)
	}
}

func TestChatAgainstServer(t *testing.T) {
	ag := skillsAgent(t, filepath.Join("..", "..", "runtime", "testdata", "skills"))
	keys := &runtime.Keys{}
	keys.Add("ka", "alice")
	srv, err := runtime.NewServer(ag, runtime.ServerOptions{Keys: keys})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	for _, tt := range []struct {
		name, key string
		env       map[string]string
		code      int
		want      []string
	}{
		{"flag key", "ka", nil, 0, []string{"离线检索模式", "r2", "knowledge/bazi/converted/a.md#1"}},
		{"env key", "", map[string]string{"VIBE_API_KEY": "ka"}, 0, []string{"离线检索模式", "r2"}},
		{"bad key", "nope", nil, exitFailure, []string{"HTTP 401", "valid API key", "hint: the key was refused: pass --key KEY or set VIBE_API_KEY"}},
		{"no key", "", nil, exitFailure, []string{"HTTP 401", "hint: pass --key KEY or set VIBE_API_KEY"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ios, in, out, errOut := iostreams.Test()
			in.WriteString("八字 日主甲木生于寅月\n\n")
			args := []string{"--workspace", t.TempDir(), "chat", "--server", ts.URL}
			if tt.key != "" {
				args = append(args, "--key", tt.key)
			}
			if code := run(context.Background(), ios, args, func(k string) string { return tt.env[k] }); code != tt.code {
				t.Fatalf("exit %d, want %d: %s", code, tt.code, errOut.String())
			}
			all := out.String() + errOut.String()
			for _, w := range tt.want {
				if !strings.Contains(all, w) {
					t.Errorf("output lacks %q:\n%s", w, all)
				}
			}
		})
	}
}

// newChatTestServer serves runtime/testdata/skills with the key "ka".
func newChatTestServer(t *testing.T) *httptest.Server {
	t.Helper()
	ag := skillsAgent(t, filepath.Join("..", "..", "runtime", "testdata", "skills"))
	keys := &runtime.Keys{}
	keys.Add("ka", "alice")
	srv, err := runtime.NewServer(ag, runtime.ServerOptions{Keys: keys})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	return ts
}

// Every chat mistake exits non-zero, before reading a message, with what to
// do next.
func TestChatErrorsExitNonZero(t *testing.T) {
	ts := newChatTestServer(t)
	// A port nothing listens on: a listener opened and closed.
	closed := httptest.NewServer(nil)
	closed.Close()
	wsSkills := t.TempDir()
	if err := os.CopyFS(filepath.Join(wsSkills, "skills"), os.DirFS(filepath.Join("..", "..", "runtime", "testdata", "skills"))); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		args []string
		code int
		want []string
	}{
		{"refused connection", []string{"chat", "--server", closed.URL, "--key", "ka"}, exitFailure,
			[]string{"connection refused", "hint: start `vibe serve`"}},
		{"no scheme", []string{"chat", "--server", strings.TrimPrefix(ts.URL, "http://"), "--key", "ka"}, exitError,
			[]string{"not an http:// or https:// URL", "--server " + ts.URL}},
		{"unknown skill on server", []string{"chat", "--server", ts.URL, "--key", "ka", "--skill", "nosuch"}, exitError,
			[]string{`--skill "nosuch"`, "no such skill", "bazi"}},
		{"unknown skill in process", []string{"--workspace", wsSkills, "chat", "--skill", "nosuch"}, exitError,
			[]string{`--skill "nosuch"`, "no such skill", "known skills: bazi"}},
		{"not a vibe server", []string{"chat", "--server", ts.URL + "/nothing-here", "--key", "ka"}, exitFailure,
			[]string{"HTTP 404", "hint:"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ios, in, out, errOut := iostreams.Test()
			in.WriteString("八字 日主甲木生于寅月\n\n")
			args := tt.args
			if args[0] == "chat" {
				args = append([]string{"--workspace", t.TempDir()}, args...)
			}
			code := run(context.Background(), ios, args, func(string) string { return "" })
			if code != tt.code {
				t.Fatalf("exit %d, want %d:\n%s", code, tt.code, errOut.String())
			}
			for _, w := range tt.want {
				if !strings.Contains(errOut.String(), w) {
					t.Errorf("stderr lacks %q:\n%s", w, errOut.String())
				}
			}
			if strings.Contains(out.String(), "retrieval-only mode") || strings.Contains(out.String(), "离线检索模式") {
				t.Errorf("a message was answered despite the error:\n%s", out.String())
			}
		})
	}
}
