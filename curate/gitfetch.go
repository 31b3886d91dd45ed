package curate

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync/atomic"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp/capability"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp/sideband"
	"github.com/go-git/go-git/v5/plumbing/transport"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"
	"github.com/go-git/go-git/v5/storage/filesystem"
)

// fetchedRef is the reference the cache keeps on the last commit fetched,
// so the next fetch tells the server what it has and gets only what
// changed.
const fetchedRef = plumbing.ReferenceName("refs/vibe/fetched")

// fetchRemote fetches the ref of a remote repository shallowly (depth 1)
// into the object cache at dir and resolves it to its commit. Objects the
// cache already holds are not fetched again: a moved ref brings only the
// new objects, an unmoved one nothing. The transfer is bounded by
// curate.max_repo_bytes and curate.git_timeout.
func fetchRemote(ctx context.Context, opts *Options, g gitSource, dir string) (gitSnapshot, error) {
	var snap gitSnapshot
	ctx, cancel := context.WithTimeout(ctx, opts.GitTimeout)
	defer cancel()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return snap, err
	}
	st := filesystem.NewStorage(osfs.New(dir), cache.NewObjectLRUDefault())
	ep, err := transport.NewEndpoint(g.URL)
	if err != nil {
		return snap, fmt.Errorf("bad URL %s: %w", g.URL, err)
	}
	limit := &limitedTransport{left: opts.MaxRepoBytes}
	hc := &http.Client{}
	if opts.HTTPClient != nil {
		c := *opts.HTTPClient
		hc = &c
	}
	limit.base = hc.Transport
	if limit.base == nil {
		limit.base = http.DefaultTransport
	}
	hc.Transport = limit
	sess, err := githttp.NewClient(hc).NewUploadPackSession(ep, nil)
	if err != nil {
		return snap, fmt.Errorf("%s: %w", g.URL, err)
	}
	defer sess.Close()
	ar, err := sess.AdvertisedReferencesContext(ctx)
	if err != nil {
		return snap, remoteError(ctx, opts, g, limit, err)
	}
	want, refName, err := resolveAdvertised(ar, g.Ref)
	if err != nil {
		return snap, err
	}
	if !hasObject(st, want) {
		var have *plumbing.Hash
		if r, err := st.Reference(fetchedRef); err == nil && hasObject(st, r.Hash()) {
			h := r.Hash()
			have = &h
		}
		// A moved ref: fetch what lies between the commit the cache holds
		// and the new one, without deepening. A depth-1 fetch would bring
		// the whole tree again (the server cannot tell what a shallow
		// client has), a fetch from a common commit only what changed. A
		// ref rewritten onto another history brings that history, so when
		// it passes the budget the fetch starts again at depth 1.
		err := errNoHave
		if have != nil {
			err = fetchPack(ctx, sess, ar, st, want, have, false)
			if err != nil && limit.exceeded.Load() {
				limit.reset()
				err = errNoHave
			}
		}
		if errors.Is(err, errNoHave) {
			err = fetchPack(ctx, sess, ar, st, want, nil, true)
		}
		if err != nil {
			return snap, remoteError(ctx, opts, g, limit, err)
		}
	}
	commit, err := peelCommit(st, want)
	if err != nil {
		return snap, fmt.Errorf("%s at %s: %w", refName, shortHash(want.String()), err)
	}
	if err := st.SetReference(plumbing.NewHashReference(fetchedRef, commit.Hash)); err != nil {
		return snap, err
	}
	return gitSnapshot{st: st, commit: commit, ref: refName}, nil
}

var errNoHave = errors.New("no commit in the cache")

// fetchPack asks for want (shallow: at depth 1; else from have on) and
// stores the pack.
func fetchPack(ctx context.Context, sess transport.UploadPackSession, ar *packp.AdvRefs, st *filesystem.Storage, want plumbing.Hash, have *plumbing.Hash, shallow bool) error {
	req := packp.NewUploadPackRequestFromCapabilities(ar.Capabilities)
	var err error
	if req.Shallows, err = st.Shallow(); err != nil {
		return fmt.Errorf("the cache is damaged (%v): delete .vibe/cache/git", err)
	}
	if shallow && ar.Capabilities.Supports(capability.Shallow) {
		req.Depth = packp.DepthCommits(1)
		if err := req.Capabilities.Set(capability.Shallow); err != nil {
			return err
		}
	} else if len(req.Shallows) > 0 {
		if err := req.Capabilities.Set(capability.Shallow); err != nil {
			return err
		}
	}
	if ar.Capabilities.Supports(capability.NoProgress) {
		_ = req.Capabilities.Set(capability.NoProgress)
	}
	req.Wants = []plumbing.Hash{want}
	if have != nil {
		req.Haves = []plumbing.Hash{*have}
	}
	resp, err := sess.UploadPack(ctx, req)
	if errors.Is(err, transport.ErrEmptyUploadPackRequest) {
		return nil
	}
	if err != nil {
		return err
	}
	defer resp.Close()
	if len(resp.Shallows) > 0 {
		old, _ := st.Shallow()
		if err := st.SetShallow(mergeHashes(old, resp.Shallows)); err != nil {
			return err
		}
	}
	var rd io.Reader = resp
	switch {
	case req.Capabilities.Supports(capability.Sideband64k):
		rd = sideband.NewDemuxer(sideband.Sideband64k, resp)
	case req.Capabilities.Supports(capability.Sideband):
		rd = sideband.NewDemuxer(sideband.Sideband, resp)
	}
	return packfile.UpdateObjectStorage(st, rd)
}

// resolveAdvertised finds the ref asked for among the advertised ones: the
// default branch for "", a branch, a tag, a full ref name, or a commit hash
// (fetched by hash, which GitHub and recent servers allow).
func resolveAdvertised(ar *packp.AdvRefs, ref string) (plumbing.Hash, string, error) {
	refs, err := ar.AllReferences()
	if err != nil {
		return plumbing.ZeroHash, "", err
	}
	if ref == "" {
		if ar.Head == nil {
			return plumbing.ZeroHash, "", fmt.Errorf("%w: the repository has no default branch (HEAD): name one with @ref", ErrGitRef)
		}
		name := "HEAD"
		if t := ar.Capabilities.Get(capability.SymRef); len(t) > 0 {
			for _, v := range t {
				if from, to, ok := strings.Cut(v, ":"); ok && from == "HEAD" {
					name = to
				}
			}
		}
		return *ar.Head, name, nil
	}
	for _, n := range []string{ref, "refs/heads/" + ref, "refs/tags/" + ref} {
		if r, err := refs.Reference(plumbing.ReferenceName(n)); err == nil && r.Type() == plumbing.HashReference {
			return r.Hash(), n, nil
		}
	}
	if plumbing.IsHash(ref) {
		return plumbing.NewHash(ref), ref, nil
	}
	var names []string
	if it, err := refs.IterReferences(); err == nil {
		_ = it.ForEach(func(r *plumbing.Reference) error {
			if r.Name().IsBranch() || r.Name().IsTag() {
				names = append(names, r.Name().Short())
			}
			return nil
		})
	}
	return plumbing.ZeroHash, "", fmt.Errorf("%w %q (%s)", ErrGitRef, ref, refList(names))
}

// peelCommit resolves a commit or an annotated tag to its commit.
func peelCommit(st *filesystem.Storage, h plumbing.Hash) (*object.Commit, error) {
	for range 10 {
		o, err := st.EncodedObject(plumbing.AnyObject, h)
		if err != nil {
			return nil, err
		}
		switch o.Type() {
		case plumbing.CommitObject:
			return object.DecodeCommit(st, o)
		case plumbing.TagObject:
			t, err := object.DecodeTag(st, o)
			if err != nil {
				return nil, err
			}
			h = t.Target
		default:
			return nil, fmt.Errorf("%s is a %s, not a commit", shortHash(h.String()), o.Type())
		}
	}
	return nil, errors.New("tag chain too long")
}

func hasObject(st *filesystem.Storage, h plumbing.Hash) bool {
	return st.HasEncodedObject(h) == nil
}

func mergeHashes(a, b []plumbing.Hash) []plumbing.Hash {
	seen := map[plumbing.Hash]bool{}
	var out []plumbing.Hash
	for _, h := range append(append([]plumbing.Hash(nil), a...), b...) {
		if !seen[h] {
			seen[h] = true
			out = append(out, h)
		}
	}
	return out
}

// remoteError says what went wrong with a fetch and what to do.
func remoteError(ctx context.Context, opts *Options, g gitSource, limit *limitedTransport, err error) error {
	switch {
	case limit.exceeded.Load():
		return fmt.Errorf("%w: the fetch passed curate.max_repo_bytes (%d): name a smaller repository, or raise the limit", ErrTooLarge, opts.MaxRepoBytes)
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return fmt.Errorf("%w: no complete answer within %s (curate.git_timeout)", ErrGitUnreachable, opts.GitTimeout)
	case errors.Is(err, transport.ErrAuthenticationRequired), errors.Is(err, transport.ErrAuthorizationFailed),
		errors.Is(err, transport.ErrRepositoryNotFound), errors.Is(err, transport.ErrInvalidAuthMethod):
		return fmt.Errorf("%w (%s): vibe fetches public repositories without credentials; check the name, or clone it yourself and use git+file:///path/to/clone", ErrGitAuth, g.URL)
	case errors.Is(err, transport.ErrEmptyRemoteRepository):
		return fmt.Errorf("%w: the repository is empty", ErrGitRef)
	}
	return gitError(g.Repo, err)
}

// limitedTransport fails a fetch once the responses passed a byte budget.
type limitedTransport struct {
	base     http.RoundTripper
	left     int64
	used     atomic.Int64
	exceeded atomic.Bool
}

func (t *limitedTransport) reset() {
	t.used.Store(0)
	t.exceeded.Store(false)
}

func (t *limitedTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	resp.Body = &limitedBody{ReadCloser: resp.Body, t: t}
	return resp, nil
}

type limitedBody struct {
	io.ReadCloser
	t *limitedTransport
}

func (b *limitedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if b.t.used.Add(int64(n)) > b.t.left {
		b.t.exceeded.Store(true)
		return n, fmt.Errorf("%w: over curate.max_repo_bytes (%d)", ErrTooLarge, b.t.left)
	}
	return n, err
}
