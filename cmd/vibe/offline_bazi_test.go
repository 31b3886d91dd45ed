package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"

	"github.com/vibelife/vibe/knowledge"
)

// TestOfflineBaziDefects guards what issue 13 found wrong with the offline
// extractor on the five bazi classics, on a theme built from them with
// `vibe build` offline: `vibe check` passes; every rule quotes a whole
// sentence and is not cut before the continuation that holds its verdict;
// no negation of the quoted clauses is lost (不贫则夭 is not read as
// "IF 不贫 THEN 夭") and no red flag predicts a harm its source removes
// (化金之毒); no stray spaces between Chinese characters; no pattern twice
// under two spellings, and the eight 正格 子平真诠 treats in chapters of their
// own are patterns; nothing is mined from prefaces and tables of contents;
// no rule repeats another.
func TestOfflineBaziDefects(t *testing.T) {
	dir := baziWorkspace(t)
	env := map[string]string{"VIBE_LLM_PROVIDER": "offline"}
	// The check of the five books is one goroutine's work over SQLite: in
	// the vibe built without -race under it (runVibeUnraced).
	if code, out, errOut := runVibeUnraced(t, env, "-w", dir, "check", "bazi"); code != 0 {
		t.Fatalf("vibe check bazi: exit %d\n%.3000s\n%s", code, out, errOut)
	}
	f, _, err := knowledge.ReadFiles(filepath.Join(dir, "skills", "bazi", "knowledge"))
	if err != nil {
		t.Fatal(err)
	}
	books := map[string]string{}
	names, _ := filepath.Glob(filepath.Join(dir, "knowledge", "bazi", "converted", "*.md"))
	for _, n := range names {
		b, err := os.ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		books[strings.TrimSuffix(filepath.Base(n), ".md")] = string(b)
	}
	if len(books) != 5 {
		t.Fatalf("%d converted books, want 5", len(books))
	}
	rules := f.Rules.Rules.All()
	if len(rules) < 50 {
		t.Fatalf("%d rules, want 50 or more", len(rules))
	}

	// Whole sentences: the quote starts a line or follows a sentence end,
	// and ends at one; after a "；" the next sentence does not continue it.
	continues := regexp.MustCompile(`^\s*(?:又|却|方|乃|则|而|亦|便|即|必|始|才)`)
	// A sentence may recur (books quote each other); one whole occurrence
	// is enough.
	wholeSentence := func(label, quote string) {
		t.Helper()
		var problems []string
		for _, text := range books {
			for off := 0; ; {
				i := strings.Index(text[off:], quote)
				if i < 0 {
					break
				}
				i += off
				off = i + len(quote)
				before := strings.TrimRight(text[:i], " \t　")
				switch {
				case before != "" && !strings.ContainsRune("。！？；!?;\n", lastRune(before)) && !isEnumerator(before):
					problems = append(problems, "from inside a sentence (after "+tail(before, 12)+")")
				case !strings.ContainsRune("。！？；!?;", lastRune(quote)) && !strings.HasPrefix(text[off:], "\n") && off != len(text):
					problems = append(problems, "cut before "+head(text[off:], 12))
				case strings.HasSuffix(quote, "；") && continues.MatchString(text[off:]):
					problems = append(problems, "without its continuation "+head(text[off:], 16))
				default:
					return
				}
			}
		}
		if len(problems) == 0 {
			t.Errorf("%s quote %q is in no converted book", label, quote)
			return
		}
		t.Errorf("%s quotes %q %s", label, quote, strings.Join(problems, "; "))
	}
	frontMatter := regexp.MustCompile(`^(?:序|.{0,8}[序叙]|目录|.{0,8}总目.{0,6}|.{0,8}卷前)$`)
	negations := "不非忌勿莫毋无未"
	seen := map[string]string{}
	for _, r := range rules {
		label := "rule " + r.ID
		q := r.Evidence[0].Quote
		wholeSentence(label, q)
		concl := r.Conclusion + r.Action
		for _, s := range []string{r.Condition, concl} {
			if hasHanSpace(s) {
				t.Errorf("%s: stray space between Chinese characters in %q", label, s)
			}
		}
		// Polarity: the quoted stretch from condition to consequent has
		// the same negations as the two parts together.
		dq := strings.Join(strings.Fields(q), "")
		ci, ki := strings.Index(dq, r.Condition), strings.Index(dq, concl)
		if ci >= 0 && ki > ci {
			if got, want := countAny(r.Condition+concl, negations), countAny(dq[ci:ki+len(concl)], negations); got != want {
				t.Errorf("%s drops a negation: %q → %q from %q", label, r.Condition, concl, q)
			}
		}
		// "不X则Y": the negated clause belongs to the verdict.
		if cl := strings.Split(r.Condition, "，"); strings.HasPrefix(concl, "则") || strings.Contains(dq, r.Condition+"则") {
			if last := []rune(cl[len(cl)-1]); len(last) <= 3 && strings.ContainsRune("不非", last[0]) {
				t.Errorf("%s reverses its verdict: %q → %q from %q", label, r.Condition, concl, q)
			}
		}
		for _, h := range strings.Split(r.Source, " > ")[1:] {
			if frontMatter.MatchString(h) {
				t.Errorf("%s is mined from front matter %q", label, r.Source)
			}
		}
		key := strings.Join(strings.Fields(r.Condition+"|"+concl), "")
		if prev, dup := seen[key]; dup {
			t.Errorf("%s repeats %s: %q → %q", label, prev, r.Condition, concl)
		}
		seen[key] = r.ID
		if prev, dup := seen[q]; dup {
			t.Errorf("%s quotes the same sentence as %s: %q", label, prev, q)
		}
		seen[q] = r.ID
	}

	harmUndone := regexp.MustCompile(`[化解去除制救消][^，,。；]{0,3}?(?:之)?(?:毒|凶|灾|祸|病)`)
	for _, x := range f.Patterns.Patterns.RedFlags {
		q := x.Evidence[0].Quote
		wholeSentence("red flag "+x.ID, q)
		if hasHanSpace(x.Signal) {
			t.Errorf("red flag %s: stray space in %q", x.ID, x.Signal)
		}
		if m := harmUndone.FindString(q); m != "" && strings.Contains(x.Action, m[len(m)-3:]) {
			t.Errorf("red flag %s warns of a harm its source removes (%q): %q", x.ID, m, q)
		}
	}

	keys := map[string]string{}
	for _, p := range f.Patterns.Patterns.QuickPatterns {
		wholeSentence("pattern "+p.ID, p.Evidence[0].Quote)
		for _, s := range []string{p.Name, p.Signature, p.Indication} {
			if hasHanSpace(s) {
				t.Errorf("pattern %s: stray space in %q", p.ID, s)
			}
		}
		k := strings.NewReplacer("两", "双", "之格", "格", "煞", "杀").Replace(p.Name)
		k = strings.TrimSuffix(k, "格")
		if prev, dup := keys[k]; dup {
			t.Errorf("pattern %s %q repeats %s", p.ID, p.Name, prev)
		}
		keys[k] = p.ID + " " + p.Name
	}
	for _, name := range []string{"正官格", "财格", "印绶格", "食神格", "偏官格", "伤官格", "阳刃格", "建禄月劫格"} {
		if _, ok := keys[strings.TrimSuffix(name, "格")]; !ok {
			t.Errorf("pattern %s (a chapter of 子平真诠 with its 取运 chapter) is missing; patterns: %v", name, keys)
		}
	}
}

func lastRune(s string) rune {
	r := []rune(s)
	if len(r) == 0 {
		return 0
	}
	return r[len(r)-1]
}

func tail(s string, n int) string {
	r := []rune(s)
	return string(r[max(0, len(r)-n):])
}

func head(s string, n int) string {
	r := []rune(s)
	return string(r[:min(len(r), n)])
}

// isEnumerator reports that the line before a quote is only an enumerator
// ("一、", "1. ", "- ").
func isEnumerator(before string) bool {
	line := before[strings.LastIndexByte(before, '\n')+1:]
	return regexp.MustCompile(`^\s*(?:\d{1,3}[.、)）]|[一二三四五六七八九十]{1,3}[、.．]|（[一二三四五六七八九十\d]{1,3}）|[-*+•])\s*$`).MatchString(line)
}

func countAny(s, chars string) int {
	n := 0
	for _, r := range s {
		if strings.ContainsRune(chars, r) {
			n++
		}
	}
	return n
}

// hasHanSpace reports a space between two Chinese characters.
func hasHanSpace(s string) bool {
	r := []rune(s)
	for i := 1; i+1 < len(r); i++ {
		if (r[i] == ' ' || r[i] == '　') && unicode.Is(unicode.Han, r[i-1]) && unicode.Is(unicode.Han, r[i+1]) {
			return true
		}
	}
	return false
}

// The bazi skill's triggers are the words users use (issue 13): terms of
// the theme's glossary, and no chapter title (论……) of the books.
func TestBaziSkillTriggers(t *testing.T) {
	dir := baziWorkspace(t)
	md, err := os.ReadFile(filepath.Join(dir, "skills", "bazi", "SKILL.md"))
	if err != nil {
		t.Fatal(err)
	}
	gl, err := os.ReadFile(filepath.Join(dir, "knowledge", "bazi", "glossary.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	front := strings.SplitN(string(md), "---", 3)[1]
	_, list, _ := strings.Cut(front, "triggers:\n")
	var triggers []string
	for _, l := range strings.Split(list, "\n") {
		if s, ok := strings.CutPrefix(strings.TrimSpace(l), "- "); ok {
			triggers = append(triggers, s)
		} else {
			break
		}
	}
	terms := 0
	for _, tr := range triggers {
		if strings.Contains(string(gl), "term: "+tr+"\n") {
			terms++
		}
		if strings.HasPrefix(tr, "论") || regexp.MustCompile(`^[一二三四五六七八九十]+[、．.]`).MatchString(tr) {
			t.Errorf("trigger %q is a chapter title", tr)
		}
	}
	t.Logf("triggers: %q", triggers)
	if len(triggers) < 5 || terms < 3 {
		t.Errorf("triggers %q: want at least 5, 3 of them glossary terms", triggers)
	}
}
