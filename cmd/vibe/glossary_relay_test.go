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

// The glossary built with a model, replayed: the five bazi books built
// without examples/bazi/glossary.yaml, `vibe integrate` asking the model's
// glossary (the recorded answers, looked up by term so a batch put together
// differently is still answered; a candidate the recording never saw is
// kept as it is), then the 20 English questions searched offline. Measured:
// 13 of 20 reach an answering passage in the top 5 with the model's
// glossary, 16 with the user's dictionary besides (2 with neither; 19 with
// the hand glossary). The model's renderings are the field's usual ones
// (七杀 Seven Killings, 驿马 Travelling Horse, 子息 children), but a question
// words a term its own way ("a hurting officer chart runs into the direct
// officer" is not "Hurting Officer meets Officer"; "weak" and "a lot of
// wealth" apart are not 财多身弱), or names it and the answering passage is
// not in the top 5 (食神 and 七杀 for 食神制杀).
func TestReplayRelayBaziGlossary(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "relay-bazi-glossary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rec relayGlossary
	if err := json.Unmarshal(b, &rec); err != nil {
		t.Fatal(err)
	}
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
	model := 0
	for _, e := range g.Terms {
		if e.From == skills.FromModel && len(e.English) > 0 {
			model++
		}
		if e.Term == "七杀" && (e.From != skills.FromModel || !strings.Contains(strings.Join(e.English, "|"), "Seven Killings")) {
			t.Errorf("七杀: %+v, want the model's entry with Seven Killings", e)
		}
	}
	if model < 100 {
		t.Errorf("%d model entries with English renderings, want the recording's (over 100)", model)
	}
	hits := englishHits(t, ws)
	t.Logf("offline search, the model's glossary: %d of %d English questions reach an answering passage in the top 5", hits, len(englishBaziQuestions))
	if hits < 13 {
		t.Errorf("%d of %d, want at least the 13 measured", hits, len(englishBaziQuestions))
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
