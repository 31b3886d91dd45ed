package extract

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/vibelife/vibe/chunk"
	"github.com/vibelife/vibe/internal/racetest"
	"github.com/vibelife/vibe/knowledge"
)

// cutProblem says how a rule is cut, read against the chunks it cites, or
// "": a part ending on a word that cannot end a clause, a Chinese part
// followed in its quote by more of its clause, or a part reaching the end of
// a quote whose sentence the source goes on with (no sentence-final mark,
// and the text after it, in the chunk or the next chunk of the same
// document, is more of the sentence rather than a heading or a new item).
func cutProblem(r knowledge.Rule, byID map[string]*chunk.Chunk, next map[string]*chunk.Chunk) string {
	if len(r.Evidence) == 0 {
		return ""
	}
	q := r.Evidence[0].Quote
	dq := despaceHan(q)
	concl := r.Conclusion
	if concl == "" {
		concl = r.Action
	}
	cond := r.Condition
	if _, c, ok := strings.Cut(cond, "："); ok && !strings.Contains(dq, cond) {
		cond = c
	}
	for _, part := range []struct{ name, text string }{{"condition", cond}, {"consequent", concl}} {
		if openEnded(part.text) {
			return fmt.Sprintf("%s %q ends on a word that cannot end a clause", part.name, part.text)
		}
	}
	// The consequent is read after the condition (气盛则溲数，溲数即坚).
	from := 0
	if ci := strings.Index(dq, cond); ci >= 0 && cond != "" {
		from = ci + len(cond)
	}
	ki := strings.Index(dq[from:], concl)
	if concl == "" || ki < 0 {
		if ki = strings.Index(dq, concl); concl == "" || ki < 0 {
			return "" // not verbatim: clauseProblem says so
		}
	} else {
		ki += from
	}
	after := strings.TrimLeft(dq[ki+len(concl):], " 　")
	after = strings.TrimLeft(after, zhParticle)
	if hasHan(concl) && after != "" {
		if r, _ := utf8.DecodeRuneInString(after); unicode.Is(unicode.Han, r) {
			return fmt.Sprintf("consequent %q is followed in its quote by %q", concl, after)
		}
	}
	if strings.TrimFunc(after, func(r rune) bool { return unicode.IsPunct(r) || unicode.IsSpace(r) }) != "" {
		return "" // the consequent ends inside the quote, at a clause mark
	}
	// The consequent reaches the end of its quote: does the sentence end there?
	// A closing bracket or quote after a sentence's end ("… ss. 23.]") ends it too.
	last, _ := utf8.DecodeLastRuneInString(strings.TrimRight(q, " 　\t\r\n)]）】"))
	if strings.ContainsRune("。！？；.!?;…”’\"'」』", last) {
		return ""
	}
	c := byID[r.Evidence[0].Chunk]
	if c == nil {
		return ""
	}
	qi := strings.Index(c.Text, q)
	if qi < 0 {
		return ""
	}
	rest := strings.TrimSpace(c.Text[qi+len(q):])
	if rest == "" && next[c.ID] != nil {
		rest = strings.TrimSpace(next[c.ID].Text)
	}
	if rest == "" || strings.HasPrefix(rest, "#") || strings.HasPrefix(rest, "|") || listNumber(rest, false) != "" {
		return ""
	}
	if strings.ContainsRune("，,、", last) {
		return fmt.Sprintf("its quote %q stops at a comma; the source goes on %q", q, firstRunes(rest, 12))
	}
	n, _ := utf8.DecodeRuneInString(rest)
	if hasHan(concl) && unicode.Is(unicode.Han, n) || !hasHan(concl) && unicode.IsLower(n) {
		return fmt.Sprintf("consequent %q ends its quote without a sentence-final mark, and the source goes on %q", concl, firstRunes(rest, 12))
	}
	return ""
}

func firstRunes(s string, n int) string {
	r := []rune(s)
	if len(r) > n {
		r = r[:n]
	}
	return string(r)
}

// cutRules lists every cut rule of f, by cutProblem.
func cutRules(f knowledge.Files, chunks []chunk.Chunk) []string {
	byID := map[string]*chunk.Chunk{}
	next := map[string]*chunk.Chunk{}
	for i := range chunks {
		byID[chunks[i].ID] = &chunks[i]
		if i+1 < len(chunks) && chunks[i+1].Doc == chunks[i].Doc {
			next[chunks[i].ID] = &chunks[i+1]
		}
	}
	var out []string
	for _, r := range f.Rules.Rules.All() {
		if msg := cutProblem(r.Rule, byID, next); msg != "" {
			out = append(out, fmt.Sprintf("%s %s → %s: %s", r.ID, r.Condition, r.Conclusion+r.Action, msg))
		}
	}
	return out
}

// TestCutProblemFlags checks the checker on rules cut in each way it
// knows, and on whole ones.
func TestCutProblemFlags(t *testing.T) {
	c := chunk.Chunk{ID: "a", Doc: "d", Text: "40．若面热如醉，此为胃热上冲熏其面，加大\n\n黄以利之。\n\n若下之，则死。"}
	n := chunk.Chunk{ID: "b", Doc: "d", Text: "# 下一篇\n\n若汗出，则愈。"}
	e := chunk.Chunk{ID: "e", Doc: "e", Text: "The standing trustee must not deposit\n\nany funds received into the account."}
	byID := map[string]*chunk.Chunk{"a": &c, "b": &n, "e": &e}
	next := map[string]*chunk.Chunk{"a": &n}
	rule := func(cond, concl, quote, id string) knowledge.Rule {
		return knowledge.Rule{Condition: cond, Conclusion: concl, Evidence: []knowledge.Evidence{{Chunk: id, Quote: quote}}}
	}
	for _, tc := range []struct {
		r   knowledge.Rule
		cut bool
	}{
		{rule("面热如醉", "此为胃热上冲熏其面，加大", "若面热如醉，此为胃热上冲熏其面，加大", "a"), true},
		{rule("面热如醉", "此为胃热上冲熏其面", "若面热如醉，此为胃热上冲熏其面，加大", "a"), false},
		{rule("下之", "死", "若下之，则死。", "a"), false},
		{rule("面热如醉", "此为胃热上冲", "若面热如醉，此为胃热上冲熏其面，加大", "a"), true},
		{rule("下之", "死而", "若下之，则死而", "a"), true},
		{rule("汗出", "愈", "若汗出，则愈。", "b"), false},
		{rule("The standing trustee must not deposit", "The standing trustee must not deposit", "The standing trustee must not deposit", "e"), true},
		{rule("The standing trustee", "must not deposit any funds", "The standing trustee must not deposit any funds", "e"), false},
	} {
		got := cutProblem(tc.r, byID, next)
		if (got != "") != tc.cut {
			t.Errorf("%s → %s: cutProblem = %q, want cut %v", tc.r.Condition, tc.r.Conclusion, got, tc.cut)
		}
	}
}

// TestNoCutRulesFixture extracts offline from a hard-wrapped clause the
// converter split into two paragraphs (金匮要略's "加大" ⏎ "黄以利之。"):
// the rule is whole or absent, never cut.
func TestNoCutRulesFixture(t *testing.T) {
	text := "# 痰饮咳嗽病脉证并治\n\n40．若面热如醉，此为胃热上冲熏其面，加大\n\n黄以利之。\n\n41．凡汗出而喘者，不可与桂枝汤。\n\n42．凡汗出不止者，必亡阳，不可\n\n与麻黄汤。\n"
	chunks := []chunk.Chunk{{ID: "c1", Doc: "knowledge/t/converted/jk.md", Title: "jk", HeadingPath: []string{"痰饮咳嗽病脉证并治"}, Text: text, End: len([]rune(text))}}
	res, err := Run(context.Background(), Options{Theme: "t", Chunks: chunks})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range cutRules(res.Files, chunks) {
		t.Errorf("cut rule: %s", p)
	}
	var rules []string
	for _, r := range res.Files.Rules.Rules.All() {
		rules = append(rules, r.Condition+" → "+r.Conclusion+r.Action)
	}
	if !strings.Contains(strings.Join(rules, "\n"), "汗出而喘 → 不可与桂枝汤") {
		t.Errorf("the whole rule 凡汗出而喘者，不可与桂枝汤 is missing: %q", rules)
	}
}

// TestNoCutRulesBazi runs the checker over the offline rules of the five
// bazi books (VIBE_TEST_CORPUS).
func TestNoCutRulesBazi(t *testing.T) {
	racetest.SequentialOnly(t)
	chunks := loadConverted(t, "bazi", corpusDir(t, "bazi"))
	res, err := Run(context.Background(), Options{Theme: "bazi", Chunks: chunks})
	if err != nil {
		t.Fatal(err)
	}
	probs := cutRules(res.Files, chunks)
	for _, p := range probs {
		t.Errorf("cut rule: %s", p)
	}
	t.Logf("%d rules, %d cut", len(res.Files.Rules.Rules.All()), len(probs))
}

// TestCutRulesSurvey runs the checker over the offline rules of every real
// source on the machine: the blind themes' sources ($VIBE_TEST_BLIND, by
// default /work/data/blind) and the books of docs/books.md
// (VIBE_TEST_BOOKS), each book on its own.
func TestCutRulesSurvey(t *testing.T) {
	racetest.SequentialOnly(t)
	blind := os.Getenv("VIBE_TEST_BLIND")
	if blind == "" {
		blind = "/work/data/blind"
	}
	type src struct{ name, dir, file string }
	var srcs []src
	for _, th := range []string{"shanghan", "chess", "travel-leave"} {
		if d := filepath.Join(blind, th, "source"); dirExists(d) {
			srcs = append(srcs, src{name: th, dir: d})
		}
	}
	books := booksDir(t)
	for _, bc := range bookCases {
		if bc.noOfflineRules == "" {
			srcs = append(srcs, src{name: bc.file, dir: books, file: bc.file})
		}
	}
	total := 0
	for _, s := range srcs {
		var skip []string
		if s.file != "" {
			ents, _ := os.ReadDir(s.dir)
			for _, e := range ents {
				if e.Name() != s.file {
					skip = append(skip, e.Name())
				}
			}
		}
		chunks := loadConverted(t, "survey", s.dir, skip...)
		res, err := Run(context.Background(), Options{Theme: "survey", Chunks: chunks})
		if err != nil {
			t.Fatal(err)
		}
		probs := cutRules(res.Files, chunks)
		total += len(probs)
		t.Logf("%s: %d rules, %d cut", s.name, len(res.Files.Rules.Rules.All()), len(probs))
		for _, p := range probs {
			t.Errorf("%s: cut rule: %s", s.name, p)
		}
	}
	t.Logf("%d cut rules in all", total)
}

func dirExists(d string) bool {
	st, err := os.Stat(d)
	return err == nil && st.IsDir()
}
