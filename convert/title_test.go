package convert

import "testing"

func TestTitleFromText(t *testing.T) {
	tests := []struct{ name, md, want string }{
		{"first real heading", "# The Art of Tea\n\n## 1. Water\n", "The Art of Tea"},
		{"numbered heading is a part, not the title", "Trace-based compilation of dynamic languages, by many authors, 2009.\n\n# 1. Introduction\n\nText.\n", ""},
		{"chapter heading skipped, book title before it", "《西游记》TXT小说天堂 https://example.com\n\n# 第一回 灵根育孕源流出\n", "西游记"},
		{"short first line before a contents heading", "Handbook for Trustees\n\n# 目录\n", "Handbook for Trustees"},
		{"author cut off", "周公解梦作者：周公旦\n\n# 目录\n", "周公解梦"},
		{"label line is no title", "甲方：中国饮料有限公司（盖章）\n\n正文。\n", ""},
		{"sentence is no title", "This paragraph is body text.\n", ""},
	}
	for _, tt := range tests {
		if got := titleFromText(tt.md); got != tt.want {
			t.Errorf("%s: titleFromText = %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestCleanMetaTitle(t *testing.T) {
	for in, want := range map[string]string{
		"Microsoft Word - report.docx": "report",
		"zen_of_python.txt":            "zen_of_python",
		"Untitled":                     "",
		"Document1":                    "",
		" Moby-Dick ":                  "Moby-Dick",
		"无标题":                          "",
	} {
		if got := cleanMetaTitle(in); got != want {
			t.Errorf("cleanMetaTitle(%q) = %q, want %q", in, got, want)
		}
	}
}
