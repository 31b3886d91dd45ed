// Command qabench measures vibe's retrieval on public reading-comprehension
// sets in the SQuAD JSON format (CMRC 2018 dev for Chinese, SQuAD dev for
// English), rebuilt from their published files, which are never committed:
// every distinct context becomes a document of a fresh workspace
// (`vibe curate`, `vibe convert`, `vibe ingest`, offline), every question a
// query of `vibe search --batch`, and a hit is right when it comes from the
// question's context (ranks count distinct contexts: a context cut into
// several chunks counts once, at its best chunk). It prints MRR@10 and recall@1/@5 for the hybrid
// (default), lexical and vector modes, and for Okapi BM25 with default
// parameters (k1 1.2, b 0.75, Lucene idf) computed here with the product's
// tokenisation (knowledge/lexical), side by side: once over the whole
// contexts, once over the chunks vibe indexed (each context at its best
// chunk, as vibe's own modes are counted), which separates the ranking from
// the cutting of contexts into chunks.
//
//	go build -o /tmp/vibe ./cmd/vibe
//	go run ./bench/qabench -vibe /tmp/vibe -set zh=cmrc2018_dev.json -set en=dev-v2.0.json,test-v2.0.json
//
// Questions without an answer (SQuAD 2.0's unanswerable ones) are left out.
// A file given as CTX@QS takes its contexts from CTX and its questions' text
// from QS by question id (XQuAD's parallel files: -set
// en-over-zh=xquad.zh.json@xquad.en.json asks the English questions over the
// Chinese contexts).
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/vibelife/vibe/knowledge"
	"github.com/vibelife/vibe/knowledge/lexical"
	"github.com/vibelife/vibe/knowledge/sqlite"
)

type setFlag []string

func (s *setFlag) String() string     { return strings.Join(*s, " ") }
func (s *setFlag) Set(v string) error { *s = append(*s, v); return nil }

func main() {
	var sets setFlag
	flag.Var(&sets, "set", "NAME=FILE[,FILE...]: a SQuAD-format JSON set (repeatable); FILE as CTX@QS: contexts of CTX, questions of QS by id")
	vibe := flag.String("vibe", "vibe", "the vibe binary")
	work := flag.String("work", "", "work directory (default: a new temporary one)")
	max := flag.Int("max", 0, "use at most this many questions of each set (0: all), taken evenly")
	modes := flag.String("modes", "hybrid,lexical,vector", "vibe search modes to measure")
	calibrate := flag.Bool("calibrate", false, "also print MRR@10 of fusion with other constants (to stderr)")
	xapianScript := flag.String("xapian", filepath.Join("bench", "qabench", "xapian_rank.py"), "the Xapian BM25 ranker (empty: no Xapian anchor)")
	python := flag.String("python", "/usr/bin/python3", "the Python holding Debian's python3-xapian")
	flag.Parse()
	if len(sets) == 0 {
		fmt.Fprintln(os.Stderr, "qabench: give at least one -set NAME=FILE (e.g. -set zh=cmrc2018_dev.json)")
		os.Exit(2)
	}
	if *work == "" {
		d, err := os.MkdirTemp("", "vibe-qabench-")
		if err != nil {
			fail(err)
		}
		*work = d
	}
	fmt.Printf("| set | contexts | questions | mode | MRR@10 | recall@1 | recall@5 |\n|---|---:|---:|---|---:|---:|---:|\n")
	for _, s := range sets {
		name, files, ok := strings.Cut(s, "=")
		if !ok || name == "" || files == "" {
			fail(fmt.Errorf("-set %q: want NAME=FILE[,FILE...]", s))
		}
		if err := runSet(context.Background(), *vibe, filepath.Join(*work, name), name, strings.Split(files, ","), *max, strings.Split(*modes, ","), *calibrate, anchor{*python, *xapianScript}); err != nil {
			fail(fmt.Errorf("set %s: %w", name, err))
		}
	}
	fmt.Fprintf(os.Stderr, "workspaces in %s\n", *work)
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "qabench:", err)
	os.Exit(1)
}

// squad is the part of the SQuAD JSON format the bench reads.
type squad struct {
	Data []struct {
		Paragraphs []struct {
			Context string `json:"context"`
			QAs     []struct {
				ID       any    `json:"id"`
				Question string `json:"question"`
				Answers  []struct {
					Text string `json:"text"`
				} `json:"answers"`
				Impossible bool `json:"is_impossible"`
			} `json:"qas"`
		} `json:"paragraphs"`
	} `json:"data"`
}

type question struct {
	id, text string
	doc      int
}

// readSquad reads one SQuAD-format file.
func readSquad(f string) (squad, error) {
	var s squad
	b, err := os.ReadFile(f)
	if err != nil {
		return s, err
	}
	if err := json.Unmarshal(b, &s); err != nil {
		return s, fmt.Errorf("%s: not SQuAD JSON: %w", f, err)
	}
	return s, nil
}

// load reads the contexts and answerable questions of files. A file given
// as CTX@QS takes its contexts from CTX and each question's text from the
// question of the same id in QS (a parallel translation, as XQuAD's files
// are: English questions over Chinese contexts).
func load(files []string) (docs []string, qs []question, err error) {
	at := map[string]int{}
	for _, f := range files {
		f, other, cross := strings.Cut(f, "@")
		s, err := readSquad(f)
		if err != nil {
			return nil, nil, err
		}
		var asked map[string]string
		if cross {
			o, err := readSquad(other)
			if err != nil {
				return nil, nil, err
			}
			asked = map[string]string{}
			for _, a := range o.Data {
				for _, p := range a.Paragraphs {
					for _, q := range p.QAs {
						asked[fmt.Sprint(q.ID)] = q.Question
					}
				}
			}
		}
		for _, a := range s.Data {
			for _, p := range a.Paragraphs {
				c := strings.TrimSpace(p.Context)
				if c == "" {
					continue
				}
				d, ok := at[c]
				if !ok {
					d = len(docs)
					at[c] = d
					docs = append(docs, c)
				}
				for _, q := range p.QAs {
					if q.Impossible || len(q.Answers) == 0 || strings.TrimSpace(q.Question) == "" {
						continue
					}
					text := q.Question
					if cross {
						t, ok := asked[fmt.Sprint(q.ID)]
						if !ok {
							return nil, nil, fmt.Errorf("%s: question %v is not in %s", f, q.ID, other)
						}
						text = t
					}
					if strings.TrimSpace(text) == "" {
						continue
					}
					qs = append(qs, question{id: fmt.Sprintf("q%d", len(qs)), text: strings.TrimSpace(text), doc: d})
				}
			}
		}
	}
	if len(docs) == 0 || len(qs) == 0 {
		return nil, nil, errors.New("no contexts or no answerable questions")
	}
	return docs, qs, nil
}

func docName(i int) string { return fmt.Sprintf("c%05d", i) }

// anchor is the Xapian BM25 ranker: a Python with python3-xapian and
// xapian_rank.py (script empty: none).
type anchor struct{ python, script string }

func runSet(ctx context.Context, vibe, ws, name string, files []string, max int, modes []string, calibrate bool, xa anchor) error {
	docs, qs, err := load(files)
	if err != nil {
		return err
	}
	if max > 0 && len(qs) > max {
		step := float64(len(qs)) / float64(max)
		var keep []question
		for i := 0; i < max; i++ {
			keep = append(keep, qs[int(float64(i)*step)])
		}
		qs = keep
	}
	if err := build(ctx, vibe, ws, docs); err != nil {
		return err
	}
	batch := filepath.Join(ws, "questions.jsonl")
	f, err := os.Create(batch)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(f)
	for _, q := range qs {
		if err := enc.Encode(map[string]string{"id": q.id, "query": q.text}); err != nil {
			return err
		}
	}
	if err := f.Close(); err != nil {
		return err
	}
	for _, mode := range modes {
		if mode == "" {
			continue
		}
		start := time.Now()
		hits, err := searchHits(ctx, vibe, ws, batch, mode, 10, qs)
		if err != nil {
			return fmt.Errorf("mode %s: %w", mode, err)
		}
		report(name, len(docs), len(qs), mode, docRanks(hits, qs))
		fmt.Fprintf(os.Stderr, "%s %s: %s\n", name, mode, time.Since(start).Round(time.Second))
	}
	if calibrate {
		// Fusion of the two sides' 50 candidates with other constants
		// (the near-duplicate collapse aside, what a hybrid search with
		// them would return).
		lex, err := cachedHits(ctx, vibe, ws, batch, "lexical", qs)
		if err != nil {
			return err
		}
		vec, err := cachedHits(ctx, vibe, ws, batch, "vector", qs)
		if err != nil {
			return err
		}
		for _, k := range []float64{5, 10, 20, 60} {
			for _, wv := range []float64{0, 0.1, 0.2, 0.25, 0.3, 0.4, 0.5} {
				fused := make([][]hit, len(qs))
				for i := range qs {
					fused[i] = fuse(lex[i], vec[i], k, 1, wv)
				}
				fmt.Fprintf(os.Stderr, "calibrate %s: k %g, vector weight %.2f: MRR@10 %.4f\n", name, k, wv, mrr(docRanks(fused, qs)))
			}
		}
		// A vector weight w0 scaled by the lexical list's flatness (tau
		// 0), or gated: w0 when the list's confidence is below tau, else
		// 0 (the fusion vibe used before its hybrid search reranked by
		// proximity: k 10, w0 0.5, tau 0.5).
		for _, k := range []float64{10, 20} {
			for _, w0 := range []float64{0.3, 0.5} {
				for _, tau := range []float64{0, 0.2, 0.3, 0.4, 0.5, 0.7} {
					fused := make([][]hit, len(qs))
					for i := range qs {
						wv := w0 * (1 - confidence(lex[i]))
						if tau > 0 {
							wv = w0
							if confidence(lex[i]) >= tau {
								wv = 0
							}
						}
						fused[i] = fuse(lex[i], vec[i], k, 1, wv)
					}
					fmt.Fprintf(os.Stderr, "calibrate %s: adaptive k %g w0 %.2f tau %.1f: MRR@10 %.4f\n", name, k, w0, tau, mrr(docRanks(fused, qs)))
				}
			}
		}
		// The better of the two rankings for each question, chosen
		// knowing the answer: about the ceiling of any fusion of them.
		lr, vr := docRanks(lex, qs), docRanks(vec, qs)
		best := make([]int, len(qs))
		lexOnly, vecOnly := 0, 0
		for i := range qs {
			best[i] = lr[i]
			if vr[i] > 0 && (lr[i] == 0 || vr[i] < lr[i]) {
				best[i] = vr[i]
			}
			switch {
			case lr[i] == 1 && vr[i] != 1:
				lexOnly++
			case vr[i] == 1 && lr[i] != 1:
				vecOnly++
			}
		}
		fmt.Fprintf(os.Stderr, "calibrate %s: better of lexical and vector per question: MRR@10 %.4f; first only lexically %d, only by vector %d\n", name, mrr(best), lexOnly, vecOnly)
		for _, wv := range []float64{0.05, 0.1, 0.2, 0.3, 0.5, 1} {
			fused := make([][]hit, len(qs))
			for i := range qs {
				fused[i] = convex(lex[i], vec[i], wv)
			}
			fmt.Fprintf(os.Stderr, "calibrate %s: convex, vector weight %.2f: MRR@10 %.4f\n", name, wv, mrr(docRanks(fused, qs)))
		}
	}
	whole := make([]int, len(docs))
	for i := range whole {
		whole[i] = i
	}
	report(name, len(docs), len(qs), "BM25 (k1 1.2, b 0.75)", bm25Ranks(docs, whole, qs))
	if xa.script != "" {
		ranks, err := xapianRanks(ctx, xa, filepath.Join(ws, "xapian"), docs, whole, qs)
		if err != nil {
			return err
		}
		report(name, len(docs), len(qs), "Xapian BM25 (defaults: k1 1, b 0.5)", ranks)
	}
	texts, of, err := chunkUnits(ctx, ws)
	if err != nil {
		return err
	}
	report(name, len(docs), len(qs), fmt.Sprintf("BM25 over vibe's %d chunks", len(texts)), bm25Ranks(texts, of, qs))
	return nil
}

// vibeCmd runs the vibe binary offline in workspace ws.
func vibeCmd(ctx context.Context, vibe, ws string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, vibe, append([]string{"-w", ws, "--quiet"}, args...)...)
	cmd.Env = append(os.Environ(), "VIBE_LLM_PROVIDER=offline")
	cmd.Stderr = os.Stderr
	return cmd
}

// buildVersion is recorded with a built workspace; a workspace built by an
// older bench is rebuilt.
const buildVersion = "2"

// curateYAML is the theme's curate.yaml: every context is a document, short
// ones included (curate's default drops texts under 200 characters, which
// would leave the questions on them unanswerable by vibe while the bench's
// BM25 still indexes their contexts).
const curateYAML = "sources:\n  - books\nquality:\n  min_chars: 1\n"

// build writes each context as a document and ingests them as theme qa,
// unless the workspace already holds them, and checks that every context
// became a document.
func build(ctx context.Context, vibe, ws string, docs []string) error {
	stamp := filepath.Join(ws, "built")
	want := buildVersion + " " + strconv.Itoa(len(docs))
	if b, err := os.ReadFile(stamp); err == nil && string(b) == want {
		return nil
	}
	books := filepath.Join(ws, "books")
	if err := os.RemoveAll(ws); err != nil {
		return err
	}
	if err := os.MkdirAll(books, 0o755); err != nil {
		return err
	}
	for i, d := range docs {
		if err := os.WriteFile(filepath.Join(books, docName(i)+".md"), []byte(d+"\n"), 0o644); err != nil {
			return err
		}
	}
	theme := filepath.Join(ws, "knowledge", "qa")
	if err := os.MkdirAll(theme, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(theme, "curate.yaml"), []byte(curateYAML), 0o644); err != nil {
		return err
	}
	for _, args := range [][]string{{"curate", "qa"}, {"convert", "qa"}, {"ingest", "qa"}} {
		if err := vibeCmd(ctx, vibe, ws, args...).Run(); err != nil {
			return fmt.Errorf("vibe %s: %w", strings.Join(args, " "), err)
		}
	}
	conv, err := os.ReadDir(filepath.Join(theme, "converted"))
	if err != nil {
		return err
	}
	n := 0
	for _, e := range conv {
		if strings.HasSuffix(e.Name(), ".md") {
			n++
		}
	}
	if n != len(docs) {
		return fmt.Errorf("%d contexts but %d converted documents: see %s", len(docs), n, filepath.Join(theme, "source", "sources.lock.json"))
	}
	return os.WriteFile(stamp, []byte(want), 0o644)
}

// hit is one search hit: its chunk and the context it comes from.
type hit struct {
	chunk string
	doc   int
	// score is the side's score (lexical: BM25, higher better; vector:
	// cosine).
	score float64
}

// searchHits runs the batch in one mode and returns each question's top k
// hits.
func searchHits(ctx context.Context, vibe, ws, batch, mode string, k int, qs []question) ([][]hit, error) {
	cmd := vibeCmd(ctx, vibe, ws, "search", "qa", "--batch", batch, "--mode", mode, "-k", strconv.Itoa(k))
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	byID := map[string]int{}
	for i, q := range qs {
		byID[q.id] = i
	}
	hits := make([][]hit, len(qs))
	seen := 0
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var line struct {
			ID   string `json:"id"`
			Hits []struct {
				Chunk   string  `json:"chunk"`
				Source  string  `json:"source"`
				Lexical float64 `json:"lexical_score"`
				Vector  float64 `json:"vector_score"`
			} `json:"hits"`
		}
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			return nil, fmt.Errorf("vibe search output: %w", err)
		}
		i, ok := byID[line.ID]
		if !ok {
			return nil, fmt.Errorf("vibe search output: unknown id %q", line.ID)
		}
		seen++
		for _, h := range line.Hits {
			d, err := strconv.Atoi(strings.TrimPrefix(strings.TrimSuffix(filepath.Base(h.Source), filepath.Ext(h.Source)), "c"))
			if err != nil {
				return nil, fmt.Errorf("vibe search output: hit from %q, not a context of the set", h.Source)
			}
			hits[i] = append(hits[i], hit{h.Chunk, d, h.Lexical + h.Vector})
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if err := cmd.Wait(); err != nil {
		return nil, err
	}
	if seen != len(qs) {
		return nil, fmt.Errorf("vibe search answered %d of %d questions", seen, len(qs))
	}
	return hits, nil
}

// cachedHits is searchHits at k 50, kept in the workspace for the next
// calibration run.
func cachedHits(ctx context.Context, vibe, ws, batch, mode string, qs []question) ([][]hit, error) {
	type jh struct {
		C string
		D int
		S float64
	}
	path := filepath.Join(ws, "cand-"+mode+".json")
	if b, err := os.ReadFile(path); err == nil {
		var raw [][]jh
		if json.Unmarshal(b, &raw) == nil && len(raw) == len(qs) {
			out := make([][]hit, len(raw))
			for i, hs := range raw {
				for _, h := range hs {
					out[i] = append(out[i], hit{h.C, h.D, h.S})
				}
			}
			return out, nil
		}
	}
	hits, err := searchHits(ctx, vibe, ws, batch, mode, 50, qs)
	if err != nil {
		return nil, err
	}
	raw := make([][]jh, len(hits))
	for i, hs := range hits {
		raw[i] = []jh{}
		for _, h := range hs {
			raw[i] = append(raw[i], jh{h.chunk, h.doc, h.score})
		}
	}
	b, _ := json.Marshal(raw)
	return hits, os.WriteFile(path, b, 0o644)
}

// docRanks returns, per question, the 1-based rank of its context among the
// distinct contexts of its hits, within the first 10 (0: not there): a
// context cut into several chunks counts once, at its best chunk, as in a
// document-retrieval benchmark.
func docRanks(hits [][]hit, qs []question) []int {
	ranks := make([]int, len(qs))
	for i, hs := range hits {
		seen := map[int]bool{}
		for _, h := range hs {
			if seen[h.doc] {
				continue
			}
			seen[h.doc] = true
			if len(seen) > 10 {
				break
			}
			if h.doc == qs[i].doc {
				ranks[i] = len(seen)
				break
			}
		}
	}
	return ranks
}

// fuse is weighted reciprocal rank fusion with the given constants (what
// vibe's hybrid search did before it reranked by proximity), for calibration: each side's hits, best first; hits of score 0
// (found by the vector side alone, at weight 0) follow in the vector order.
func fuse(lex, vec []hit, k, wl, wv float64) []hit {
	score := map[string]float64{}
	doc := map[string]int{}
	vrank := map[string]int{}
	for i, h := range lex {
		score[h.chunk] += wl / (k + float64(i+1))
		doc[h.chunk] = h.doc
	}
	for i, h := range vec {
		score[h.chunk] += wv / (k + float64(i+1))
		doc[h.chunk] = h.doc
		vrank[h.chunk] = i + 1
	}
	out := make([]hit, 0, len(score))
	for c := range score {
		out = append(out, hit{chunk: c, doc: doc[c]})
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i].chunk, out[j].chunk
		switch {
		case score[a] != score[b]:
			return score[a] > score[b]
		case score[a] == 0 && vrank[a] != vrank[b]:
			return vrank[a] < vrank[b]
		}
		return a < b
	})
	return out
}

// convex fuses by scores: each side's score divided by its best score for
// the query, the vector side weighted wv; a chunk one side did not return
// gets nothing from it.
func convex(lex, vec []hit, wv float64) []hit {
	score := map[string]float64{}
	doc := map[string]int{}
	if len(lex) > 0 && lex[0].score > 0 {
		for _, h := range lex {
			score[h.chunk] += h.score / lex[0].score
			doc[h.chunk] = h.doc
		}
	}
	if len(vec) > 0 && vec[0].score > 0 {
		for _, h := range vec {
			score[h.chunk] += wv * h.score / vec[0].score
			doc[h.chunk] = h.doc
		}
	}
	out := make([]hit, 0, len(score))
	for c := range score {
		out = append(out, hit{chunk: c, doc: doc[c]})
	}
	sort.Slice(out, func(i, j int) bool {
		if score[out[i].chunk] != score[out[j].chunk] {
			return score[out[i].chunk] > score[out[j].chunk]
		}
		return out[i].chunk < out[j].chunk
	})
	return out
}

// confidence is knowledge.LexicalConfidence: how far the lexical side's best
// hit stands above its tenth (0: a flat list, 1: one clear match).
func confidence(lex []hit) float64 {
	if len(lex) == 0 || lex[0].score <= 0 {
		return 0
	}
	last := lex[min(len(lex), knowledge.ConfidenceDepth)-1].score
	return (lex[0].score - last) / lex[0].score
}

func mrr(ranks []int) float64 {
	s := 0.0
	for _, r := range ranks {
		if r > 0 {
			s += 1 / float64(r)
		}
	}
	return s / float64(len(ranks))
}

// chunkUnits returns the text of every chunk vibe indexed in workspace ws
// and the context each comes from, in chunk order.
func chunkUnits(ctx context.Context, ws string) (texts []string, docs []int, err error) {
	st, err := sqlite.Open(ctx, filepath.Join(ws, ".vibe", "vibe.db"))
	if err != nil {
		return nil, nil, err
	}
	defer st.Close()
	chunks, err := st.Chunks(ctx, "qa")
	if err != nil {
		return nil, nil, err
	}
	for _, c := range chunks {
		d, err := strconv.Atoi(strings.TrimPrefix(strings.TrimSuffix(filepath.Base(c.Source), filepath.Ext(c.Source)), "c"))
		if err != nil {
			return nil, nil, fmt.Errorf("chunk %s from %q, not a context of the set", c.ID, c.Source)
		}
		texts = append(texts, c.Text)
		docs = append(docs, d)
	}
	return texts, docs, nil
}

// bm25Ranks ranks the contexts for each question with Okapi BM25 (k1 1.2,
// b 0.75, idf ln(1 + (N-df+0.5)/(df+0.5))) over the product's tokens:
// lexical.Tokens for the units, lexical.QueryTokens for the questions. A
// unit is a text of context unitDoc[i]; a context's rank is that of its best
// unit among distinct contexts. Ties break by unit order.
func bm25Ranks(units []string, unitDoc []int, qs []question) []int {
	const k1, b = 1.2, 0.75
	type posting struct{ unit, tf int }
	postings := map[string][]posting{}
	lengths := make([]float64, len(units))
	total := 0.0
	for i, d := range units {
		tf := map[string]int{}
		toks := lexical.Tokens(d)
		for _, t := range toks {
			tf[t]++
		}
		for t, n := range tf {
			postings[t] = append(postings[t], posting{i, n})
		}
		lengths[i] = float64(len(toks))
		total += lengths[i]
	}
	avg := total / float64(len(units))
	n := float64(len(units))
	ranks := make([]int, len(qs))
	scores := make([]float64, len(units))
	for qi, q := range qs {
		for i := range scores {
			scores[i] = 0
		}
		var touched []int
		for _, t := range lexical.QueryTokens(q.text) {
			ps := postings[t]
			idf := math.Log(1 + (n-float64(len(ps))+0.5)/(float64(len(ps))+0.5))
			for _, p := range ps {
				if scores[p.unit] == 0 {
					touched = append(touched, p.unit)
				}
				tf := float64(p.tf)
				scores[p.unit] += idf * tf * (k1 + 1) / (tf + k1*(1-b+b*lengths[p.unit]/avg))
			}
		}
		sort.Slice(touched, func(i, j int) bool {
			if scores[touched[i]] != scores[touched[j]] {
				return scores[touched[i]] > scores[touched[j]]
			}
			return touched[i] < touched[j]
		})
		seen := map[int]bool{}
		for _, u := range touched {
			d := unitDoc[u]
			if seen[d] {
				continue
			}
			seen[d] = true
			if len(seen) > 10 {
				break
			}
			if d == q.doc {
				ranks[qi] = len(seen)
				break
			}
		}
	}
	return ranks
}

func report(set string, docs, n int, mode string, ranks []int) {
	var mrr, r1, r5 float64
	for _, r := range ranks {
		if r > 0 && r <= 10 {
			mrr += 1 / float64(r)
		}
		if r == 1 {
			r1++
		}
		if r > 0 && r <= 5 {
			r5++
		}
	}
	N := float64(len(ranks))
	fmt.Printf("| %s | %d | %d | %s | %.4f | %.4f | %.4f |\n", set, docs, n, mode, mrr/N, r1/N, r5/N)
}

// xapianRanks ranks the units for each question with Xapian's BM25Weight at
// its defaults (xapian_rank.py in a child process), over the product's
// tokens as bm25Ranks does; a context's rank is that of its best unit among
// distinct contexts.
func xapianRanks(ctx context.Context, xa anchor, dir string, units []string, unitDoc []int, qs []question) ([]int, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var docs, queries strings.Builder
	for _, u := range units {
		docs.WriteString(strings.Join(lexical.Tokens(u), " "))
		docs.WriteByte('\n')
	}
	for _, q := range qs {
		queries.WriteString(strings.Join(lexical.QueryTokens(q.text), " "))
		queries.WriteByte('\n')
	}
	dp, qp := filepath.Join(dir, "docs.txt"), filepath.Join(dir, "queries.txt")
	if err := os.WriteFile(dp, []byte(docs.String()), 0o644); err != nil {
		return nil, err
	}
	if err := os.WriteFile(qp, []byte(queries.String()), 0o644); err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, xa.python, xa.script, dp, qp, filepath.Join(dir, "db"))
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("xapian: %w (python3-xapian installed? bench/run.sh qa installs it)", err)
	}
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(lines) != len(qs) {
		return nil, fmt.Errorf("xapian answered %d of %d questions", len(lines), len(qs))
	}
	ranks := make([]int, len(qs))
	for qi, line := range lines {
		seen := map[int]bool{}
		for _, f := range strings.Fields(line) {
			u, err := strconv.Atoi(f)
			if err != nil || u < 0 || u >= len(units) {
				return nil, fmt.Errorf("xapian output line %d: %q is not a unit", qi+1, f)
			}
			d := unitDoc[u]
			if seen[d] {
				continue
			}
			seen[d] = true
			if len(seen) > 10 {
				break
			}
			if d == qs[qi].doc {
				ranks[qi] = len(seen)
				break
			}
		}
	}
	return ranks, nil
}
