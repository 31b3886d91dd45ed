package eval

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"os"
	"strings"

	"github.com/vibelife/vibe/chunk"
	"github.com/vibelife/vibe/knowledge"
)

// Question is one line of a question set.
type Question struct {
	ID    string `json:"id"`
	Query string `json:"query"`
	// Doc is a substring of the expected source file's name.
	Doc string `json:"doc"`
	// Heading is a substring of the expected chunk's innermost heading (the
	// document title when the chunk sits above every heading).
	Heading string `json:"heading"`
}

// LoadQuestions reads a JSONL question set. Ids must be unique.
func LoadQuestions(path string) ([]Question, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var qs []Question
	seen := map[string]int{}
	sc := bufio.NewScanner(f)
	line := 0
	for sc.Scan() {
		line++
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var q Question
		if err := json.Unmarshal(sc.Bytes(), &q); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, line, err)
		}
		if q.ID == "" || q.Query == "" || q.Doc == "" || q.Heading == "" {
			return nil, fmt.Errorf("%s:%d: id, query, doc and heading are required", path, line)
		}
		if prev, ok := seen[q.ID]; ok {
			return nil, fmt.Errorf("%s:%d: id %q already used on line %d", path, line, q.ID, prev)
		}
		seen[q.ID] = line
		qs = append(qs, q)
	}
	return qs, sc.Err()
}

// HeldOut reports whether q belongs to the held-out half of its set: a
// fixed split by a hash of the id, so that changes made while looking at
// the other half (the development half) can be checked on questions they
// were not made for.
func (q Question) HeldOut() bool {
	h := fnv.New32a()
	h.Write([]byte(q.ID))
	return h.Sum32()%2 == 1
}

// Split returns the development and held-out halves of qs.
func Split(qs []Question) (dev, heldOut []Question) {
	for _, q := range qs {
		if q.HeldOut() {
			heldOut = append(heldOut, q)
		} else {
			dev = append(dev, q)
		}
	}
	return dev, heldOut
}

// Relevant reports whether c is the section q expects: its source matches
// Doc and its innermost heading (or, above every heading, its document
// title) contains Heading.
func (q Question) Relevant(c chunk.Chunk) bool {
	if !strings.Contains(c.Source, q.Doc) {
		return false
	}
	inner := c.Title
	if n := len(c.HeadingPath); n > 0 {
		inner = c.HeadingPath[n-1]
	}
	return strings.Contains(inner, q.Heading)
}

// Searcher returns the best k chunks for a query, best first.
type Searcher interface {
	Search(ctx context.Context, query string, k int) ([]chunk.Chunk, error)
}

// Embedder embeds queries.
type Embedder interface {
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// StoreSearcher searches a theme of a knowledge store in one mode.
type StoreSearcher struct {
	Store    knowledge.Store
	Embedder Embedder
	Theme    string
	Mode     knowledge.SearchMode
}

// Search implements Searcher.
func (s StoreSearcher) Search(ctx context.Context, query string, k int) ([]chunk.Chunk, error) {
	var vec []float32
	if s.Mode != knowledge.SearchLexical {
		vs, err := s.Embedder.Embed(ctx, []string{query})
		if err != nil {
			return nil, err
		}
		vec = vs[0]
	}
	hits, err := s.Store.Search(ctx, knowledge.Query{Theme: s.Theme, Text: query, Vector: vec, K: k, Mode: s.Mode})
	if err != nil {
		return nil, err
	}
	out := make([]chunk.Chunk, len(hits))
	for i, h := range hits {
		out[i] = h.Chunk
	}
	return out, nil
}

// Scores are the quality figures of one searcher on one question set.
type Scores struct {
	N         int
	RecallAt5 float64
	// MRR is the mean reciprocal rank of the first relevant hit in the top
	// 10 (0 when none is).
	MRR float64
	// Ranks holds each question's rank of the first relevant hit (0: not in
	// the top 10), by question id.
	Ranks map[string]int
}

// Misses lists the ids of questions without a relevant hit in the top 5,
// in question order.
func (s Scores) Misses(qs []Question) []string {
	var out []string
	for _, q := range qs {
		if r, ok := s.Ranks[q.ID]; ok && (r == 0 || r > 5) {
			out = append(out, q.ID)
		}
	}
	return out
}

// Measure runs every question against s and scores the top 10.
func Measure(ctx context.Context, s Searcher, qs []Question) (Scores, error) {
	sc := Scores{N: len(qs), Ranks: map[string]int{}}
	for _, q := range qs {
		hits, err := s.Search(ctx, q.Query, 10)
		if err != nil {
			return sc, fmt.Errorf("%s: %w", q.ID, err)
		}
		rank := 0
		for i, c := range hits {
			if q.Relevant(c) {
				rank = i + 1
				break
			}
		}
		sc.Ranks[q.ID] = rank
		if rank > 0 {
			sc.MRR += 1 / float64(rank)
		}
		if rank > 0 && rank <= 5 {
			sc.RecallAt5++
		}
	}
	if n := float64(len(qs)); n > 0 {
		sc.RecallAt5 /= n
		sc.MRR /= n
	}
	return sc, nil
}

// Subset restricts s to the questions of qs (recomputing the means).
func (s Scores) Subset(qs []Question) Scores {
	out := Scores{N: len(qs), Ranks: map[string]int{}}
	for _, q := range qs {
		r := s.Ranks[q.ID]
		out.Ranks[q.ID] = r
		if r > 0 {
			out.MRR += 1 / float64(r)
		}
		if r > 0 && r <= 5 {
			out.RecallAt5++
		}
	}
	if n := float64(len(qs)); n > 0 {
		out.RecallAt5 /= n
		out.MRR /= n
	}
	return out
}
