package agenteval

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// FeedbackFileName is where `vibe eval --from-feedback` drafts cases from
// the answers users marked wrong, for a knowledge engineer to review; vibe
// never reads it as the eval file.
const FeedbackFileName = "eval.feedback.yaml"

// FeedbackTurn is an answer a user gave a thumbs down: the question asked,
// the answer given, the user's comment.
type FeedbackTurn struct {
	ConversationID string
	Turn           int
	Question       string
	Answer         string
	Comment        string
	At             time.Time
}

var idUnsafe = regexp.MustCompile(`[^a-z0-9]+`)

// EncodeFeedbackDraft drafts one case per question users marked wrong
// (the same question asked twice is one case), newest first, as YAML
// behind a header saying what to do with it; above each case, as
// comments, the answers given and what the users said. The cases expect
// the skill; what a correct answer needs (rules, passages, facts,
// contains) is the reviewer's to write. At most max cases are drafted (max
// <= 0: all); it returns how many were.
func EncodeFeedbackDraft(theme, skill string, turns []FeedbackTurn, max int) ([]byte, int, error) {
	type group struct {
		c     Case
		notes []string
	}
	var groups []*group
	byQ := map[string]*group{}
	for _, t := range turns {
		key := strings.ToLower(strings.Join(strings.Fields(t.Question), " "))
		g := byQ[key]
		if g == nil && max > 0 && len(groups) >= max {
			continue
		}
		if g == nil {
			id := strings.Trim(idUnsafe.ReplaceAllString(strings.ToLower(t.ConversationID), "-"), "-")
			g = &group{c: Case{ID: fmt.Sprintf("feedback-%s-%d", id, t.Turn), Tags: []string{"feedback"},
				Question: strings.TrimSpace(t.Question), Expect: Expect{Skill: skill}}}
			byQ[key] = g
			groups = append(groups, g)
		}
		answer := []rune(strings.Join(strings.Fields(t.Answer), " "))
		if len(answer) > 300 {
			answer = append(answer[:300], '…')
		}
		note := fmt.Sprintf("%s, conversation %s, turn %d: thumbs down", t.At.UTC().Format("2006-01-02"), t.ConversationID, t.Turn)
		if c := strings.Join(strings.Fields(t.Comment), " "); c != "" {
			note += ": " + c
		}
		g.notes = append(g.notes, note, "  the answer was: "+string(answer))
	}
	f := &File{Version: 1, Skill: skill}
	for _, g := range groups {
		f.Cases = append(f.Cases, g.c)
	}
	var doc yaml.Node
	if err := doc.Encode(f); err != nil {
		return nil, 0, err
	}
	for i := 0; i+1 < len(doc.Content); i += 2 {
		if doc.Content[i].Value != "cases" {
			continue
		}
		for j, c := range doc.Content[i+1].Content {
			c.HeadComment = strings.Join(groups[j].notes, "\n")
		}
	}
	var buf bytes.Buffer
	fmt.Fprintf(&buf, "# Drafted by `vibe eval --from-feedback %s` from the answers users marked wrong. vibe never\n", theme)
	fmt.Fprintf(&buf, "# reads this file: for each case, read what the user said and the answer given, write what a\n")
	fmt.Fprintf(&buf, "# correct answer needs (rules, passages, facts, contains), then move the cases you keep into %s.\n", FileName)
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(&doc); err != nil {
		return nil, 0, err
	}
	if err := enc.Close(); err != nil {
		return nil, 0, err
	}
	return buf.Bytes(), len(groups), nil
}
