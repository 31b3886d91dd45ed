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
