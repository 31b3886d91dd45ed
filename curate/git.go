package curate

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/go-git/go-git/v5/storage/filesystem"

	"github.com/vibelife/vibe/internal/atomicfile"
)

// Git source errors.
var (
	// ErrGitRef: the ref a git source names is not in the repository.
	ErrGitRef = errors.New("unknown ref")
	// ErrGitPath: the path a git source names is not in the tree.
	ErrGitPath = errors.New("no such path")
	// ErrGitAuth: the repository asks for credentials (or is private, or
	// does not exist: hosts answer alike for the three).
	ErrGitAuth = errors.New("repository not found or needs credentials")
	// ErrGitUnreachable: the host could not be reached (no network, DNS).
	ErrGitUnreachable = errors.New("cannot reach the repository")
)

// GitSource records, in the lock, the commit a listed git source was
// gathered from.
type GitSource struct {
	// Source is the entry as listed in curate.yaml.
	Source string `json:"source"`
	// Repository is the repository part of it (github:owner/repo,
	// git+https://host/x.git, git+file:///path), as in the origins of its
	// entries.
	Repository string `json:"repository"`
	// Ref is the ref it resolved to (refs/heads/main, refs/tags/v1), or the
	// commit when a commit was asked for.
	Ref string `json:"ref"`
	// Commit is the commit's hash.
	Commit string `json:"commit"`
	// CommittedAt is the commit's committer date.
	CommittedAt time.Time `json:"committed_at"`
	// Files counts the documents selected at that commit.
	Files int `json:"files"`
}

// GitChange is what moved in a git source since the lock's commit.
type GitChange struct {
	// Previous and Commit are the lock's commit and the one gathered now
	// (equal when the ref did not move).
	Previous, Commit string
	// Ref is the resolved ref.
	Ref string
	// Added, Changed and Removed are paths in the repository; files whose
	// blob did not change are in none of them and are not touched.
	Added, Changed, Removed []string
}

// codeExt are the extensions gathered as text with include: [code].
var codeExt = map[string]bool{
	".go": true, ".py": true, ".js": true, ".mjs": true, ".ts": true, ".tsx": true, ".jsx": true,
	".java": true, ".kt": true, ".scala": true, ".c": true, ".h": true, ".cc": true, ".cpp": true,
	".hpp": true, ".cs": true, ".rs": true, ".rb": true, ".php": true, ".swift": true, ".m": true,
	".lua": true, ".pl": true, ".r": true, ".jl": true, ".sh": true, ".sql": true, ".hs": true,
	".ex": true, ".exs": true, ".clj": true, ".dart": true, ".vue": true, ".el": true, ".lisp": true,
	".scm": true, ".ml": true, ".f90": true, ".toml": true, ".yaml": true, ".yml": true, ".json": true,
}

// Include values of a [Spec].
const (
	// IncludeCode gathers source code (.go, .py, .js, ...) as text, with
	// the documents.
	IncludeCode = "code"
)

// isGitSource reports whether s names a git repository.
func isGitSource(s string) bool {
	return strings.HasPrefix(s, "github:") || strings.HasPrefix(s, "git+")
}

// gitSource is a parsed git source: github:owner/repo[@ref][:path] or
// git+<url>[@ref][:path].
type gitSource struct {
	// Repo is the repository as written, without ref and path.
	Repo string
	// URL is what is fetched (https://github.com/owner/repo.git), empty
	// for a local repository.
	URL string
	// Local is the local repository's directory (git+file://).
	Local string
	Ref   string
	// Path is the directory, file or glob inside the repository; empty is
	// the whole tree.
	Path string
}

// parseGitSource parses a git source; relative git+file:// paths are taken
// against root.
func parseGitSource(root, s string) (gitSource, error) {
	var g gitSource
	var head, rest string
	switch {
	case strings.HasPrefix(s, "github:"):
		head, rest = "github:", s[len("github:"):]
	case strings.HasPrefix(s, "git+"):
		u := s[len("git+"):]
		i := strings.Index(u, "://")
		if i < 0 {
			return g, fmt.Errorf("git source %q: write git+https://host/path or git+file:///path", s)
		}
		scheme := u[:i]
		switch scheme {
		case "https", "http", "file":
		default:
			return g, fmt.Errorf("git source %q: scheme %s is not supported: use git+https:// (public repositories), git+file:// (a local clone) or github:owner/repo", s, scheme)
		}
		after := u[i+3:]
		auth := ""
		if scheme != "file" {
			j := strings.IndexByte(after, '/')
			if j <= 0 {
				return g, fmt.Errorf("git source %q: no repository path after the host", s)
			}
			auth, after = after[:j], after[j:]
		}
		head, rest = "git+"+scheme+"://"+auth, after
	default:
		return g, fmt.Errorf("git source %q: write github:owner/repo or git+https://, git+file://", s)
	}
	repoPart := rest
	if i := strings.IndexByte(rest, ':'); i >= 0 {
		repoPart, g.Path = rest[:i], rest[i+1:]
	}
	if i := strings.IndexByte(repoPart, '@'); i >= 0 {
		repoPart, g.Ref = repoPart[:i], repoPart[i+1:]
		if g.Ref == "" {
			return g, fmt.Errorf("git source %q: empty ref after @", s)
		}
	}
	g.Path = strings.Trim(g.Path, "/")
	if g.Path == "." {
		g.Path = ""
	}
	for _, seg := range strings.Split(g.Path, "/") {
		if seg == ".." {
			return g, fmt.Errorf("git source %q: the path may not leave the repository (..)", s)
		}
	}
	repoPart = strings.TrimRight(repoPart, "/")
	if repoPart == "" {
		return g, fmt.Errorf("git source %q: no repository", s)
	}
	g.Repo = head + repoPart
	switch {
	case head == "github:":
		parts := strings.Split(repoPart, "/")
		if len(parts) != 2 || parts[0] == "" || parts[1] == "" {
			return g, fmt.Errorf("git source %q: write github:owner/repo[@ref][:path]", s)
		}
		g.URL = "https://github.com/" + strings.TrimSuffix(repoPart, ".git") + ".git"
	case head == "git+file://":
		g.Local = specPath(root, filepath.FromSlash(repoPart))
	default:
		g.URL = strings.TrimPrefix(head, "git+") + repoPart
	}
	return g, nil
}

// gitOrigin is the origin of a file of a git source: the repository, a
// colon and the file's path in it (the ref is left out, so a moved or
// changed ref keeps the origins and the stored names).
func gitOrigin(repo, file string) string { return repo + ":" + file }

// gitOwns reports whether origin is a file the git source src selects.
func gitOwns(src, origin string) bool {
	if !isGitSource(src) || !isGitSource(origin) {
		return false
	}
	s, err := parseGitSource("", src)
	if err != nil {
		return false
	}
	o, err := parseGitSource("", origin)
	if err != nil || o.Repo != s.Repo || o.Path == "" {
		return false
	}
	return pathSelected(s.Path, o.Path)
}

// pathSelected reports whether the file at p (a path in the repository)
// lies under sel (a directory, the file itself, or a glob).
func pathSelected(sel, p string) bool {
	switch {
	case sel == "":
		return true
	case isGlob(sel):
		return matchSegs(strings.Split(sel, "/"), strings.Split(p, "/"))
	}
	return p == sel || strings.HasPrefix(p, sel+"/")
}

// gitFile is a file selected in a tree.
type gitFile struct {
	Path string
	Blob plumbing.Hash
	Size int64
	Code bool
}

// gitSnapshot is a resolved commit of a git source.
type gitSnapshot struct {
	st     storer.EncodedObjectStorer
	commit *object.Commit
	ref    string
}

// expandGit gathers a git source: the repository at the ref (a local
// repository is read in place, a remote one fetched shallowly into a cache),
// the documents under the path checked out into the cache, one candidate
// each.
func expandGit(ctx context.Context, opts *Options, s Spec, rep *SourceReport) []candidate {
	src := strings.TrimSpace(s.Source)
	fail := func(err error) []candidate {
		rep.Err = err
		return []candidate{{origin: src, notes: s.Notes, err: err}}
	}
	g, err := parseGitSource(opts.Root, src)
	if err != nil {
		return fail(err)
	}
	code := false
	for _, inc := range s.Include {
		code = code || inc == IncludeCode
	}
	dir := gitCacheDir(opts, g)
	var snap gitSnapshot
	if g.Local != "" {
		snap, err = openLocal(g)
	} else {
		snap, err = fetchRemote(ctx, opts, g, filepath.Join(dir, "repo"))
	}
	if err != nil {
		return fail(fmt.Errorf("%s: %w", src, err))
	}
	files, err := selectFiles(snap, g, code, rep)
	if err != nil {
		return fail(fmt.Errorf("%s: %w", src, err))
	}
	if len(files) == 0 {
		return fail(noFilesError(src, fmt.Sprintf("the tree at %s holds no %s file", shortHash(snap.commit.Hash.String()), supportedList), rep.Unsupported))
	}
	if len(files) > opts.MaxRepoFiles {
		return fail(fmt.Errorf("%s: %d files to gather, over curate.max_repo_files (%d): name a directory with :path or raise the limit", src, len(files), opts.MaxRepoFiles))
	}
	var total int64
	for _, f := range files {
		total += f.Size
	}
	if total > opts.MaxRepoBytes {
		return fail(fmt.Errorf("%s: %w: its documents hold %d bytes, over curate.max_repo_bytes (%d): name a directory with :path or raise the limit", src, ErrTooLarge, total, opts.MaxRepoBytes))
	}
	// A checkout per listed source: two sources of one repository (two
	// paths, two refs) must not remove each other's files.
	sum := sha256.Sum256([]byte(src))
	filesDir := filepath.Join(dir, "files-"+hex.EncodeToString(sum[:6]))
	paths, err := checkout(ctx, snap.st, files, filesDir, opts.MaxDownloadBytes)
	if err != nil {
		return fail(fmt.Errorf("%s: check out: %w", src, err))
	}
	rep.Git = &GitChange{Commit: snap.commit.Hash.String(), Ref: snap.ref}
	rep.gitLock = &GitSource{Source: src, Repository: g.Repo, Ref: snap.ref, Commit: snap.commit.Hash.String(),
		CommittedAt: snap.commit.Committer.When.UTC(), Files: len(files)}
	out := make([]candidate, 0, len(files))
	for _, f := range files {
		c := candidate{origin: gitOrigin(g.Repo, f.Path), notes: s.Notes, name: path.Base(f.Path), spec: -1,
			prov: s.provenance()}
		c.prov.Repository, c.prov.Path, c.prov.Blob = g.Repo, f.Path, f.Blob.String()
		if f.Code {
			// main.go is stored as main.go.txt: the name says what it was.
			c.name += ".txt"
		}
		if f.Size > opts.MaxDownloadBytes {
			c.err = fmt.Errorf("%w: %d bytes is over curate.max_download_bytes (%d)", ErrTooLarge, f.Size, opts.MaxDownloadBytes)
		} else {
			c.path = paths[f.Path]
		}
		out = append(out, c)
	}
	return out
}

// gitCacheDir is where a git source of this theme is cached: the fetched
// objects of a remote repository and the checked-out documents.
func gitCacheDir(opts *Options, g gitSource) string {
	base := opts.GitCacheDir
	if base == "" {
		base = filepath.Join(opts.Root, ".vibe", "cache", "git")
	}
	h := sha256.Sum256([]byte(opts.SourceDir + "\x00" + g.Repo))
	return filepath.Join(base, hex.EncodeToString(h[:8]))
}

// openLocal resolves the ref in a local repository, read in place (a
// working tree with .git, or a bare repository).
func openLocal(g gitSource) (gitSnapshot, error) {
	var snap gitSnapshot
	if _, err := os.Stat(g.Local); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return snap, fmt.Errorf("%s does not exist", g.Local)
		}
		return snap, err
	}
	dir, err := gitDir(g.Local)
	if err != nil {
		return snap, err
	}
	st := filesystem.NewStorage(osfs.New(dir), cache.NewObjectLRUDefault())
	h, name, err := resolveLocal(st, g.Ref)
	if err != nil {
		return snap, err
	}
	commit, err := peelCommit(st, h)
	if err != nil {
		return snap, fmt.Errorf("%w %q: %v", ErrGitRef, g.Ref, err)
	}
	return gitSnapshot{st: st, commit: commit, ref: name}, nil
}

// gitDir finds the git directory of a repository: dir/.git (or the
// directory a .git file names), or dir itself when it is bare.
func gitDir(dir string) (string, error) {
	dotgit := filepath.Join(dir, ".git")
	if st, err := os.Stat(dotgit); err == nil {
		if st.IsDir() {
			return dotgit, nil
		}
		// A linked worktree or submodule: "gitdir: <path>".
		b, err := os.ReadFile(dotgit)
		if err != nil {
			return "", err
		}
		p, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir:")
		if !ok {
			return "", fmt.Errorf("%s: not a git directory", dotgit)
		}
		p = strings.TrimSpace(p)
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		return p, nil
	}
	if _, err := os.Stat(filepath.Join(dir, "HEAD")); err == nil {
		if _, err := os.Stat(filepath.Join(dir, "objects")); err == nil {
			return dir, nil
		}
	}
	return "", fmt.Errorf("%s is not a git repository", dir)
}

// resolveLocal resolves a ref of a local repository: HEAD for "", a full
// ref name, a branch, a tag, a remote-tracking branch, or a full commit
// hash.
func resolveLocal(st *filesystem.Storage, ref string) (plumbing.Hash, string, error) {
	if ref == "" {
		r, err := storer.ResolveReference(st, plumbing.HEAD)
		if err != nil {
			return plumbing.ZeroHash, "", fmt.Errorf("%w: HEAD does not name a commit (%v): name a branch with @ref (%s)", ErrGitRef, err, storageRefs(st))
		}
		name := plumbing.HEAD.String()
		if head, err := st.Reference(plumbing.HEAD); err == nil && head.Type() == plumbing.SymbolicReference {
			name = head.Target().String()
		}
		return r.Hash(), name, nil
	}
	for _, n := range []string{ref, "refs/heads/" + ref, "refs/tags/" + ref, "refs/remotes/" + ref} {
		if r, err := storer.ResolveReference(st, plumbing.ReferenceName(n)); err == nil {
			return r.Hash(), n, nil
		}
	}
	if plumbing.IsHash(ref) && st.HasEncodedObject(plumbing.NewHash(ref)) == nil {
		return plumbing.NewHash(ref), ref, nil
	}
	return plumbing.ZeroHash, "", fmt.Errorf("%w %q (%s)", ErrGitRef, ref, storageRefs(st))
}

// storageRefs names a repository's branches and tags, for an unknown-ref
// message.
func storageRefs(st *filesystem.Storage) string {
	var names []string
	if it, err := st.IterReferences(); err == nil {
		_ = it.ForEach(func(r *plumbing.Reference) error {
			if r.Name().IsBranch() || r.Name().IsTag() {
				names = append(names, r.Name().Short())
			}
			return nil
		})
	}
	return refList(names)
}

func refList(names []string) string {
	if len(names) == 0 {
		return "the repository has no branches or tags"
	}
	sort.Strings(names)
	return "it has " + nameList(names, 8)
}

// selectFiles lists the documents of the snapshot's tree under g.Path, in
// path order; other files go to rep.Unsupported, symlinks and submodules to
// rep.Links (they are never followed).
func selectFiles(snap gitSnapshot, g gitSource, code bool, rep *SourceReport) ([]gitFile, error) {
	tree, err := snap.commit.Tree()
	if err != nil {
		return nil, fmt.Errorf("read the tree of %s: %w", shortHash(snap.commit.Hash.String()), err)
	}
	walkFrom, prefix := tree, ""
	if g.Path != "" && !isGlob(g.Path) {
		e, err := tree.FindEntry(g.Path)
		if err != nil {
			return nil, fmt.Errorf("%w %s at %s (%s)", ErrGitPath, g.Path, shortHash(snap.commit.Hash.String()), topLevel(tree))
		}
		if e.Mode != filemode.Dir {
			f, ok := classify(g.Path, *e, code, rep)
			if !ok {
				return nil, nil
			}
			return []gitFile{f}, nil
		}
		if walkFrom, err = tree.Tree(g.Path); err != nil {
			return nil, fmt.Errorf("%w %s: %v", ErrGitPath, g.Path, err)
		}
		prefix = g.Path + "/"
	}
	var out []gitFile
	w := object.NewTreeWalker(walkFrom, true, nil)
	defer w.Close()
	for {
		name, e, err := w.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("walk the tree: %w", err)
		}
		p := prefix + name
		if e.Mode == filemode.Dir || hiddenPath(p) || !pathSelected(g.Path, p) {
			continue
		}
		if f, ok := classify(p, e, code, rep); ok {
			out = append(out, f)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	// The blobs' sizes, for the limits (a tree entry has none).
	for i := range out {
		if sz, err := snap.st.EncodedObjectSize(out[i].Blob); err == nil {
			out[i].Size = sz
		} else {
			return nil, fmt.Errorf("%s: blob %s: %w", out[i].Path, shortHash(out[i].Blob.String()), err)
		}
	}
	return out, nil
}

// classify decides whether a tree entry is gathered.
func classify(p string, e object.TreeEntry, code bool, rep *SourceReport) (gitFile, bool) {
	switch e.Mode {
	case filemode.Symlink, filemode.Submodule:
		rep.Links = append(rep.Links, SkippedLink{Link: p, Target: "(a git " + modeName(e.Mode) + ", not followed)"})
		return gitFile{}, false
	}
	ext := strings.ToLower(path.Ext(p))
	switch {
	case convertibleExt[ext] != "":
		return gitFile{Path: p, Blob: e.Hash}, true
	case code && codeExt[ext]:
		return gitFile{Path: p, Blob: e.Hash, Code: true}, true
	}
	rep.Unsupported = append(rep.Unsupported, p)
	return gitFile{}, false
}

func modeName(m filemode.FileMode) string {
	if m == filemode.Submodule {
		return "submodule"
	}
	return "symlink"
}

func hiddenPath(p string) bool {
	for _, seg := range strings.Split(p, "/") {
		if strings.HasPrefix(seg, ".") {
			return true
		}
	}
	return false
}

// topLevel names the entries at the top of a tree, for a no-such-path
// message.
func topLevel(t *object.Tree) string {
	var names []string
	for _, e := range t.Entries {
		n := e.Name
		if e.Mode == filemode.Dir {
			n += "/"
		}
		names = append(names, n)
	}
	if len(names) == 0 {
		return "the tree is empty"
	}
	return "the top level holds " + nameList(names, 10)
}

func shortHash(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

// checkout writes the selected files' blobs under dir (each file
// atomically, only when its content differs from the blob) and removes
// the files no longer selected. Files over maxBytes are not written. It
// returns the local path of every written file by its repository path.
func checkout(ctx context.Context, st storer.EncodedObjectStorer, files []gitFile, dir string, maxBytes int64) (map[string]string, error) {
	paths := make(map[string]string, len(files))
	for _, f := range files {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if f.Size > maxBytes {
			continue
		}
		dst := filepath.Join(dir, filepath.FromSlash(f.Path))
		if r, err := filepath.Rel(dir, dst); err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
			return nil, fmt.Errorf("path %q leaves the repository", f.Path)
		}
		paths[f.Path] = dst
		if blobHashOf(dst) == f.Blob {
			continue
		}
		blob, err := object.GetBlob(st, f.Blob)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f.Path, err)
		}
		rd, err := blob.Reader()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f.Path, err)
		}
		data, err := io.ReadAll(io.LimitReader(rd, maxBytes+1))
		rd.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f.Path, err)
		}
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return nil, err
		}
		if err := atomicfile.WriteFile(dst, data, 0o644); err != nil {
			return nil, err
		}
	}
	// Files of an earlier checkout that are no longer selected.
	want := make(map[string]bool, len(paths))
	for _, p := range paths {
		want[p] = true
	}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if !d.IsDir() && !want[p] {
			return os.Remove(p)
		}
		return nil
	})
	return paths, err
}

// blobHashOf is the git blob hash of the file at p, or the zero hash.
func blobHashOf(p string) plumbing.Hash {
	data, err := os.ReadFile(p)
	if err != nil {
		return plumbing.ZeroHash
	}
	return plumbing.ComputeHash(plumbing.BlobObject, data)
}

// gitError turns a transport failure into one of the package's errors with
// what to do next.
func gitError(repo string, err error) error {
	var ne net.Error
	var oe *net.OpError
	var de *net.DNSError
	switch {
	case errors.As(err, &de), errors.As(err, &oe):
		return fmt.Errorf("%w: %v (check the network, or clone it yourself and use git+file:///path/to/clone)", ErrGitUnreachable, err)
	case errors.As(err, &ne) && ne.Timeout():
		return fmt.Errorf("%w: %v (curate.git_timeout)", ErrGitUnreachable, err)
	}
	return err
}

// gitLockFor returns the lock's record of a listed git source and fills
// rep.Git with what moved since the old lock: the commit read now, or,
// when the source gave nothing this time, the old record (its copies are
// carried as they were).
func gitLockFor(src string, rep *SourceReport, old Lock, sc []candidate) []GitSource {
	if !isGitSource(strings.TrimSpace(src)) {
		return nil
	}
	var prev *GitSource
	for i := range old.Git {
		if old.Git[i].Source == src {
			prev = &old.Git[i]
		}
	}
	if rep.gitLock == nil {
		if prev != nil && len(rep.Carried) > 0 {
			return []GitSource{*prev}
		}
		return nil
	}
	if prev != nil {
		rep.Git.Previous = prev.Commit
	}
	before := map[string]string{} // path -> blob
	for _, e := range old.Sources {
		if e.Provenance.Blob != "" && Owns("", src, e.Origin) {
			before[e.Provenance.Path] = e.Provenance.Blob
		}
	}
	now := map[string]bool{}
	for _, c := range sc {
		p := c.prov.Path
		now[p] = true
		switch b, ok := before[p]; {
		case !ok:
			rep.Git.Added = append(rep.Git.Added, p)
		case b != c.prov.Blob:
			rep.Git.Changed = append(rep.Git.Changed, p)
		}
	}
	for p := range before {
		if !now[p] {
			rep.Git.Removed = append(rep.Git.Removed, p)
		}
	}
	sort.Strings(rep.Git.Removed)
	return []GitSource{*rep.gitLock}
}
