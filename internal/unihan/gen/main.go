// Command gen writes internal/unihan/glosses.tsv.gz, vibe's built-in
// table of English glosses of Han characters, from the Unicode Han
// Database's Unihan_Readings.txt (plain or .bz2): each kept character's
// kDefinition cut into glosses (unihan.CleanDefinition). The output is
// deterministic: the same input gives the same bytes.
//
//	cd /tmp && apt-get download unicode-data && dpkg -x unicode-data_*.deb unihan
//	go run ./internal/unihan/gen -in /tmp/unihan/usr/share/unicode/Unihan_Readings.txt.bz2 -out internal/unihan/glosses.tsv.gz
package main

import (
	"bufio"
	"compress/bzip2"
	"compress/gzip"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/vibelife/vibe/internal/unihan"
)

func main() {
	in := flag.String("in", "", "Unihan_Readings.txt or Unihan_Readings.txt.bz2")
	out := flag.String("out", "glosses.tsv.gz", "the table to write")
	flag.Parse()
	if err := run(*in, *out); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

func run(in, out string) error {
	if in == "" {
		return fmt.Errorf("-in names Unihan_Readings.txt(.bz2) (Debian's unicode-data package)")
	}
	f, err := os.Open(in)
	if err != nil {
		return err
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(in, ".bz2") {
		r = bzip2.NewReader(f)
	}
	table, version, err := read(r)
	if err != nil {
		return fmt.Errorf("%s: %w", in, err)
	}
	if len(table) == 0 {
		return fmt.Errorf("%s: no kDefinition of a kept character", in)
	}
	runes := make([]rune, 0, len(table))
	for c := range table {
		runes = append(runes, c)
	}
	sort.Slice(runes, func(i, j int) bool { return runes[i] < runes[j] })
	tmp := out + ".tmp"
	w, err := os.Create(tmp)
	if err != nil {
		return err
	}
	zw, _ := gzip.NewWriterLevel(w, gzip.BestCompression)
	bw := bufio.NewWriter(zw)
	glosses := 0
	for _, c := range runes {
		fmt.Fprintf(bw, "%c\t%s\n", c, strings.Join(table[c], "|"))
		glosses += len(table[c])
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	if err := w.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, out); err != nil {
		return err
	}
	st, _ := os.Stat(out)
	fmt.Printf("%s: %d characters, %d glosses, %d bytes (Unicode %s)\n", out, len(runes), glosses, st.Size(), version)
	return nil
}

// read returns the cleaned glosses of each kept character with a
// kDefinition, and the Unicode version the file names.
func read(r io.Reader) (map[rune][]string, string, error) {
	table := map[rune][]string{}
	version := "?"
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		line := sc.Text()
		if v, ok := strings.CutPrefix(line, "# Unicode version: "); ok {
			version = strings.TrimSpace(v)
		}
		cp, rest, ok := strings.Cut(line, "\t")
		if !ok || !strings.HasPrefix(cp, "U+") {
			continue
		}
		field, value, ok := strings.Cut(rest, "\t")
		if !ok || field != "kDefinition" {
			continue
		}
		n, err := strconv.ParseUint(cp[2:], 16, 32)
		if err != nil {
			return nil, "", fmt.Errorf("code point %q: %w", cp, err)
		}
		c := rune(n)
		if !unihan.Kept(c) {
			continue
		}
		if gs := unihan.CleanDefinition(value); len(gs) > 0 {
			table[c] = gs
		}
	}
	return table, version, sc.Err()
}
