package lexical

import (
	"reflect"
	"strings"
	"testing"
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
