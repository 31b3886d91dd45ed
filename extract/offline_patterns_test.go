package extract

import (
	"context"
	"sort"
	"strings"
	"testing"

	"github.com/vibelife/vibe/chunk"
	"github.com/vibelife/vibe/knowledge"
)

// fixture splits small Markdown documents (name -> text) into chunks, one
// per section, as the test splitter does; documents in name order.
func fixture(docs map[string]string) []chunk.Chunk {
	names := make([]string, 0, len(docs))
	for n := range docs {
		names = append(names, n)
	}
	sort.Strings(names)
	var out []chunk.Chunk
	for _, n := range names {
		out = append(out, splitMarkdown("knowledge/t/converted/"+n+".md", docs[n])...)
	}
	return out
}

func offlineFixture(t *testing.T, docs map[string]string) knowledge.Files {
	t.Helper()
	chunks := fixture(docs)
	res, err := Run(context.Background(), Options{Theme: "t", Chunks: chunks})
	if err != nil {
		t.Fatal(err)
	}
	validate(t, res.Files)
	if res.Counts.Dropped != 0 {
		t.Errorf("%d items quoted text that is not in their chunk", res.Counts.Dropped)
	}
	return res.Files
}

func TestOfflinePatterns(t *testing.T) {
	f := offlineFixture(t, map[string]string{
		"Brewing Tea": `# Brewing Tea

## Pattern: the sinking leaf

When most leaves sink within a minute, the water was hot enough and the tea is fresh. When they float for long, the water was too cool.

## Pattern: the opening leaf

Tightly rolled oolong gives its best cups from the third infusion, once the balls have unfurled.

## Notes

Water decides half of the cup.
`,
		"茶与命": `# 茶与命

## 常见之象

陈香之象：熟普汤色红浓，入口顺滑，带木香或枣香者，为存放得宜之征。

## 论格

如无丙丁，一派壬癸，又无戊己制之，名水泛木浮，死无棺椁。
若四柱庚辛俱见，谓之官煞混杂，无去留制伏，反主贫贱。
官煞混杂者，宜去其一。
命入贵格，主富。
若遇此格，不厌鬼多，多则贵。
印绶合格，行大运，最怕印绶变了。
如见官星，谓之官星，主贵。
`,
	})
	type want struct{ sig, ind, conf string }
	wants := map[string]want{
		"the sinking leaf": {"most leaves sink within a minute", "the water was hot enough and the tea is fresh", "medium"},
		"the opening leaf": {"the balls have unfurled", "Tightly rolled oolong gives its best cups from the third infusion", "medium"},
		"陈香之象":             {"熟普汤色红浓，入口顺滑，带木香或枣香", "为存放得宜之征", "medium"},
		"水泛木浮":             {"无丙丁，一派壬癸，又无戊己制之", "死无棺椁", "low"},
		"官煞混杂":             {"四柱庚辛俱见", "无去留制伏，反主贫贱", "low"},
	}
	got := map[string]knowledge.Pattern{}
	for _, p := range f.Patterns.Patterns.QuickPatterns {
		got[p.Name] = p
		q := p.Evidence[0].Quote
		if !strings.Contains(q, p.Signature) || !strings.Contains(q, p.Indication) {
			t.Errorf("pattern %s: signature %q or indication %q is not in its quote %q", p.Name, p.Signature, p.Indication, q)
		}
	}
	for name, w := range wants {
		p, ok := got[name]
		if !ok {
			t.Errorf("no pattern %q; got %v", name, keys(got))
			continue
		}
		if p.Signature != w.sig || p.Indication != w.ind || p.Confidence != w.conf {
			t.Errorf("pattern %s = (%q, %q, %s), want (%q, %q, %s)", name, p.Signature, p.Indication, p.Confidence, w.sig, w.ind, w.conf)
		}
	}
	if len(got) != len(wants) {
		t.Errorf("patterns %v, want exactly %v: 命入贵格, 遇此格, 印绶合格 and 官星 are not named configurations", keys(got), keys(wants))
	}
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func TestOfflineRedFlags(t *testing.T) {
	f := offlineFixture(t, map[string]string{
		"a": `# 存茶

若茶叶表面生白霜而有霉味，则是受潮变质，切勿饮用。
若汤色浑浊而有酸味，则多为渥堆不当或仓储受潮，宜弃之。
食神逢枭则夭。
若支成金局，则寿夭难言。
行至死绝之地，则运不通。
若日主得令，则不凶。
`,
		"b": `# Storing Tea

If the leaves smell of mould, discard them: mouldy tea is unsafe to drink.
If the tin is left open near the stove, the tea turns rancid within a week.
If the water is hard, the tea tastes flat.
`,
	})
	want := map[string]struct{ sev, action string }{
		"茶叶表面生白霜而有霉味":                         {"critical", "切勿饮用"},
		"汤色浑浊而有酸味":                            {"warning", "宜弃之"},
		"食神逢枭":                                {"critical", "原文断为「夭」：先核实确有此情形，再以典籍的说法转述此断语及其出处，并说明这不是确定的预言。"},
		"the leaves smell of mould":           {"critical", "discard them: mouldy tea is unsafe to drink"},
		"the tin is left open near the stove": {"warning", "The source warns: “the tea turns rancid within a week”. Confirm the signal is really present, then tell the user and cite the source."},
	}
	got := map[string]knowledge.RedFlag{}
	for _, x := range f.Patterns.Patterns.RedFlags {
		got[x.Signal] = x
		if hasHan(x.Signal) != hasHan(x.Action) {
			t.Errorf("red flag %q: action %q is not in the signal's language", x.Signal, x.Action)
		}
	}
	for sig, w := range want {
		x, ok := got[sig]
		if !ok {
			t.Errorf("no red flag %q; got %v", sig, keys(got))
			continue
		}
		if x.Severity != w.sev || x.Action != w.action {
			t.Errorf("red flag %q = (%s, %q), want (%s, %q)", sig, x.Severity, x.Action, w.sev, w.action)
		}
	}
	if len(got) != len(want) {
		t.Errorf("red flags %v, want exactly %v: 寿夭 names a topic, 死绝 a life stage, 不凶 takes the warning back, flat tea is no danger", keys(got), keys(want))
	}
	// Critical first.
	rf := f.Patterns.Patterns.RedFlags
	for i := 1; i < len(rf); i++ {
		if sevRank(rf[i].Severity) < sevRank(rf[i-1].Severity) {
			t.Errorf("red flag %s (%s) after %s (%s): critical ones come first", rf[i].ID, rf[i].Severity, rf[i-1].ID, rf[i-1].Severity)
		}
	}
}
