package storetest

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/vibelife/vibe/convert"
)

// WriteConverted writes knowledge/<theme>/converted/<name>.md under root as
// vibe convert would, with body as its Markdown and quality.garbled set as
// given, for ingest tests.
func WriteConverted(tb testing.TB, root, theme, name, body string, garbled bool) {
	tb.Helper()
	data, err := convert.Render(convert.Document{
		Source: "knowledge/" + theme + "/source/" + name + ".txt", Format: "txt", Title: name,
		Converter: convert.Version, Quality: convert.Quality{Garbled: garbled}, Markdown: body,
	})
	if err != nil {
		tb.Fatal(err)
	}
	p := filepath.Join(root, "knowledge", theme, "converted", name+".md")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		tb.Fatal(err)
	}
}
