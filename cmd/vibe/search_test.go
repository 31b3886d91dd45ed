package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vibelife/vibe/convert"
)

func writeConvertedForSearch(t *testing.T, ws, name, body string) {
	t.Helper()
	data, err := convert.Render(convert.Document{Source: "knowledge/demo/source/" + name + ".txt", Format: "txt", Title: name, Converter: convert.Version, Markdown: body})
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(ws, "knowledge", "demo", "converted", name+".md")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestIngestAndSearch(t *testing.T) {
	ws := t.TempDir()
	writeConvertedForSearch(t, ws, "ziping", "# 子平真诠\n\n## 论用神\n\n八字用神，专求月令。\n\n## 论格局\n\n格局成败，各有其说。")
	writeConvertedForSearch(t, ws, "notes", "# Notes\n\nThe day master is strong in spring.")

	code, out, errOut := runVibe(t, nil, "--workspace", ws, "ingest", "demo")
	if code != 0 || !strings.Contains(out, "2 added") {
		t.Fatalf("ingest: code %d, out %q, err %q", code, out, errOut)
	}
	code, out, _ = runVibe(t, nil, "--workspace", ws, "ingest", "demo")
	if code != 0 || !strings.Contains(out, "2 unchanged") || !strings.Contains(out, "0 texts embedded") {
		t.Fatalf("second ingest did work: %q", out)
	}

	code, out, errOut = runVibe(t, nil, "--workspace", ws, "search", "demo", "用神 月令", "-k", "1")
	if code != 0 || !strings.Contains(out, "1. knowledge/demo/source/ziping.txt › 子平真诠 › 论用神 [") {
		t.Fatalf("search: code %d, out %q, err %q", code, out, errOut)
	}

	code, out, _ = runVibe(t, nil, "--workspace", ws, "search", "demo", "day master", "--json", "--mode", "lexical")
	var hits []searchHit
	if code != 0 || json.Unmarshal([]byte(out), &hits) != nil || len(hits) == 0 || hits[0].Source != "knowledge/demo/source/notes.txt" || hits[0].End <= hits[0].Start || hits[0].LexicalRank != 1 {
		t.Fatalf("search --json: code %d, %q", code, out)
	}

	batch := filepath.Join(ws, "q.jsonl")
	os.WriteFile(batch, []byte("{\"id\":\"a\",\"query\":\"格局\"}\n{\"id\":\"b\",\"query\":\"spring\"}\n"), 0o644)
	code, out, errOut = runVibe(t, nil, "--workspace", ws, "search", "demo", "--batch", batch, "-k", "2")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != 0 || len(lines) != 2 {
		t.Fatalf("batch: code %d, out %q, err %q", code, out, errOut)
	}
	var res struct {
		ID   string      `json:"id"`
		Hits []searchHit `json:"hits"`
	}
	if err := json.Unmarshal([]byte(lines[1]), &res); err != nil || res.ID != "b" || len(res.Hits) == 0 || !strings.Contains(res.Hits[0].Text, "spring") {
		t.Fatalf("batch line 2 = %q (%v)", lines[1], err)
	}

	os.WriteFile(batch, []byte("{\"id\":\"a\",\"query\":\"格局\"}\nnot json\n"), 0o644)
	code, _, errOut = runVibe(t, nil, "--workspace", ws, "search", "demo", "--batch", batch)
	if code == 0 || !strings.Contains(errOut, "q.jsonl:2") {
		t.Fatalf("bad batch line: code %d, err %q", code, errOut)
	}

	code, _, errOut = runVibe(t, nil, "--workspace", ws, "ingest", "nothere")
	if code == 0 || !strings.Contains(errOut, "vibe convert nothere") {
		t.Fatalf("missing converted dir: code %d, err %q", code, errOut)
	}
}

// A theme the store does not hold is an error with the command to run, not
// an empty result with exit 0.
func TestSearchUnknownThemeExitsNonZero(t *testing.T) {
	ws := t.TempDir()
	writeConvertedForSearch(t, ws, "notes", "# Notes\n\nThe day master is strong in spring.")
	if code, _, errOut := runVibe(t, nil, "--workspace", ws, "ingest", "demo"); code != 0 {
		t.Fatalf("ingest exit %d: %s", code, errOut)
	}
	for _, args := range [][]string{{"search", "nosuch", "spring"}, {"search", "nosuch", "spring", "--json"}} {
		code, out, errOut := runVibe(t, nil, append([]string{"--workspace", ws}, args...)...)
		if code == 0 || !strings.Contains(errOut, `no documents of theme "nosuch"`) || !strings.Contains(errOut, "hint: run `vibe ingest nosuch`") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", args, code, out, errOut)
		}
	}
}
