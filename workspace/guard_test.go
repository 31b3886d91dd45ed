package workspace

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheckNotSourceTree(t *testing.T) {
	root := t.TempDir()
	write := func(p, s string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	vibe := filepath.Join(root, "vibe")
	write(filepath.Join(vibe, "go.mod"), "module "+ModulePath+"\n\ngo 1.26\n")
	write(filepath.Join(vibe, "knowledge", "store.go"), "package knowledge\n")
	other := filepath.Join(root, "other")
	write(filepath.Join(other, "go.mod"), "module example.org/other\n")
	os.MkdirAll(filepath.Join(other, "docs"), 0o755)
	plain := filepath.Join(root, "bakery")
	os.MkdirAll(plain, 0o755)
	gopkg := filepath.Join(root, "loose")
	write(filepath.Join(gopkg, "skills", "x.go"), "package skills\n")

	for _, c := range []struct {
		dir   string
		named bool
		want  string // "" means allowed
	}{
		{vibe, true, "it holds vibe's own source"},
		{vibe, false, "it holds vibe's own source"},
		{filepath.Join(vibe, "knowledge"), false, "it is inside vibe's own source tree (" + vibe + ")"},
		{filepath.Join(vibe, "demo"), true, ""}, // make demo's workspace, named
		{filepath.Join(other, "docs"), false, "it is inside the Go module at " + other},
		{filepath.Join(other, "docs"), true, ""},
		{plain, false, ""},
		{gopkg, true, filepath.Join(gopkg, "skills") + " holds Go source files"},
	} {
		os.MkdirAll(c.dir, 0o755)
		err := CheckNotSourceTree(c.dir, c.named)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s (named %v): refused: %v", c.dir, c.named, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s (named %v): %v, want %q", c.dir, c.named, err, c.want)
		}
	}
}
