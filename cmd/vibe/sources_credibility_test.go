package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/vibelife/vibe/curate"
	"github.com/vibelife/vibe/internal/testcorpus"
	"github.com/vibelife/vibe/knowledge"
	"github.com/vibelife/vibe/llm/llmtest"
)

// baziBooks puts the five bazi classics of the shared corpus and a
// corrupted edition of 子平真诠 (OCR-like noise, swapped characters, the
// last 40% cut off) into ws/books.
func baziBooks(t *testing.T, ws string) {
	t.Helper()
	corpus := testcorpus.Dir(t, "bazi")
	books := filepath.Join(ws, "books")
	if err := os.MkdirAll(books, 0o755); err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir(corpus)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		data, err := os.ReadFile(filepath.Join(corpus, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(books, e.Name()), data, 0o644); err != nil {
			t.Fatal(err)
		}
		if e.Name() == "子平真诠.md" {
			if err := os.WriteFile(filepath.Join(books, "子平真诠-ocr.md"), []byte(testcorpus.Corrupt(string(data), 7, 0.6)), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestSourcesListCredibilityBazi gathers the bazi classics and a corrupted
// edition with the real converter: curate's report and `vibe sources list`
// (text and --json) show every source's grade with its reasons, and the
// corrupted edition is graded below every other.
func TestSourcesListCredibilityBazi(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	baziBooks(t, ws)
	code, out, errOut := runVibeOffline(t, "-w", ws, "curate", "bazi", "--from", filepath.Join(ws, "books"))
	if code != 0 {
		t.Fatalf("curate exit %d:\n%s\n%s", code, out, errOut)
	}
	if !strings.Contains(out, "credibility: 5 A, 1 D") || !strings.Contains(out, "D 0.") || !strings.Contains(out, "books/子平真诠-ocr.md: ") {
		t.Errorf("curate's report does not grade the sources:\n%s", out)
	}

	code, out, errOut = runVibeOffline(t, "-w", ws, "sources", "list", "bazi")
	if code != 0 {
		t.Fatalf("sources list exit %d: %s", code, errOut)
	}
	t.Log(out)
	grades := map[string]string{}
	lines := strings.Split(out, "\n")
	for i, l := range lines {
		f := strings.Fields(l)
		if len(f) == 3 && len(f[0]) == 1 && strings.Contains("ABCD", f[0]) && strings.HasSuffix(f[2], ".md") {
			grades[f[2]] = f[0]
			if i+1 >= len(lines) || !strings.HasPrefix(lines[i+1], "           ") {
				t.Errorf("%s: grade without reasons under it", f[2])
			}
		}
	}
	if len(grades) != 6 {
		t.Fatalf("graded %d files, want the 6: %v\n%s", len(grades), grades, out)
	}
	for f, g := range grades {
		if f != "子平真诠-ocr.md" && !curate.GradeBelow(grades["子平真诠-ocr.md"], g) {
			t.Errorf("the corrupted edition's %s is not below %s's %s", grades["子平真诠-ocr.md"], f, g)
		}
	}
	for _, want := range []string{"OCR-like noise", "disagrees with books/子平真诠.md", "truncated: stops at", "offline: no model configured"} {
		if !strings.Contains(out, want) {
			t.Errorf("sources list does not say %q", want)
		}
	}

	code, out, _ = runVibeOffline(t, "-w", ws, "sources", "list", "bazi", "--json")
	var list []sourceListing
	if err := json.Unmarshal([]byte(out), &list); code != 0 || err != nil || len(list) != 1 {
		t.Fatalf("--json: exit %d, %v: %s", code, err, out)
	}
	for _, f := range list[0].Files {
		if f.Credibility == nil || f.Credibility.Grade == "" || len(f.Credibility.Reasons) == 0 || f.Credibility.Score <= 0 {
			t.Errorf("--json: %s has no grade with reasons: %+v", f.File, f.Credibility)
		}
	}
}

// gitRepo makes a repository with go-git and commits files into it
// ("" removes a file).
type gitRepo struct {
	t    *testing.T
	dir  string
	repo *git.Repository
	n    int
}

func newGitRepo(t *testing.T) *gitRepo {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "tea-notes")
	r, err := git.PlainInitWithOptions(dir, &git.PlainInitOptions{InitOptions: git.InitOptions{DefaultBranch: plumbing.Main}})
	if err != nil {
		t.Fatal(err)
	}
	return &gitRepo{t: t, dir: dir, repo: r}
}

func (r *gitRepo) commit(files map[string]string) string {
	r.t.Helper()
	wt, err := r.repo.Worktree()
	if err != nil {
		r.t.Fatal(err)
	}
	for p, content := range files {
		if content == "" {
			if _, err := wt.Remove(p); err != nil {
				r.t.Fatal(err)
			}
			continue
		}
		full := filepath.Join(r.dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			r.t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			r.t.Fatal(err)
		}
		if _, err := wt.Add(p); err != nil {
			r.t.Fatal(err)
		}
	}
	r.n++
	h, err := wt.Commit("notes", &git.CommitOptions{Author: &object.Signature{Name: "t", Email: "t@example.org", When: time.Date(2024, 5, r.n, 0, 0, 0, 0, time.UTC)}})
	if err != nil {
		r.t.Fatal(err)
	}
	return h.String()
}

func teaNote(topic string) string {
	var b strings.Builder
	b.WriteString("# " + topic + "\n\n")
	for i := range 25 {
		b.WriteString("Note " + strings.Repeat("I", i%5+1) + " on " + topic + ": steep the leaves in water just off the boil, pour, and taste the " + topic + " again after each infusion to judge its strength. ")
	}
	return b.String()
}

// TestCurateGitFileSource: `vibe curate tea --from git+file://...` gathers
// the repository's documents, adds the source to curate.yaml and records
// the commit; after the branch moves, `vibe curate tea` reports what moved
// and touches only that.
func TestCurateGitFileSource(t *testing.T) {
	r := newGitRepo(t)
	first := r.commit(map[string]string{"docs/green.md": teaNote("green tea"), "docs/oolong.md": teaNote("oolong"), "docs/pu-erh.txt": teaNote("pu-erh"), "cover.png": "\x89PNG"})
	ws := t.TempDir()
	src := "git+file://" + filepath.ToSlash(r.dir) + "@main:docs"
	code, out, errOut := runVibe(t, offlineEnv, "-w", ws, "curate", "tea", "--from", src)
	if code != 0 {
		t.Fatalf("exit %d:\n%s\n%s", code, out, errOut)
	}
	if !strings.Contains(out, "git      "+src+": refs/heads/main at "+first[:12]) {
		t.Errorf("curate does not report the commit:\n%s", out)
	}
	cy, _ := os.ReadFile(filepath.Join(ws, "knowledge/tea/curate.yaml"))
	if !strings.Contains(string(cy), src) {
		t.Errorf("curate.yaml does not list the git source:\n%s", cy)
	}
	lock, err := curate.ReadLock(filepath.Join(ws, "knowledge/tea/source", curate.LockName))
	if err != nil {
		t.Fatal(err)
	}
	if len(lock.Git) != 1 || lock.Git[0].Commit != first || lock.Git[0].Files != 3 {
		t.Fatalf("lock git %+v, want commit %s with 3 files", lock.Git, first)
	}
	kept := 0
	for _, e := range lock.Sources {
		if e.Status == curate.StatusKept {
			kept++
		}
	}
	if kept < 2 {
		t.Fatalf("kept %d of the repository's documents:\n%s", kept, out)
	}

	second := r.commit(map[string]string{"docs/green.md": teaNote("green tea from Longjing"), "docs/white.md": teaNote("white tea"), "docs/pu-erh.txt": ""})
	code, out, errOut = runVibe(t, offlineEnv, "-w", ws, "curate", "tea")
	if code != 0 {
		t.Fatalf("exit %d:\n%s\n%s", code, out, errOut)
	}
	if want := "moved " + first[:12] + " -> " + second[:12] + ": 1 added, 1 changed, 1 removed"; !strings.Contains(out, want) {
		t.Errorf("curate after the ref moved does not say %q:\n%s", want, out)
	}
	code, out, _ = runVibe(t, offlineEnv, "-w", ws, "sources", "list", "tea")
	if code != 0 || !strings.Contains(out, "refs/heads/main at "+second[:12]) || !strings.Contains(out, "at commit "+second[:12]) {
		t.Errorf("sources list does not show the new commit:\n%s", out)
	}
}

// TestCurateJudgeCredibility: with curate.judge and a model, each kept
// source is judged once (schema "credibility", versioned prompt), the
// judgement is in the lock with its reason, and a re-run asks nothing.
func TestCurateJudgeCredibility(t *testing.T) {
	r := newGitRepo(t)
	r.commit(map[string]string{"green.md": teaNote("green tea"), "black.md": strings.Repeat("Black tea is fully oxidised; brew it at a full boil for four minutes. ", 30)})
	ws := t.TempDir()
	srv := llmtest.New(t)
	srv.SetFallback(func(req llmtest.Request) llmtest.Reply {
		if req.SchemaName() != "credibility" || !strings.Contains(req.SystemMessage(), "credibility") {
			t.Errorf("unexpected request: schema %q", req.SchemaName())
		}
		return llmtest.JSON(map[string]string{"grade": "B", "reason": "anonymous notes in a personal repository; the text is clean and complete"})
	})
	env := map[string]string{"OPENAI_BASE_URL": srv.URL, "OPENAI_API_KEY": "k", "VIBE_CURATE_JUDGE": "true"}
	src := "git+file://" + filepath.ToSlash(r.dir)
	code, out, errOut := runVibe(t, env, "-w", ws, "curate", "tea", "--from", src, "--json")
	if code != 0 {
		t.Fatalf("exit %d:\n%s\n%s", code, out, errOut)
	}
	var lock curate.Lock
	if err := json.Unmarshal([]byte(out), &lock); err != nil {
		t.Fatal(err)
	}
	if srv.Count() != 2 {
		t.Errorf("%d requests, want one per kept source (2)", srv.Count())
	}
	for _, e := range lock.Sources {
		c := e.Credibility
		if c == nil || c.Judged == nil || c.Judged.Grade != "B" || c.Judged.PromptVersion != credibilityPromptVersion || c.Unjudged != "" ||
			!strings.Contains(strings.Join(c.Reasons, "\n"), "a model judged it B: anonymous notes") {
			t.Errorf("%s: %+v", e.Origin, c)
		}
	}
	if code, _, errOut = runVibe(t, env, "-w", ws, "curate", "tea"); code != 0 || srv.Count() != 2 {
		t.Errorf("re-run: exit %d, %d requests in all (want the cached judgements): %s", code, srv.Count(), errOut)
	}
	// A model configured but curate.judge off: no request, and the grade says so.
	ws2 := t.TempDir()
	env2 := map[string]string{"OPENAI_BASE_URL": srv.URL, "OPENAI_API_KEY": "k"}
	if code, out, errOut = runVibe(t, env2, "-w", ws2, "curate", "tea", "--from", src, "--json"); code != 0 || srv.Count() != 2 {
		t.Fatalf("judge off: exit %d, %d requests: %s", code, srv.Count(), errOut)
	}
	if err := json.Unmarshal([]byte(out), &lock); err != nil || lock.Sources[0].Credibility == nil || !strings.Contains(lock.Sources[0].Credibility.Unjudged, "curate.judge is off") {
		t.Errorf("judge off: %v %+v", err, lock.Sources)
	}
}

// TestExtractWeighsByCredibility builds 子平真诠 and its corrupted edition
// offline: rules first quoted from the corrupted edition quote the same
// words in the good one where they are there, the rest carry source_grade D
// (documented in `vibe schema rules`), and no rule of the good edition is
// marked.
func TestExtractWeighsByCredibility(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	corpus := testcorpus.Dir(t, "bazi")
	book, err := os.ReadFile(filepath.Join(corpus, "子平真诠.md"))
	if err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(ws, "knowledge", "zp", "source")
	if err := os.MkdirAll(src, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{"子平真诠.md": string(book), "子平真诠-ocr.md": testcorpus.Corrupt(string(book), 7, 0.6)} {
		if err := os.WriteFile(filepath.Join(src, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	code, out, errOut := runVibeOffline(t, "-w", ws, "build", "zp", "--until-stage", "extract")
	if code != 0 {
		t.Fatalf("build exit %d:\n%s\n%s", code, out, errOut)
	}
	if !strings.Contains(out, "weighed:") || !strings.Contains(out, "weak:") {
		t.Errorf("extract does not report the weighing:\n%s", out)
	}
	f, _, err := knowledge.ReadFiles(filepath.Join(ws, "skills", "zp", "knowledge"))
	if err != nil {
		t.Fatal(err)
	}
	marked := 0
	for _, r := range f.Rules.Rules.All() {
		fromOCR := strings.HasPrefix(r.Source, "子平真诠-ocr")
		switch {
		case r.SourceGrade != "" && !fromOCR:
			t.Errorf("%s from %s marked %s", r.ID, r.Source, r.SourceGrade)
		case r.SourceGrade == "" && fromOCR:
			t.Errorf("%s rests on the corrupted edition alone but is not marked", r.ID)
		case r.SourceGrade != "":
			marked++
			if r.SourceGrade != "D" {
				t.Errorf("%s: source_grade %s, want the corrupted edition's D", r.ID, r.SourceGrade)
			}
		}
	}
	if marked == 0 {
		t.Error("no rule marked: the corrupted edition's own misreadings should be")
	}
	code, out, _ = runVibe(t, nil, "schema", "rules")
	if code != 0 || !strings.Contains(out, `"source_grade"`) || !strings.Contains(out, "graded below B") {
		t.Errorf("vibe schema rules does not document source_grade:\n%.400s", out)
	}
}

// TestReplayCredibilityJudge replays a relay recording of the credibility
// judge (testdata/credibility-judge, answered by hand as a strong model
// would) over the bazi classics and the corrupted copy: every source gets
// the recorded judgement folded into its grade, the model reads the
// measured findings, and the corrupted copy stays below the others.
func TestReplayCredibilityJudge(t *testing.T) {
	t.Parallel()
	var rec struct {
		PromptVersion string `json:"prompt_version"`
		Answers       []struct {
			Source string           `json:"source"`
			Answer curate.Judgement `json:"answer"`
		} `json:"answers"`
	}
	data, err := os.ReadFile(filepath.Join("testdata", "credibility-judge", "answers.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &rec); err != nil {
		t.Fatal(err)
	}
	if rec.PromptVersion != credibilityPromptVersion {
		t.Fatalf("the recording answers prompt %s, the judge asks %s: record it again", rec.PromptVersion, credibilityPromptVersion)
	}
	answers := map[string]curate.Judgement{}
	for _, a := range rec.Answers {
		answers[a.Source] = a.Answer
	}
	ws := t.TempDir()
	baziBooks(t, ws)
	srv := llmtest.New(t)
	srv.SetFallback(func(req llmtest.Request) llmtest.Reply {
		user := req.LastUserMessage()
		src, _, _ := strings.Cut(strings.TrimPrefix(user, "Source: "), "\n")
		a, ok := answers[src]
		if !ok || req.SchemaName() != "credibility" {
			t.Errorf("no recorded answer for %q (schema %q)", src, req.SchemaName())
			return llmtest.Status(500, "not recorded")
		}
		if src == "books/子平真诠-ocr.md" && (!strings.Contains(user, "OCR-like noise") || !strings.Contains(user, "truncated: stops at")) {
			t.Errorf("the model is not shown the measured findings:\n%.600s", user)
		}
		return llmtest.JSON(a)
	})
	env := map[string]string{"OPENAI_BASE_URL": srv.URL, "OPENAI_API_KEY": "k", "VIBE_CURATE_JUDGE": "true"}
	code, out, errOut := runVibeUnraced(t, env, "-w", ws, "curate", "bazi", "--from", filepath.Join(ws, "books"), "--json")
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, errOut)
	}
	var lock curate.Lock
	if err := json.Unmarshal([]byte(out), &lock); err != nil {
		t.Fatal(err)
	}
	if srv.Count() != len(answers) {
		t.Errorf("%d requests, want one per source (%d)", srv.Count(), len(answers))
	}
	var bad *curate.Credibility
	for _, e := range lock.Sources {
		c := e.Credibility
		want := answers[e.Origin]
		if c == nil || c.Judged == nil || c.Judged.Grade != want.Grade || c.Judged.Reason != want.Reason ||
			!strings.Contains(strings.Join(c.Reasons, "\n"), "a model judged it "+want.Grade+": ") {
			t.Errorf("%s: %+v", e.Origin, c)
			continue
		}
		if e.Origin == "books/子平真诠-ocr.md" {
			bad = c
		}
	}
	if bad == nil || bad.Grade != "D" {
		t.Fatalf("the corrupted copy: %+v", bad)
	}
	for _, e := range lock.Sources {
		if c := e.Credibility; c != nil && c != bad && !curate.GradeBelow(bad.Grade, c.Grade) {
			t.Errorf("%s graded %s, not above the corrupted copy's %s", e.Origin, c.Grade, bad.Grade)
		}
	}
}
