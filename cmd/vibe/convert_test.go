package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vibelife/vibe/convert"
	"github.com/vibelife/vibe/internal/iostreams"
)

func TestConvertCmdFlags(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		want    convertOptions
		wantErr string
	}{
		{name: "theme", args: []string{"bazi"}, want: convertOptions{Theme: "bazi"}},
		{name: "theme with overrides", args: []string{"bazi", "--force", "--json", "--workers", "4", "--max-file-bytes", "1000", "--pdf-engine", "pdfium"},
			want: convertOptions{Theme: "bazi", Force: true, JSON: true, Workers: 4, MaxFileBytes: 1000, PDFEngine: "pdfium"}},
		{name: "standalone", args: []string{"a.pdf", "dir", "-o", "out"}, want: convertOptions{Inputs: []string{"a.pdf", "dir"}, OutDir: "out"}},
		{name: "no args", args: nil, wantErr: "give one theme"},
		{name: "two themes", args: []string{"a", "b"}, wantErr: "give one theme"},
		{name: "-o without inputs", args: []string{"-o", "out"}, wantErr: "give the files"},
		{name: "bad theme", args: []string{"Bad_Theme"}, wantErr: "Bad_Theme"},
		{name: "file without -o", args: []string{"convert_test.go"}, wantErr: "pass -o OUTDIR"},
		{name: "bad engine", args: []string{"bazi", "--pdf-engine", "acrobat"}, wantErr: "--pdf-engine"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ios, _, _, _ := iostreams.Test()
			a := &app{io: ios, getenv: func(string) string { return "" }}
			var got *convertOptions
			cmd := newConvertCmdWith(a, func(_ context.Context, o *convertOptions) error { got = o; return nil })
			cmd.SetArgs(tt.args)
			cmd.SetOut(ios.Out)
			cmd.SetErr(ios.ErrOut)
			err := cmd.Execute()
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want it to mention %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got.IO = nil
			if got.Theme != tt.want.Theme || got.OutDir != tt.want.OutDir || strings.Join(got.Inputs, ",") != strings.Join(tt.want.Inputs, ",") ||
				got.Force != tt.want.Force || got.JSON != tt.want.JSON || got.Workers != tt.want.Workers ||
				got.MaxFileBytes != tt.want.MaxFileBytes || got.PDFEngine != tt.want.PDFEngine {
				t.Errorf("options %+v, want %+v", *got, tt.want)
			}
		})
	}
}

func writeTree(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, data := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestConvertThemeCommand(t *testing.T) {
	ws := t.TempDir()
	writeTree(t, ws, map[string]string{
		"vibe.yaml":                               "convert:\n  max_file_bytes: 300\n",
		"knowledge/demo/source/guide.md":          "# Guide\n\nThe first section.\n\n## Detail\n\nMore text.\n",
		"knowledge/demo/source/empty.txt":         "",
		"knowledge/demo/source/blob.dat":          "\x00\x01\x02\x03binary\x00",
		"knowledge/demo/source/huge.txt":          strings.Repeat("too long for the configured cap\n", 20),
		"knowledge/demo/converted/gone.md":        "---\nsource: old\n---\n\nstale\n",
		"knowledge/demo/source/.DS_Store":         "junk",
		"knowledge/demo/source/sources.lock.json": "{}",
	})
	code, out, errOut := runVibe(t, nil, "--workspace", ws, "convert", "demo")
	if code != exitFailure {
		t.Fatalf("exit %d, want 1 (some files failed); stderr:\n%s", code, errOut)
	}
	for _, want := range []string{
		`convert: "knowledge/demo/source/empty.txt": empty file`,
		`convert: "knowledge/demo/source/blob.dat": unsupported format`,
		`convert: "knowledge/demo/source/huge.txt": file too large`,
		"hint: raise convert.max_file_bytes",
		"1 converted, 0 unchanged, 3 failed, 1 removed",
		"3 of 4 files failed",
	} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
	if out != "" {
		t.Errorf("stdout should be empty without --json, got %q", out)
	}
	doc, _, err := convert.ReadFile(filepath.Join(ws, "knowledge/demo/converted/guide.md"))
	if err != nil {
		t.Fatal(err)
	}
	if doc.Source != "knowledge/demo/source/guide.md" || doc.Format != "md" || doc.Quality.Headings != 2 {
		t.Errorf("front matter %+v", doc)
	}
	if _, err := os.Stat(filepath.Join(ws, "knowledge/demo/converted/gone.md")); !os.IsNotExist(err) {
		t.Errorf("stale gone.md not removed: %v", err)
	}

	// --max-file-bytes overrides vibe.yaml; the unchanged file is skipped.
	code, out, errOut = runVibe(t, nil, "--workspace", ws, "convert", "demo", "--json", "--max-file-bytes", "100000")
	if code != exitFailure {
		t.Fatalf("exit %d; stderr:\n%s", code, errOut)
	}
	var rep convert.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("--json output: %v\n%s", err, out)
	}
	if rep.Converted != 1 || rep.Unchanged != 1 || rep.Failed != 2 {
		t.Errorf("report converted=%d unchanged=%d failed=%d, want 1/1/2", rep.Converted, rep.Unchanged, rep.Failed)
	}
	for _, f := range rep.Files {
		if strings.HasSuffix(f.Source, "huge.txt") && f.Status != convert.StatusConverted {
			t.Errorf("huge.txt %s, want converted under the raised cap", f.Status)
		}
	}
}

func TestConvertStandaloneCommand(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"in/a.txt": "第一章 开始\n\n正文第一段。\n\n第二章 继续\n\n正文第二段。\n",
		"in/b.md":  "# B\n\ntext\n",
	})
	out := filepath.Join(dir, "out")
	code, _, errOut := runVibe(t, nil, "--workspace", dir, "convert", filepath.Join(dir, "in"), "-o", out)
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, errOut)
	}
	if !strings.Contains(errOut, "2 converted, 0 unchanged, 0 failed") {
		t.Errorf("summary missing:\n%s", errOut)
	}
	data, err := os.ReadFile(filepath.Join(out, "a.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), "# 第一章") {
		t.Errorf("a.md lacks the chapter heading:\n%s", data)
	}
}

func TestStageConvertWithoutSources(t *testing.T) {
	ws := t.TempDir()
	code, _, errOut := runVibe(t, nil, "--workspace", ws, "convert", "nothing")
	if code != exitFailure || !strings.Contains(errOut, "vibe curate nothing") {
		t.Fatalf("exit %d, stderr:\n%s", code, errOut)
	}
}

// TestConvertRefusesToOverwrite is issue #18: `vibe convert FILE -o DIR`
// overwrote a hand-written file of the same name, and `vibe convert
// notes.md -o .` rewrote its input; both are refused unless --force.
func TestConvertRefusesToOverwrite(t *testing.T) {
	t.Run("hand-written output", func(t *testing.T) {
		dir := t.TempDir()
		mine := "# My own notes\n\nwritten by hand\n"
		writeTree(t, dir, map[string]string{
			"in/notes.txt": "第一章 开始\n\n正文。\n",
			"out/notes.md": mine,
			"in/other.txt": "第一章 其他\n\n正文。\n",
		})
		out := filepath.Join(dir, "out")
		code, _, errOut := runVibe(t, nil, "--workspace", dir, "convert", filepath.Join(dir, "in"), "-o", out)
		if code != 1 || !strings.Contains(errOut, "not written by vibe convert") || !strings.Contains(errOut, "--force") {
			t.Fatalf("exit %d, want 1 naming the refusal and --force:\n%s", code, errOut)
		}
		if data, _ := os.ReadFile(filepath.Join(out, "notes.md")); string(data) != mine {
			t.Fatalf("hand-written file changed:\n%s", data)
		}
		if _, err := os.Stat(filepath.Join(out, "other.md")); err != nil {
			t.Errorf("the other file was not converted: %v", err)
		}
		// A file vibe wrote is replaced without --force; --force replaces
		// the hand-written one.
		code, _, errOut = runVibe(t, nil, "--workspace", dir, "convert", filepath.Join(dir, "in"), "-o", out, "--force")
		if code != 0 {
			t.Fatalf("--force: exit %d:\n%s", code, errOut)
		}
		if data, _ := os.ReadFile(filepath.Join(out, "notes.md")); !strings.Contains(string(data), "converter:") {
			t.Errorf("--force did not convert over the hand-written file:\n%s", data)
		}
	})
	t.Run("input itself", func(t *testing.T) {
		dir := t.TempDir()
		notes := "# Notes\n\nkeep me as I am\n"
		writeTree(t, dir, map[string]string{"notes.md": notes})
		code, _, errOut := runVibe(t, nil, "--workspace", dir, "convert", filepath.Join(dir, "notes.md"), "-o", dir)
		if code != 1 || !strings.Contains(errOut, "replace the input itself") {
			t.Fatalf("exit %d, want 1 saying the input would be replaced:\n%s", code, errOut)
		}
		if data, _ := os.ReadFile(filepath.Join(dir, "notes.md")); string(data) != notes {
			t.Fatalf("input rewritten:\n%s", data)
		}
	})
}

// TestConvertQuotesFileNames is issue #18 (log injection): a newline in a
// file name is written escaped in error lines, never raw.
func TestConvertQuotesFileNames(t *testing.T) {
	dir := t.TempDir()
	evil := "evil\nconvert: 0 failed.txt"
	writeTree(t, dir, map[string]string{"in/" + evil: "", "in/good.txt": "第一章 开始\n\n正文。\n"})
	code, _, errOut := runVibe(t, nil, "--workspace", dir, "convert", filepath.Join(dir, "in"), "-o", filepath.Join(dir, "out"))
	if code != 1 {
		t.Fatalf("exit %d, want 1 (the empty file fails):\n%s", code, errOut)
	}
	for _, line := range strings.Split(errOut, "\n") {
		if strings.HasPrefix(line, "convert: 0 failed") {
			t.Fatalf("a file name forged a log line:\n%s", errOut)
		}
	}
	if !strings.Contains(errOut, `evil\nconvert: 0 failed.txt`) {
		t.Errorf("the file name is not shown escaped:\n%s", errOut)
	}
}

// TestConvertHTMLTooDeep: vibe convert on a page nested 100,000 deep says the
// nesting is too deep, never that the file is truncated or damaged (issue
// 26).
func TestConvertHTMLTooDeep(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"in/deep.html": "<html><body>" + strings.Repeat("<div>", 100000) + "text" + "</body></html>",
	})
	code, out, errOut := runVibe(t, nil, "--workspace", dir, "convert", filepath.Join(dir, "in"), "-o", filepath.Join(dir, "out"))
	all := out + errOut
	if code == 0 || !strings.Contains(all, "nested more than 512 deep") || !strings.Contains(all, "deeper than any real page") || strings.Contains(all, "truncated or damaged") {
		t.Fatalf("exit %d:\n%s", code, all)
	}
}
