package runtime

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/vibelife/vibe/knowledge/sqlite"
	"github.com/vibelife/vibe/skills"
)

// An English chess skill with the glossary an offline build mines from
// its headings.
var chessSkill = map[string]string{
	"chess/SKILL.md": "---\nname: chess\ndescription: Chess strategy from two classic books\n---\n# Chess\nHow to play the opening, the middle game and the endings.\n",
	"chess/knowledge/glossary.yaml": "terms:\n  - term: opening\n    from: mined\n  - term: knights\n    from: mined\n  - term: king\n    from: mined\n" +
		"  - term: queen against rook\n    from: mined\n  - term: passed pawn\n    from: mined\n",
}

// cedict is a dictionary of the user's as Config.Dictionary reads it.
func cedict(w string) []string {
	return map[string][]string{
		"开局": {"opening (chess etc)", "early stage of game"},
		"马":  {"horse", "horse or cavalry piece in Chinese chess", "knight in Western chess"},
		"杀":  {"to kill", "to murder", "to attack"},
	}[w]
}

// Offline, a Chinese question over English sources is searched with the
// theme's words its words gloss: the user's dictionary's words first (开局
// opening, 马 knight), else the characters' built-in glosses (王 king), of
// which only the glossary's words are kept (not 开 "begin", 局 "bureau").
// get_rules is not bridged so: it says the question could not be carried
// over. A question whose words gloss none of the theme's words stays
// unbridged.
func TestChineseQuestionOverEnglishSourcesSearchesTheThemesWords(t *testing.T) {
	root := writeSkills(t, "", chessSkill)
	ctx := context.Background()
	for _, tt := range []struct {
		q        string
		dict     func(string) []string
		want     []string
		unwanted []string
	}{
		{"开局应该先出马还是先出象？", cedict, []string{"opening", "knight"}, []string{"begin", "bureau", "horse", "elephant"}},
		{"王在哪个角最安全？", nil, []string{"king"}, []string{"corner", "ruler"}},
		{"开局应该先出马还是先出象？", nil, []string{"open"}, []string{"knight", "begin", "bureau"}},
	} {
		rs := &recordingSearcher{}
		a := agentOver(t, root, nil, func(c *Config) { c.Searcher = rs; c.Dictionary = tt.dict })
		args, _ := json.Marshal(map[string]string{"query": tt.q})
		out, err := a.ExecuteTool(ctx, "u", "chess", "search_knowledge", args, nil)
		if err != nil {
			t.Fatal(err)
		}
		var res struct {
			SearchedAs string `json:"searched_as"`
			BridgedBy  string `json:"bridged_by"`
			Unbridged  bool   `json:"unbridged"`
		}
		if err := json.Unmarshal(out, &res); err != nil || res.Unbridged || res.BridgedBy != bridgedByWords {
			t.Errorf("%q: search_knowledge result %s (%v)", tt.q, out, err)
		}
		words := strings.Fields(res.SearchedAs)
		for _, w := range tt.want {
			if !strings.Contains(" "+res.SearchedAs+" ", " "+w+" ") {
				t.Errorf("%q (dictionary %v): searched as %q, want %s among them", tt.q, tt.dict != nil, res.SearchedAs, w)
			}
		}
		for _, w := range tt.unwanted {
			for _, x := range words {
				if x == w {
					t.Errorf("%q (dictionary %v): searched as %q, holds %s", tt.q, tt.dict != nil, res.SearchedAs, w)
				}
			}
		}
		if len(rs.texts) != 1 || !strings.HasPrefix(rs.texts[0], tt.q+" ") {
			t.Errorf("%q: searched %q, want the question and its words", tt.q, rs.texts)
		}
		raw, err := a.getRules(ctx, []string{"chess"}, tt.q, 5)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(raw), `"unbridged":true`) {
			t.Errorf("%q: get_rules %s, want it unbridged", tt.q, raw)
		}
	}
	a := agentOver(t, root, nil, func(c *Config) { c.Searcher = &recordingSearcher{}; c.Dictionary = cedict })
	out, err := a.ExecuteTool(ctx, "u", "chess", "search_knowledge", json.RawMessage(`{"query":"明天北京天气怎么样"}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), `"unbridged":true`) {
		t.Errorf("everyday question bridged: %s", out)
	}
}

// A chess skill of English sources, with the glossary an offline build
// mines from its headings, beside a Chinese skill (mingli) and an English
// one (travel); its store holds the castling rule once among passages on
// the king, white's opening and the position.
var reverseRouteSkills = map[string]string{
	"chess/SKILL.md": "---\nname: chess\ndescription: Chess strategy from two classic books\n---\n# Chess\nHow to play the opening, the middle game and the endings.\n",
	"chess/knowledge/glossary.yaml": "terms:\n  - term: opening\n    from: mined\n  - term: king\n    from: mined\n  - term: white\n    from: mined\n" +
		"  - term: queen against rook\n    from: mined\n  - term: obtaining a passed pawn\n    from: mined\n" +
		"  - term: control of the centre\n    from: mined\n  - term: knights\n    from: mined\n  - term: danger of a safe position\n    from: mined\n" +
		"  - term: direct attacks en masse\n    from: mined\n",
	"mingli/SKILL.md":                bridgeRouteSkills["mingli/SKILL.md"],
	"mingli/knowledge/glossary.yaml": bridgeRouteSkills["mingli/knowledge/glossary.yaml"],
	"travel/SKILL.md":                bridgeRouteSkills["travel/SKILL.md"],
}

func reverseRouteStore(t *testing.T) *sqlite.Store {
	chess := [][2]string{{"Rules of the game", "Castling is not permitted if the King in castling must pass over a square under the control of a hostile piece."}}
	for i := 0; i < 40; i++ {
		chess = append(chess, [2]string{fmt.Sprintf("Game %d", i),
			fmt.Sprintf("White opens with the King's pawn in game %d; the position of the King stays safe, and a direct attack fails.", i)})
	}
	travel := [][2]string{}
	for i := 0; i < 10; i++ {
		travel = append(travel, [2]string{fmt.Sprintf("Section %d", i), "An employee on travel claims per diem and lodging; annual leave is taken with approval."})
	}
	return storeWith(t, map[string][][2]string{"chess": chess, "travel": travel, "mingli": {{"论日主", "日主为一身之主。"}}})
}

// Offline, a Chinese question over a skill of English sources reaches it
// when a character of it means the skill's name (棋, "chess; any game
// similar to chess"), or when its characters gloss three words of the
// glossary, one a whole term, and one passage of the sources holds two of
// them that are rare there (the castling question: 王 king, 位 position,
// 过 pass, 控 control; the castling rule holds pass and control). It does
// not when the words are everyday ones the books hold everywhere (白天开车:
// white, open, direct), when a character is only said again (国王和王后:
// king, queen), when there is no store to ask, nor when the question names
// a term of a skill of Chinese sources.
func TestChineseQuestionsReachASkillOfEnglishSources(t *testing.T) {
	root := writeSkills(t, "", reverseRouteSkills)
	st := reverseRouteStore(t)
	a := agentOver(t, root, nil, func(c *Config) { c.Searcher = st })
	ctx := context.Background()
	for _, tt := range []struct{ msg, skill, why string }{
		{"王车易位的时候，王经过的格子被对方控制，还能易位吗？", "chess", "terms in translation king, position, pass, control"},
		{"下棋时怎么保护王？", "chess", "terms in translation chess"},
		{"国际象棋的开局有哪些原则", "chess", "terms in translation chess"},
		{"白天开车要注意什么安全问题", "", ""},
		{"国王和王后住在哪里", "", ""},
		{"王先生明天去上海开会吗", "", ""},
		{"明天北京天气怎么样", "", ""},
		{"怎么控制血糖", "", ""},
		{"日主弱的人下棋会输吗", "mingli", "日主"},
	} {
		got, why := a.RouteReason(ctx, tt.msg)
		if got != tt.skill || !strings.Contains(why, tt.why) {
			t.Errorf("%q -> %q (%s), want %q with %q in the reason", tt.msg, got, why, tt.skill, tt.why)
		}
	}
	// With a model, the router's advice names the evidence that holds, and
	// only that: not white, open and direct of 白天开车.
	for msg, want := range map[string]bool{"白天开车要注意什么安全问题": false, "下棋时怎么保护王？": true, "王车易位的时候，王经过的格子被对方控制，还能易位吗？": true} {
		m := &fakeModel{}
		am := agentOver(t, root, m, func(c *Config) { c.Searcher = st })
		if _, err := am.Turn(ctx, TurnRequest{UserID: "u", Message: msg}, func(Event) error { return nil }); err != nil {
			t.Fatal(err)
		}
		if len(m.requests) == 0 {
			t.Fatal("no request")
		}
		if sys := m.requests[0].Messages[0].Content; strings.Contains(sys, "names terms of chess") != want {
			t.Errorf("%q: the prompt names chess's terms: %v, want %v:\n%s", msg, !want, want, sys)
		}
	}
	// Without a store to ask, the glossary's words alone route nothing;
	// the skill's name still does, and so does a word the user's
	// dictionary labels with it (马 "horse or cavalry piece in Chinese
	// chess", beside 杀 attack and 王 king).
	const mate = "用马和象将杀时，要把对方的王赶到哪个角？"
	for _, tt := range []struct {
		msg, want string
		dict      func(string) []string
	}{
		{"王车易位的时候，王经过的格子被对方控制，还能易位吗？", "", nil},
		{"下棋时怎么保护王？", "chess", nil},
		{mate, "", nil},
		{mate, "chess", cedict},
		{"马吃什么草", "", cedict},
	} {
		bare := agentOver(t, root, nil, func(c *Config) { c.Dictionary = tt.dict })
		if got, why := bare.RouteReason(ctx, tt.msg); got != tt.want {
			t.Errorf("no store (dictionary %v): %q -> %q (%s), want %q", tt.dict != nil, tt.msg, got, why, tt.want)
		}
	}
}

// A character names a skill outright only when each of its first glosses
// holds the name: 棋 "chess; any game similar to chess" names chess, 法
// "law, rule, code, model" names no skill called law.
func TestNamedOutright(t *testing.T) {
	for _, tt := range []struct{ q, name, want string }{
		{"下棋", "chess", "chess"},
		{"有什么办法", "law", ""},
		{"开车", "chess", ""},
		{"出差请假", "travel-leave", ""},
	} {
		if got := namedOutright(reverseUnits(tt.q, nil), []string{tt.name}); got != tt.want {
			t.Errorf("namedOutright(%q, %s) = %q, want %q", tt.q, tt.name, got, tt.want)
		}
	}
}

// A question that the reverse bridge cannot carry over (not Chinese over
// English sources, or no glossary to keep words of) has its characters
// glossed by neither the user's dictionary nor the built-in table: the
// bridge tells so before glossing them. It is unbridged all the same.
func TestBridgeGlossesOnlyWhatItCanCarryOver(t *testing.T) {
	g := NewGlossary(skills.Glossary{Terms: []skills.GlossaryTerm{{Term: "opening"}, {Term: "knight"}}})
	for _, tt := range []struct {
		q, sourceLang string
		g             *Glossary
	}{
		{"开局应该先出马还是先出象？", langEN, nil},               // no glossary
		{"the knight opening strategy 马", langZH, g}, // an English question over Chinese sources
		{"nyusqnzmlf 孊 vsiocxlhln", langZH, nil},     // one of the searchbench's queries
		{"开局应该先出马还是先出象？", "fr", g},                   // neither English sources
	} {
		looked := 0
		b := &Bridger{Dictionary: func(w string) []string { looked++; return cedict(w) }}
		res := b.Bridge(context.Background(), tt.q, tt.sourceLang, tt.g)
		if looked > 0 || !res.Unbridged {
			t.Errorf("%q over %s sources: the dictionary asked %d times, bridged %+v; want none, unbridged", tt.q, tt.sourceLang, looked, res)
		}
	}
	// Carried over, the dictionary is read as before.
	looked := 0
	b := &Bridger{Dictionary: func(w string) []string { looked++; return cedict(w) }}
	if res := b.Bridge(context.Background(), "开局应该先出马还是先出象？", langEN, g); looked == 0 || res.BridgedBy != bridgedByWords {
		t.Errorf("a Chinese question over English sources: the dictionary asked %d times, bridged %+v", looked, res)
	}
}
