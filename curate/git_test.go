package curate

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// testRepo is a git repository a test writes commits into.
type testRepo struct {
	t    *testing.T
	dir  string
	repo *git.Repository
	n    int
}

func newTestRepo(t *testing.T) *testRepo {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "repo")
	r, err := git.PlainInitWithOptions(dir, &git.PlainInitOptions{InitOptions: git.InitOptions{DefaultBranch: plumbing.Main}})
	if err != nil {
		t.Fatal(err)
	}
	return &testRepo{t: t, dir: dir, repo: r}
}

// commit writes files (content "" removes the file) and commits them,
// returning the commit hash.
func (r *testRepo) commit(files map[string]string) string {
	r.t.Helper()
	wt, err := r.repo.Worktree()
	if err != nil {
		r.t.Fatal(err)
	}
	for p, content := range files {
		full := filepath.Join(r.dir, filepath.FromSlash(p))
		if content == "" {
			if _, err := wt.Remove(p); err != nil {
				r.t.Fatal(err)
			}
			continue
		}
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
	when := time.Date(2024, 1, r.n, 12, 0, 0, 0, time.UTC)
	h, err := wt.Commit(fmt.Sprintf("commit %d", r.n), &git.CommitOptions{Author: &object.Signature{Name: "t", Email: "t@example.org", When: when}})
	if err != nil {
		r.t.Fatal(err)
	}
	return h.String()
}

// doc is a text long enough to pass curate's quality checks, distinct per
// seed.
func doc(seed string) string {
	var b strings.Builder
	for i := range 30 {
		fmt.Fprintf(&b, "Paragraph %d of %s: the stems and branches of the chart are read in order, and the month decides the season. ", i, seed)
	}
	return b.String()
}

func gitOpts(root string, specs ...Spec) Options {
	return Options{Root: root, SourceDir: filepath.Join(root, "knowledge/tea/source"), Sources: specs, Now: fixedNow,
		GitCacheDir: filepath.Join(root, ".vibe/cache/git")}
}

// TestGitLocalSource gathers the documents under a path of a local
// repository at a branch, records the commit and each file's blob, and
// leaves out images, code and hidden files unless code is asked for.
func TestGitLocalSource(t *testing.T) {
	r := newTestRepo(t)
	head := r.commit(map[string]string{
		"docs/intro.md": doc("intro"), "docs/guide/brewing.txt": doc("brewing"), "docs/leaf.png": "\x89PNG\r\n\x1a\n",
		"docs/.drafts/old.md": doc("old"), "src/main.go": "package main\n\nfunc main() {}\n" + doc("code"), "README.md": doc("readme"),
	})
	root := t.TempDir()
	src := "git+file://" + filepath.ToSlash(r.dir) + "@main:docs"
	res, err := Run(context.Background(), gitOpts(root, Spec{Source: src}))
	if err != nil {
		t.Fatal(err)
	}
	rep := res.Sources[0]
	if rep.Err != nil || rep.Kept != 2 {
		t.Fatalf("kept %d, err %v", rep.Kept, rep.Err)
	}
	repo := "git+file://" + filepath.ToSlash(r.dir)
	var origins []string
	for _, e := range res.Lock.Sources {
		origins = append(origins, e.Origin)
		if e.Provenance.Repository != repo || e.Provenance.Blob == "" || !strings.HasPrefix(e.Provenance.Path, "docs/") {
			t.Errorf("%s: provenance %+v", e.Origin, e.Provenance)
		}
		if e.Credibility == nil || !strings.Contains(strings.Join(e.Credibility.Reasons, " "), "at commit "+head[:12]) {
			t.Errorf("%s: credibility %+v does not name the repository and commit", e.Origin, e.Credibility)
		}
	}
	want := []string{repo + ":docs/guide/brewing.txt", repo + ":docs/intro.md"}
	if !slices.Equal(origins, want) {
		t.Errorf("origins %v, want %v", origins, want)
	}
	if len(res.Lock.Git) != 1 || res.Lock.Git[0].Commit != head || res.Lock.Git[0].Ref != "refs/heads/main" || res.Lock.Git[0].Files != 2 || res.Lock.Git[0].Source != src {
		t.Errorf("lock git %+v, want commit %s on refs/heads/main", res.Lock.Git, head)
	}
	if !slices.Equal(rep.Unsupported, []string{"docs/leaf.png"}) {
		t.Errorf("unsupported %v, want the image", rep.Unsupported)
	}
	for _, f := range []string{"intro.md", "brewing.txt"} {
		if _, err := os.Stat(filepath.Join(root, "knowledge/tea/source", f)); err != nil {
			t.Error(err)
		}
	}
	if !Owns(root, src, repo+":docs/intro.md") || Owns(root, src, repo+":README.md") || Owns(root, "git+file:///elsewhere:docs", repo+":docs/intro.md") {
		t.Error("Owns does not match the source's files")
	}

	// Two sources of one repository do not remove each other's files.
	root3 := t.TempDir()
	res, err = Run(context.Background(), gitOpts(root3, Spec{Source: repo + ":docs/guide"}, Spec{Source: repo + ":README.md"}))
	if err != nil {
		t.Fatal(err)
	}
	if res.Kept() != 2 || res.Failed() != 0 || len(res.Lock.Git) != 2 {
		t.Errorf("two sources of one repository: kept %d, failed %d, git %+v", res.Kept(), res.Failed(), res.Lock.Git)
	}

	// The whole repository with code: the Go file comes as text.
	root2 := t.TempDir()
	res, err = Run(context.Background(), gitOpts(root2, Spec{Source: "git+file://" + filepath.ToSlash(r.dir), Include: []string{IncludeCode}}))
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, e := range res.Lock.Sources {
		files = append(files, e.File)
	}
	if !slices.Equal(files, []string{"README.md", "brewing.txt", "intro.md", "main.go.txt"}) {
		t.Errorf("with include code: stored %v", files)
	}
}

// TestGitMovedRef moves the branch (one file changed, one added, one
// removed) and gathers again: only those are touched; the unchanged copy
// keeps its file and gathered_at, the removed one leaves source/, the lock
// names the new commit.
func TestGitMovedRef(t *testing.T) {
	r := newTestRepo(t)
	first := r.commit(map[string]string{"a.md": doc("a"), "b.md": doc("b"), "c.md": doc("c")})
	root := t.TempDir()
	opts := gitOpts(root, Spec{Source: "git+file://" + filepath.ToSlash(r.dir)})
	opts.Now = func() time.Time { return time.Date(2024, 2, 1, 0, 0, 0, 0, time.UTC) }
	res, err := Run(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if res.Sources[0].Git == nil || len(res.Sources[0].Git.Added) != 3 || res.Lock.Git[0].Commit != first {
		t.Fatalf("first gather: %+v %+v", res.Sources[0].Git, res.Lock.Git)
	}
	srcDir := opts.SourceDir
	stat := func(name string) os.FileInfo {
		st, err := os.Stat(filepath.Join(srcDir, name))
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	aBefore := stat("a.md")

	again, err := Run(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if again.Changed || len(again.Sources[0].Git.Added)+len(again.Sources[0].Git.Changed)+len(again.Sources[0].Git.Removed) != 0 {
		t.Errorf("an unmoved ref changed something: %+v", again.Sources[0].Git)
	}

	second := r.commit(map[string]string{"b.md": doc("b2"), "d.md": doc("d"), "c.md": ""})
	opts.Now = func() time.Time { return time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC) }
	res, err = Run(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	g := res.Sources[0].Git
	if g.Previous != first || g.Commit != second || !slices.Equal(g.Added, []string{"d.md"}) || !slices.Equal(g.Changed, []string{"b.md"}) || !slices.Equal(g.Removed, []string{"c.md"}) {
		t.Errorf("change %+v, want b changed, d added, c removed from %s to %s", g, first, second)
	}
	if res.Lock.Git[0].Commit != second {
		t.Errorf("lock commit %s, want %s", res.Lock.Git[0].Commit, second)
	}
	if !slices.Equal(res.Removed, []string{"c.md"}) {
		t.Errorf("removed %v, want c.md", res.Removed)
	}
	if aAfter := stat("a.md"); !os.SameFile(aBefore, aAfter) || !aAfter.ModTime().Equal(aBefore.ModTime()) {
		t.Error("the unchanged a.md was written again")
	}
	for _, e := range res.Lock.Sources {
		switch e.File {
		case "a.md":
			if !e.GatheredAt.Equal(time.Date(2024, 2, 1, 0, 0, 0, 0, time.UTC)) {
				t.Errorf("a.md gathered_at %s moved though its blob did not", e.GatheredAt)
			}
		case "b.md", "d.md":
			if !e.GatheredAt.Equal(time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC)) {
				t.Errorf("%s gathered_at %s, want the new run's", e.File, e.GatheredAt)
			}
		default:
			t.Errorf("unexpected entry %s", e.Origin)
		}
	}
	data, err := os.ReadFile(filepath.Join(srcDir, "b.md"))
	if err != nil || string(data) != doc("b2") {
		t.Errorf("b.md not updated: %v", err)
	}

	// The repository vanishes: its copies stay, like any vanished source.
	if err := os.RemoveAll(r.dir); err != nil {
		t.Fatal(err)
	}
	res, err = Run(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if res.Sources[0].Err == nil || len(res.Sources[0].Carried) != 3 || len(res.Lock.Git) != 1 || res.Lock.Git[0].Commit != second {
		t.Errorf("vanished repository: err %v, carried %v, git %+v", res.Sources[0].Err, res.Sources[0].Carried, res.Lock.Git)
	}
}

// TestGitSourceErrors: an unknown ref names the branches and tags there
// are, a missing path the top level, a directory that is not a repository
// says so, and the limits hold.
func TestGitSourceErrors(t *testing.T) {
	r := newTestRepo(t)
	r.commit(map[string]string{"docs/a.md": doc("a"), "docs/b.md": doc("b"), "notes.txt": doc("n")})
	if _, err := r.repo.CreateTag("v1", mustHead(t, r.repo), nil); err != nil {
		t.Fatal(err)
	}
	repo := "git+file://" + filepath.ToSlash(r.dir)
	notRepo := t.TempDir()
	tests := []struct {
		name, src string
		mod       func(*Options)
		is        error
		want      string
	}{
		{"unknown ref", repo + "@nope", nil, ErrGitRef, `unknown ref "nope" (it has main, v1)`},
		{"no such path", repo + ":guides", nil, ErrGitPath, "no such path guides at"},
		{"no such path lists the top level", repo + ":guides", nil, ErrGitPath, "the top level holds docs/, notes.txt"},
		{"not a repository", "git+file://" + filepath.ToSlash(notRepo), nil, nil, "is not a git repository"},
		{"missing", "git+file://" + filepath.ToSlash(notRepo) + "/gone", nil, nil, "does not exist"},
		{"too many files", repo, func(o *Options) { o.MaxRepoFiles = 2 }, nil, "3 files to gather, over curate.max_repo_files (2)"},
		{"too many bytes", repo, func(o *Options) { o.MaxRepoBytes = 100 }, ErrTooLarge, "over curate.max_repo_bytes (100)"},
		{"ssh", "git+ssh://host/x.git", nil, nil, "scheme ssh is not supported"},
		{"only images", repo + ":notes.txt", nil, nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := gitOpts(t.TempDir(), Spec{Source: tt.src})
			if tt.mod != nil {
				tt.mod(&opts)
			}
			res, err := Run(context.Background(), opts)
			if err != nil {
				t.Fatal(err)
			}
			rerr := res.Sources[0].Err
			if tt.want == "" {
				if rerr != nil || res.Kept() != 1 {
					t.Errorf("a single file: err %v, kept %d", rerr, res.Kept())
				}
				return
			}
			if rerr == nil || !strings.Contains(rerr.Error(), tt.want) || (tt.is != nil && !errors.Is(rerr, tt.is)) {
				t.Errorf("err %v, want %q (%v)", rerr, tt.want, tt.is)
			}
			if res.Failed() != 1 {
				t.Errorf("failed %d, want the source recorded as failed", res.Failed())
			}
		})
	}

	// A file over curate.max_download_bytes is dropped, the others kept.
	opts := gitOpts(t.TempDir(), Spec{Source: repo + ":docs"})
	opts.MaxDownloadBytes = int64(len(doc("a")) - 1)
	r.commit(map[string]string{"docs/small.md": strings.Repeat("短文。", 80)})
	res, err := Run(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if res.Kept() != 1 || res.Failed() != 2 {
		t.Errorf("kept %d failed %d, want the small file kept and the two large ones dropped as too large", res.Kept(), res.Failed())
	}
}

func mustHead(t *testing.T, r *git.Repository) plumbing.Hash {
	t.Helper()
	h, err := r.Head()
	if err != nil {
		t.Fatal(err)
	}
	return h.Hash()
}

func TestParseGitSource(t *testing.T) {
	tests := []struct {
		in                       string
		repo, url, ref, path, er string
	}{
		{in: "github:owner/repo", repo: "github:owner/repo", url: "https://github.com/owner/repo.git"},
		{in: "github:owner/repo@v1.2:docs/zh/", repo: "github:owner/repo", url: "https://github.com/owner/repo.git", ref: "v1.2", path: "docs/zh"},
		{in: "github:owner/repo@release/2024", repo: "github:owner/repo", url: "https://github.com/owner/repo.git", ref: "release/2024"},
		{in: "git+https://git.example.org:8443/team/books.git@main:classics/**/*.md", repo: "git+https://git.example.org:8443/team/books.git",
			url: "https://git.example.org:8443/team/books.git", ref: "main", path: "classics/**/*.md"},
		{in: "git+https://user@host/x.git", repo: "git+https://user@host/x.git", url: "https://user@host/x.git"},
		{in: "git+file:///srv/repos/tea:README.md", repo: "git+file:///srv/repos/tea", path: "README.md"},
		{in: "github:owner", er: "write github:owner/repo"},
		{in: "github:owner/repo@:docs", er: "empty ref"},
		{in: "git+ssh://host/x", er: "not supported"},
		{in: "git+https://host", er: "no repository path"},
		{in: "github:o/r:../etc", er: "may not leave"},
	}
	for _, tt := range tests {
		g, err := parseGitSource("/ws", tt.in)
		if tt.er != "" {
			if err == nil || !strings.Contains(err.Error(), tt.er) {
				t.Errorf("%s: err %v, want %q", tt.in, err, tt.er)
			}
			continue
		}
		if err != nil || g.Repo != tt.repo || g.URL != tt.url || g.Ref != tt.ref || g.Path != tt.path {
			t.Errorf("%s: %+v %v", tt.in, g, err)
		}
	}
	if !gitOwns("github:o/r@v2:docs", "github:o/r:docs/a/b.md") || gitOwns("github:o/r:docs", "github:o/r:docsx/a.md") ||
		!gitOwns("github:o/r:docs/**/*.md", "github:o/r:docs/a/b.md") || gitOwns("github:o/r:docs/**/*.md", "github:o/r:docs/a/b.txt") {
		t.Error("gitOwns")
	}
}

// randomDoc is n bytes of random lowercase words.
func randomDoc(seed uint64, n int) string {
	rng := rand.New(rand.NewPCG(seed, 2))
	var b strings.Builder
	for b.Len() < n {
		for range 2 + rng.IntN(8) {
			b.WriteByte(byte('a' + rng.IntN(26)))
		}
		b.WriteByte(' ')
	}
	return b.String()
}

// gitHTTPServer serves the bare repositories under dir with git's own
// smart HTTP backend (the git binary), on a loopback port.
func gitHTTPServer(t *testing.T, dir string, wrap func(http.Handler) http.Handler) *httptest.Server {
	t.Helper()
	gitBin, err := exec.LookPath("git")
	if err != nil {
		t.Skip("SKIPPED: no git binary to serve a repository over HTTP; the local-repository tests cover the rest")
	}
	var h http.Handler = &cgi.Handler{Path: gitBin, Args: []string{"http-backend"},
		Env: []string{"GIT_PROJECT_ROOT=" + dir, "GIT_HTTP_EXPORT_ALL=1"}}
	if wrap != nil {
		h = wrap(h)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

// countingTransport counts response bytes.
type countingTransport struct{ n atomic.Int64 }

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err == nil {
		resp.Body = &countingBody{resp.Body, &c.n}
	}
	return resp, err
}

type countingBody struct {
	io.ReadCloser
	n *atomic.Int64
}

func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.n.Add(int64(n))
	return n, err
}

// TestGitRemoteFetch fetches over smart HTTP (git http-backend on a
// loopback port, nothing leaves the machine): the first fetch is shallow,
// a moved ref fetches only the new objects, an unmoved one none, and a
// server asking for credentials or a closed port give errors that say what
// to do.
func TestGitRemoteFetch(t *testing.T) {
	r := newTestRepo(t)
	// Random words do not compress: the bytes on the wire say which blobs
	// travelled.
	history := randomDoc(1, 64<<10)
	r.commit(map[string]string{"old/history.md": history})
	r.commit(map[string]string{"old/history.md": ""})
	r.commit(map[string]string{"a.md": randomDoc(2, 8<<10), "b.md": randomDoc(3, 8<<10)})
	served := t.TempDir()
	if out, err := exec.Command("git", "clone", "-q", "--bare", r.dir, filepath.Join(served, "tea.git")).CombinedOutput(); err != nil {
		t.Skipf("SKIPPED: git clone --bare: %v %s", err, out)
	}
	srv := gitHTTPServer(t, served, nil)
	root := t.TempDir()
	ct := &countingTransport{}
	opts := gitOpts(root, Spec{Source: "git+" + srv.URL + "/tea.git@main"})
	opts.HTTPClient = &http.Client{Transport: ct}
	res, err := Run(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := res.Sources[0].Err; err != nil || res.Kept() != 2 {
		t.Fatalf("kept %d: %v", res.Kept(), err)
	}
	first := ct.n.Load()
	// Random letters compress to about 60%: the two documents are some
	// 10 KiB on the wire, the history a shallow fetch leaves out 38 KiB.
	if first >= int64(len(history))/2 || first < 8<<10 {
		t.Errorf("the first fetch transferred %d bytes: want the two documents (16 KiB, less compressed) without the %d-byte history", first, len(history))
	}
	cache := gitCacheDir(&opts, gitSource{Repo: "git+" + srv.URL + "/tea.git"})
	if shallow, err := os.ReadFile(filepath.Join(cache, "repo", "shallow")); err != nil || len(strings.TrimSpace(string(shallow))) != 40 {
		t.Errorf("the cache is not a depth-1 clone: shallow file %q, %v", shallow, err)
	}
	if res.Lock.Git[0].Ref != "refs/heads/main" {
		t.Errorf("ref %q", res.Lock.Git[0].Ref)
	}

	// Unmoved: only the advertisement is read, no pack.
	ct.n.Store(0)
	if res, err = Run(context.Background(), opts); err != nil || res.Changed {
		t.Fatalf("unmoved ref: changed %v, %v", res.Changed, err)
	}
	if n := ct.n.Load(); n >= first/2 {
		t.Errorf("an unmoved ref transferred %d bytes (first fetch %d)", n, first)
	}

	// Moved: one new file; the pack holds only the new objects.
	r.commit(map[string]string{"c.md": randomDoc(4, 8<<10)})
	if out, err := exec.Command("git", "-C", r.dir, "push", "-q", filepath.Join(served, "tea.git"), "main").CombinedOutput(); err != nil {
		t.Fatalf("git push: %v %s", err, out)
	}
	ct.n.Store(0)
	res, err = Run(context.Background(), opts)
	if err != nil || res.Sources[0].Err != nil {
		t.Fatal(err, res.Sources[0].Err)
	}
	if g := res.Sources[0].Git; !slices.Equal(g.Added, []string{"c.md"}) || len(g.Changed)+len(g.Removed) != 0 {
		t.Errorf("moved ref: %+v", g)
	}
	if moved := ct.n.Load(); moved >= first*3/4 || moved < first/4 {
		t.Errorf("the moved ref transferred %d bytes (first fetch %d): want only the new document, about half the first", moved, first)
	}

	// The ref rewritten onto another history whose old commits pass the
	// budget: the fetch from the cached commit gives up and a depth-1 fetch
	// brings the new tip alone.
	other := newTestRepo(t)
	other.commit(map[string]string{"old/history.md": randomDoc(5, 96<<10)})
	other.commit(map[string]string{"old/history.md": "", "e.md": randomDoc(6, 4<<10)})
	if out, err := exec.Command("git", "-C", other.dir, "push", "-q", "-f", filepath.Join(served, "tea.git"), "main").CombinedOutput(); err != nil {
		t.Fatalf("git push -f: %v %s", err, out)
	}
	opts.MaxRepoBytes = 32 << 10
	res, err = Run(context.Background(), opts)
	if err != nil || res.Sources[0].Err != nil {
		t.Fatal(err, res.Sources[0].Err)
	}
	if g := res.Sources[0].Git; !slices.Equal(g.Added, []string{"e.md"}) || len(g.Removed) != 3 {
		t.Errorf("rewritten ref: %+v", g)
	}

	// Credentials asked for.
	authSrv := gitHTTPServer(t, served, func(http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("WWW-Authenticate", `Basic realm="git"`)
			http.Error(w, "auth", http.StatusUnauthorized)
		})
	})
	res, err = Run(context.Background(), gitOpts(t.TempDir(), Spec{Source: "git+" + authSrv.URL + "/tea.git"}))
	if err != nil {
		t.Fatal(err)
	}
	if e := res.Sources[0].Err; !errors.Is(e, ErrGitAuth) || !strings.Contains(e.Error(), "git+file://") {
		t.Errorf("auth: %v", e)
	}

	// No network: a port nothing listens on.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	res, err = Run(context.Background(), gitOpts(t.TempDir(), Spec{Source: "git+http://" + addr + "/tea.git"}))
	if err != nil {
		t.Fatal(err)
	}
	if e := res.Sources[0].Err; !errors.Is(e, ErrGitUnreachable) {
		t.Errorf("closed port: %v", e)
	}

	// An unknown ref on the server names the ones there are.
	res, _ = Run(context.Background(), gitOpts(t.TempDir(), Spec{Source: "git+" + srv.URL + "/tea.git@v9"}))
	if e := res.Sources[0].Err; !errors.Is(e, ErrGitRef) || !strings.Contains(e.Error(), "main") {
		t.Errorf("unknown remote ref: %v", e)
	}
}
