package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/vibelife/vibe/chunk"
	"github.com/vibelife/vibe/extract"
	"github.com/vibelife/vibe/internal/testcorpus"
	"github.com/vibelife/vibe/knowledge"
	"github.com/vibelife/vibe/llm"
	"github.com/vibelife/vibe/llm/llmtest"
)

// recording is a build of 子平真诠 answered by a strong model
// (../shared/llm-recordings/zipingzhenquan): the requests vibe sent and the
// answers it got, by pass.
type recording struct {
	dir string
	// maps and gaps are the map and gap requests' chunks (by number) and
	// their answers.
	maps, gaps []recRead
	// reduce holds every reduce answer; reduceText maps a candidate id of
	// the recorded reduce requests to the key of its line.
	reduce     []reduceRec
	reduceText map[string]string
	// sop is the single recorded request of that pass: its id -> key of
	// line, and the answer. (The recorded tier request, 11, has no
	// counterpart since the tiers are filled from the reduce answers.)
	sopText map[string]string
	sop     map[string]any
	prose   string
}

type recRead struct {
	chunks map[string]string // number -> text
	answer map[string][]map[string]any
}

type reduceRec struct {
	Items   []map[string]any `json:"items"`
	Dropped []map[string]any `json:"dropped"`
}

// chunkHead opens a chunk in a map or gap request: `[#n]`, or `[chunk n]`
// in the recorded requests.
var chunkHead = regexp.MustCompile(`(?m)^\[(?:chunk |#)(\d+)\]\n`)

// chunksOf parses the chunk blocks of a map or gap request.
func chunksOf(user string) map[string]string {
	out := map[string]string{}
	idx := chunkHead.FindAllStringSubmatchIndex(user, -1)
	for i, m := range idx {
		end := len(user)
		if i+1 < len(idx) {
			end = idx[i+1][0]
		}
		body := user[m[1]:end]
		if j := strings.Index(body, "\n## "); j >= 0 {
			body = body[:j]
		}
		out[user[m[2]:m[3]]] = strings.TrimSpace(body)
	}
	return out
}

var actionSuffix = regexp.MustCompile(`\s*\(action: .*\)\s*$`)

// lineKey is the wording of an item line without its id, tier and
// importance, so the same candidate is found in a request whose layout
// changed: the text after the last " | ", with the action and the IF/THEN
// and => markers taken out and white space removed.
func lineKey(line string) string {
	if i := strings.LastIndex(line, " | "); i >= 0 {
		line = line[i+3:]
	}
	line = actionSuffix.ReplaceAllString(line, "")
	line = strings.TrimPrefix(line, "IF ")
	for _, s := range []string{" THEN ", "=>", "→", ":", "："} {
		line = strings.ReplaceAll(line, s, "|")
	}
	return strings.Join(strings.Fields(line), "")
}

// idLines maps the id opening each item line of a request (`m12 | …`,
// `c3 rule …`) to its key.
func idLines(user string) map[string]string {
	out := map[string]string{}
	for _, l := range strings.Split(user, "\n") {
		f := strings.Fields(l)
		if len(f) < 3 || !strings.Contains(l, " | ") {
			continue
		}
		id := f[0]
		if !regexp.MustCompile(`^[a-z]+\d+$`).MatchString(id) {
			continue
		}
		out[id] = lineKey(l)
	}
	return out
}

func loadRecording(t *testing.T, dir string) *recording {
	t.Helper()
	rec := &recording{dir: dir, reduceText: map[string]string{}}
	read := func(n int) (map[string]any, string) {
		t.Helper()
		var req struct {
			Messages []struct{ Content string } `json:"messages"`
		}
		b, err := os.ReadFile(filepath.Join(dir, "req", fmt.Sprintf("%04d.json", n)))
		if err == nil {
			err = json.Unmarshal(b, &req)
		}
		if err != nil || len(req.Messages) < 2 {
			t.Fatalf("recording request %04d: %v", n, err)
		}
		var resp struct {
			Content string `json:"content"`
		}
		b, err = os.ReadFile(filepath.Join(dir, "resp", fmt.Sprintf("%04d.json", n)))
		if err == nil {
			err = json.Unmarshal(b, &resp)
		}
		if err != nil {
			t.Fatalf("recording answer %04d: %v", n, err)
		}
		var ans map[string]any
		_ = json.Unmarshal([]byte(resp.Content), &ans)
		if n != 13 && ans == nil {
			t.Fatalf("recording answer %04d is not a JSON object", n)
		}
		if n == 13 {
			rec.prose = resp.Content
		}
		return ans, req.Messages[len(req.Messages)-1].Content
	}
	asRead := func(ans map[string]any, user string) recRead {
		r := recRead{chunks: chunksOf(user), answer: map[string][]map[string]any{}}
		for _, k := range []string{"rules", "patterns", "red_flags", "steps"} {
			for _, x := range ans[k].([]any) {
				r.answer[k] = append(r.answer[k], x.(map[string]any))
			}
		}
		return r
	}
	for n := 1; n <= 4; n++ {
		rec.maps = append(rec.maps, asRead(read(n)))
	}
	rec.gaps = append(rec.gaps, asRead(read(9)))
	for _, n := range []int{5, 6, 7, 8, 10} {
		ans, user := read(n)
		for id, k := range idLines(user) {
			rec.reduceText[id] = k
		}
		var rr reduceRec
		b, _ := json.Marshal(ans)
		_ = json.Unmarshal(b, &rr)
		rec.reduce = append(rec.reduce, rr)
	}
	ans, user := read(12)
	rec.sopText, rec.sop = idLines(user), ans
	read(13)
	return rec
}

// answerRead answers a map or gap request with the recorded items whose
// chunk is in it, renumbered to the request's chunks: an item goes where
// the chunk it cited (same text) is, or else where its quote is.
func (rec *recording) answerRead(reads []recRead, user string) llmtest.Reply {
	now := chunksOf(user)
	byText := map[string]string{}
	for n, txt := range now {
		byText[txt] = n
	}
	out := map[string][]map[string]any{"rules": {}, "patterns": {}, "red_flags": {}, "steps": {}}
	for _, r := range reads {
		for kind, items := range r.answer {
			for _, it := range items {
				old := fmt.Sprint(it["chunk"])
				n, ok := byText[r.chunks[old]]
				if !ok {
					q, _ := it["quote"].(string)
					for m, txt := range now {
						if q != "" && strings.Contains(txt, q) {
							n, ok = m, true
							break
						}
					}
				}
				if !ok {
					continue
				}
				c := map[string]any{}
				for k, v := range it {
					c[k] = v
				}
				c["chunk"] = n
				out[kind] = append(out[kind], c)
			}
		}
	}
	return llmtest.JSON(out)
}

// answerReduce answers a reduce batch with the recorded items whose
// members are in it (members and dropped ids renamed to the batch's ids by
// the wording of their lines). Candidates the recording never judged stay
// unjudged, and the pipeline keeps them as proposed.
func (rec *recording) answerReduce(user string) llmtest.Reply {
	byKey := map[string][]string{}
	for id, k := range idLines(user) {
		byKey[k] = append(byKey[k], id)
	}
	for _, ids := range byKey {
		sort.Strings(ids)
	}
	used := map[string]bool{}
	take := func(old string) string {
		for _, id := range byKey[rec.reduceText[old]] {
			if !used[id] {
				used[id] = true
				return id
			}
		}
		return ""
	}
	items, dropped := []map[string]any{}, []map[string]any{}
	for _, rr := range rec.reduce {
		for _, it := range rr.Items {
			var mem []string
			for _, m := range it["members"].([]any) {
				if id := take(m.(string)); id != "" {
					mem = append(mem, id)
				}
			}
			if len(mem) == 0 {
				continue
			}
			c := map[string]any{}
			for k, v := range it {
				c[k] = v
			}
			c["members"] = mem
			items = append(items, c)
		}
		for _, d := range rr.Dropped {
			if id := take(d["id"].(string)); id != "" {
				c := map[string]any{}
				for k, v := range d {
					c[k] = v
				}
				c["id"] = id
				dropped = append(dropped, c)
			}
		}
	}
	return llmtest.JSON(map[string]any{"items": items, "dropped": dropped})
}

// renamer maps the recorded ids of a request to the ids of the request
// now sent, by the wording of their lines. A line now shown shorter (a
// pattern in the SOP request by name and signature, without its
// indication) is the recorded line it begins.
func renamer(recorded map[string]string, user string) func(string) string {
	byKey := map[string]string{}
	for id, k := range idLines(user) {
		byKey[k] = id
	}
	return func(old string) string {
		rk := recorded[old]
		if id, ok := byKey[rk]; ok {
			return id
		}
		for k, id := range byKey {
			if strings.HasPrefix(rk, k+"|") {
				return id
			}
		}
		return ""
	}
}

func (rec *recording) answerSOP(user string) llmtest.Reply {
	rename := renamer(rec.sopText, user)
	b, _ := json.Marshal(rec.sop)
	var sop map[string]any
	_ = json.Unmarshal(b, &sop)
	for _, ph := range sop["phases"].([]any) {
		for _, st := range ph.(map[string]any)["steps"].([]any) {
			s := st.(map[string]any)
			sup := []string{}
			for _, id := range s["supports"].([]any) {
				if n := rename(id.(string)); n != "" {
					sup = append(sup, n)
				}
			}
			s["supports"] = sup
		}
	}
	return llmtest.JSON(sop)
}

func (rec *recording) answer(r llmtest.Request) llmtest.Reply {
	user := r.LastUserMessage()
	switch r.SchemaName() {
	case "extract_map":
		return rec.answerRead(rec.maps, user)
	case "extract_gap":
		return rec.answerRead(rec.gaps, user)
	case "extract_reduce":
		return rec.answerReduce(user)
	case "extract_sop":
		return rec.answerSOP(user)
	case "skill_prose":
		return llmtest.Text(rec.prose)
	case "glossary":
		// The recording predates the glossary request: a model that finds
		// no term to add (the mined entries it was shown are dropped).
		return llmtest.JSON(map[string]any{"terms": []any{}})
	}
	return llmtest.Status(400, "the replay has no answer for schema "+r.SchemaName())
}

// The done-when: the recorded answers of a strong model, replayed
// through the fake server (mapped by section and by the wording of each
// item, since the requests changed with the prompts), build a skill that
// `vibe check` passes; a rule whose meaning is changed fails it; every
// importance-5 item of the recording is in the skill or in the report with
// its reason; tier-1 rules keep their conclusions.
func TestReplayZipingzhenquan(t *testing.T) {
	t.Parallel() // a workspace of its own: overlaps the other slow tests of the package
	corpus := testcorpus.Dir(t, "bazi")
	recDir := filepath.Join(corpus, "..", "..", "llm-recordings", "zipingzhenquan")
	if _, err := os.Stat(recDir); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("recording %s missing under CI: %v", recDir, err)
		}
		t.Skipf("recording %s missing", recDir)
	}
	rec := loadRecording(t, recDir)
	dir := t.TempDir()
	if k := os.Getenv("VIBE_REPLAY_DIR"); k != "" { // keep the workspace for inspection
		dir = k
	}
	src := filepath.Join(dir, "knowledge", "zp", "source")
	if err := os.MkdirAll(src, 0o755); err != nil {
		t.Fatal(err)
	}
	book, err := os.ReadFile(filepath.Join(corpus, "子平真诠.md"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "子平真诠.md"), book, 0o644); err != nil {
		t.Fatal(err)
	}
	// The fake server reports prompt tokens counted as vibe counts them
	// (tiktoken o200k_base, the encoding of gpt-4o-mini).
	sp, err := chunk.New(chunk.Options{Encoding: llm.EncodingO200K})
	if err != nil {
		t.Fatal(err)
	}
	srv := llmtest.New(t)
	srv.SetFallback(func(r llmtest.Request) llmtest.Reply {
		rep := rec.answer(r)
		req := llm.Request{Messages: r.Messages}
		if name := r.SchemaName(); name != "" {
			var rf struct {
				JSONSchema struct {
					Schema json.RawMessage `json:"schema"`
				} `json:"json_schema"`
			}
			_ = json.Unmarshal(r.ResponseFormat, &rf)
			req.Schema = &llm.Schema{Name: name, JSON: rf.JSONSchema.Schema}
		}
		rep.PromptTokens = llm.PromptTokens(req, sp.Count)
		return rep
	})
	env := map[string]string{"OPENAI_BASE_URL": srv.URL, "OPENAI_API_KEY": "k"}
	code, out, errOut := runVibeUnraced(t, env, "-w", dir, "build", "zp", "--llm", "openai", "--until", "ingest")
	if code != 0 {
		t.Fatalf("build --until ingest exit %d:\n%s\n%s", code, out, errOut)
	}
	code, out, errOut = runVibeUnraced(t, env, "-w", dir, "extract", "zp", "--llm", "openai", "--dry-run", "--json")
	var plan struct {
		DryRun struct {
			Passes []struct {
				Pass         string `json:"pass"`
				PromptTokens int    `json:"prompt_tokens"`
			} `json:"passes"`
			Total struct {
				PromptTokens int `json:"prompt_tokens"`
			} `json:"total"`
		} `json:"dry_run"`
	}
	if err := json.Unmarshal([]byte(out), &plan); code != 0 || err != nil || srv.Count() != 0 {
		t.Fatalf("dry run: exit %d, %v, %d requests sent:\n%s\n%s", code, err, srv.Count(), out, errOut)
	}
	code, out, errOut = runVibeUnraced(t, env, "-w", dir, "build", "zp", "--llm", "openai", "--from", "extract")
	if code != 0 {
		t.Fatalf("build exit %d:\n%s\n%s", code, out, errOut)
	}
	for _, l := range strings.Split(out+errOut, "\n") {
		if f := strings.Fields(l); len(f) > 0 && (f[0] == "sop:" || f[0] == "patterns:" || f[0] == "rules:" || f[0] == "tiers:") {
			t.Log(strings.TrimSpace(l))
		}
	}
	// Prompt cost: the recording sent 1.90 prompt tokens per source token
	// without the schemas (extraction and SKILL.md prose, 2.07 with them);
	// issue 13 asks for under 1.5 with them. This build sends 1.49 (1.43
	// without; 1.81 before the tier request was folded into the reduce,
	// 1.55 before the gap pass ran ahead of it and the prose request
	// stopped repeating the SOP's steps; docs/extract.md). The dry run's
	// estimate is within 15% of what is sent.
	var st struct {
		SourceTokens int `json:"source_tokens"`
	}
	if b, err := os.ReadFile(filepath.Join(dir, ".vibe", "reports", "zp", "extract.json")); err != nil || json.Unmarshal(b, &st) != nil || st.SourceTokens == 0 {
		t.Fatalf("extraction report: %v", err)
	}
	// Counted as the client counts them (the response schema is part of
	// the prompt an endpoint bills), and without the schemas as issue 13
	// counted the recording (1.90).
	sent, bare, byPass := 0, 0, map[string]int{}
	for _, r := range srv.Requests() {
		if r.SchemaName() == "glossary" {
			continue // integrate's request, not the extraction's
		}
		req := llm.Request{Messages: r.Messages}
		b := llm.PromptTokens(req, sp.Count)
		var rf struct {
			JSONSchema struct {
				Name   string          `json:"name"`
				Schema json.RawMessage `json:"schema"`
			} `json:"json_schema"`
		}
		if json.Unmarshal(r.ResponseFormat, &rf) == nil && rf.JSONSchema.Name != "" {
			req.Schema = &llm.Schema{Name: rf.JSONSchema.Name, JSON: rf.JSONSchema.Schema}
		}
		n := llm.PromptTokens(req, sp.Count)
		sent += n
		bare += b
		byPass[r.SchemaName()] += n
	}
	if k := os.Getenv("VIBE_REPLAY_DIR"); k != "" { // the requests sent, for inspection: requests/NN-<schema>.txt
		rd := filepath.Join(k, "requests")
		_ = os.MkdirAll(rd, 0o755)
		for i, r := range srv.Requests() {
			var b strings.Builder
			for _, m := range r.Messages {
				fmt.Fprintf(&b, "=== %s\n%s\n", m.Role, m.Content)
			}
			fmt.Fprintf(&b, "=== response_format\n%s\n", r.ResponseFormat)
			_ = os.WriteFile(filepath.Join(rd, fmt.Sprintf("%02d-%s.txt", i+1, r.SchemaName())), []byte(b.String()), 0o644)
		}
	}
	ratio := float64(sent) / float64(st.SourceTokens)
	t.Logf("prompt tokens: %d sent with the schemas (%v), %d without, for %d source tokens: %.3f per source token with the schemas, %.3f without; dry-run estimate %d",
		sent, byPass, bare, st.SourceTokens, ratio, float64(bare)/float64(st.SourceTokens), plan.DryRun.Total.PromptTokens)
	if ratio >= 1.5 {
		t.Errorf("%.3f prompt tokens per source token with the schemas, want under 1.5 (issue 13)", ratio)
	}
	// The dry run also plans integrate's glossary request, which is not
	// the extraction's.
	est := float64(plan.DryRun.Total.PromptTokens)
	for _, p := range plan.DryRun.Passes {
		if p.Pass == "integrate.glossary" {
			est -= float64(p.PromptTokens)
		}
	}
	if est < 0.85*float64(sent) || est > 1.15*float64(sent) {
		t.Errorf("dry-run estimate %.0f prompt tokens for the extraction, %d sent: want within 15%%", est, sent)
	}
	for _, r := range srv.Requests() {
		if r.SchemaName() == "" {
			t.Errorf("unexpected request without a schema: %.300s", r.LastUserMessage())
		}
	}
	code, out, errOut = runVibeUnraced(t, env, "-w", dir, "check", "zp")
	if code != 0 {
		t.Fatalf("check of the replayed build: exit %d\n%s\n%s", code, out, errOut)
	}
	t.Logf("check: %s", lastLine(out))

	// A rule whose meaning is changed fails the check: every conclusion
	// negated (不 before its first clause, or that clause's negations
	// taken out) makes most rules fail; the one the test edits alone fails.
	p := filepath.Join(dir, "skills", "zp", "knowledge", "rules.yaml")
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	concl := regexp.MustCompile(`(?m)^(\s+conclusion: )(.*)$`)
	negate := func(c string) string {
		first := strings.FieldsFunc(c, func(r rune) bool { return strings.ContainsRune("，；。：、,;", r) })[0]
		if strings.ContainsAny(first, "不非无勿莫未") {
			return strings.Replace(c, first, strings.NewReplacer("不", "", "非", "", "无", "", "勿", "", "莫", "", "未", "").Replace(first), 1)
		}
		return "不" + c
	}
	all := concl.ReplaceAllStringFunc(string(data), func(l string) string {
		m := concl.FindStringSubmatch(l)
		return m[1] + negate(m[2])
	})
	write := func(s string) {
		t.Helper()
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(all)
	_, out, _ = runVibeUnraced(t, env, "-w", dir, "check", "zp", "--format", "json")
	var rep struct {
		Findings []struct {
			Severity, Check, Item, Message string
		} `json:"findings"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("check --format json: %v\n%.500s", err, out)
	}
	caught := map[string]bool{}
	for _, f := range rep.Findings {
		if f.Severity == "error" && strings.Contains(f.Message, " conclusion ") {
			caught[f.Item] = true
		}
	}
	n := len(concl.FindAllString(string(data), -1))
	t.Logf("negated conclusions caught: %d of %d", len(caught), n)
	if n == 0 || 2*len(caught) < n {
		t.Errorf("negating every conclusion: %d of %d rules fail the check, want at least half", len(caught), n)
	}
	// The first caught rule, negated alone, fails the check.
	one, done := "", false
	for _, l := range strings.SplitAfter(string(data), "\n") {
		if !done && concl.MatchString(strings.TrimSuffix(l, "\n")) {
			m := concl.FindStringSubmatch(strings.TrimSuffix(l, "\n"))
			if strings.Contains(all, m[1]+negate(m[2])) && len(caught) > 0 {
				cand := m[1] + negate(m[2]) + "\n"
				trial := strings.Replace(string(data), l, cand, 1)
				write(trial)
				if code, _, _ := runVibeUnraced(t, env, "-w", dir, "check", "zp"); code == 1 {
					one, done = cand, true
					continue
				}
			}
		}
	}
	if !done {
		t.Errorf("no single negated conclusion fails the check")
	} else {
		t.Logf("a single negated conclusion fails the check: %s", strings.TrimSpace(one))
	}
	write(string(data))

	// Red flags restating a rule link to it; a link to no rule fails the
	// check.
	pp := filepath.Join(dir, "skills", "zp", "knowledge", "patterns.yaml")
	pats, err := os.ReadFile(pp)
	if err != nil {
		t.Fatal(err)
	}
	link := regexp.MustCompile(`(?m)^(\s+rule: )R\d+$`)
	t.Logf("red flags linked to the rule they restate: %d", len(link.FindAllString(string(pats), -1)))
	if !link.Match(pats) {
		t.Errorf("no red flag links to a rule:\n%s", pats)
	} else {
		bad := link.ReplaceAllString(string(pats), "${1}R999")
		if err := os.WriteFile(pp, []byte(bad), 0o644); err != nil {
			t.Fatal(err)
		}
		if code, out, _ := runVibeUnraced(t, env, "-w", dir, "check", "zp"); code != 1 || !strings.Contains(out, "VIBE009") {
			t.Errorf("a red flag linked to no rule: check exit %d, want 1 with VIBE009\n%.2000s", code, out)
		}
		if err := os.WriteFile(pp, pats, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	checkReplayedSkill(t, rec, dir)
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	return s[strings.LastIndex(s, "\n")+1:]
}

// checkReplayedSkill asserts what the build kept of the recording's
// knowledge.
func checkReplayedSkill(t *testing.T, rec *recording, dir string) {
	t.Helper()
	kdir := filepath.Join(dir, "skills", "zp", "knowledge")
	rules, err := os.ReadFile(filepath.Join(kdir, "rules.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	pats, _ := os.ReadFile(filepath.Join(kdir, "patterns.yaml"))
	report, err := os.ReadFile(filepath.Join(dir, ".vibe", "reports", "zp", "extract.json"))
	if err != nil {
		t.Fatalf("no extraction report: %v", err)
	}
	skill := strings.Join(strings.Fields(string(rules)+string(pats)), "")
	rep := strings.Join(strings.Fields(string(report)), "")
	missing := 0
	for _, rr := range rec.reduce {
		for _, it := range rr.Items {
			if imp, _ := it["importance"].(float64); imp != 5 {
				continue
			}
			text := ""
			for _, k := range []string{"conclusion", "name", "signal"} {
				if s, _ := it[k].(string); s != "" {
					text = strings.Join(strings.Fields(s), "")
					break
				}
			}
			js, _ := json.Marshal(text)
			if !strings.Contains(skill, text) && !strings.Contains(rep, strings.Trim(string(js), `"`)) {
				missing++
				t.Errorf("importance-5 item %q is neither in the skill nor in the report", text)
			}
		}
	}
	// Tier-1 rules carry their conclusions.
	t1 := string(rules)
	if i := strings.Index(t1, "tier2_core:"); i >= 0 {
		t1 = t1[:i]
	}
	n, withConclusion := strings.Count(t1, "\n    - id:"), strings.Count(t1, "\n      conclusion:")
	if n == 0 || withConclusion != n {
		t.Errorf("tier-1 rules: %d, with a conclusion: %d\n%s", n, withConclusion, t1)
	}
	checkTiersByContent(t, rec, filepath.Join(kdir, "rules.yaml"), report)
	// No compute tool runs here: neither the SOP, the tools nor SKILL.md
	// send the agent to one.
	for _, f := range []string{filepath.Join(kdir, "sop.yaml"), filepath.Join(dir, "skills", "zp", "tools", "tools.yaml"), filepath.Join(dir, "skills", "zp", "SKILL.md")} {
		if b, _ := os.ReadFile(f); strings.Contains(string(b), "calculate_") {
			t.Errorf("%s names a compute tool no plugin runs", f)
		}
	}
}

// checkTiersByContent: tiers by content (issue 28). The recording's model
// graded 39 rules tier 1 for a tier of 10: every rule stays in the tier the
// model gave it or, a must-know rule that gave way, competes in tier 2 by
// importance; tier 3 holds
// only the model's tier-3 rules, none with a note the model did not write
// (the build used to move 15 core rules into tier3_edge with the note
// "例外情形"); every rule that gave way is listed in the report.
func checkTiersByContent(t *testing.T, rec *recording, rulesPath string, report []byte) {
	t.Helper()
	type graded struct{ tier, note string }
	byCond := map[string]graded{}
	t1 := 0
	for _, rr := range rec.reduce {
		for _, it := range rr.Items {
			if it["kind"] != "rule" {
				continue
			}
			c, _ := it["condition"].(string)
			tier, _ := it["tier"].(string)
			note, _ := it["note"].(string)
			byCond[strings.Join(strings.Fields(c), "")] = graded{tier, note}
			if tier == "tier1" {
				t1++
			}
		}
	}
	matched := 0
	for _, r := range readRules(t, rulesPath) {
		g, ok := byCond[strings.Join(strings.Fields(r.Condition), "")]
		if !ok {
			continue
		}
		matched++
		want := map[string]string{"tier1": knowledge.Tier1, "tier2": knowledge.Tier2, "tier3": knowledge.Tier3}[g.tier]
		if r.Tier != want && !(g.tier == "tier1" && r.Tier == knowledge.Tier2) {
			t.Errorf("%s %q is in %s, the model put it in %s", r.ID, r.Condition, r.Tier, g.tier)
		}
		if r.Note != g.note {
			t.Errorf("%s %q has the note %q, the model wrote %q", r.ID, r.Condition, r.Note, g.note)
		}
	}
	var rep struct {
		GaveWay []extract.GaveWayItem `json:"gave_way"`
	}
	if err := json.Unmarshal(report, &rep); err != nil {
		t.Fatalf("extraction report: %v", err)
	}
	fromT1 := 0
	for _, g := range rep.GaveWay {
		if g.Tier == knowledge.Tier1 {
			fromT1++
		}
	}
	t.Logf("tiers by content: %d of the skill's rules matched to the recording by condition; %d graded tier 1, %d of them gave way (%d listed in all)", matched, t1, fromT1, len(rep.GaveWay))
	if matched < 60 || fromT1 != t1-10 {
		t.Errorf("%d rules matched, %d tier-1 rules listed as giving way; want 60 or more and %d", matched, fromT1, t1-10)
	}
}
