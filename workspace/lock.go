package workspace

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// ErrThemeLocked is returned by [Workspace.LockTheme] when another process
// holds the theme's lock.
var ErrThemeLocked = errors.New("theme is locked")

// ThemeLock is a held per-theme lock; [ThemeLock.Unlock] releases it. The
// operating system releases it too when the process ends, however it ends
// (kill -9 included), so a lock is never left stale.
type ThemeLock struct {
	f    *os.File
	path string
}

// ThemeLockPath is the lock file of a theme: .vibe/locks/<theme>.lock.
func (w *Workspace) ThemeLockPath(theme string) string {
	return filepath.Join(w.StateDir(), "locks", theme+".lock")
}

// LockTheme takes the theme's lock without waiting, so that two builds (or a
// build and a stage command) of one theme never write its source/,
// converted/, store and skill at the same time. The lock file records the
// holder's process id. When another process holds it, the error wraps
// [ErrThemeLocked] and names that process.
func (w *Workspace) LockTheme(theme string) (*ThemeLock, error) {
	p := w.ThemeLockPath(theme)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return nil, fmt.Errorf("lock theme %s: %w", theme, err)
	}
	f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock theme %s: %w", theme, err)
	}
	held, err := tryLock(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("lock theme %s: %s: %w", theme, p, err)
	}
	if !held {
		data, _ := os.ReadFile(p)
		f.Close()
		holder := "another vibe process"
		if pid, err := strconv.Atoi(strings.TrimSpace(string(data))); err == nil && pid > 0 {
			holder = fmt.Sprintf("vibe process %d", pid)
		}
		return nil, fmt.Errorf("%w: theme %s is being built by %s (lock %s); wait for it to finish, or stop it, and run again",
			ErrThemeLocked, theme, holder, w.Rel(p))
	}
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return &ThemeLock{f: f, path: p}, nil
}

// Unlock releases the lock. It is safe to call on a nil lock and more than
// once.
func (l *ThemeLock) Unlock() error {
	if l == nil || l.f == nil {
		return nil
	}
	// Empty the file before releasing so a later reader never names a
	// process that no longer holds it.
	_ = l.f.Truncate(0)
	err := unlock(l.f)
	if cerr := l.f.Close(); err == nil {
		err = cerr
	}
	l.f = nil
	return err
}
