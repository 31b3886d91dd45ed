package extract

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/vibelife/vibe/chunk"
)

// zhNovel is a synthetic vernacular novel: thirty speakers talk, the
// narrator tells what they did, one sentence states a custom generally.
func zhNovel() []chunk.Chunk {
	names := strings.Fields("宋江 林冲 武松 李逵 吴用 鲁达 杨志 柴进 晁盖 史进 朱仝 雷横 花荣 秦明 呼延 关胜 张顺 阮七 燕青 卢俊 戴宗 石秀 杨雄 解珍 孙立 徐宁 索超 董平 张清 刘唐")
	var chunks []chunk.Chunk
	for k := 0; k < 9; k++ {
		var b strings.Builder
		for i := 0; i < 10; i++ {
			a, c := names[(k*10+i)%len(names)], names[(k*10+i+7)%len(names)]
			fmt.Fprintf(&b, "%s道：“今日天色已晚，哥哥且去歇了，明日再商量。”%s听了，便叫庄客安排酒食，两个吃到二更。\n\n", a, c)
		}
		if k == 1 {
			b.WriteString("施恩道：\"这话最好。望兄长在意，切不可轻敌。\"武松道：\"这个却不妨。\"\n\n")
		}
		if k == 2 {
			b.WriteString("如果林冲看时，则不是别人，却是小旋风柴进。\n\n")
			b.WriteString("若是宋江不来，则众人必不肯散。\n\n")
			b.WriteString("凡出征之时，必先祭旗。\n\n")
			b.WriteString("次日宋江升帐，帐前一员大将，名唤呼延灼，惯使两条水磨八棱钢鞭。\n\n")
		}
		if k == 3 {
			b.WriteString("史文恭接著，劝道：'小将军不可轻敌。若论史某愚意，只宜坚守五寨，")
		}
		if k == 4 {
			b.Reset()
			b.WriteString("分作两处征剿。令贼无心恋战，必欲退兵急奔回山。'\n\n")
			for i := 0; i < 10; i++ {
				fmt.Fprintf(&b, "%s道：“今日天色已晚，哥哥且去歇了，明日再商量。”%s听了，便叫庄客安排酒食，两个吃到二更。\n\n", names[(k*10+i)%len(names)], names[(k*10+i+7)%len(names)])
			}
		}
		chunks = append(chunks, chunk.Chunk{ID: fmt.Sprintf("novel.txt#%d", k), Doc: "novel.txt", HeadingPath: []string{fmt.Sprintf("第%d回", k+1)}, Text: b.String()})
	}
	return chunks
}

// zhTreatise is a synthetic expository book that quotes a master now and
// then (子曰, 书云) and states its rules with 若…则.
func zhTreatise() []chunk.Chunk {
	text := "子曰：“学而时习之，不亦说乎。”\n\n若身弱财多，则宜印比帮身。\n\n若官杀混杂，则须去一留一。\n\n书云：“伤官见官，为祸百端。”\n\n若用神受伤，则主贫贱。\n\n"
	return []chunk.Chunk{{ID: "book.md#0", Doc: "book.md", HeadingPath: []string{"论用神"}, Text: text}}
}

func enNovel() []chunk.Chunk {
	names := strings.Fields("Stubb Flask Ahab Starbuck Queequeg Ishmael Tashtego Daggoo Pip Fedallah Peleg Bildad Mapple Perth Gabriel")
	var chunks []chunk.Chunk
	for k := 0; k < 4; k++ {
		var b strings.Builder
		for i := 0; i < 8; i++ {
			fmt.Fprintf(&b, "“Stand by to lower the boats,” said %s. “Aye, aye, sir,” cried %s, and the crew sprang to the braces while the wind rose.\n\n", names[(k*8+i)%len(names)], names[(k*8+i+3)%len(names)])
		}
		if k == 1 {
			b.WriteString("When at last the twelve rods were made, Ahab tried them.\n\n")
			b.WriteString("“You must never dart the iron before the mate gives the word,” said Stubb.\n\n")
			b.WriteString("Stubb turned. \"Steady. A boat must never be lowered in a gale.\"\n\n")
			b.WriteString("A whaleman must always coil the line clear of the boat.\n\n")
		}
		chunks = append(chunks, chunk.Chunk{ID: fmt.Sprintf("moby.epub#%d", k), Doc: "moby.epub", HeadingPath: []string{fmt.Sprintf("Chapter %d", k+1)}, Text: b.String()})
	}
	return chunks
}

func enHandbook() []chunk.Chunk {
	text := "When a plan is confirmed, the trustee disburses the payments monthly.\n\nThe trustee must file the annual report by the date the United States Trustee sets.\n\nIf a debtor misses two payments, the trustee files a motion to dismiss.\n\n"
	return []chunk.Chunk{{ID: "handbook.docx#0", Doc: "handbook.docx", HeadingPath: []string{"Administration"}, Text: text}}
}

// enCommentary cites its authorities by name before their words, many
// times: a treatise, not a story.
func enCommentary() []chunk.Chunk {
	var b strings.Builder
	for i, n := range strings.Fields("Mu Yu Shih Kung Lin Chen Chi Hao Ping Wang Tsao Li Tu Ho Mei") {
		fmt.Fprintf(&b, "Commentator %d. Tu %s said: “The general must be wary of the river crossing.”\n\n", i, n)
	}
	return []chunk.Chunk{{ID: "art.txt#0", Doc: "art.txt", HeadingPath: []string{"Commentary"}, Text: b.String()}}
}

func docIndex(chunks []chunk.Chunk) map[string]int {
	idx := map[string]int{}
	for _, c := range chunks {
		if _, ok := idx[c.Doc]; !ok {
			idx[c.Doc] = len(idx)
		}
	}
	return idx
}

func TestNarrativeDocs(t *testing.T) {
	for _, tc := range []struct {
		name   string
		chunks []chunk.Chunk
		want   map[string]bool
	}{
		{"zh", append(zhNovel(), zhTreatise()...), map[string]bool{"novel.txt": true, "book.md": false}},
		{"en", append(append(enNovel(), enHandbook()...), enCommentary()...), map[string]bool{"moby.epub": true, "handbook.docx": false, "art.txt": false}},
	} {
		idx := docIndex(tc.chunks)
		got := narrativeDocs(tc.chunks, idx)
		for doc, want := range tc.want {
			if n := got[idx[doc]]; (n != nil) != want {
				t.Errorf("%s: %s narrative = %v, want %v", tc.name, doc, n != nil, want)
			}
		}
		if n := got[idx["novel.txt"]]; tc.name == "zh" && n != nil && !n.names["宋江"] {
			t.Errorf("speakers of the novel: %v, want 宋江 among them", n.names)
		}
	}
}

// In a narrative document only rules stated generally (and patterns of
// passages outside the story), outside dialogue
// and narration, are kept; an expository document beside it keeps its
// rules.
func TestOfflineNarrativeTakesOnlyGeneralRules(t *testing.T) {
	for _, tc := range []struct {
		name    string
		chunks  []chunk.Chunk
		novel   string
		keep    []string // quotes that must stay
		refused []string // quotes of narration that must not make rules
	}{
		{"zh", append(zhNovel(), zhTreatise()...), "novel.txt",
			[]string{"凡出征之时，必先祭旗。", "若身弱财多，则宜印比帮身。", "若官杀混杂，则须去一留一。"},
			[]string{"如果林冲看时", "若是宋江不来", "道：", "切不可轻敌", "呼延灼", "令贼无心恋战"}},
		{"en", append(enNovel(), enHandbook()...), "moby.epub",
			[]string{"A whaleman must always coil the line clear of the boat.", "The trustee must file the annual report", "If a debtor misses two payments"},
			[]string{"Ahab tried them", "dart the iron", "said", "lowered in a gale"}},
	} {
		f, err := Offline(context.Background(), "t", tc.chunks, nil)
		if err != nil {
			t.Fatal(err)
		}
		var quotes []string
		for _, r := range f.Rules.Rules.All() {
			quotes = append(quotes, r.Evidence[0].Quote)
		}
		for _, p := range f.Patterns.Patterns.QuickPatterns {
			quotes = append(quotes, p.Evidence[0].Quote)
		}
		for _, st := range f.SOP.SOP.Phases {
			for _, s := range st.Steps {
				for _, e := range s.Evidence {
					quotes = append(quotes, e.Quote)
				}
			}
		}
		all := strings.Join(quotes, "\n")
		for _, k := range tc.keep {
			if !strings.Contains(all, k) {
				t.Errorf("%s: no rule quotes %q; rules and steps quote:\n%s", tc.name, k, all)
			}
		}
		for _, q := range quotes {
			for _, r := range tc.refused {
				if strings.Contains(q, r) {
					t.Errorf("%s: a rule or step of the novel quotes narration or dialogue: %q", tc.name, q)
				}
			}
		}
	}
}

func TestNarrativeRuleOK(t *testing.T) {
	n := &narrative{names: map[string]bool{"宋江": true, "Ahab": true}}
	for _, tc := range []struct {
		text string
		want bool
	}{
		{"凡出征之时，必先祭旗。", true},
		{"若逢大雪，切不可出战。", true},
		{"如果林冲看时，则不是别人，却是小旋风柴进。", false}, // narration: no explicit form
		{"若是宋江不来，则众人必不肯散。", false},       // a speaker of the story
		{"凡是他来时，必须吃了酒去。", false},         // a person, 了
		{"A whaleman must always coil the line clear of the boat.", true},
		{"When at last the twelve rods were made, Ahab tried them.", false},
		{"You must never dart the iron.", false},
		{"Ahab must never see the white whale.", false},
		{"The whale himself has never figured in any grand imposing way.", false},
		{"The headsman should stay in the bows from first to last.", true},
		{"赦书到日，莫负朕心，早早归顺，必当重用。", false},
		{"凡鸟偏从末世来，都知爱慕此生才。", false}, // a line of verse
		{"边关多荷戟，宜瑞不宜多。", false},
		{"凡遇大雪之日，不可远行。", true},
	} {
		zh := isHan(tc.text)
		p, ok := parseRule(tc.text, zh)
		if !ok {
			if tc.want {
				t.Errorf("%q: no rule parsed", tc.text)
			}
			continue
		}
		if got := narrativeRuleOK(n, p, sentence{Text: tc.text, Zh: zh}); got != tc.want {
			t.Errorf("narrativeRuleOK(%q) = %v, want %v (parse %+v)", tc.text, got, tc.want, p)
		}
	}
}

func TestInQuotes(t *testing.T) {
	text := "施恩道：\"这话最好。望兄长在意，切不可轻敌。\"武松道：\"好。\"凡事自宜省戒，切不可托大。\n凡出征之时，必先祭旗。他说“若来，必败。”劝道：'令贼无心恋战，必欲退兵。'"
	for _, tc := range []struct {
		at   string
		want bool
	}{{"望兄长", true}, {"凡事自宜", false}, {"凡出征", false}, {"必败", true}, {"令贼", true}} {
		if got := inQuotes(text, strings.Index(text, tc.at), true); got != tc.want {
			t.Errorf("inQuotes(%s) = %v, want %v", tc.at, got, tc.want)
		}
	}
}

func TestZhSpeakers(t *testing.T) {
	got := map[string]int{}
	zhSpeakers("宋江道：“好。”林冲道：\"走。\"玄德曰： 「可。」子曰：学而时习之。行者笑道：“呆子。”宋江道：“去。”", got)
	want := map[string]int{"宋江": 2, "林冲": 1, "玄德": 1, "者笑": 1}
	if len(got) != len(want) {
		t.Fatalf("speakers %v, want %v", got, want)
	}
	for k, n := range want {
		if got[k] != n {
			t.Errorf("speakers %v, want %v", got, want)
		}
	}
}
