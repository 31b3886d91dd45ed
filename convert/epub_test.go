package convert

import (
	"strings"
	"testing"
)

func TestXHTMLToMarkdownRubyAndHeadings(t *testing.T) {
	tests := []struct {
		name, in string
		want     []string
		notWant  []string
	}{
		{"ruby reading kept after base", `<html><body><p><ruby>山路<rp>(</rp><rt>やまみち</rt><rp>)</rp></ruby>を登りながら</p></body></html>`,
			[]string{"山路（やまみち）を登りながら"}, []string{"(", ")"}},
		{"heading levels kept", `<html><body><h1>Book</h1><h2>Chapter</h2><h3>Section</h3><p>Text.</p></body></html>`,
			[]string{"# Book", "## Chapter", "### Section", "Text."}, nil},
		{"scripts dropped", `<html><body><script>var x=1;</script><p>Body</p></body></html>`,
			[]string{"Body"}, []string{"var x"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := xhtmlToMarkdown([]byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("output lacks %q:\n%s", w, got)
				}
			}
			for _, w := range tt.notWant {
				if strings.Contains(got, w) {
					t.Errorf("output has %q:\n%s", w, got)
				}
			}
		})
	}
}
