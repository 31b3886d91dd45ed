package eval

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/vibelife/vibe/knowledge"
)

// Question is one line of a question set.
type Question struct {
	ID    string `json:"id"`
	Query string `json:"query"`
	// Doc is a substring of the expected source file's name.
	Doc string `json:"doc"`
	// Heading is a substring of the expected chunk's innermost heading.
	Heading string `json:"heading"`
}

// LoadQuestions reads a JSONL question set.
func LoadQuestions(path string) ([]Question, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var qs []Question
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
		if q.Query == "" || q.Doc == "" || q.Heading == "" {
			return nil, fmt.Errorf("%s:%d: query, doc and heading are required", path, line)
		}
		qs = append(qs, q)
	}
	return qs, sc.Err()
}

// Relevant reports whether a hit is the section q expects.
func (q Question) Relevant(h knowledge.Hit) bool {
	hp := h.Chunk.HeadingPath
	return strings.Contains(h.Chunk.Source, q.Doc) && len(hp) > 0 && strings.Contains(hp[len(hp)-1], q.Heading)
}

// Scores are the quality figures of one search mode.
type Scores struct {
	Mode      knowledge.SearchMode
	RecallAt5 float64
	MRR       float64 // over the top 10
	Misses    []string
}

// Embedder embeds queries.
type Embedder interface {
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// Measure runs every question in mode against store.
func Measure(ctx context.Context, store knowledge.Store, emb Embedder, theme string, qs []Question, mode knowledge.SearchMode) (Scores, error) {
	s := Scores{Mode: mode}
	for _, q := range qs {
		vs, err := emb.Embed(ctx, []string{q.Query})
		if err != nil {
			return s, err
		}
		hits, err := store.Search(ctx, knowledge.Query{Theme: theme, Text: q.Query, Vector: vs[0], K: 10, Mode: mode})
		if err != nil {
			return s, fmt.Errorf("%s: %w", q.ID, err)
		}
		rank := 0
		for i, h := range hits {
			if q.Relevant(h) {
				rank = i + 1
				break
			}
		}
		if rank > 0 {
			s.MRR += 1 / float64(rank)
		}
		if rank > 0 && rank <= 5 {
			s.RecallAt5++
		} else {
			s.Misses = append(s.Misses, q.ID)
		}
	}
	if n := float64(len(qs)); n > 0 {
		s.RecallAt5 /= n
		s.MRR /= n
	}
	return s, nil
}
