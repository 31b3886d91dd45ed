package extract

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode"

	"github.com/vibelife/vibe/chunk"
	"github.com/vibelife/vibe/knowledge"
)

func TestSplitSentences(t *testing.T) {
	text := "## 2.2 Method\n\n1. Warm the glass. Pour it away.\n2. Add 2.5 grams (e.g. a spoon) of leaves; stir.\n| a | b |\n君安叹曰：“此谈子平家真诠也！”若茶有仓味，则醒茶之期宜长。"
	got := splitSentences(text)
	want := []struct {
		text string
		enum bool
	}{
		{"Warm the glass.", true},
		{"Pour it away.", false},
		{"Add 2.5 grams (e.g. a spoon) of leaves;", true},
		{"stir.", false},
		{"君安叹曰：“此谈子平家真诠也！”若茶有仓味，则醒茶之期宜长。", false},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d sentences %+v, want %d", len(got), got, len(want))
	}
	for i, w := range want {
		if got[i].Text != w.text || got[i].Enum != w.enum {
			t.Errorf("sentence %d = %q (enum %v), want %q (enum %v)", i, got[i].Text, got[i].Enum, w.text, w.enum)
		}
		if text[got[i].Off:got[i].Off+len(got[i].Text)] != got[i].Text {
			t.Errorf("sentence %d: offset %d does not locate %q", i, got[i].Off, got[i].Text)
		}
	}
}

// A rule's condition and consequent are whole clauses of its sentence: the
// cut is at 则 or at clause punctuation, and English sentences are never cut
// at a modal verb.
func TestRuleParts(t *testing.T) {
	cases := []struct {
		in               string
		cond, concl      string
		tier             int
		priority, note   string
		confidence, desc string
		reason           string
	}{
		// Chinese: 凡/若 ... 则/必/宜, the cut at the clause boundary.
		{in: "凡冲泡普洱，必用厚壁之器。", cond: "冲泡普洱", concl: "必用厚壁之器", tier: 1, priority: "high", desc: "必用 is an obligation"},
		{in: "若茶有仓味，则醒茶之期宜长。", cond: "茶有仓味", concl: "醒茶之期宜长", tier: 2, confidence: "medium"},
		{in: "若存放得宜，则年份愈久，药香愈显。", cond: "存放得宜", concl: "年份愈久，药香愈显", tier: 2, desc: "宜 inside 得宜 is not a consequent"},
		{in: "凡用神太多，不宜克制，须泄之为妙。", cond: "用神太多", concl: "不宜克制，须泄之为妙", tier: 1, priority: "high", desc: "不宜 opens the clause; the cut is not between 不 and 宜"},
		{in: "若甲已化土，而行寅卯辰，克我化神，为大忌也。", cond: "甲已化土，而行寅卯辰，克我化神", concl: "为大忌", tier: 1, priority: "critical"},
		{in: "若茶叶表面生白霜而有霉味，则是受潮变质，切勿饮用。", cond: "茶叶表面生白霜而有霉味", concl: "是受潮变质，切勿饮用", tier: 1, priority: "critical"},
		{in: "若在艮坤，怕冲宜静。", cond: "在艮坤", concl: "怕冲宜静", tier: 2, desc: "two clauses after 若: the second is the consequent"},
		{in: "若午重子轻，则岁不降，亦无咎（其势已成，岁力不能为祸）。", cond: "午重子轻", concl: "岁不降，亦无咎", tier: 2, desc: "a trailing commentary in brackets is not part of the conclusion"},
		{in: "惟五月丙火，合炎上格，则不喜水破格。", cond: "五月丙火，合炎上格", concl: "不喜水破格", tier: 3, note: "例外：原文以「惟」引出，限定一般规则"},
		{in: "如命中有官星，而行伤官之运，则不吉。", cond: "命中有官星，而行伤官之运", concl: "不吉", tier: 2},
		{in: "日主喜金则吉，日主喜木则不吉。", cond: "日主喜金", concl: "则吉", tier: 2, desc: "a one-character judgement keeps its 则"},
		{in: "得戊己泄而助庚亦吉，若庚坐寅午，则丙之力量减。", cond: "庚坐寅午", concl: "丙之力量减", tier: 2, desc: "the rule starts at the 若 inside the sentence"},
		{in: "身弱而财多者，富屋贫人也。", cond: "身弱而财多", concl: "富屋贫人", tier: 2, desc: "a ……者 subject with a verb is a situation"},
		{in: "若为寿眉老叶，则可用沸水。", cond: "寿眉老叶", concl: "可用沸水", tier: 2},
		{in: "凡生普苦涩过重，必是投茶过多或浸泡过久。", cond: "生普苦涩过重", concl: "必是投茶过多或浸泡过久", tier: 2, confidence: "high", desc: "或 meaning 'or' is not a hedge"},
		// English.
		{in: "If the tea is a broken grade (fannings or dust), then brew it for no more than three minutes.", cond: "the tea is a broken grade (fannings or dust)", concl: "brew it for no more than three minutes", tier: 2, desc: "the comma inside brackets is not the cut"},
		{in: "Whenever the cup tastes bitter, lower the temperature by five degrees.", cond: "the cup tastes bitter", concl: "lower the temperature by five degrees", tier: 2},
		{in: "Black tea must always be brewed with freshly boiled water;", cond: "brewing black tea", concl: "Black tea must always be brewed with freshly boiled water", tier: 1, priority: "high", desc: "the situation of a passive must, and the whole statement"},
		{in: "Every brewing session must start with clean, odour-free vessels.", cond: "starting every brewing session", concl: "Every brewing session must start with clean, odour-free vessels", tier: 1},
		{in: "Every infusion must be poured out completely before the next one starts.", cond: "pouring out every infusion", concl: "Every infusion must be poured out completely before the next one starts", tier: 1},
		{in: "Never brew green tea with water at a rolling boil: boiling water scalds the leaves.", cond: "brewing green tea", concl: "Never brew green tea with water at a rolling boil", tier: 1, priority: "high",
			reason: "boiling water scalds the leaves", desc: "what follows the colon is why: the rule's conclusion, the instruction its action"},
		{in: "Never seal the starter jar airtight: the gas it makes can crack the glass.", cond: "sealing the starter jar airtight", concl: "Never seal the starter jar airtight", tier: 1, priority: "high",
			reason: "the gas it makes can crack the glass", desc: "without the reason the rule read 'sealing the jar airtight → never seal the jar airtight'"},
		{in: "Never reuse the leaves: stale.", cond: "reusing the leaves", concl: "Never reuse the leaves", tier: 1, desc: "a one-word tail is no reason"},
		{in: "Tea stored near spices should be kept in a sealed tin.", cond: "keeping tea stored near spices", concl: "Tea stored near spices should be kept in a sealed tin", tier: 2},
		{in: "A bitter edge that appears only in the second infusion means the first infusion was too long.", cond: "A bitter edge that appears only in the second infusion", concl: "the first infusion was too long", tier: 2},
		{in: "Unless the leaves are very old, rinse them only once.", cond: "Unless the leaves are very old", concl: "rinse them only once", tier: 3, note: "exception (introduced by “unless”)"},
		{in: "If the kettle water tastes of metal, discard it: metallic water is unsafe.", cond: "the kettle water tastes of metal", concl: "discard it: metallic water is unsafe", tier: 2},
		// English books (Capablanca, Lasker): the forms a textbook states
		// its rules in.
		{in: "If a player having the move touches one of his pieces he is under compulsion to move it;", cond: "a player having the move touches one of his pieces", concl: "he is under compulsion to move it", tier: 2, desc: "no comma: the consequent opens at its pronoun subject"},
		{in: "Castling is not permitted if the King in castling must pass over a square attacked by a hostile piece.", cond: "the King in castling must pass over a square attacked by a hostile piece", concl: "Castling is not permitted", tier: 2, desc: "a must inside the trailing condition does not make the sentence a failed 'S must'"},
		{in: "Doubled pawns are weak when ISOLATED, for they cannot support each other.", cond: "doubled pawns when ISOLATED", concl: "Doubled pawns are weak", tier: 2, desc: "a trailing when keeps the statement's subject; the reason after the comma is left out"},
		{in: "Pawn moves always create weaknesses, either by leaving other unsupported pawns behind.", cond: "pawn moves", concl: "Pawn moves always create weaknesses, either by leaving other unsupported pawns behind", tier: 2, desc: "S always V: a general statement"},
		{in: "In this last respect it might be generally said that _a passed Pawn increases in strength as the number of pieces on the board diminishes_.", cond: "a passed Pawn", concl: "a passed Pawn increases in strength as the number of pieces on the board diminishes", tier: 2, desc: "the principle the author set in italics"},
		{in: "The beginner would do well to remember this: viz., _bring out the Knights before bringing out the Bishops_.", cond: "bringing out the Knights", concl: "bring out the Knights before bringing out the Bishops", tier: 2, desc: "an italic instruction: the situation it governs"},
		{in: "Teleworking from locations outside the U.S. while on personal travel is not allowed.", cond: "teleworking from locations outside the U.S. while on personal travel", concl: "Teleworking from locations outside the U.S. while on personal travel is not allowed", tier: 1, priority: "high", desc: "a policy's prohibition: the subject is the situation"},
		{in: "Supervisors may be reimbursed for up to half the cost of professional liability insurance, up to $150.", cond: "reimbursing supervisors", concl: "Supervisors may be reimbursed for up to half the cost of professional liability insurance, up to $150", tier: 2, desc: "what a party may do or receive"},
		{in: "_The principle is to drive the opposing King to the last line on any side of the board_.", cond: "driving the opposing King", concl: "The principle is to drive the opposing King to the last line on any side of the board", tier: 2, desc: "a generic subject: the condition is what the principle is about"},
	}
	for _, c := range cases {
		p, ok := parseRule(c.in, isHan(c.in))
		if !ok {
			t.Errorf("%q: not read as a rule (%s)", c.in, c.desc)
			continue
		}
		if p.Cond != c.cond || p.Concl != c.concl || p.Tier != c.tier {
			t.Errorf("%q (%s):\n got  cond %q concl %q tier %d\n want cond %q concl %q tier %d", c.in, c.desc, p.Cond, p.Concl, p.Tier, c.cond, c.concl, c.tier)
		}
		if c.priority != "" && p.Priority != c.priority {
			t.Errorf("%q: priority %q, want %q", c.in, p.Priority, c.priority)
		}
		if c.note != "" && p.Note != c.note {
			t.Errorf("%q: note %q, want %q", c.in, p.Note, c.note)
		}
		if c.confidence != "" && p.Confidence != c.confidence {
			t.Errorf("%q: confidence %q, want %q", c.in, p.Confidence, c.confidence)
		}
		if p.Reason != c.reason {
			t.Errorf("%q (%s): reason %q, want %q", c.in, c.desc, p.Reason, c.reason)
		}
	}
}

// Sentences that are not rules, or that no cut would leave with two
// meaningful halves, are not read as rules.
func TestRulePartsRejects(t *testing.T) {
	cases := []struct{ in, why string }{
		{"Pour every drop out of the pot after each infusion so the leaves never stew.", "never sits in a subordinate clause: cutting there leaves both halves meaningless"},
		{"When they float for long, the water was too cool or the tea is old.", "the condition's subject points at a sentence the rule does not quote"},
		{"if they are long strips, then fill it one half.", "the condition's subject points back"},
		{"Why must the water be soft?", "a question"},
		{"Water decides half of the cup.", "no condition"},
		{"太乙者，数之始也。", "a definition of a term, not a judgement"},
		{"长生者，犹人之初生也。", "a simile definition"},
		{"如木，必得水以生之。", "a one-character condition"},
		{"如甲子，丙寅，丁卯，己巳，皆支生日，如日主衰弱，而支逢冲，则根拔矣。", "an example chart"},
		{"何以复有寅卯，又与甲乙分阴阳？", "a question"},
		{"然夫子又曰：不知命，无以为君子者，何居。", "a rhetorical question"},
		{"如此之类，在人之变化而己。", "此 points back"},
		{"逢卯则冲，而或支中有戌。", "the consequent of 则 is one character that is no judgement"},
		{"而乙则反是。", "反是 points at another rule"},
		{"但四柱忌见癸水。", "no clause to cut at"},
		{"如秉中和，入□□□富贵。", "text the converter could not decode"},
		{"The student should carefully study this example.", "an exhortation to the reader"},
		{"(The student should work this out.) He cannot win by 1 P - Kt 5, because P - Kt 3 draws.", "an exhortation, then narration about one position"},
		{"You will need to request the 1 hour in HR Links, and your supervisor will need to approve it.", "the subject is the reader and the condition would be empty"},
		{"Should you need to rebook your travel at any point in the process, read the instructions here.", "an inversion, not a subject"},
		{"The opposing King must then give the way free to one of the pawns.", "a step of one line of play"},
		{"and White will finally have to sacrifice the Rook for the Pawn.", "a fragment opening with a conjunction"},
		{"Therefore he must see to it that Black does not open files.", "a discourse word, then a pronoun subject"},
		{"Of course White must play Q", "a one-word actor with no situation"},
		{"EXAMPLE 39.--In this example we must mate either at Q R 1 or K R 8.", "a heading run into a sentence about the reader"},
		{"Here’s what you need to include for each field", "a pronoun inside the subject"},
		{"You don’t even have to click the button again (but you can if you want)", "the reader, with a negated auxiliary"},
		{"Whoever has the move wins", "an indefinite pronoun subject"},
		{"You can receive 15 Military Leave days each year for active duty.", "the reader's entitlement has no condition of its own"},
		{"This reduced rate is always 75% of normal M&IE.", "a pronoun subject"},
		{"It is allowed only once.", "a pronoun subject"},
		{"while on personal travel is not allowed.", "a fragment: the subject was cut off"},
	}
	for _, c := range cases {
		if p, ok := parseRule(c.in, isHan(c.in)); ok {
			t.Errorf("%q read as a rule (cond %q, concl %q); want none: %s", c.in, p.Cond, p.Concl, c.why)
		}
	}
}

func TestGerund(t *testing.T) {
	for in, want := range map[string]string{"brew": "brewing", "store": "storing", "stop": "stopping", "stir": "stirring", "open": "opening", "pour": "pouring", "tie": "tying", "see": "seeing", "boil": "boiling", "fix": "fixing"} {
		if got := gerund(in); got != want {
			t.Errorf("gerund(%q) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[string]string{"brewed": "brew", "stored": "store", "stopped": "stop", "dried": "dry", "used": "use", "poured": "pour", "kept": "keep", "opened": "open", "rinsed": "rins", "green": ""} {
		if got := participleBase(in); got != want {
			t.Errorf("participleBase(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestTrimClause(t *testing.T) {
	for in, want := range map[string]string{
		"the tea is a broken grade (fannings or dust), ": "the tea is a broken grade (fannings or dust)",
		"岁不降，亦无咎（其势已成，岁力不能为祸）":                           "岁不降，亦无咎",
		"则虽得午，亦难发生，（乙虽生午":                                "则虽得午，亦难发生",
		"俗称“一年茶、三年药、七年宝”。":                               "俗称“一年茶、三年药、七年宝”",
		"）残局": "残局",
	} {
		if got := trimClause(in); got != want {
			t.Errorf("trimClause(%q) = %q, want %q", in, got, want)
		}
	}
}

// hasHan reports whether s has any Han character.
func hasHan(s string) bool {
	return strings.IndexFunc(s, func(r rune) bool { return unicode.Is(unicode.Han, r) }) >= 0
}

// Odd input never panics and never yields a rule with an empty side.
func TestRulePartsOddInput(t *testing.T) {
	for _, in := range []string{"若AB，则CD。", "若，则。", "则吉。", "，，，则，", "If , then .", "Never.", "must must must", "凡者，也。", "若（，则）吉凶。", "If (a, b, then c", "(00000000 must AlwAYs Be0000000 with 000000000000000000000"} {
		if p, ok := parseRule(in, isHan(in)); ok && (p.Cond == "" || p.Concl == "") {
			t.Errorf("%q: rule with an empty side %+v", in, p)
		}
	}
}

// FuzzRuleParts: no input makes the parsers panic; a Chinese rule's parts
// are verbatim pieces of its sentence; every sentence span locates its text.
func FuzzRuleParts(f *testing.F) {
	for _, s := range []string{"凡冲泡普洱，必用厚壁之器。", "若午重子轻，则岁不降，亦无咎（其势已成）。", "If the tea is a broken grade (fannings or dust), then brew it.", "Black tea must always be brewed with freshly boiled water;", "1. 温壶烫杯。\n2. Pour.", "日主喜金则吉"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, sp := range splitSentences(s) {
			if s[sp.Off:sp.Off+len(sp.Text)] != sp.Text {
				t.Fatalf("span %+v does not locate its text in %q", sp, s)
			}
			p, ok := parseRule(sp.Text, isHan(sp.Text))
			if !ok {
				continue
			}
			if p.Cond == "" || p.Concl == "" {
				t.Fatalf("%q: empty side %+v", sp.Text, p)
			}
			src := despaceHan(joinLines(sp.Text)) // a line break inside a sentence is white space
			if p.Zh && (!strings.Contains(src, p.Cond) && !strings.Contains(sp.Text, p.Cond) || !strings.Contains(src, p.Concl) && !strings.Contains(sp.Text, p.Concl)) {
				t.Fatalf("%q: parts %q / %q are not verbatim", sp.Text, p.Cond, p.Concl)
			}
		}
	})
}

// A paragraph's lines are one text (a hard-wrapped English paragraph is not
// cut at each line end), and a sentence broken off at a paragraph break that
// the next paragraph continues is marked Cut and makes no rule.
func TestSplitSentencesParagraphs(t *testing.T) {
	text := "The trustee must keep the records\nof every case for six years. Then stop.\n\n" +
		"The standing trustee must deposit all funds promptly.  The standing trustee must not deposit\n\n" +
		"any funds received into the standing trustee’s business, personal, or law firm trust accounts.\n\n" +
		"- Never release funds to a creditor whose claim was disallowed\n- Keep two signatures\n\n" +
		"若身弱，\n\n则宜印。"
	got := splitSentences(text)
	want := []struct {
		text string
		cut  bool
	}{
		{"The trustee must keep the records\nof every case for six years.", false},
		{"Then stop.", false},
		{"The standing trustee must deposit all funds promptly.", false},
		{"The standing trustee must not deposit", true},
		{"any funds received into the standing trustee’s business, personal, or law firm trust accounts.", false},
		{"Never release funds to a creditor whose claim was disallowed", false},
		{"Keep two signatures", false},
		{"若身弱，", true},
		{"则宜印。", false},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d sentences %+v, want %d", len(got), got, len(want))
	}
	for i, w := range want {
		if got[i].Text != w.text || got[i].Cut != w.cut {
			t.Errorf("sentence %d = %q (cut %v), want %q (cut %v)", i, got[i].Text, got[i].Cut, w.text, w.cut)
		}
		if text[got[i].Off:got[i].Off+len(got[i].Text)] != got[i].Text {
			t.Errorf("sentence %d: offset %d does not locate %q", i, got[i].Off, got[i].Text)
		}
	}
	chunks := []chunk.Chunk{{ID: "c1", Doc: "a.md", Text: text}, {ID: "c2", Doc: "a.md", Text: "The trustee must file the annual report by the date the United States Trustee sets and"},
		{ID: "c3", Doc: "a.md", Text: "must not file it late."}}
	f, err := Offline(context.Background(), "t", chunks, nil)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, r := range f.Rules.Rules.All() {
		n++
		q := r.Evidence[0].Quote
		if strings.HasSuffix(q, "must not deposit") || strings.HasSuffix(q, "sets and") || strings.HasPrefix(q, "若身弱") {
			t.Errorf("%s quotes a cut sentence: %q", r.ID, q)
		}
		if strings.Contains(r.Condition+r.Action+r.Conclusion, "\n") {
			t.Errorf("%s holds a line break: %+v", r.ID, r.Rule)
		}
	}
	if n == 0 {
		t.Error("no rule from the whole sentences")
	}
}

// drop.yaml leaves out the items it names, by words of a quote or by the
// condition, and says which entries matched nothing; a bad file is an error
// naming it.
func TestDrops(t *testing.T) {
	mk := func(id, cond, quote string) knowledge.Rule {
		return knowledge.Rule{ID: id, Condition: cond, Conclusion: "x", Evidence: []knowledge.Evidence{{Chunk: "c", Quote: quote}}}
	}
	f := knowledge.Files{}
	f.Rules.Rules.Tier1 = []knowledge.Rule{mk("R001", "the standing trustee", "The standing trustee must not deposit")}
	f.Rules.Rules.Tier2 = []knowledge.Rule{mk("R002", "身弱", "若身弱，则宜印。"), mk("R003", "a plan is confirmed", "When a plan is confirmed, pay.")}
	f.Patterns.Patterns.RedFlags = []knowledge.RedFlag{{ID: "F001", Signal: "身弱", Evidence: []knowledge.Evidence{{Chunk: "c", Quote: "身弱则凶"}}}}
	dropped, unused := ApplyDrops(&f, []Drop{{Quote: "standing  trustee must not"}, {Condition: "身弱"}, {Quote: "nowhere"}})
	if len(dropped) != 3 || len(unused) != 1 || unused[0] != 3 {
		t.Fatalf("dropped %+v, unused %v; want R001, R002 and F001 dropped, entry 3 unused", dropped, unused)
	}
	if all := f.Rules.Rules.All(); len(all) != 1 || all[0].ID != "R003" || len(f.Patterns.Patterns.RedFlags) != 0 {
		t.Errorf("left %+v and %d red flags", all, len(f.Patterns.Patterns.RedFlags))
	}
	dir := t.TempDir()
	p := filepath.Join(dir, DropFileName)
	if d, err := LoadDrops(p); err != nil || d != nil {
		t.Errorf("missing file: %v, %v", d, err)
	}
	for body, want := range map[string]string{"drop:\n  - why: x\n": "neither quote nor condition", "drops:\n  - quote: x\n": "field drops not found", "drop: [": p} {
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := LoadDrops(p); err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), p) {
			t.Errorf("LoadDrops(%q) = %v, want an error naming the file and %q", body, err, want)
		}
	}
	if err := os.WriteFile(p, []byte(""), 0o644); err != nil {
		t.Fatal(err)
	}
	if d, err := LoadDrops(p); err != nil || len(d) != 0 {
		t.Errorf("empty file: %v, %v", d, err)
	}
}

// Dotted initials ("U.S.", "a.m.") do not end a sentence.
func TestSplitSentencesDottedInitials(t *testing.T) {
	got := splitSentences("Teleworking from locations outside the U.S. while on personal travel is not allowed. Flights leave at 9 a.m. sharp.")
	var texts []string
	for _, s := range got {
		texts = append(texts, s.Text)
	}
	want := []string{"Teleworking from locations outside the U.S. while on personal travel is not allowed.", "Flights leave at 9 a.m. sharp."}
	if strings.Join(texts, "|") != strings.Join(want, "|") {
		t.Errorf("sentences %q, want %q", texts, want)
	}
}

// English candidates rank by what they are: a principle the author set
// in italics first, a step of one line of play ("then the Rook moves
// away …"), a consequent about someone the rule does not name ("he can
// effect …") and a condition in notation below a rule that names its
// subject.
func TestEnglishSignals(t *testing.T) {
	s := sentence{Chunk: &chunk.Chunk{HeadingPath: []string{"SALIENT POINTS ABOUT PAWNS"}}}
	plain := enSignals(ruleParse{Cond: "the bishop is blocked", Concl: "the bishop is a poor piece"}, s)
	for _, c := range []struct {
		p    ruleParse
		more bool
	}{
		{ruleParse{Cond: "a passed Pawn", Concl: "a passed Pawn increases in strength", maxim: true}, true},
		{ruleParse{Cond: "doubled pawns are isolated", Concl: "doubled pawns are weak"}, true},
		{ruleParse{Cond: "then the Rook moves away from the King", Concl: "the Rook is lost"}, false},
		{ruleParse{Cond: "White does not wish to lose moves", Concl: "he can effect the intended protection"}, false},
		{ruleParse{Cond: "White plays P-K5", Concl: "the Knight must retreat"}, false},
	} {
		if got := enSignals(c.p, s); (got > plain) != c.more || got == plain {
			t.Errorf("%q -> %q: %.2f against %.2f for a plain rule; want it ranked %s", c.p.Cond, c.p.Concl, got, plain, map[bool]string{true: "above", false: "below"}[c.more])
		}
	}
}

// An instruction's situation is its verb as a gerund with the verb's object;
// a verb with no object names none, so no rule is made of it: the gerund
// alone ("minding", "moring", "equaling") is a word the source never wrote.
func TestSituationNeedsAnObject(t *testing.T) {
	for _, tt := range []struct{ lead, rest, want string }{
		{"Never", "brew green tea with water at a rolling boil.", "brewing green tea"},
		{"Always", "warm the glass first.", "warming the glass first"},
		{"Avoid", "boiling water for green tea.", "boiling water"},
		{"Never", "mind.", ""},
		{"never", "more to rise and blow.", ""},
		{"Never", "dream with thy hand on the helm!", ""},
		{"always", "equal to himself.", ""},
		{"always", "to hope the best;", "hoping the best"},
		{"never", "to despair of a friend.", "despairing of a friend"},
		{"Always", "be polite to a guest.", "being polite"},
		{"Always", "the same.", ""},
	} {
		if got := situation(tt.lead, tt.rest); got != tt.want {
			t.Errorf("situation(%q, %q) = %q, want %q", tt.lead, tt.rest, got, tt.want)
		}
	}
	for _, s := range []string{"But never mind.", "Never dream with thy hand on the helm!", "He was always equal to himself."} {
		if p, ok := parseRule(s, false); ok {
			t.Errorf("%q made a rule: %+v", s, p)
		}
	}
}

// What happened once, told in the past ("When Lionel Giles began his
// translation ..., the work was virtually unknown in Europe"), is no rule;
// the same form in the present is.
func TestPastNarrationIsNoRule(t *testing.T) {
	for _, s := range []string{
		"When Lionel Giles began his translation of Sun Tzu's ART OF WAR, the work was virtually unknown in Europe.",
		"When the army reached the river, the general ordered a halt for the night.",
	} {
		if p, ok := parseRule(s, false); ok {
			t.Errorf("%q made a rule: %+v", s, p)
		}
	}
	for _, s := range []string{
		"When the army reaches the river, the general must halt for the night.",
		"When a traveler is delayed overnight, the agency pays for lodging.",
	} {
		if _, ok := parseRule(s, false); !ok {
			t.Errorf("%q made no rule", s)
		}
	}
}

// A sentence that names itself a rule is one, in the author's words: its
// condition the situation it governs.
func TestStatedRule(t *testing.T) {
	for _, tt := range []struct{ in, cond, concl string }{
		{"The rule is, not to besiege walled cities if it can possibly be avoided.", "besieging walled cities", "not to besiege walled cities if it can possibly be avoided"},
		{"The first principle is to secure the flanks before advancing.", "securing the flanks", "to secure the flanks before advancing"},
	} {
		p, ok := parseRule(tt.in, false)
		if !ok || p.Cond != tt.cond || p.Concl != tt.concl || !p.maxim {
			t.Errorf("%q -> %+v, %v; want %q -> %q", tt.in, p, ok, tt.cond, tt.concl)
		}
	}
}

// A rule whose paragraph has moved on from its section's formula to
// another is filed under the one its paragraph names, not under the
// heading's: 若脉微弱，汗出恶风者，不可服 under 麻黄汤方 is about 大青龙汤;
// a rule whose paragraph still names the heading's formula keeps it.
func TestRuleTopicFromParagraph(t *testing.T) {
	head := func(h, body string) chunk.Chunk {
		return chunk.Chunk{ID: h, Doc: "shl.md", HeadingPath: []string{h}, Text: "# " + h + "\n\n" + body}
	}
	chunks := []chunk.Chunk{
		head("麻黄汤方", "麻黄三两，桂枝二两，以水九升，先煮麻黄。麻黄汤方用麻黄为君。\n\n"+
			"太阳病，头痛发热，身疼腰痛，无汗而喘者，麻黄汤主之。若汗出多者，不可再服麻黄汤。\n\n"+
			"太阳中风，脉浮紧，发热恶寒，不汗出而烦躁者，大青龙汤主之。若脉微弱，汗出恶风者，不可服。\n\n"+
			"若脉浮而数者，可发汗。"),
		head("大青龙汤方", "大青龙汤方用麻黄六两。大青龙汤方煮取三升。麻黄去节。"),
		head("桂枝汤方", "桂枝汤方用桂枝三两。桂枝汤方啜热稀粥。麻黄汤方与桂枝汤方不同。"),
	}
	f, err := Offline(context.Background(), "t", chunks, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"若脉微弱，汗出恶风者，不可服。": "大青龙汤：脉微弱，汗出恶风",
		"若脉浮而数者，可发汗。":     "麻黄汤方：脉浮而数",
	}
	for _, r := range f.Rules.Rules.All() {
		if w, ok := want[r.Evidence[0].Quote]; ok {
			if r.Condition != w {
				t.Errorf("%s: condition %q, want %q", r.ID, r.Condition, w)
			}
			delete(want, r.Evidence[0].Quote)
		}
	}
	for q := range want {
		t.Errorf("no rule from %q", q)
	}
}

// A list's numbering is not part of a rule: "10．" (a fullwidth full
// stop), fullwidth digits, "一、" and a number after a line's label
// (属性：1．) are cut from the sentence and the condition, while a number
// the sentence says (二、三日: "two or three days", 3.5 hours) stays.
func TestListNumberingLeavesTheRule(t *testing.T) {
	text := "10．呕而肠鸣，心下痞者，半夏泻心汤主之。\n" +
		"11．六畜肉，热血不断者，不可食之。\n" +
		"１１．下利后更烦，按之心下濡者，为虚烦也。\n" +
		"二、三日病犹在肺，若脉浮者，则宜辛凉。\n" +
		"三、太阴风温，但热不恶寒而渴者，辛凉平剂银翘散主之。\n" +
		"（四）若汗出多者，则不可再服。十二、若下之太早，则必死。\n\n" +
		"初九、潜龙勿用。九二、见龙在田，利见大人。\n九三、君子终日乾乾。\n\n" +
		"盖土为杂气，最难分析！四四、足太阴寒湿，痞结胸满，不饥不食，半苓汤主之。\n\n" +
		"3.5 hours of leave must be approved in advance.\n\n" +
		"Black replies P-K4. 2. PxP wins a pawn.\n"
	var got []string
	for _, sp := range splitSentences(text) {
		got = append(got, sp.Text)
		if text[sp.Off:sp.Off+len(sp.Text)] != sp.Text {
			t.Errorf("offset %d does not locate %q", sp.Off, sp.Text)
		}
	}
	want := []string{
		"呕而肠鸣，心下痞者，半夏泻心汤主之。",
		"六畜肉，热血不断者，不可食之。",
		"下利后更烦，按之心下濡者，为虚烦也。",
		"二、三日病犹在肺，若脉浮者，则宜辛凉。",
		"太阴风温，但热不恶寒而渴者，辛凉平剂银翘散主之。",
		"若汗出多者，则不可再服。",
		"若下之太早，则必死。",
		"初九、潜龙勿用。", "九二、见龙在田，利见大人。", "九三、君子终日乾乾。",
		"盖土为杂气，最难分析！", "足太阴寒湿，痞结胸满，不饥不食，半苓汤主之。",
		"3.5 hours of leave must be approved in advance.",
		"Black replies P-K4.", "2. PxP wins a pawn.",
	}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("sentences\n got %q\nwant %q", got, want)
	}
	for s, cond := range map[string]string{
		"属性：1．呕而肠鸣，心下痞者，半夏泻心汤主之。": "呕而肠鸣，心下痞",
		"属性：１０．若汗出多者，则不可再服。":      "汗出多",
		"十、若下之太早，则必死。":            "下之太早",
		"二、三日病犹在肺，若脉浮者，则宜辛凉。":     "脉浮",
		"若二、三日不解者，则宜下之。":          "二、三日不解",
	} {
		p, ok := parseRule(s, true)
		if !ok || p.Cond != cond {
			t.Errorf("parseRule(%q) = %q (%v), want condition %q", s, p.Cond, ok, cond)
		}
	}
	// A clause numbered digit by digit is an item (温病条辨's 七八、 for
	// 78, 六四、 for 64), unless the text names a hexagram's lines.
	for _, s := range []string{"七八、疟伤胃阴", "六四、阳明湿温"} {
		if got := listNumber(s, false); got == "" {
			t.Errorf("listNumber(%q) = %q, want its number", s, got)
		}
	}
	for s, want := range map[string]string{
		"10．": "10．", "１０．": "１０．", "一、": "一、", "（三）": "（三）", "①": "①", "2) ": "2) ",
		"3.5 hours": "", "二、三日": "", "11．六畜": "11．", "九二、": "", "六五、": "", "十二、": "十二、", "二十一、": "二十一、", "七、八日": "", "1998．": "", "2.1.3 ": "",
	} {
		if got := listNumber(s+"呕", true); got != want {
			t.Errorf("listNumber(%q) = %q, want %q", s+"呕", got, want)
		}
	}
}

// A rule that names its section's formula is not prefixed with the
// heading (桂枝汤方：喘家作桂枝汤 repeated it); one that does not name it
// still carries it.
func TestTopicNotRepeated(t *testing.T) {
	chunks := []chunk.Chunk{{ID: "c1", Doc: "shl.md", HeadingPath: []string{"桂枝汤方"}, Text: "# 桂枝汤方\n\n" +
		"桂枝汤方用桂枝三两。桂枝汤方啜热稀粥。桂枝汤方与麻黄汤方不同。桂枝汤方煮取三升。桂枝汤方去滓。\n\n" +
		"喘家作桂枝汤，加厚朴杏子佳。\n\n" +
		"若酒客病，不可与桂枝汤，得汤则呕，以酒客不喜甘故也。\n\n" +
		"若脉浮而数者，可发汗。"}}
	f, err := Offline(context.Background(), "t", chunks, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"喘家作桂枝汤，加厚朴杏子佳。": "喘家作桂枝汤",
		"若脉浮而数者，可发汗。":    "桂枝汤方：脉浮而数",
	}
	for _, r := range f.Rules.Rules.All() {
		if strings.Contains(r.Condition, "桂枝汤方") && strings.Contains(strings.TrimPrefix(r.Condition, "桂枝汤方")+r.Conclusion+r.Action, "桂枝汤") {
			t.Errorf("%s: %s → %s%s names 桂枝汤 twice", r.ID, r.Condition, r.Conclusion, r.Action)
		}
		if w, ok := want[r.Evidence[0].Quote]; ok {
			if r.Condition != w {
				t.Errorf("%s: condition %q, want %q", r.ID, r.Condition, w)
			}
			delete(want, r.Evidence[0].Quote)
		}
	}
	for q := range want {
		t.Errorf("no rule from %q", q)
	}
	if got := topicTerm("辨脉法"); got != "辨脉" {
		t.Errorf("topicTerm(辨脉法) = %q", got)
	}
	if got := topicTerm("方"); got != "方" {
		t.Errorf("topicTerm(方) = %q", got)
	}
}

// TestOnlyIsKept: 但 'only' before a symptom is part of the condition (但热不寒
// is "fever only, no chills"), 但 'but' opening a sentence is not, and it
// marks an exception.
func TestOnlyIsKept(t *testing.T) {
	for s, want := range map[string]struct {
		cond string
		exc  bool
	}{
		"五一、但热不寒，或微寒多热，舌干口渴，此乃阴气先伤，阳气独发，名曰瘅疟，五汁饮主之。": {"但热不寒，或微寒多热，舌干口渴", false},
		"但满而不痛者，此为痞，柴胡不中与之，宜半夏泻心汤。":                  {"但满而不痛", false},
		"但刮后须十二时不饮水，方不再发。":                           {"刮后须十二时不饮水", true},
		"但古人治法良多，而议病究未透彻来路，皆由不明六气为病，与温病之源。":          {"古人治法良多，而议病究未透彻来路", true},
	} {
		p, ok := zhRule(s)
		if !ok {
			t.Errorf("%s: no rule", s)
			continue
		}
		if p.Cond != want.cond || (p.Tier == 3) != want.exc {
			t.Errorf("%s: condition %q tier %d, want %q (exception %v)", s, p.Cond, p.Tier, want.cond, want.exc)
		}
	}
}
