package iostreams

import (
	"strings"
	"testing"
)

func TestProgressPlainLinesWithoutTTY(t *testing.T) {
	ios, _, _, errOut := Test()
	p := ios.NewProgress("convert", 2, false)
	p.Step("a.pdf")
	p.Step("b.epub")
	p.Done()
	want := "convert: [1/2] a.pdf\nconvert: [2/2] b.epub\n"
	if errOut.String() != want {
		t.Fatalf("got %q, want %q", errOut.String(), want)
	}
}

func TestProgressBarOnTTY(t *testing.T) {
	ios, _, _, errOut := Test()
	ios.SetTTY(false, true)
	p := ios.NewProgress("ingest", 1, false)
	p.Step("x.md")
	p.Done()
	if !strings.Contains(errOut.String(), "█") || !strings.Contains(errOut.String(), "ingest: 1/1") {
		t.Fatalf("no bar drawn: %q", errOut.String())
	}
}

func TestProgressQuiet(t *testing.T) {
	ios, _, _, errOut := Test()
	p := ios.NewProgress("x", 1, true)
	p.Step("a")
	p.Done()
	if errOut.Len() != 0 {
		t.Fatalf("quiet progress wrote %q", errOut.String())
	}
}
