package skills

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestOpenFixture(t *testing.T) {
	s, err := Open(filepath.Join("..", "runtime", "testdata", "skills"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	hs := s.Headers()
	if len(hs) != 1 || hs[0].Name != "bazi" || hs[0].Theme != "bazi" {
		t.Fatalf("headers = %+v", hs)
	}
	sk, err := s.Get("bazi")
	if err != nil {
		t.Fatal(err)
	}
	if len(sk.Tools) != 3 || sk.Tools[0].Plugin == nil || sk.Tools[1].CardType != "bazi_chart" {
		t.Fatalf("tools = %+v", sk.Tools)
	}
	if len(sk.Protocols) != 1 || sk.Protocols[0].Name != "reading" || len(sk.Protocols[0].Steps) != 3 {
		t.Fatalf("protocols = %+v", sk.Protocols)
	}
	if !strings.Contains(sk.Body, "collect_info") || strings.Contains(sk.Body, "triggers:") {
		t.Fatalf("body = %q", sk.Body)
	}
	core, err := s.Get(CoreName)
	if err != nil || !core.Embedded || !strings.Contains(core.Body, "use_skill") {
		t.Fatalf("core = %+v, %v", core, err)
	}
	tests := []struct {
		rel     string
		wantErr bool
	}{
		{"knowledge/rules.yaml", false},
		{"rules/reading.md", false},
		{"../bazi/SKILL.md", true},
		{"/etc/passwd", true},
		{"missing.md", true},
	}
	for _, tt := range tests {
		_, err := sk.ReadResource(tt.rel)
		if (err != nil) != tt.wantErr {
			t.Errorf("ReadResource(%q) err = %v", tt.rel, err)
		}
		if err != nil && !errors.Is(err, ErrNotFound) {
			t.Errorf("ReadResource(%q) err not ErrNotFound: %v", tt.rel, err)
		}
	}
	for _, tt := range []struct{ text, want string }{
		{"帮我看看八字", "bazi"},
		{"what is my bazi", "bazi"},
		{"今天天气", ""},
	} {
		if got := s.Match(tt.text); got != tt.want {
			t.Errorf("Match(%q) = %q, want %q", tt.text, got, tt.want)
		}
	}
}

func TestReloadAndCoreOverride(t *testing.T) {
	root := t.TempDir()
	write := func(rel, content string) {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a/SKILL.md", "---\nname: a\ndescription: first\n---\nbody")
	now := time.Unix(1000, 0)
	s, err := Open(root, Options{Interval: time.Second, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	write("a/SKILL.md", "---\nname: a\ndescription: second version\n---\nbody")
	write("core/SKILL.md", "---\nname: core\ndescription: mine\n---\nmy persona")
	if err := s.Refresh(); err != nil { // interval not passed: no reload
		t.Fatal(err)
	}
	if sk, _ := s.Get("a"); sk.Description != "first" {
		t.Fatalf("reloaded before the interval: %q", sk.Description)
	}
	now = now.Add(2 * time.Second)
	if err := s.Refresh(); err != nil {
		t.Fatal(err)
	}
	if sk, _ := s.Get("a"); sk.Description != "second version" {
		t.Fatalf("not reloaded: %q", sk.Description)
	}
	if c, _ := s.Get(CoreName); c.Body != "my persona" || c.Embedded {
		t.Fatalf("core not overridden: %+v", c)
	}
	write("b/tools/tools.yaml", "tools: [{name: x}]")
	write("b/SKILL.md", "---\nname: b\n---\n")
	var bad []string
	if _, err := Open(root, Options{OnError: func(dir string, err error) { bad = append(bad, err.Error()) }}); err != nil {
		t.Fatal(err)
	}
	if len(bad) != 1 || !strings.Contains(bad[0], "tools[0]") {
		t.Fatalf("bad = %v", bad)
	}
	if _, err := Open(root, Options{}); err == nil || !strings.Contains(err.Error(), "tools.yaml") {
		t.Fatalf("err = %v", err)
	}
}

func TestSkillNamesAreChecked(t *testing.T) {
	tests := []struct {
		dir, front string
		wantErr    string
	}{
		{"ok-skill", "name: ok-skill", ""},
		{"upper", "name: Tarot", "lower-case"},
		{"under", "name: tarot_reading", "lower-case"},
		{"long", "name: " + strings.Repeat("a", 33), "longer than 32"},
		{"sys", "name: system", "reserved"},
		{"fakecore", "name: core", "belongs to the core skill"},
		{"zz-dup", "name: ok-skill", "already named"}, // read after ok-skill/
	}
	root := t.TempDir()
	for _, tt := range tests {
		p := filepath.Join(root, tt.dir, "SKILL.md")
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("---\n"+tt.front+"\ndescription: d\n---\nbody"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	errs := map[string]string{}
	s, err := Open(root, Options{OnError: func(dir string, err error) { errs[filepath.Base(dir)] = err.Error() }})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		got := errs[tt.dir]
		if tt.wantErr == "" {
			if got != "" {
				t.Errorf("%s: unexpected error %s", tt.dir, got)
			}
			continue
		}
		if !strings.Contains(got, tt.wantErr) || !strings.Contains(got, "load skill") {
			t.Errorf("%s: error %q, want %q", tt.dir, got, tt.wantErr)
		}
	}
	if hs := s.Headers(); len(hs) != 1 || hs[0].Name != "ok-skill" {
		t.Fatalf("headers = %+v", hs)
	}
	if c, _ := s.Get(CoreName); !c.Embedded {
		t.Fatal("a skill named core outside skills/core/ replaced the core skill")
	}
}

func TestSummaryCutsLongDescriptions(t *testing.T) {
	h := Header{Description: strings.Repeat("长", 600) + "\n  tail"}
	if got := []rune(h.Summary()); len(got) != MaxDescription || got[len(got)-1] != '…' {
		t.Fatalf("summary has %d runes", len(got))
	}
	if got := (Header{Description: "two\n lines"}).Summary(); got != "two lines" {
		t.Fatalf("summary = %q", got)
	}
}

// TestConcurrentRefresh reloads while many goroutines read: run with -race.
func TestConcurrentRefresh(t *testing.T) {
	root := t.TempDir()
	write := func(desc string) {
		p := filepath.Join(root, "a", "SKILL.md")
		_ = os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte("---\nname: a\ndescription: "+desc+"\n---\nbody"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("v0")
	s, err := Open(root, Options{Interval: -1})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	errc := make(chan error, 8)
	for range 8 {
		go func() {
			for {
				select {
				case <-done:
					errc <- nil
					return
				default:
				}
				if err := s.Refresh(); err != nil {
					errc <- err
					return
				}
				if _, err := s.Get("a"); err != nil {
					errc <- err
					return
				}
			}
		}()
	}
	for i := 1; i <= 20; i++ {
		write("v" + strings.Repeat("x", i)) // the size changes, so the stamp does
	}
	close(done)
	for range 8 {
		if err := <-errc; err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Refresh(); err != nil {
		t.Fatal(err)
	}
	if sk, _ := s.Get("a"); sk.Description != "v"+strings.Repeat("x", 20) {
		t.Fatalf("last version not loaded: %q", sk.Description)
	}
}

func TestInstructionsDropHTMLComments(t *testing.T) {
	sk := &Skill{Body: "<!-- Generated by vibe integrate -->\n\n# T\n\n<!-- vibe:generated:start sop -->\nstep\n<!-- vibe:generated:end sop -->\n\n\n\nend"}
	if got := sk.Instructions(); got != "# T\n\nstep\n\nend" {
		t.Fatalf("instructions = %q", got)
	}
}

// TestSymlinksLeavingTheSkillAreRefused: a skill from a third party may hold
// links to anywhere; every file of a skill is opened through os.Root, so a
// link leaving the skill directory is refused (for resources, SKILL.md,
// tools.yaml and rules alike) while a link inside it still works.
func TestSymlinksLeavingTheSkillAreRefused(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "demo")
	outside := filepath.Join(root, "secret.txt")
	for p, c := range map[string]string{
		filepath.Join(dir, "SKILL.md"):           "---\nname: demo\ndescription: d\n---\nbody",
		filepath.Join(dir, "knowledge", "a.md"):  "inside",
		outside:                                  "SECRET",
		filepath.Join(root, "evil", "SKILL.md"):  "",
		filepath.Join(root, "evil2", "SKILL.md"): "---\nname: evil2\n---\nb",
		filepath.Join(root, "out", "tools.yaml"): "tools: [{name: x, type: display}]",
	} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	links := map[string]string{
		filepath.Join(dir, "rootdir"):         "/",
		filepath.Join(dir, "secret"):          outside,
		filepath.Join(dir, "up"):              "../secret.txt",
		filepath.Join(dir, "alias.md"):        "knowledge/a.md",
		filepath.Join(root, "evil2", "tools"): filepath.Join(root, "out"),
		filepath.Join(root, "evil3"):          dir, // a linked skill directory is not loaded twice
	}
	for l, target := range links {
		if err := os.Symlink(target, l); err != nil {
			t.Skipf("symlinks unavailable: %v", err)
		}
	}
	// evil's SKILL.md is a link to a file outside.
	if err := os.Remove(filepath.Join(root, "evil", "SKILL.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, "evil", "SKILL.md")); err != nil {
		t.Fatal(err)
	}
	var loadErrs []string
	s, err := Open(root, Options{OnError: func(d string, err error) { loadErrs = append(loadErrs, err.Error()) }})
	if err != nil {
		t.Fatal(err)
	}
	sk, err := s.Get("demo")
	if err != nil {
		t.Fatal(err)
	}
	for _, rel := range []string{"rootdir/proc/self/environ", "rootdir/etc/passwd", "secret", "up", "../secret.txt"} {
		b, err := sk.ReadResource(rel)
		if err == nil || !errors.Is(err, ErrNotFound) {
			t.Errorf("ReadResource(%q) = %q, %v; want refused", rel, b, err)
		}
	}
	if b, err := sk.ReadResource("alias.md"); err != nil || string(b) != "inside" {
		t.Errorf("link inside the skill: %q, %v", b, err)
	}
	for _, r := range sk.Resources() {
		if r == "rootdir" || r == "secret" || r == "up" {
			t.Errorf("Resources lists the outside link %q: %v", r, sk.Resources())
		}
	}
	if _, err := s.Get("evil"); err == nil {
		t.Error("a skill whose SKILL.md links outside was loaded")
	}
	if _, err := s.Get("evil2"); err == nil {
		t.Error("a skill whose tools/ links outside was loaded")
	}
	if len(loadErrs) != 2 || !strings.Contains(strings.Join(loadErrs, "\n"), "tools/tools.yaml") {
		t.Errorf("load errors = %q, want evil's and evil2's", loadErrs)
	}
}
