package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vibelife/vibe/curate"
	"github.com/vibelife/vibe/internal/testcorpus"
	"github.com/vibelife/vibe/llm/llmtest"
	"github.com/vibelife/vibe/websearch/websearchtest"
)

// recordedReadingList is the answer to `vibe curate bazi --suggest`
// recorded through the relay (testdata/reading-list).
func recordedReadingList(t *testing.T) map[string]any {
	t.Helper()
	var rec struct {
		PromptVersion string         `json:"prompt_version"`
		Answer        map[string]any `json:"answer"`
	}
	data, err := os.ReadFile(filepath.Join("testdata", "reading-list", "answer.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &rec); err != nil {
		t.Fatal(err)
	}
	if rec.PromptVersion != curate.ReadingListPromptVersion {
		t.Fatalf("the recording answers prompt %s, --suggest asks %s: record it again (docs/curate.md)", rec.PromptVersion, curate.ReadingListPromptVersion)
	}
	return rec.Answer
}

// corpusServer serves the bazi corpus's books under /books/<name>, plus
// extra pages, as a site a search would find them on.
func corpusServer(t *testing.T, extra map[string]string) *httptest.Server {
	t.Helper()
	dir := testcorpus.Dir(t, "bazi")
	mux := http.NewServeMux()
	mux.Handle("/books/", http.StripPrefix("/books/", http.FileServer(http.Dir(dir))))
	for p, body := range extra {
		mux.HandleFunc(p, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.Write([]byte(body))
		})
	}
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// TestSuggestAcceptGatherResearch is the research flow of issue 31 end to
// end: --suggest (answered by the recorded strong-model reading list)
// writes reading-list.yaml, offline it refuses with exit 2; two accepted
// works are found by the fake SearXNG and gathered; --research gathers a
// recent article with its URL, date and query, skipping what the theme
// holds and not failing on a dead result.
func TestSuggestAcceptGatherResearch(t *testing.T) {
	answer := recordedReadingList(t)
	dir := testcorpus.Dir(t, "bazi")
	ws := t.TempDir()
	held := filepath.Join(ws, "held")
	os.MkdirAll(held, 0o755)
	for _, n := range []string{"子平真诠.md", "滴天髓.md"} {
		data, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(held, n), data, 0o644)
	}
	if code, _, errOut := runVibe(t, nil, "-w", ws, "curate", "bazi", "--from", held); code != 0 {
		t.Fatalf("curate held: exit %d: %s", code, errOut)
	}

	// Offline: a model is needed, exit 2, nothing written.
	code, _, errOut := runVibe(t, nil, "-w", ws, "curate", "bazi", "--suggest")
	if code != exitError || !strings.Contains(errOut, "--suggest needs a model") || !strings.Contains(errOut, "OPENAI_API_KEY") {
		t.Fatalf("offline --suggest: exit %d, %s", code, errOut)
	}
	listPath := filepath.Join(ws, "knowledge", "bazi", curate.ReadingListName)
	if _, err := os.Stat(listPath); err == nil {
		t.Fatal("offline --suggest wrote a reading list")
	}

	srv := llmtest.New(t)
	srv.SetFallback(func(req llmtest.Request) llmtest.Reply {
		user := req.LastUserMessage()
		if req.SchemaName() != "reading_list" || !strings.Contains(user, "Theme: bazi") || !strings.Contains(user, "- 子平真诠.md") || !strings.Contains(user, "八字") {
			t.Errorf("unexpected request: schema %q\n%s", req.SchemaName(), user)
		}
		return llmtest.JSON(answer)
	})
	env := map[string]string{"OPENAI_BASE_URL": srv.URL, "OPENAI_API_KEY": "k"}
	code, out, errOut := runVibe(t, env, "-w", ws, "curate", "bazi", "--suggest", "--about", "八字命理, the 子平 school")
	if code != 0 {
		t.Fatalf("--suggest: exit %d\n%s\n%s", code, out, errOut)
	}
	list, err := curate.LoadReadingList(listPath)
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Works) != 15 || list.Prompt != curate.ReadingListPromptVersion || list.Suggested == "" {
		t.Fatalf("reading list: %d works, prompt %q", len(list.Works), list.Prompt)
	}
	kinds := map[string]int{}
	for _, w := range list.Works {
		kinds[w.Kind]++
		if w.ID == "" || w.Title == "" || w.Why == "" || w.Language != "zh" || w.Period == "" || w.Accepted {
			t.Errorf("work %+v: wants an id, title, why, language and period, not accepted", w)
		}
	}
	if kinds[curate.KindClassic] == 0 || kinds[curate.KindCommentary] == 0 || kinds[curate.KindModern] == 0 || kinds[curate.KindCases] == 0 {
		t.Errorf("kinds %v: want classics, commentaries, modern works and cases", kinds)
	}
	byTitle := map[string]curate.Work{}
	for _, w := range list.Works {
		byTitle[w.Title] = w
	}
	if byTitle["子平真诠"].Held != "子平真诠.md" || byTitle["渊海子平"].Held != "" {
		t.Errorf("held: 子平真诠 %q, 渊海子平 %q", byTitle["子平真诠"].Held, byTitle["渊海子平"].Held)
	}
	if !strings.Contains(out, "[held: 子平真诠.md]") || !strings.Contains(out, "15 works, 15 new") {
		t.Errorf("--suggest output:\n%s", out)
	}
	// The answer is cached: --suggest again asks nothing and adds nothing.
	if code, out, _ = runVibe(t, env, "-w", ws, "curate", "bazi", "--suggest", "--about", "八字命理, the 子平 school"); code != 0 || srv.Count() != 1 || !strings.Contains(out, "15 works, 0 new") {
		t.Errorf("second --suggest: exit %d, %d requests in all, output:\n%s", code, srv.Count(), out)
	}

	// Accept two works the theme does not hold; the fake search finds them.
	yuan, qiong := byTitle["渊海子平"], byTitle["穷通宝鉴"]
	if code, _, errOut = runVibe(t, nil, "-w", ws, "sources", "accept", "bazi", yuan.ID, "R99"); code != exitFailure || !strings.Contains(errOut, "R99 is not in") {
		t.Errorf("accept an unknown id: exit %d %s", code, errOut)
	}
	if code, _, errOut = runVibe(t, nil, "-w", ws, "sources", "accept", "bazi", yuan.ID, qiong.ID); code != 0 || !strings.Contains(errOut, "accepted: "+yuan.ID+" 渊海子平") {
		t.Fatalf("accept: exit %d %s", code, errOut)
	}
	article := "<html><head><title>子平法研究综述</title></head><body><h1>近年子平法研究综述</h1>" +
		strings.Repeat("<p>近年来学界对子平法的研究，多从文献学与历史文化两方面入手，考订《渊海子平》《三命通会》诸书的版本源流，并讨论格局派与旺衰派之争。</p>", 6) + "</body></html>"
	site := corpusServer(t, map[string]string{"/article": article})
	search := websearchtest.NewSearXNG(t, map[string][]websearchtest.Hit{
		yuan.SearchQuery(): {
			{URL: site.URL + "/shop/yuanhai", Title: "某书店 命理书目"},
			{URL: site.URL + "/books/渊海子平.md", Title: "渊海子平 全文"},
		},
		qiong.SearchQuery(): {{URL: site.URL + "/books/穷通宝鉴.md", Title: "穷通宝鉴"}},
	})
	senv := map[string]string{"VIBE_SEARCH_PROVIDER": "searxng", "VIBE_SEARCH_URL": search.URL}
	code, out, errOut = runVibe(t, senv, "-w", ws, "curate", "bazi", "--json")
	if code != 0 {
		t.Fatalf("curate with accepted works: exit %d\n%s", code, errOut)
	}
	var lock curate.Lock
	if err := json.Unmarshal([]byte(out), &lock); err != nil {
		t.Fatal(err)
	}
	got := map[string]curate.Entry{}
	for _, e := range lock.Sources {
		got[e.Origin] = e
	}
	today := time.Now().UTC().Format("2006-01-02")
	for _, w := range []curate.Work{yuan, qiong} {
		u := site.URL + "/books/" + w.Title + ".md"
		e, ok := got[u]
		p := e.Provenance
		if !ok || e.Status != curate.StatusKept || p.URL != u || p.Title != w.Title || p.Author != w.Author || p.Query != w.SearchQuery() || p.Retrieved != today {
			t.Errorf("%s %s: lock entry %+v", w.ID, w.Title, e)
		}
	}
	if len(lock.Sources) != 4 {
		t.Errorf("%d lock entries, want the 2 held and the 2 accepted: %+v", len(lock.Sources), lock.Sources)
	}
	list, _ = curate.LoadReadingList(listPath)
	for _, w := range list.Works {
		if (w.ID == yuan.ID || w.ID == qiong.ID) && (w.Source == "" || w.Query == "" || w.Found != today) {
			t.Errorf("%s: the copy found is not recorded: %+v", w.ID, w)
		}
		if w.ID != yuan.ID && w.ID != qiong.ID && w.Source != "" {
			t.Errorf("%s was not accepted but got a source %q", w.ID, w.Source)
		}
	}
	f, err := curate.LoadFile(filepath.Join(ws, "knowledge", "bazi", "curate.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Sources) != 3 || f.Sources[1].Query == "" || !strings.HasPrefix(f.Sources[1].Notes, "reading list "+yuan.ID) {
		t.Errorf("curate.yaml sources: %+v", f.Sources)
	}
	asked := len(search.Asked())
	if asked != 2 {
		t.Errorf("%d searches, want one per accepted work", asked)
	}

	// --research: one recent article is new, one result is held already,
	// one is dead; the dead one is dropped without failing the run.
	q := "子平法 研究 近年"
	search.Set(q, []websearchtest.Hit{
		{URL: site.URL + "/article", Title: "近年子平法研究综述", PublishedDate: "2026-05-04T00:00:00"},
		{URL: site.URL + "/books/渊海子平.md", Title: "渊海子平"},
		{URL: site.URL + "/gone", Title: "a dead link"},
		{URL: site.URL + "/books/子平真诠.md", Title: "子平真诠 另一处"},
	})
	code, out, errOut = runVibe(t, senv, "-w", ws, "curate", "bazi", "--research", q, "--json")
	if code != 0 {
		t.Fatalf("--research: exit %d\n%s", code, errOut)
	}
	if err := json.Unmarshal([]byte(out), &lock); err != nil {
		t.Fatal(err)
	}
	got = map[string]curate.Entry{}
	for _, e := range lock.Sources {
		got[e.Origin] = e
	}
	a := got[site.URL+"/article"]
	if a.Status != curate.StatusKept || a.Provenance.URL != site.URL+"/article" || a.Provenance.Query != q || a.Provenance.Retrieved != today || a.Provenance.Published != "2026-05-04" || a.Provenance.Title != "近年子平法研究综述" {
		t.Errorf("research result: %+v", a)
	}
	if g := got[site.URL+"/gone"]; g.Status != curate.StatusDropped || !g.Failed {
		t.Errorf("dead result: %+v", g)
	}
	// The same text as a held book under another address: deduplicated
	// against what the theme holds.
	if d := got[site.URL+"/books/子平真诠.md"]; d.Status != curate.StatusDropped || !strings.Contains(d.Reason, "duplicate of") || !strings.Contains(d.Reason, "子平真诠.md") {
		t.Errorf("a copy of a held book: %+v", d)
	}
	if asked := search.Asked(); len(asked) != 3 || asked[2].Query != q || asked[2].TimeRange != "year" {
		t.Errorf("searches %+v: want the question asked once more, for the last year", asked)
	}
	if !strings.Contains(errOut, "4 result(s), 1 already held") {
		t.Errorf("--research report:\n%s", errOut)
	}
	f, _ = curate.LoadFile(filepath.Join(ws, "knowledge", "bazi", "curate.yaml"))
	last := f.Sources[len(f.Sources)-1]
	if len(f.Sources) != 4 || last.Source != site.URL+"/article" || last.Query != q || last.Retrieved != today {
		t.Errorf("curate.yaml after --research: %+v", f.Sources)
	}
	// sources list shows where the article came from and the search.
	code, out, _ = runVibe(t, nil, "-w", ws, "sources", "list", "bazi")
	if code != 0 || !strings.Contains(out, "found by the web search «"+q+"» on "+today) || !strings.Contains(out, "reading list (knowledge/bazi/reading-list.yaml): 15 works, 2 accepted") ||
		!strings.Contains(out, yuan.ID+" 渊海子平: "+site.URL+"/books/渊海子平.md (found by the search «"+yuan.SearchQuery()+"» on "+today+")") {
		t.Errorf("sources list: exit %d\n%s", code, out)
	}
}

// TestAcceptedCopyThatFailsIsTriedOnce: a searched copy that gives nothing
// is noted as tried, does not fail the run, and the next run gathers the
// next result.
func TestAcceptedCopyThatFailsIsTriedOnce(t *testing.T) {
	ws := t.TempDir()
	path := filepath.Join(ws, "knowledge", "tea", curate.ReadingListName)
	os.MkdirAll(filepath.Dir(path), 0o755)
	os.WriteFile(path, []byte("theme: tea\nworks:\n  - id: R1\n    accepted: true\n    title: 茶经\n    author: 陆羽\n    kind: classic\n    language: zh\n  - id: R2\n    accepted: false\n    title: 大观茶论\n    kind: classic\n"), 0o644)
	text := strings.Repeat("茶者，南方之嘉木也。一尺、二尺乃至数十尺。其巴山峡川，有两人合抱者，伐而掇之。", 10)
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/chajing.txt" {
			w.Write([]byte(text))
			return
		}
		http.NotFound(w, r)
	}))
	defer site.Close()
	search := websearchtest.NewSearXNG(t, map[string][]websearchtest.Hit{
		"茶经 陆羽": {{URL: site.URL + "/dead", Title: "茶经"}, {URL: site.URL + "/chajing.txt", Title: "茶经 全文"}},
	})
	env := map[string]string{"VIBE_SEARCH_PROVIDER": "searxng", "VIBE_SEARCH_URL": search.URL}
	code, out, errOut := runVibe(t, env, "-w", ws, "curate", "tea")
	if code != 0 || !strings.Contains(out, "dropped  "+site.URL+"/dead") || !strings.Contains(errOut, "searches another copy of R1") {
		t.Fatalf("first run: exit %d\n%s\n%s", code, out, errOut)
	}
	l, _ := curate.LoadReadingList(path)
	if w := l.Works[0]; w.Source != "" || len(w.Tried) != 1 || w.Tried[0] != site.URL+"/dead" {
		t.Fatalf("after a dead copy: %+v", w)
	}
	if _, err := os.Stat(filepath.Join(ws, "knowledge", "tea", "curate.yaml")); err == nil {
		t.Error("a dead copy went into curate.yaml")
	}
	code, out, errOut = runVibe(t, env, "-w", ws, "curate", "tea")
	if code != 0 || !strings.Contains(out, "kept     "+site.URL+"/chajing.txt") {
		t.Fatalf("second run: exit %d\n%s\n%s", code, out, errOut)
	}
	l, _ = curate.LoadReadingList(path)
	if w := l.Works[0]; w.Source != site.URL+"/chajing.txt" || w.Query != "茶经 陆羽" {
		t.Errorf("after the second run: %+v", w)
	}
	// Without a search configured, an accepted work without a copy says
	// what to do; a plain curate has nothing else to gather.
	ws2 := t.TempDir()
	p2 := filepath.Join(ws2, "knowledge", "tea", curate.ReadingListName)
	os.MkdirAll(filepath.Dir(p2), 0o755)
	os.WriteFile(p2, []byte("theme: tea\nworks:\n  - id: R1\n    accepted: true\n    title: 茶经\n    kind: classic\n"), 0o644)
	code, _, errOut = runVibe(t, nil, "-w", ws2, "curate", "tea")
	if !strings.Contains(errOut, "accepted R1 茶经 has no copy to gather") || !strings.Contains(errOut, "provider: searxng") {
		t.Errorf("no search: exit %d\n%s", code, errOut)
	}
	// --research without a search configured is a usage error.
	if code, _, errOut = runVibe(t, nil, "-w", ws2, "curate", "tea", "--research", "tea"); code != exitError || !strings.Contains(errOut, "needs a web search") {
		t.Errorf("--research without search: exit %d %s", code, errOut)
	}
}

// TestChatWebSearchAtRunTime: serve.web_search on (with a search
// configured) gives the agent web_search; the answer says which part is
// from the web. On without a search configured, the agent refuses to start.
func TestChatWebSearchAtRunTime(t *testing.T) {
	ws := t.TempDir()
	if err := os.CopyFS(filepath.Join(ws, "skills"), os.DirFS(filepath.Join("..", "..", "runtime", "testdata", "skills"))); err != nil {
		t.Fatal(err)
	}
	search := websearchtest.NewSearXNG(t, map[string][]websearchtest.Hit{
		"子平法 2026 研究": {{URL: "https://journal.example/ziping", Title: "子平法新研究", Content: "近年学界的研究"}},
	})
	model := llmtest.New(t, llmtest.ToolCall("web_search", `{"query":"子平法 2026 研究"}`), llmtest.Text("技能中没有。网络上一篇文章说近年研究多从文献学入手。"))
	env := map[string]string{"OPENAI_BASE_URL": model.URL, "OPENAI_API_KEY": "k", "VIBE_SERVE_WEB_SEARCH": "true"}
	code, _, errOut := runVibe(t, env, "-w", ws, "chat", "--skill", "bazi", "2026年子平法有什么新研究？")
	if code != exitError || !strings.Contains(errOut, "serve.web_search is on") || !strings.Contains(errOut, "provider: searxng") {
		t.Errorf("web_search on without a search: exit %d %s", code, errOut)
	}
	env["VIBE_SEARCH_PROVIDER"], env["VIBE_SEARCH_URL"] = "searxng", search.URL
	code, out, errOut := runVibe(t, env, "-w", ws, "chat", "--skill", "bazi", "2026年子平法有什么新研究？")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, "不属于本技能的知识库") || !strings.Contains(out, "https://journal.example/ziping") {
		t.Errorf("the answer does not mark the web part:\n%s", out)
	}
	if asked := search.Asked(); len(asked) != 1 || asked[0].Query != "子平法 2026 研究" {
		t.Errorf("searches %+v", asked)
	}
	if reqs := model.Requests(); len(reqs) == 0 || !strings.Contains(string(reqs[0].Tools), `"web_search"`) {
		t.Errorf("web_search not offered to the model")
	}
}
