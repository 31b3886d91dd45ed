package convert

import (
	"strings"
	"testing"
)

// TestStructureText checks the cleaning and heading detection of plain text
// pages: each case lists lines that must appear in the Markdown and text that
// must not.
func TestStructureText(t *testing.T) {
	tests := []struct {
		name    string
		pages   []string
		want    []string // exact lines of the output
		notWant []string // substrings that must be gone
	}{
		{
			name:    "CJK lines joined without spaces",
			pages:   []string{"天地玄黄，宇宙洪荒。\n日月盈昃，辰宿列张。\n"},
			want:    []string{"天地玄黄，宇宙洪荒。日月盈昃，辰宿列张。"},
			notWant: []string{"。 日"},
		},
		{
			name:  "Latin lines joined with one space",
			pages: []string{"The quick brown\nfox jumps over\nthe lazy dog.\n"},
			want:  []string{"The quick brown fox jumps over the lazy dog."},
		},
		{
			name:    "hyphenated line break rejoined",
			pages:   []string{"an extra-\nordinary frag-\nment of text\n"},
			want:    []string{"an extraordinary fragment of text"},
			notWant: []string{"frag-", "extra-"},
		},
		{
			name:    "control characters dropped",
			pages:   []string{"bell\a and null\x00 and escape\x1b gone\n"},
			want:    []string{"bell and null and escape gone"},
			notWant: []string{"\a", "\x00", "\x1b"},
		},
		{
			name: "running headers, footers and page numbers removed",
			pages: []string{
				"THE ART OF WAR\nLaying plans is the first chapter.\n1\n",
				"THE ART OF WAR\nWaging war is the second.\n2\n",
				"THE ART OF WAR\nAttack by stratagem comes third.\n3\n",
				"THE ART OF WAR\nTactical dispositions are fourth.\n4\n",
			},
			want:    []string{"Laying plans is the first chapter.", "Tactical dispositions are fourth."},
			notWant: []string{"THE ART OF WAR", "\n1\n", "\n4\n"},
		},
		{
			name:    "numbered list in plain text keeps one item per line",
			pages:   []string{"二、煮饮之法\n1. 取老白茶五克，置于壶中。\n2. 注水五百毫升，以小火慢煮。\n\nSteps\n1. Warm the pot with hot water\n2. Add five grams of leaves\n"},
			want:    []string{"1. 取老白茶五克，置于壶中。", "2. 注水五百毫升，以小火慢煮。", "1. Warm the pot with hot water", "2. Add five grams of leaves"},
			notWant: []string{"置于壶中。2.", "# 1. Warm", "# 2. Add"},
		},
		{
			name:    "hard-wrapped list items rejoined, prose after the list kept apart",
			pages:   []string{"Rules\n(a) The agency shall\nconsider the costs.\n(b) The agency may\nwaive them.\nAfter the list comes prose.\n"},
			want:    []string{"(a) The agency shall consider the costs.", "(b) The agency may waive them.", "After the list comes prose."},
			notWant: []string{"them. After"},
		},
		{
			name:  "bullets with indented continuation",
			pages: []string{"Notes:\n- first bullet\n- second bullet\n  continues here\n"},
			want:  []string{"- first bullet", "- second bullet continues here"},
		},
		{
			name:  "a lone numbered title line stays a heading; 1.5 is no list",
			pages: []string{"1. Introduction\n\nUse 1.5 grams\n2. per cup of water.\n"},
			want:  []string{"# 1. Introduction", "Use 1.5 grams 2. per cup of water."},
		},
		{
			// A PDF page's text runs without blank lines: the bullets further
			// down must not make the numbered section title a list item.
			name: "numbered section title on a page with bullets stays a heading",
			pages: []string{"ends the introduction.\n2. Overview: Example Tracing Run\nThis section gives an overview\nof the system.\n" +
				"• We explain an algorithm for\nforming trace trees.\n• We validate the techniques.\n"},
			want: []string{"# 2. Overview: Example Tracing Run", "This section gives an overview of the system.",
				"• We explain an algorithm for forming trace trees.", "• We validate the techniques."},
		},
		{
			name: "numbered section titles a column apart are headings, not a list",
			pages: []string{"9. Conclusions\nThis paper described how to run\n" + strings.Repeat("dynamic languages efficiently by\n", 12) +
				"recording hot traces.\n10. Future Work\nWork is under way.\n"},
			want: []string{"# 9. Conclusions", "# 10. Future Work", "Work is under way."},
		},
		{
			name: "a paper's front and back matter lines are headings",
			pages: []string{"Abstract\nDynamic languages are hard to compile.\n1. Introduction\nText of the paper.\n" +
				"Acknowledgments\nThanks to our sponsors.\nReferences\n[1] A. Author. A paper. 2008.\n"},
			want: []string{"# Abstract", "# 1. Introduction", "# Acknowledgments", "# References", "[1] A. Author. A paper. 2008."},
		},
		{
			name:  "chapter > section hierarchy in Chinese",
			pages: []string{"第一章 总论\n\n第一节 概念\n\n正文一。\n\n第二节 方法\n\n正文二。\n\n第二章 分论\n\n第一节 细则\n\n正文三。\n"},
			want:  []string{"# 第一章 总论", "## 第一节 概念", "## 第二节 方法", "# 第二章 分论", "## 第一节 细则", "正文三。"},
		},
		{
			name:  "classical chapter lines",
			pages: []string{"卷一\n\n第一回 宴桃园豪杰三结义\n\n话说天下大势。\n\n第二回 张翼德怒鞭督邮\n\n且说董卓。\n"},
			want:  []string{"第一回 宴桃园豪杰三结义", "话说天下大势。"},
		},
		{
			name:  "numbered headings 1 > 1.1 > 1.1.1",
			pages: []string{"1 Introduction\n\nSome opening text here.\n\n1.1 Scope\n\nWhat is covered.\n\n1.1.1 Terms\n\nDefinitions follow.\n\n2 Method\n\nHow it is done.\n"},
			want:  []string{"# 1 Introduction", "## 1.1 Scope", "### 1.1.1 Terms", "# 2 Method"},
		},
		{
			name:  "Chinese enumerated headings",
			pages: []string{"一、总则\n\n内容甲。\n\n（一）适用范围\n\n内容乙。\n\n二、附则\n\n内容丙。\n"},
			want:  []string{"# 一、总则", "## （一）适用范围", "# 二、附则"},
		},
		{
			name:  "all-caps heading",
			pages: []string{"INTRODUCTION\n\nThis book explains the method in detail.\n"},
			want:  []string{"# INTRODUCTION", "This book explains the method in detail."},
		},
		{
			name:    "symbol-font figure labels and markup codes are not headings",
			pages:   []string{"<//2??.B<AAC0/;#3%4%56#\n\nEP06AU20.010</GPH>\n\nBody text.\n"},
			want:    []string{"<//2??.B<AAC0/;#3%4%56#", "EP06AU20.010</GPH>"},
			notWant: []string{"# <//", "# EP06"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := structureText(append([]string(nil), tt.pages...))
			lines := map[string]bool{}
			for _, l := range strings.Split(got, "\n") {
				lines[l] = true
			}
			for _, w := range tt.want {
				if !lines[w] && !(strings.HasPrefix(w, "第") && strings.Contains(got, w)) {
					t.Errorf("missing line %q in:\n%s", w, got)
				}
			}
			for _, nw := range tt.notWant {
				if strings.Contains(got, nw) {
					t.Errorf("output still contains %q:\n%s", nw, got)
				}
			}
		})
	}
}

// TestStructureTextHeadingsAreHeadings checks that the headings of the
// classical text are real Markdown headings, not paragraphs.
func TestStructureTextHeadingsAreHeadings(t *testing.T) {
	got := structureText([]string{"第一回 宴桃园豪杰三结义\n\n话说天下大势，分久必合，合久必分。\n\n第二回 张翼德怒鞭督邮\n\n且说董卓字仲颖。\n"})
	n := 0
	for _, l := range strings.Split(got, "\n") {
		if isMarkdownHeading(l) {
			n++
			if !strings.Contains(l, "回") {
				t.Errorf("unexpected heading %q", l)
			}
		}
	}
	if n != 2 {
		t.Errorf("%d headings, want 2:\n%s", n, got)
	}
}
