package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/vibelife/vibe/eval/agenteval"
	"github.com/vibelife/vibe/knowledge"
	"github.com/vibelife/vibe/runtime"
)

// runEvalFromFeedback drafts eval cases from the answers of the theme's
// skill that users gave a thumbs down, read from the store vibe serve
// keeps conversations in, into knowledge/<theme>/eval.feedback.yaml for
// review. It never writes eval.yaml.
func (a *app) runEvalFromFeedback(ctx context.Context, opts *evalOptions) error {
	ws, err := a.workspace()
	if err != nil {
		return withExit(exitError, err)
	}
	if opts.max <= 0 {
		return flagErrorf("--max %d: give a positive number of cases", opts.max)
	}
	st, err := a.openStore(ctx)
	if err != nil {
		return withExit(exitError, withHint(fmt.Errorf("eval --from-feedback %s: the store: %w", opts.theme, err), "the feedback is in the store vibe serve uses: run this with its store.driver and DATABASE_URL"))
	}
	if c, ok := st.(interface{ Close() error }); ok {
		defer c.Close()
	}
	fs, okF := st.(knowledge.FeedbackStore)
	mem, okM := st.(knowledge.MemoryStore)
	if !okF || !okM {
		return withExit(exitError, fmt.Errorf("eval --from-feedback %s: this store keeps no conversations or feedback (the SQLite and PostgreSQL stores do)", opts.theme))
	}
	down, err := fs.ListFeedback(ctx, knowledge.FeedbackDown, 0)
	if err != nil {
		return withExit(exitError, fmt.Errorf("eval --from-feedback %s: %w", opts.theme, err))
	}
	var turns []agenteval.FeedbackTurn
	other, forms := 0, 0
	for _, f := range down {
		msgs, err := mem.Messages(ctx, f.UserID, f.ConversationID, 0)
		if err != nil {
			return withExit(exitError, fmt.Errorf("eval --from-feedback %s: conversation %s: %w", opts.theme, f.ConversationID, err))
		}
		q, ans, skills, ok := runtime.AnswerContext(msgs, f.Turn)
		switch {
		case !ok:
			continue // the answer is gone (its conversation was deleted)
		case !slices.Contains(skills, opts.theme):
			other++
			continue
		case strings.HasPrefix(q, runtime.FormMarker) || strings.TrimSpace(q) == "":
			forms++ // a form's answer, not a question to ask again
			continue
		}
		turns = append(turns, agenteval.FeedbackTurn{ConversationID: f.ConversationID, Turn: f.Turn, Question: q, Answer: ans, Comment: f.Comment, At: f.CreatedAt})
	}
	if len(turns) == 0 {
		fmt.Fprintf(a.io.ErrOut, "eval --from-feedback %s: no thumbs-down answer of the skill to draft from (%d thumbs down in all: %d of other skills, %d on form answers); nothing written\n",
			opts.theme, len(down), other, forms)
		return nil
	}
	b, n, err := agenteval.EncodeFeedbackDraft(opts.theme, opts.theme, turns, opts.max)
	if err != nil {
		return withExit(exitError, err)
	}
	out := filepath.Join(ws.KnowledgeDir(opts.theme), agenteval.FeedbackFileName)
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return withExit(exitError, err)
	}
	if err := os.WriteFile(out, b, 0o644); err != nil {
		return withExit(exitError, errors.Join(fmt.Errorf("eval --from-feedback %s", opts.theme), err))
	}
	fmt.Fprintf(a.io.ErrOut, "eval %s: drafted %d cases from the %d thumbs-down answers of the skill into %s: for each, read what the user said, write what a correct answer needs, and move the ones you keep into %s\n",
		opts.theme, n, len(turns), ws.Rel(out), ws.Rel(filepath.Join(ws.KnowledgeDir(opts.theme), agenteval.FileName)))
	return nil
}
