package runtime

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/vibelife/vibe/knowledge"
	"github.com/vibelife/vibe/llm"
)

// skillLanguage is the language a skill speaks to people in ("zh" or
// "en"): that of its display name and description, the words the page
// shows of it (its instructions quote its sources, which may be in another
// language); "" for an unknown skill. The chat page shows its labels in it.
func (a *Agent) skillLanguage(name string) string {
	sk, err := a.cfg.Skills.Get(primarySkill(name))
	if err != nil {
		return ""
	}
	return TextLanguage(sk.DisplayName + " " + sk.Description)
}

// offlineLabels are the labels of a retrieval-only answer, in one language.
type offlineLabels struct {
	mode, onlySkill, noSkill, skill, bySources, needBirth, rules, passages, unbridged, noRule, missing, missingNone string
}

// offlineText holds the retrieval-only answer's labels in each language;
// the answer takes the answering skill's (the question's when no skill
// answers), so an English skill's answer carries no Chinese label.
var offlineText = map[string]offlineLabels{
	langEN: {
		mode:        "_Retrieval-only mode: no model is configured; these are the rules and passages retrieved, not a generated answer._",
		onlySkill:   "(no skill fits the question; using the only skill)",
		noSkill:     "No skill fits the question; available: ",
		skill:       "Skill: ",
		bySources:   "(chosen by what its sources say: %s)",
		needBirth:   "(this skill needs your birth data: please fill in the form)",
		rules:       "Rules",
		passages:    "Passages",
		unbridged:   "(the question is in %s and the sources in %s; it names no glossary term and no model is configured to rewrite it, so these passages match its words only and may not answer it)",
		noRule:      "(no relevant rule found)",
		missing:     "(no rule of the skill states %s, which the question asks about; the rules below touch only the rest of it and do not answer it)",
		missingNone: "(no rule of the skill states %s, which the question asks about)",
	},
	langZH: {
		mode:        "_离线检索模式：未配置模型，以下是检索到的规则与原文，不是生成的回答。_",
		onlySkill:   "（没有技能与问题相符，使用唯一的技能）",
		noSkill:     "没有技能与问题相符。可用技能：",
		skill:       "技能：",
		bySources:   "（按原文选定：%s）",
		needBirth:   "（本技能需要出生信息，请填写表单）",
		rules:       "相关规则",
		passages:    "相关原文",
		unbridged:   "（问题的语言（%s）与原文（%s）不同，且未能转换为原文用语，以下段落仅按字面匹配，可能不相关）",
		noRule:      "（没有找到相关规则）",
		missing:     "（没有规则论及 %s；以下规则只涉及问题的其他部分，不能直接作答）",
		missingNone: "（没有规则论及 %s）",
	},
}

// labelsFor returns the retrieval-only labels in the language of the
// question, the one the user reads (the skill's when the question has no
// letter to tell).
func (a *Agent) labelsFor(skill, question string) offlineLabels {
	lang := TextLanguage(question)
	if lang == "" {
		lang = a.skillLanguage(skill)
	}
	if l, ok := offlineText[lang]; ok {
		return l
	}
	return offlineText[langEN]
}

// plainExcerpt is a passage's text on one line for a list item: white
// space folded and Markdown heading marks ("## 论用神") dropped, so the
// excerpt reads as text and not as a heading run into a sentence.
func plainExcerpt(text string) string {
	var out []string
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if t := strings.TrimLeft(line, "#"); t != line && (t == "" || t[0] == ' ') {
			line = strings.TrimSpace(t)
		}
		if line != "" {
			out = append(out, line)
		}
	}
	return strings.Join(strings.Fields(strings.Join(out, " ")), " ")
}

// roleRetract records that the turn after it replaces the question before
// it and its answer (TurnRequest.ReplaceLast): the page's regenerate and
// edit of the last message.
const roleRetract = "retract"

// ErrNothingToReplace is a ReplaceLast turn in a conversation without a
// question (or keyed by a client's transcript, which holds its own edits).
var ErrNothingToReplace = errors.New("replace_last: the conversation has no question to replace; send the message without replace_last")

// hasQuestion reports whether msgs hold a user message.
func hasQuestion(msgs []knowledge.StoredMessage) bool {
	for _, m := range msgs {
		if m.Role == llm.RoleUser {
			return true
		}
	}
	return false
}

// withoutRetracted returns msgs without the questions and answers a
// retract record withdrew: for each, the last user message before it and
// the assistant messages after that one. The other records (the active
// skill, profile writes) stay: what the turn did to them stands.
func withoutRetracted(msgs []knowledge.StoredMessage) []knowledge.StoredMessage {
	retracts := false
	for _, m := range msgs {
		retracts = retracts || m.Role == roleRetract
	}
	if !retracts {
		return msgs
	}
	out := make([]knowledge.StoredMessage, 0, len(msgs))
	for _, m := range msgs {
		if m.Role != roleRetract {
			out = append(out, m)
			continue
		}
		q := -1
		for i := len(out) - 1; i >= 0 && q < 0; i-- {
			if out[i].Role == llm.RoleUser {
				q = i
			}
		}
		if q < 0 {
			continue
		}
		keep := out[:q]
		for _, x := range out[q+1:] {
			if x.Role != llm.RoleUser && x.Role != llm.RoleAssistant {
				keep = append(keep, x)
			}
		}
		out = keep
	}
	return out
}

// PassageInfo is GET /api/passage?id=: one passage of the knowledge store,
// whole, for the page's source panel.
type PassageInfo struct {
	ChunkID     string   `json:"chunk_id"`
	Source      string   `json:"source"`
	Doc         string   `json:"doc"`
	HeadingPath []string `json:"heading_path"`
	Start       int      `json:"start"`
	End         int      `json:"end"`
	Text        string   `json:"text"`
}

// getPassage answers GET /api/passage?id=CHUNK: the whole passage a
// citation names, so the source panel shows it whole whether or not this
// page's session retrieved it (a reloaded conversation, a retrieval-only
// answer, a rule's passage).
func (s *Server) getPassage(w http.ResponseWriter, r *http.Request) {
	id := r.URL.Query().Get("id")
	if id == "" || len(id) > 512 {
		writeErr(w, http.StatusBadRequest, "invalid_request_error", "id: give the chunk id of a passage (a citation's chunk_id)")
		return
	}
	cg, ok := s.agent.cfg.Searcher.(chunkGetter)
	if !ok {
		writeErr(w, http.StatusNotFound, "not_found", "no knowledge store to read passages from")
		return
	}
	c, err := cg.Chunk(r.Context(), id)
	switch {
	case errors.Is(err, knowledge.ErrNotFound):
		writeErr(w, http.StatusNotFound, "not_found", fmt.Sprintf("passage %q not found", id))
		return
	case err != nil:
		writeErr(w, http.StatusInternalServerError, "server_error", err.Error())
		return
	}
	writeJSON(w, 200, PassageInfo{ChunkID: c.ID, Source: c.Source, Doc: c.Doc, HeadingPath: c.HeadingPath, Start: c.Start, End: c.End, Text: c.Text})
}
