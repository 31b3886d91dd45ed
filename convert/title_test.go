package convert

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/vibelife/vibe/internal/racetest"
)

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

func TestStripVolumeLabel(t *testing.T) {
	for in, want := range map[string]string{
		"三命通会卷前":          "三命通会",
		"三命通会卷之一":         "三命通会",
		"三命通会全十二册卷之一":     "三命通会",
		"三命通会全十一册卷之十":     "三命通会",
		"千金方 卷二十":         "千金方",
		"红楼梦第一册":          "红楼梦",
		"滴天髓卷上":           "滴天髓",
		"卷之一":             "卷之一", // nothing would be left
		"万卷":              "万卷",
		"周公解梦":            "周公解梦",
		"Moby-Dick":       "Moby-Dick",
		"Part 2 Volume 3": "Part 2 Volume 3",
	} {
		if got := stripVolumeLabel(in); got != want {
			t.Errorf("stripVolumeLabel(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestCorpusTitles checks the titles of the classical texts: the work's
// title, not the label of its first volume (三命通会's first line is
// 三命通会卷前).
func TestCorpusTitles(t *testing.T) {
	// Six whole books converted in one goroutine: 79 s under -race at
	// load 30, nothing for the detector to find (docs/ci.md).
	racetest.SequentialOnly(t)
	corpus := corpusDir(t)
	for file, want := range map[string]string{
		"bazi/三命通会.md":                 "三命通会",
		"bazi/子平真诠.md":                 "子平真诠",
		"bazi/渊海子平.md":                 "渊海子平",
		"bazi/滴天髓.md":                  "滴天髓",
		"bazi/穷通宝鉴.md":                 "穷通宝鉴",
		"txt/zhougong-jiemeng.utf8.md": "周公解梦",
	} {
		doc, err := Convert(context.Background(), filepath.Join(corpus, file), Options{})
		if err != nil {
			t.Fatal(err)
		}
		if doc.Title != want {
			t.Errorf("%s: title %q, want %q", file, doc.Title, want)
		}
	}
}
