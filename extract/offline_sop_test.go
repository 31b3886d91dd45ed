package extract

import (
	"strings"
	"testing"
)

// Without a main line the books share, the SOP holds the procedures the
// sources list under method headings, one phase each, named after their
// heading, with their steps in order, each citing its own text. Orders given
// in passing (小儿之命，先看关煞，次看格局; First …, then …) are about one case
// and make no phase (issue 28), and no generic phase frames the methods.
func TestOfflineSOPProcedures(t *testing.T) {
	f := offlineFixture(t, map[string]string{
		"Brewing Green Tea": `# Brewing Green Tea

## Chapter 1. Water

If the water smells of chlorine, then let it stand for an hour.

## 2.2 Method: brewing in a glass

1. Warm the glass with a splash of hot water and pour it away.
2. Put in 3 grams of leaves; add water at 80 °C.
3. Stop after the third top-up: the leaves are spent.

## Notes

1. Green tea is the least oxidised.
2. It keeps for a year.
`,
		"普洱茶": `# 普洱茶

## 第三章 冲泡之法

1. 温壶烫杯，以沸水遍淋壶身。
2. 投茶，每一百毫升水投茶七克。
`,
		"渊海": `# 渊海

## 论小儿

又曰：小儿之命，当论时辰为正，先看关煞，次看格局。

## 论看命

子平之法，以日为主；先看提纲为重，次用年日时支，合成格局，方可断之。
`,
		"Making a pot": `# Making a pot

## The order of things

First, warm the pot. Then add the leaves. Finally, pour the water.
`,
	})
	sop := f.SOP.SOP
	type wantPhase struct {
		name  string
		steps []string
	}
	want := []wantPhase{
		{"Brewing Green Tea — Method: brewing in a glass", []string{"Warm the glass with a splash of hot water and pour it away", "Put in 3 grams of leaves; add water at 80 °C", "Stop after the third top-up: the leaves are spent"}},
		{"《普洱茶》冲泡之法", []string{"温壶烫杯，以沸水遍淋壶身", "投茶，每一百毫升水投茶七克"}},
	}
	if len(sop.Phases) != len(want) {
		var names []string
		for _, p := range sop.Phases {
			names = append(names, p.Name)
		}
		t.Fatalf("phases %q, want %d", names, len(want))
	}
	for i, w := range want {
		ph := sop.Phases[i]
		if ph.Name != w.name {
			t.Errorf("phase %d = %q, want %q", i+1, ph.Name, w.name)
		}
		var got []string
		for _, st := range ph.Steps {
			got = append(got, st.Action)
			if len(st.Evidence) != 1 || !strings.Contains(st.Evidence[0].Quote, st.Action) {
				t.Errorf("step %s %q is not the text it quotes: %+v", st.ID, st.Action, st.Evidence)
			}
			if st.Tool != "" {
				t.Errorf("step %s binds tool %q, which its source does not name", st.ID, st.Tool)
			}
		}
		if strings.Join(got, "|") != strings.Join(w.steps, "|") {
			t.Errorf("phase %q steps %q, want %q", ph.Name, got, w.steps)
		}
		if ph.EntryCondition == "" || hasHan(ph.EntryCondition) != hasHan(ph.Name) {
			t.Errorf("procedure %q: entry condition %q is missing or not in the procedure's language", ph.Name, ph.EntryCondition)
		}
	}
	if sop.Phases[0].NextPhase != "P2" || sop.Phases[1].NextPhase != "" {
		t.Errorf("next phases %q, %q: want P2 and none", sop.Phases[0].NextPhase, sop.Phases[1].NextPhase)
	}
	// The notes' numbered list is not a procedure, and each step cites its
	// own line: the quote of step 2 of the glass method is that line.
	if q := sop.Phases[0].Steps[1].Evidence[0].Quote; q != "Put in 3 grams of leaves; add water at 80 °C." {
		t.Errorf("step P1.2 quotes %q, want its whole line", q)
	}
}

// With no order in the sources (pages on unrelated questions, no listed
// method) the SOP says plainly that a procedure needs a model, and has one
// phase without steps: none is made up.
func TestOfflineSOPWithoutProcedures(t *testing.T) {
	f := offlineFixture(t, map[string]string{
		"a": "# Tea\n\n## How long do I brew whole leaves?\n\nIf the leaves are whole, then brew them for four minutes. Add 2.5 grams of leaves for every 250 millilitres of water.\n",
		"b": "# Storage\n\n## Can tea go stale?\n\nIf the tin is left open near the stove, then the tea turns rancid within a week.\n",
		"c": "# Water\n\n## What water should I use?\n\nIf the water smells of chlorine, then let it stand for an hour.\n",
	})
	sop := f.SOP.SOP
	if len(sop.Phases) != 1 || len(sop.Phases[0].Steps) != 0 {
		t.Fatalf("phases %+v, want one phase without steps", sop.Phases)
	}
	if !strings.Contains(sop.Description, "needs a model") || !strings.Contains(sop.Description, "OPENAI_BASE_URL") {
		t.Errorf("description %q does not say that a procedure needs a model and how to give it one", sop.Description)
	}
}

// When the books share a doctrine, the phases follow the heading order of
// the principal book (the one whose sections treat most of the topics the
// others treat too), consecutive sections on one topic being one phase; the
// other books' sections on a phase's topic add their rules; an order a book
// gives in passing (先看关煞，次看格局) is no phase.
func TestOfflineSOPFollowsHeadingOrder(t *testing.T) {
	f := offlineFixture(t, map[string]string{
		"真诠": `# 真诠

# 一、论阴阳

若阴阳相济，则为吉也。

# 二、论用神

若用神得力，则其命必贵。

# 三、论用神变化

若用神受制，则其格必变。

# 四、论正官

若正官逢财，则官得其生，故为贵也。

# 五、论正官取运

若正官透印，则运喜财乡。

# 六、论七杀

若七杀有制，则反为权也。
`,
		"渊海": `# 渊海

# 1 论小儿

小儿之命，先看关煞，次看格局。

# 2 论七杀

若七杀无制，则必为祸也。

# 3 论用神

若用神被冲，则其福不全。

# 4 论阴阳

若阴阳偏枯，则多灾病也。
`,
	})
	sop := f.SOP.SOP
	var names []string
	for _, p := range sop.Phases {
		names = append(names, p.Name)
	}
	want := []string{"论阴阳", "论用神、论用神变化", "论正官、论正官取运", "论七杀"}
	if strings.Join(names, "|") != strings.Join(want, "|") {
		t.Fatalf("phases %q, want 真诠's order %q", names, want)
	}
	if !strings.Contains(sop.Description, "真诠") || !strings.Contains(sop.Description, "模型") {
		t.Errorf("description %q does not name the book whose order it follows and that an overall procedure needs a model", sop.Description)
	}
	for i, p := range sop.Phases {
		if strings.Contains(p.Name+p.EntryCondition, "小儿") {
			t.Errorf("phase %q is a one-case remark", p.Name)
		}
		if len(p.Steps) == 0 {
			t.Errorf("phase %q has no steps", p.Name)
		}
		if next := ""; i+1 < len(sop.Phases) {
			next = sop.Phases[i+1].ID
			if p.NextPhase != next {
				t.Errorf("phase %s goes on to %q, want %q", p.ID, p.NextPhase, next)
			}
		}
	}
	// 渊海's 论用神 and 论七杀 add their rules to 真诠's phases.
	steps := func(i int) string {
		var b strings.Builder
		for _, st := range sop.Phases[i].Steps {
			b.WriteString(st.Action + "|")
		}
		return b.String()
	}
	if !strings.Contains(steps(1), "用神被冲") || !strings.Contains(steps(3), "七杀无制") {
		t.Errorf("the other book's rules on 用神 and 七杀 are missing: %q / %q", steps(1), steps(3))
	}
}

// Generated text (notes, red-flag actions, phase frames) is in the language
// of the text it accompanies: no Chinese template around English, and no
// English one around Chinese.
func TestOfflineLanguageOfGeneratedText(t *testing.T) {
	f := offlineFixture(t, map[string]string{
		"en": "# Tea\n\nUnless the leaves are very old, rinse them only once.\nIf the tin is left open near the stove, the tea turns rancid within a week.\n",
		"zh": "# 茶\n\n惟五月丙火，合炎上格，则不喜水破格。\n食神逢枭则夭。\n",
	})
	check := func(kind, source, generated string) {
		if generated != "" && hasHan(source) != hasHan(generated) {
			t.Errorf("%s: %q generated for %q is in the other language", kind, generated, source)
		}
	}
	n := 0
	for _, r := range f.Rules.Rules.All() {
		check("note", r.Condition, r.Note)
		n++
	}
	for _, x := range f.Patterns.Patterns.RedFlags {
		check("red flag action", x.Signal, x.Action)
		n++
	}
	if n < 4 {
		t.Fatalf("only %d items from the fixture: %+v", n, f)
	}
}

// One English handbook: its chapters, in order, are the phases, named
// without their numbering; a list under a chapter whose title says
// "procedures" is not taken for a method of that chapter.
func TestOfflineSOPHandbookChapters(t *testing.T) {
	f := offlineFixture(t, map[string]string{
		"Trustee Handbook": `# CHAPTER 1 – INTRODUCTION

The standing trustee must be personally involved in the trustee operation.

# CHAPTER 2 – POLICIES, PROCEDURES AND REPORTING

## A. Receipts

1. Receipts must be deposited within one business day.
2. Checks must be endorsed on receipt.

If the check number is not printed, the trustee must write a control number on it.

# CHAPTER 3 – BUDGETS

If there are unresolved items, the budget is approved except for the items in dispute.
`,
	})
	sop := f.SOP.SOP
	var names []string
	for _, p := range sop.Phases {
		names = append(names, p.Name)
	}
	if want := "INTRODUCTION|POLICIES, PROCEDURES AND REPORTING|BUDGETS"; strings.Join(names, "|") != want {
		t.Fatalf("phases %q, want the chapters %q", names, want)
	}
	if !strings.Contains(sop.Description, "needs a model") {
		t.Errorf("description %q does not say an overall procedure needs a model", sop.Description)
	}
	for _, p := range sop.Phases {
		if len(p.Steps) == 0 || len(p.Steps) > maxPhaseSteps || hasHan(p.EntryCondition) {
			t.Errorf("phase %q: %d steps, entry %q", p.Name, len(p.Steps), p.EntryCondition)
		}
	}
}
