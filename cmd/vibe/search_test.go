package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vibelife/vibe/convert"
	"github.com/vibelife/vibe/llm/llmtest"
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
	var res0 searchResult
	if code != 0 || json.Unmarshal([]byte(out), &res0) != nil || res0.Query != "day master" || len(res0.Hits) == 0 {
		t.Fatalf("search --json: code %d, %q", code, out)
	}
	if hits := res0.Hits; hits[0].Source != "knowledge/demo/source/notes.txt" || hits[0].End <= hits[0].Start || hits[0].LexicalRank != 1 {
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

// bridgeWorkspace ingests a small Chinese theme "demo" whose preface shares
// no word with the chapter on 伤官, with a glossary naming 伤官见官 in
// English.
func bridgeWorkspace(t *testing.T) string {
	t.Helper()
	ws := t.TempDir()
	writeConvertedForSearch(t, ws, "ziping", "# 子平真诠\n\n## 序\n\n是先生一生心血，为天下谈命者立准。\n\n"+
		"## 论伤官\n\n伤官见官，为祸百端，而金水见之，反为秀气。\n\n## 论用神\n\n八字用神，专求月令。")
	gloss := "terms:\n  - term: 伤官见官\n    aliases: [hurting officer meets officer, hurting officer sees officer]\n  - term: 用神\n    aliases: [useful god]\n"
	if err := os.WriteFile(filepath.Join(ws, "knowledge", "demo", "glossary.yaml"), []byte(gloss), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := runVibe(t, nil, "--workspace", ws, "ingest", "demo"); code != 0 {
		t.Fatalf("ingest exit %d: %s", code, errOut)
	}
	return ws
}

// vibe search carries an English query over to the sources' Chinese the
// way search_knowledge does (the same runtime.Bridger): offline through the
// glossary, and says so in every output; --no-bridge searches the words
// alone; a query that names no glossary term is flagged; a query in the
// sources' language, as bench/qabench sends, is searched and written as
// before, with no bridge field.
func TestSearchBridgesTheQueryLikeSearchKnowledge(t *testing.T) {
	ws := bridgeWorkspace(t)
	const q = "hurting officer meets the officer"
	code, out, errOut := runVibe(t, nil, "--workspace", ws, "search", "demo", q, "-k", "1")
	if code != 0 || !strings.HasPrefix(out, "searched as: 伤官见官 (bridged by glossary)\n1. ") || !strings.Contains(out, "› 论伤官 [") {
		t.Fatalf("search: exit %d, out %q, err %q", code, out, errOut)
	}
	code, out, _ = runVibe(t, nil, "--workspace", ws, "search", "demo", q, "-k", "1", "--no-bridge")
	if code != 0 || strings.Contains(out, "searched as") || strings.Contains(out, "bridged") {
		t.Fatalf("search --no-bridge: exit %d, out %q", code, out)
	}
	code, out, _ = runVibe(t, nil, "--workspace", ws, "search", "demo", q, "-k", "1", "--json")
	var res searchResult
	if code != 0 || json.Unmarshal([]byte(out), &res) != nil || res.SearchedAs != "伤官见官" || res.BridgedBy != "glossary" || res.Unbridged || len(res.Hits) != 1 || res.Hits[0].HeadingPath[1] != "论伤官" {
		t.Fatalf("search --json: exit %d, %s", code, out)
	}
	code, out, _ = runVibe(t, nil, "--workspace", ws, "search", "demo", "What is the weather today?", "--json")
	res = searchResult{}
	if code != 0 || json.Unmarshal([]byte(out), &res) != nil || !res.Unbridged || res.SearchedAs != "" {
		t.Fatalf("unbridged --json: exit %d, %s", code, out)
	}
	code, out, _ = runVibe(t, nil, "--workspace", ws, "search", "demo", "What is the weather today?")
	if code != 0 || !strings.HasPrefix(out, "not bridged: the query is in English and the sources in Chinese") {
		t.Fatalf("unbridged: exit %d, %q", code, out)
	}

	batch := filepath.Join(ws, "q.jsonl")
	os.WriteFile(batch, []byte("{\"id\":\"zh\",\"query\":\"伤官见官\"}\n{\"id\":\"en\",\"query\":\""+q+"\"}\n{\"id\":\"x\",\"query\":\"What is the weather today?\"}\n"), 0o644)
	code, out, errOut = runVibe(t, nil, "--workspace", ws, "search", "demo", "--batch", batch, "-k", "1")
	_, plain, _ := runVibe(t, nil, "--workspace", ws, "search", "demo", "--batch", batch, "-k", "1", "--no-bridge")
	lines, plainLines := strings.Split(strings.TrimSpace(out), "\n"), strings.Split(strings.TrimSpace(plain), "\n")
	if code != 0 || len(lines) != 3 || len(plainLines) != 3 {
		t.Fatalf("batch: exit %d, out %q, err %q", code, out, errOut)
	}
	if lines[0] != plainLines[0] || !strings.HasPrefix(lines[0], `{"id":"zh","hits":[{`) || !strings.HasSuffix(lines[0], "}]}") {
		t.Errorf("same-language batch line changed:\n%s\n%s", lines[0], plainLines[0])
	}
	if !strings.HasSuffix(lines[1], `"searched_as":"伤官见官","bridged_by":"glossary"}`) || !strings.Contains(lines[1], "论伤官") {
		t.Errorf("bridged batch line: %s", lines[1])
	}
	if !strings.HasSuffix(lines[2], `,"unbridged":true}`) || strings.Contains(plainLines[2], "unbridged") {
		t.Errorf("unbridged batch line: %s (--no-bridge: %s)", lines[2], plainLines[2])
	}
}

// With a model configured, vibe search asks it to rewrite the query into
// the sources' language, as search_knowledge does; the answer is cached in
// the workspace, so the same query searched again costs no request.
func TestSearchRewritesTheQueryWithTheModel(t *testing.T) {
	ws := bridgeWorkspace(t)
	fake := llmtest.New(t, llmtest.Text("伤官见官 为祸"))
	env := map[string]string{"OPENAI_BASE_URL": fake.URL, "OPENAI_API_KEY": "k", "VIBE_EMBEDDING_PROVIDER": "local"}
	const q = "Is it bad when the hurting officer shows up next to the officer?"
	for range 2 {
		code, out, errOut := runVibe(t, env, "--workspace", ws, "search", "demo", q, "-k", "1")
		if code != 0 || !strings.HasPrefix(out, "searched as: 伤官见官 为祸 (bridged by llm)\n1. ") || !strings.Contains(out, "› 论伤官 [") {
			t.Fatalf("search: exit %d, out %q, err %q", code, out, errOut)
		}
	}
	reqs := fake.Requests()
	if len(reqs) != 1 || reqs[0].LastUserMessage() != q || !strings.Contains(reqs[0].SystemMessage(), "Chinese") {
		t.Fatalf("%d rewrite requests, want 1: %+v", len(reqs), reqs)
	}
}

// A theme whose sources are written in English and in Chinese is not
// "Chinese": an English question is searched as it is, without a note that
// it could not be carried over. The same question over the Chinese page
// alone is flagged.
func TestSearchMixedLanguageThemeIsNotFlagged(t *testing.T) {
	ws := t.TempDir()
	writeConvertedForSearch(t, ws, "starter", "# The Starter\n\nFeed the starter twice a day when it smells of acetone.")
	writeConvertedForSearch(t, ws, "suanzhong", "# 酸种\n\n酸种闻起来像洗甲水时，说明它饿了，每天喂两次。面粉与水按一比一混合，放在温暖处发酵，直到体积翻倍、表面布满气泡。")
	if code, _, errOut := runVibe(t, nil, "--workspace", ws, "ingest", "demo"); code != 0 {
		t.Fatalf("ingest: %s", errOut)
	}
	code, out, errOut := runVibe(t, nil, "--workspace", ws, "search", "demo", "how often should I feed the starter", "-k", "1")
	if code != 0 || strings.Contains(out, "not bridged") || !strings.HasPrefix(out, "1. ") || !strings.Contains(out, "The Starter") {
		t.Fatalf("mixed theme: exit %d, out %q, err %q", code, out, errOut)
	}
	if err := os.Remove(filepath.Join(ws, "knowledge", "demo", "converted", "starter.md")); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := runVibe(t, nil, "--workspace", ws, "ingest", "demo"); code != 0 {
		t.Fatalf("ingest: %s", errOut)
	}
	code, out, _ = runVibe(t, nil, "--workspace", ws, "search", "demo", "how often should I feed the starter", "-k", "1")
	if code != 0 || !strings.HasPrefix(out, "not bridged: the query is in English and the sources in Chinese") {
		t.Fatalf("Chinese theme: exit %d, out %q", code, out)
	}
}
