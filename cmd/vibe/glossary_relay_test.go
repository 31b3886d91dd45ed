package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vibelife/vibe/llm/llmtest"
	"github.com/vibelife/vibe/skills"
)

// relayGlossary is testdata/relay-bazi-glossary.json: a strong model's
// answers, through the relay, to the glossary batches of `vibe integrate
// bazi` (by term: the entries it gave, and the candidates it left out) and
// to the SKILL.md prose request.
type relayGlossary struct {
	Terms map[string]struct {
		Synonyms []string `json:"synonyms"`
		English  []string `json:"english"`
		Pinyin   []string `json:"pinyin"`
	} `json:"terms"`
	LeftOut []string `json:"left_out"`
	Prose   string   `json:"prose"`
}

// relayGlossaryServer is an endpoint answering the glossary and prose
// requests of `vibe integrate bazi` from the recording.
func relayGlossaryServer(t *testing.T) *llmtest.Server {
	t.Helper()
	rec := loadRelayGlossary(t)
	left := map[string]bool{}
	for _, t := range rec.LeftOut {
		left[t] = true
	}
	srv := llmtest.New(t)
	srv.SetFallback(func(r llmtest.Request) llmtest.Reply {
		switch sys := r.SystemMessage(); {
		case strings.Contains(sys, "term table"):
			var in struct {
				Candidates []struct {
					Term string `json:"term"`
				} `json:"candidates"`
			}
			if err := json.Unmarshal([]byte(r.LastUserMessage()), &in); err != nil {
				return llmtest.Status(400, "not a glossary batch: "+err.Error())
			}
			type entry struct {
				Term     string   `json:"term"`
				Synonyms []string `json:"synonyms"`
				English  []string `json:"english"`
				Pinyin   []string `json:"pinyin"`
			}
			out := struct {
				Terms []entry `json:"terms"`
			}{Terms: []entry{}}
			for _, c := range in.Candidates {
				if left[c.Term] {
					continue
				}
				e := entry{Term: c.Term, Synonyms: []string{}, English: []string{}, Pinyin: []string{}}
				if a, ok := rec.Terms[c.Term]; ok {
					e.Synonyms, e.English, e.Pinyin = a.Synonyms, a.English, a.Pinyin
				}
				out.Terms = append(out.Terms, e)
			}
			b, _ := json.Marshal(out)
			return llmtest.Text(string(b))
		case strings.Contains(sys, "SKILL.md"):
			return llmtest.Text(rec.Prose)
		}
		return llmtest.Status(400, "the recording answers the glossary and the prose only")
	})
	return srv
}

// loadRelayGlossary reads testdata/relay-bazi-glossary.json.
func loadRelayGlossary(t *testing.T) relayGlossary {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "relay-bazi-glossary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rec relayGlossary
	if err := json.Unmarshal(b, &rec); err != nil {
		t.Fatal(err)
	}
	return rec
}

// The glossary built with a model, replayed: the five bazi books built
// without examples/bazi/glossary.yaml, `vibe integrate` asking the model's
// glossary (the recorded answers, looked up by term so a batch put together
// differently is still answered; a candidate the recording never saw is
// kept as it is), then the 20 English questions searched offline. Measured:
// 16 of 20 (17 before the miner dropped 论日为主, below) reach an answering passage in the top 5 with the model's
// glossary, 16 (17) with the user's dictionary besides (2 with neither; 20 with
// the hand glossary); 14 and 17 with the earlier recording (glossary/2
// asked, 400 candidates sent, 128 of 367 terms rendered) and the earlier
// bridge. Still missed: "the nature of Jia wood" names 性情 (nature) beside
// 甲木 and 滴天髓, and 性情论 outranks 滴天髓's 甲木; the eating god
// controlling the seven killings names 食神, 七杀 and 制伏, and no passage
// of 食神制杀 is in the top 5 (no entry 食神制杀 to compose); 墓库
// (storehouse, tomb) is no candidate: the heading 论墓库刑冲之说 gives no
// term.
//
// To record again: run the relay (llm_relay.py PORT DIR), `OPENAI_BASE_URL=
// http://127.0.0.1:PORT/v1 OPENAI_API_KEY=k vibe -w WS integrate bazi` on
// a copy of the bare workspace, answer each glossary batch and the prose
// request, and collect the answers by term (an entry given twice joined),
// the candidates left out and the prose into testdata.
func TestReplayRelayBaziGlossary(t *testing.T) {
	srv := relayGlossaryServer(t)
	ws := copyWorkspace(t, bareBaziWorkspace(t))
	env := map[string]string{"OPENAI_BASE_URL": srv.URL, "OPENAI_API_KEY": "k"}
	if code, out, errOut := runVibe(t, env, "-w", ws, "--quiet", "integrate", "bazi"); code != 0 {
		t.Fatalf("vibe integrate bazi with the model: exit %d\n%s\n%s", code, out, errOut)
	}
	gb, err := os.ReadFile(filepath.Join(ws, "skills", "bazi", filepath.FromSlash(skills.GlossaryPath)))
	if err != nil {
		t.Fatal(err)
	}
	g, err := skills.ParseGlossary(gb, "glossary.yaml")
	if err != nil {
		t.Fatal(err)
	}
	// Every candidate the recording rendered keeps its renderings. The
	// mined candidates change with the miner: a2dd2a3 no longer mines 16
	// of the recording's 505 rendered terms, 论X duplicates of a term
	// (论建禄, 论伤官, 论正官) and cuts (论小, 论正, 官论, 神论), and mines
	// 墓库 and 月劫, which the recording never saw and has no answer for.
	// The heading topics' fix (docs/glossary.md) no longer mines 16 more:
	// titles with their words of discussion (论将星华盖, 论日为主, 论暗金的煞,
	// 论官星太过, 论八字撮要法, 总论岁运, 总论禄马, 总论纳音, 总论诸神煞,
	// 杂论口诀, 附论墓运, 喜忌篇) and cuts (官煞去留杂, 偏正财合, 五行总,
	// 六亲总篇); it mines their terms (将星, 华盖, 岁运, 禄马, 纳音, 口诀…).
	rec := loadRelayGlossary(t)
	model, recorded := 0, 0
	for _, e := range g.Terms {
		if e.From == skills.FromModel && len(e.English) > 0 {
			model++
		}
		if a, ok := rec.Terms[e.Term]; ok && len(a.English) > 0 {
			recorded++
			if e.From != skills.FromModel || len(e.English) == 0 {
				t.Errorf("%s: the recording rendered it %v, the glossary has %+v", e.Term, a.English, e)
			}
		}
		if e.Term == "七杀" && (e.From != skills.FromModel || !strings.Contains(strings.Join(e.English, "|"), "Seven Killings")) {
			t.Errorf("七杀: %+v, want the model's entry with Seven Killings", e)
		}
	}
	t.Logf("%d model entries with English renderings, %d of them the recording's", model, recorded)
	if recorded < 473 {
		t.Errorf("%d of the recording's rendered terms are in the glossary, want the 473 still mined", recorded)
	}
	hits := englishHits(t, ws)
	t.Logf("offline search, the model's glossary: %d of %d English questions reach an answering passage in the top 5", hits, len(englishBaziQuestions))
	// 16 since the miner no longer offers 论日为主 whole (its topic 日为主,
	// "the day is the master", reads as prose): the recording rendered it
	// Day Master, and the name 论日为主 it added to "My day master is weak
	// but there is a lot of wealth…" put a passage holding 财多身弱 at rank
	// 5. The model's own 日主 (Day Master) is still named.
	if hits < 16 {
		t.Errorf("%d of %d, want at least the 16 measured", hits, len(englishBaziQuestions))
	}
	if _, err := os.Stat(filepath.Join("..", "..", "..", "data", "cedict", "cedict_ts.u8")); err != nil && os.Getenv("VIBE_TEST_CEDICT") == "" {
		t.Logf("no CC-CEDICT file: the model's glossary with a dictionary is not measured")
		return
	}
	dict := cedictPath(t)
	cfg := filepath.Join(ws, "vibe.yaml")
	cb, _ := os.ReadFile(cfg)
	if err := os.WriteFile(cfg, append(cb, []byte("\nglossary:\n  dictionary: "+dict+"\n")...), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out, errOut := runVibe(t, env, "-w", ws, "--quiet", "integrate", "bazi"); code != 0 {
		t.Fatalf("vibe integrate bazi with the model and a dictionary: exit %d\n%s\n%s", code, out, errOut)
	}
	both := englishHits(t, ws)
	t.Logf("the model's glossary and CC-CEDICT: %d of %d", both, len(englishBaziQuestions))
	if both < 16 {
		t.Errorf("%d of %d with the model's glossary and the dictionary, want at least the 16 measured", both, len(englishBaziQuestions))
	}
}
