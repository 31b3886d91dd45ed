package extract

import (
	"strings"

	"github.com/vibelife/vibe/chunk"
	"github.com/vibelife/vibe/knowledge"
)

// gradeRank orders credibility grades, best first.
var gradeRank = map[string]int{"A": 0, "B": 1, "C": 2, "D": 3}

// Weighed is what [WeighByCredibility] did.
type Weighed struct {
	// Moved counts rules whose evidence was moved to a better source
	// holding the same quote.
	Moved int
	// Marked counts rules left resting only on sources graded below B.
	Marked int
}

// WeighByCredibility weighs the rules by the credibility of their sources.
// grade returns the grade (A-D) of a chunk's source, chunk.Source (a
// workspace-relative path), and false for a source without one.
//
// A rule whose every evidence quotes a source graded below B is first
// moved to sources graded A or B when each quote is found there verbatim
// (another edition of the same passage), its source label following. A
// rule that cannot be moved gets SourceGrade, the best grade among its
// sources (C or D); every other rule gets none. A rule quoting an ungraded
// source is left as it is.
func WeighByCredibility(f *knowledge.Files, chunks []chunk.Chunk, grade func(source string) (string, bool)) Weighed {
	byID := make(map[string]*chunk.Chunk, len(chunks))
	var good []*chunk.Chunk
	for i := range chunks {
		c := &chunks[i]
		byID[c.ID] = c
		if g, ok := grade(c.Source); ok {
			if rank, known := gradeRank[g]; known && rank <= gradeRank["B"] {
				good = append(good, c)
			}
		}
	}
	// best is the best grade among the rule's sources, "" when one has none.
	best := func(ev []knowledge.Evidence) string {
		b := ""
		for _, e := range ev {
			c := byID[e.Chunk]
			if c == nil {
				return ""
			}
			g, ok := grade(c.Source)
			if _, known := gradeRank[g]; !ok || !known {
				return ""
			}
			if b == "" || gradeRank[g] < gradeRank[b] {
				b = g
			}
		}
		return b
	}
	var w Weighed
	weigh := func(rules []knowledge.Rule) {
		for i := range rules {
			r := &rules[i]
			r.SourceGrade = ""
			b := best(r.Evidence)
			if b == "" || gradeRank[b] <= gradeRank["B"] {
				continue
			}
			if moved, ok := moveEvidence(r.Evidence, good); ok {
				r.Evidence = moved
				r.Source = sourceOf(byID[moved[0].Chunk])
				w.Moved++
				continue
			}
			r.SourceGrade = b
			w.Marked++
		}
	}
	rr := &f.Rules.Rules
	weigh(rr.Tier1)
	weigh(rr.Tier2)
	weigh(rr.Tier3)
	return w
}

// moveEvidence finds each quote verbatim in one of the good chunks (the
// first, in chunk order), or reports false.
func moveEvidence(ev []knowledge.Evidence, good []*chunk.Chunk) ([]knowledge.Evidence, bool) {
	if len(ev) == 0 {
		return nil, false
	}
	out := make([]knowledge.Evidence, 0, len(ev))
	for _, e := range ev {
		found := false
		for _, c := range good {
			if strings.Contains(c.Text, e.Quote) {
				out = append(out, knowledge.Evidence{Chunk: c.ID, Quote: e.Quote})
				found = true
				break
			}
		}
		if !found {
			return nil, false
		}
	}
	return out, true
}
