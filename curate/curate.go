package curate

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/vibelife/vibe/internal/atomicfile"
)

// Sentinel errors.
var (
	// ErrNoCurateFile: the theme has no curate.yaml.
	ErrNoCurateFile = errors.New("curate: no curate.yaml")
	// ErrNothingToGather: no sources listed and none in source/.
	ErrNothingToGather = errors.New("curate: nothing to gather")
	// ErrDownload: a URL could not be fetched.
	ErrDownload = errors.New("download error")
	// ErrNoFiles: a listed directory or glob holds no file of a gathered
	// type (it may be empty, or an unmounted disk).
	ErrNoFiles = errors.New("nothing to gather")
	// ErrTooLarge: a download exceeded curate.max_download_bytes.
	ErrTooLarge = errors.New("too large")
)

// LockName is the lock file's name inside source/.
const LockName = "sources.lock.json"

// DroppedDir is where, inside source/, curate moves dropped files that a user
// put into source/ by hand (hidden, so convert skips it).
const DroppedDir = ".dropped"

// DefaultNearDuplicate is the estimated Jaccard similarity of 5-rune shingles
// at or above which two texts are the same work (see [Options.NearDuplicate]).
const DefaultNearDuplicate = 0.8

// ExtractFunc returns the plain text of the document at path.
type ExtractFunc func(ctx context.Context, path string) (string, error)

// Options configure [Run].
type Options struct {
	// Root is the workspace root; relative sources are resolved against it.
	Root string
	// SourceDir is knowledge/<theme>/source/.
	SourceDir string
	// Sources are the entries to gather, in order. Files a user put into
	// SourceDir by hand (not stored there by an earlier run for another
	// origin) are gathered too, after them, and are never overwritten.
	Sources []Spec
	// Language is the wanted language (see [File.Language]).
	Language string

	MinChars         int
	MaxGarbledRatio  float64
	NearDuplicate    float64
	MaxDownloadBytes int64
	// MaxFileBytes bounds a local file (a listed file or directory's, a
	// hand-placed one): a larger one is dropped, its size named, without
	// being read (convert.max_file_bytes, which the converter would refuse
	// it by anyway; default 512 MiB).
	MaxFileBytes    int64
	DownloadTimeout time.Duration
	MaxRedirects    int
	// MaxRepoBytes bounds a git source: the bytes a fetch may transfer and
	// the size of the documents it selects (curate.max_repo_bytes).
	MaxRepoBytes int64
	// MaxRepoFiles bounds the files a git source may select
	// (curate.max_repo_files).
	MaxRepoFiles int
	// GitTimeout bounds one fetch of a remote repository.
	GitTimeout time.Duration
	// GitCacheDir keeps the fetched objects of remote repositories and the
	// documents checked out of every git source (default
	// <Root>/.vibe/cache/git).
	GitCacheDir string

	// Extract returns a document's text for the quality checks and the
	// near-duplicate test. When nil, text files are read as UTF-8 and other
	// formats skip those checks.
	Extract ExtractFunc
	// ExtractDoc, when set, is used instead of Extract: it returns the
	// converter's notes with the text, for the credibility grade.
	ExtractDoc ExtractDocFunc
	// Judge, when set, grades each kept source with a model (see
	// [Credibility.Judged]); JudgeNote says why there is none otherwise
	// (e.g. "offline: no model configured").
	Judge     JudgeFunc
	JudgeNote string
	// JudgeVersion names the judge's prompt and model; cached judgements
	// of another version are not used.
	JudgeVersion string
	// CredibilityFloor keeps out sources graded below it (A, B, C, D);
	// empty keeps every grade.
	CredibilityFloor string
	// HTTPClient fetches URLs; nil means a default client.
	HTTPClient *http.Client
	// Now gives gathered_at; nil means time.Now.
	Now func() time.Time
	// CacheDir, when set, keeps what Extract found out about each text
	// (size, garbled share, script, MinHash sketch) by sha256, so a re-run
	// does not extract unchanged sources again.
	CacheDir string
	// ExtractVersion names the extractor's version (e.g. the converter
	// version); cached measurements made by another version are not used.
	ExtractVersion string
	// Lasting reports whether an extraction error would come back for the
	// same bytes (the conversion took too long or needed too much memory).
	// With CacheDir set, such a failure is remembered by the file's sha256
	// (and ExtractVersion): later runs drop the file with the same reason
	// without extracting it again, until its bytes change or RetryFailed.
	Lasting func(error) bool
	// RetryFailed extracts the files whose failure is remembered again
	// (vibe build / vibe curate --retry-failed).
	RetryFailed bool
	// Progress, when set, is called after each candidate is judged.
	Progress func(done, total int, e Entry)
	// OnError, when set, is called for each source that could not be read or
	// downloaded (the entry is recorded as dropped with Failed set). Returning
	// nil goes on; returning an error aborts the run with it.
	OnError func(origin string, err error) error

	// afterCopy, in tests, is called after each copy into source/.
	afterCopy func()
	// cacheUsed gathers the names of the CacheDir entries a run reads or
	// writes (pruneCache).
	cacheUsed map[string]bool
}

func (o *Options) applyDefaults() {
	if o.MinChars == 0 {
		o.MinChars = 200
	}
	if o.MaxGarbledRatio == 0 {
		o.MaxGarbledRatio = 0.2
	}
	if o.NearDuplicate == 0 {
		o.NearDuplicate = DefaultNearDuplicate
	}
	if o.MaxDownloadBytes == 0 {
		o.MaxDownloadBytes = 100 << 20
	}
	if o.MaxFileBytes <= 0 {
		o.MaxFileBytes = DefaultMaxFileBytes
	}
	if o.DownloadTimeout == 0 {
		o.DownloadTimeout = 60 * time.Second
	}
	if o.MaxRedirects == 0 {
		o.MaxRedirects = 5
	}
	if o.MaxRepoBytes == 0 {
		o.MaxRepoBytes = 500 << 20
	}
	if o.MaxRepoFiles == 0 {
		o.MaxRepoFiles = 2000
	}
	if o.GitTimeout == 0 {
		o.GitTimeout = 5 * time.Minute
	}
	if o.Now == nil {
		o.Now = time.Now
	}
}

// Result is what [Run] did.
type Result struct {
	// Lock is the new lock, one entry per candidate source, in gathering order.
	Lock Lock
	// Changed is false when nothing was written or removed.
	Changed bool
	// CachePruned is how many entries of CacheDir no theme's last run used
	// were removed (pruneCache).
	CachePruned int
	// Removed lists files deleted from source/ because no source names them
	// any more.
	Removed []string
	// MovedAside lists dropped hand-placed files moved to source/.dropped/.
	MovedAside []string
	// Adopted lists files found in source/ that an earlier, interrupted run
	// copied there (named in its journal, or holding exactly the bytes of
	// the origin curate would copy under that name): they are curate's own
	// copies, not files put there by hand.
	Adopted []string
	// Sources reports on each listed source, in order.
	Sources []SourceReport
	// HandLinks lists symlinks in source/ itself that leave it; they are
	// skipped.
	HandLinks []SkippedLink
	// Restored lists copies in source/ that differed from their unchanged
	// origin (edited by hand) and were put back from it.
	Restored []Restored
}

// SourceReport is what [Run] found for one listed source.
type SourceReport struct {
	// Source is the entry as listed.
	Source string
	// Err is set when the source as a whole gave nothing: missing,
	// unreadable, a failed download, or a directory or glob without a
	// single PDF, EPUB, DOCX, HTML, TXT or Markdown file (an unmounted disk
	// looks like an empty directory). It is recorded as a failed entry too.
	Err error
	// Kept counts the kept entries that came from this source.
	Kept int
	// Carried lists the stored files of earlier runs that were kept because
	// the source gave nothing this time (their lock entries are kept as they
	// were): a source that disappears never deletes its copies.
	Carried []string
	// Unsupported lists the files of a directory or glob that are not of a
	// gathered type (.png, .xlsx, ...), relative to the directory or the
	// glob's base.
	Unsupported []string
	// Links lists symlinks that were skipped because they leave the source
	// (or are dangling, or name a directory); for a git source, its
	// symlinks and submodules, which are never followed.
	Links []SkippedLink
	// Git is set for a git source that was read: the commit gathered and
	// what changed since the lock's.
	Git *GitChange

	gitLock *GitSource
}

// SkippedLink is a symlink curate did not follow.
type SkippedLink struct {
	Link   string // the link's path
	Target string // where it points
}

// Restored is a copy in source/ that was edited by hand and put back from
// its origin.
type Restored struct {
	File   string
	Origin string
}

// Kept counts kept entries.
func (r Result) Kept() int { return r.count(func(e Entry) bool { return e.Status == StatusKept }) }

// Dropped counts dropped entries.
func (r Result) Dropped() int {
	return r.count(func(e Entry) bool { return e.Status == StatusDropped })
}

// SourceErrors lists the listed sources that failed as a whole (missing,
// unreadable, failed download, nothing to gather), copies kept or not.
func (r Result) SourceErrors() []SourceReport {
	var out []SourceReport
	for _, s := range r.Sources {
		if s.Err != nil {
			out = append(out, s)
		}
	}
	return out
}

// Failed counts entries dropped because of an error.
func (r Result) Failed() int { return r.count(func(e Entry) bool { return e.Failed }) }

func (r Result) count(f func(Entry) bool) int {
	n := 0
	for _, e := range r.Lock.Sources {
		if f(e) {
			n++
		}
	}
	return n
}

// candidate is one file to judge.
type candidate struct {
	origin string
	notes  string
	name   string // preferred stored name
	path   string // local file, or "" for downloaded data
	data   []byte
	err    error
	// inPlace marks a file found in source/ itself.
	inPlace bool
	// carried is the earlier entry kept as it was because its source gave
	// nothing this time.
	carried *Entry
	// spec is the index of the listed source it came from in
	// Result.Sources, or -1 for a file found in source/.
	spec int
	// prov is recorded as the entry's provenance.
	prov Provenance
}

// Run gathers opts.Sources into opts.SourceDir, writes sources.lock.json and
// removes files no source names any more. Per-source problems (missing file,
// download error, unreadable document) are recorded as dropped entries with
// Failed set, never returned; the returned error is for the stage as a whole
// (unwritable source/, bad lock file, cancelled context). A re-run with
// nothing changed writes nothing and returns Changed false.
func Run(ctx context.Context, opts Options) (Result, error) {
	opts.applyDefaults()
	opts.cacheUsed = map[string]bool{}
	var res Result
	lockPath := filepath.Join(opts.SourceDir, LockName)
	old, err := ReadLock(lockPath)
	if err != nil {
		return res, err
	}
	// Temporary files of a run killed mid-copy.
	if _, err := atomicfile.RemoveTemps(opts.SourceDir); err != nil {
		return res, fmt.Errorf("curate: %w", err)
	}
	journalPath := filepath.Join(opts.SourceDir, JournalName)
	jour, err := readJournal(journalPath)
	if err != nil {
		return res, err
	}
	specs := opts.Sources
	// Files put into source/ by hand are sources too, unless curate stored
	// them for an origin elsewhere (those go when their origin goes). Copies
	// an interrupted run journaled are curate's own too.
	srcPrefix := relTo(opts.Root, opts.SourceDir) + "/"
	owned := map[string]bool{}
	for _, e := range old.Sources {
		if e.File != "" && !strings.HasPrefix(e.Origin, srcPrefix) {
			owned[e.File] = true
		}
	}
	planned := map[string]string{} // origin -> file, from the journal
	for _, c := range jour.Copies {
		if c.File != "" && !owned[c.File] {
			owned[c.File] = true
			planned[c.Origin] = c.File
		}
	}
	hand, handLinks, err := handPlaced(opts.Root, opts.SourceDir, owned)
	res.HandLinks = handLinks
	if err != nil {
		return res, err
	}
	// The bytes of each hand-placed file, to recognise a copy an interrupted
	// run made before it journaled (or before journals existed).
	handSHA := map[string]string{}
	for _, h := range hand {
		if data, err := readLocal(filepath.Join(opts.Root, filepath.FromSlash(h.Source)), opts.MaxFileBytes); err == nil {
			sum := sha256.Sum256(data)
			handSHA[path.Base(h.Source)] = hex.EncodeToString(sum[:])
		}
	}
	adopted := map[string]bool{}
	if len(specs) == 0 && len(hand) == 0 && len(old.Sources) == 0 {
		// (With a lock, the run goes on: the last source was unlisted and
		// its copies go.)
		return res, ErrNothingToGather
	}
	if err := os.MkdirAll(opts.SourceDir, 0o755); err != nil {
		return res, fmt.Errorf("curate: %w", err)
	}
	prev := map[string]Entry{}
	for _, e := range old.Sources {
		prev[e.Origin] = e
	}

	var cands []candidate
	seenOrigin := map[string]bool{}
	for _, s := range specs {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		rep := SourceReport{Source: s.Source}
		sc := expand(ctx, &opts, s, &rep)
		if rep.Err != nil {
			// The source is missing, empty or failed as a whole: keep the
			// copies earlier runs made of it, as they were.
			for _, e := range old.Sources {
				if e.Status != StatusKept || e.File == "" || seenOrigin[e.Origin] || !Owns(opts.Root, s.Source, e.Origin) {
					continue
				}
				if _, err := os.Stat(filepath.Join(opts.SourceDir, e.File)); err != nil {
					continue
				}
				e := e
				if len(sc) > 0 && sc[0].carried == nil && e.Origin == sc[0].origin {
					// A URL (or file) that failed: its earlier entry stands
					// in for the failure; rep.Err still reports it.
					sc = sc[1:]
				}
				sc = append(sc, candidate{origin: e.Origin, carried: &e})
				rep.Carried = append(rep.Carried, e.File)
			}
		}
		res.Lock.Git = append(res.Lock.Git, gitLockFor(s.Source, &rep, old, sc)...)
		res.Sources = append(res.Sources, rep)
		for _, c := range sc {
			if seenOrigin[c.origin] {
				continue
			}
			seenOrigin[c.origin] = true
			c.spec = len(res.Sources) - 1
			cands = append(cands, c)
		}
	}

	for _, h := range hand {
		if !seenOrigin[h.Source] {
			seenOrigin[h.Source] = true
			p := filepath.Join(opts.Root, filepath.FromSlash(h.Source))
			cands = append(cands, candidate{origin: h.Source, name: filepath.Base(p), path: p, inPlace: true, spec: -1})
		}
	}

	now := opts.Now().UTC().Truncate(time.Second)
	type keptDoc struct {
		origin string
		sig    signature
	}
	var kept []keptDoc
	near := newBandIndex(opts.NearDuplicate)
	bySHA := map[string]string{}
	usedNames := map[string]bool{LockName: true}
	// Reserve the names unchanged kept entries already have, so names are
	// stable across runs.
	for _, c := range cands {
		if p, ok := prev[c.origin]; ok && p.Status == StatusKept && p.File != "" {
			usedNames[p.File] = true
		} else if f := planned[c.origin]; f != "" {
			usedNames[f] = true
		}
		if c.inPlace {
			// Never overwrite a file the user put there.
			usedNames[c.name] = true
		}
	}
	var entries []Entry
	gr := newGrader(&opts)
	copies := &copyPlan{}
	keepFiles := map[string]bool{}
	handDropped := map[string]bool{}
	for _, c := range cands {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		if c.inPlace && adopted[c.name] {
			// An earlier run's copy for a listed origin, not the user's file.
			continue
		}
		if c.carried != nil {
			e := *c.carried
			keepFiles[e.File] = true
			usedNames[e.File] = true
			if bySHA[e.SHA256] == "" {
				bySHA[e.SHA256] = e.Origin
			}
			entries = append(entries, e)
			res.Sources[c.spec].Kept++
			if opts.Progress != nil {
				opts.Progress(len(entries), len(cands), e)
			}
			continue
		}
		e := Entry{Origin: c.origin, Notes: c.notes, GatheredAt: now, Provenance: c.prov}
		drop := func(failed bool, format string, args ...any) {
			e.Status, e.Reason, e.Failed, e.File = StatusDropped, fmt.Sprintf(format, args...), failed, ""
		}
		data := c.data
		if c.err == nil && data == nil {
			data, c.err = readLocal(c.path, opts.MaxFileBytes)
		}
		switch {
		case errors.Is(c.err, ErrTooLarge):
			drop(true, "%v", c.err) // the error already starts "too large: "
		case errors.Is(c.err, ErrDownload), errors.Is(c.err, ErrNoFiles):
			drop(true, "%v", c.err)
		case c.err != nil:
			drop(true, "unreadable: %v", c.err)
		}
		if e.Status == "" {
			sum := sha256.Sum256(data)
			e.SHA256 = hex.EncodeToString(sum[:])
			e.Size = int64(len(data))
			ext := sniff(data, c.name)
			e.MediaType = mediaTypes[ext]
			// The name this origin had, was about to get (journal), or has
			// as a leftover copy with its exact bytes.
			adopt := ""
			if p, ok := prev[c.origin]; !c.inPlace && ext != "" && (!ok || p.File == "") {
				if f := planned[c.origin]; f != "" && strings.EqualFold(path.Ext(f), ext) {
					adopt = f
				} else if n := storedName(c.name, ext); handSHA[n] == e.SHA256 && !adopted[n] {
					adopt = n
					adopted[n] = true
					res.Adopted = append(res.Adopted, n)
				}
			}
			switch {
			case len(data) == 0:
				drop(false, "empty file")
			case ext == "":
				drop(false, "unsupported type (not PDF, EPUB, DOCX, HTML, TXT or Markdown)")
			case bySHA[e.SHA256] != "":
				drop(false, "duplicate of %s", bySHA[e.SHA256])
			}
			if e.Status == "" {
				bySHA[e.SHA256] = c.origin
				e.File = storedName(c.name, ext)
				if p, ok := prev[c.origin]; ok && p.Status == StatusKept && p.File != "" && strings.EqualFold(path.Ext(p.File), ext) {
					e.File = p.File
				} else if adopt != "" {
					e.File = adopt
				} else if c.inPlace && e.File == c.name {
					// Already in place under its own name.
				} else {
					e.File = uniqueName(e.File, usedNames)
				}
				info, text, hasText, terr := textInfoFor(ctx, &opts, c, data, ext, e.SHA256)
				if terr != nil {
					drop(true, "unreadable: %v", terr)
					c.err = terr
				}
				var sig signature
				hasSig := false
				if e.Status == "" && hasText {
					st := info.textStats
					switch {
					case st.chars < opts.MinChars:
						drop(false, "too little text (%d characters, curate.min_chars is %d)", st.chars, opts.MinChars)
					case st.garbled > opts.MaxGarbledRatio:
						drop(false, "garbled (%.0f%% replacement or control characters, curate.max_garbled_ratio is %.0f%%)", 100*st.garbled, 100*opts.MaxGarbledRatio)
					case !languageOK(opts.Language, st.script):
						drop(false, "wrong language (detected %s, wanted %s)", st.script, opts.Language)
					}
					if e.Status == "" {
						sig, hasSig = info.Sig, info.HasSig
						// The first kept source alike enough, found among
						// the candidates the bands give (every one that
						// qualifies is among them: candidates.go).
						first := int32(-1)
						if hasSig {
							near.candidates(&sig, func(id int32) {
								if (first < 0 || id < first) && similarity(sig, kept[id].sig) >= opts.NearDuplicate {
									first = id
								}
							})
						}
						if first >= 0 {
							k := kept[first]
							drop(false, nearDuplicatePrefix+"%s (%.0f%% similar text)", k.origin, 100*similarity(sig, k.sig))
							// Another edition: a witness for the others' agreement.
							gr.add(len(entries), true, c, data, ext, e.SHA256, info, text, true)
						}
					}
				}
				if e.Status == "" {
					e.Status = StatusKept
					usedNames[e.File] = true
					keepFiles[e.File] = true
					if hasSig {
						near.add(int32(len(kept)), &sig)
					}
					kept = append(kept, keptDoc{origin: c.origin, sig: sig})
					e.Provenance = withWorkMeta(withFrontMatter(e.Provenance, data, ext), info.Meta)
					gr.add(len(entries), false, c, data, ext, e.SHA256, info, text, hasText)
					if !c.inPlace {
						// Copied once graded: a source the credibility
						// floor keeps out is never copied.
						copies.plan(len(entries), c, data, e)
					}
				}
			}
		}
		if p, ok := prev[c.origin]; ok && sameEntry(p, e) {
			e.GatheredAt = p.GatheredAt
		}
		if c.inPlace && e.Status == StatusDropped {
			handDropped[c.name] = true
		}
		if e.Status == StatusKept && c.spec >= 0 {
			res.Sources[c.spec].Kept++
		}
		entries = append(entries, e)
		if opts.Progress != nil {
			opts.Progress(len(entries), len(cands), e)
		}
		if e.Failed && opts.OnError != nil {
			err := c.err
			if err == nil {
				err = errors.New(e.Reason)
			}
			if err := opts.OnError(c.origin, err); err != nil {
				return res, err
			}
		}
	}

	// Grade what was kept; keep out what falls below the floor.
	out, promote, err := gr.grade(ctx, entries, res.Lock.Git)
	if err != nil {
		return res, err
	}
	countKept := func(origin string, d int) {
		for si := range res.Sources {
			if Owns(opts.Root, res.Sources[si].Source, origin) {
				res.Sources[si].Kept += d
				return
			}
		}
	}
	for _, i := range out {
		e := &entries[i]
		delete(keepFiles, e.File)
		if strings.HasPrefix(e.Origin, srcPrefix) {
			handDropped[e.File] = true
		}
		countKept(e.Origin, -1)
		e.Status, e.File = StatusDropped, ""
	}
	for _, i := range promote {
		e, it := &entries[i], gr.item(i)
		e.Status, e.Reason, e.File = StatusKept, "", it.c.name
		if it.c.inPlace {
			delete(handDropped, e.File)
		} else {
			e.File = uniqueName(storedName(it.c.name, it.ext), usedNames)
			if p, ok := prev[e.Origin]; ok && p.Status == StatusKept && p.File != "" && strings.EqualFold(path.Ext(p.File), it.ext) {
				e.File = p.File
			}
			copies.plan(i, it.c, it.data, *e)
		}
		usedNames[e.File], keepFiles[e.File] = true, true
		if p, ok := prev[e.Origin]; ok && sameEntry(p, *e) {
			e.GatheredAt = p.GatheredAt
		}
		countKept(e.Origin, +1)
	}
	for _, pc := range copies.list {
		if entries[pc.entry].Status != StatusKept {
			continue
		}
		if err := ctx.Err(); err != nil {
			return res, err
		}
		wrote, restored, err := pc.copy(&opts, prev, &jour, journalPath)
		if err != nil {
			return res, err
		}
		if wrote && opts.afterCopy != nil {
			opts.afterCopy()
		}
		if restored {
			res.Restored = append(res.Restored, Restored{File: pc.file, Origin: pc.origin})
		}
		res.Changed = res.Changed || wrote
	}

	// Remove what no source names any more. A dropped file the user put
	// into source/ is moved aside to source/.dropped/ rather than deleted.
	// A link the user put there is left alone, though not followed.
	skippedLink := map[string]bool{}
	for _, l := range res.HandLinks {
		skippedLink[filepath.Base(l.Link)] = true
	}
	dirents, err := os.ReadDir(opts.SourceDir)
	if err != nil {
		return res, fmt.Errorf("curate: %w", err)
	}
	for _, d := range dirents {
		name := d.Name()
		if d.IsDir() || name == LockName || strings.HasPrefix(name, ".") || keepFiles[name] || skippedLink[name] {
			continue
		}
		if handDropped[name] {
			aside := filepath.Join(opts.SourceDir, DroppedDir)
			if err := os.MkdirAll(aside, 0o755); err != nil {
				return res, fmt.Errorf("curate: %w", err)
			}
			if err := os.Rename(filepath.Join(opts.SourceDir, name), filepath.Join(aside, name)); err != nil {
				return res, fmt.Errorf("curate: %w", err)
			}
			res.MovedAside = append(res.MovedAside, name)
			res.Changed = true
			continue
		}
		if err := os.Remove(filepath.Join(opts.SourceDir, name)); err != nil {
			return res, fmt.Errorf("curate: %w", err)
		}
		res.Removed = append(res.Removed, name)
		res.Changed = true
	}

	res.Lock = Lock{Version: 1, Sources: entries, Git: res.Lock.Git}
	wrote, err := WriteLock(lockPath, res.Lock)
	if err != nil {
		return res, err
	}
	res.Changed = res.Changed || wrote
	// The lock now names every copy: the journal has done its work.
	if err := os.Remove(journalPath); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return res, fmt.Errorf("curate: %w", err)
	}
	res.CachePruned = pruneCache(&opts)
	return res, nil
}

// copyPlan holds the copies into source/ a run makes once its sources are
// graded. The bytes of a copy are held in memory within a budget; past it
// the origin is read again and must still hold the bytes judged.
type copyPlan struct {
	list   []plannedCopy
	budget int
}

type plannedCopy struct {
	entry             int
	origin, file, sha string
	dst, path         string
	data              []byte
	exists, wasStored bool
}

// copyBudget bounds the bytes held for copies; past it a copy is read
// again from its origin (a local file, so from the page cache after the
// run just read it) and checked against the sha256 judged. At 256 MiB a
// library of 3,000 books of 62 KB held all its files through the grading
// (472 MB resident); at 64 MiB the memory a run holds no longer grows with
// the library past it.
const copyBudget = 64 << 20

// plan records the copy of entry e (index i) if source/ does not already
// hold its bytes.
func (p *copyPlan) plan(i int, c candidate, data []byte, e Entry) {
	pc := plannedCopy{entry: i, origin: c.origin, file: e.File, sha: e.SHA256, path: c.path}
	if p.list == nil {
		p.budget = copyBudget
	}
	p.list = append(p.list, pc)
	last := &p.list[len(p.list)-1]
	if c.path == "" || len(data) <= p.budget {
		last.data = data
		if c.path != "" {
			p.budget -= len(data)
		}
	}
}

// copy makes a planned copy: journaled before it is made, so a kill
// between the copy and the lock cannot turn it into a hand-placed file;
// restored says it put back a copy edited by hand.
func (pc plannedCopy) copy(opts *Options, prev map[string]Entry, jour *journal, journalPath string) (wrote, restored bool, err error) {
	dst := filepath.Join(opts.SourceDir, pc.file)
	have, exists := fileSHA(dst)
	if have == pc.sha {
		return false, false, nil
	}
	data := pc.data
	if data == nil {
		if data, err = readLocal(pc.path, opts.MaxFileBytes); err != nil {
			return false, false, fmt.Errorf("curate %s: %w", pc.origin, err)
		}
		if sum := sha256.Sum256(data); hex.EncodeToString(sum[:]) != pc.sha {
			return false, false, fmt.Errorf("curate %s: it changed while curate ran: run curate again", pc.origin)
		}
	}
	if err := jour.add(journalPath, journalCopy{Origin: pc.origin, File: pc.file, SHA256: pc.sha}); err != nil {
		return false, false, fmt.Errorf("curate %s: %w", pc.origin, err)
	}
	if p, ok := prev[pc.origin]; exists && ok && p.Status == StatusKept && p.File == pc.file && p.SHA256 == pc.sha {
		restored = true
	}
	if err := atomicfile.WriteFile(dst, data, 0o644); err != nil {
		return false, false, fmt.Errorf("curate %s: %w", pc.origin, err)
	}
	return true, restored, nil
}

// sameEntry compares two entries ignoring gathered_at and the credibility
// (which moves with the other sources).
func sameEntry(a, b Entry) bool {
	a.GatheredAt, b.GatheredAt = time.Time{}, time.Time{}
	a.Credibility, b.Credibility = nil, nil
	return a == b
}

// DefaultMaxFileBytes is Options.MaxFileBytes's default, convert's.
const DefaultMaxFileBytes = 512 << 20

// readLocal reads a local source file of at most max bytes: its size is
// checked before a byte is read (a 1 GB sparse file costs a stat, not
// 1 GB of memory), and the read stops past max should it grow meanwhile.
// A larger file is ErrTooLarge naming both sizes; a file that is not a
// regular one (a FIFO, a device) is refused, not read.
func readLocal(p string, max int64) ([]byte, error) {
	st, err := os.Stat(p)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file (%s)", filepath.Base(p), st.Mode().Type())
	}
	if st.Size() > max {
		return nil, tooLargeFile(st.Size(), max)
	}
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, tooLargeFile(int64(len(data)), max)
	}
	return data, nil
}

func tooLargeFile(size, max int64) error {
	return fmt.Errorf("%w: %s (%d bytes) is over convert.max_file_bytes (%s): raise it in vibe.yaml if the file is genuine, or remove it", ErrTooLarge, sizeText(size), size, sizeText(max))
}

// sizeText is a size for people: 1.0 GiB, 512 MiB, 300 KiB, 12 bytes.
func sizeText(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}

// fileSHA returns the hex sha256 of the file at p and whether it could be
// read.
func fileSHA(p string) (string, bool) {
	old, err := os.ReadFile(p)
	if err != nil {
		return "", false
	}
	h := sha256.Sum256(old)
	return hex.EncodeToString(h[:]), true
}

// extractDoc returns a candidate's text (and the converter's notes) with
// opts.ExtractDoc or opts.Extract; without either, text files are read as
// UTF-8 and other formats have no text.
func extractDoc(ctx context.Context, opts *Options, c candidate, data []byte, ext string) (Extracted, bool, error) {
	if opts.ExtractDoc == nil && opts.Extract == nil {
		if data == nil && c.path != "" {
			var err error
			if data, err = readLocal(c.path, opts.MaxFileBytes); err != nil {
				return Extracted{}, false, err
			}
		}
		if (ext == ".txt" || ext == ".md") && utf8Valid(data) {
			return Extracted{Text: string(data)}, true, nil
		}
		return Extracted{}, false, nil
	}
	p := c.path
	if p == "" {
		f, err := os.CreateTemp("", "vibe-curate-*"+ext)
		if err != nil {
			return Extracted{}, false, err
		}
		defer os.Remove(f.Name())
		_, werr := f.Write(data)
		cerr := f.Close()
		if werr != nil || cerr != nil {
			return Extracted{}, false, errors.Join(werr, cerr)
		}
		p = f.Name()
	}
	if opts.ExtractDoc != nil {
		x, err := opts.ExtractDoc(ctx, p)
		if err != nil {
			return Extracted{}, false, err
		}
		return x, true, nil
	}
	text, err := opts.Extract(ctx, p)
	if err != nil {
		return Extracted{}, false, err
	}
	return Extracted{Text: text}, true, nil
}

func utf8Valid(b []byte) bool { return strings.ToValidUTF8(string(b), "\uFFFD") == string(b) }

// storedName is the base name without its extension, plus the canonical
// extension of the sniffed type.
func storedName(name, ext string) string {
	base := filepath.Base(name)
	if e := filepath.Ext(base); e != "" {
		base = strings.TrimSuffix(base, e)
	}
	if base == "" || base == "." || strings.HasPrefix(base, ".") {
		base = "source" + base
	}
	return base + ext
}

// uniqueName disambiguates name against used: book.pdf, book-2.pdf, ...
func uniqueName(name string, used map[string]bool) string {
	if !used[name] {
		return name
	}
	ext := filepath.Ext(name)
	base := strings.TrimSuffix(name, ext)
	for i := 2; ; i++ {
		n := fmt.Sprintf("%s-%d%s", base, i, ext)
		if !used[n] {
			return n
		}
	}
}

// handPlaced lists the files a user put into source/ by hand, as specs,
// leaving out the lock, hidden files and the names in owned. Symlinks that
// leave source/ are skipped and returned.
func handPlaced(root, sourceDir string, owned map[string]bool) ([]Spec, []SkippedLink, error) {
	dirents, err := os.ReadDir(sourceDir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("curate: %w", err)
	}
	var specs []Spec
	var rep SourceReport
	t := newTree(sourceDir)
	for _, d := range dirents {
		if d.IsDir() || d.Name() == LockName || strings.HasPrefix(d.Name(), ".") || owned[d.Name()] {
			continue
		}
		p := filepath.Join(sourceDir, d.Name())
		if d.Type()&fs.ModeSymlink != 0 && !t.linkInside(p, &rep) {
			continue
		}
		specs = append(specs, Spec{Source: relTo(root, p)})
	}
	return specs, rep.Links, nil
}

// Owns reports whether origin (as recorded in the lock) came from the
// listed source src, relative paths taken against the workspace root: the
// same URL or file, a file under the directory, or a file matching the glob.
func Owns(root, src, origin string) bool {
	src = strings.TrimSpace(src)
	if isGitSource(src) || isGitSource(origin) {
		return gitOwns(src, origin)
	}
	if isURL(src) || isURL(origin) {
		return src == origin
	}
	p := specPath(root, src)
	o := specPath(root, filepath.FromSlash(origin))
	if isGlob(src) {
		return globMatches(p, o)
	}
	if o == p {
		return true
	}
	r, err := filepath.Rel(p, o)
	return err == nil && r != "." && !strings.HasPrefix(r, "..")
}

func relTo(root, p string) string {
	if r, err := filepath.Rel(root, p); err == nil && !strings.HasPrefix(r, "..") {
		return filepath.ToSlash(r)
	}
	return filepath.ToSlash(p)
}

// specPath resolves a non-URL source to an absolute path (~/ is the home
// directory, relative paths are relative to the workspace).
func specPath(root, src string) string {
	p := src
	if strings.HasPrefix(p, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			p = filepath.Join(home, p[2:])
		}
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(root, p)
	}
	return p
}

// isGlob reports whether a source is a glob pattern.
func isGlob(src string) bool { return strings.ContainsAny(src, "*?[") }

// supportedList names the formats curate gathers, for messages.
const supportedList = "PDF, EPUB, DOCX, HTML, TXT or Markdown"

// expand turns one spec into candidates: a URL is downloaded, a file is
// itself, a directory or glob yields its convertible, non-hidden files in
// lexical order. What it skipped (unsupported files, links leaving the
// source) goes into rep. A source that is missing, unreadable or yields no
// convertible file gives one candidate with err set.
func expand(ctx context.Context, opts *Options, s Spec, rep *SourceReport) []candidate {
	src := strings.TrimSpace(s.Source)
	fail := func(err error) []candidate {
		rep.Err = err
		return []candidate{{origin: src, notes: s.Notes, err: err}}
	}
	if isGitSource(src) {
		return expandGit(ctx, opts, s, rep)
	}
	prov := s.provenance()
	if isURL(src) {
		data, err := download(ctx, opts, src)
		name := urlBaseName(src)
		if err == nil {
			// The URL's own extension tells Markdown from plain text.
			name += sniff(data, urlPathBase(src))
		} else {
			rep.Err = err
		}
		prov.URL = src
		return []candidate{{origin: src, notes: s.Notes, name: name, data: data, err: err, prov: prov}}
	}
	p := specPath(opts.Root, src)
	if isGlob(src) {
		files, err := glob(p, rep)
		if err != nil {
			return fail(err)
		}
		if len(files) == 0 {
			return fail(noFilesError(src, "the glob matches no "+supportedList+" file", rep.Unsupported))
		}
		return fileCands(opts.Root, files, s.Notes, prov)
	}
	st, err := os.Stat(p)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			err = fmt.Errorf("%s does not exist (fix or remove it in curate.yaml)", src)
		}
		return fail(err)
	}
	if !st.IsDir() {
		return []candidate{{origin: src, notes: s.Notes, name: filepath.Base(p), path: p, prov: prov}}
	}
	tree := newTree(p)
	var files []string
	err = filepath.WalkDir(p, func(fp string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && fp != p && (fp == opts.SourceDir || fp == filepath.Join(filepath.Dir(opts.SourceDir), "converted")) {
			// Never gather the theme's own output.
			return filepath.SkipDir
		}
		if fp != p && strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(p, fp)
		if convertibleExt[strings.ToLower(filepath.Ext(fp))] == "" {
			rep.Unsupported = append(rep.Unsupported, filepath.ToSlash(rel))
			return nil
		}
		if d.Type()&fs.ModeSymlink != 0 && !tree.linkInside(fp, rep) {
			return nil
		}
		files = append(files, fp)
		return nil
	})
	if err != nil {
		return fail(err)
	}
	if len(files) == 0 {
		return fail(noFilesError(src, "the directory holds no "+supportedList+" file", rep.Unsupported))
	}
	return fileCands(opts.Root, files, s.Notes, prov)
}

// noFilesError says a directory or glob gave nothing to gather, naming the
// unsupported files it did find.
func noFilesError(src, what string, unsupported []string) error {
	msg := fmt.Sprintf("%s: %s", src, what)
	if n := len(unsupported); n > 0 {
		msg += fmt.Sprintf(" (%d unsupported: %s)", n, nameList(unsupported, 5))
	}
	return fmt.Errorf("%s: %w", msg, ErrNoFiles)
}

// nameList joins up to max names, saying how many more there are.
func nameList(names []string, max int) string {
	if len(names) <= max {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:max], ", "), len(names)-max)
}

// tree is a source directory, for telling links that stay inside it from
// links that leave it.
type tree struct {
	root string // as given
	real string // symlinks resolved
}

func newTree(root string) tree {
	real, err := filepath.EvalSymlinks(root)
	if err != nil {
		real = root
	}
	return tree{root: root, real: real}
}

// linkInside reports whether the symlink at fp resolves to a regular file
// inside the tree; a link leaving it (to /etc/passwd, say), dangling or to a
// directory is recorded in rep and skipped.
func (t tree) linkInside(fp string, rep *SourceReport) bool {
	target, err := filepath.EvalSymlinks(fp)
	if err == nil {
		if st, serr := os.Stat(target); serr == nil && st.Mode().IsRegular() {
			if r, rerr := filepath.Rel(t.real, target); rerr == nil && r != ".." && !strings.HasPrefix(r, ".."+string(filepath.Separator)) {
				return true
			}
		}
	}
	if target == "" {
		target, _ = os.Readlink(fp)
	}
	rep.Links = append(rep.Links, SkippedLink{Link: fp, Target: target})
	return false
}

func fileCands(root string, files []string, notes string, prov Provenance) []candidate {
	sort.Strings(files)
	out := make([]candidate, 0, len(files))
	for _, f := range files {
		out = append(out, candidate{origin: relTo(root, f), notes: notes, name: filepath.Base(f), path: f, prov: prov})
	}
	return out
}

// globParts splits an absolute pattern into the directory before its first
// wildcard segment and the segments from there on.
func globParts(pattern string) (base string, rest []string) {
	pattern = filepath.ToSlash(pattern)
	segs := strings.Split(pattern, "/")
	i := 0
	for i < len(segs) && !isGlob(segs[i]) {
		i++
	}
	base = strings.Join(segs[:i], "/")
	if base == "" {
		base = "/"
	}
	return base, segs[i:]
}

// globMatches reports whether the absolute path p matches pattern.
func globMatches(pattern, p string) bool {
	base, rest := globParts(pattern)
	rel, err := filepath.Rel(filepath.FromSlash(base), p)
	if err != nil || rel == "." || strings.HasPrefix(rel, "..") {
		return false
	}
	return matchSegs(rest, strings.Split(filepath.ToSlash(rel), "/"))
}

// glob matches pattern (absolute, with / or the OS separator) where a `**`
// segment matches any number of directories. Hidden files and directories
// are skipped; matching files of other types go to rep.Unsupported, links
// leaving the glob's base directory to rep.Links.
func glob(pattern string, rep *SourceReport) ([]string, error) {
	base, rest := globParts(pattern)
	for _, r := range rest {
		if _, err := path.Match(r, ""); err != nil {
			return nil, fmt.Errorf("bad glob %q: %w", pattern, err)
		}
	}
	tree := newTree(filepath.FromSlash(base))
	var out []string
	err := filepath.WalkDir(filepath.FromSlash(base), func(fp string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		rel, _ := filepath.Rel(filepath.FromSlash(base), fp)
		if rel == "." {
			return nil
		}
		if strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() || !matchSegs(rest, strings.Split(filepath.ToSlash(rel), "/")) {
			return nil
		}
		if convertibleExt[strings.ToLower(filepath.Ext(fp))] == "" {
			rep.Unsupported = append(rep.Unsupported, filepath.ToSlash(rel))
			return nil
		}
		if d.Type()&fs.ModeSymlink != 0 && !tree.linkInside(fp, rep) {
			return nil
		}
		out = append(out, fp)
		return nil
	})
	return out, err
}

func matchSegs(pat, name []string) bool {
	if len(pat) == 0 {
		return len(name) == 0
	}
	if pat[0] == "**" {
		for k := 0; k <= len(name); k++ {
			if matchSegs(pat[1:], name[k:]) {
				return true
			}
		}
		return false
	}
	if len(name) == 0 {
		return false
	}
	ok, _ := path.Match(pat[0], name[0])
	return ok && matchSegs(pat[1:], name[1:])
}
