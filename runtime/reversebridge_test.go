package runtime

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
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
