package eval

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/vibelife/vibe/chunk"
)

func TestBM25Tokens(t *testing.T) {
	got := BM25Tokens("用神，专求月令 Call me Ishmael-2")
	want := []string{"用", "用神", "神", "专", "专求", "求", "求月", "月", "月令", "令", "call", "me", "ishmael", "2"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("BM25Tokens = %q, want %q", got, want)
	}
}

func TestBM25Scores(t *testing.T) {
	docs := []chunk.Chunk{
		{ID: "a", Text: "whale whale ship"},
		{ID: "b", Text: "ship harbour"},
		{ID: "c", Text: "sea"},
	}
	b := NewBM25(docs)
	hits, err := b.Search(context.Background(), "whale ship", 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 2 || hits[0].ID != "a" || hits[1].ID != "b" {
		t.Fatalf("hits = %v, want a then b", hits)
	}
	// By hand: N 3, avgdl 2; whale df 1, ship df 2.
	idf := func(df float64) float64 { return math.Log(1 + (3-df+0.5)/(df+0.5)) }
	part := func(tf, dl float64) float64 { return tf * 2.2 / (tf + 1.2*(0.25+0.75*dl/2)) }
	wantA := idf(1)*part(2, 3) + idf(2)*part(1, 3)
	wantB := idf(2) * part(1, 2)
	sc := b.scores("whale ship whale")
	if len(sc) != 2 || math.Abs(sc[0]-wantA) > 1e-12 || math.Abs(sc[1]-wantB) > 1e-12 {
		t.Errorf("scores a %.6f b %.6f, want %.6f %.6f", sc[0], sc[1], wantA, wantB)
	}
	// A query token repeated counts once; k bounds the list.
	if hits, _ := b.Search(context.Background(), "ship ship", 1); len(hits) != 1 || hits[0].ID != "b" {
		t.Errorf("repeated query token: %v, want b (the shorter document)", hits)
	}
}

func TestLoadQuestionsAndRelevant(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	ok := write("ok.jsonl", `{"id":"a","query":"q","doc":"子平真诠","heading":"论用神"}`+"\n\n"+`{"id":"b","query":"q","doc":"ietf","heading":"remoteStorage"}`+"\n")
	qs, err := LoadQuestions(ok)
	if err != nil || len(qs) != 2 {
		t.Fatalf("LoadQuestions = %v, %v", qs, err)
	}
	for name, body := range map[string]string{
		"dup.jsonl":     `{"id":"a","query":"q","doc":"d","heading":"h"}` + "\n" + `{"id":"a","query":"r","doc":"d","heading":"h"}`,
		"missing.jsonl": `{"id":"a","query":"q","doc":"d"}`,
		"bad.jsonl":     `{"id":`,
	} {
		if _, err := LoadQuestions(write(name, body)); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: error %v should name the file", name, err)
		}
	}
	zp := chunk.Chunk{Source: "knowledge/zh/source/子平真诠.md", Title: "子平真诠", HeadingPath: []string{"八、论用神"}}
	if !qs[0].Relevant(zp) {
		t.Error("innermost heading should match")
	}
	if qs[0].Relevant(chunk.Chunk{Source: "knowledge/zh/source/渊海子平.md", HeadingPath: []string{"论用神"}}) {
		t.Error("another document must not match")
	}
	// Above every heading, the title is the place.
	if !qs[1].Relevant(chunk.Chunk{Source: "knowledge/en/source/readability-ietf-1.html", Title: "remoteStorage"}) {
		t.Error("title should match a chunk without headings")
	}
	dev, held := Split(append(qs, Question{ID: "c"}, Question{ID: "d"}, Question{ID: "e"}))
	if len(dev)+len(held) != 5 || len(dev) == 0 || len(held) == 0 {
		t.Errorf("split %d / %d", len(dev), len(held))
	}
}
