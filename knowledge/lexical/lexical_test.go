package lexical

import (
	"reflect"
	"strings"
	"testing"
	"unicode"

	"github.com/vibelife/vibe/chunk"
)

func TestTokens(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"Hello, World!", []string{"hello", "world"}},
		{"论用神", []string{"论", "论用", "用", "用神", "神"}},
		{"子平 GPT4o 真诠", []string{"子", "子平", "平", "gpt4o", "真", "真诠", "诠"}},
		{"日主。强", []string{"日", "日主", "主", "强"}},
	}
	for _, tt := range tests {
		if got := Tokens(tt.in); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Tokens(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestQueryTokensBounded(t *testing.T) {
	q := QueryTokens(strings.Repeat("甲乙丙丁戊己庚辛壬癸 alpha beta ", 10000) + strings.Repeat("x", 100))
	if len(q) > MaxQueryTokens {
		t.Fatalf("got %d tokens, want <= %d", len(q), MaxQueryTokens)
	}
	if q[0] != "甲" || q[1] != "甲乙" {
		t.Fatalf("first tokens = %q", q[:2])
	}
	for _, tok := range q {
		if strings.ContainsAny(tok, "\" *:") {
			t.Fatalf("unsafe token %q", tok)
		}
	}
}

func TestQueryTokensDropQuestionWords(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		// 应当, 从哪里 -> 哪里 goes, 从 stays; no bigram spans a removed word.
		{"八字用神应当从哪里求取？", []string{"八", "八字", "字", "字用", "用", "用神", "神", "从", "求", "求取", "取"}},
		{"伤官见官为什么是祸", []string{"伤", "伤官", "官", "官见", "见", "见官", "祸"}},
		{"How does the engine stop a script?", []string{"engine", "stop", "script"}},
		// A query of nothing but question words keeps them.
		{"什么", []string{"什", "什么", "么"}},
		{"what is it", []string{"what", "is", "it"}},
	}
	for _, tt := range tests {
		if got := QueryTokens(tt.in); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("QueryTokens(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	// The index keeps every token: a question word in the text is still
	// indexed.
	if got := IndexText("是什么"); got != "是 是什 什 什么 么" {
		t.Errorf("IndexText = %q", got)
	}
}

func TestIndexChunk(t *testing.T) {
	c := chunk.Chunk{Title: "子平真诠", HeadingPath: []string{"八、论用神"}, Text: "八字用神，专求月令。"}
	want := "子 子平 平 平真 真 真诠 诠 八 论 论用 用 用神 神 八 八字 字 字用 用 用神 神 专 专求 求 求月 月 月令 令"
	if got := IndexChunk(c); got != want {
		t.Errorf("IndexChunk = %q\nwant %q", got, want)
	}
	if got := IndexChunk(chunk.Chunk{Text: "Call me Ishmael."}); got != "call me ishmael" {
		t.Errorf("IndexChunk without title or headings = %q", got)
	}
}

func TestFoldVariantsAndTraditional(t *testing.T) {
	if err := defaultFolder.Err(); err != nil {
		t.Fatalf("OpenCC t2s table: %v", err)
	}
	for in, want := range map[string]string{
		"食神制煞":   "食神制杀",
		"食神製殺":   "食神制杀",
		"傷官見官":   "伤官见官",
		"印綬":     "印绶",
		"相剋":     "相克",
		"day 日主": "day 日主",
	} {
		if got := Fold(in); got != want {
			t.Errorf("Fold(%q) = %q, want %q", in, got, want)
		}
	}
	if got, want := IndexText("七煞"), IndexText("七杀"); got != want {
		t.Errorf("IndexText(七煞) = %q, IndexText(七杀) = %q; want equal", got, want)
	}
}

// TestIsCJKMatchesScripts holds isCJK's fast paths to the script tables
// over every rune.
func TestIsCJKMatchesScripts(t *testing.T) {
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if got, want := isCJK(r), unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul); got != want {
			t.Fatalf("isCJK(%U) = %v, want %v", r, got, want)
		}
	}
}
