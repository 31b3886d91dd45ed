package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vibelife/vibe/internal/iostreams"
)

// cedictPath is a CC-CEDICT file for the tests that measure the glossary
// built with a dictionary: $VIBE_TEST_CEDICT, else ../../../data/cedict/
// cedict_ts.u8 (next to the project's shared directory). vibe ships none;
// the tests skip without it (docs/glossary.md says where to get it).
func cedictPath(t *testing.T) string {
	t.Helper()
	p := os.Getenv("VIBE_TEST_CEDICT")
	if p == "" {
		p = filepath.Join("..", "..", "..", "data", "cedict", "cedict_ts.u8")
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(abs); err != nil {
		t.Skipf("no CC-CEDICT file at %s (set VIBE_TEST_CEDICT): %v", abs, err)
	}
	return abs
}

// withDictionary copies the workspace, names the dictionary in its
// vibe.yaml and rebuilds the skill's glossary (vibe integrate).
func withDictionary(t *testing.T, tmpl, dict string) string {
	t.Helper()
	ws := copyWorkspace(t, tmpl)
	cfg := filepath.Join(ws, "vibe.yaml")
	b, _ := os.ReadFile(cfg)
	b = append(b, []byte("\nglossary:\n  dictionary: "+dict+"\n")...)
	if err := os.WriteFile(cfg, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := runVibeOffline(t, "-w", ws, "--quiet", "integrate", "bazi"); code != 0 {
		t.Fatalf("vibe integrate bazi with a dictionary: %s", errOut)
	}
	return ws
}

// englishHits counts the English bazi questions whose answering passage
// search_knowledge returns in its top 5, offline.
func englishHits(t *testing.T, ws string) int {
	t.Helper()
	ios, _, _, errOut := iostreams.Test()
	a := &app{io: ios, getenv: func(k string) string { return offlineEnv[k] }, now: time.Now, workspaceDir: ws}
	ag, closer, err := a.newAgentWith(context.Background(), agentOptions{ephemeral: true, quiet: true})
	if err != nil {
		t.Fatalf("%v: %s", err, errOut)
	}
	defer closer()
	hits := 0
	for _, tt := range englishBaziQuestions {
		ps, err := ag.Passages(context.Background(), "bazi", tt.q, 5)
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, p := range ps {
			for _, w := range tt.want {
				found = found || w.matches(p)
			}
		}
		if found {
			hits++
		} else {
			t.Logf("miss: %q", tt.q)
		}
	}
	return hits
}

// With the user's Chinese–English dictionary (CC-CEDICT) and no glossary
// written by hand, offline, the built glossary carries English questions
// in translation over to the Chinese books: the mined terms get the
// dictionary's renderings (桃花 peach blossom) and a term is named word by
// word ("seven killings" 七杀, "Jia wood" 甲木).
func TestDictionaryGlossaryOnTheBareBaziBooks(t *testing.T) {
	dict := cedictPath(t)
	ws := withDictionary(t, bareBaziWorkspace(t), dict)
	hits := englishHits(t, ws)
	t.Logf("offline, no hand glossary, CC-CEDICT: %d of %d English questions reach an answering passage in the top 5", hits, len(englishBaziQuestions))
	if hits < 14 {
		t.Errorf("%d of %d English questions reach an answering passage, want at least the 14 measured", hits, len(englishBaziQuestions))
	}
	hand := englishHits(t, withDictionary(t, baziWorkspace(t), dict))
	t.Logf("offline, hand glossary, CC-CEDICT: %d of %d", hand, len(englishBaziQuestions))
	if hand < 19 {
		t.Errorf("with the hand glossary and the dictionary %d of %d, want at least the 19 the hand glossary reaches alone", hand, len(englishBaziQuestions))
	}
}

// glossary.dictionary: none turns the built-in table of the characters'
// glosses off: the glossary has no characters, and an English question in
// translation reaches the books only by pinyin, as before the table.
func TestNoDictionaryTurnsTheBuiltinTableOff(t *testing.T) {
	ws := copyWorkspace(t, bareBaziWorkspace(t))
	cfg := filepath.Join(ws, "vibe.yaml")
	b, _ := os.ReadFile(cfg)
	if err := os.WriteFile(cfg, append(b, []byte("\nglossary:\n  dictionary: none\n")...), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := runVibeOffline(t, "-w", ws, "--quiet", "integrate", "bazi"); code != 0 {
		t.Fatalf("vibe integrate bazi with dictionary: none: %s", errOut)
	}
	g, err := os.ReadFile(filepath.Join(ws, "skills", "bazi", "knowledge", "glossary.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(g), "\ncharacters:") {
		t.Errorf("dictionary: none, and the glossary has a characters table")
	}
	if hits := englishHits(t, ws); hits > 2 {
		t.Errorf("dictionary: none: %d of %d English questions reached, want the 2 of the pinyin alone", hits, len(englishBaziQuestions))
	}
}

// A dictionary vibe.yaml names that is missing, or not in the CC-CEDICT
// format, fails vibe integrate with the file and the setting named.
func TestDictionarySettingErrors(t *testing.T) {
	ws := copyWorkspace(t, bareBaziWorkspace(t))
	bad := filepath.Join(t.TempDir(), "dict.csv")
	if err := os.WriteFile(bad, []byte("seven,七\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ path, want string }{
		{filepath.Join(ws, "no-such.u8"), "no-such.u8"},
		{bad, "dict.csv:1: not a CC-CEDICT entry"},
	} {
		if err := os.WriteFile(filepath.Join(ws, "vibe.yaml"), []byte("glossary:\n  dictionary: "+tt.path+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		code, _, errOut := runVibeOffline(t, "-w", ws, "integrate", "bazi")
		if code == 0 || !strings.Contains(errOut, tt.want) || !strings.Contains(errOut, "glossary.dictionary") {
			t.Errorf("dictionary %s: exit %d, stderr %q, want a failure naming %q and the setting", tt.path, code, errOut, tt.want)
		}
	}
}
