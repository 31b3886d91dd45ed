// Command convertbench measures vibe's converters against the reference tools
// (pdftotext for PDF, pandoc for EPUB/DOCX, the expected main content for
// HTML): token F1 and wall-clock time per file, summed per format. With
// -pdfium it also measures the go-pdfium WebAssembly engine's plain page text
// on every PDF, so the PDF engine can be chosen by measurement.
//
// The references get the cleaning vibe applies by design, as the fidelity
// tests do: passages a document repeats word for word are kept once
// (convert.DropRepeatedPassages; pandoc keeps every copy), and MediaWiki's
// "[edit]" links leave the headings (convert.RemoveHeadingChrome). The score
// against the uncleaned reference is printed as "raw F1".
//
// Usage: go run ./bench/convertbench [-pdfium] [-vibe PATH] CORPUS_DIR
//
// With -vibe, files are converted by the standalone CLI
// (`vibe convert FILE -o DIR`) instead of the convert package in-process.
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"
	"unicode"

	"golang.org/x/net/html"

	"github.com/klippa-app/go-pdfium"
	"github.com/klippa-app/go-pdfium/requests"
	"github.com/klippa-app/go-pdfium/webassembly"

	"github.com/vibelife/vibe/convert"
	"github.com/vibelife/vibe/internal/textmetric"
)

var reMarkdownSyntax = regexp.MustCompile(`(?m)^#{1,6} |\*\*|__|\[|\]\([^)]*\)|^\s*[-*] |^\s*\d+\. |\|`)

type result struct {
	format, file, engine string
	f1, raw              float64
	ours, ref            time.Duration
	err                  string
}

func main() {
	usePdfium := flag.Bool("pdfium", false, "also measure the go-pdfium WebAssembly engine on PDFs")
	vibeBin := flag.String("vibe", "", "convert with this vibe binary (`vibe convert FILE -o DIR`) instead of in-process")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: convertbench [-pdfium] [-vibe PATH] CORPUS_DIR")
		os.Exit(2)
	}
	if err := run(context.Background(), flag.Arg(0), *usePdfium, *vibeBin); err != nil {
		fmt.Fprintln(os.Stderr, "convertbench:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, corpus string, usePdfium bool, vibeBin string) error {
	var files []string
	for _, sub := range []string{"pdf", "docx", "epub", "html"} {
		m, _ := filepath.Glob(filepath.Join(corpus, sub, "*"))
		files = append(files, m...)
	}
	if len(files) == 0 {
		return fmt.Errorf("no pdf/docx/epub/html files under %s", corpus)
	}
	var pool pdfium.Pool
	var inst pdfium.Pdfium
	if usePdfium {
		start := time.Now()
		var err error
		pool, err = webassembly.Init(webassembly.Config{MinIdle: 1, MaxIdle: 1, MaxTotal: 1, Stdout: io.Discard, Stderr: io.Discard})
		if err != nil {
			return fmt.Errorf("pdfium init: %w", err)
		}
		defer pool.Close()
		inst, err = pool.GetInstance(time.Minute)
		if err != nil {
			return fmt.Errorf("pdfium instance: %w", err)
		}
		defer inst.Close()
		fmt.Printf("pdfium wasm runtime start-up (once per process): %s\n", time.Since(start).Round(time.Millisecond))
	}
	tmp, err := os.MkdirTemp("", "convertbench")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	// One pdfium engine for every in-process conversion, as `vibe convert`
	// has one for its run.
	engine := convert.NewPDFium(convert.PDFiumOptions{})
	defer engine.Close()
	convertOne := func(ctx context.Context, path, bin, tmp string) (string, error) {
		return convertFile(ctx, engine, path, bin, tmp)
	}

	// vibe's pdfium pool starts on the first PDF (compiling the wasm module,
	// or loading it from the compilation cache): measure that once, apart.
	for _, f := range files {
		if strings.HasSuffix(f, ".pdf") && !strings.Contains(f, "encrypted") {
			start := time.Now()
			convertOne(ctx, f, vibeBin, tmp)
			fmt.Printf("vibe first PDF incl. engine start-up (%s): %s\n", filepath.Base(f), time.Since(start).Round(time.Millisecond))
			break
		}
	}

	var results []result
	for _, f := range files {
		format := filepath.Base(filepath.Dir(f))
		ref, rawRef, refTime, refErr := reference(format, f, corpus)
		if refErr == nil && mojibake(ref) {
			refErr = fmt.Errorf("reference output is mojibake (not scored)")
		}
		if refErr != nil {
			results = append(results, result{format: format, file: filepath.Base(f), engine: "vibe", err: "reference: " + refErr.Error()})
			continue
		}
		start := time.Now()
		md, err := convertOne(ctx, f, vibeBin, tmp)
		r := result{format: format, file: filepath.Base(f), engine: "vibe", ours: time.Since(start), ref: refTime}
		if err != nil {
			r.err = oneLine(err.Error())
		} else {
			text := reMarkdownSyntax.ReplaceAllString(md, " ")
			r.f1, _, _ = textmetric.F1(text, ref)
			r.raw, _, _ = textmetric.F1(text, rawRef)
		}
		results = append(results, r)
		if usePdfium && format == "pdf" {
			start := time.Now()
			text, err := pdfiumText(inst, f)
			r := result{format: format, file: filepath.Base(f), engine: "pdfium-wasm", ours: time.Since(start), ref: refTime}
			if err != nil {
				r.err = oneLine(err.Error())
			} else {
				r.f1, _, _ = textmetric.F1(text, ref)
				r.raw, _, _ = textmetric.F1(text, rawRef)
			}
			results = append(results, r)
		}
	}

	fmt.Printf("%-6s %-12s %-50s %7s %7s %10s %10s %7s\n", "format", "engine", "file", "F1", "raw F1", "ours", "reference", "ratio")
	type agg struct {
		ours, ref time.Duration
		n         int
		f1        float64
	}
	per := map[string]*agg{}
	for _, r := range results {
		if r.err != "" {
			fmt.Printf("%-6s %-12s %-50s error: %s\n", r.format, r.engine, r.file, r.err)
			continue
		}
		fmt.Printf("%-6s %-12s %-50s %7.4f %7.4f %10s %10s %7.2f\n", r.format, r.engine, r.file, r.f1, r.raw,
			r.ours.Round(time.Millisecond), r.ref.Round(time.Millisecond), ratio(r.ours, r.ref))
		k := r.format + " " + r.engine
		if per[k] == nil {
			per[k] = &agg{}
		}
		a := per[k]
		a.ours += r.ours
		a.ref += r.ref
		a.n++
		a.f1 += r.f1
	}
	var keys []string
	for k := range per {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	fmt.Printf("\n%-20s %5s %8s %10s %10s %7s\n", "format engine", "files", "mean F1", "ours", "reference", "ratio")
	for _, k := range keys {
		a := per[k]
		fmt.Printf("%-20s %5d %8.4f %10s %10s %7.2f\n", k, a.n, a.f1/float64(a.n),
			a.ours.Round(time.Millisecond), a.ref.Round(time.Millisecond), ratio(a.ours, a.ref))
	}
	return nil
}

// mojibake reports whether more than a tenth of the letters are Latin-1
// supplement letters following each other: CJK bytes decoded as Latin-1.
func mojibake(s string) bool {
	letters, bad := 0, 0
	prev := false
	for _, r := range s {
		if !unicode.IsLetter(r) {
			prev = false
			continue
		}
		letters++
		cur := r >= 0xA0 && r <= 0xFF
		if cur && prev {
			bad++
		}
		prev = cur
	}
	return letters > 0 && bad*10 > letters
}

func ratio(a, b time.Duration) float64 {
	if b <= 0 {
		return 0
	}
	return float64(a) / float64(b)
}

func oneLine(s string) string { return strings.ReplaceAll(s, "\n", " ") }

// convertFile converts one file in-process on engine, or with the vibe CLI
// when bin is set.
func convertFile(ctx context.Context, engine *convert.PDFium, path, bin, tmp string) (string, error) {
	if bin == "" {
		doc, err := convert.Convert(ctx, path, convert.Options{PDFium: engine})
		return doc.Markdown, err
	}
	out := filepath.Join(tmp, "out")
	os.RemoveAll(out)
	cmd := exec.CommandContext(ctx, bin, "convert", path, "-o", out)
	cmd.Dir = tmp // vibe refuses the repository as its workspace
	if msg, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("%v: %s", err, bytes.TrimSpace(msg))
	}
	name := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path)) + ".md"
	data, err := os.ReadFile(filepath.Join(out, name))
	if err != nil {
		return "", err
	}
	d, _, err := convert.Parse(data)
	if err != nil {
		return string(data), nil
	}
	return d.Markdown, nil
}

// reference runs the reference tool for a format and times it. It returns
// the reference cleaned as vibe cleans its own text (see the package
// comment) and the raw one.
func reference(format, path, corpus string) (ref, raw string, took time.Duration, err error) {
	start := time.Now()
	switch format {
	case "pdf":
		out, err := exec.Command("pdftotext", "-enc", "UTF-8", path, "-").Output()
		return string(out), string(out), time.Since(start), err
	case "docx", "epub":
		out, err := exec.Command("pandoc", "-t", "plain", "--wrap=none", path).Output()
		took := time.Since(start)
		once, _ := convert.DropRepeatedPassages(string(out))
		return once, string(out), took, err
	case "html":
		name := strings.TrimSuffix(filepath.Base(path), ".html") + ".expected.html"
		data, err := os.ReadFile(filepath.Join(corpus, "html-expected", name))
		if err != nil {
			return "", "", 0, err
		}
		root, err := html.Parse(bytes.NewReader(data))
		if err != nil {
			return "", "", 0, err
		}
		raw := htmlText(root)
		convert.RemoveHeadingChrome(root)
		return htmlText(root), raw, 0, nil
	}
	return "", "", 0, fmt.Errorf("no reference for %s", format)
}

// htmlText is the text of a parsed page, a space after each text node.
func htmlText(root *html.Node) string {
	var sb strings.Builder
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			sb.WriteString(n.Data)
			sb.WriteString(" ")
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(root)
	return sb.String()
}

// pdfiumText is pdfium's plain text of every page, pages separated by newlines.
func pdfiumText(inst pdfium.Pdfium, path string) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	doc, err := inst.OpenDocument(&requests.OpenDocument{File: &data})
	if err != nil {
		return "", err
	}
	defer inst.FPDF_CloseDocument(&requests.FPDF_CloseDocument{Document: doc.Document})
	n, err := inst.FPDF_GetPageCount(&requests.FPDF_GetPageCount{Document: doc.Document})
	if err != nil {
		return "", err
	}
	var sb strings.Builder
	for i := 0; i < n.PageCount; i++ {
		t, err := inst.GetPageText(&requests.GetPageText{Page: requests.Page{ByIndex: &requests.PageByIndex{Document: doc.Document, Index: i}}})
		if err != nil {
			return sb.String(), fmt.Errorf("page %d: %w", i+1, err)
		}
		sb.WriteString(t.Text)
		sb.WriteString("\n")
	}
	return sb.String(), nil
}
