package textmetric

import (
	"math"
	"reflect"
	"testing"
)

func TestTokens(t *testing.T) {
	got := Tokens("## Hello, World! 八字用神 x1")
	want := []string{"hello", "world", "八", "字", "用", "神", "x1"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Tokens = %q, want %q", got, want)
	}
}

func TestF1(t *testing.T) {
	if f, _, _ := F1("a b c", "a b c"); f != 1 {
		t.Fatalf("identical texts: %v", f)
	}
	if f, _, _ := F1("ab", "cd"); f != 0 {
		t.Fatalf("disjoint texts: %v", f)
	}
	// "the cat" vs "the cat sat": precision 1, recall 2/3 -> F1 0.8
	f, p, r := F1("the cat", "the cat sat")
	if math.Abs(f-0.8) > 1e-9 || p != 1 || math.Abs(r-2.0/3) > 1e-9 {
		t.Fatalf("F1=%v P=%v R=%v", f, p, r)
	}
	// Words run together (no spaces) are one wrong token each.
	if f, _, _ := F1("thecat", "the cat"); f != 0 {
		t.Fatalf("joined words should not match: %v", f)
	}
}
