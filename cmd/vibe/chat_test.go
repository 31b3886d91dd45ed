package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vibelife/vibe/internal/iostreams"
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
	for _, want := range []string{"retrieval-only mode", "r2", "knowledge/bazi/converted/a.md#1"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("chat output lacks %q:\n%s", want, out.String())
		}
	}
	if !strings.Contains(errOut.String(), "no model configured") {
		t.Errorf("offline mode not announced: %s", errOut.String())
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
