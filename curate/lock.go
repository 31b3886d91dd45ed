package curate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/vibelife/vibe/internal/atomicfile"
)

// Status values of a lock [Entry].
const (
	StatusKept    = "kept"
	StatusDropped = "dropped"
)

// Lock is the content of knowledge/<theme>/source/sources.lock.json.
type Lock struct {
	Version int     `json:"version"`
	Sources []Entry `json:"sources"`
	// Git records the commit each listed git source was gathered from.
	Git []GitSource `json:"git,omitempty"`
}

// Entry records what curate did with one gathered source.
type Entry struct {
	// Origin is the path or URL as given (a file found in a directory or glob
	// is recorded by its own workspace-relative path).
	Origin string `json:"origin"`
	// File is the stored name in source/ (kept entries only).
	File       string    `json:"file,omitempty"`
	SHA256     string    `json:"sha256,omitempty"`
	Size       int64     `json:"size"`
	MediaType  string    `json:"media_type,omitempty"`
	GatheredAt time.Time `json:"gathered_at"`
	Status     string    `json:"status"`
	Reason     string    `json:"reason,omitempty"`
	Notes      string    `json:"notes,omitempty"`
	// Failed marks a drop caused by an error (missing file, download error,
	// unreadable document) rather than by a curation decision.
	Failed bool `json:"failed,omitempty"`
	// Provenance says where the bytes came from and what the work is.
	Provenance Provenance `json:"provenance,omitzero"`
	// Credibility grades a kept entry (and one kept out by the floor).
	Credibility *Credibility `json:"credibility,omitempty"`
}

// Provenance is what is known of where a source came from, beyond its
// origin. Git sources fill Repository, Path and Blob; URL sources URL;
// curate.yaml (title:, author:, publisher:, edition:, published:) and a
// Markdown file's front matter fill the rest. Sources found by a search
// record the Query that found them and the date it was Retrieved.
type Provenance struct {
	// Repository is the git repository (github:owner/repo, git+https://...).
	Repository string `json:"repository,omitempty"`
	// Path is the file's path in the repository.
	Path string `json:"path,omitempty"`
	// Blob is the git blob hash of the file: unchanged blobs are not
	// gathered again when the ref moves.
	Blob string `json:"blob,omitempty"`
	// URL is the address the bytes were downloaded from.
	URL string `json:"url,omitempty"`
	// Query is the search query that found the source, if a search did.
	Query string `json:"query,omitempty"`
	// Retrieved is when a searched source was fetched (RFC 3339 date).
	Retrieved string `json:"retrieved,omitempty"`
	// Title, Author, Publisher, Edition and Published describe the work.
	Title     string `json:"title,omitempty"`
	Author    string `json:"author,omitempty"`
	Publisher string `json:"publisher,omitempty"`
	Edition   string `json:"edition,omitempty"`
	Published string `json:"published,omitempty"`
}

// ReadLock reads a lock file; a missing file is an empty lock.
func ReadLock(path string) (Lock, error) {
	var l Lock
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return Lock{Version: 1}, nil
	}
	if err != nil {
		return l, fmt.Errorf("read %s: %w", path, err)
	}
	if err := json.Unmarshal(data, &l); err != nil {
		return l, fmt.Errorf("%s: %w (delete it and run `vibe curate` again)", path, err)
	}
	return l, nil
}

// Marshal renders the lock as indented JSON.
func (l Lock) Marshal() ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(l); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// WriteLock writes the lock atomically unless the file already holds the same
// bytes; it reports whether it wrote.
func WriteLock(path string, l Lock) (bool, error) {
	data, err := l.Marshal()
	if err != nil {
		return false, fmt.Errorf("encode %s: %w", path, err)
	}
	if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, data) {
		return false, nil
	}
	if err := atomicfile.WriteFile(path, data, 0o644); err != nil {
		return false, err
	}
	return true, nil
}
