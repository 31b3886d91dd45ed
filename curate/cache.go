package curate

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/vibelife/vibe/internal/atomicfile"
)

// cacheVersion changes whenever measure, sketch or inspect change what
// they compute.
const cacheVersion = 2

// textInfo is what curate keeps of a text: its statistics, sketch and the
// signals its credibility is graded on.
type textInfo struct {
	Version int `json:"version"`
	textStats
	Sig    signature `json:"sig"`
	HasSig bool      `json:"has_sig"`
	// Signals are the text's own quality signals and the converter's notes.
	Signals textSignals `json:"signals"`
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
}

func (t textInfo) MarshalJSON() ([]byte, error) {
	return json.Marshal(textInfoJSON{t.Version, t.chars, t.garbled, t.script, t.Sig, t.HasSig, t.Signals})
}

func (t *textInfo) UnmarshalJSON(b []byte) error {
	var j textInfoJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*t = textInfo{Version: j.Version, textStats: textStats{chars: j.Chars, garbled: j.Garbled, script: j.Script}, Sig: j.Sig, HasSig: j.HasSig, Signals: j.Signals}
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
	ti = textInfo{Version: cacheVersion, textStats: measure(x.Text), Signals: inspect(x)}
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
	b, err := os.ReadFile(filepath.Join(opts.CacheDir, name))
	return err == nil && json.Unmarshal(b, v) == nil
}

// cachePut keeps a JSON value under name; failing is not an error.
func cachePut(opts *Options, name string, v any) {
	if opts.CacheDir == "" {
		return
	}
	if b, err := json.Marshal(v); err == nil && os.MkdirAll(opts.CacheDir, 0o755) == nil {
		_ = atomicfile.WriteFile(filepath.Join(opts.CacheDir, name), b, 0o644)
	}
}
