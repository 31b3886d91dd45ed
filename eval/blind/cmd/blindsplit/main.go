// Command blindsplit splits a theme's pool of blind eval cases into dev.yaml and test.yaml with
// blind.Split, copying each case's YAML text unchanged (comments between cases are dropped; the
// comments before `cases:` head both files).
//
//	go run ./eval/blind/cmd/blindsplit POOL.yaml eval/blind/THEME
//
// The pool is not kept: the union of dev.yaml and test.yaml is the pool, and
// eval/blind's TestSplitReproduces checks that splitting that union again gives the same halves.
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/vibelife/vibe/eval/agenteval"
	"github.com/vibelife/vibe/eval/blind"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: blindsplit POOL.yaml OUTDIR")
		os.Exit(2)
	}
	if err := run(os.Args[1], os.Args[2]); err != nil {
		fmt.Fprintln(os.Stderr, "blindsplit:", err)
		os.Exit(1)
	}
}

func run(pool, out string) error {
	b, err := os.ReadFile(pool)
	if err != nil {
		return err
	}
	f, err := agenteval.Parse(pool, b)
	if err != nil {
		return err
	}
	dev, test, err := blind.Split(f.Cases, blind.Seed)
	if err != nil {
		return err
	}
	head, blocks, err := blind.CaseBlocks(b)
	if err != nil {
		return fmt.Errorf("%s: %w", pool, err)
	}
	if len(blocks) != len(f.Cases) {
		return fmt.Errorf("%s: found %d case blocks for %d cases", pool, len(blocks), len(f.Cases))
	}
	half := map[string]string{}
	for _, id := range dev {
		half[id] = "dev"
	}
	for _, id := range test {
		half[id] = "test"
	}
	for _, h := range []struct{ name, note string }{
		{"dev", "# This is the DEV half: tune on it freely."},
		{"test", "# This is the TEST half: never tune on it, never read its results while tuning."},
	} {
		var sb strings.Builder
		sb.WriteString(h.note + "\n")
		sb.WriteString(head)
		for i, c := range f.Cases {
			if half[c.ID] == h.name {
				sb.WriteString(blocks[i])
			}
		}
		path := filepath.Join(out, h.name+".yaml")
		if _, err := agenteval.Parse(path, []byte(sb.String())); err != nil {
			return err
		}
		if err := os.WriteFile(path, []byte(sb.String()), 0o644); err != nil {
			return err
		}
	}
	fmt.Printf("%s: dev %d, test %d\n", out, len(dev), len(test))
	return nil
}
