package integrate

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/vibelife/vibe/knowledge"
	"github.com/vibelife/vibe/llm/llmtest"
	"github.com/vibelife/vibe/skills"
)

// go-pinyin has no phrase table: a polyphonic character gets every reading
// (长生 is read zhang and chang sheng, 调候 diao and tiao hou), with and
// without tones, spaced and joined; one character gets none.
func TestPinyinOf(t *testing.T) {
	for _, tt := range []struct {
		term string
		want []string
	}{
		{"魁罡", []string{"kuí gāng", "kui gang", "kuigang"}},
		{"七杀", []string{"qī shā", "qi sha", "qisha"}},
		{"长生", []string{"chang sheng", "changsheng", "zhang sheng"}},
		{"调候", []string{"tiao hou", "diao hou"}},
		{"重阳", []string{"chong yang", "zhong yang"}},
		{"滴天髓", []string{"di tian sui", "ditiansui"}},
	} {
		got := PinyinOf(tt.term)
		for _, w := range tt.want {
			if !slices.Contains(got, w) {
				t.Errorf("PinyinOf(%s) = %q, want %q among them", tt.term, got, w)
			}
		}
		if len(got) > 1+2*maxPinyinReadings {
			t.Errorf("PinyinOf(%s): %d forms, want at most %d", tt.term, len(got), 1+2*maxPinyinReadings)
		}
	}
	if got := PinyinOf("和"); got != nil {
		t.Errorf("one character: %q, want none", got)
	}
}

func TestTermOfHeading(t *testing.T) {
	for h, want := range map[string]string{
		"25 论魁罡": "魁罡", "1.12 衰旺论": "衰旺", "四十三、论阳刃": "阳刃", "2.3.3 三秋乙木": "三秋乙木",
		"三命通会卷之十": "", "卷九": "", "52 时上偏财（以下所忌月分）": "时上偏财", "1 六甲日甲子时断": "",
		"论用神配气候得失之理": "", "论杂气如何取用": "", "Chapter 2": "", "第三章 论正官": "正官",
		// A classic's chapter titled by name then ordinal (六韬 文师第一;
		// 孙子兵法 in a plain-text collection: 用间篇第十三用间篇) names
		// the chapter's topic, not its number.
		"文师第一": "文师", "临境第三十六": "临境", "用间篇第十三用间篇": "用间", "九地篇第十一九地篇": "九地", "第一篇文韬": "文韬",
		"将威第二十二": "将威", "论将第十九": "论将",
	} {
		if got := termOfHeading(h); got != want {
			t.Errorf("termOfHeading(%q) = %q, want %q", h, got, want)
		}
	}
}

// Offline, the glossary holds the terms the headings, titles and pattern
// names name, and phrases that recur in the rules, each with its pinyin,
// so "Kui Gang" reaches 魁罡; the hand-kept glossary wins by term.
func TestMineGlossary(t *testing.T) {
	ks := &knowledgeSet{}
	ks.pats.Patterns.QuickPatterns = []knowledge.Pattern{{Name: "官煞混杂", Signature: "四柱庚辛俱见"}}
	for _, c := range []string{"伤官见官，为祸百端", "身弱而伤官见官", "伤官见官而无财", "七杀无制", "七杀有制则贵", "用七杀而身强"} {
		ks.rules.Rules.Tier2 = append(ks.rules.Rules.Tier2, knowledge.Rule{Condition: c})
	}
	g := MineGlossary(ks, GlossaryInputs{Headings: []string{"25 论魁罡", "四十三、论阳刃", "卷九"}, Titles: []string{"滴天髓"}})
	byTerm := map[string]skills.GlossaryTerm{}
	for _, e := range g.Terms {
		byTerm[e.Term] = e
		if e.From != skills.FromMined {
			t.Errorf("%s: from %q, want mined", e.Term, e.From)
		}
	}
	for _, want := range []string{"魁罡", "阳刃", "滴天髓", "官煞混杂", "伤官见官", "七杀"} {
		if _, ok := byTerm[want]; !ok {
			t.Errorf("no %s in %v", want, g.Terms)
		}
	}
	if _, ok := byTerm["伤官见"]; ok {
		t.Errorf("伤官见, only ever part of 伤官见官, was kept: %v", g.Terms)
	}
	if !slices.Contains(byTerm["魁罡"].Pinyin, "kui gang") {
		t.Errorf("魁罡: pinyin %q", byTerm["魁罡"].Pinyin)
	}

	dir := t.TempDir()
	hand := filepath.Join(dir, "glossary.yaml")
	if err := os.WriteFile(hand, []byte("terms:\n  - term: 七杀\n    aliases: [七煞]\n    english: [seven killings]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	h, ok, err := readGlossaryFile(hand)
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	merged := g.Overlay(markHand(h))
	for _, e := range merged.Terms {
		if e.Term == "七杀" && (e.From != skills.FromHand || !slices.Contains(e.Names(), "seven killings")) {
			t.Errorf("the hand entry did not win: %+v", e)
		}
	}
	if err := os.WriteFile(hand, []byte("terms:\n  - aliases: [x]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := readGlossaryFile(hand); err == nil || !strings.Contains(err.Error(), "glossary.yaml: terms[0]: term is empty") {
		t.Errorf("malformed glossary: %v", err)
	}
	// Deterministic: the same inputs give the same glossary.
	again := MineGlossary(ks, GlossaryInputs{Headings: []string{"25 论魁罡", "四十三、论阳刃", "卷九"}, Titles: []string{"滴天髓"}})
	if !slices.EqualFunc(g.Terms, again.Terms, func(a, b skills.GlossaryTerm) bool { return a.Term == b.Term && slices.Equal(a.Pinyin, b.Pinyin) }) {
		t.Error("two mines of the same inputs differ")
	}
}

// With a model, the glossary keeps the terms the model kept, with its
// synonyms, English renderings and pinyin (the field's reading first, then
// the forms without tones), drops the candidates it left out as no terms,
// keeps the hand-kept entries over both, and a rebuild of the same
// knowledge asks nothing.
func TestModelGlossary(t *testing.T) {
	ks := &knowledgeSet{}
	for _, c := range []string{"七杀无制", "七杀有制则贵", "用七杀而身强", "伤官见官为祸", "伤官见官而无财", "身弱伤官见官"} {
		ks.rules.Rules.Tier2 = append(ks.rules.Rules.Tier2, knowledge.Rule{Condition: c})
	}
	in := GlossaryInputs{Headings: []string{"25 论魁罡", "二十五、长生"}, Titles: []string{"三命通会"}}
	answer := map[string]any{"terms": []map[string]any{
		{"term": "七杀", "synonyms": []string{"七煞", "偏官"}, "english": []string{"Seven Killings", "Seven Killing"}, "pinyin": []string{"qī shā"}},
		{"term": "魁罡", "synonyms": []string{}, "english": []string{"Kui Gang"}, "pinyin": []string{"kuí gāng"}},
		{"term": "长生", "synonyms": []string{}, "english": []string{"Growth", "Birth"}, "pinyin": []string{"cháng shēng"}},
		{"term": "伤官见官", "synonyms": []string{}, "english": []string{"Hurting Officer meets Officer"}, "pinyin": []string{"shāng guān jiàn guān"}},
		{"term": "三命通会", "synonyms": []string{}, "english": []string{"San Ming Tong Hui"}, "pinyin": []string{"sān mìng tōng huì"}},
	}}
	srv := llmtest.New(t)
	srv.SetFallback(func(r llmtest.Request) llmtest.Reply {
		if r.SchemaName() != "glossary" {
			return llmtest.Status(400, "unexpected "+r.SchemaName())
		}
		return llmtest.JSON(answer)
	})
	cache := t.TempDir()
	dir := t.TempDir()
	hand := filepath.Join(dir, "glossary.yaml")
	if err := os.WriteFile(hand, []byte("terms:\n  - term: 魁罡\n    english: [Kui Gang days]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	opt := IntegrateOptions{Theme: "bazi", LLM: proseClient(t, srv, cache), Model: "m", GlossaryInputs: in, Glossary: hand}
	g, _, err := ks.buildGlossary(context.Background(), opt, labels{code: "zh"})
	if err != nil {
		t.Fatal(err)
	}
	byTerm := map[string]skills.GlossaryTerm{}
	for _, e := range g.Terms {
		byTerm[e.Term] = e
	}
	if e := byTerm["七杀"]; e.From != skills.FromModel || !slices.Contains(e.English, "Seven Killings") || !slices.Contains(e.Aliases, "七煞") ||
		!slices.Contains(e.Pinyin, "qī shā") || !slices.Contains(e.Pinyin, "qi sha") || !slices.Contains(e.Pinyin, "qisha") {
		t.Errorf("七杀: %+v", e)
	}
	if e := byTerm["长生"]; e.Pinyin[0] != "cháng shēng" || !slices.Contains(e.Pinyin, "chang sheng") {
		t.Errorf("长生: the field's reading should come first: %+v", e)
	}
	if e := byTerm["魁罡"]; e.From != skills.FromHand || !slices.Equal(e.English, []string{"Kui Gang days"}) {
		t.Errorf("魁罡: the hand-kept entry should win: %+v", e)
	}
	for term := range byTerm {
		if strings.HasPrefix(term, "伤官见") && term != "伤官见官" {
			t.Errorf("%s, which the model left out, is still in the glossary", term)
		}
	}
	reqs := srv.Requests()
	if len(reqs) != 1 || !strings.Contains(reqs[0].LastUserMessage(), `"sources_language":"Chinese","user_languages":["English"]`) || !strings.Contains(reqs[0].LastUserMessage(), `"term":"魁罡"`) {
		t.Fatalf("%d requests; the first: %s", len(reqs), reqs[0].LastUserMessage())
	}
	// The same knowledge again: answered from the cache.
	opt.LLM = proseClient(t, srv, cache)
	if _, _, err := (&knowledgeSet{rules: ks.rules}).buildGlossary(context.Background(), opt, labels{code: "zh"}); err != nil {
		t.Fatal(err)
	}
	if srv.Count() != 1 {
		t.Errorf("a rebuild of the same knowledge sent %d requests in all, want 1", srv.Count())
	}
}

// English sources get terms too (the blind chess theme got 0): heading
// titles without their numbering, in lower case when set in capitals;
// phrases of two or three words and capitalised names recurring in the
// rules; never notation, figures, sentences, questions or the e-text's
// own headings.
func TestMineGlossaryEnglish(t *testing.T) {
	for h, want := range map[string]string{
		"SALIENT POINTS ABOUT PAWNS": "salient points about pawns", "16. QUEEN AGAINST ROOK": "queen against rook",
		"THE OPENING": "opening", "CHAPTER IV": "", "5. PxP QxP": "", "EXAMPLE 39.--The ending Rook and King against King.": "",
		"How do I book a hotel?": "", "Advanced sick leave": "advanced sick leave", "GAME": "game",
		"TRANSLATOR'S PREFACE": "", "INFORMATION ABOUT THIS E-TEXT EDITION": "", "Paid Parental Leave (PPL)": "paid parental leave",
	} {
		if got := termOfHeadingEN(h); got != want {
			t.Errorf("termOfHeadingEN(%q) = %q, want %q", h, got, want)
		}
	}
	ks := &knowledgeSet{}
	for _, c := range []string{"a passed Pawn is very strong", "the passed pawn advances", "Two passed pawns win", "the Bishop is better", "keep the Bishop", "a Bishop of the same colour", "BxKt and the passed pawn", "Therefore White plays", "Therefore White wins", "Therefore White loses"} {
		ks.rules.Rules.Tier2 = append(ks.rules.Rules.Tier2, knowledge.Rule{Condition: c})
	}
	g := MineGlossary(ks, GlossaryInputs{Headings: []string{"SALIENT POINTS ABOUT PAWNS", "5. PxP QxP", "Chess Fundamentals"}, Titles: []string{"Chess Fundamentals"}})
	byTerm := map[string]skills.GlossaryTerm{}
	for _, e := range g.Terms {
		byTerm[e.Term] = e
	}
	for _, want := range []string{"salient points about pawns", "chess fundamentals", "passed pawn", "bishop"} {
		if _, ok := byTerm[want]; !ok {
			t.Errorf("no %q in %v", want, g.Terms)
		}
	}
	for _, not := range []string{"BxKt", "PxP", "therefore white", "Therefore White", "Chess Fundamentals"} {
		if _, ok := byTerm[not]; ok {
			t.Errorf("%q is no term: %v", not, g.Terms)
		}
	}
	if len(byTerm["passed pawn"].Pinyin) > 0 {
		t.Errorf("an English term got pinyin: %v", byTerm["passed pawn"].Pinyin)
	}
}

// English sources are rendered in the other languages the theme's users
// write (the eval questions' Chinese), or in none; the prompt asks for no
// Chinese renderings a theme's users never write. Phase names that are
// steps of the procedure are no candidates; one named for a term is.
func TestGlossaryUserLanguages(t *testing.T) {
	ks := &knowledgeSet{}
	ks.sop.SOP.Phases = []knowledge.Phase{{ID: "P1", Name: "Identify the situation"}, {ID: "P2", Name: "apply the policy"}, {ID: "P3", Name: "Paid Parental Leave"}, {ID: "P4", Name: "收集出生信息"}, {ID: "P5", Name: "用神"}}
	cands, _ := mineCandidates(ks, GlossaryInputs{})
	var got []string
	for _, c := range cands {
		got = append(got, c.term)
	}
	if !slices.Equal(got, []string{"paid parental leave", "用神"}) {
		t.Errorf("phase-name candidates %q, want the terms only", got)
	}
	cands2 := []glossaryCandidate{{Term: "per diem"}}
	for _, tt := range []struct {
		L        string
		examples []string
		want     string
	}{
		{"en", []string{"Can I claim a per diem?"}, `"user_languages":[]`},
		{"en", []string{"Can I claim a per diem?", "出差补贴怎么算？"}, `"user_languages":["Chinese"]`},
		{"zh", nil, `"user_languages":["English"]`},
	} {
		reqs := glossaryRequests("m", "travel-leave", labels{code: tt.L}, tt.examples, cands2)
		if len(reqs) != 1 || !strings.Contains(reqs[0].Messages[1].Content, tt.want) {
			t.Errorf("%s sources, questions %q: %s, want %s", tt.L, tt.examples, reqs[0].Messages[1].Content, tt.want)
		}
		if sys := reqs[0].Messages[0].Content; !strings.Contains(sys, "user_languages") || strings.Contains(sys, "Chinese renderings instead") {
			t.Errorf("the prompt does not ask for the users' languages:\n%s", sys)
		}
	}
}

// Numbers are no terms: the ordinals of chapter titles recur across the
// headings (九地篇第十一, 火攻篇第十二, 用间篇第十三 all hold 十一…十三
// and 第十), and they would route any question holding a number.
func TestRecurringGramsAreNoNumbers(t *testing.T) {
	docs := []string{"九地篇第十一 用兵之法", "火攻篇第十一 用兵之法", "用间篇第十一 用兵之法", "第十一 用兵之法"}
	docs = append(docs, "兵道第十六", "奇兵第二十七", "均兵第五十五")
	for _, g := range recurringGrams(docs) {
		if i := strings.Index(g.term, "第"); strings.Trim(g.term, "一二三四五六七八九十百千零〇两第") == "" || i >= 0 && strings.Trim(g.term[i:], "一二三四五六七八九十百千零〇两第") == "" {
			t.Errorf("recurring gram %q is a number or runs into one", g.term)
		}
	}
	found := false
	for _, g := range recurringGrams(docs) {
		found = found || g.term == "用兵"
	}
	if !found {
		t.Errorf("recurring grams %+v lack 用兵", recurringGrams(docs))
	}
}

// Quantities are no terms either: a book of formulas repeats 一升, 三日,
// 五枚, 半斤, 十二枚 in every recipe, and as glossary terms they routed any
// question holding one (三日后) to it; nor is a term run into a quantity
// (桂枝三两), which left 桂枝 out as only ever part of it. A number and a
// noun (五行, 六亲, 三合) is a term.
func TestRecurringGramsAreNoQuantities(t *testing.T) {
	var docs []string
	for i := 0; i < 4; i++ {
		docs = append(docs, "桂枝三两 甘草二两 大枣十二枚 水七升 煮取三升 三日 半斤 五枚 五行 六亲 三合 脉数 夜半")
	}
	got := map[string]bool{}
	for _, g := range recurringGrams(docs) {
		got[g.term] = true
	}
	for _, q := range []string{"三两", "二两", "十二枚", "七升", "三升", "三日", "半斤", "五枚", "桂枝三两", "大枣十二", "枣十二枚", "煮取三升"} {
		if got[q] {
			t.Errorf("recurring gram %q is a quantity", q)
		}
	}
	for _, term := range []string{"五行", "六亲", "三合", "桂枝", "甘草", "大枣", "脉数", "夜半"} {
		if !got[term] {
			t.Errorf("recurring grams lack the term %q: %v", term, got)
		}
	}
}

// The glossary of a classic whose chapters are titled by name and ordinal
// holds the names, never a title with its ordinal (将威第二十二, which the
// English reading of titles let through) nor the offline SOP's phase
// (依规则作答).
func TestMineGlossaryChapterNames(t *testing.T) {
	ks := &knowledgeSet{}
	ks.sop.SOP.Phases = append(ks.sop.SOP.Phases, knowledge.Phase{ID: "P1", Name: "依规则作答"})
	g := MineGlossary(ks, GlossaryInputs{Headings: []string{"第三篇龙韬", "将威第二十二", "论将第十九", "用间篇第十三用间篇", "文师第一"}})
	var got []string
	for _, term := range g.Terms {
		got = append(got, term.Term)
	}
	want := "将威 文师 用间 论将 龙韬"
	if strings.Join(got, " ") != want {
		t.Errorf("glossary terms %q, want %q", got, want)
	}
}

// The model's entries of one term are merged, and an entry given no
// renderings gets those of the entry naming it, or its 煞/杀 variant, as a
// synonym: 弃命从煞 is asked as "following the Seven Killings" too.
func TestShareRenderings(t *testing.T) {
	g := shareRenderings(skills.Glossary{Terms: []skills.GlossaryTerm{
		{Term: "弃命从杀", Aliases: []string{"从杀格"}, English: []string{"Follow the Seven Killings"}, From: skills.FromModel},
		{Term: "弃命从煞", From: skills.FromModel},
		{Term: "从杀格", From: skills.FromModel},
		{Term: "太岁", English: []string{"Grand Duke"}, From: skills.FromModel},
		{Term: "太岁", English: []string{"Tai Sui", "Grand Duke"}, Aliases: []string{"岁君"}, From: skills.FromModel},
		{Term: "小儿", From: skills.FromModel},
	}})
	by := map[string]skills.GlossaryTerm{}
	for _, e := range g.Terms {
		by[e.Term] = e
	}
	if len(g.Terms) != 5 {
		t.Errorf("%d entries, want 5 (太岁 once): %+v", len(g.Terms), g.Terms)
	}
	for _, term := range []string{"弃命从煞", "从杀格"} {
		if !slices.Equal(by[term].English, []string{"Follow the Seven Killings"}) {
			t.Errorf("%s: %+v, want 弃命从杀's rendering", term, by[term])
		}
	}
	if e := by["太岁"]; !slices.Equal(e.English, []string{"Grand Duke", "Tai Sui"}) || !slices.Equal(e.Aliases, []string{"岁君"}) {
		t.Errorf("太岁: %+v, want both entries joined", e)
	}
	if len(by["小儿"].English) != 0 {
		t.Errorf("小儿: %+v, nothing names it", by["小儿"])
	}
}

// All the candidates of five books are sent, in no more requests than the
// earlier cap of 400 took: 600 candidates in 8 batches.
func TestGlossaryBatchesSendEveryCandidate(t *testing.T) {
	var cands []glossaryCandidate
	for i := range 600 {
		cands = append(cands, glossaryCandidate{Term: fmt.Sprintf("术语%03d", i)})
	}
	bs := glossaryBatches(cands)
	n := 0
	for _, b := range bs {
		n += len(b)
	}
	if n != 600 || len(bs) != 8 {
		t.Errorf("%d candidates in %d batches, want 600 in 8", n, len(bs))
	}
}

// A heading joining a name and a verb phrase names the name, not a cut of
// it: a novel's chapter titles (诸葛亮智算华容, 诸葛亮火烧新野…) gave the
// "term" 诸葛亮智, found in four titles. A discussion of two terms side by
// side (十七、论墓库刑冲之说) names both, where it gave none (墓库 was no
// candidate). Numbering (第十一回) gives no phrase, and the words around a
// heading's term (论偏 of 论偏官, 官论 of 正官论) and a negation (不得) start
// or end no term.
func TestMinedTermsAreNoCuts(t *testing.T) {
	headings := []string{
		"第四十回 蔡夫人议献荆州 诸葛亮火烧新野", "第五十回 诸葛亮智算华容 关云长义释曹操",
		"第七十二回 诸葛亮智取汉中 曹阿瞒兵退斜谷", "第九十九回 诸葛亮大破魏兵 司马懿入寇西蜀",
		"第九十四回 诸葛亮乘雪破羌兵 司马懿克日擒孟达", "第四十三回 诸葛亮舌战群儒 鲁子敬力排众议",
		"第四十六回 用奇谋孔明借箭 献密计黄盖受刑", "第五十一回 诸葛亮智激孙权 孔明一气周公瑾",
		"第五十二回 诸葛亮智辞鲁肃 赵子龙计取桂阳",
		"第十一回 刘皇叔北海救孔融 吕温侯濮阳破曹操", "第十二回 陶恭祖三让徐州 曹孟德大战吕布",
		"第十三回 李傕郭汜大交兵 杨奉董承双救驾",
		"十七、论墓库刑冲之说", "七、论刑冲会合解法", "13 论偏官", "14 正官论", "论偏财", "15 论偏印",
		"14 正官论", "16 七杀论", "不得已而用之",
	}
	ks := &knowledgeSet{}
	for _, c := range []string{"刑冲而破格", "逢刑冲则发", "墓中之物，刑冲则开"} {
		ks.rules.Rules.Tier2 = append(ks.rules.Rules.Tier2, knowledge.Rule{Condition: c})
	}
	cands, _ := mineCandidates(ks, GlossaryInputs{Headings: headings})
	got := map[string]bool{}
	for _, c := range cands {
		got[c.term] = true
	}
	for _, want := range []string{"诸葛亮", "墓库", "刑冲", "偏官", "偏财"} {
		if !got[want] {
			t.Errorf("%s is not mined", want)
		}
	}
	for _, cut := range []string{"诸葛亮智", "十一回", "十二回", "论偏", "官论", "杀论", "不得"} {
		if got[cut] {
			t.Errorf("the cut %s is mined as a term", cut)
		}
	}
}

// A discussion's topic that runs terms together names each of them when
// the sources use each on its own (论将星华盖: 将星 and 华盖, though 将 and
// 盖 are prose characters), never the title whole with its 论 by the English
// titles' path; a name holding such characters is a term (桂枝汤方, 水火既济),
// as it was by that path; a topic that reads as prose (十干合而不合, 杂气如何取用) or whose part
// the sources never use alone (进交退伏) or never set apart as a term (紧要
// of 相神紧要, "important", in no list) names no part; 总论 and 合论 are
// words of discussion as 论 is. A reading a heading's term has names it,
// not a phrase of the wording that reads the same (日贵 and 日癸, "ri gui").
func TestHeadingTopicsNameTheirParts(t *testing.T) {
	headings := []string{"22 论将星华盖", "23 论日贵", "桂枝汤方", "11 水火既济", "五、论十干合而不合", "论杂气如何取用", "18 论进交退伏", "十五、论相神紧要", "16 总论岁运", "55 偏正财合论", "六亲总篇", "论刑冲与会合", "16 论暗金的煞"}
	passages := []string{
		"## 22 论将星华盖\n将星者，如三合寅午戌，午为将星。华盖者，喻如宝盖。",
		"凡将星、华盖，主贵。华盖逢空，为僧道。将星带刃，主掌兵权。",
		"十干合而不合，合而化。杂气如何取用，如何。进交者，交也。刑冲、会合，会合则吉，刑冲则凶。的煞者，的煞。暗金，暗金。",
		"相神紧要。相神者，为紧要也，最为紧要。",
	}
	ks := &knowledgeSet{}
	headings = append(headings, "13 论七杀", "12 论亡神")
	for _, c := range []string{"甲日癸酉时，主贵", "乙日癸未时，富", "丙日癸巳时，寿", "七煞戊申", "七煞有制戊申", "戊申见七煞"} {
		ks.rules.Rules.Tier2 = append(ks.rules.Rules.Tier2, knowledge.Rule{Condition: c})
	}
	cands, g := mineCandidates(ks, GlossaryInputs{Headings: headings, Passages: passages})
	got := map[string]bool{}
	for _, c := range cands {
		got[c.term] = true
	}
	for _, want := range []string{"七煞", "戊申", "六亲", "将星", "华盖", "将星华盖", "日贵", "岁运", "偏正财", "刑冲", "会合", "日癸", "桂枝汤方", "水火既济"} {
		if !got[want] {
			t.Errorf("%s is not mined", want)
		}
	}
	for _, no := range []string{"论将星华盖", "十干合而不合", "合而", "不合", "杂气如何取用", "如何", "进交", "退伏", "紧要", "总论岁运", "偏正财合", "六亲总", "暗金的煞", "的煞", "论暗金的煞"} {
		if got[no] {
			t.Errorf("%s is mined as a term", no)
		}
	}
	for _, e := range g.Terms {
		switch e.Term {
		case "华盖":
			if !slices.Contains(e.Pinyin, "hua gai") {
				t.Errorf("华盖: pinyin %q", e.Pinyin)
			}
		case "日贵":
			if !slices.Contains(e.Pinyin, "ri gui") {
				t.Errorf("日贵: pinyin %q", e.Pinyin)
			}
		case "日癸":
			if len(e.Pinyin) > 0 {
				t.Errorf("日癸, a phrase of the wording, reads as the heading's 日贵: pinyin %q", e.Pinyin)
			}
		case "七煞", "戊申":
			// 七煞 is 七杀 spelt otherwise; wu shen is only a reading of
			// 亡神 after its first, wang shen.
			if want := map[string]string{"七煞": "qi sha", "戊申": "wu shen"}[e.Term]; !slices.Contains(e.Pinyin, want) {
				t.Errorf("%s: pinyin %q, want %s", e.Term, e.Pinyin, want)
			}
		}
	}
}
