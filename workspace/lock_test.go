package workspace

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"
)

func TestLockThemeRefusesSecondHolder(t *testing.T) {
	w := &Workspace{Root: t.TempDir()}
	l, err := w.LockTheme("tea")
	if err != nil {
		t.Fatal(err)
	}
	_, err = w.LockTheme("tea")
	if !errors.Is(err, ErrThemeLocked) || !strings.Contains(err.Error(), "vibe process "+strconv.Itoa(os.Getpid())) || !strings.Contains(err.Error(), ".vibe/locks/tea.lock") {
		t.Fatalf("second lock: %v, want ErrThemeLocked naming pid %d", err, os.Getpid())
	}
	// Another theme is independent.
	o, err := w.LockTheme("bonsai")
	if err != nil {
		t.Fatal(err)
	}
	o.Unlock()
	if err := l.Unlock(); err != nil {
		t.Fatal(err)
	}
	l2, err := w.LockTheme("tea")
	if err != nil {
		t.Fatalf("after unlock: %v", err)
	}
	l2.Unlock()
	l2.Unlock()
}
