package curate

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/vibelife/vibe/internal/atomicfile"
)

// cacheVersion changes whenever measure, sketch or inspect change what
// they compute.
const cacheVersion = 3

// textInfo is what curate keeps of a text: its statistics, sketch and the
// signals its credibility is graded on.
type textInfo struct {
	Version int `json:"version"`
	textStats
	Sig    signature `json:"sig"`
	HasSig bool      `json:"has_sig"`
	// Signals are the text's own quality signals and the converter's notes.
	Signals textSignals `json:"signals"`
	// Meta is what the file's metadata says of the work.
	Meta WorkMeta `json:"meta"`
}

// MarshalJSON/UnmarshalJSON of the embedded stats need exported fields.
type textInfoJSON struct {
	Version int         `json:"version"`
	Chars   int         `json:"chars"`
	Garbled float64     `json:"garbled"`
	Script  string      `json:"script"`
	Sig     signature   `json:"sig"`
	HasSig  bool        `json:"has_sig"`
	Signals textSignals `json:"signals"`
	Meta    WorkMeta    `json:"meta,omitempty"`
}

func (t textInfo) MarshalJSON() ([]byte, error) {
	return json.Marshal(textInfoJSON{t.Version, t.chars, t.garbled, t.script, t.Sig, t.HasSig, t.Signals, t.Meta})
}

func (t *textInfo) UnmarshalJSON(b []byte) error {
	var j textInfoJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*t = textInfo{Version: j.Version, textStats: textStats{chars: j.Chars, garbled: j.Garbled, script: j.Script}, Sig: j.Sig, HasSig: j.HasSig, Signals: j.Signals, Meta: j.Meta}
	return nil
}

// cacheKey is the file name stem of what the cache keeps for a text of
// this sha256, by extractor version.
func cacheKey(opts *Options, sum string) string {
	key := sum
	if opts.ExtractVersion != "" {
		h := sha256.Sum256([]byte(opts.ExtractVersion))
		key += "-" + hex.EncodeToString(h[:4])
	}
	return key
}

// textInfoFor extracts and measures a candidate's text, through the cache
// when opts.CacheDir is set. hasText is false when there is no extractor for
// the format (the text checks are then skipped). text is the text when it
// was extracted now, "" when the cache answered.
func textInfoFor(ctx context.Context, opts *Options, c candidate, data []byte, ext, sum string) (ti textInfo, text string, hasText bool, err error) {
	var cachePath, failPath string
	if opts.CacheDir != "" && (opts.Extract != nil || opts.ExtractDoc != nil) {
		cachePath = filepath.Join(opts.CacheDir, cacheKey(opts, sum)+".json")
		failPath = filepath.Join(opts.CacheDir, cacheKey(opts, sum)+".failed.json")
		opts.useCache(filepath.Base(cachePath))
		opts.useCache(filepath.Base(failPath))
		if b, err := os.ReadFile(cachePath); err == nil {
			var ti textInfo
			if json.Unmarshal(b, &ti) == nil && ti.Version == cacheVersion {
				return ti, "", true, nil
			}
		}
		if !opts.RetryFailed {
			var f failure
			if b, err := os.ReadFile(failPath); err == nil && json.Unmarshal(b, &f) == nil && f.Error != "" {
				return textInfo{}, "", false, &RememberedError{Msg: f.Error}
			}
		}
	}
	x, hasText, err := extractDoc(ctx, opts, c, data, ext)
	if err != nil && failPath != "" && ctx.Err() == nil && opts.Lasting != nil && opts.Lasting(err) {
		err = fmt.Errorf("%w (remembered for these bytes: later runs skip the file until it changes, or retry it with --retry-failed)", err)
		if b, jerr := json.Marshal(failure{Error: err.Error()}); jerr == nil && os.MkdirAll(opts.CacheDir, 0o755) == nil {
			_ = atomicfile.WriteFile(failPath, b, 0o644)
		}
	}
	if err != nil || !hasText {
		return textInfo{}, "", false, err
	}
	if failPath != "" {
		_ = os.Remove(failPath) // retried, and it worked
	}
	ti = textInfo{Version: cacheVersion, textStats: measure(x.Text), Signals: inspect(x), Meta: x.Meta}
	ti.Sig, ti.HasSig = sketch(x.Text)
	if cachePath != "" {
		// The cache only saves time: failing to write it is not an error.
		if b, err := json.Marshal(ti); err == nil && os.MkdirAll(opts.CacheDir, 0o755) == nil {
			_ = atomicfile.WriteFile(cachePath, b, 0o644)
		}
	}
	return ti, x.Text, true, nil
}

// failure is a remembered extraction failure (<key>.failed.json).
type failure struct {
	Error string `json:"error"`
}

// RememberedError is an extraction failure remembered from an earlier run
// for the same bytes (Options.Lasting); the file was not extracted again.
type RememberedError struct{ Msg string }

func (e *RememberedError) Error() string { return e.Msg }

// cacheGet reads a JSON value the cache keeps under name; it reports
// whether there was one.
func cacheGet(opts *Options, name string, v any) bool {
	if opts.CacheDir == "" {
		return false
	}
	opts.useCache(name)
	b, err := os.ReadFile(filepath.Join(opts.CacheDir, name))
	return err == nil && json.Unmarshal(b, v) == nil
}

// cachePut keeps a JSON value under name; failing is not an error.
func cachePut(opts *Options, name string, v any) {
	if opts.CacheDir == "" {
		return
	}
	opts.useCache(name)
	if b, err := json.Marshal(v); err == nil && os.MkdirAll(opts.CacheDir, 0o755) == nil {
		_ = atomicfile.WriteFile(filepath.Join(opts.CacheDir, name), b, 0o644)
	}
}

// useCache records that the run reads or writes the cache entry name.
func (o *Options) useCache(name string) {
	if o.cacheUsed != nil {
		o.cacheUsed[name] = true
	}
}

// The cache (CacheDir, the workspace's .vibe/cache/curate) is shared by the
// workspace's themes. Each run records the entries it used in
// CacheDir/uses/<its source folder's hash>.json; pruneCache then removes
// the entries no theme's last run used, when every theme curated in the
// workspace (a knowledge/<theme>/source/sources.lock.json) has such a
// record (a theme last curated by an older vibe has none: nothing goes
// until it is curated again), and only entries not written for
// pruneMinAge, so a run of another theme going on meanwhile, whose record
// is not written yet, keeps what it wrote.
const (
	usesDir     = "uses"
	pruneMinAge = 24 * time.Hour
)

// cacheUses is a theme's record of the entries its last run used.
type cacheUses struct {
	SourceDir string   `json:"source_dir"` // workspace-relative
	Entries   []string `json:"entries"`
}

// pruneCache writes this run's record of the entries it used and removes
// the entries no theme's record names (see usesDir). It returns how many
// went; failing is not an error (the cache only saves time).
func pruneCache(opts *Options) int {
	if opts.CacheDir == "" || opts.cacheUsed == nil {
		return 0
	}
	rel := relTo(opts.Root, opts.SourceDir)
	h := sha256.Sum256([]byte(rel))
	mine := cacheUses{SourceDir: rel, Entries: make([]string, 0, len(opts.cacheUsed))}
	for name := range opts.cacheUsed {
		mine.Entries = append(mine.Entries, name)
	}
	sort.Strings(mine.Entries)
	dir := filepath.Join(opts.CacheDir, usesDir)
	b, err := json.Marshal(mine)
	if err != nil || os.MkdirAll(dir, 0o755) != nil || atomicfile.WriteFile(filepath.Join(dir, hex.EncodeToString(h[:8])+".json"), b, 0o644) != nil {
		return 0
	}
	// The records of themes still there; a theme's folder gone takes its
	// record with it.
	ents, err := os.ReadDir(dir)
	if err != nil {
		return 0
	}
	keep := map[string]bool{}
	recorded := map[string]bool{}
	for _, e := range ents {
		p := filepath.Join(dir, e.Name())
		var u cacheUses
		if b, err := os.ReadFile(p); err != nil || json.Unmarshal(b, &u) != nil || u.SourceDir == "" {
			continue
		}
		sd := filepath.FromSlash(u.SourceDir)
		if !filepath.IsAbs(sd) {
			sd = filepath.Join(opts.Root, sd)
		}
		if _, err := os.Stat(filepath.Join(sd, LockName)); errors.Is(err, fs.ErrNotExist) && u.SourceDir != rel {
			_ = os.Remove(p)
			continue
		}
		recorded[u.SourceDir] = true
		for _, n := range u.Entries {
			keep[n] = true
		}
	}
	// Every curated theme of the workspace must have its record.
	locks, err := filepath.Glob(filepath.Join(filepath.Dir(filepath.Dir(opts.SourceDir)), "*", filepath.Base(opts.SourceDir), LockName))
	if err != nil {
		return 0
	}
	for _, l := range locks {
		if !recorded[relTo(opts.Root, filepath.Dir(l))] {
			return 0
		}
	}
	ents, err = os.ReadDir(opts.CacheDir)
	if err != nil {
		return 0
	}
	pruned := 0
	for _, e := range ents {
		if !e.Type().IsRegular() || keep[e.Name()] || !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		info, err := e.Info()
		if err != nil || time.Since(info.ModTime()) < pruneMinAge {
			continue
		}
		if os.Remove(filepath.Join(opts.CacheDir, e.Name())) == nil {
			pruned++
		}
	}
	return pruned
}
