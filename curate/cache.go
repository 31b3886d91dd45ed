package curate

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"

	"github.com/vibelife/vibe/internal/atomicfile"
)

// cacheVersion changes whenever measure or sketch change what they compute.
const cacheVersion = 1

// textInfo is what curate keeps of a text: its statistics and sketch.
type textInfo struct {
	Version int `json:"version"`
	textStats
	Sig    signature `json:"sig"`
	HasSig bool      `json:"has_sig"`
}

// MarshalJSON/UnmarshalJSON of the embedded stats need exported fields.
type textInfoJSON struct {
	Version int       `json:"version"`
	Chars   int       `json:"chars"`
	Garbled float64   `json:"garbled"`
	Script  string    `json:"script"`
	Sig     signature `json:"sig"`
	HasSig  bool      `json:"has_sig"`
}

func (t textInfo) MarshalJSON() ([]byte, error) {
	return json.Marshal(textInfoJSON{t.Version, t.chars, t.garbled, t.script, t.Sig, t.HasSig})
}

func (t *textInfo) UnmarshalJSON(b []byte) error {
	var j textInfoJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*t = textInfo{Version: j.Version, textStats: textStats{chars: j.Chars, garbled: j.Garbled, script: j.Script}, Sig: j.Sig, HasSig: j.HasSig}
	return nil
}

// textInfoFor extracts and measures a candidate's text, through the cache
// when opts.CacheDir is set. hasText is false when there is no extractor for
// the format (the text checks are then skipped).
func textInfoFor(ctx context.Context, opts *Options, c candidate, data []byte, ext, sum string) (textInfo, bool, error) {
	var cachePath string
	if opts.CacheDir != "" && opts.Extract != nil {
		key := sum
		if opts.ExtractVersion != "" {
			h := sha256.Sum256([]byte(opts.ExtractVersion))
			key += "-" + hex.EncodeToString(h[:4])
		}
		cachePath = filepath.Join(opts.CacheDir, key+".json")
		if b, err := os.ReadFile(cachePath); err == nil {
			var ti textInfo
			if json.Unmarshal(b, &ti) == nil && ti.Version == cacheVersion {
				return ti, true, nil
			}
		}
	}
	text, hasText, err := extractText(ctx, opts, c, data, ext)
	if err != nil || !hasText {
		return textInfo{}, false, err
	}
	ti := textInfo{Version: cacheVersion, textStats: measure(text)}
	ti.Sig, ti.HasSig = sketch(text)
	if cachePath != "" {
		// The cache only saves time: failing to write it is not an error.
		if b, err := json.Marshal(ti); err == nil && os.MkdirAll(opts.CacheDir, 0o755) == nil {
			_ = atomicfile.WriteFile(cachePath, b, 0o644)
		}
	}
	return ti, true, nil
}
