package extract

import (
	"strings"
	"testing"
)

// The SOP holds the procedures the sources describe, one phase each, named
// after their heading, with their steps in order, each citing its own text;
// the design's collect and output phases frame them without steps.
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
		{"Collect", nil},
		{"Brewing Green Tea — Method: brewing in a glass", []string{"Warm the glass with a splash of hot water and pour it away", "Put in 3 grams of leaves; add water at 80 °C", "Stop after the third top-up: the leaves are spent"}},
		{"Making a pot — The order of things", []string{"First, warm the pot", "Then add the leaves", "Finally, pour the water"}},
		{"《普洱茶》冲泡之法", []string{"温壶烫杯，以沸水遍淋壶身", "投茶，每一百毫升水投茶七克"}},
		{"《渊海》小儿之命", []string{"先看关煞", "次看格局"}},
		{"《渊海》子平之法", []string{"先看提纲为重", "次用年日时支，合成格局", "方可断之"}},
		{"Output", nil},
	}
	if len(sop.Phases) != len(want) {
		var names []string
		for _, p := range sop.Phases {
			names = append(names, p.Name)
		}
		t.Fatalf("phases %q, want %d", names, len(want))
	}
	out := sop.Phases[len(sop.Phases)-1].ID
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
		if i > 0 && i < len(want)-1 && ph.NextPhase != out {
			t.Errorf("procedure %s goes on to %q, want the output phase %s", ph.ID, ph.NextPhase, out)
		}
		if i > 0 && i < len(want)-1 && (ph.EntryCondition == "" || hasHan(ph.EntryCondition) != hasHan(ph.Name)) {
			t.Errorf("procedure %q: entry condition %q is missing or not in the procedure's language", ph.Name, ph.EntryCondition)
		}
	}
	// The notes' numbered list is not a procedure, and each step cites its
	// own line: the quote of step 2 of the glass method is that line.
	if q := sop.Phases[1].Steps[1].Evidence[0].Quote; q != "Put in 3 grams of leaves; add water at 80 °C." {
		t.Errorf("step P2.2 quotes %q, want its whole line", q)
	}
}

// With no procedure in the sources the SOP is the design's generic frame,
// and no phase gets a template step with borrowed evidence.
func TestOfflineSOPWithoutProcedures(t *testing.T) {
	f := offlineFixture(t, map[string]string{
		"a": "# Tea\n\n## Rules\n\nIf the leaves are whole, then brew them for four minutes. Add 2.5 grams of leaves for every 250 millilitres of water.\n",
	})
	sop := f.SOP.SOP
	if len(sop.Phases) != 5 {
		t.Fatalf("%d phases, want the design's five", len(sop.Phases))
	}
	for _, ph := range sop.Phases {
		if len(ph.Steps) != 0 {
			t.Errorf("phase %s has steps %+v: no source describes them", ph.ID, ph.Steps)
		}
	}
	if !strings.Contains(sop.Description, "No procedure was found") {
		t.Errorf("description %q does not say that no procedure was found", sop.Description)
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
