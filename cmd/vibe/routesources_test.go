package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/vibelife/vibe/internal/testcorpus"
)

// everydayQuestionsZH are everyday Chinese questions, written for the
// routing check of docs/glossary.md (Routing): none is about an installed
// skill, so each must reach no skill.
var everydayQuestionsZH = []string{
	"我和妻子吵架了怎么办", "明天北京天气怎么样", "头疼发烧吃什么药", "一斤猪肉多少钱",
	"三日后去北京出差要带什么", "周末带孩子去哪里玩", "番茄炒蛋怎么做", "手机充不进电怎么办",
	"附近有没有好吃的火锅店", "高铁票怎么退", "信用卡逾期了会怎样", "孩子不爱写作业怎么办",
	"新房装修要注意什么", "怎么学好英语口语", "失眠睡不着怎么办", "电脑开机很慢怎么处理",
	"租房合同要注意哪些条款", "猫咪不吃东西是生病了吗", "减肥晚饭吃什么好", "公积金怎么提取",
	"驾照考试科目二有什么技巧", "上海到杭州开车要多久", "怎么给父母挑生日礼物", "面试时怎么介绍自己",
	"洗衣机有异味怎么清洁", "夏天去哪里旅游比较凉快", "银行定期存款利息是多少", "怎样煮米饭才不会糊",
	"小区停车费一个月多少钱", "跑步膝盖疼怎么办", "如何申请护照", "家里的绿萝叶子发黄怎么办",
	"今年春节放假几天", "怎么挑选新鲜的鱼", "宝宝晚上总是哭闹怎么办", "朋友借钱不还怎么办",
}

// everydayKnownMisses are the everyday questions that still reach a skill,
// and why: 妻子 and 父母 are terms of the bazi glossary (the books' chapters
// 论妻子 and 论父母; 父母 is in examples/bazi/glossary.yaml), which the
// router trusts whole.
var everydayKnownMisses = map[string]string{"我和妻子吵架了怎么办": "bazi", "怎么给父母挑生日礼物": "bazi"}

// A new user's workspace (issue 28): bazi, and two themes of real books —
// "mixed" (a DOJ handbook DOCX, a Federal Register PDF, Moby-Dick as EPUB)
// and "novels" (三国演义 in GBK, 西游记 in UTF-8 with a BOM). Offline, the
// router finds no skill for "How is blubber tried out into oil on a
// whaler?" (its vocabulary is the skills' rules, glossary and headings,
// and Moby-Dick's chapter is "The Try-Works"); what the sources say sends
// it to mixed, and `vibe chat` says which passage chose it. The everyday
// questions reach no skill but the known miss.
func TestRouteBySourcesOnRealBooks(t *testing.T) {
	corpus := testcorpus.Dir(t)
	dir := copyWorkspace(t, baziWorkspace(t))
	for theme, files := range map[string][]string{
		"mixed":  {"docx/doj-chapter13-trustee-handbook-en.docx", "pdf/federal-register-2020-17221-3col-en.pdf", "epub/moby-dick.epub"},
		"novels": {"txt/sanguoyanyi.gbk.txt", "txt/xiyouji.utf8-bom.txt"},
	} {
		src := filepath.Join(t.TempDir(), theme)
		for _, f := range files {
			copyFile(t, filepath.Join(corpus, f), filepath.Join(src, filepath.Base(f)))
		}
		for _, args := range [][]string{{"curate", theme, "--from", src}, {"build", theme}} {
			if code, _, errOut := runVibeOffline(t, append([]string{"-w", dir, "--quiet"}, args...)...); code != 0 {
				t.Fatalf("vibe %s: exit %d:\n%s", strings.Join(args, " "), code, errOut)
			}
		}
	}

	const blubber = "How is blubber tried out into oil on a whaler?"
	var f strings.Builder
	f.WriteString("version: 1\nskill: mixed\ncases:\n")
	fmt.Fprintf(&f, "  - id: blubber\n    tags: [en]\n    question: %q\n    skill: mixed\n", blubber)
	// Three rare terms of the chapter (关羽, 斩华, 华雄) among bigrams no
	// book writes (羽温, 酒斩).
	fmt.Fprintf(&f, "  - id: huaxiong\n    tags: [zh]\n    question: %q\n    skill: novels\n", "关羽温酒斩华雄")
	for i, q := range everydayQuestionsZH {
		fmt.Fprintf(&f, "  - id: everyday-%02d\n    tags: [zh, off-topic]\n    question: %q\n    skill: none\n", i+1, q)
	}
	file := filepath.Join(t.TempDir(), "route.yaml")
	if err := os.WriteFile(file, []byte(f.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "route.json")
	if code, _, errOut := runVibeOffline(t, "-w", dir, "eval", "mixed", "--file", file, "--format", "json", "--output", out); code > 1 {
		t.Fatalf("vibe eval: exit %d:\n%s", code, errOut)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Cases []struct {
			ID    string `json:"id"`
			Turns []struct {
				User  string `json:"user"`
				Skill string `json:"skill"`
			} `json:"turns"`
		} `json:"cases"`
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	reached := 0
	for _, c := range rep.Cases {
		if len(c.Turns) != 1 {
			t.Fatalf("case %s: %d turns", c.ID, len(c.Turns))
		}
		q, got := c.Turns[0].User, c.Turns[0].Skill
		switch {
		case c.ID == "blubber":
			if got != "mixed" {
				t.Errorf("%q -> %q, want mixed", q, got)
			}
		case c.ID == "huaxiong":
			if got != "novels" {
				t.Errorf("%q -> %q, want novels", q, got)
			}
		case got != "":
			reached++
			if everydayKnownMisses[q] != got {
				t.Errorf("everyday question %q -> %q, want none", q, got)
			}
		}
	}
	t.Logf("everyday questions reaching a skill: %d of %d", reached, len(everydayQuestionsZH))

	code, text, errOut := runVibeOffline(t, "-w", dir, "chat", blubber)
	if code != 0 || !strings.Contains(text, "Skill: mixed") || !strings.Contains(text, "chosen by what its sources say") || !strings.Contains(text, "Moby-Dick") {
		t.Errorf("vibe chat %q: exit %d, want mixed chosen by a passage of Moby-Dick named:\n%s\n%s", blubber, code, text, errOut)
	}
}

// everydayQuestionsEN are everyday English questions that name no term of
// the bazi books: none may reach the bazi skill, whatever the glossary's
// characters gloss (杀 "hurt", 日 "day", 父 "father", 吉 "good", 食 "eat").
var everydayQuestionsEN = []string{
	"What's the weather going to be like in Chicago tomorrow?", "How do I get a refund for a cancelled train ticket?",
	"What should I cook for dinner tonight?", "My phone battery dies too fast, what can I do?",
	"How long does it take to drive from Boston to New York?", "What is a good gift for my father's birthday?",
	"How do I clean a washing machine that smells?", "Can I take ibuprofen for a headache?",
	"How do I apply for a passport?", "What are good places to visit in summer?",
	"How do I make my child do homework?", "My cat won't eat, is she sick?",
	"How much should I tip at a restaurant?", "How do I reset my router password?",
	"What is the best way to learn Spanish quickly?", "How do I fix a slow laptop?",
	"Should I buy or rent an apartment?", "How do I stop my knee hurting when I run?",
	"What time does the bank open on Saturday?", "How do I cook rice without burning it?",
	"My wife and I argue every day, what should we do?",
}

// termQuestionsEN name a term of the bazi books in translation, in words
// the glossary built offline lists no rendering of: the characters'
// English words and pinyin name them, as the search bridge composes them
// (七杀, 丙火 and 日主, 甲木, 四柱).
var termQuestionsEN = []string{
	"What does the seven killings star do in a chart?", "How should a Bing fire day master born in winter be read?",
	"What does Jia wood need in autumn?", "What are the four pillars of a person?",
}

// The bazi books built offline with no hand glossary carry the built-in
// table of the characters' English glosses (the Unicode Han Database's).
// With a second skill installed (examples/sourdough, so the only-skill
// path does not answer), no everyday English question is routed to bazi,
// though its words gloss characters of the terms, while a question naming
// a term in translation is (the router is told the terms the search bridge
// names, runtime/routebridge.go).
func TestEverydayEnglishQuestionsReachNoChineseSkill(t *testing.T) {
	dir := copyWorkspace(t, bareBaziWorkspace(t))
	if g, _ := os.ReadFile(filepath.Join(dir, "skills", "bazi", "knowledge", "glossary.yaml")); !strings.Contains(string(g), "\ncharacters:") {
		t.Fatalf("the bazi glossary has no characters table")
	}
	for _, args := range [][]string{{"curate", "sourdough", "--from", filepath.Join("..", "..", "examples", "sourdough", "pages")}, {"build", "sourdough"}} {
		if code, _, errOut := runVibeOffline(t, append([]string{"-w", dir, "--quiet"}, args...)...); code != 0 {
			t.Fatalf("vibe %s: exit %d:\n%s", strings.Join(args, " "), code, errOut)
		}
	}
	var f strings.Builder
	f.WriteString("version: 1\nskill: bazi\ncases:\n")
	for i, q := range everydayQuestionsEN {
		fmt.Fprintf(&f, "  - id: everyday-en-%02d\n    tags: [en, off-topic]\n    question: %q\n    skill: none\n", i+1, q)
	}
	for i, q := range termQuestionsEN {
		fmt.Fprintf(&f, "  - id: term-en-%02d\n    tags: [en, passage]\n    question: %q\n    skill: bazi\n", i+1, q)
	}
	file := filepath.Join(t.TempDir(), "route.yaml")
	if err := os.WriteFile(file, []byte(f.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "route.json")
	if code, _, errOut := runVibeOffline(t, "-w", dir, "eval", "bazi", "--file", file, "--format", "json", "--output", out); code > 1 {
		t.Fatalf("vibe eval: exit %d:\n%s", code, errOut)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Cases []struct {
			Turns []struct {
				User  string `json:"user"`
				Skill string `json:"skill"`
			} `json:"turns"`
		} `json:"cases"`
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Cases) != len(everydayQuestionsEN)+len(termQuestionsEN) {
		t.Fatalf("%d cases scored, want %d", len(rep.Cases), len(everydayQuestionsEN)+len(termQuestionsEN))
	}
	reached := 0
	for _, c := range rep.Cases {
		q, got := c.Turns[0].User, c.Turns[0].Skill
		if slices.Contains(termQuestionsEN, q) {
			if got != "bazi" {
				t.Errorf("%q -> %q, want bazi (it names a term in translation)", q, got)
			}
			continue
		}
		if got == "bazi" {
			t.Errorf("everyday question %q -> bazi, want another skill or none", q)
		}
		if got != "" {
			reached++
		}
	}
	t.Logf("everyday English questions reaching a skill: %d of %d (none bazi)", reached, len(everydayQuestionsEN))
}
