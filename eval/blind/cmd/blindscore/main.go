// Command blindscore scores one half of the blind themes against built skills, per language:
// routing, rule hit@k and passage recall@k, as `vibe eval` measures them.
//
//	go run ./eval/blind/cmd/blindscore -vibe bin/vibe -workspace WS -half dev shanghan chess
//
// WS is a vibe workspace in which each theme was built (see eval/blind/run.sh). For every
// language tag the half holds, the cases of that language are written to a temporary eval file
// (their YAML text unchanged) and `vibe eval THEME --file F --format json` runs on it; the table
// (Markdown) goes to standard output. The test half is scored only once the constants are fixed
// (eval/blind/README.md).
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	"github.com/vibelife/vibe/eval/agenteval"
	"github.com/vibelife/vibe/eval/blind"
)

func main() {
	bin := flag.String("vibe", "bin/vibe", "the vibe binary")
	ws := flag.String("workspace", ".", "the workspace the themes were built in")
	half := flag.String("half", "dev", "dev or test")
	dir := flag.String("evaldir", "eval/blind", "the folder holding THEME/{dev,test}.yaml")
	flag.Parse()
	if *half != "dev" && *half != "test" {
		fmt.Fprintln(os.Stderr, "blindscore: -half must be dev or test")
		os.Exit(2)
	}
	if flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: blindscore -vibe BIN -workspace WS -half dev|test THEME...")
		os.Exit(2)
	}
	fmt.Println("| theme | half | language | cases | routing | rule hit@3 | passage recall@5 | passage MRR@10 |")
	fmt.Println("|---|---|---|---:|---:|---:|---:|---:|")
	for _, theme := range flag.Args() {
		rows, err := score(*bin, *ws, filepath.Join(*dir, theme, *half+".yaml"), theme)
		if err != nil {
			fmt.Fprintln(os.Stderr, "blindscore:", err)
			os.Exit(1)
		}
		for _, r := range rows {
			fmt.Printf("| %s | %s | %s | %d | %s | %s | %s | %s |\n", theme, *half, r.lang, r.cases,
				r.cell("routing"), r.cell("rule_hit"), r.cell("passage_recall"), r.cell("passage_mrr"))
		}
	}
}

type row struct {
	lang     string
	cases    int
	measures map[string]measure
}

type measure struct {
	Name  string  `json:"name"`
	Value float64 `json:"value"`
	N     int     `json:"n"`
}

func (r row) cell(name string) string {
	m, ok := r.measures[name]
	if !ok || m.N == 0 {
		return "–"
	}
	return fmt.Sprintf("%.2f (%d)", m.Value, m.N)
}

func score(bin, ws, path, theme string) ([]row, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	f, err := agenteval.Parse(path, b)
	if err != nil {
		return nil, err
	}
	head, blocks, err := blind.CaseBlocks(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(blocks) != len(f.Cases) {
		return nil, fmt.Errorf("%s: found %d case blocks for %d cases", path, len(blocks), len(f.Cases))
	}
	byLang := map[string][]string{}
	for i, c := range f.Cases {
		s, err := blind.Stratum(c)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		lang := strings.SplitN(s, "/", 2)[0]
		byLang[lang] = append(byLang[lang], blocks[i])
		byLang["all"] = append(byLang["all"], blocks[i])
	}
	langs := make([]string, 0, len(byLang))
	for l := range byLang {
		if l != "all" {
			langs = append(langs, l)
		}
	}
	sort.Strings(langs)
	langs = append(langs, "all")
	tmp, err := os.MkdirTemp("", "blindscore")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	absBin, err := filepath.Abs(bin)
	if err != nil {
		return nil, err
	}
	var rows []row
	for _, l := range langs {
		file := filepath.Join(tmp, theme+"-"+l+".yaml")
		if err := os.WriteFile(file, []byte(head+strings.Join(byLang[l], "")), 0o644); err != nil {
			return nil, err
		}
		out := filepath.Join(tmp, theme+"-"+l+".json")
		cmd := exec.Command(absBin, "eval", theme, "--file", file, "--format", "json", "--output", out)
		cmd.Dir = ws
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			var ee *exec.ExitError
			// Exit 1 is a measure below its threshold: the report is still written.
			if !errors.As(err, &ee) || ee.ExitCode() != 1 {
				return nil, fmt.Errorf("vibe eval %s (%s): %v: %s", theme, l, err, stderr.String())
			}
		}
		jb, err := os.ReadFile(out)
		if err != nil {
			return nil, fmt.Errorf("vibe eval %s (%s) wrote no report: %v: %s", theme, l, err, stderr.String())
		}
		var rep struct {
			Measures []measure `json:"measures"`
		}
		if err := json.Unmarshal(jb, &rep); err != nil {
			return nil, fmt.Errorf("%s: %w", out, err)
		}
		r := row{lang: l, cases: len(byLang[l]), measures: map[string]measure{}}
		for _, m := range rep.Measures {
			r.measures[m.Name] = m
		}
		rows = append(rows, r)
	}
	return rows, nil
}
